//! Every command-line definition, in one place: the binaries parse with these, and the
//! man pages and completions are generated from them.

use std::path::PathBuf;

use clap::{Args, CommandFactory, Parser, Subcommand, ValueEnum};

/// The environment and exit statuses, listed at the end of every `--help`.
macro_rules! env_help {
    () => {
        "\
Environment:
  LOKUST_TIMEOUT_MS    deadline for each subprocess (git, tmux), default 2000
  LOKUST_LOG           debug: print what each capturer cost on standard error
  CLAUDE_CONFIG_DIR    Claude Code's config directory, default ~/.claude
  HISTFILE             the history file to read, default per shell
  XDG_STATE_HOME       where snapshots are kept, default ~/.local/state

Exit status: 0 success (warnings may have been printed), 2 error, 130 interrupted."
    };
}

pub const ENV_HELP: &str = env_help!();

const SNAPSHOT_AFTER: &str = concat!(
    "\
Examples:
  lokust-shell-snapshot > s.lok                 capture to standard output
  lokust-shell-snapshot -o s.lok                capture to a file (0600, atomic)
  lokust-shell-snapshot --tmux work -o s.lok    describe the tmux session \"work\"
  ssh host lokust-shell-snapshot > s.lok        capture a remote shell

",
    env_help!()
);

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
warning, and the snapshot still succeeds.";

/// Capture this shell session into a .lok file.
#[derive(Debug, Clone, Args)]
#[command(long_about = SNAPSHOT_LONG, after_long_help = SNAPSHOT_AFTER)]
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
#[command(name = "lokust-shell-snapshot", version, long_about = SNAPSHOT_LONG, after_long_help = SNAPSHOT_AFTER)]
pub struct SnapshotCli {
    #[command(flatten)]
    pub args: SnapshotArgs,
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
    // The standalone tool is the same command as `lokust-shell snapshot`; it shares that page.
    pages
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn definitions_are_consistent() {
        ShellCli::command().debug_assert();
        SnapshotCli::command().debug_assert();
    }
}
