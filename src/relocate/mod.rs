//! `lokust-shell move OLD NEW`: a project renamed on this machine keeps its agents'
//! conversations. The move is a restore: the conversations of OLD are written, unredacted,
//! into a `.lok` in the archive (the backup), the old copies are set aside in their own
//! stores, the directory is renamed when asked, and the backup is restored at NEW by the
//! same plan and placement code as any restore. When the restore fails, everything set
//! aside goes back; when it succeeds, the old copies are deleted, so each conversation
//! has one copy, as Claude Code requires. A journal ([`journal`]) names every change before
//! it is made: a move killed part way is rolled back by the next one.
//!
//! Every agent moves. For one that keeps conversations in files, its own files and
//! folders of each conversation ([`crate::agent::Agent::stored`]) are what is set aside
//! and laid again. OpenCode keeps them as rows of its database: those are repointed in
//! place, in one transaction ([`crate::agent::Agent::repoint`]), and pointed back when the
//! move is undone.

mod journal;
mod lay;

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, anyhow, bail};
use serde::{Deserialize, Serialize};

use journal::Journal;

use crate::agent::{self, Chosen, known::Known};
use crate::archive;
use crate::probe::Probe;
use crate::sanitize::for_terminal as safe;

/// How an old copy set aside by a move starts its name, beside where it was.
pub const ASIDE_PREFIX: &str = ".lokust-moving-";

/// Old copies a move set aside and never finished with (it was killed): each with the
/// name it had. The agents do not see them; the move's backup in the archive holds them.
pub fn leftovers(probe: &Probe) -> Vec<(PathBuf, PathBuf)> {
    let mut dirs = Vec::new();
    if let Some(config) = crate::capture::claude::config_dir(probe) {
        dirs.push(config.join("projects"));
    }
    for a in agent::AGENTS {
        if let Some(home) = a.home(probe) {
            dirs.push(home);
        }
    }
    let mut found = Vec::new();
    // Codex keeps rollouts by date (`sessions/YYYY/MM/DD/`): a few levels down.
    let mut stack: Vec<(PathBuf, usize)> = dirs.into_iter().map(|d| (d, 0)).collect();
    while let Some((dir, depth)) = stack.pop() {
        for entry in fs::read_dir(&dir).into_iter().flatten().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if let Some(rest) = name.strip_prefix(ASIDE_PREFIX)
                && let Some((_, original)) = rest.split_once('-')
            {
                found.push((entry.path(), dir.join(original)));
            } else if depth < 4 && !name.starts_with('.') && entry.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push((entry.path(), depth + 1));
            }
        }
    }
    found.sort();
    found
}

pub struct MoveOptions {
    pub agents: Chosen,
    pub move_dir: bool,
    /// Put the old copies back where they were once the new ones are in place.
    pub keep_old: bool,
    pub dry_run: bool,
}

/// What a move did, or would do.
pub struct Moved {
    pub new: PathBuf,
    /// The unredacted `.lok` of the old conversations (none in a dry run).
    pub backup: Option<PathBuf>,
    pub lines: Vec<String>,
}

/// Why a move was refused: nothing was changed.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Refused(pub String);

fn refuse(message: String) -> anyhow::Error {
    anyhow!(Refused(message))
}

pub fn relocate(probe: &Probe, old: &Path, new: &Path, opts: &MoveOptions) -> anyhow::Result<Moved> {
    // One move at a time on this machine: two started at once into one NEW would both find
    // it free. The second waits, then checks what the first left.
    let _one_at_a_time = if opts.dry_run { None } else { Some(one_at_a_time(probe)?) };
    // A move killed part way is rolled back (or finished) before anything else is read;
    // a dry run says it would be.
    let said = if opts.dry_run { journal::pending(probe) } else { journal::recover(probe) };
    for line in said {
        crate::exit::warn(&line);
    }
    // A move left half done (it could not be undone yet) and this one must not touch the
    // same folders.
    if let Some(what) = journal::unfinished_touching(probe, old, new) {
        return Err(refuse(format!("{what} is not finished; run lokust-shell move again once it is")));
    }
    move_one(probe, old, new, opts)
}

/// The move's locks, held until it ends: the journal's folder and every agent store on
/// this machine, each folder itself (no lock file another run could delete), in one order.
/// Two moves over the same stores take turns, whatever state folder each keeps its
/// journal in; the second says it waits, and Ctrl-C ends the wait (nothing has changed).
fn one_at_a_time(probe: &Probe) -> anyhow::Result<Vec<fs::File>> {
    let folder = journal::folder(probe).context("set HOME or XDG_STATE_HOME: a move keeps a journal")?;
    crate::fsutil::create_private_dir(&folder)
        .with_context(|| format!("could not create {}", folder.display()))?;
    let mut folders = vec![folder];
    folders.extend(crate::capture::claude::config_dir(probe));
    folders.extend(agent::AGENTS.iter().filter_map(|a| a.home(probe)));
    // A store reached by two names is locked once.
    let mut folders: Vec<PathBuf> = folders.into_iter().filter_map(|f| fs::canonicalize(f).ok()).collect();
    folders.sort();
    folders.dedup();
    let mut held = Vec::new();
    let mut said = false;
    for dir in &folders {
        loop {
            match crate::fsutil::try_lock_dir(dir) {
                Ok(file) => {
                    held.push(file);
                    break;
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    if !said {
                        crate::exit::warn("another lokust-shell move is running; waiting for it to finish");
                        said = true;
                    }
                    // Polled, so that Ctrl-C ends the wait.
                    std::thread::sleep(std::time::Duration::from_millis(100));
                    if crate::interrupt::interrupted() {
                        bail!(crate::interrupt::Interrupted);
                    }
                }
                Err(e) => bail!("could not lock {}: {e}", dir.display()),
            }
        }
    }
    Ok(held)
}

fn move_one(probe: &Probe, old: &Path, new: &Path, opts: &MoveOptions) -> anyhow::Result<Moved> {
    let paths = Paths::check(old, new, opts.move_dir)?;
    let held = refusals(probe, &paths, &opts.agents)?;
    let (old_str, new_str) = (&paths.old_str, &paths.new_str);
    let mut lines: Vec<String> = held
        .iter()
        .map(|(k, n)| {
            let n = crate::human::count(*n as u64, "conversation");
            format!("{}: {n} from {} to {}", k.name(), safe(old_str), safe(new_str))
        })
        .collect();
    if opts.move_dir {
        lines.push(format!("directory: {} renamed to {}", safe(old_str), safe(new_str)));
    }
    if opts.keep_old && opts.dry_run {
        lines.push("old copies: left where they were (--keep-old)".to_string());
    }
    if held.is_empty() && !opts.move_dir {
        bail!("no agent has conversations of {}; nothing to move", safe(old_str));
    }
    // Everything of OLD as a bundle would carry it, read before anything is set aside:
    // what it cannot carry refuses a dry run as it refuses the move.
    let prepared = if held.is_empty() { None } else { Some(prepare(probe, &paths, &held)?) };
    if opts.dry_run {
        return Ok(Moved { new: paths.new_real, backup: None, lines });
    }
    let in_place = in_place(probe, old_str, &held)?;
    let backup = match &prepared {
        Some(p) => Some(backup(probe, &paths, p, &held)?),
        None => None,
    };
    let folder = journal::folder(probe).context("set HOME or XDG_STATE_HOME: a move keeps a journal")?;
    let path = journal::new_path(probe, &folder)?;
    let lock = path.with_extension("lock");
    let _turn =
        crate::fsutil::lock_file(&lock).with_context(|| format!("could not lock {}", lock.display()))?;
    let mut journal = Journal {
        old_abs: paths.old_abs.clone(),
        new_real: paths.new_real.clone(),
        old_str: old_str.clone(),
        new_str: new_str.clone(),
        move_dir: opts.move_dir,
        before: Before::read(probe, new_str),
        asides: Vec::new(),
        repointed: Vec::new(),
        laid: Vec::new(),
        laid_done: false,
        committed: false,
        keep_old: false,
        backup: match &backup {
            Some(Backup::Moved(dir)) => Some(dir.clone()),
            _ => None,
        },
        kept_as: Vec::new(),
        path: Some(path),
    };
    let result = journal
        .save()
        .and_then(|()| match (&backup, &prepared) {
            (Some(Backup::Moved(dir)), Some(p)) => {
                archive::begin_moved(dir, p, stored_bytes(probe, old_str, &held))
            }
            _ => Ok(()),
        })
        .and_then(|()| set_aside(probe, old_str, &held, &mut journal));
    let aside = match result {
        Ok(aside) => aside,
        Err(e) => return Err(undo(probe, &journal, &lock, e, "")),
    };
    let claude_aside = aside.iter().find(|a| matches!(a.agent, Known::Claude)).map(|a| a.to.as_path());
    let claude = prepared.as_ref().and_then(|p| p.plan.as_ref()).zip(claude_aside);
    let lok = prepared.as_ref().map(archive::Prepared::document);
    let from = lok.as_ref().map(|lok| lay::From {
        lok,
        claude,
        // Claude Code's restore stages everything before it renames a file: only the other
        // agents' elements need a rehearsal.
        rehearse: held.iter().any(|(k, _)| matches!(k, Known::Other(_))),
    });
    let result = finish(probe, &paths, from.as_ref(), opts, &in_place, &mut journal).and_then(|done| {
        let mut ids = moved_ids(&aside);
        ids.extend(
            in_place.iter().flat_map(|(a, list)| list.iter().map(|id| (Known::Other(*a), id.clone()))),
        );
        verify(probe, &ids, new_str)?;
        verify_whole(probe, &aside, new_str).map(|()| done)
    });
    match result {
        Ok(mut done) => {
            done.extend(commit(&mut journal, &lock, opts.keep_old));
            lines.append(&mut done);
            // Every old copy kept where it was: the backup folder is gone.
            let backup = backup.filter(|b| b.path().exists());
            Ok(Moved { new: paths.new_real, backup: backup.map(|b| b.path().to_path_buf()), lines })
        }
        Err(e) => {
            let also = match &backup {
                Some(Backup::Lok(b)) => format!("; the conversations are also in {}", b.display()),
                _ => String::new(),
            };
            Err(undo(probe, &journal, &lock, e, &also))
        }
    }
}

/// Every conversation is at NEW: from here a killed move is finished by the next, never
/// rolled back (the old copies are going into the backup, or away). Without a journal
/// that says so, there is none at all. What became of the old copies, in lines.
fn commit(journal: &mut Journal, lock: &Path, keep_old: bool) -> Vec<String> {
    journal.committed = true;
    journal.keep_old = keep_old;
    if journal.save().is_err() {
        journal.close();
    }
    let journal::Finished { kept, moved, stranded } = journal.finish_committed();
    let mut lines = Vec::new();
    if stranded > 0 {
        lines.push(format!(
            "{} could not be put into the backup; left aside beside their stores ({ASIDE_PREFIX}…), as \
             lokust-shell doctor lists them",
            crate::human::count(stranded as u64, "old copy")
        ));
    }
    if keep_old {
        lines.push(format!("old copies left where they were (--keep-old): {kept}"));
        if moved > 0 {
            lines.push(format!(
                "  {moved} kept by id rather than by folder (a Codex rollout, a Copilot session) moved instead"
            ));
        }
    }
    journal.close();
    let _ = fs::remove_file(lock);
    lines
}

/// Rolls a failed move back and says so; the journal stays for the next move when a step
/// could not be undone, and the error then says which. `also` ends the message.
fn undo(probe: &Probe, journal: &Journal, lock: &Path, e: anyhow::Error, also: &str) -> anyhow::Error {
    let problems = journal.roll_back(probe);
    if problems.is_empty() {
        journal.close();
        let _ = fs::remove_file(lock);
        return e.context(format!("the move was undone{also}"));
    }
    e.context(format!(
        "the move could not be undone whole ({}); the next lokust-shell move tries again{also}",
        problems.join("; ")
    ))
}

/// OLD and NEW as the stores name them.
struct Paths {
    old_abs: PathBuf,
    old_real: PathBuf,
    new_real: PathBuf,
    old_str: String,
    new_str: String,
}

impl Paths {
    fn check(old: &Path, new: &Path, move_dir: bool) -> anyhow::Result<Paths> {
        let old_abs =
            std::path::absolute(old).with_context(|| format!("bad path {}", safe(&old.to_string_lossy())))?;
        // The stores name realpaths, and a renamed link is not the folder: OLD is read as
        // the folder itself, and must exist (its conversations are read from it).
        let old_real = fs::canonicalize(&old_abs).map_err(|_| {
            refuse(format!(
                "{} does not exist; move reads the project there (when the folder was moved already, move \
                 it back and let --move-dir rename it)",
                safe(&old.to_string_lossy())
            ))
        })?;
        if move_dir && fs::symlink_metadata(&old_abs).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(refuse(format!(
                "{} is a link; give the folder it points to ({})",
                safe(&old.to_string_lossy()),
                safe(&old_real.to_string_lossy())
            )));
        }
        let new_abs =
            std::path::absolute(new).with_context(|| format!("bad path {}", safe(&new.to_string_lossy())))?;
        let new_real = real_target(&new_abs)?;
        let old_str = old_real.to_str().context("OLD is not UTF-8")?.to_string();
        let new_str = new_real.to_str().context("NEW is not UTF-8")?.to_string();
        if new_real.starts_with(&old_real) || old_real.starts_with(&new_real) {
            return Err(refuse(format!(
                "{} and {} hold one another: a project cannot move into itself or its parent",
                safe(&old_str),
                safe(&new_str)
            )));
        }
        if move_dir {
            check_rename(&old_abs, &new_real)?;
        }
        Ok(Paths { old_abs, old_real, new_real, old_str, new_str })
    }
}

/// Everything that refuses a move before anything changes; the agents holding
/// conversations of OLD, and how many, when nothing does.
fn refusals(probe: &Probe, paths: &Paths, agents: &Chosen) -> anyhow::Result<Vec<(Known, usize)>> {
    refuse_running(&paths.old_real)?;
    refuse_taken(probe, &paths.old_str, &paths.new_str, agents)?;
    let held = held(probe, &paths.old_str, agents)?;
    if held.iter().any(|(k, _)| matches!(k, Known::Claude)) {
        refuse_shared_slots(probe, &paths.old_str)?;
    }
    if let Some((Known::Other(codex), _)) = held.iter().find(|(k, _)| k.id() == "codex")
        && let Some(pid) = codex.home(probe).and_then(|h| agent::codex::running_codex(&h))
    {
        return Err(refuse(format!(
            "Codex CLI is running (pid {pid}) and may hold its index open; quit it first"
        )));
    }
    Ok(held)
}

fn archive_options(held: &[(Known, usize)]) -> archive::Options {
    archive::Options {
        redact: false,
        worktree: None,
        always: true,
        // The user's own data staying on this machine, as the stores keep it; a sealed
        // backup the user could not open at once would be no backup.
        seal: false,
        captured_via: "lokust-move",
        agents: Chosen::Only(held.iter().map(|(k, _)| k.id().to_string()).collect()),
        // A backup file is written only across filesystems, for the user alone.
        for_move: true,
    }
}

/// The conversations of OLD as a bundle would carry them, unredacted: what the restore
/// lays at NEW, so anything it would leave out refuses the move.
fn prepare(probe: &Probe, paths: &Paths, held: &[(Known, usize)]) -> anyhow::Result<archive::Prepared> {
    let prepared = archive::prepare(probe, &paths.old_real, &archive_options(held))?;
    let skipped = prepared
        .plan
        .iter()
        .flat_map(|p| p.skipped())
        .map(|s| format!("{} is a link or a special file", safe(s)));
    let warnings: Vec<String> = prepared.warnings.iter().cloned().chain(skipped).collect();
    if !warnings.is_empty() {
        return Err(refuse(format!(
            "not everything of {} can be carried: {}; nothing was moved",
            safe(&paths.old_str),
            warnings.join("; ")
        )));
    }
    Ok(prepared)
}

/// Where the old copies go once the move is done.
enum Backup {
    /// Renamed into this folder of the archive (the archive and every store on one
    /// filesystem): the old copies are their own backup, not a byte copied.
    Moved(PathBuf),
    /// A `.lok` of them written into the archive first; the old copies are deleted.
    Lok(PathBuf),
}

impl Backup {
    fn path(&self) -> &Path {
        match self {
            Backup::Moved(p) | Backup::Lok(p) => p,
        }
    }
}

fn backup(
    probe: &Probe,
    paths: &Paths,
    prepared: &archive::Prepared,
    held: &[(Known, usize)],
) -> anyhow::Result<Backup> {
    crate::fsutil::create_private_dir(&prepared.folder)
        .with_context(|| format!("could not create {}", prepared.folder.display()))?;
    // The user's unredacted conversations go where the archive is, never through a link.
    if fs::symlink_metadata(&prepared.folder).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(refuse(format!(
            "{} is a link; a move's backup is never written through one",
            prepared.folder.display()
        )));
    }
    // Each old copy is renamed from the folder it is in: that folder (a link to another
    // disk, maybe) and the archive must be one filesystem.
    let folders: Vec<PathBuf> = set_aside_paths(probe, &paths.old_str, held)
        .iter()
        .filter_map(|p| p.parent().map(Path::to_path_buf))
        .collect();
    // Only named here: it is made once the journal names it, so a kill leaves none behind.
    if folders.iter().all(|f| same_filesystem(f, &prepared.folder)) {
        return Ok(Backup::Moved(archive::moved_dir(prepared)?));
    }
    match archive::archive(probe, &paths.old_real, &archive_options(held))? {
        archive::Outcome::Written { path, warnings, .. } if warnings.is_empty() => Ok(Backup::Lok(path)),
        archive::Outcome::Written { path, warnings, .. } => {
            let _ = archive::delete_file(&path);
            Err(refuse(format!(
                "not everything of {} can be carried: {}; nothing was moved",
                safe(&paths.old_str),
                warnings.join("; ")
            )))
        }
        archive::Outcome::Unchanged(path) => Ok(Backup::Lok(path)),
    }
}

/// The folder an agent keeps its store in: what an old copy's place in a backup folder
/// is named from.
fn store_root(probe: &Probe, k: Known) -> Option<PathBuf> {
    match k {
        Known::Claude => crate::capture::claude::config_dir(probe),
        Known::Other(a) => a.home(probe),
    }
}

fn same_filesystem(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    matches!((fs::metadata(a), fs::metadata(b)), (Ok(x), Ok(y)) if x.dev() == y.dev())
}

/// The files and folders a move of `old` sets aside.
fn set_aside_paths(probe: &Probe, old: &str, held: &[(Known, usize)]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for (k, _) in held {
        match k {
            Known::Claude => {
                out.extend(crate::capture::claude::config_dir(probe).and_then(|c| claude_slot(&c, old)));
            }
            Known::Other(a) => {
                let stored = stored_of(probe, *a, old).ok().flatten().unwrap_or_default();
                out.extend(stored.into_iter().flat_map(|(_, paths)| paths));
            }
        }
    }
    out
}

/// The bytes of the old copies a move sets aside, for the backup's manifest.
fn stored_bytes(probe: &Probe, old: &str, held: &[(Known, usize)]) -> u64 {
    set_aside_paths(probe, old, held).iter().map(|p| archive::size_of(p)).sum()
}

/// NEW as the stores will name it: a link or `..` resolved, so an existing project cannot
/// be reached under another name.
fn real_target(new: &Path) -> anyhow::Result<PathBuf> {
    if let Ok(real) = fs::canonicalize(new) {
        return Ok(real);
    }
    let name = new.file_name().filter(|n| *n != "." && *n != "..");
    let (Some(parent), Some(name)) = (new.parent(), name) else {
        return Err(refuse(format!("{} does not name a folder", safe(&new.to_string_lossy()))));
    };
    let parent = fs::canonicalize(parent)
        .map_err(|_| refuse(format!("the folder of {} does not exist", safe(&new.to_string_lossy()))))?;
    Ok(parent.join(name))
}

/// What NEW's side of Claude Code's store held before, so a failed move takes back exactly
/// what it added: the slot, the `.claude.json` entry, the prompt-history lines.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Before {
    slot_existed: bool,
    entry_existed: bool,
    history_lines: bool,
    /// Gemini CLI's registry named NEW already (unknown counts as yes: nothing is taken).
    #[serde(default = "yes")]
    gemini_entry: bool,
}

fn yes() -> bool {
    true
}

impl Before {
    fn read(probe: &Probe, new: &str) -> Before {
        let config = crate::capture::claude::config_dir(probe);
        let slot_existed = config.as_ref().and_then(|c| claude_slot(c, new)).is_some();
        let entry_existed = claude_json(probe).is_some_and(|(_, v)| v["projects"].get(new).is_some());
        let history_lines = config
            .is_some_and(|c| history_of(&c.join("history.jsonl"), new).is_some_and(|(_, mine)| mine > 0));
        let gemini_entry = agent::Agent::home(&agent::gemini::Gemini, probe)
            .is_none_or(|gh| agent::gemini::find_project(&gh, new).is_some());
        Before { slot_existed, entry_existed, history_lines, gemini_entry }
    }

    /// Takes back what the move added at NEW. `laid` names the transcripts it laid: when
    /// NEW's folder holds any other (the user worked at NEW after a move was killed), only
    /// those are taken, and the project's settings entry and prompt lines stay.
    /// Gemini CLI's registry entry for NEW and its empty folder, once the chats laid
    /// there are taken away.
    fn undo_gemini(&self, probe: &Probe, new: &str) {
        if !self.gemini_entry
            && let Some(gh) = agent::Agent::home(&agent::gemini::Gemini, probe)
        {
            let _ = agent::gemini::forget(&gh, new);
        }
    }

    fn undo(&self, probe: &Probe, new: &str, laid: &[&str]) {
        let Some(config) = crate::capture::claude::config_dir(probe) else { return };
        let slot = claude_slot(&config, new);
        let theirs = slot.as_ref().is_some_and(|slot| {
            fs::read_dir(slot).into_iter().flatten().flatten().any(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                name.strip_suffix(".jsonl").is_some_and(|id| !laid.contains(&id))
            })
        });
        if theirs {
            for id in laid {
                if let Some(slot) = &slot {
                    let _ = fs::remove_file(slot.join(format!("{id}.jsonl")));
                    let _ = fs::remove_dir_all(slot.join(id));
                }
            }
            return;
        }
        if !self.slot_existed
            && let Some(slot) = slot
        {
            let _ = fs::remove_dir_all(slot);
        }
        if !self.entry_existed
            && let Some((path, mut v)) = claude_json(probe)
            && let Some(projects) = v["projects"].as_object_mut()
            && projects.remove(new).is_some()
            && let Ok(text) = serde_json::to_vec_pretty(&v)
        {
            let _ = crate::fsutil::write_private_atomic(&path, |f| std::io::Write::write_all(f, &text));
        }
        let history = config.join("history.jsonl");
        if !self.history_lines
            && let Some((kept, mine)) = history_of(&history, new)
            && mine > 0
        {
            let _ = crate::fsutil::write_private_atomic(&history, |f| {
                std::io::Write::write_all(f, kept.as_bytes())
            });
        }
    }
}

fn claude_json(probe: &Probe) -> Option<(PathBuf, serde_json::Value)> {
    let config = crate::capture::claude::config_dir(probe)?;
    let path = crate::bundle::global_config(&config, probe.home().as_deref());
    // Written through a link (dotfiles), never over it.
    let path = fs::canonicalize(&path).unwrap_or(path);
    let v = serde_json::from_slice(&fs::read(&path).ok()?).ok()?;
    Some((path, v))
}

/// The prompt history without `project`'s lines, and how many there were.
fn history_of(path: &Path, project: &str) -> Option<(String, usize)> {
    let text = fs::read_to_string(path).ok()?;
    let mut kept = String::with_capacity(text.len());
    let mut mine = 0;
    for line in text.split_inclusive('\n') {
        let is_mine = serde_json::from_str::<serde_json::Value>(line)
            .is_ok_and(|v| v.get("project").and_then(serde_json::Value::as_str) == Some(project));
        if is_mine {
            mine += 1;
        } else {
            kept.push_str(line);
        }
    }
    Some((kept, mine))
}

/// The conversations set aside, by agent: each transcript of a Claude Code slot, each
/// other agent's conversation once.
fn moved_ids(aside: &[Aside]) -> Vec<(Known, String)> {
    moved_ids_of(aside, |a| &a.to)
}

/// The same, reading a Claude Code slot where `at` says it is (before or after the rename).
fn moved_ids_of(aside: &[Aside], at: impl Fn(&Aside) -> &PathBuf) -> Vec<(Known, String)> {
    let mut ids: Vec<(Known, String)> = Vec::new();
    for a in aside {
        let found: Vec<String> = match &a.id {
            Some(id) => vec![id.clone()],
            None => fs::read_dir(at(a))
                .into_iter()
                .flatten()
                .flatten()
                .filter_map(|e| {
                    e.file_name().to_str().and_then(|n| n.strip_suffix(".jsonl")).map(str::to_string)
                })
                .filter(|stem| a.agent.is_id(stem))
                .collect(),
        };
        for id in found {
            if !ids.iter().any(|(k, i)| k.id() == a.agent.id() && *i == id) {
                ids.push((a.agent, id));
            }
        }
    }
    ids
}

/// Every conversation that moved is found by its agent at NEW: an old copy is deleted only
/// once its new one is there (a copy the restore kept in its place elsewhere is not).
fn verify(probe: &Probe, ids: &[(Known, String)], new: &str) -> anyhow::Result<()> {
    for (k, id) in ids {
        if !is_at(probe, *k, id, new)? {
            let elsewhere = k.find(probe, id)?.map(|l| {
                format!(
                    " (the store keeps a copy of that id at {}, which a restore never replaces)",
                    l.path.display()
                )
            });
            bail!(
                "{} conversation {id} was not laid at {}{}",
                k.name(),
                safe(new),
                elsewhere.unwrap_or_default()
            );
        }
    }
    Ok(())
}

/// Each conversation set aside file by file has as many files at NEW: an old file the
/// backup did not carry (a Droid session's settings that are not JSON, a link, too large)
/// would be deleted with the old copies and found nowhere.
fn verify_whole(probe: &Probe, aside: &[Aside], new: &str) -> anyhow::Result<()> {
    let mut files: std::collections::BTreeMap<(&str, &str), Vec<&Aside>> = Default::default();
    for a in aside {
        if let (Known::Other(_), Some(id)) = (a.agent, &a.id)
            && !a.to.is_dir()
        {
            files.entry((a.agent.id(), id.as_str())).or_default().push(a);
        }
    }
    for ((_, id), old) in files {
        let Known::Other(agent) = old[0].agent else { continue };
        let Some(home) = agent.home(probe) else { continue };
        let laid = agent.stored(&home, new, id)?.unwrap_or_default();
        let laid_files: Vec<&PathBuf> = laid.iter().filter(|p| !p.is_dir()).collect();
        if laid_files.len() >= old.len() {
            continue;
        }
        let name = |p: &Path| p.file_name().map(|n| n.to_os_string());
        let missing =
            old.iter().find(|a| !laid_files.iter().any(|l| name(l) == name(&a.from))).unwrap_or(&old[0]);
        bail!(
            "{} conversation {id}: {} could not be carried (not what the agent writes there, a link, or \
             too large), and a move would delete it",
            agent.name(),
            safe(&missing.from.to_string_lossy())
        );
    }
    Ok(())
}

/// Whether conversation `id` is in `k`'s store for the project at `dir`: in its Claude
/// Code folder, among the agent's own files of `dir`, or in its database with `dir` as
/// its folder. A copy of the same id in another project does not count.
fn is_at(probe: &Probe, k: Known, id: &str, dir: &str) -> anyhow::Result<bool> {
    match k {
        Known::Claude => Ok(crate::capture::claude::config_dir(probe)
            .and_then(|c| claude_slot(&c, dir))
            .is_some_and(|slot| slot.join(format!("{id}.jsonl")).is_file())),
        Known::Other(a) => {
            let Some(home) = a.home(probe) else { return Ok(false) };
            match a.stored(&home, dir, id)? {
                Some(paths) => Ok(!paths.is_empty()),
                None => {
                    Ok(a.find(&home, id)?.and_then(|l| l.dir).is_some_and(|d| agent::disk::is_under(&d, dir)))
                }
            }
        }
    }
}

/// A Claude Code slot is named by the path with every other character folded to `-`: two
/// projects (`a b`, `a-b`) can share one, and the projects below OLD have slots of their
/// own. Either would be left behind or carried off wrongly: refused.
fn refuse_shared_slots(probe: &Probe, old: &str) -> anyhow::Result<()> {
    let Some(config) = crate::capture::claude::config_dir(probe) else { return Ok(()) };
    let below = format!("{old}/");
    let mut others = Vec::new();
    for slot in fs::read_dir(config.join("projects")).into_iter().flatten().flatten() {
        for f in fs::read_dir(slot.path()).into_iter().flatten().flatten() {
            // A regular file only, not followed: a FIFO named like one would block the read.
            if !f.file_name().to_string_lossy().ends_with(".jsonl")
                || !f.file_type().is_ok_and(|t| t.is_file())
            {
                continue;
            }
            let Some(cwd) = agent::claude::recorded_cwd(&f.path()) else { continue };
            let same_slot = slot.file_name().to_string_lossy() == crate::capture::claude::slot_name(old);
            if (same_slot && cwd != old && !cwd.starts_with(&below))
                || (!same_slot && cwd.starts_with(&below))
            {
                others.push(cwd);
            }
        }
    }
    others.sort();
    others.dedup();
    if others.is_empty() {
        return Ok(());
    }
    Err(refuse(format!(
        "Claude Code keeps conversations of {} with those of {} (a slot shared by name, or the \
         project's own subfolders): move does not separate them; nothing was moved",
        others.iter().map(|c| safe(c).into_owned()).collect::<Vec<_>>().join(", "),
        safe(old)
    )))
}

/// The directory rename, then the backup laid at NEW.
fn finish(
    probe: &Probe,
    paths: &Paths,
    from: Option<&lay::From<'_>>,
    opts: &MoveOptions,
    in_place: &[(&'static dyn agent::Agent, Vec<String>)],
    journal: &mut Journal,
) -> anyhow::Result<Vec<String>> {
    let (old, new) = (paths.old_abs.as_path(), paths.new_real.as_path());
    if opts.move_dir {
        fs::rename(old, new).with_context(|| {
            format!("could not rename {} to {}", safe(&old.to_string_lossy()), safe(&new.to_string_lossy()))
        })?;
    }
    let Some(from) = from else { return Ok(Vec::new()) };
    // Planned whole and applied nowhere first, with the old copies already out of sight
    // (a plan that sees them keeps them): what the restore would refuse is refused before
    // anything is laid, and the move is undone whole.
    if from.rehearse {
        lay::lay(probe, paths, from, in_place, None).map_err(|e| {
            refuse(format!("the conversations cannot be laid at {}: {e:#}", safe(&paths.new_str)))
        })?;
    }
    let done = lay::lay(probe, paths, from, in_place, Some(journal))?;
    // From here a file at NEW newer than the journal is the user's, not the restore's.
    journal.laid_done = true;
    journal.save()?;
    Ok(done)
}

/// `--move-dir`: OLD a directory, NEW free, both on one filesystem (a rename, never a copy).
fn check_rename(old: &Path, new: &Path) -> anyhow::Result<()> {
    use std::os::unix::fs::MetadataExt;
    let old_meta = fs::metadata(old).map_err(|_| {
        refuse(format!(
            "{} does not exist: nothing to rename (leave out --move-dir when it was moved already)",
            safe(&old.to_string_lossy())
        ))
    })?;
    if !old_meta.is_dir() {
        return Err(refuse(format!("{} is not a directory", safe(&old.to_string_lossy()))));
    }
    if fs::symlink_metadata(new).is_ok() {
        return Err(refuse(format!(
            "{} exists already; --move-dir renames into a free name",
            safe(&new.to_string_lossy())
        )));
    }
    let parent = new
        .parent()
        .filter(|p| p.is_dir())
        .ok_or_else(|| refuse(format!("the folder of {} does not exist", safe(&new.to_string_lossy()))))?;
    if fs::metadata(parent)?.dev() != old_meta.dev() {
        return Err(refuse(format!(
            "{} and {} are on different filesystems: copy the folder (cp -a {} {}), run move without \
             --move-dir, then delete the old folder",
            safe(&old.to_string_lossy()),
            safe(&new.to_string_lossy()),
            crate::shell::posix_quote(&old.to_string_lossy(), crate::shell::Quote::WhenNeeded),
            crate::shell::posix_quote(&new.to_string_lossy(), crate::shell::Quote::WhenNeeded)
        )));
    }
    Ok(())
}

/// An agent working in OLD would write to the old copies while they move.
fn refuse_running(old: &Path) -> anyhow::Result<()> {
    let found: Vec<String> = working_in(old)
        .into_iter()
        .filter_map(|pid| {
            let p = crate::tmux::process::read(pid)?;
            let agent = crate::tmux::running::program_of(&p)?;
            Some(format!("{} (pid {pid})", agent.name()))
        })
        .collect();
    if found.is_empty() {
        return Ok(());
    }
    Err(refuse(format!(
        "an agent is working in {}: {}; quit it first",
        safe(&old.to_string_lossy()),
        found.join(", ")
    )))
}

/// The processes (but this one) whose working directory is `dir` or below it.
pub(crate) fn working_in(dir: &Path) -> Vec<u32> {
    let me = std::process::id();
    fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()))
        .filter(|pid| *pid != me)
        .filter(|pid| crate::tmux::process::cwd(*pid).is_some_and(|cwd| cwd.starts_with(dir)))
        .collect()
}

/// NEW must not hold another project's conversations: two projects would share them.
fn refuse_taken(probe: &Probe, old: &str, new: &str, chosen: &Chosen) -> anyhow::Result<()> {
    // A slot of NEW's own, even without conversations (memory, settings), would mix with
    // what moves in, and a failed move could not take back only its part.
    if chosen.has(agent::claude::NAME)
        && let Some(slot) = crate::capture::claude::config_dir(probe).and_then(|c| claude_slot(&c, new))
    {
        if crate::capture::claude::slot_name(old) == crate::capture::claude::slot_name(new) {
            return Err(refuse(format!(
                "{} and {} fold to one Claude Code folder name ({}): the move would not move them; \
                 pick a NEW whose name differs in a letter or digit",
                safe(old),
                safe(new),
                slot.display()
            )));
        }
        return Err(refuse(format!(
            "Claude Code has a folder for {} already ({}); move into a path of no project",
            safe(new),
            slot.display()
        )));
    }
    for &a in agent::AGENTS.iter().filter(|a| chosen.has(a.id())) {
        if let Some(home) = a.home(probe)
            && a.names_folder(&home, new)?
        {
            return Err(refuse(format!(
                "{} records {} already (a session, archived ones too, or a project); move into a path \
                 of no project",
                a.name(),
                safe(new)
            )));
        }
    }
    let held = held(probe, new, chosen)?;
    if held.is_empty() {
        return Ok(());
    }
    let names: Vec<String> = held
        .iter()
        .map(|(k, n)| format!("{} ({})", k.name(), crate::human::count(*n as u64, "conversation")))
        .collect();
    Err(refuse(format!("{} holds conversations of its own already: {}", safe(new), names.join(", "))))
}

/// Each chosen agent with conversations of exactly `dir` (and the projects below it, for
/// those that record the directory in each conversation), and how many.
fn held(probe: &Probe, dir: &str, chosen: &Chosen) -> anyhow::Result<Vec<(Known, usize)>> {
    let mut out = Vec::new();
    if chosen.has(agent::claude::NAME)
        && let Some(config) = crate::capture::claude::config_dir(probe)
        && let Some(slot) = claude_slot(&config, dir)
    {
        let n = fs::read_dir(&slot)
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().ends_with(".jsonl"))
            .count();
        if n > 0 {
            out.push((Known::Claude, n));
        }
    }
    for &a in agent::AGENTS.iter().filter(|a| chosen.has(a.id())) {
        let Some(home) = a.home(probe) else { continue };
        if let Some(files) = a.collect(&home, dir)? {
            let n = a.sessions(&files).len();
            if n > 0 {
                out.push((Known::Other(a), n));
            }
        }
    }
    Ok(out)
}

fn claude_slot(config: &Path, dir: &str) -> Option<PathBuf> {
    let slot = crate::capture::claude::slot_name(dir);
    let projects = config.join("projects");
    crate::capture::claude::find_slot_dir(&projects, &slot)
        .or_else(|| Some(projects.join(slot)).filter(|p| p.is_dir()))
}

/// The agents holding conversations of `old` as database rows, repointed in place, with
/// the ids of those conversations.
fn in_place(
    probe: &Probe,
    old: &str,
    held: &[(Known, usize)],
) -> anyhow::Result<Vec<(&'static dyn agent::Agent, Vec<String>)>> {
    let mut out = Vec::new();
    for (k, _) in held {
        if let Known::Other(a) = k
            && stored_of(probe, *a, old)?.is_none()
            && let Some(home) = a.home(probe)
        {
            let files = a.collect(&home, old)?.unwrap_or_default();
            out.push((*a, a.sessions(&files).into_iter().map(|s| s.id).collect()));
        }
    }
    Ok(out)
}

/// A conversation's id and the files and folders that hold it.
type Stored = (String, Vec<PathBuf>);

/// Each conversation of `old` an agent keeps, with the files and folders that hold it;
/// `None` when the agent keeps them where nothing can be set aside.
fn stored_of(
    probe: &Probe,
    agent: &'static dyn agent::Agent,
    old: &str,
) -> anyhow::Result<Option<Vec<Stored>>> {
    let Some(home) = agent.home(probe) else { return Ok(Some(Vec::new())) };
    let files = agent.collect(&home, old)?.unwrap_or_default();
    let mut out = Vec::new();
    for s in agent.sessions(&files) {
        let Some(paths) = agent.stored(&home, old, &s.id)? else { return Ok(None) };
        out.push((s.id, paths));
    }
    Ok(Some(out))
}

/// Renames the old copies out of their agent's sight, beside themselves (one filesystem,
/// nothing copied): Claude Code's slot, each other agent's files and folders of each
/// conversation. Every rename is in the journal before the first is made.
fn set_aside(
    probe: &Probe,
    old: &str,
    held: &[(Known, usize)],
    journal: &mut Journal,
) -> anyhow::Result<Vec<Aside>> {
    // The process id too: two moves in one second never share a name aside.
    let stamp =
        format!("{}.{}", crate::human::utc(probe.now_ms()).replace(['-', ':'], ""), std::process::id());
    let mut planned: Vec<Aside> = Vec::new();
    let mut plan = |agent: Known, id: Option<&str>, from: PathBuf| {
        let name = from.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let to = from.with_file_name(format!("{ASIDE_PREFIX}{stamp}-{name}"));
        planned.push(Aside { agent, id: id.map(str::to_string), from, to });
    };
    for (k, _) in held {
        match k {
            Known::Claude => {
                let config = crate::capture::claude::config_dir(probe).context("no Claude Code folder")?;
                if let Some(slot) = claude_slot(&config, old) {
                    plan(*k, None, slot);
                }
            }
            Known::Other(a) => {
                // Rows of a database are repointed in place instead.
                let Some(stored) = stored_of(probe, *a, old)? else { continue };
                for (id, paths) in stored {
                    for path in paths {
                        plan(*k, Some(&id), path);
                    }
                }
            }
        }
    }
    journal.asides = planned.iter().map(|a| (a.from.clone(), a.to.clone())).collect();
    if let Some(dir) = &journal.backup {
        journal.kept_as = planned
            .iter()
            .map(|a| {
                let root = store_root(probe, a.agent).unwrap_or_default();
                journal::Kept {
                    path: archive::moved_name(dir, a.agent.id(), &root, &a.from),
                    agent: a.agent.id().to_string(),
                    id: a.id.clone(),
                }
            })
            .collect();
    }
    journal.laid =
        moved_ids_of(&planned, |a| &a.from).into_iter().map(|(k, id)| (k.id().to_string(), id)).collect();
    journal.save()?;
    for a in &planned {
        fs::rename(&a.from, &a.to).with_context(|| format!("could not set {} aside", a.from.display()))?;
    }
    Ok(planned)
}

/// An old copy set aside, beside where it was.
struct Aside {
    agent: Known,
    /// The conversation it holds; `None` for Claude Code's slot, which holds many.
    id: Option<String>,
    from: PathBuf,
    to: PathBuf,
}
