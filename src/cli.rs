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
  XDG_CONFIG_HOME      lokust/identities there holds age keys that open sealed files
  LOKUST_ENCRYPT_TO    seal what is written to these recipients (comma-separated)
  LOKUST_RECIPIENTS_FILE seal what is written to the recipients listed in this file
  LOKUST_HOOK          set to 0 to turn the prompt hook off
  LOKUST_HOOK_INTERVAL seconds between the hook's refreshes in one directory, default 30
  LOKUST_ARCHIVE       auto: the hook archives a project whose conversations are due for deletion

Exit status: 0 success (warnings may have been printed), 2 error or refused, 130 interrupted."
    };
}

pub const ENV_HELP: &str = env_help!();

const SNAPSHOT_AFTER: &str = concat!(
    "\
Examples:
  lokust-shell-snapshot > s.lok                 capture to standard output
  lokust-shell-snapshot -o s.lok                capture to a file (0600, atomic)
  lokust-shell-snapshot --tmux work -o s.lok    describe the tmux session \"work\"
  lokust-shell-snapshot --bundle > s.lok        with every agent's conversations
  ssh host lokust-shell-snapshot > s.lok        capture a remote shell
  lokust-shell-snapshot --bundle -r \"$(cat ~/.ssh/id_ed25519.pub)\" -o s.lok.age
                                                sealed with age to an SSH key
  lokust-shell-snapshot --passphrase -o s.lok.age
                                                sealed with a passphrase asked on the terminal

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
warning, and the snapshot still succeeds.

With --bundle the conversations of this directory go in too, of every coding agent that \
has some (Claude Code, Codex CLI, Gemini CLI, OpenCode, Factory Droid, GitHub Copilot CLI, \
codeloops; --agents chooses), redacted, and the git work not pushed yet (unpushed commits, \
staged and unstaged changes, untracked files), so lokust-shell-restore can bring them back \
at another path on another machine.

With --encrypt-to, --recipients-file or --passphrase the file is sealed: a standard age \
file (https://age-encryption.org) that `age -d -i KEY` opens into the plain .lok, and that \
lokust-shell-restore, lokust-shell inspect and lokust-tmux import open by themselves. It is \
encrypted as it is written, so no plaintext copy touches the disk. The default file name \
then ends in .lok.age.";

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

    /// Read the history from FILE (- for standard input), as a shell hook hands it over.
    ///
    /// Either NUL-terminated entries, oldest first (zsh's $history, fish's `history
    /// search --null --reverse`), or `fc -l` output, where a line that does not start
    /// with an event number continues the entry before it (bash). Replaces the history
    /// file.
    #[arg(long, value_name = "FILE", hide_short_help = true, conflicts_with = "history_file")]
    pub history_from: Option<PathBuf>,

    /// With --history-from: drop the entries that start with a space.
    ///
    /// The hooks pass it when the shell hides such commands from its history (zsh with
    /// hist_ignore_space, bash with HISTCONTROL=ignorespace or ignoreboth, fish always),
    /// since the in-memory history still holds the last one.
    #[arg(long, hide_short_help = true, requires = "history_from")]
    pub ignore_space: bool,

    /// Keep the live snapshot of the shell PID current (used by the prompt hook).
    ///
    /// Writes $XDG_STATE_HOME/lokust/live/PID.lok atomically, never replaces a good
    /// snapshot with an empty or broken one, prunes the live files of shells that ended
    /// long ago, and prints nothing: problems go to $XDG_STATE_HOME/lokust/hook.log.
    #[arg(long, value_name = "PID", hide_short_help = true, conflicts_with_all = ["file", "output", "tmux"])]
    pub live: Option<u32>,

    /// With --live: the time the hook ran, as $EPOCHREALTIME gives it; an older
    /// snapshot never replaces a newer one.
    #[arg(long, value_name = "SECS", hide_short_help = true, requires = "live")]
    pub as_of: Option<String>,

    /// With --live: do nothing when the directory is unchanged and the live snapshot is
    /// younger than SECS seconds.
    #[arg(long, value_name = "SECS", hide_short_help = true, requires = "live")]
    pub interval: Option<u64>,

    /// Embed every agent's conversations of this directory, and the unpushed work.
    ///
    /// Claude Code's project slot goes in as tar.gz+base64, streamed, redacted line by
    /// line with every transcript line kept valid JSON, together with what a move needs
    /// from outside the slot (file history, todos, tasks, the project's prompt history and
    /// its .claude.json entry). Every other agent's sessions of this directory (see
    /// --agents) and the git work (see --no-worktree) go in beside it, redacted the same
    /// way. lokust-shell-restore puts it all back at any path.
    #[arg(long)]
    pub bundle: bool,

    /// Copy the bundle without redacting it (secrets in the transcripts stay).
    #[arg(long, requires = "bundle", hide_short_help = true)]
    pub no_redact_bundle: bool,

    #[command(flatten)]
    pub carry: CarryArgs,

    /// Print no summary on standard error.
    #[arg(short, long)]
    pub quiet: bool,

    #[command(flatten)]
    pub seal: crate::seal::args::SealArgs,
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
    #[arg(value_name = "FILE", required_unless_present = "latest")]
    pub file: Option<PathBuf>,

    /// Read the newest export, snapshot or live file instead of FILE.
    ///
    /// The live files of shells still running, this one included, come last: after a
    /// crash, --latest shows where the lost shell was, not where the new one is.
    #[arg(long, conflicts_with = "file")]
    pub latest: bool,

    /// Print the file as normalised JSON instead of a summary.
    #[arg(long)]
    pub json: bool,

    /// Show every history entry, not only the last 10.
    #[arg(long)]
    pub history: bool,

    /// Read one conversation of any agent in the file, without restoring anything
    ///
    /// Who said what, which tool ran with what input and what it returned, one block per
    /// event, long texts cut. The file may be someone else's: every character passes the
    /// redactor and the escaping of control characters, so a conversation cannot set the
    /// terminal's title, write the clipboard or move the cursor. With --json: one event
    /// per line in the normalized schema (id, kind, timestamp, role, text, toolName,
    /// toolInput, toolOutput, messageID, parentID, model, plus agent and sessionID;
    /// schema/session-event.schema.json). Sealed files open as for restore.
    #[arg(long, value_name = "ID", conflicts_with = "transcripts")]
    pub transcript: Option<String>,

    /// Read every conversation in the file, as --transcript reads one.
    #[arg(long)]
    pub transcripts: bool,

    #[command(flatten)]
    pub keys: crate::seal::args::KeyArgs,
}

const RESTORE_LONG: &str = "\
Restore what a .lok carries (lokust-shell-snapshot --bundle) at PATH, on this machine: \
the conversations of every agent in it, so that each agent's own resume finds them there \
(claude --resume, codex resume, gemini --resume, opencode --session, droid --resume, \
copilot --resume=ID; codeloops' logs where it keeps them), and the git work not pushed \
yet, laid on the checkout at PATH.

PATH is created when missing; the project's slot under $CLAUDE_CONFIG_DIR/projects (or \
~/.claude/projects) is computed from its real path exactly as Claude Code names it. Every \
event's cwd and every absolute path below the old project directory is rewritten to PATH; \
file history, todos, tasks, the project's prompt history and its .claude.json entry go where \
Claude Code expects them; mtimes are shifted so the newest conversation is now. Every other \
agent's sessions are placed where that agent looks, each on its own, with their paths moved. \
Nothing that can run a command or grant a permission is installed from the file unless \
--trust-config (see SECURITY.md).

Nothing is destroyed. The whole file is checked first, the bundle is extracted into a temp \
dir beside the slot and only then renamed into place. An existing slot is merged file by file: \
a file that exists with other content is kept and the incoming one refused (exit 2) unless \
--force, which keeps the old one as <name>.lokust-backup-<time>. A bundle with any entry \
outside its root, a link, a device or FIFO, or that inflates past its declared size or \
--max-size is refused whole, with nothing written. Ctrl-C leaves the old state and no temp \
files; the temp dirs of a killed run are removed by the next one.

FILE may be - for standard input: ssh host lokust-shell-snapshot --bundle | \
lokust-shell-restore - --to ~/src/project

A sealed file (an age file, binary or armored, whatever its name) is opened with the keys \
given with -i, else ~/.ssh/id_ed25519, ~/.ssh/id_rsa and $XDG_CONFIG_HOME/lokust/identities, \
else a passphrase asked on the terminal. Every 64 KiB of it is authenticated as it is read, \
and nothing is renamed into place before the last chunk has been: a sealed file that was cut \
short or changed is refused whole. A plain file named *.age is refused.

--latest takes the newest snapshot on this machine instead: after a crash, \
lokust-shell restore --latest says where the lost shell was and how to get back there.";

/// Restore the conversations and git work of a .lok at a new path.
#[derive(Debug, Clone, Args)]
#[command(long_about = RESTORE_LONG, after_long_help = ENV_HELP)]
pub struct RestoreArgs {
    /// The .lok to restore, or - for standard input.
    #[arg(value_name = "FILE", required_unless_present_any = ["latest", "from_archive"])]
    pub file: Option<PathBuf>,

    /// Restore this one conversation (any agent's), nothing else of the file
    ///
    /// Its transcript, its subagents and its per-session extras are placed as a whole
    /// restore would place them; no memory, settings, prompt history or git work. An error
    /// when the file holds no conversation of that id.
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,

    /// Take the newest archive holding --session ID (or of --project)
    ///
    /// The archives are those lokust-shell archive keeps; lokust-shell list shows them.
    #[arg(long, conflicts_with_all = ["file", "latest"])]
    pub from_archive: bool,

    /// With --from-archive: only the archives of the project in DIR.
    #[arg(long, value_name = "DIR", requires = "from_archive", hide_short_help = true)]
    pub project: Option<PathBuf>,

    /// Take the newest snapshot, export or live file (my terminal crashed: where was I?).
    ///
    /// Live files of shells still running, this one included, are taken only when there
    /// is nothing else. A snapshot without a bundle is shown, not extracted: where it was,
    /// the git state there, the last commands, and the way back (see --print-shell).
    #[arg(long, conflicts_with = "file")]
    pub latest: bool,

    /// The project's new path (created when missing); with --latest, default the
    /// snapshot's own directory.
    #[arg(long, value_name = "PATH", required_unless_present = "latest")]
    pub to: Option<PathBuf>,

    /// Claude Code's dir [$CLAUDE_CONFIG_DIR or ~/.claude].
    #[arg(long, value_name = "DIR")]
    pub claude_dir: Option<PathBuf>,

    /// Print the plan and write nothing.
    ///
    /// The plan lists every file with its size and what would happen to it (add, same,
    /// replace, conflict), the old path to new path map, and the new slot. It exits as the
    /// restore would: 2 when a file would be refused.
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
    /// Whatever the file holds, only the locale (LANG, LANGUAGE, LC_*) and an editor or
    /// pager given as a known program name (EDITOR, VISUAL, PAGER: vim, nano, less -R, …)
    /// are exported; every other variable is dropped and named in a warning.
    #[arg(long)]
    pub print_shell: bool,

    /// Also install what can run a command or grant a permission (your own files only).
    ///
    /// A restore installs none of it by default, whoever wrote the file: of Claude Code's
    /// .claude.json project entry only its inert keys (the last session's pointers and
    /// figures), not its MCP servers, allowed tools or trust; no carried git work that
    /// adds an agent's, an editor's or a shell hook's configuration to the checkout
    /// (.claude/, .mcp.json, .gemini/, .codex/, opencode.json, .factory/, .vscode/,
    /// .envrc and the rest of the table in SECURITY.md, in any case); no workspace folder
    /// of a Gemini chat outside the project. It says what it left out; --dry-run and
    /// lokust-shell inspect list it. With --trust-config all of it is installed, and each
    /// command and permission is listed first. Links out of the checkout are refused
    /// whatever this says.
    #[arg(long)]
    pub trust_config: bool,

    /// Clone the snapshot's remote into TO first, when TO is missing or empty
    ///
    /// The git work a snapshot carries (unpushed commits, staged and unstaged changes,
    /// untracked files) is laid on a checkout of the same repository at TO. When there is
    /// none, --clone makes one with git's own transport and credentials (lokust stores
    /// none); without it the restore says the command to run. What is there already is
    /// never overwritten: a checkout with changes of its own, a branch the carried one
    /// would move away from, or a file in the way is refused unless --force, which saves
    /// it first (a stash, a backup branch, a file moved aside) and names it.
    #[arg(long)]
    pub clone: bool,

    #[command(flatten)]
    pub keys: crate::seal::args::KeyArgs,
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
lokust-shell, lokust-shell-snapshot and lokust-tmux.

zsh: lokust-shell completions zsh > \"${fpath[1]}/_lokust-shell\"

bash: lokust-shell completions bash > ~/.local/share/bash-completion/completions/lokust-shell

fish: lokust-shell completions fish > ~/.config/fish/completions/lokust-shell.fish")]
pub struct CompletionsArgs {
    /// The shell to complete for: zsh, bash or fish.
    #[arg(value_enum, hide_possible_values = true)]
    pub shell: crate::shell::Shell,
}

/// Print the prompt hook for a shell.
#[derive(Debug, Clone, Args)]
#[command(
    long_about = "Print the prompt hook for SHELL. It keeps \
$XDG_STATE_HOME/lokust/live/<shell pid>.lok current: a snapshot without bundle, written in \
the background when the directory changed, or when new commands were run and the last \
refresh is LOKUST_HOOK_INTERVAL seconds old (default 30). It hands over the shell's \
history from memory, so the snapshot is current even when the history file lags. It keeps \
$?, prints nothing, and loading it twice is harmless. LOKUST_HOOK=0 turns it off.

Once a day per project, the refresh looks at the directory's conversations: when Claude \
Code or Gemini CLI will delete some within five days, the next prompt says so on one line. \
With LOKUST_ARCHIVE=auto the refresh archives the project first (lokust-shell archive), in \
the background, and the line says so.

zsh, in ~/.zshrc: eval \"$(lokust-shell init zsh)\"

bash, in ~/.bashrc: eval \"$(lokust-shell init bash)\"

fish, in ~/.config/fish/config.fish: lokust-shell init fish | source

After a crash, lokust-shell inspect --latest shows where you were.",
    after_long_help = ENV_HELP
)]
pub struct InitArgs {
    /// The shell to print the hook for: zsh, bash or fish.
    #[arg(value_enum, hide_possible_values = true)]
    pub shell: crate::shell::Shell,
}

/// Redact secrets from text: standard input (or FILEs) to standard output.
#[derive(Debug, Clone, Args)]
#[command(
    long_about = "Copy text to standard output with every secret replaced by [REDACTED], \
line by line, streaming: the same redactor every .lok section passes through. Lines with \
nothing to redact come out byte for byte, invalid UTF-8 included (a transcript record with \
a secret and a byte that is not UTF-8 gets U+FFFD for that byte); there is no line-length \
limit. A secret found once is also replaced where it comes again later in the same input \
(an agent quoting back what it read), each FILE on its own.

Useful on its own, before pasting a terminal's output anywhere, and to audit the rules: \
--explain lists which rules fired and how often (never the secrets).",
    after_long_help = concat!(
        "\
Examples:
  tmux capture-pane -p -S - | lokust-shell redact     a pane's whole scrollback
  lokust-shell redact --explain ~/.zsh_history > h    a history file, with a tally

",
        env_help!()
    )
)]
pub struct RedactArgs {
    /// Read these files instead of standard input (- is standard input).
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,

    /// Print the rules that fired, with counts, on standard error.
    #[arg(long)]
    pub explain: bool,

    /// What the input is: auto, text, shell, code, config or transcript
    ///
    /// transcript reads JSON Lines (a Claude Code, Codex or Gemini CLI transcript) the way
    /// --bundle does: each record stays valid JSON, its strings are redacted where they lie
    /// (escapes decoded, a key read as the context of its value) and every other byte is
    /// kept. text reads lines in every form: shell history, scrollback, config files,
    /// prose; shell reads the same way. code and config read source code and
    /// configuration files: a name counts only when it ends with what names a secret
    /// (api_key, dbPassword, SECRET_KEY_BASE, not password_mgr or TokenInfo), and a
    /// trailing backslash joins no command; config also takes the value of a name that
    /// starts its line to the line's end, less an inline comment. auto (the default)
    /// picks transcript when the first line is a JSON object or array (or several,
    /// glued together), else text.
    #[arg(long = "as", value_name = "KIND", value_enum, default_value_t = RedactAs::Auto, hide_possible_values = true)]
    pub kind: RedactAs,
}

/// `lokust-shell redact --as`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RedactAs {
    Auto,
    Text,
    Shell,
    Code,
    Config,
    Transcript,
}

#[derive(Debug, Clone, Subcommand)]
pub enum ShellCommand {
    Snapshot(Box<SnapshotArgs>),
    Restore(RestoreArgs),
    Inspect(InspectArgs),
    Redact(RedactArgs),
    Init(InitArgs),
    Completions(CompletionsArgs),
    Find(FindArgs),
    Doctor(DoctorArgs),
    Archive(ArchiveArgs),
    List(ListArgs),
    Prune(PruneArgs),
    Move(MoveArgs),
}

/// Move a project on this machine and keep its agents' conversations.
#[derive(Debug, Clone, Args)]
#[command(long_about = "\
Move a project from OLD to NEW on this machine and keep its agents' conversations: each \
conversation of OLD is placed for NEW by the same plan and placement code as a restore, \
without redaction (nothing leaves the machine), and the old copies are taken out of the \
agents' stores, so each conversation has one copy. They are the backup: once every \
conversation is at NEW they are renamed into the archive (lokust-shell list shows it as \
\"moved\"), each below <agent>/ at its path in that agent's store, not a byte copied. \
When the archive is on another filesystem than a store, the conversations are first \
written whole into a .lok in the archive instead, and the old copies are deleted. With \
--move-dir the directory itself is renamed too (on one filesystem only).

Every agent's conversations move: each one's own files are set aside and laid again \
(what an agent keeps beside them that does not travel is given back); OpenCode's rows are \
repointed in its database, in one transaction. A move that fails part way is undone. Each \
change is written in a journal ($XDG_STATE_HOME/lokust/moving/) before it is made: a move \
killed part way is rolled back by the next lokust-shell move (finished, when every \
conversation was at NEW already; left alone while a process works in the renamed folder). \
Moves over the same stores run one at a time, whatever state folder each keeps its \
journal in (each agent's folder is locked): a second one started meanwhile says so and \
waits (Ctrl-C ends the wait), then checks what the first left.

Refused (exit 2, nothing changed): an agent working in OLD (named with its pid), NEW \
holding conversations of its own (or, for OpenCode, any record of it), --move-dir when \
OLD is not a directory or NEW exists, a killed move of either folder not yet rolled back, \
and what the restore at NEW would refuse (the move is then undone).", after_long_help = ENV_HELP)]
pub struct MoveArgs {
    /// The project's directory now (or its old path, when it was moved already).
    #[arg(value_name = "OLD")]
    pub old: PathBuf,

    /// Where it goes.
    #[arg(value_name = "NEW")]
    pub new: PathBuf,

    /// Only these agents' conversations (claude,codex,gemini).
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = agent_names(), hide_possible_values = true)]
    pub agents: Option<Vec<String>>,

    /// Rename the directory too.
    #[arg(long)]
    pub move_dir: bool,

    /// Leave the old copies where they were, beside the new ones.
    #[arg(
        long,
        long_help = "Leave the old copies where they were, beside the new ones: Claude Code, \
Gemini CLI, Droid and codeloops then list each conversation under both folders (Claude Code \
sees two copies of one id). A record kept by id rather than by folder is the conversation \
itself and moves: Codex CLI's rollout, Copilot CLI's session folder, OpenCode's rows."
    )]
    pub keep_old: bool,

    /// Print what would move; change nothing.
    #[arg(short = 'n', long)]
    pub dry_run: bool,
}

/// Keep a bundled .lok of a project in the archive.
#[derive(Debug, Clone, Args)]
#[command(long_about = "\
Keep a bundled .lok of the project in DIR (default the working directory) in the archive, \
$XDG_STATE_HOME/lokust/archive/: every agent's conversations and the git work, redacted as \
snapshot --bundle does, sealed when LOKUST_ENCRYPT_TO or LOKUST_RECIPIENTS_FILE is set, \
mode 0600 in folders 0700, with a manifest beside it saying what it holds (readable \
without opening a sealed file). Nothing is written when the project's conversations and git work are \
the same as in its newest archive.

Agents delete conversations on their own: Claude Code those older than cleanupPeriodDays \
(30 days by default), Gemini CLI after its sessionRetention (30 days by default). The \
archive keeps them: lokust-shell list shows which exist only there, and \
lokust-shell-restore FILE --session ID brings one back. A change to the git work alone \
also makes a new archive. With LOKUST_ARCHIVE=auto the prompt hook archives a project \
whose conversations are within five days of deletion, once a day at most.", after_long_help = ENV_HELP)]
pub struct ArchiveArgs {
    /// The project's directory.
    #[arg(value_name = "DIR")]
    pub dir: Option<PathBuf>,

    /// Print only the archive's path (or nothing when nothing changed).
    #[arg(short, long)]
    pub quiet: bool,
}

/// List the archives, exports, snapshots and live files kept on this machine.
#[derive(Debug, Clone, Args)]
#[command(long_about = "\
List the .lok files lokust keeps on this machine, oldest first: the archives (time, project, \
agents, conversations, and how many of them exist only in that file: no longer in their \
agent's store, nor in a newer archive of the project; a move's backup, the old copies \
themselves, is listed as \"moved\"), then the exports, snapshots and the \
prompt hook's live files (time, project and agents when the file is plain, size, sealed or \
not). A sealed file's project is not known without its key: --project leaves it out.", after_long_help = ENV_HELP)]
pub struct ListArgs {
    /// Only the files of the project in DIR.
    #[arg(long, value_name = "DIR")]
    pub project: Option<PathBuf>,

    /// Print a JSON array instead.
    #[arg(long)]
    pub json: bool,
}

/// Delete old archives, never the last conversation's only copy.
#[derive(Debug, Clone, Args)]
#[command(long_about = "\
Delete archives older than --older-than (default 90 days), keeping the newest --keep-last \
(default 5, at least 1) of each project. An archive holding a conversation that exists \
nowhere else (not in its agent's store, not in a newer archive) is kept and named, and the \
exit status is 2, unless --force. --dry-run lists what would go.", after_long_help = ENV_HELP)]
pub struct PruneArgs {
    /// Keep at least this many archives of each project.
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub keep_last: usize,

    /// Only archives older than AGE (90d, 12h, 0d…).
    #[arg(long, value_name = "AGE", default_value = "90d", value_parser = humantime::parse_duration)]
    pub older_than: std::time::Duration,

    /// Only the archives of the project in DIR.
    #[arg(long, value_name = "DIR")]
    pub project: Option<PathBuf>,

    /// List what would be deleted; delete nothing.
    #[arg(short = 'n', long)]
    pub dry_run: bool,

    /// Delete archives holding the only copy of a conversation too.
    #[arg(long)]
    pub force: bool,
}

/// Check that lokust is set up right on this machine.
#[derive(Debug, Clone, Args)]
#[command(long_about = "\
Check that lokust is set up right on this machine, one line per check: the binaries on \
PATH and of one version; the prompt hook in the shell's startup file and firing (this \
shell's live file is fresh); the state folder private; that you hold a key the sealing \
variables seal to; tmux, its key binding and the sealing variables in its server; each \
agent's home and CLI; stale Claude Code registry entries; copies a move that did not \
finish left set aside; conversations close to Claude Code's or Gemini CLI's cleanup; the git work --bundle \
would carry. Each problem has the line that fixes \
it under it. Nothing is changed, and no key or secret is printed.

Exit status: 0 unless a check failed (2), or with --strict a check warned (2).", after_long_help = ENV_HELP)]
pub struct DoctorArgs {
    /// Print the checks as JSON, for a bug report.
    #[arg(long)]
    pub json: bool,

    /// Fail on warnings too.
    #[arg(long)]
    pub strict: bool,
}

/// Find a conversation by its id in every agent's store on this machine.
#[derive(Debug, Clone, Args)]
#[command(long_about = "\
Find a conversation by its id in every agent's store on this machine (Claude Code, Codex \
CLI with its archive, Gemini CLI, OpenCode's database opened read-only, Factory Droid, \
GitHub Copilot CLI, codeloops), and print the agent, where it is kept, the project \
directory recorded inside it, whether that directory exists here, and the line that \
resumes it there. Nothing is written. Exit status 1 when no agent has it.", after_long_help = ENV_HELP)]
pub struct FindArgs {
    /// The conversation's id, as the agent prints it.
    #[arg(value_name = "ID")]
    pub id: String,

    /// Print a JSON array of what was found instead.
    #[arg(long)]
    pub json: bool,
}

/// Snapshot a terminal session into a portable .lok file, and restore it elsewhere.
#[derive(Debug, Parser)]
#[command(
    name = "lokust-shell",
    version,
    propagate_version = true,
    long_about = "lokust captures the state of a terminal session (directory, environment, \
redacted history, git, tmux, every coding agent's conversations, the work not pushed) into one portable .lok file, so the \
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

const EXPORT_LONG: &str = "\
Save a tmux pane as a shell-session .lok: the pane's directory (from tmux), its shell \
(found from the pane's process) and that shell's history (from the prompt hook's live \
snapshot when there is one, else the history file), the environment lokust can see, the \
tmux session, and the pane's whole scrollback (capture-pane -J -S -), redacted before it \
is encoded.

Made to run from a key binding (lokust-tmux bind): no terminal is needed, and when a \
tmux server is reachable a message on the status line says where the file went or what \
failed. The file goes to FILE, else to \
$XDG_STATE_HOME/lokust/exports/<session>-<window>.<pane>-<UTC time>.lok (mode 0600, the \
folder 0700); its path is printed on standard output.

With --encrypt-to or --recipients-file (or LOKUST_ENCRYPT_TO / LOKUST_RECIPIENTS_FILE in \
the tmux server's environment, for the key binding) the file is sealed with age and its \
name ends in .lok.age. --passphrase needs a terminal, so it does not suit a key binding.

With --session, every window and pane of the session goes in (the session of -t, else the \
current one): window names, layouts and zoom; each pane's directory, title, shell history, \
scrollback (redacted, at most 1 MiB a pane) and foreground program (as redacted text); and \
for a pane running a coding agent, which agent and which conversation. The conversation is \
told from the agent's own registry of live processes (Claude Code), else the id on its \
command line, else a session file it holds open, else the one conversation of its \
directory written since it started; with two candidates none is recorded, and the export \
says so. With --bundle, the conversations and git work under the session's root (the git \
top level of the active pane) travel too. --all-sessions writes one file per session.";

/// Save a tmux pane, with its scrollback, as a .lok file.
#[derive(Debug, Clone, Args)]
#[command(long_about = EXPORT_LONG, after_long_help = ENV_HELP)]
pub struct ExportArgs {
    /// The pane to save (%3, work:1.0, …), or with --session the session; default the
    /// current one.
    #[arg(short = 't', long = "target", value_name = "PANE")]
    pub target: Option<String>,

    /// Save every window and pane of the session, each agent pane with its conversation.
    #[arg(long)]
    pub session: bool,

    /// Save every session of the server, one file each (in the exports folder).
    #[arg(long, conflicts_with_all = ["session", "target", "output"])]
    pub all_sessions: bool,

    /// Embed the conversations of every agent and the git work of the pane's directory.
    #[arg(long)]
    pub bundle: bool,

    #[command(flatten)]
    pub carry: CarryArgs,

    /// Write the .lok to FILE (- for standard output).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Print nothing; the tmux message still says where the file went.
    #[arg(short, long)]
    pub quiet: bool,

    #[command(flatten)]
    pub seal: crate::seal::args::SealArgs,
}

/// Recreate a saved pane, or a whole saved session, as a new tmux session.
#[derive(Debug, Clone, Args)]
#[command(
    long_about = "Recreate a saved pane as a new detached tmux session: restore the bundle \
when the file has one, start the session in the restored directory (or --to PATH), and show \
the saved scrollback in its pane before the first prompt. A session of the same name is \
never replaced: the new one gets a suffix (work-2). The session's name is printed on \
standard output. Text from the file is shown with control characters escaped. A sealed \
(age) file is opened with -i FILE or the usual keys, as lokust-shell-restore does.

A file saved with export --session gets every window and pane back: the conversations and \
git work are restored first, then each pane starts in its directory mapped to --to (and \
--map OLD=NEW for panes outside the session's root), with its scrollback, the saved layout \
(checked first; a bad one is tiled), window names, zoom and the active pane. An agent pane \
gets its resume command (claude --resume ID, codex resume ID, …) typed on its prompt and \
not run: your Enter is the consent. The command is built by lokust from the agent's fixed \
form and an id of the agent's own form that is on this machine; nothing the file says is \
ever run or typed. Other programs are named in their pane, not restarted.",
    after_long_help = ENV_HELP
)]
pub struct ImportArgs {
    /// The .lok file to import.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,

    /// Start the session in PATH (created when missing) instead of the saved directory.
    #[arg(long, value_name = "PATH")]
    pub to: Option<PathBuf>,

    /// Name the session NAME instead of the saved session's name.
    #[arg(long, value_name = "NAME")]
    pub session: Option<String>,

    /// Start panes whose saved directory is under OLD in the same place under NEW
    /// (repeatable; the longest OLD wins).
    #[arg(long = "map", value_name = "OLD=NEW", value_parser = parse_map)]
    pub maps: Vec<(PathBuf, PathBuf)>,

    /// Also press Enter on each agent's resume: only for a file sealed to one of your keys
    ///
    /// Sealing shows who can read a file, not who wrote it: anyone with your public key
    /// can seal one to you. Use it for the files you exported yourself.
    #[arg(long)]
    pub resume_agents: bool,

    /// Do not show the saved scrollback in the panes.
    #[arg(long)]
    pub no_scrollback: bool,

    /// Print what would be restored and created; change nothing.
    #[arg(short = 'n', long)]
    pub dry_run: bool,

    #[command(flatten)]
    pub keys: crate::seal::args::KeyArgs,
}

/// `OLD=NEW`, both absolute.
fn parse_map(s: &str) -> Result<(PathBuf, PathBuf), String> {
    let (old, new) = s.split_once('=').ok_or("expected OLD=NEW")?;
    let (old, new) = (PathBuf::from(old), PathBuf::from(new));
    if !old.is_absolute() || !new.is_absolute() {
        return Err("both OLD and NEW must be absolute paths".into());
    }
    Ok((old, new))
}

/// Print (or apply) the tmux key binding for export.
#[derive(Debug, Clone, Args)]
#[command(
    long_about = "Print the tmux.conf lines that bind prefix + C-e (a key tmux leaves \
free) to lokust-tmux export of the current pane, and prefix + M-e (free too) to export \
--session of the whole session. With --apply, bind them in the running server instead, with \
the keys from --key and --session-key, else the tmux options @lokust-export-key and \
@lokust-session-key. \
shell-hooks/lokust.tmux does the same when sourced (source-file) or loaded as a TPM \
plugin; set @lokust-bin when lokust-tmux is not on tmux's PATH.",
    after_long_help = ENV_HELP
)]
pub struct BindArgs {
    /// The key to bind after the prefix, in tmux's key syntax.
    #[arg(long, value_name = "KEY")]
    pub key: Option<String>,

    /// The key after the prefix that saves the whole session (default M-e, else the tmux
    /// option @lokust-session-key).
    #[arg(long, value_name = "KEY")]
    pub session_key: Option<String>,

    /// Bind the key in the running tmux server instead of printing the lines.
    #[arg(long)]
    pub apply: bool,
}

#[derive(Debug, Clone, Subcommand)]
pub enum TmuxCommand {
    Export(ExportArgs),
    Import(ImportArgs),
    Bind(BindArgs),
}

/// Save tmux panes as .lok files, and bring them back as tmux sessions.
#[derive(Debug, Parser)]
#[command(
    name = "lokust-tmux",
    version,
    propagate_version = true,
    long_about = "lokust-tmux saves a tmux pane (its directory, shell, redacted history and \
whole scrollback) as a portable .lok file from a key binding, and brings a saved pane back \
as a new tmux session with its scrollback in view. It talks to the server in $TMUX, else \
to tmux's default server; -L and -S choose another one, as they do for tmux.",
    after_long_help = ENV_HELP
)]
pub struct TmuxCli {
    /// Talk to the tmux server on socket NAME (as tmux -L).
    #[arg(short = 'L', value_name = "NAME", global = true, conflicts_with = "socket_path")]
    pub socket_name: Option<String>,

    /// Talk to the tmux server at socket PATH (as tmux -S).
    #[arg(short = 'S', value_name = "PATH", global = true)]
    pub socket_path: Option<PathBuf>,

    #[command(subcommand)]
    pub command: TmuxCommand,
}

/// Restore the conversations and git work of a .lok at a new path.
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
    let tmux = TmuxCli::command();
    pages.push(("lokust-tmux".to_string(), tmux.clone()));
    for sub in tmux.get_subcommands() {
        let name = format!("lokust-tmux-{}", sub.get_name());
        pages.push((name.clone(), sub.clone().name(name).version(env!("CARGO_PKG_VERSION"))));
    }
    pages
}

/// What `--bundle` carries beside the Claude Code project, for `lokust-shell-snapshot` and
/// `lokust-tmux export` alike.
#[derive(Debug, Clone, Args)]
pub struct CarryArgs {
    /// With --bundle: carry only these agents' sessions (claude,codex,droid,gemini,…)
    #[arg(
        long,
        long_help = agents_long_help(),
        value_name = "LIST",
        value_delimiter = ',',
        requires = "bundle",
        value_parser = agent_names(),
        hide_possible_values = true
    )]
    pub agents: Option<Vec<String>>,

    /// With --bundle: leave the git work of this checkout behind
    ///
    /// By default --bundle also carries what the remotes do not have: unpushed commits (as
    /// a git bundle), staged and unstaged changes and untracked files that are not ignored,
    /// so lokust-shell-restore can lay them on a checkout elsewhere. A file holding a
    /// secret is left out, not redacted, and named in the summary.
    #[arg(long, requires = "bundle", hide_short_help = true)]
    pub no_worktree: bool,

    /// With --bundle: carry at most SIZE of git work (e.g. 50M, 1G); the rest stays behind,
    /// named in a warning
    #[arg(
        long,
        value_name = "SIZE",
        default_value = "50M",
        value_parser = parse_size,
        requires = "bundle",
        hide_short_help = true
    )]
    pub max_worktree: u64,
}

/// `--agents`'s long help, its list read from the agent registry.
fn agents_long_help() -> String {
    let claude = format!("{} ({})", crate::agent::claude::NAME, crate::agent::claude::DISPLAY_NAME);
    let others: Vec<String> =
        crate::agent::AGENTS.iter().map(|a| format!("{} ({})", a.id(), a.name())).collect();
    format!(
        "With --bundle: carry only these agents' sessions\n\nA comma-separated list from {claude}, {}. \
         By default every agent with sessions for the directory goes in, each redacted like the transcripts.",
        others.join(", ")
    )
}

/// The names `--agents` accepts, from the agents lokust knows.
fn agent_names() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(crate::agent::names())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn definitions_are_consistent() {
        ShellCli::command().debug_assert();
        SnapshotCli::command().debug_assert();
        TmuxCli::command().debug_assert();
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
