//! One layer writes what a restore lays in an agent's store. An adapter only describes:
//! it reads the receiver and returns a [`Plan`] of typed [`Placement`]s (what is written,
//! below which root, from which bytes, of which kind, and what the receiver already has
//! there). This module alone writes them, the same way for every agent:
//!
//! - confined below the placement's root: every folder on the way is opened with
//!   `O_NOFOLLOW`, so a link planted anywhere below the root stops the write;
//! - new files made whole under a temp name and renamed in with no-replace, so a file or
//!   folder that appeared meanwhile is kept, never clobbered;
//! - the receiver's own copy set aside as a named backup only when the plan says
//!   `Replace` (`--force`);
//! - Ctrl-C checked between placements: what was done is reported, the rest untouched.
//!
//! `--dry-run` prints [`Plan::describe`] of the very plan [`apply`] runs, so the two
//! cannot disagree; [`Plan::writes`] lists every path it may create, for tests that
//! compare a plan with what a restore changed.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use anyhow::Context;

use crate::sanitize::for_terminal;

mod at;
mod preflight;

pub use at::{Placed, check_folder, move_aside, open_below, rename_in};
pub use preflight::{check, settle};

/// What a restore does with one placement, given what the receiver holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Not on the receiver: written.
    Write,
    /// The receiver has it with these bytes already.
    Same,
    /// The receiver has it with other content (at these paths): kept as it is.
    Keep(Vec<PathBuf>),
    /// The same, with `--force`: those are set aside as backups, then it is written.
    Replace(Vec<PathBuf>),
}

/// What a placement is to the agent that reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A conversation's own file or folder: what the counts count.
    Conversation,
    /// A file an agent keeps beside a conversation (its harmless settings).
    Companion,
    /// A row of the agent's index, pointed at a placed conversation.
    Index,
    /// The agent's registry of project folders.
    Registry,
    /// A file naming the project a folder belongs to.
    Marker,
    /// A file of the checkout itself (the git work's untracked files): laid with the
    /// modes a checkout has, its folders as the umask makes them.
    Checkout,
}

impl Kind {
    /// The mode of a folder made on the way to a placement of this kind (before umask).
    fn folder_mode(self) -> u32 {
        if self == Kind::Checkout { 0o777 } else { 0o700 }
    }
}

/// A change to a file the receiver keeps that must keep the rest of it (a database row, a
/// registry entry): the adapter knows the format, this layer decides when it runs and
/// that nothing on the way to it is a link.
pub trait Edit: Send + Sync {
    /// What it changes, one line, for the plan and the report.
    fn describe(&self) -> String;
    /// Makes the change at `path`.
    fn apply(&self, path: &Path) -> anyhow::Result<()>;
}

/// One file of a folder placement, or a whole-file placement's bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Below the folder (`a/b.json`); a whole-file placement has an empty one.
    pub rel: String,
    pub data: Vec<u8>,
    /// The modification time to give it (agents' pickers sort by it).
    pub mtime: Option<SystemTime>,
}

/// What a placement writes.
pub enum Content {
    /// One new file.
    File(Entry),
    /// A new folder, made whole beside its place and renamed in: the agent sees all of it
    /// or none.
    Folder(Vec<Entry>),
    /// A change to a file that is there.
    Edit(Box<dyn Edit>),
    /// A new file copied from lokust's own staging, with this mode (a checkout's file,
    /// `0644` or `0755`).
    Copy { from: PathBuf, mode: u32 },
    /// A new symbolic link to this target (a checkout's link, checked to stay inside it).
    Link(PathBuf),
    /// A file or folder lokust made whole in its own staging dir (a restore that streams
    /// more than memory should hold), moved in by rename; a file is copied when the store
    /// is on another disk.
    Staged(PathBuf),
}

/// One thing a restore writes.
pub struct Placement {
    pub kind: Kind,
    /// The conversation it belongs to; empty for the project's own entries. When a
    /// conversation's own placement ends up kept, its later placements are skipped.
    pub session: String,
    /// What it is confined to: the agent's store on the receiver.
    pub root: PathBuf,
    /// Where below `root`: plain names only.
    pub rel: PathBuf,
    pub content: Content,
    pub step: Step,
}

impl Placement {
    /// A whole new file.
    pub fn file(kind: Kind, session: &str, root: &Path, rel: impl Into<PathBuf>, data: Vec<u8>) -> Placement {
        Placement {
            kind,
            session: session.to_string(),
            root: root.to_path_buf(),
            rel: rel.into(),
            content: Content::File(Entry { rel: String::new(), data, mtime: None }),
            step: Step::Write,
        }
    }

    /// An edit of a file under `root`.
    pub fn edit(
        kind: Kind,
        session: &str,
        root: &Path,
        rel: impl Into<PathBuf>,
        edit: Box<dyn Edit>,
    ) -> Placement {
        Placement {
            kind,
            session: session.to_string(),
            root: root.to_path_buf(),
            rel: rel.into(),
            content: Content::Edit(edit),
            step: Step::Write,
        }
    }

    pub fn with_step(mut self, step: Step) -> Placement {
        self.step = step;
        self
    }

    pub fn with_mtime(mut self, mtime: Option<SystemTime>) -> Placement {
        if let Content::File(e) = &mut self.content {
            e.mtime = mtime;
        }
        self
    }

    /// Where it lands.
    pub fn path(&self) -> PathBuf {
        self.root.join(&self.rel)
    }

    /// The bytes it writes at its path, for a whole file.
    pub fn data(&self) -> Option<&[u8]> {
        match &self.content {
            Content::File(e) => Some(&e.data),
            _ => None,
        }
    }
}

/// Everything one agent's restore writes, in order, with what the report says of it.
pub struct Plan {
    /// The agent's name in messages (`Codex CLI`).
    pub agent: &'static str,
    /// What its conversations are called (`conversation`, `session`).
    pub noun: &'static str,
    /// Where they go, as the header says it.
    pub store: String,
    pub items: Vec<Placement>,
    /// More lines for the plan and the report: grants dropped, dates moved, next steps.
    pub notes: Vec<String>,
    /// The conversation a resume opens: the newest that is not kept.
    pub newest: Option<String>,
}

impl Plan {
    pub fn new(agent: &'static str, noun: &'static str, store: impl Into<String>) -> Plan {
        Plan { agent, noun, store: store.into(), items: Vec::new(), notes: Vec::new(), newest: None }
    }

    /// The conversations it places, each once, in order.
    pub fn sessions(&self) -> Vec<&str> {
        let mut seen = BTreeSet::new();
        self.items
            .iter()
            .filter(|p| p.kind == Kind::Conversation && seen.insert(p.session.as_str()))
            .map(|p| p.session.as_str())
            .collect()
    }

    /// What a restore would do, one line per placement, for `--dry-run`.
    pub fn describe(&self) -> Vec<String> {
        let mut lines = vec![format!(
            "{}: {} would go to {}",
            self.agent,
            crate::human::count(self.sessions().len() as u64, self.noun),
            safe(&self.store)
        )];
        for p in &self.items {
            let path = safe(&p.path().to_string_lossy()).into_owned();
            let who = if p.session.is_empty() { String::new() } else { format!("{} ", safe(&p.session)) };
            lines.push(match (&p.step, &p.content) {
                (Step::Same, _) => format!("  {who}is already there: {path}"),
                (Step::Keep(_), _) => {
                    format!("  {who}differs from the receiver's own: kept (--force replaces it): {path}")
                }
                (Step::Write, Content::Edit(e)) => format!("  {path}: {}", safe(&e.describe())),
                (Step::Write, Content::Link(to)) => {
                    format!("  {who}→ {path} (a link to {})", safe(&to.to_string_lossy()))
                }
                (Step::Write, _) => format!("  {who}→ {path}"),
                (Step::Replace(theirs), _) => format!(
                    "  {who}→ {path}; the receiver's {} would be set aside as a backup",
                    theirs
                        .iter()
                        .map(|t| safe(&t.to_string_lossy()).into_owned())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            });
        }
        lines.extend(self.notes.iter().cloned());
        lines
    }

    /// Every path a restore of this plan may create or change, files and folders: each
    /// placement that writes, and each backup it would make beside the receiver's copy.
    pub fn writes(&self) -> Vec<PathBuf> {
        let mut out = Vec::new();
        for p in &self.items {
            if let Step::Write | Step::Replace(_) = p.step {
                out.push(p.path());
            }
            if let Step::Replace(theirs) = &p.step {
                out.extend(theirs.iter().cloned());
            }
        }
        out
    }
}

/// What [`apply`] did.
#[derive(Debug, Default)]
pub struct Applied {
    /// Conversations written.
    pub written: Vec<String>,
    /// Conversations that were there already, byte for byte.
    pub same: usize,
    /// Conversations the receiver has with other content: kept.
    pub kept: Vec<String>,
    pub backups: Vec<PathBuf>,
    /// Edits made, as their lines.
    pub edits: Vec<String>,
    /// Files beside a conversation the receiver already had with other content: left.
    pub left: Vec<PathBuf>,
    /// Ctrl-C (or TERM, HUP) came: the placements after it were not touched.
    pub interrupted: bool,
    /// Placements written, of every kind.
    pub files: usize,
    /// What became of each placement reached, in the plan's order; `None` for one skipped
    /// because its conversation was kept.
    pub placed: Vec<Option<Placed>>,
}

impl Applied {
    /// The report's lines for `plan`.
    pub fn report(&self, plan: &Plan) -> Vec<String> {
        let mut lines = vec![format!(
            "{}: {} in {} ({} written, {} already there, {} kept as they were)",
            plan.agent,
            crate::human::count(plan.sessions().len() as u64, plan.noun),
            safe(&plan.store),
            self.written.len(),
            self.same,
            self.kept.len()
        )];
        for id in &self.kept {
            lines.push(format!(
                "  kept the receiver's own {}, which differs (--force replaces it, keeping a backup)",
                safe(id)
            ));
        }
        for b in &self.backups {
            lines.push(format!("  backup: {}", safe(&b.to_string_lossy())));
        }
        lines.extend(self.edits.iter().map(|e| format!("  {e}")));
        for path in &self.left {
            lines.push(format!("  left the receiver's {} as it is", safe(&path.to_string_lossy())));
        }
        lines.extend(plan.notes.iter().cloned());
        if self.interrupted {
            lines.push("  interrupted: what follows in the file was not placed".into());
        }
        lines
    }
}

/// Why a plan was not written whole.
#[derive(Debug, thiserror::Error)]
pub enum Failure {
    /// The plan failed its [`check`]: nothing of it was written.
    #[error("{0:#}")]
    Refused(anyhow::Error),
    /// Writing stopped part way at the placement `at` of the plan: what was written
    /// before it stays, and the receiver's copies set aside so far are `backups`.
    #[error("{error:#}")]
    Stopped { error: anyhow::Error, at: usize, backups: Vec<PathBuf> },
}

/// Writes a plan. Nothing is written unless the whole plan passes [`check`]; a signal
/// stops it between two placements.
pub fn apply(plan: &Plan, now: SystemTime) -> Result<Applied, Failure> {
    check(plan).map_err(Failure::Refused)?;
    let mut done = Applied::default();
    let mut kept: BTreeSet<&str> = BTreeSet::new();
    let mut swept: BTreeSet<PathBuf> = BTreeSet::new();
    for p in &plan.items {
        if crate::interrupt::interrupted() {
            done.interrupted = true;
            break;
        }
        // What a killed run was writing here (its temp files) goes before this one writes.
        if matches!(p.step, Step::Write | Step::Replace(_))
            && let Some(folder) = p.path().parent()
            && swept.insert(folder.to_path_buf())
        {
            crate::fsutil::sweep_dead_temps(folder);
        }
        if p.kind != Kind::Conversation && kept.contains(p.session.as_str()) {
            done.placed.push(None);
            continue;
        }
        let placed = at::place(p, now, &mut done.backups)
            .with_context(|| {
                let mut said =
                    format!("{} written before this", crate::human::count(done.files as u64, "file"));
                if !done.backups.is_empty() {
                    let named: Vec<String> =
                        done.backups.iter().map(|b| safe(&b.to_string_lossy()).into_owned()).collect();
                    said.push_str(&format!(
                        "; the receiver's copies replaced are kept as {}",
                        named.join(", ")
                    ));
                }
                said
            })
            .map_err(|error| Failure::Stopped {
                error,
                at: done.placed.len(),
                backups: done.backups.clone(),
            })?;
        done.placed.push(Some(placed));
        if matches!(placed, at::Placed::Written) {
            done.files += 1;
        }
        match placed {
            at::Placed::Written if p.kind == Kind::Conversation => {
                if !done.written.contains(&p.session) {
                    done.written.push(p.session.clone());
                }
            }
            at::Placed::Written => {
                if let Content::Edit(e) = &p.content {
                    done.edits.push(format!(
                        "{}: {}",
                        safe(&p.path().to_string_lossy()),
                        safe(&e.describe())
                    ));
                }
            }
            at::Placed::Same if p.kind == Kind::Conversation => done.same += 1,
            at::Placed::Same => {}
            at::Placed::Kept if p.kind == Kind::Conversation => {
                kept.insert(&p.session);
                if !done.kept.contains(&p.session) {
                    done.kept.push(p.session.clone());
                }
            }
            at::Placed::Kept => done.left.push(p.path()),
        }
    }
    Ok(done)
}

fn safe(s: &str) -> std::borrow::Cow<'_, str> {
    for_terminal(s)
}

#[cfg(test)]
mod tests;
