//! Finding the newest snapshot, so "my terminal crashed, where was I" is one command
//! (`lokust-shell inspect --latest`, `restore --latest`).
//!
//! Candidates are the exports (`exports/`), the snapshots kept on a terminal
//! (`snapshots/`) and the prompt hook's live files (`live/`). A live file of a shell that
//! is still running — the one asking first of all — describes where that shell is now,
//! not where a crashed one was, so those come last: they are chosen only when nothing
//! else exists.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::hook;
use crate::probe::Probe;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Written by `lokust-tmux export`.
    Export,
    /// Written by `lokust-shell snapshot` on a terminal.
    Snapshot,
    /// The prompt hook's file of a shell that has ended.
    Ended,
    /// The prompt hook's file of a shell still running.
    Running,
}

impl Kind {
    pub fn describe(self) -> &'static str {
        match self {
            Kind::Export => "tmux export",
            Kind::Snapshot => "snapshot",
            Kind::Ended => "live snapshot of a shell that has ended",
            Kind::Running => "live snapshot of a shell still running",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub path: PathBuf,
    pub kind: Kind,
    pub modified: SystemTime,
}

fn lok_files(dir: &Path) -> Vec<(PathBuf, SystemTime)> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .map(|e| e.path())
        // `.lok.age` is a sealed one (lokust-shell-snapshot --encrypt-to).
        .filter(|p| p.extension().is_some_and(|x| x == "lok") || p.to_string_lossy().ends_with(".lok.age"))
        .filter_map(|p| {
            let m = fs::metadata(&p).ok().filter(|m| m.is_file())?;
            Some((p, m.modified().ok()?))
        })
        .collect()
}

/// [`find`] for a command run by a person: the parent process is the shell asking, the
/// choice is announced on stderr, and finding nothing is an error that says where it looked.
pub fn find_for_user(probe: &Probe) -> anyhow::Result<PathBuf> {
    use anyhow::Context;
    let found = find(probe, Some(std::os::unix::process::parent_id()))
        .context("no snapshot found: no export, snapshot or live file in $XDG_STATE_HOME/lokust")?;
    let ms = crate::clock::since_epoch(found.modified).as_millis() as u64;
    eprintln!(
        "lokust: latest is {} ({}, {})",
        found.path.display(),
        found.kind.describe(),
        crate::human::utc(ms)
    );
    Ok(found.path)
}

/// The newest snapshot under `probe`'s state directory. `me` is the shell asking (its
/// own live file counts as running whatever the process table says).
pub fn find(probe: &Probe, me: Option<u32>) -> Option<Found> {
    let state = probe.state_dir()?;
    let mut found: Vec<Found> = Vec::new();
    for (dir, kind) in [("exports", Kind::Export), ("snapshots", Kind::Snapshot)] {
        found.extend(lok_files(&state.join(dir)).into_iter().map(|(path, modified)| Found {
            path,
            kind,
            modified,
        }));
    }
    let live = lok_files(&state.join("live"));
    let pids: Vec<u32> = live.iter().map(|(p, _)| hook::live_pid(p).unwrap_or(0)).collect();
    let running = hook::alive(&pids);
    for ((path, modified), (pid, running)) in live.into_iter().zip(pids.into_iter().zip(running)) {
        let kind = if running || Some(pid) == me { Kind::Running } else { Kind::Ended };
        found.push(Found { path, kind, modified });
    }
    found.into_iter().max_by_key(|f| (f.kind != Kind::Running, f.modified))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn touch(path: &Path, secs_ago: u64) {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, "{}").unwrap();
        let t = SystemTime::now() - Duration::from_secs(secs_ago);
        fs::File::options().write(true).open(path).unwrap().set_modified(t).unwrap();
    }

    #[test]
    fn newest_wins_and_running_shells_come_last() {
        let home = tempfile::tempdir().unwrap();
        let probe = Probe::fake([("HOME", home.path().to_str().unwrap())], home.path());
        assert_eq!(find(&probe, None), None);
        let state = home.path().join(".local/state/lokust");
        let me = std::process::id();
        touch(&state.join(format!("live/{me}.lok")), 0);
        assert_eq!(find(&probe, Some(me)).unwrap().kind, Kind::Running);
        touch(&state.join("exports/work-0.0-x.lok"), 300);
        touch(&state.join("live/2000000000.lok"), 60);
        touch(&state.join("live/notes.txt"), 0);
        let f = find(&probe, Some(me)).unwrap();
        assert_eq!((f.kind, f.path.file_name().unwrap().to_str().unwrap()), (Kind::Ended, "2000000000.lok"));
        touch(&state.join("snapshots/h-1.lok"), 1);
        assert_eq!(find(&probe, Some(me)).unwrap().kind, Kind::Snapshot);
    }
}
