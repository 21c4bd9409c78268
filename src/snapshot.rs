//! The snapshot pipeline every caller shares (`lokust-shell-snapshot`, `tmux export` of a
//! pane or a session, the prompt hook, the archive): [`take`] assembles a shell snapshot,
//! every capturer running, the slow ones (git, tmux) in parallel and under a deadline (a
//! capturer that fails leaves its field null and a warning, and the snapshot still
//! succeeds); [`write`] writes it, bundled with what travels beside it when asked, sealed
//! when asked, whole or not at all.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::bundle;
use crate::capture::{claude, env, git, history, multiplexer, terminal};
use crate::exec;
use crate::fsutil::Destination;
use crate::lok::{SHELL_KIND, ShellKind, ShellLok, ShellSessionMeta, ShellState};
use crate::probe::Probe;
use crate::redact::Report;

/// What to capture and how.
#[derive(Debug, Clone)]
pub struct Options {
    pub history_lines: usize,
    /// Read this history file instead of the shell's own.
    pub history_file: Option<PathBuf>,
    /// Entries handed over by a shell hook, newest last; replaces the file.
    pub history_entries: Option<Vec<String>>,
    /// Describe this tmux session instead of the one in `$TMUX`.
    pub tmux_session: Option<String>,
    /// The shell's name when `$SHELL` is not the shell being captured.
    pub shell: Option<String>,
    /// The directory to describe instead of the working directory.
    pub cwd: Option<PathBuf>,
    /// `lokust-shell-snapshot` or `lokust-tmux`.
    pub captured_via: String,
    pub deadline: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            history_lines: 200,
            history_file: None,
            history_entries: None,
            tmux_session: None,
            shell: None,
            cwd: None,
            captured_via: "lokust-shell-snapshot".into(),
            deadline: exec::default_deadline(),
        }
    }
}

/// What each section's redaction changed, for the summary.
#[derive(Debug, Default, Clone)]
pub struct Redactions {
    pub env: Report,
    pub history: Report,
    pub git: Report,
    pub scrollback: Report,
    pub bundle: Report,
}

pub struct Snapshot {
    pub lok: ShellLok,
    /// The working directory as the system names it: `lok.shell.cwd` is text, and a
    /// name that is not UTF-8 only survives here (see [`CWD_BYTES`]).
    pub cwd: PathBuf,
    pub warnings: Vec<String>,
    pub redactions: Redactions,
    /// Where the history came from, for the summary.
    pub history_source: Option<String>,
    /// How long each capturer took, in the order they finished.
    pub timings: Vec<(&'static str, Duration)>,
}

/// `shell.<CWD_BYTES>`: the exact bytes of a working directory whose name is not UTF-8,
/// base64-encoded; `shell.cwd` then holds the name with U+FFFD for each bad sequence.
pub const CWD_BYTES: &str = "cwd_bytes_base64";

/// The working directory as the user sees it: `$PWD` when it names the same directory
/// (it keeps the symlinks the user cd'ed through), else the real one.
pub fn logical_cwd(probe: &Probe) -> PathBuf {
    let real = probe.cwd().to_path_buf();
    match probe.var_os("PWD").map(PathBuf::from) {
        Some(pwd) if pwd.is_absolute() && same_file(&pwd, &real) => pwd,
        _ => real,
    }
}

fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
        _ => false,
    }
}

/// The basename of `$SHELL` (zsh, bash, fish…), or `unknown`.
pub fn shell_name(probe: &Probe) -> String {
    probe
        .var("SHELL")
        .and_then(|s| Path::new(s).file_name())
        .map(|n| n.to_string_lossy().trim_start_matches('-').to_string())
        .unwrap_or_else(|| "unknown".into())
}

pub fn take(probe: &Probe, opts: &Options) -> Snapshot {
    let mut warnings = Vec::new();
    let mut redactions = Redactions::default();
    let cwd = opts.cwd.clone().unwrap_or_else(|| logical_cwd(probe));

    // The two slow capturers start first and run while the rest is read.
    let git_job = start_git(cwd.clone());
    let tmux_job = {
        let probe = probe.clone();
        let session = opts.tmux_session.clone();
        let deadline = opts.deadline;
        std::thread::spawn(move || {
            let started = Instant::now();
            (multiplexer::capture(&probe, session.as_deref(), deadline), started.elapsed())
        })
    };

    let mut timings = Vec::new();
    let mut clock = Instant::now();
    let mut lap = |name: &'static str, timings: &mut Vec<(&'static str, Duration)>| {
        timings.push((name, clock.elapsed()));
        clock = Instant::now();
    };
    let shell = opts.shell.clone().unwrap_or_else(|| shell_name(probe));
    let env = env::capture(probe);
    lap("env", &mut timings);
    redactions.env = env.report;

    let (entries, history_source) = match &opts.history_entries {
        Some(entries) => {
            let skip = entries.len().saturating_sub(opts.history_lines);
            (entries[skip..].to_vec(), Some("the shell's memory".to_string()))
        }
        None => read_history(probe, &shell, opts, &mut warnings),
    };
    let history = history::redact_entries(entries);
    lap("history", &mut timings);
    redactions.history = history.report;

    let claude_code = match claude::capture(probe, &cwd) {
        Ok(c) => c,
        Err(e) => {
            warnings.push(format!("claude code: could not read the project directory: {e}"));
            None
        }
    };

    lap("claude code", &mut timings);
    let git = joined_git(git_job, opts.deadline, &mut timings, &mut warnings, &mut redactions);
    let multiplexer = match tmux_job.join() {
        Ok((Ok(m), took)) => {
            timings.push(("multiplexer", took));
            m
        }
        Ok((Err(e), _)) => {
            warnings.push(format!("tmux: {e}"));
            None
        }
        Err(_) => None,
    };

    let mut state = ShellState {
        env: env.env,
        env_dropped_count: env.dropped,
        history_tail: history.tail,
        history_redacted_lines: history.redacted_lines,
        terminal: terminal::capture(probe),
        multiplexer,
        git,
        claude_code,
        ..named(probe, &cwd, shell)
    };
    keep_cwd_bytes(&cwd, &mut state, &mut warnings);
    let lok = document(probe, state, &opts.captured_via);
    Snapshot { lok, cwd, warnings, redactions, history_source, timings }
}

/// A snapshot that only names the directory, the host and the user, nothing of the shell
/// read: for a move, whose document is read back at once on this machine to lay the
/// conversations again (the git, tmux and history capturers would be most of its time).
pub fn of_directory(probe: &Probe, cwd: &Path, captured_via: &str) -> Snapshot {
    let mut warnings = Vec::new();
    let mut state = named(probe, cwd, shell_name(probe));
    keep_cwd_bytes(cwd, &mut state, &mut warnings);
    Snapshot {
        lok: document(probe, state, captured_via),
        cwd: cwd.to_path_buf(),
        warnings,
        redactions: Redactions::default(),
        history_source: None,
        timings: Vec::new(),
    }
}

/// The fields that say where a snapshot was taken, by whom, in which shell.
fn named(probe: &Probe, cwd: &Path, shell: String) -> ShellState {
    ShellState {
        cwd: cwd.to_string_lossy().into_owned(),
        hostname: hostname::get().map(|h| h.to_string_lossy().into_owned()).unwrap_or_default(),
        user: whoami::username().unwrap_or_else(|_| probe.var("USER").unwrap_or("unknown").to_string()),
        shell,
        ..ShellState::default()
    }
}

/// A shell snapshot's document around `state`, made now.
fn document(probe: &Probe, state: ShellState, captured_via: &str) -> ShellLok {
    let created_by = probe.var("USER").map(str::to_string).unwrap_or_else(|| state.user.clone());
    let lok = ShellLok {
        format_version: crate::lok::FORMAT_VERSION,
        session: ShellSessionMeta {
            id: format!("shell-{}", uuid::Uuid::new_v4()),
            status: "snapshot".into(),
            kind: ShellKind::Shell,
            created_at_ms: probe.now_ms(),
            extra: Default::default(),
        },
        shell: state,
        bundle: None,
        created_by,
        captured_via: captured_via.to_string(),
        extra: Default::default(),
    };
    debug_assert_eq!(serde_json::to_value(lok.session.kind).ok(), Some(SHELL_KIND.into()));
    lok
}

/// The git capture running on its own thread: its result and how long it took.
type GitJob = std::thread::JoinHandle<(Result<(Option<crate::lok::Git>, Report), git2::Error>, Duration)>;

fn start_git(cwd: std::path::PathBuf) -> GitJob {
    std::thread::spawn(move || {
        let started = Instant::now();
        let mut report = Report::default();
        let git = git::capture(&cwd, &mut report).map(|git| (git, report));
        (git, started.elapsed())
    })
}

/// The git capture's result, waited for within `deadline`; its report goes in
/// `redactions`, a failure in `warnings`.
fn joined_git(
    job: GitJob,
    deadline: Duration,
    timings: &mut Vec<(&'static str, Duration)>,
    warnings: &mut Vec<String>,
    redactions: &mut Redactions,
) -> Option<crate::lok::Git> {
    let git = match exec::within("git", deadline, move || job.join()) {
        Ok(Ok((result, took))) => {
            timings.push(("git", took));
            result
        }
        Ok(Err(_)) => Err(git2::Error::from_str("the reader crashed")),
        Err(e) => {
            warnings.push(format!("git: {e}"));
            Ok((None, Report::default()))
        }
    };
    match git {
        Ok((git, report)) => {
            redactions.git = report;
            git
        }
        Err(e) => {
            warnings.push(format!("git: could not read the repository: {}", e.message()));
            None
        }
    }
}

/// A directory whose name is not UTF-8 keeps its exact bytes beside the lossy `cwd`.
fn keep_cwd_bytes(cwd: &std::path::Path, state: &mut ShellState, warnings: &mut Vec<String>) {
    if cwd.to_str().is_some() {
        return;
    }
    use base64::Engine;
    use std::os::unix::ffi::OsStrExt;
    let bytes = base64::engine::general_purpose::STANDARD.encode(cwd.as_os_str().as_bytes());
    state.extra.insert(CWD_BYTES.into(), bytes.into());
    warnings.push(format!(
        "the directory's name is not UTF-8: shell.cwd holds it with U+FFFD for the bad bytes, \
         and shell.{CWD_BYTES} the exact bytes"
    ));
}

fn read_history(
    probe: &Probe,
    shell: &str,
    opts: &Options,
    warnings: &mut Vec<String>,
) -> (Vec<String>, Option<String>) {
    let located = match &opts.history_file {
        Some(path) => {
            Some((path.clone(), crate::shell::Shell::from_name(shell).unwrap_or(crate::shell::Shell::Bash)))
        }
        None => history::locate(probe, shell),
    };
    let Some((path, format)) = located else {
        return (Vec::new(), None);
    };
    match history::read_tail(&path, format, opts.history_lines) {
        Ok(entries) => (entries, Some(path.display().to_string())),
        // A shell that never wrote a history file is not a failure, unless the user named it.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && opts.history_file.is_none() => {
            (Vec::new(), None)
        }
        Err(e) => {
            warnings.push(format!("history: could not read {}: {e}", path.display()));
            (Vec::new(), None)
        }
    }
}

/// What a bundled `.lok` carries beside the snapshot: Claude Code's project, when it has
/// one, and the rest as the bundle's options name it (every agent's element, the git work).
pub struct Carried<'a> {
    pub plan: Option<&'a bundle::Plan>,
    pub opts: &'a bundle::BundleOptions,
}

/// Writes `lok` to `destination`, bundled with `carried` when given, through `sealer`,
/// whole or not at all: the bytes that landed, and the bundle's figures. While a bundle
/// is written Ctrl-C, TERM and HUP stop it between chunks and leave no half-written file;
/// this is where every caller gets that.
pub fn write(
    lok: &ShellLok,
    carried: Option<Carried<'_>>,
    destination: &Destination,
    sealer: Option<crate::seal::Sealer>,
) -> anyhow::Result<(u64, Option<bundle::BundleStats>)> {
    if carried.is_some() {
        crate::interrupt::install_signal_handlers();
    }
    let mut stats = None;
    let bytes = sealed(destination, sealer, |out| {
        match &carried {
            Some(c) => stats = Some(bundle::write_lok(lok, c.plan, c.opts, out)?),
            None => crate::lok::write_shell(lok, out)?,
        }
        Ok(())
    })?;
    Ok((bytes, stats))
}

/// [`write`] of a plain snapshot already serialized (the hook checks its text reads back
/// before it replaces a good file): the same destination and sealing, the text once.
pub fn write_serialized(
    json: &[u8],
    destination: &Destination,
    sealer: Option<crate::seal::Sealer>,
) -> anyhow::Result<u64> {
    sealed(destination, sealer, |out| Ok(out.write_all(json)?))
}

/// Writes through `sealer` into `destination`, whole or not at all; the bytes that landed.
fn sealed(
    destination: &Destination,
    sealer: Option<crate::seal::Sealer>,
    fill: impl FnOnce(&mut dyn std::io::Write) -> anyhow::Result<()>,
) -> anyhow::Result<u64> {
    destination.write(|out| {
        let mut out = crate::seal::Output::new(out, sealer)?;
        fill(&mut out)?;
        out.finish()?;
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_only_snapshot_names_the_directory_and_reads_nothing_of_the_shell() {
        let home = tempfile::tempdir().unwrap();
        std::fs::write(home.path().join(".zsh_history"), ": 1700000000:0;make deploy\n").unwrap();
        let home_str = home.path().to_str().unwrap();
        let probe = Probe::fake([("HOME", home_str), ("SHELL", "/bin/zsh"), ("EDITOR", "vi")], home.path());
        let whole = take(&probe, &Options { cwd: Some(home.path().to_path_buf()), ..Options::default() });
        assert!(!whole.lok.shell.history_tail.is_empty(), "the full snapshot reads the history");
        assert!(!whole.lok.shell.env.is_empty(), "and the environment");
        let bare = of_directory(&probe, home.path(), "lokust-move");
        assert_eq!(bare.lok.shell.cwd, home_str);
        assert_eq!(bare.lok.shell.shell, "zsh");
        assert_eq!(bare.lok.captured_via, "lokust-move");
        assert!(bare.lok.shell.history_tail.is_empty() && bare.lok.shell.env.is_empty());
        assert!(bare.lok.shell.git.is_none() && bare.lok.shell.multiplexer.is_none());
    }
}
