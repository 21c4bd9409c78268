//! `--bundle`: the Claude Code project slot of this directory, as `tar.gz+base64` inside
//! the `.lok`, streamed end to end (files → redaction → tar → deflate → base64 → JSON) so
//! memory stays flat whatever the project's size.
//!
//! The tar is rooted at the slot name, as the format spec says, so a reader that knows
//! only the spec restores the transcripts. What a move needs from outside the slot
//! (file history, todos, tasks, the project's prompt history and its `.claude.json`
//! entry) travels in `<slot>/.lokust/`, which such a reader extracts harmlessly and
//! `lokust-shell-restore` puts where Claude Code expects it.
//!
//! Deflate is most of the cost, so blocks of the tar stream are compressed on two threads,
//! each into a gzip member of its own, while redactor threads read and redact. See:
//! docs/performance.md.

use std::borrow::Cow;
use std::collections::VecDeque;
use std::fs::{self, File};
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Mutex};

use anyhow::Context;
use serde_json::{Value, json};

pub mod codec;
pub mod elements;
mod gz;
pub use gz::Level;
mod listing;
pub mod scan;
mod source;
pub mod unpack;
mod write;

pub use gz::ParallelGz;
pub use write::{StreamedElement, write_lok};

pub use listing::{BundleListing, SessionInfo, list_bundle, top_level_transcript, transcripts};

use crate::capture::claude;
use crate::lok::ShellLok;
use crate::redact::{self, Echoes, Report};

/// `bundle.kind` of a Claude Code project.
pub const KIND: &str = "claude-code-project";
/// `bundle.format`.
pub const FORMAT: &str = "tar.gz+base64";
/// The folder inside the slot tree that carries what lives outside the slot.
pub const EXTRAS: &str = ".lokust";
/// Uncompressed bytes per gzip member. Members of 1 MiB came out the size of gzip -6's
/// one stream on 100 MB of real transcripts, 0.86% larger on the generated project; of
/// 512 KiB, 0.6% and 1.6% larger, over the 1% the bundle may give away, for 7 MB less
/// peak memory (docs/performance.md).
const BLOCK: usize = 1024 * 1024;
/// How much is read and scanned at a time.
const CHUNK: usize = 256 * 1024;

/// How to bundle.
pub struct BundleOptions {
    /// Redact the transcripts and every other file (the default).
    pub redact: bool,
    /// Compression threads; 0 means one per core, at most 4.
    pub threads: usize,
    /// How hard the transcripts are compressed.
    pub level: Level,
    /// Show a progress bar on stderr (the caller decides: a terminal, a large project).
    pub progress: bool,
    /// Further payloads, written as the `bundles` array after `bundle` ([`elements`]).
    pub elements: Vec<Value>,
    /// Further payloads too large to hold, streamed after `elements`.
    pub streamed: Vec<Box<dyn write::StreamedElement>>,
}

impl Default for BundleOptions {
    fn default() -> Self {
        BundleOptions {
            redact: true,
            threads: 0,
            level: Level::Kept,
            progress: false,
            elements: Vec::new(),
            streamed: Vec::new(),
        }
    }
}

/// What went into a bundle.
#[derive(Debug, Default, Clone)]
pub struct BundleStats {
    /// Size of the tar stream.
    pub uncompressed_bytes: u64,
    /// Length of `data`.
    pub base64_bytes: u64,
    pub files: u64,
    pub sessions: u64,
    /// What redaction replaced.
    pub redactions: Report,
    /// Warnings: links and special files left out, files that changed while read.
    pub warnings: Vec<String>,
}

/// One entry of the tar.
#[derive(Debug, Clone)]
enum Item {
    Dir { path: String, mtime: u64 },
    File { path: String, src: PathBuf, mtime: u64, jsonl: bool },
    Data { path: String, bytes: Vec<u8>, mtime: u64 },
}

/// Everything that goes into the bundle, found before a byte is written.
#[derive(Debug, Clone)]
pub struct Plan {
    pub slot: String,
    pub slot_dir: PathBuf,
    /// The project's real path at capture time.
    pub project_dir: String,
    pub sessions: Vec<String>,
    /// Total bytes of the files, for the progress bar.
    pub total_bytes: u64,
    items: Vec<Item>,
    skipped: Vec<String>,
}

impl Plan {
    /// Links and special files the plan leaves out.
    pub fn skipped(&self) -> &[String] {
        &self.skipped
    }

    /// Hands each entry of the plan to `visit` as the restore reads a bundle's, in the
    /// tar's order, unredacted, each file read from where it is now: below `at` when it was
    /// planned below the slot (a move sets the old slot aside before laying it again).
    pub fn visit_local(
        &self,
        at: &Path,
        visit: &mut dyn FnMut(unpack::Entry<'_>) -> anyhow::Result<()>,
    ) -> anyhow::Result<()> {
        let below = format!("{}/", self.slot);
        for item in &self.items {
            let path = match item {
                Item::Dir { path, .. } | Item::File { path, .. } | Item::Data { path, .. } => path,
            };
            let rel = if *path == self.slot {
                PathBuf::new()
            } else {
                PathBuf::from(path.strip_prefix(&below).context("a planned entry outside the slot")?)
            };
            match item {
                Item::Dir { mtime, .. } => visit(unpack::Entry {
                    rel,
                    is_dir: true,
                    size: 0,
                    mtime: *mtime,
                    reader: &mut io::empty(),
                    local: None,
                })?,
                Item::Data { bytes, mtime, .. } => visit(unpack::Entry {
                    rel,
                    is_dir: false,
                    size: bytes.len() as u64,
                    mtime: *mtime,
                    reader: &mut &bytes[..],
                    local: None,
                })?,
                Item::File { src, mtime, .. } => {
                    let src = match src.strip_prefix(&self.slot_dir) {
                        Ok(inside) => at.join(inside),
                        Err(_) => src.clone(),
                    };
                    // Not through a link, nor blocking on a FIFO put in its place.
                    let file = fs::OpenOptions::new()
                        .read(true)
                        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
                        .open(&src)
                        .with_context(|| format!("could not read {}", src.display()))?;
                    let meta = file.metadata()?;
                    anyhow::ensure!(meta.is_file(), "{} is not a regular file", src.display());
                    let size = meta.len();
                    let mut whole = WholeFile::new(file.try_clone()?, size, &rel);
                    visit(unpack::Entry {
                        rel,
                        is_dir: false,
                        size,
                        mtime: *mtime,
                        reader: &mut whole,
                        local: Some(&file),
                    })?
                }
            }
        }
        Ok(())
    }

    /// The mtime of the project's newest conversation (0 with none), to choose between
    /// the projects of several parent directories.
    pub fn newest_conversation(&self) -> u64 {
        self.sessions.iter().map(|id| mtime_of(&self.slot_dir.join(format!("{id}.jsonl")))).max().unwrap_or(0)
    }
}

/// A planned file read whole as it was when opened: cut short (truncated meanwhile) or
/// grown past its size by the end, it is an error naming it, not a shorter copy.
pub struct WholeFile {
    file: fs::File,
    size: u64,
    left: u64,
    rel: PathBuf,
}

impl WholeFile {
    pub fn new(file: fs::File, size: u64, rel: &Path) -> WholeFile {
        WholeFile { file, size, left: size, rel: rel.to_path_buf() }
    }

    /// The file's path in the slot.
    pub fn rel(&self) -> &Path {
        &self.rel
    }

    fn changed(&self) -> io::Error {
        io::Error::other(format!(
            "{} changed while it was read (is something still writing it?)",
            self.rel.display()
        ))
    }
}

impl io::Read for WholeFile {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.left == 0 {
            return if self.file.metadata()?.len() == self.size { Ok(0) } else { Err(self.changed()) };
        }
        let max = buf.len().min(usize::try_from(self.left).unwrap_or(usize::MAX));
        let n = self.file.read(&mut buf[..max])?;
        if n == 0 && max > 0 {
            return Err(self.changed());
        }
        self.left -= n as u64;
        Ok(n)
    }
}

/// The project a bundle takes for a directory.
#[derive(Debug)]
pub struct Found {
    pub plan: Plan,
    /// Whether it is the project of a parent (the directory itself has none).
    pub from_parent: bool,
}

impl Found {
    /// What to tell the user when a parent's project was taken.
    pub fn note(&self, cwd: &Path) -> Option<String> {
        self.from_parent.then(|| {
            format!(
                "--bundle: Claude Code has no project for {}; bundling the one of {} (its conversations are newest)",
                crate::sanitize::for_terminal(&cwd.to_string_lossy()),
                crate::sanitize::for_terminal(&self.plan.project_dir)
            )
        })
    }
}

/// Finds the Claude Code project for `cwd` the way Claude Code would have been started
/// for it: the directory itself, else among its parents and its git top level those
/// that have a project, the one whose conversations are newest.
pub fn find_project(config: &Path, home: Option<&Path>, cwd: &Path) -> anyhow::Result<Option<Found>> {
    if let Some(plan) = plan(config, home, cwd)? {
        return Ok(Some(Found { plan, from_parent: false }));
    }
    let mut candidates: Vec<PathBuf> =
        cwd.ancestors().skip(1).filter(|p| p.parent().is_some()).map(Path::to_path_buf).collect();
    let top = git2::Repository::discover(cwd).ok().and_then(|r| r.workdir().map(Path::to_path_buf));
    if let Some(top) = top.map(|t| PathBuf::from(t.to_string_lossy().trim_end_matches('/')))
        && !candidates.contains(&top)
        && top != cwd
    {
        candidates.push(top);
    }
    let mut best: Option<(u64, Plan)> = None;
    for dir in candidates {
        let Ok(Some(plan)) = plan(config, home, &dir) else { continue };
        let newest = plan.newest_conversation();
        if best.as_ref().is_none_or(|(t, _)| newest > *t) {
            best = Some((newest, plan));
        }
    }
    Ok(best.map(|(_, plan)| Found { plan, from_parent: true }))
}

/// The `.claude.json` that belongs to a config dir: inside it when it is not `~/.claude`.
pub fn global_config(config: &Path, home: Option<&Path>) -> PathBuf {
    match home {
        Some(h) if config == h.join(".claude") => h.join(".claude.json"),
        _ => config.join(".claude.json"),
    }
}

/// Finds the slot of `cwd` under `config` and lists what to carry; `Ok(None)` when Claude
/// Code has no project for this directory.
pub fn plan(config: &Path, home: Option<&Path>, cwd: &Path) -> anyhow::Result<Option<Plan>> {
    let real = fs::canonicalize(cwd).with_context(|| format!("could not resolve {}", cwd.display()))?;
    let project_dir = real.to_string_lossy().into_owned();
    let slot = claude::slot_name(&project_dir);
    let Some(slot_dir) = claude::find_slot_dir(&config.join("projects"), &slot) else {
        return Ok(None);
    };
    let slot = slot_dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or(slot);
    let mut plan = Plan {
        slot: slot.clone(),
        slot_dir: slot_dir.clone(),
        project_dir: project_dir.clone(),
        sessions: Vec::new(),
        total_bytes: 0,
        items: Vec::new(),
        skipped: Vec::new(),
    };
    for entry in sorted_dir(&slot_dir)? {
        let name = entry.file_name().to_string_lossy().into_owned();
        if let Some(id) = name.strip_suffix(".jsonl")
            && entry.file_type().is_ok_and(|t| t.is_file())
        {
            plan.sessions.push(id.to_string());
        }
    }
    plan.items.push(Item::Dir { path: slot.clone(), mtime: mtime_of(&slot_dir) });
    let logical = cwd.to_string_lossy().into_owned();
    let manifest = json!({
        "lokust_bundle": 1,
        "project_dir": project_dir,
        "cwd": logical,
        "slot": slot,
        "sessions": plan.sessions,
    });
    let now = crate::clock::now().as_secs();
    plan.items.push(Item::Dir { path: format!("{slot}/{EXTRAS}"), mtime: now });
    plan.items.push(Item::Data {
        path: format!("{slot}/{EXTRAS}/manifest.json"),
        bytes: pretty(&manifest),
        mtime: now,
    });
    let mut items = Vec::new();
    walk(&slot_dir, &slot, &mut items, &mut plan.skipped, &mut plan.total_bytes)?;
    plan.items.append(&mut items);
    carry_extras(config, home, &real, cwd, &mut plan)?;
    Ok(Some(plan))
}

/// file-history/<id>/, todos/<id>*, tasks/<id>/, the project's history.jsonl lines and
/// its `.claude.json` entry, under `<slot>/.lokust/`.
fn carry_extras(
    config: &Path,
    home: Option<&Path>,
    real: &Path,
    logical: &Path,
    plan: &mut Plan,
) -> anyhow::Result<()> {
    let base = format!("{}/{EXTRAS}", plan.slot);
    let mut items = Vec::new();
    for (kind, per_dir) in [("file-history", true), ("tasks", true), ("todos", false)] {
        let dir = config.join(kind);
        if !dir.is_dir() {
            continue;
        }
        let mut made_dir = false;
        for id in &plan.sessions {
            let matches: Vec<fs::DirEntry> = if per_dir {
                sorted_dir(&dir)?.into_iter().filter(|e| e.file_name().to_string_lossy() == *id).collect()
            } else {
                sorted_dir(&dir)?
                    .into_iter()
                    .filter(|e| e.file_name().to_string_lossy().starts_with(id.as_str()))
                    .collect()
            };
            for entry in matches {
                if !made_dir {
                    items.push(Item::Dir { path: format!("{base}/{kind}"), mtime: mtime_of(&dir) });
                    made_dir = true;
                }
                let name = entry.file_name().to_string_lossy().into_owned();
                let path = format!("{base}/{kind}/{name}");
                let ft = entry.file_type()?;
                if ft.is_dir() {
                    items.push(Item::Dir { path: path.clone(), mtime: mtime_of(&entry.path()) });
                    walk(&entry.path(), &path, &mut items, &mut plan.skipped, &mut plan.total_bytes)?;
                } else if ft.is_file() {
                    let meta = entry.metadata()?;
                    plan.total_bytes += meta.len();
                    items.push(Item::File {
                        path,
                        src: entry.path(),
                        mtime: mtime_meta(&meta),
                        jsonl: false,
                    });
                } else {
                    plan.skipped.push(entry.path().display().to_string());
                }
            }
        }
    }
    let projects: Vec<String> =
        [real.to_string_lossy().into_owned(), logical.to_string_lossy().into_owned()].into_iter().collect();
    // The prompt history: only this project's lines.
    let history = config.join("history.jsonl");
    if let Ok(file) = File::open(&history) {
        let mut kept = Vec::new();
        for line in BufReader::new(file).lines() {
            let Ok(line) = line else { break };
            let Ok(v) = serde_json::from_str::<Value>(&line) else { continue };
            if v.get("project").and_then(Value::as_str).is_some_and(|p| projects.iter().any(|q| q == p)) {
                kept.extend_from_slice(line.as_bytes());
                kept.push(b'\n');
            }
        }
        if !kept.is_empty() {
            items.push(Item::Data {
                path: format!("{base}/history.jsonl"),
                bytes: kept,
                mtime: mtime_of(&history),
            });
        }
    }
    // The project's entry in the global config: trust, allowed tools, MCP servers.
    let global = global_config(config, home);
    if let Ok(text) = fs::read_to_string(&global)
        && let Ok(v) = serde_json::from_str::<Value>(&text)
        && let Some((path, entry)) =
            projects.iter().find_map(|p| v.get("projects").and_then(|ps| ps.get(p)).map(|e| (p, e)))
    {
        let doc = json!({"project": path, "entry": entry});
        items.push(Item::Data {
            path: format!("{base}/claude-project.json"),
            bytes: serde_json::to_vec(&doc).unwrap_or_default(),
            mtime: mtime_of(&global),
        });
    }
    plan.items.append(&mut items);
    Ok(())
}

fn pretty(v: &Value) -> Vec<u8> {
    let mut out = serde_json::to_vec_pretty(v).unwrap_or_default();
    out.push(b'\n');
    out
}

fn sorted_dir(dir: &Path) -> io::Result<Vec<fs::DirEntry>> {
    let mut entries: Vec<fs::DirEntry> = fs::read_dir(dir)?.collect::<Result<_, _>>()?;
    entries.sort_by_key(|e| e.file_name());
    Ok(entries)
}

/// Directories and regular files below `dir`, links and special files skipped.
fn walk(
    dir: &Path,
    prefix: &str,
    items: &mut Vec<Item>,
    skipped: &mut Vec<String>,
    total: &mut u64,
) -> io::Result<()> {
    for entry in sorted_dir(dir)? {
        let name = entry.file_name().to_string_lossy().into_owned();
        let path = format!("{prefix}/{name}");
        let ft = entry.file_type()?;
        if ft.is_dir() {
            // Our own folder in a slot restored by a spec-only reader is not carried twice.
            if prefix.split('/').count() == 1 && name == EXTRAS {
                continue;
            }
            items.push(Item::Dir { path: path.clone(), mtime: mtime_of(&entry.path()) });
            walk(&entry.path(), &path, items, skipped, total)?;
        } else if ft.is_file() {
            let meta = entry.metadata()?;
            *total += meta.len();
            let jsonl = name.ends_with(".jsonl");
            items.push(Item::File { path, src: entry.path(), mtime: mtime_meta(&meta), jsonl });
        } else {
            skipped.push(entry.path().display().to_string());
        }
    }
    Ok(())
}

fn mtime_meta(meta: &fs::Metadata) -> u64 {
    meta.modified().map(|t| crate::clock::since_epoch(t).as_secs()).unwrap_or(0)
}

fn mtime_of(path: &Path) -> u64 {
    fs::metadata(path).map(|m| mtime_meta(&m)).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};

    use super::WholeFile;

    /// A file cut or grown after it was opened (its size taken) is an error naming it; one
    /// left alone reads whole.
    #[test]
    fn a_file_cut_or_grown_while_read_is_an_error_not_a_shorter_copy() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.jsonl");
        std::fs::write(&path, vec![b'x'; 300_000]).unwrap();
        let read = |change: &dyn Fn(&std::fs::File)| {
            let file = std::fs::File::open(&path).unwrap();
            let size = file.metadata().unwrap().len();
            let writer = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
            let mut whole = WholeFile::new(file, size, std::path::Path::new("s/a.jsonl"));
            let mut first = vec![0; 1000];
            whole.read_exact(&mut first).unwrap();
            change(&writer);
            let mut rest = Vec::new();
            whole.read_to_end(&mut rest).map(|_| 1000 + rest.len())
        };
        assert_eq!(read(&|_| {}).unwrap(), 300_000);
        let cut = read(&|w| w.set_len(100_000).unwrap()).unwrap_err();
        assert!(cut.to_string().contains("s/a.jsonl changed while it was read"), "{cut}");
        std::fs::write(&path, vec![b'x'; 300_000]).unwrap();
        let grown = read(&|mut w| {
            use std::io::Seek;
            w.seek(std::io::SeekFrom::End(0)).unwrap();
            w.write_all(b"more\n").unwrap();
        });
        assert!(grown.unwrap_err().to_string().contains("changed while it was read"));
    }
}
