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

/// An old copy's place in a move's backup folder, and what it holds.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Kept {
    pub path: PathBuf,
    /// The agent, by `--agents` name.
    pub agent: String,
    /// The conversation; none for Claude Code's slot, which holds many.
    pub id: Option<String>,
}

/// How a committed move's old copies ended.
pub struct Finished {
    /// Put back where they were (`--keep-old`).
    pub kept: usize,
    /// Kept by id, not by folder (a Codex rollout): moved although `--keep-old`.
    pub moved: usize,
    /// Could not be renamed into the backup folder: still beside their stores, aside.
    pub stranded: usize,
}

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
    /// Conversations (agent, id) whose files are (about to be) laid at NEW: a roll back
    /// takes those copies away before the old ones come back.
    #[serde(default)]
    pub laid: Vec<(String, String)>,
    /// The restore at NEW ended (its files were all written before this was saved).
    #[serde(default)]
    pub laid_done: bool,
    /// Every conversation is at NEW: what remains is deleting the old copies (or, with
    /// `--keep-old`, putting them back), and a killed move is finished, not rolled back.
    #[serde(default)]
    pub committed: bool,
    #[serde(default)]
    pub keep_old: bool,
    /// The archive's folder the old copies are renamed into once the move is committed;
    /// none when a backup file was written instead, and they are deleted.
    #[serde(default)]
    pub backup: Option<PathBuf>,
    /// Each old copy's name in `backup`, in the order of `asides`.
    #[serde(default)]
    pub kept_as: Vec<Kept>,
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

    /// Whether the journal is one a move writes: absolute paths, each old copy set aside
    /// beside itself under lokust's own prefix. Anything else is not rolled back: a
    /// journal is only ever a move's own account of its renames, never a list of
    /// arbitrary files to rename.
    pub fn plausible(&self) -> bool {
        let beside = |from: &Path, to: &Path| {
            from.is_absolute()
                && to.parent() == from.parent()
                && to.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with(super::ASIDE_PREFIX))
        };
        // A move lays only what it set aside: a conversation it would take away at NEW is
        // one of the copies aside (a Claude Code transcript inside a slot aside, another
        // agent's files named by its id).
        let set_aside = |agent: &str, id: &str| {
            self.asides.iter().any(|(from, to)| {
                if agent == agent::claude::NAME {
                    let file = format!("{id}.jsonl");
                    to.join(&file).exists() || from.join(&file).exists()
                } else {
                    from.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.contains(id))
                }
            })
        };
        self.old_abs.is_absolute()
            && self.new_real.is_absolute()
            && self.asides.iter().all(|(from, to)| beside(from, to))
            // A committed move deletes its copies aside as it ends: some may be gone.
            && (self.committed || self.laid.iter().all(|(agent, id)| !id.is_empty() && set_aside(agent, id)))
    }

    /// Whether the backup folder the journal at `journal_path` names is a move's: a
    /// `.moved` folder of a project in the archive beside the journal's folder, each old
    /// copy's name inside it. A journal never sends a copy anywhere else.
    pub fn plausible_backup(&self, journal_path: &Path) -> bool {
        use std::path::Component;
        let Some(backup) = &self.backup else { return self.kept_as.is_empty() };
        let plain = |p: &Path| p.components().all(|c| matches!(c, Component::RootDir | Component::Normal(_)));
        let archive = journal_path.parent().and_then(Path::parent).map(|state| state.join("archive"));
        archive.is_some_and(|a| backup.parent().and_then(Path::parent) == Some(a.as_path()))
            && backup.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.ends_with(crate::archive::MOVED))
            && plain(backup)
            && (self.kept_as.is_empty() || self.kept_as.len() == self.asides.len())
            && self.kept_as.iter().all(|k| k.path.starts_with(backup) && plain(&k.path))
    }

    /// A file at NEW written after the journal was last, once the restore there had ended
    /// (the user went on working there after the move was killed): a conversation laid,
    /// or any in NEW's Claude Code slot. While the restore ran, its own files are newer.
    fn written_at_new_since(&self, probe: &Probe) -> Option<PathBuf> {
        let since = fs::metadata(self.path.as_ref()?).and_then(|m| m.modified()).ok()?;
        let newer = |p: &Path| fs::metadata(p).and_then(|m| m.modified()).is_ok_and(|t| t > since);
        let laid = |p: &Path| {
            let stem = p.file_stem().and_then(|s| s.to_str()).unwrap_or_default();
            self.laid.iter().any(|(agent, id)| agent == agent::claude::NAME && id == stem)
        };
        let mut files: Vec<PathBuf> = Vec::new();
        if let Some(config) = crate::capture::claude::config_dir(probe)
            && let Some(slot) = super::claude_slot(&config, &self.new_str)
        {
            // A conversation the move never laid is the user's, whenever the kill came.
            let theirs = fs::read_dir(&slot).into_iter().flatten().flatten().map(|e| e.path());
            let theirs: Vec<PathBuf> = theirs
                .filter(|p| self.laid_done || (p.extension().is_some_and(|x| x == "jsonl") && !laid(p)))
                .collect();
            files.extend(theirs);
        }
        if !self.laid_done {
            // While the restore ran its own files were newer too: only the user's count.
            return files.into_iter().find(|p| newer(p));
        }
        for (agent, id) in &self.laid {
            if let Some(a) = by_id(agent)
                && let Some(home) = a.home(probe)
            {
                files.extend(a.stored(&home, &self.new_str, id).ok().flatten().unwrap_or_default());
            }
        }
        files.into_iter().find(|p| newer(p))
    }

    /// Before a roll back takes the copies laid at NEW away: each one written after the
    /// journal was (the user went on with it after the kill, or the kill came as it was
    /// written) is moved into `<journal>.kept/` instead, never deleted. The folder, when
    /// anything went there.
    fn keep_newer_laid(&self, probe: &Probe) -> Option<PathBuf> {
        let journal = self.path.as_ref()?;
        let since = fs::metadata(journal).and_then(|m| m.modified()).ok()?;
        // Each file laid, with the name it keeps in `<journal>.kept/`.
        let mut laid: Vec<(PathBuf, PathBuf)> = Vec::new();
        let named = |agent: &str, p: &Path| {
            p.file_name().map(|n| PathBuf::from(format!("{agent}-{}", n.to_string_lossy())))
        };
        for (agent, id) in &self.laid {
            if agent == agent::claude::NAME {
                let config = crate::capture::claude::config_dir(probe)?;
                if let Some(slot) = super::claude_slot(&config, &self.new_str) {
                    let transcript = slot.join(format!("{id}.jsonl"));
                    laid.extend(named(agent, &transcript).map(|n| (transcript, n)));
                    // The conversation's own folder (its subagents, tool results): the
                    // user's work after the kill goes on there too.
                    let folder = slot.join(id);
                    for file in files_below(&folder) {
                        let rel = file.strip_prefix(&folder).unwrap_or(&file).to_path_buf();
                        laid.push((file, PathBuf::from(format!("{agent}-{id}")).join(rel)));
                    }
                }
            } else if let Some(a) = by_id(agent)
                && let Some(home) = a.home(probe)
            {
                let paths = a.stored(&home, &self.new_str, id).ok().flatten().unwrap_or_default();
                laid.extend(paths.into_iter().filter_map(|p| named(agent, &p).map(|n| (p, n))));
            }
        }
        let kept = journal.with_extension("kept");
        let mut any = false;
        for (path, name) in laid {
            let newer = fs::symlink_metadata(&path)
                .is_ok_and(|m| m.is_file() && m.modified().is_ok_and(|t| t > since));
            let to = kept.join(&name);
            if newer
                && to.parent().is_some_and(|p| crate::fsutil::create_private_dir(p).is_ok())
                && fs::rename(&path, &to).is_ok()
            {
                any = true;
            }
        }
        any.then_some(kept)
    }

    /// The temp files the killed move was writing when it stopped, in the folders it
    /// wrote to: beside each copy it set aside, and NEW's Claude Code slot.
    fn sweep_temps(&self, probe: &Probe) {
        let mut dirs: Vec<PathBuf> =
            self.asides.iter().filter_map(|(from, _)| from.parent().map(Path::to_path_buf)).collect();
        if let Some(config) = crate::capture::claude::config_dir(probe)
            && let Some(slot) = super::claude_slot(&config, &self.new_str)
        {
            dirs.push(slot);
        }
        dirs.sort();
        dirs.dedup();
        for dir in dirs {
            crate::fsutil::sweep_dead_temps(&dir);
        }
    }

    /// Every conversation the move set out to lay is at NEW.
    fn all_at_new(&self, probe: &Probe) -> bool {
        self.laid.iter().all(|(agent, id)| {
            let known = if agent == agent::claude::NAME {
                Some(super::Known::Claude)
            } else {
                by_id(agent).map(super::Known::Other)
            };
            known.is_some_and(|k| super::is_at(probe, k, id, &self.new_str).unwrap_or(false))
        })
    }

    /// Ends a committed move: each old copy still aside goes into the backup folder (or,
    /// with a backup file written instead, is deleted), or with `--keep-old` is put back
    /// where nothing took its place. A folder laid again where it was (an agent
    /// that keeps conversations by id) first gets back what the bundle does not carry
    /// (locks, caches). How many were put back, and how many kept by id moved instead.
    pub fn finish_committed(&self) -> Finished {
        let (mut kept, mut moved, mut stranded) = (0, 0, 0);
        for (i, (from, to)) in self.asides.iter().enumerate() {
            if fs::symlink_metadata(to).is_err() {
                continue;
            }
            let free = fs::symlink_metadata(from).is_err();
            if self.keep_old && free && fs::rename(to, from).is_ok() {
                kept += 1;
                continue;
            }
            if self.keep_old && !free {
                moved += 1;
            }
            if let (Some(_), Some(kept)) = (&self.backup, self.kept_as.get(i).map(|k| &k.path)) {
                // A folder laid again where it was first gets back what the bundle does
                // not carry; what remains aside is the old copy of what was laid.
                if to.is_dir() && fs::symlink_metadata(from).is_ok_and(|m| m.is_dir()) {
                    give_back(to, from);
                }
                // Into the backup, never deleted: one that cannot go stays aside, where
                // `doctor` finds it.
                let _ = kept.parent().map(crate::fsutil::create_private_dir);
                let renamed = rustix::fs::renameat_with(
                    rustix::fs::CWD,
                    to,
                    rustix::fs::CWD,
                    kept,
                    rustix::fs::RenameFlags::NOREPLACE,
                );
                stranded += usize::from(renamed.is_err());
                continue;
            }
            if to.is_dir() {
                if fs::symlink_metadata(from).is_ok_and(|m| m.is_dir()) {
                    give_back(to, from);
                }
                let _ = fs::remove_dir_all(to);
            } else {
                let _ = fs::remove_file(to);
            }
        }
        // The backup's manifest names what it holds, no more: a copy kept in place
        // (--keep-old) or that could not go into it is not there.
        if let Some(dir) = &self.backup {
            crate::archive::settle_moved(dir, &self.kept_conversations());
        }
        Finished { kept, moved, stranded }
    }

    /// The conversations (agent, id) whose old copies are in the backup folder.
    fn kept_conversations(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        for k in self.kept_as.iter().filter(|k| fs::symlink_metadata(&k.path).is_ok()) {
            match &k.id {
                Some(id) => out.push((k.agent.clone(), id.clone())),
                // Claude Code's slot: each transcript in it.
                None => out.extend(
                    fs::read_dir(&k.path)
                        .into_iter()
                        .flatten()
                        .flatten()
                        .filter_map(|e| e.file_name().to_str()?.strip_suffix(".jsonl").map(str::to_string))
                        .map(|id| (k.agent.clone(), id)),
                ),
            }
        }
        out
    }

    /// Puts every store back as it was: rows pointed back, the copies laid at NEW taken
    /// away (they came from the backup), each old copy renamed back, the folder renamed
    /// back. Each step is safe to repeat. What could not be done, one line each.
    pub fn roll_back(&self, probe: &Probe) -> Vec<String> {
        let mut problems = Vec::new();
        for id in self.repointed.iter().rev() {
            if let Some(a) = by_id(id)
                && let Some(home) = a.home(probe)
                && let Err(e) = a.repoint(&home, &self.new_str, &self.old_str)
            {
                problems.push(format!("{} still names {}: {e:#}", a.name(), self.new_str));
            }
        }
        let claude: Vec<&str> =
            self.laid.iter().filter(|(a, _)| a == agent::claude::NAME).map(|(_, id)| id.as_str()).collect();
        self.before.undo(probe, &self.new_str, &claude);
        for (agent, id) in &self.laid {
            let Some(a) = by_id(agent) else { continue };
            let Some(home) = a.home(probe) else { continue };
            let laid = a.stored(&home, &self.new_str, id).ok().flatten().unwrap_or_default();
            for path in laid.iter().filter(|p| !self.asides.iter().any(|(_, to)| to == *p)) {
                let gone = if path.is_dir() { fs::remove_dir_all(path) } else { fs::remove_file(path) };
                if let Err(e) = gone {
                    problems.push(format!("could not take away {}: {e}", path.display()));
                }
            }
        }
        self.before.undo_gemini(probe, &self.new_str);
        for (from, to) in self.asides.iter().rev() {
            if fs::symlink_metadata(to).is_err() {
                continue; // never set aside, or already back
            }
            // The agent made the folder again meanwhile (the user worked on at OLD): the old
            // copy's files join it, and the folder aside goes once empty.
            if fs::symlink_metadata(from).is_ok_and(|m| m.is_dir()) && to.is_dir() {
                give_back(to, from);
                if fs::remove_dir(to).is_err() {
                    problems.push(format!(
                        "{} holds files {} has too; compare them",
                        to.display(),
                        from.display()
                    ));
                }
                continue;
            }
            if let Err(e) = fs::rename(to, from) {
                problems.push(format!("could not put {} back as {}: {e}", to.display(), from.display()));
            }
        }
        let (moved_new, old_gone) =
            (fs::symlink_metadata(&self.new_real).is_ok(), fs::symlink_metadata(&self.old_abs).is_err());
        if self.move_dir
            && moved_new
            && old_gone
            && let Err(e) = fs::rename(&self.new_real, &self.old_abs)
        {
            problems.push(format!("could not rename {} back: {e}", self.new_real.display()));
        }
        // Nothing was renamed into the backup folder (that happens once committed only).
        if problems.is_empty()
            && let Some(dir) = &self.backup
        {
            crate::archive::forget_moved_if_empty(dir);
        }
        problems
    }
}

/// The regular files below `dir`, links not followed.
fn files_below(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in fs::read_dir(dir).into_iter().flatten().flatten() {
        match e.file_type() {
            Ok(t) if t.is_dir() => out.extend(files_below(&e.path())),
            Ok(t) if t.is_file() => out.push(e.path()),
            _ => {}
        }
    }
    out
}

fn by_id(id: &str) -> Option<&'static dyn agent::Agent> {
    agent::AGENTS.iter().copied().find(|a| a.id() == id)
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

impl Journal {
    /// `an interrupted move of OLD to NEW`, for what recovery says.
    fn what(&self) -> String {
        format!(
            "an interrupted move of {} to {}",
            crate::sanitize::for_terminal(&self.old_str),
            crate::sanitize::for_terminal(&self.new_str)
        )
    }
}

/// The journals in the state folder: regular `.json` files, never through a link.
fn journals(probe: &Probe) -> Vec<PathBuf> {
    let Some(folder) = folder(probe) else { return Vec::new() };
    fs::read_dir(&folder)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect()
}

/// A journal as a move writes it; why not, in words, when it is not one (`Ok(None)`: it
/// is gone).
fn read(path: &Path) -> Result<Option<Journal>, String> {
    let bytes = match crate::agent::disk::read_bounded(path, 16 << 20) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("{} cannot be read ({e}); left as it is", path.display())),
    };
    match serde_json::from_slice::<Journal>(&bytes) {
        Ok(mut j) if j.plausible() && j.plausible_backup(path) => {
            j.path = Some(path.to_path_buf());
            Ok(Some(j))
        }
        _ => Err(format!("{} is not a move's journal; left as it is", path.display())),
    }
}

/// The first journal still left whose move touches `old` or `new` (either holds the
/// other's path, or is it), in words.
pub fn unfinished_touching(probe: &Probe, old: &Path, new: &Path) -> Option<String> {
    // As the folders really are: a link to NEW names NEW.
    let real = |p: &Path| {
        let abs = std::path::absolute(p).ok()?;
        Some(super::real_target(&abs).unwrap_or(abs))
    };
    let (old, new) = (real(old)?, real(new)?);
    let near = |a: &Path, b: &Path| a.starts_with(b) || b.starts_with(a);
    journals(probe).iter().filter_map(|p| read(p).ok().flatten()).find_map(|j| {
        let theirs = [Path::new(&j.old_str), Path::new(&j.new_str), j.old_abs.as_path()];
        theirs.iter().any(|t| near(t, &old) || near(t, &new)).then(|| j.what())
    })
}

/// What recovery does with a journal left by a killed move.
enum Fate {
    /// Every conversation reached NEW: the old copies go.
    Finish,
    /// The user went on at NEW after the kill (`written`), and every conversation is
    /// there: finished rather than rolled back, which would take that work away.
    FinishWorkedOn { written: String },
    /// The user went on at NEW, but not every conversation reached it: left for them.
    LeaveWorkedOn { written: String },
    /// Processes work in the renamed folder: renaming it back would pull it from under them.
    Wait { pids: Vec<u32> },
    /// NEW is a link now, not the folder the move made: nothing to rename back.
    LeaveLinked,
    /// Rolled back; `folder_stays` when the folder cannot go back (OLD exists again).
    RollBack { folder_stays: bool },
}

impl Journal {
    fn fate(&self, probe: &Probe) -> Fate {
        if self.committed {
            return Fate::Finish;
        }
        let renamed = self.move_dir && fs::symlink_metadata(&self.old_abs).is_err();
        if renamed && fs::symlink_metadata(&self.new_real).is_ok_and(|m| m.file_type().is_symlink()) {
            return Fate::LeaveLinked;
        }
        if renamed {
            // The folder itself: a process's working directory is its real path.
            let real = fs::canonicalize(&self.new_real).unwrap_or_else(|_| self.new_real.clone());
            let pids = super::working_in(&real);
            if !pids.is_empty() {
                return Fate::Wait { pids };
            }
        }
        if let Some(written) = self.written_at_new_since(probe) {
            let written = crate::sanitize::for_terminal(&written.to_string_lossy()).into_owned();
            return if self.all_at_new(probe) {
                Fate::FinishWorkedOn { written }
            } else {
                Fate::LeaveWorkedOn { written }
            };
        }
        let folder_stays = self.move_dir
            && fs::symlink_metadata(&self.old_abs).is_ok()
            && fs::symlink_metadata(&self.new_real).is_ok();
        Fate::RollBack { folder_stays }
    }
}

impl Fate {
    /// What becomes of the move, in words; `done` once it was carried out.
    fn says(&self, what: &str, done: bool) -> String {
        let (finished, rolled) = if done {
            ("was finished", "was rolled back")
        } else {
            ("would be finished", "would be rolled back")
        };
        let left = if done { "was left as it is" } else { "would be left as it is" };
        match self {
            Fate::Finish => format!("{what} {finished} (its conversations were all at the new path)"),
            Fate::FinishWorkedOn { written } => {
                format!(
                    "{what} {finished} rather than rolled back: {written} was written at the new path after it stopped"
                )
            }
            Fate::LeaveWorkedOn { written } => format!(
                "{what} {left}: {written} was written at the new path after it stopped, and not every \
                 conversation reached it; the old copies are aside (named {}…), and the backup is in the \
                 archive",
                super::ASIDE_PREFIX
            ),
            Fate::Wait { pids } => {
                let pids: Vec<String> = pids.iter().map(u32::to_string).collect();
                format!(
                    "{what} {left}: processes work in the new folder (pid {}); once they have left it, the \
                     next lokust-shell move rolls it back",
                    pids.join(", ")
                )
            }
            Fate::LeaveLinked => format!("{what} {left}: the new path is a link now, not the folder it made"),
            Fate::RollBack { folder_stays: false } => format!("{what} {rolled}"),
            Fate::RollBack { folder_stays: true } => format!(
                "{what} {rolled}, but the folder stays at the new path: the old one exists again (move it by hand)"
            ),
        }
    }
}

/// What [`recover`] would do, doing nothing: one line per journal of a killed move.
pub fn pending(probe: &Probe) -> Vec<String> {
    journals(probe)
        .iter()
        .filter_map(|p| read(p).ok().flatten())
        .map(|j| format!("{} first", j.fate(probe).says(&j.what(), false)))
        .collect()
}

/// Rolls back every move a journal says was killed part way, or finishes it ([`Fate`]);
/// one line per move.
pub fn recover(probe: &Probe) -> Vec<String> {
    let mut said = Vec::new();
    // A move killed while restoring left the restore's staging folder too.
    if let Some(config) = crate::capture::claude::config_dir(probe) {
        crate::restore::clean_stale(&config.join("projects"));
    }
    // A journal killed as it was rewritten left its temp file beside it.
    if let Some(folder) = folder(probe) {
        crate::fsutil::sweep_dead_temps(&folder);
    }
    for path in journals(probe) {
        let lock = path.with_extension("lock");
        // A move still running holds its lock; one that ended deleted its journal first.
        let Ok(_turn) = crate::fsutil::try_lock_file(&lock) else { continue };
        let mut journal = match read(&path) {
            Ok(Some(j)) => j,
            // It ended while this waited: nothing to do, and no lock file left behind.
            Ok(None) => {
                let _ = fs::remove_file(&lock);
                continue;
            }
            Err(why) => {
                said.push(why);
                continue;
            }
        };
        journal.sweep_temps(probe);
        let fate = journal.fate(probe);
        match fate {
            Fate::Finish | Fate::FinishWorkedOn { .. } => {
                if !journal.committed {
                    journal.committed = true;
                    let _ = journal.save();
                }
                journal.finish_committed();
                journal.close();
                let _ = fs::remove_file(&lock);
            }
            Fate::LeaveWorkedOn { .. } | Fate::Wait { .. } | Fate::LeaveLinked => {}
            Fate::RollBack { .. } => {
                let kept = journal.keep_newer_laid(probe);
                let problems = journal.roll_back(probe);
                if !problems.is_empty() {
                    // Kept, so the next move tries again.
                    said.push(format!(
                        "{} was rolled back only in part: {}",
                        journal.what(),
                        problems.join("; ")
                    ));
                    continue;
                }
                journal.close();
                let _ = fs::remove_file(&lock);
                let mut line = fate.says(&journal.what(), true);
                if let Some(kept) = kept {
                    line.push_str(&format!(
                        "; copies at the new path written after it stopped were kept in {}",
                        crate::sanitize::for_terminal(&kept.to_string_lossy())
                    ));
                }
                let back = journal.move_dir && fs::symlink_metadata(&journal.new_real).is_err();
                said.push(if back { format!("{line} (the folder is at its old path again)") } else { line });
                continue;
            }
        }
        said.push(fate.says(&journal.what(), true));
    }
    said
}

/// Moves every file of `from` that `to` lacks into `to`, folders made as needed.
pub fn give_back(from: &Path, to: &Path) {
    for e in fs::read_dir(from).into_iter().flatten().flatten() {
        let (src, dst) = (e.path(), to.join(e.file_name()));
        match fs::symlink_metadata(&src) {
            Ok(m) if m.is_dir() => {
                if fs::symlink_metadata(&dst).is_err() {
                    let _ = fs::rename(&src, &dst);
                } else {
                    give_back(&src, &dst);
                    let _ = fs::remove_dir(&src);
                }
            }
            Ok(_) if fs::symlink_metadata(&dst).is_err() => {
                let _ = fs::rename(&src, &dst);
            }
            _ => {}
        }
    }
}
