//! Every command-line definition, in one place: the binaries parse with these, and the
//! man pages and completions are generated from them.

use std::path::PathBuf;

use clap::{Args, CommandFactory, Parser, Subcommand, ValueEnum};

/// Listed at the end of every `--help`.
pub const ENV_HELP: &str = "\
Environment:
  LOKUST_TIMEOUT_MS    deadline for each subprocess (git, tmux), default 2000
  CLAUDE_CONFIG_DIR    Claude Code's config directory, default ~/.claude
  HISTFILE             the history file to read, default per shell
  XDG_STATE_HOME       where snapshots are kept, default ~/.local/state
  NO_COLOR             set to disable colour

Exit status: 0 success, 2 error or refused, 130 interrupted.";

const SNAPSHOT_LONG: &str = "\
Capture the state of this shell session into a portable .lok file: the working \
directory, user, host and shell; the environment through an allowlist and a secret \
filter; the redacted tail of the shell's history; the terminal, git repository, tmux or \
zellij session; and the Claude Code project that belongs to this directory.

The .lok goes to FILE (or -o FILE), else to standard output when that is not a \
terminal (lokust-shell-snapshot > s.lok), else into $XDG_STATE_HOME/lokust/snapshots/. \
Files are written atomically with mode 0600. A summary goes to standard error.

Every text that goes into the file passes the redactor first. A section that cannot be \
read (no git, a tmux server that is gone, an unreadable history) is left null with a \
warning, and the snapshot still succeeds.

With --bundle the Claude Code conversations of this directory go in too, redacted, so \
lokust-shell-restore can bring them back at another path on another machine.";

/// Capture this shell session into a .lok file.
#[derive(Debug, Clone, Args)]
#[command(long_about = SNAPSHOT_LONG, after_long_help = ENV_HELP)]
pub struct SnapshotArgs {
    /// Write the .lok to FILE.
    #[arg(value_name = "FILE")]
    pub file: Option<PathBuf>,

    /// Write the .lok to FILE (the same as the positional FILE).
    #[arg(short = 'o', long = "output", value_name = "FILE", conflicts_with = "file")]
    pub output: Option<PathBuf>,

    /// Describe the tmux session SESSION instead of the one this shell runs in.
    #[arg(long, value_name = "SESSION")]
    pub tmux: Option<String>,

    /// Keep the last N history entries.
    #[arg(long, value_name = "N", default_value_t = 200)]
    pub history_lines: usize,

    /// Read history from FILE instead of the shell's own history file.
    ///
    /// The format (zsh, bash or fish) is recognised from the file's lines, else taken
    /// from the shell's name.
    #[arg(long, value_name = "FILE", hide_short_help = true)]
    pub history_file: Option<PathBuf>,

    /// Describe DIR instead of the working directory.
    #[arg(short = 'C', long = "cwd", value_name = "DIR", hide_short_help = true)]
    pub cwd: Option<PathBuf>,

    /// The shell's name (zsh, bash, fish), when $SHELL is not the shell captured.
    #[arg(long, value_name = "NAME", hide_short_help = true)]
    pub shell: Option<String>,

    /// Embed this directory's Claude Code conversations.
    ///
    /// The project slot goes in as tar.gz+base64, streamed, redacted line by line with
    /// every transcript line kept valid JSON, together with what a move needs from
    /// outside the slot (file history, todos, tasks, the project's prompt history and
    /// its .claude.json entry). lokust-shell-restore puts it back at any path.
    #[arg(long)]
    pub bundle: bool,

    /// Copy the bundle without redacting it (secrets in the transcripts stay).
    #[arg(long, requires = "bundle", hide_short_help = true)]
    pub no_redact_bundle: bool,

    /// Print no summary on standard error.
    #[arg(short, long)]
    pub quiet: bool,
}

/// Print a readable summary of a .lok file.
#[derive(Debug, Clone, Args)]
#[command(
    long_about = "Print a readable summary of a .lok file of either kind: a shell session \
(directory, shell, history, git, tmux, Claude Code project) or a coordination session \
(phases with status, duration and tokens). Text from the file is shown with control and \
bidi characters escaped, so a hostile file cannot act on your terminal.",
    after_long_help = ENV_HELP
)]
pub struct InspectArgs {
    /// The .lok file to read, or - for standard input.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,

    /// Print the file as normalised JSON instead of a summary.
    #[arg(long)]
    pub json: bool,

    /// Show every history entry, not only the last 10.
    #[arg(long)]
    pub history: bool,
}

const RESTORE_LONG: &str = "\
Restore the Claude Code conversations bundled in a .lok (lokust-shell-snapshot --bundle) \
so that `claude --resume` finds them at PATH, on this machine.

PATH is created when missing; the project's slot under $CLAUDE_CONFIG_DIR/projects (or \
~/.claude/projects) is computed from its real path exactly as Claude Code names it. Every \
event's cwd and every absolute path below the old project directory is rewritten to PATH; \
file history, todos, tasks, the project's prompt history and its .claude.json entry go where \
Claude Code expects them; mtimes are shifted so the newest conversation is now.

Nothing is destroyed. The whole file is checked first, the bundle is extracted into a temp \
dir beside the slot and only then renamed into place. An existing slot is merged file by file: \
a file that exists with other content is kept and the incoming one refused (exit 2) unless \
--force, which keeps the old one as <name>.lokust-backup-<time>. A bundle with any entry \
outside its root, a link, a device or FIFO, or that inflates past its declared size or \
--max-size is refused whole, with nothing written. Ctrl-C leaves the old state and no temp \
files; the temp dirs of a killed run are removed by the next one.

FILE may be - for standard input: ssh host lokust-shell-snapshot --bundle | \
lokust-shell-restore - --to ~/src/project";

/// Restore a bundled Claude Code project at a new path.
#[derive(Debug, Clone, Args)]
#[command(long_about = RESTORE_LONG, after_long_help = ENV_HELP)]
pub struct RestoreArgs {
    /// The .lok to restore, or - for standard input.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,

    /// The project's new path (created when missing).
    #[arg(long, value_name = "PATH")]
    pub to: PathBuf,

    /// Claude Code's dir [$CLAUDE_CONFIG_DIR or ~/.claude].
    #[arg(long, value_name = "DIR")]
    pub claude_dir: Option<PathBuf>,

    /// Print the plan and write nothing.
    ///
    /// The plan lists every file with its size and what would happen to it (add, same,
    /// replace, conflict), the old path to new path map, and the new slot.
    #[arg(short = 'n', long)]
    pub dry_run: bool,

    /// Replace files that differ, keeping backups.
    ///
    /// Without it a file that exists with other content is kept, the incoming one is
    /// refused and the exit status is 2. With it the old file stays as
    /// <name>.lokust-backup-<time> beside the new one.
    #[arg(long)]
    pub force: bool,

    /// Refuse a bundle that inflates past SIZE (e.g. 512M, 8G).
    #[arg(long, value_name = "SIZE", default_value = "4G", value_parser = parse_size, hide_short_help = true)]
    pub max_size: u64,

    /// Print a script to eval: cd there, set the env.
    ///
    /// The script goes to standard output and the report to standard error, so
    /// eval "$(lokust-shell-restore s.lok --to DIR --print-shell)" restores and moves there.
    /// Only the captured safe environment is set (locale, editor, pager), never the old
    /// machine's HOME, USER, TERM or multiplexer variables.
    #[arg(long)]
    pub print_shell: bool,
}

/// `4G`, `512M`, `100k` or a number of bytes.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let (num, mult) = match t.char_indices().find(|(_, c)| c.is_ascii_alphabetic()) {
        Some((i, _)) => {
            let unit = t[i..].to_ascii_lowercase();
            let mult: u64 = match unit.trim_end_matches("ib").trim_end_matches('b') {
                "" => 1,
                "k" => 1 << 10,
                "m" => 1 << 20,
                "g" => 1 << 30,
                "t" => 1 << 40,
                _ => return Err(format!("unknown unit in {text:?} (use K, M, G or T)")),
            };
            (&t[..i], mult)
        }
        None => (t, 1),
    };
    let n: u64 = num.trim().parse().map_err(|_| format!("{text:?} is not a size"))?;
    n.checked_mul(mult).ok_or_else(|| format!("{text:?} is too large"))
}

/// Print a shell completion script.
#[derive(Debug, Clone, Args)]
#[command(long_about = "Print a completion script for SHELL on standard output, covering \
lokust-shell and lokust-shell-snapshot.

zsh: lokust-shell completions zsh > \"${fpath[1]}/_lokust-shell\"

bash: lokust-shell completions bash > ~/.local/share/bash-completion/completions/lokust-shell

fish: lokust-shell completions fish > ~/.config/fish/completions/lokust-shell.fish")]
pub struct CompletionsArgs {
    /// The shell to complete for: zsh, bash or fish.
    #[arg(value_enum, hide_possible_values = true)]
    pub shell: CompletionShell,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum CompletionShell {
    Zsh,
    Bash,
    Fish,
}

#[derive(Debug, Clone, Subcommand)]
pub enum ShellCommand {
    Snapshot(SnapshotArgs),
    Restore(RestoreArgs),
    Inspect(InspectArgs),
    Completions(CompletionsArgs),
}

/// Snapshot a terminal session into a portable .lok file, and restore it elsewhere.
#[derive(Debug, Parser)]
#[command(
    name = "lokust-shell",
    version,
    propagate_version = true,
    long_about = "lokust captures the state of a terminal session (directory, environment, \
redacted history, git, tmux, Claude Code conversation) into one portable .lok file, so the \
same work can be picked up on another machine at another path, without leaking a \
credential.",
    after_long_help = ENV_HELP
)]
pub struct ShellCli {
    #[command(subcommand)]
    pub command: ShellCommand,
}

/// Capture this shell session into a .lok file.
#[derive(Debug, Parser)]
#[command(name = "lokust-shell-snapshot", version, long_about = SNAPSHOT_LONG, after_long_help = ENV_HELP)]
pub struct SnapshotCli {
    #[command(flatten)]
    pub args: SnapshotArgs,
}

/// Restore a bundled Claude Code project at a new path.
#[derive(Debug, Parser)]
#[command(name = "lokust-shell-restore", version, long_about = RESTORE_LONG, after_long_help = ENV_HELP)]
pub struct RestoreCli {
    #[command(flatten)]
    pub args: RestoreArgs,
}

/// The date printed in the man pages; bumped with each release.
pub const MAN_DATE: &str = "2026-11-22";

/// A man page in roff, as committed in `man/`.
pub fn render_man(cmd: clap::Command) -> String {
    let mut buf = Vec::new();
    clap_mangen::Man::new(cmd).date(MAN_DATE).render(&mut buf).expect("rendering into memory");
    String::from_utf8(buf).expect("roff is UTF-8")
}

/// Every (page name, command) pair that gets a man page.
pub fn man_pages() -> Vec<(String, clap::Command)> {
    let umbrella = ShellCli::command();
    let mut pages = vec![("lokust-shell".to_string(), umbrella.clone())];
    for sub in umbrella.get_subcommands() {
        let name = format!("lokust-shell-{}", sub.get_name());
        pages.push((name.clone(), sub.clone().name(name).version(env!("CARGO_PKG_VERSION"))));
    }
    // The standalone tools are the same commands as `lokust-shell snapshot` and
    // `lokust-shell restore`; they share those pages.
    pages
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn definitions_are_consistent() {
        ShellCli::command().debug_assert();
        SnapshotCli::command().debug_assert();
        RestoreCli::command().debug_assert();
    }

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(parse_size("4G"), Ok(4 << 30));
        assert_eq!(parse_size("512MiB"), Ok(512 << 20));
        assert_eq!(parse_size("100"), Ok(100));
        assert!(parse_size("3 parsecs").is_err());
    }
}
