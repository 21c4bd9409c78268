//! The prompt hooks: the scripts `lokust-shell init` prints, and the live snapshot they
//! keep current (`lokust-shell snapshot --live PID`).
//!
//! A live snapshot is `$XDG_STATE_HOME/lokust/live/<shell pid>.lok`. It is written from
//! the background of a prompt, so it must never make things worse: a snapshot that could
//! not be taken leaves the old file alone, an empty history handover keeps the history
//! already saved, and nothing is ever printed (problems go to `hook.log`). Live files of
//! shells that ended more than [`KEEP_DEAD`] ago are pruned; younger ones stay, because
//! they are what `--latest` finds after a crash.

use std::fs::{self, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use anyhow::Context;

use crate::fsutil;
use crate::lok::{Lok, ShellLok};
use crate::probe::Probe;
use crate::shell::{Quote, Shell, fish_quote, posix_quote};
use crate::snapshot::{self, Options};

/// The hook scripts, as committed in `shell-hooks/`.
pub const ZSH: &str = include_str!("../shell-hooks/lokust.zsh");
pub const BASH: &str = include_str!("../shell-hooks/lokust.bash");
pub const FISH: &str = include_str!("../shell-hooks/lokust.fish");
pub const TMUX: &str = include_str!("../shell-hooks/lokust.tmux");

/// How long the live file of a shell that ended is kept.
pub const KEEP_DEAD: Duration = Duration::from_secs(7 * 24 * 3600);

/// The log grows to this size, then starts over.
const LOG_LIMIT: u64 = 64 * 1024;

/// The hook script for `shell`, calling the binary at `exe` (the script's default is
/// `lokust-shell` on PATH).
pub fn script(shell: Shell, exe: Option<&Path>) -> String {
    let (text, marker, quote): (&str, &str, fn(&str, Quote) -> String) = match shell {
        Shell::Zsh => (ZSH, "__lokust_bin='lokust-shell'", posix_quote),
        Shell::Bash => (BASH, "__lokust_bin='lokust-shell'", posix_quote),
        Shell::Fish => (FISH, "__lokust_bin lokust-shell", fish_quote),
    };
    let sep = if shell == Shell::Fish { " " } else { "=" };
    match exe.and_then(Path::to_str) {
        // Only the line that sets __lokust_bin changes.
        Some(exe) => text.replacen(marker, &format!("__lokust_bin{sep}{}", quote(exe, Quote::Always)), 1),
        None => text.to_string(),
    }
}

/// `$XDG_STATE_HOME/lokust/live`.
pub fn live_dir(probe: &Probe) -> Option<PathBuf> {
    probe.state_dir().map(|d| d.join("live"))
}

/// The live snapshot of shell `pid`, when there is a readable one.
pub fn read_live(probe: &Probe, pid: u32) -> Option<ShellLok> {
    let path = live_dir(probe)?.join(format!("{pid}.lok"));
    match Lok::read_path(&path) {
        Ok(Lok::Shell(s)) => Some(*s),
        _ => None,
    }
}

/// History entries as a hook hands them over: NUL-terminated entries, oldest first, or
/// `fc -l` lines (`  12  cmd`, bash's `12\t cmd`, `12* cmd` for an edited entry) where
/// a line without an event number continues the entry before it.
pub fn parse_handover(buf: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(buf);
    if text.contains('\0') {
        return text.split('\0').filter(|e| !e.trim().is_empty()).map(str::to_string).collect();
    }
    let mut entries: Vec<String> = Vec::new();
    for line in text.lines() {
        match strip_event_number(line) {
            Some(cmd) => entries.push(cmd.to_string()),
            None => {
                if let Some(last) = entries.last_mut() {
                    last.push('\n');
                    last.push_str(line);
                }
            }
        }
    }
    entries.retain(|e| !e.trim().is_empty());
    entries
}

fn strip_event_number(line: &str) -> Option<&str> {
    let rest = line.trim_start_matches(' ');
    let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    if digits == 0 {
        return None;
    }
    let rest = &rest[digits..];
    let rest = rest.strip_prefix('*').unwrap_or(rest);
    let cmd = rest.trim_start_matches([' ', '\t']);
    (cmd.len() < rest.len()).then_some(cmd)
}

/// Reads `--history-from FILE` (`-` for standard input).
pub fn read_handover(from: &Path) -> io::Result<Vec<String>> {
    let mut buf = Vec::new();
    if from == Path::new("-") {
        io::stdin().lock().read_to_end(&mut buf)?;
    } else {
        fs::File::open(from)?.read_to_end(&mut buf)?;
    }
    Ok(parse_handover(&buf))
}

/// The handed-over history without the entries the shell hides (a leading space), when
/// the shell is set to hide them.
pub fn hidden_dropped(entries: Vec<String>, ignore_space: bool) -> Vec<String> {
    if !ignore_space {
        return entries;
    }
    entries.into_iter().filter(|e| !e.starts_with(' ')).collect()
}

#[derive(Debug, Clone)]
pub struct LiveOptions {
    pub pid: u32,
    pub shell: Option<String>,
    /// The history handed over by the hook; `None` reads the history file.
    pub history: Option<Vec<String>>,
    pub history_lines: usize,
    /// Skip when the directory is unchanged and the file is younger than this.
    pub interval: Option<Duration>,
    /// When the hook ran, in microseconds since the epoch (the shell's `$EPOCHREALTIME`,
    /// else this process's start): the snapshot describes the shell as it was then, and
    /// an older one never replaces a newer one.
    pub as_of_us: u64,
    /// Seal the live file to these recipients (LOKUST_ENCRYPT_TO, LOKUST_RECIPIENTS_FILE).
    pub seal: crate::seal::SealOptions,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LiveOutcome {
    Written(PathBuf),
    /// Nothing changed within the interval.
    Fresh,
    /// A newer snapshot of the same shell got there first.
    Superseded,
}

/// Writes the live snapshot of shell `opts.pid`, then prunes old live files.
pub fn write_live(probe: &Probe, opts: &LiveOptions) -> anyhow::Result<LiveOutcome> {
    let dir = live_dir(probe).context("cannot find the state directory: set HOME or XDG_STATE_HOME")?;
    fsutil::create_private_dir(&dir).with_context(|| format!("could not create {}", dir.display()))?;
    let path = dir.join(format!("{}.lok", opts.pid));
    // Two prompts in quick succession start two writers; they take turns on the lock.
    // The lock file holds the time of the snapshot last written: a writer forked
    // earlier but scheduled later must not put an older state back.
    let mut turn = crate::fsutil::lock_file(&lock_path(&dir, opts.pid))?;
    let mut last = String::new();
    turn.read_to_string(&mut last)?;
    if last.trim().parse::<u64>().is_ok_and(|last| last > opts.as_of_us) {
        return Ok(LiveOutcome::Superseded);
    }
    // A sealed previous file reads back only with a key here that needs no passphrase;
    // the hook never asks. Without one, each refresh starts afresh.
    let previous = match crate::seal::read_lok(&path, &crate::seal::Keys::without_prompts(probe)) {
        Ok(Lok::Shell(s)) => Some(*s),
        _ => None,
    };
    let cwd = snapshot::logical_cwd(probe);
    if let (Some(interval), Some(prev)) = (opts.interval, &previous) {
        let age = fs::metadata(&path).and_then(|m| m.modified()).ok().and_then(|t| t.elapsed().ok());
        if prev.shell.cwd == cwd.to_string_lossy() && age.is_some_and(|a| a < interval) {
            return Ok(LiveOutcome::Fresh);
        }
    }
    let snap = snapshot::take(
        probe,
        &Options {
            history_lines: opts.history_lines,
            history_entries: opts.history.clone(),
            shell: opts.shell.clone(),
            cwd: Some(cwd),
            ..Options::default()
        },
    );
    let mut lok = snap.lok;
    lok.session.created_at_ms = opts.as_of_us / 1000;
    for w in &snap.warnings {
        log(probe, &format!("pid {}: {w}", opts.pid));
    }
    if let Some(prev) = &previous {
        // A glitch in the handover must not erase the history already saved.
        if lok.shell.history_tail.is_empty() && !prev.shell.history_tail.is_empty() {
            lok.shell.history_tail = prev.shell.history_tail.clone();
            lok.shell.history_redacted_lines = prev.shell.history_redacted_lines;
        }
        // One shell, one session id across its refreshes.
        lok.session.id = prev.session.id.clone();
    }
    let mut json = Vec::new();
    crate::lok::write_shell(&lok, &mut json)?;
    // Never replace a good file with one that does not read back.
    match Lok::from_slice(&json, "the new live snapshot") {
        Ok(Lok::Shell(s)) if !s.shell.cwd.is_empty() => {}
        Ok(_) => anyhow::bail!("the new live snapshot has no directory; the old one is kept"),
        Err(e) => anyhow::bail!("{e}; the old one is kept"),
    }
    let sealer = opts.seal.sealer()?;
    snapshot::write_serialized(&json, &fsutil::Destination::File(path.clone()), sealer)
        .with_context(|| format!("could not write {}", path.display()))?;
    use std::io::{Seek, SeekFrom};
    turn.set_len(0)?;
    turn.seek(SeekFrom::Start(0))?;
    write!(turn, "{}", opts.as_of_us)?;
    prune(&dir, opts.pid, KEEP_DEAD);
    Ok(LiveOutcome::Written(path))
}

/// `$EPOCHREALTIME` (seconds with a decimal point or comma) in microseconds.
pub fn parse_epoch(s: &str) -> Option<u64> {
    let secs: f64 = s.trim().replace(',', ".").parse().ok()?;
    (secs.is_finite() && secs > 0.0).then_some((secs * 1e6) as u64)
}

fn lock_path(dir: &Path, pid: u32) -> PathBuf {
    dir.join(format!(".{pid}.lock"))
}

/// Whether process `pid` is running.
pub fn alive(pids: &[u32]) -> Vec<bool> {
    use sysinfo::{Pid, ProcessRefreshKind, ProcessesToUpdate, System};
    let Ok(mut sys) = System::new() else {
        return vec![true; pids.len()];
    };
    let list: Vec<Pid> = pids.iter().map(|p| Pid::from_u32(*p)).collect();
    sys.refresh_processes_specifics(ProcessesToUpdate::Some(&list), true, ProcessRefreshKind::nothing());
    list.iter().map(|p| sys.process(*p).is_some()).collect()
}

/// The pid a live file belongs to.
pub fn live_pid(path: &Path) -> Option<u32> {
    if path.extension()? != "lok" {
        return None;
    }
    path.file_stem()?.to_str()?.parse().ok()
}

/// Removes the live files of shells that are gone and whose file is older than `keep`.
/// Returns the files removed.
pub fn prune(dir: &Path, me: u32, keep: Duration) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let now = SystemTime::now();
    let old: Vec<(PathBuf, u32)> = entries
        .flatten()
        .map(|e| e.path())
        .filter_map(|p| live_pid(&p).map(|pid| (p, pid)))
        .filter(|(_, pid)| *pid != me)
        .filter(|(p, _)| {
            let modified = fs::metadata(p).and_then(|m| m.modified()).unwrap_or(now);
            now.duration_since(modified).is_ok_and(|age| age >= keep)
        })
        .collect();
    let pids: Vec<u32> = old.iter().map(|(_, pid)| *pid).collect();
    let running = alive(&pids);
    let mut removed = Vec::new();
    for ((path, pid), running) in old.into_iter().zip(running) {
        if !running && fs::remove_file(&path).is_ok() {
            let _ = fs::remove_file(lock_path(dir, pid));
            removed.push(path);
        }
    }
    removed
}

/// Appends a line to `$XDG_STATE_HOME/lokust/hook.log`, starting over past 64 KiB.
/// The hook prints nothing, so this is where its problems go.
pub fn log(probe: &Probe, message: &str) {
    let Some(dir) = probe.state_dir() else { return };
    if fsutil::create_private_dir(&dir).is_err() {
        return;
    }
    let path = dir.join("hook.log");
    let too_big = fs::metadata(&path).is_ok_and(|m| m.len() > LOG_LIMIT);
    let mut open = OpenOptions::new();
    open.create(true).append(!too_big).write(true).truncate(too_big);
    use std::os::unix::fs::OpenOptionsExt;
    open.mode(0o600);
    if let Ok(mut f) = open.open(&path) {
        let _ = writeln!(f, "{} {message}", crate::human::utc(probe.now_ms()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handover_in_both_shapes() {
        assert_eq!(
            parse_handover(b"echo a\0for i in 1 2; do\necho $i\ndone\0"),
            ["echo a", "for i in 1 2; do\necho $i\ndone"]
        );
        let bash = b"1\t echo a\n2\t for i in 1 2; do\necho $i\ndone\n3*\t ls -l\n";
        assert_eq!(parse_handover(bash), ["echo a", "for i in 1 2; do\necho $i\ndone", "ls -l"]);
        let zsh = b"    9  cd /tmp\n   10  git status\n";
        assert_eq!(parse_handover(zsh), ["cd /tmp", "git status"]);
        assert!(parse_handover(b"").is_empty());
        assert!(parse_handover(b"\0\0").is_empty());
    }

    #[test]
    fn epochrealtime_in_both_locales() {
        assert_eq!(parse_epoch("1795309222.587369"), Some(1_795_309_222_587_369));
        assert_eq!(parse_epoch("1795309222,5873696804").map(|u| u / 1000), Some(1_795_309_222_587));
        assert_eq!(parse_epoch(""), None);
        assert_eq!(parse_epoch("x"), None);
    }

    #[test]
    fn init_puts_the_binary_in_the_one_place() {
        let zsh = script(Shell::Zsh, Some(Path::new("/opt/it's/lokust-shell")));
        assert!(zsh.contains("__lokust_bin='/opt/it'\\''s/lokust-shell'"), "{zsh}");
        let fish = script(Shell::Fish, Some(Path::new("/opt/it's/lokust-shell")));
        assert!(fish.contains("__lokust_bin '/opt/it\\'s/lokust-shell'"), "{fish}");
        assert_eq!(script(Shell::Bash, None), BASH);
    }

    #[test]
    fn pruning_keeps_the_living_and_the_recent() {
        let dir = tempfile::tempdir().unwrap();
        let me = std::process::id();
        // A pid far above any pid_max is never running.
        let dead = dir.path().join("2000000000.lok");
        let mine = dir.path().join(format!("{me}.lok"));
        let other = dir.path().join("notes.txt");
        for p in [&dead, &mine, &other] {
            fs::write(p, "{}").unwrap();
        }
        assert!(prune(dir.path(), 1, KEEP_DEAD).is_empty(), "a recent file of a dead shell stays");
        assert_eq!(prune(dir.path(), 1, Duration::ZERO), std::slice::from_ref(&dead));
        assert!(mine.exists() && other.exists());
    }
}
