//! A move's journal: what it is about to change, written (0600, atomically) before each
//! step that changes a store, so that a move killed part way (SIGKILL, a power cut) is
//! rolled back by the next `lokust-shell move`, and a move that fails is rolled back by the
//! same code. `$XDG_STATE_HOME/lokust/moving/<time>-<pid>.json`.

use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::Before;
use crate::agent;
use crate::probe::Probe;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Journal {
    pub old_abs: PathBuf,
    pub new_real: PathBuf,
    pub old_str: String,
    pub new_str: String,
    /// The folder is (about to be) renamed.
    pub move_dir: bool,
    /// NEW's side of Claude Code's store before the restore.
    pub before: Before,
    /// Old copies (about to be) set aside: where each was, and its name aside.
    pub asides: Vec<(PathBuf, PathBuf)>,
    /// Agents whose rows are (about to be) repointed in place, by `--agents` name.
    pub repointed: Vec<String>,
    /// Where this journal is written; none for one kept in memory only.
    #[serde(skip)]
    pub path: Option<PathBuf>,
}

impl Journal {
    /// Writes the journal as it stands; a move that cannot keep one does not start.
    pub fn save(&self) -> anyhow::Result<()> {
        let Some(path) = &self.path else { return Ok(()) };
        let text = serde_json::to_vec_pretty(self)?;
        crate::fsutil::write_private_atomic(path, |f| std::io::Write::write_all(f, &text))
            .map_err(|e| anyhow::anyhow!("could not write the move's journal {}: {e}", path.display()))
    }

    /// The move is over, one way or the other.
    pub fn close(&self) {
        if let Some(path) = &self.path {
            let _ = fs::remove_file(path);
        }
    }

    /// Puts every store back as it was: rows pointed back, what the restore added to Claude
    /// Code's store taken away, each old copy renamed back (over the copy laid in its place,
    /// which came from the backup), the folder renamed back. Each step is safe to repeat.
    pub fn roll_back(&self, probe: &Probe) {
        for id in self.repointed.iter().rev() {
            if let Some(a) = agent::AGENTS.iter().find(|a| a.id() == id)
                && let Some(home) = a.home(probe)
            {
                let _ = a.repoint(&home, &self.new_str, &self.old_str);
            }
        }
        self.before.undo(probe, &self.new_str);
        for (from, to) in self.asides.iter().rev() {
            if fs::symlink_metadata(to).is_err() {
                continue; // never set aside, or already back
            }
            if fs::symlink_metadata(from).is_ok_and(|m| m.is_dir()) && to.is_dir() {
                let _ = fs::remove_dir_all(from);
            }
            let _ = fs::rename(to, from);
        }
        let (moved_new, old_gone) =
            (fs::symlink_metadata(&self.new_real).is_ok(), fs::symlink_metadata(&self.old_abs).is_err());
        if self.move_dir && moved_new && old_gone {
            let _ = fs::rename(&self.new_real, &self.old_abs);
        }
    }
}

/// `$XDG_STATE_HOME/lokust/moving`.
pub fn folder(probe: &Probe) -> Option<PathBuf> {
    probe.state_dir().map(|d| d.join("moving"))
}

/// A fresh journal's path in `folder`, made private.
pub fn new_path(probe: &Probe, folder: &Path) -> anyhow::Result<PathBuf> {
    crate::fsutil::create_private_dir(folder)
        .map_err(|e| anyhow::anyhow!("could not create {}: {e}", folder.display()))?;
    let stamp = crate::human::utc(probe.now_ms()).replace(['-', ':'], "");
    Ok(folder.join(format!("{stamp}-{}.json", std::process::id())))
}

/// Rolls back every move a journal says was killed part way; one line per move.
pub fn recover(probe: &Probe) -> Vec<String> {
    let Some(folder) = folder(probe) else { return Vec::new() };
    let mut said = Vec::new();
    for entry in fs::read_dir(&folder).into_iter().flatten().flatten() {
        let path = entry.path();
        if !entry.file_type().is_ok_and(|t| t.is_file()) || path.extension().is_none_or(|x| x != "json") {
            continue;
        }
        // A move still running holds its lock; one that ended deleted its journal first.
        let Ok(_turn) = crate::fsutil::try_lock_file(&path.with_extension("lock")) else { continue };
        let Ok(bytes) = crate::agent::disk::read_bounded(&path, 16 << 20) else { continue };
        let Ok(mut journal) = serde_json::from_slice::<Journal>(&bytes) else { continue };
        journal.path = Some(path.clone());
        journal.roll_back(probe);
        journal.close();
        let _ = fs::remove_file(path.with_extension("lock"));
        said.push(format!(
            "an interrupted move of {} to {} was rolled back",
            crate::sanitize::for_terminal(&journal.old_str),
            crate::sanitize::for_terminal(&journal.new_str)
        ));
    }
    said
}
