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
//! Deflate is the whole cost, so blocks of the tar stream are compressed on two threads
//! (each block primed with the previous 32 KiB, as pigz does, so the size matches gzip's)
//! while this thread reads and redacts. See: research/performance.md.

use std::borrow::Cow;
use std::collections::VecDeque;
use std::fs::{self, File};
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Mutex};

use anyhow::Context;
use flate2::{Compress, Compression, FlushCompress, Status};
use serde_json::{Value, json};

use crate::capture::claude;
use crate::lok::ShellLok;
use crate::redact::{self, Report};

/// `bundle.kind` of a Claude Code project.
pub const KIND: &str = "claude-code-project";
/// `bundle.format`.
pub const FORMAT: &str = "tar.gz+base64";
/// The folder inside the slot tree that carries what lives outside the slot.
pub const EXTRAS: &str = ".lokust";
/// Uncompressed bytes per deflate block.
const BLOCK: usize = 256 * 1024;
/// Deflate's window: each block is primed with this much of the one before.
const WINDOW: usize = 32 * 1024;
/// How much is read and scanned at a time.
const CHUNK: usize = 256 * 1024;

/// How to bundle.
#[derive(Debug, Clone)]
pub struct BundleOptions {
    /// Redact the transcripts and every other file (the default).
    pub redact: bool,
    /// Compression threads; 0 means one per core, at most 4.
    pub threads: usize,
    /// Deflate level, 6 like gzip.
    pub level: u32,
    /// Show a progress bar on stderr (the caller decides: a terminal, a large project).
    pub progress: bool,
    /// Further payloads, written as the `bundles` array after `bundle` (see [`crate::bundles`]).
    pub elements: Vec<Value>,
}

impl Default for BundleOptions {
    fn default() -> Self {
        BundleOptions { redact: true, threads: 0, level: 6, progress: false, elements: Vec::new() }
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
#[derive(Debug)]
enum Item {
    Dir { path: String, mtime: u64 },
    File { path: String, src: PathBuf, mtime: u64, jsonl: bool },
    Data { path: String, bytes: Vec<u8>, mtime: u64 },
}

/// Everything that goes into the bundle, found before a byte is written.
#[derive(Debug)]
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
    /// The mtime of the project's newest conversation (0 with none), to choose between
    /// the projects of several parent directories.
    pub fn newest_conversation(&self) -> u64 {
        self.sessions.iter().map(|id| mtime_of(&self.slot_dir.join(format!("{id}.jsonl")))).max().unwrap_or(0)
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
    let now = now_secs();
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
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

fn mtime_of(path: &Path) -> u64 {
    fs::metadata(path).map(|m| mtime_meta(&m)).unwrap_or(0)
}

fn now_secs() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

// ---------------------------------------------------------------------------
// Reading a file consistently, redacted

/// How much of a file to take: its size when opened, and for JSONL cut after the last
/// complete line (a last line without a newline counts when it parses as JSON), so a
/// transcript being appended to never yields half a line.
fn consistent_len(file: &mut File, jsonl: bool) -> io::Result<u64> {
    let len = file.metadata()?.len();
    if !jsonl || len == 0 {
        return Ok(len);
    }
    let mut end = len;
    let mut tail: Vec<u8> = Vec::new();
    loop {
        let start = end.saturating_sub(64 * 1024);
        let mut buf = vec![0; (end - start) as usize];
        file.seek(SeekFrom::Start(start))?;
        file.read_exact(&mut buf)?;
        if let Some(nl) = memchr::memrchr(b'\n', &buf) {
            buf.drain(..=nl);
            buf.extend_from_slice(&tail);
            tail = buf;
            let cut = start + nl as u64 + 1;
            file.seek(SeekFrom::Start(0))?;
            if tail.is_empty() || serde_json::from_slice::<serde::de::IgnoredAny>(&tail).is_ok() {
                return Ok(len);
            }
            return Ok(cut);
        }
        buf.extend_from_slice(&tail);
        tail = buf;
        if start == 0 {
            file.seek(SeekFrom::Start(0))?;
            let whole = serde_json::from_slice::<serde::de::IgnoredAny>(&tail).is_ok();
            return Ok(if whole { len } else { 0 });
        }
        end = start;
    }
}

/// Reads a file's first `len` bytes a chunk of whole lines at a time. The same bytes
/// always split into the same chunks, so a second read can be checked chunk by chunk.
struct Chunker {
    file: io::Take<File>,
    buf: Vec<u8>,
    /// Bytes of `buf` handed out by the last call, dropped at the next.
    handed: usize,
    eof: bool,
}

impl Chunker {
    fn new(file: File, len: u64) -> Chunker {
        Chunker { file: file.take(len), buf: Vec::with_capacity(CHUNK), handed: 0, eof: false }
    }

    /// The chunk handed out last.
    fn current(&self) -> &[u8] {
        &self.buf[..self.handed]
    }

    /// The next chunk (whole lines, except at the end), borrowed until the next call.
    fn next(&mut self) -> io::Result<Option<&[u8]>> {
        self.buf.drain(..self.handed);
        self.handed = 0;
        loop {
            if self.eof && self.buf.is_empty() {
                return Ok(None);
            }
            let start = self.buf.len();
            if !self.eof {
                self.buf.resize(start + CHUNK, 0);
                let n = read_full(&mut self.file, &mut self.buf[start..])?;
                self.buf.truncate(start + n);
                self.eof = n == 0;
            }
            let upto = if self.eof {
                self.buf.len()
            } else {
                // Only the bytes just read can hold the chunk's last newline.
                memchr::memrchr(b'\n', &self.buf[start..]).map_or(0, |i| start + i + 1)
            };
            if upto == 0 {
                continue;
            }
            self.handed = upto;
            return Ok(Some(&self.buf[..upto]));
        }
    }
}

/// What redaction changes in one chunk, found in the first read: the chunk's length and
/// CRC (to recognise it in the second read) and the lines replaced.
struct ChunkPlan {
    len: usize,
    crc: u32,
    edits: Vec<(usize, usize, Vec<u8>)>,
}

/// The first read of a file: every chunk's edits and the redacted size. Redaction is
/// most of a bundle's cost and the compressors idle meanwhile, so `workers` chunks are
/// redacted at once.
fn plan_file(
    mut chunks: Chunker,
    jsonl: bool,
    workers: usize,
    report: &mut Report,
) -> io::Result<(u64, Vec<ChunkPlan>)> {
    let mut plans = Vec::new();
    let mut size = 0u64;
    let mut batch: Vec<Vec<u8>> = Vec::with_capacity(workers);
    loop {
        batch.clear();
        while batch.len() < workers.max(1) {
            match chunks.next()? {
                Some(raw) => batch.push(raw.to_vec()),
                None => break,
            }
        }
        if batch.is_empty() {
            return Ok((size, plans));
        }
        let planned: Vec<(Edits, u64, Report)> = if batch.len() == 1 {
            let mut r = Report::default();
            let (edits, n) = plan_chunk(&batch[0], jsonl, &mut r);
            vec![(edits, n, r)]
        } else {
            std::thread::scope(|s| {
                let jobs: Vec<_> = batch
                    .iter()
                    .map(|raw| {
                        s.spawn(move || {
                            let mut r = Report::default();
                            let (edits, n) = plan_chunk(raw, jsonl, &mut r);
                            (edits, n, r)
                        })
                    })
                    .collect();
                jobs.into_iter().map(|j| j.join().unwrap_or_else(|p| std::panic::resume_unwind(p))).collect()
            })
        };
        for (raw, (edits, out_len, r)) in batch.iter().zip(planned) {
            report.merge(&r);
            plans.push(ChunkPlan { len: raw.len(), crc: crc32fast::hash(raw), edits });
            size += out_len;
        }
    }
}

/// Byte ranges of a chunk and what replaces them.
type Edits = Vec<(usize, usize, Vec<u8>)>;

/// The lines of `buf`, each with its newline; found with memchr, which is several times
/// faster than testing byte by byte on transcript-long lines.
fn lines(buf: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut rest = buf;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let end = memchr::memchr(b'\n', rest).map_or(rest.len(), |i| i + 1);
        let (line, tail) = rest.split_at(end);
        rest = tail;
        Some(line)
    })
}

/// Redacts every line of `chunk`, returning the edits and the output length.
fn plan_chunk(chunk: &[u8], jsonl: bool, report: &mut Report) -> (Edits, u64) {
    let mut edits = Vec::new();
    let mut out_len = 0u64;
    let mut at = 0;
    for line in lines(chunk) {
        let body = line.strip_suffix(b"\n").unwrap_or(line);
        // A clean line (nearly all of them) is not copied at all.
        let red = redact_line(body, jsonl, report);
        out_len += (red.len() + line.len() - body.len()) as u64;
        if let Cow::Owned(new) = red
            && new != body
        {
            edits.push((at, at + body.len(), new));
        }
        at += line.len();
    }
    (edits, out_len)
}

fn apply(chunk: &[u8], edits: &[(usize, usize, Vec<u8>)], out: &mut Vec<u8>) {
    let mut pos = 0;
    for (start, end, with) in edits {
        out.extend_from_slice(&chunk[pos..*start]);
        out.extend_from_slice(with);
        pos = *end;
    }
    out.extend_from_slice(&chunk[pos..]);
}

fn redact_line<'a>(body: &'a [u8], jsonl: bool, report: &mut Report) -> Cow<'a, [u8]> {
    match std::str::from_utf8(body) {
        Ok(text) => {
            let red = if jsonl {
                redact::redact_json_line(text, report)
            } else {
                redact::redact_report(text, report)
            };
            match red {
                Cow::Borrowed(_) => Cow::Borrowed(body),
                Cow::Owned(s) => Cow::Owned(s.into_bytes()),
            }
        }
        // Not UTF-8: the bytes stay as they are unless the readable part holds a secret.
        Err(_) => {
            let lossy = String::from_utf8_lossy(body);
            let mut found = Report::default();
            let red = redact::redact_report(&lossy, &mut found);
            if found.values == 0 {
                Cow::Borrowed(body)
            } else {
                report.merge(&found);
                Cow::Owned(red.into_owned().into_bytes())
            }
        }
    }
}

/// A file's redacted content as a reader of exactly `size` bytes, the size the first
/// read counted. Each chunk is checked against that read: an unchanged chunk gets the
/// edits found then, a changed one is redacted afresh (a file rewritten in between
/// never leaks), and the output is cut at a line end or padded with newlines so the
/// tar stays whole.
struct Exact<'a> {
    chunks: Chunker,
    plans: Option<Vec<ChunkPlan>>,
    jsonl: bool,
    index: usize,
    size: u64,
    produced: u64,
    out: Vec<u8>,
    /// The current chunk is served straight from the chunker (nothing to change).
    direct: bool,
    pos: usize,
    report: &'a mut Report,
    progress: Option<&'a indicatif::ProgressBar>,
    changed: bool,
}

impl<'a> Exact<'a> {
    /// A reader of a file's `size` redacted bytes, checked against the first read's `plans`
    /// (none: the file goes in as it is).
    fn new(
        chunks: Chunker,
        plans: Option<Vec<ChunkPlan>>,
        jsonl: bool,
        size: u64,
        report: &'a mut Report,
        progress: Option<&'a indicatif::ProgressBar>,
    ) -> Exact<'a> {
        Exact {
            chunks,
            plans,
            jsonl,
            index: 0,
            size,
            produced: 0,
            out: Vec::new(),
            direct: false,
            pos: 0,
            report,
            progress,
            changed: false,
        }
    }

    fn refill(&mut self) -> io::Result<bool> {
        if crate::restore::interrupted() {
            return Err(io::Error::other(crate::restore::Interrupted));
        }
        let Some(raw) = self.chunks.next()? else { return Ok(false) };
        if let Some(p) = self.progress {
            p.inc(raw.len() as u64);
        }
        match &self.plans {
            None => self.direct = true,
            Some(plans) => match plans.get(self.index) {
                Some(plan) if plan.len == raw.len() && plan.crc == crc32fast::hash(raw) => {
                    if plan.edits.is_empty() {
                        self.direct = true;
                    } else {
                        apply(raw, &plan.edits, &mut self.out)
                    }
                }
                _ => {
                    self.changed = true;
                    let (edits, _) = plan_chunk(raw, self.jsonl, self.report);
                    apply(raw, &edits, &mut self.out);
                }
            },
        }
        self.index += 1;
        Ok(true)
    }
}

impl Exact<'_> {
    fn current(&self) -> &[u8] {
        if self.direct { self.chunks.current() } else { &self.out }
    }
}

impl Read for Exact<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.pos == self.current().len() {
            self.out.clear();
            self.direct = false;
            self.pos = 0;
            let left = self.size - self.produced;
            if left == 0 {
                return Ok(0);
            }
            if !self.refill()? {
                self.changed = true;
                self.out.resize(left.min(CHUNK as u64) as usize, b'\n');
            } else if self.current().len() as u64 > left {
                self.changed = true;
                if self.direct {
                    self.out.extend_from_slice(self.chunks.current());
                    self.direct = false;
                }
                let cut = memchr::memrchr(b'\n', &self.out[..left as usize]).map_or(0, |i| i + 1);
                self.out.truncate(cut);
                self.out.resize(left as usize, b'\n');
            }
        }
        let pos = self.pos;
        let current = self.current();
        let n = buf.len().min(current.len() - pos);
        buf[..n].copy_from_slice(&current[pos..pos + n]);
        self.pos += n;
        self.produced += n as u64;
        Ok(n)
    }
}

// ---------------------------------------------------------------------------
// Writing: tar → parallel deflate → base64 → JSON

/// Writes `lok` with the bundle of `plan` as pretty JSON to `out`, streaming the bundle.
/// The bundle's sizes follow `data` (JSON key order is free), so nothing is held back.
pub fn write_lok<W: Write>(
    lok: &ShellLok,
    plan: &Plan,
    opts: &BundleOptions,
    mut out: W,
) -> anyhow::Result<BundleStats> {
    let mut lok = lok.clone();
    lok.bundle = None;
    let head = serde_json::to_string_pretty(&lok).context("could not serialise the snapshot")?;
    let head = head.strip_suffix("\n}").context("unexpected JSON layout")?;
    write!(
        out,
        "{head},\n  \"bundle\": {{\n    \"kind\": \"{KIND}\",\n    \"format\": \"{FORMAT}\",\n    \"data\": \""
    )?;
    let mut stats = BundleStats::default();
    let (count, total) = {
        let counted = Counting { inner: &mut out, count: 0 };
        let b64 = base64::write::EncoderWriter::new(counted, &base64::engine::general_purpose::STANDARD);
        let gz = ParallelGz::new(b64, opts.level, threads(opts.threads));
        let gz = write_tar(plan, opts, gz, &mut stats)?;
        let (mut b64, total) = gz.finish()?;
        (b64.finish()?.count, total)
    };
    stats.base64_bytes = count;
    stats.uncompressed_bytes = total;
    write!(
        out,
        "\",\n    \"uncompressed_bytes\": {},\n    \"base64_bytes\": {}\n  }}",
        stats.uncompressed_bytes, stats.base64_bytes
    )?;
    if !opts.elements.is_empty() {
        let elements = serde_json::to_string(&opts.elements).context("could not serialise bundles")?;
        write!(out, ",\n  \"bundles\": {elements}")?;
    }
    writeln!(out, "\n}}")?;
    out.flush()?;
    Ok(stats)
}

fn threads(n: usize) -> usize {
    if n > 0 {
        return n;
    }
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1).clamp(1, 4)
}

fn write_tar<W: Write>(
    plan: &Plan,
    opts: &BundleOptions,
    sink: W,
    stats: &mut BundleStats,
) -> anyhow::Result<W> {
    let progress = opts.progress.then(|| {
        let bar = indicatif::ProgressBar::with_draw_target(
            Some(plan.total_bytes),
            indicatif::ProgressDrawTarget::stderr(),
        );
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "bundling {bar:30} {binary_bytes}/{binary_total_bytes} {eta}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        bar
    });
    let mut tar = tar::Builder::new(sink);
    stats.sessions = plan.sessions.len() as u64;
    for path in &plan.skipped {
        stats.warnings.push(format!("bundle: left out {path}: not a regular file or directory"));
    }
    for item in &plan.items {
        if crate::restore::interrupted() {
            return Err(io::Error::other(crate::restore::Interrupted).into());
        }
        let mut header = tar::Header::new_gnu();
        header.set_uid(0);
        header.set_gid(0);
        match item {
            Item::Dir { path, mtime } => {
                header.set_entry_type(tar::EntryType::Directory);
                header.set_mode(0o700);
                header.set_mtime(*mtime);
                header.set_size(0);
                tar.append_data(&mut header, path, io::empty())?;
            }
            Item::Data { path, bytes, mtime } => {
                let mut red = Vec::with_capacity(bytes.len());
                if opts.redact && !path.ends_with("/manifest.json") {
                    for line in lines(bytes) {
                        let (body, nl) = match line.strip_suffix(b"\n") {
                            Some(b) => (b, &b"\n"[..]),
                            None => (line, &b""[..]),
                        };
                        red.extend_from_slice(&redact_line(body, true, &mut stats.redactions));
                        red.extend_from_slice(nl);
                    }
                } else {
                    red.extend_from_slice(bytes);
                }
                header.set_entry_type(tar::EntryType::Regular);
                header.set_mode(0o600);
                header.set_mtime(*mtime);
                header.set_size(red.len() as u64);
                tar.append_data(&mut header, path, &red[..])?;
                stats.files += 1;
            }
            Item::File { path, src, mtime, jsonl } => {
                let mut file = match File::open(src) {
                    Ok(f) => f,
                    Err(e) if e.kind() == io::ErrorKind::NotFound => {
                        stats
                            .warnings
                            .push(format!("bundle: {} disappeared while being read", src.display()));
                        continue;
                    }
                    Err(e) => return Err(e).with_context(|| format!("could not read {}", src.display())),
                };
                let len = consistent_len(&mut file, *jsonl)
                    .with_context(|| format!("could not read {}", src.display()))?;
                // First read: what redaction changes, and so the size for the header.
                let (size, plans) = if opts.redact {
                    let chunks = Chunker::new(file.try_clone()?, len);
                    let (size, plans) =
                        plan_file(chunks, *jsonl, threads(opts.threads), &mut stats.redactions)?;
                    file.seek(SeekFrom::Start(0))?;
                    (size, Some(plans))
                } else {
                    (len, None)
                };
                header.set_entry_type(tar::EntryType::Regular);
                header.set_mode(0o600);
                header.set_mtime(*mtime);
                header.set_size(size);
                let mut reader = Exact::new(
                    Chunker::new(file, len),
                    plans,
                    *jsonl,
                    size,
                    &mut stats.redactions,
                    progress.as_ref(),
                );
                tar.append_data(&mut header, path, &mut reader)
                    .with_context(|| format!("could not bundle {}", src.display()))?;
                if reader.changed {
                    stats.warnings.push(format!(
                        "bundle: {} was rewritten while being read; its copy was cut at a line end",
                        src.display()
                    ));
                }
                stats.files += 1;
            }
        }
    }
    if let Some(bar) = progress {
        bar.finish_and_clear();
    }
    Ok(tar.into_inner()?)
}

/// Counts what passes through.
pub struct Counting<W> {
    pub inner: W,
    pub count: u64,
}

impl<W: Write> Write for Counting<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.count += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// A deflated block and the CRC of its input.
type Compressed = io::Result<(Vec<u8>, crc32fast::Hasher)>;

struct Job {
    data: Arc<Vec<u8>>,
    prev: Option<Arc<Vec<u8>>>,
    last: bool,
    reply: SyncSender<Compressed>,
}

/// A gzip writer that deflates blocks on worker threads and writes them in order: one
/// gzip member, readable by any gunzip, whose size is within a fraction of gzip's because
/// each block is primed with the end of the one before.
pub struct ParallelGz<W: Write> {
    out: W,
    block: Vec<u8>,
    prev: Option<Arc<Vec<u8>>>,
    jobs: Option<SyncSender<Job>>,
    pending: VecDeque<Receiver<Compressed>>,
    workers: Vec<std::thread::JoinHandle<()>>,
    crc: crc32fast::Hasher,
    total: u64,
    in_flight: usize,
    started: bool,
}

impl<W: Write> ParallelGz<W> {
    pub fn new(out: W, level: u32, threads: usize) -> ParallelGz<W> {
        let (tx, rx) = sync_channel::<Job>(threads * 2);
        let rx = Arc::new(Mutex::new(rx));
        let workers = (0..threads)
            .map(|_| {
                let rx = Arc::clone(&rx);
                std::thread::spawn(move || {
                    let mut deflate = Compress::new(Compression::new(level), false);
                    loop {
                        let job = match rx.lock() {
                            Ok(guard) => guard.recv(),
                            Err(_) => return,
                        };
                        let Ok(job) = job else { return };
                        let result = compress_block(&mut deflate, &job);
                        let _ = job.reply.send(result);
                    }
                })
            })
            .collect();
        ParallelGz {
            out,
            block: Vec::with_capacity(BLOCK),
            prev: None,
            jobs: Some(tx),
            pending: VecDeque::new(),
            workers,
            crc: crc32fast::Hasher::new(),
            total: 0,
            in_flight: threads * 2 + 1,
            started: false,
        }
    }

    fn dispatch(&mut self, last: bool) -> io::Result<()> {
        if !self.started {
            // gzip header: deflate, no name, no mtime, Unix.
            self.out.write_all(&[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3])?;
            self.started = true;
        }
        let data = Arc::new(std::mem::replace(&mut self.block, Vec::with_capacity(BLOCK)));
        let (reply, rx) = sync_channel(1);
        let job = Job { data: Arc::clone(&data), prev: self.prev.take(), last, reply };
        self.jobs
            .as_ref()
            .ok_or_else(|| io::Error::other("compression already finished"))?
            .send(job)
            .map_err(|_| io::Error::other("a compression thread stopped"))?;
        self.prev = Some(data);
        self.pending.push_back(rx);
        while self.pending.len() > self.in_flight || (last && !self.pending.is_empty()) {
            self.collect_one()?;
        }
        Ok(())
    }

    fn collect_one(&mut self) -> io::Result<()> {
        let Some(rx) = self.pending.pop_front() else { return Ok(()) };
        let (bytes, crc) = rx.recv().map_err(|_| io::Error::other("a compression thread stopped"))??;
        self.crc.combine(&crc);
        self.out.write_all(&bytes)
    }

    /// Ends the stream; returns the inner writer and the uncompressed length.
    pub fn finish(mut self) -> io::Result<(W, u64)> {
        self.dispatch(true)?;
        let crc = std::mem::replace(&mut self.crc, crc32fast::Hasher::new()).finalize();
        let mut trailer = [0u8; 8];
        trailer[..4].copy_from_slice(&crc.to_le_bytes());
        trailer[4..].copy_from_slice(&(self.total as u32).to_le_bytes());
        self.out.write_all(&trailer)?;
        self.jobs = None;
        for w in self.workers.drain(..) {
            let _ = w.join();
        }
        let total = self.total;
        // `self` implements no Drop, so the writer can be moved out.
        Ok((self.out, total))
    }
}

fn compress_block(deflate: &mut Compress, job: &Job) -> Compressed {
    deflate.reset();
    if let Some(prev) = &job.prev {
        deflate
            .set_dictionary(&prev[prev.len().saturating_sub(WINDOW)..])
            .map_err(|e| io::Error::other(format!("deflate: {e}")))?;
    }
    let data = &job.data[..];
    let flush = if job.last { FlushCompress::Finish } else { FlushCompress::Sync };
    let mut out = Vec::with_capacity(data.len() / 3 + 1024);
    let start_in = deflate.total_in();
    loop {
        if out.len() == out.capacity() {
            out.reserve(out.capacity().max(4096));
        }
        let consumed = (deflate.total_in() - start_in) as usize;
        let status = deflate
            .compress_vec(&data[consumed..], &mut out, flush)
            .map_err(|e| io::Error::other(format!("deflate: {e}")))?;
        let consumed = (deflate.total_in() - start_in) as usize;
        let done = match status {
            Status::StreamEnd => true,
            _ if job.last => false,
            // A sync flush is complete once all input is in and the output was not full.
            _ => consumed == data.len() && out.len() < out.capacity(),
        };
        if done {
            break;
        }
    }
    let mut crc = crc32fast::Hasher::new();
    crc.update(data);
    Ok((out, crc))
}

impl<W: Write> Write for ParallelGz<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let room = BLOCK - self.block.len();
        let n = room.min(buf.len());
        self.block.extend_from_slice(&buf[..n]);
        self.total += n as u64;
        if self.block.len() == BLOCK {
            self.dispatch(false)?;
        }
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

fn read_full(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parallel_gzip_is_one_member_any_gunzip_reads() {
        let mut input = Vec::new();
        let mut x = 1u32;
        while input.len() < 3 * BLOCK + 5 {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
            input.extend_from_slice(format!("line {} of text {}\n", x % 977, x % 13).as_bytes());
        }
        for len in [0, 1, BLOCK - 1, BLOCK, input.len()] {
            for threads in [1, 2, 3] {
                let mut gz = ParallelGz::new(Vec::new(), 6, threads);
                gz.write_all(&input[..len]).unwrap();
                let (out, total) = gz.finish().unwrap();
                assert_eq!(total, len as u64);
                let mut back = Vec::new();
                flate2::read::GzDecoder::new(&out[..]).read_to_end(&mut back).unwrap();
                assert!(back == input[..len], "len {len}, {threads} threads");
            }
        }
    }

    #[test]
    fn a_file_rewritten_between_the_reads_is_redacted_afresh() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let clean = "{\"a\":\"nothing to see here at all, fine\"}\n";
        fs::write(&path, clean).unwrap();
        let mut report = Report::default();
        let mut chunks = Chunker::new(File::open(&path).unwrap(), clean.len() as u64);
        let mut plans = Vec::new();
        let mut size = 0;
        while let Some(raw) = chunks.next().unwrap() {
            let (edits, n) = plan_chunk(raw, true, &mut report);
            plans.push(ChunkPlan { len: raw.len(), crc: crc32fast::hash(raw), edits });
            size += n;
        }
        // Same length, now with a secret in it.
        let dirty = "{\"a\":\"key AKIAQWERTYUIOPASDFGH okay!!!\"}\n";
        assert_eq!(dirty.len(), clean.len());
        fs::write(&path, dirty).unwrap();
        let mut reader = Exact::new(
            Chunker::new(File::open(&path).unwrap(), clean.len() as u64),
            Some(plans),
            true,
            size,
            &mut report,
            None,
        );
        let mut out = String::new();
        reader.read_to_string(&mut out).unwrap();
        assert!(reader.changed);
        assert_eq!(out.len() as u64, size);
        assert!(!out.contains("AKIA"), "{out}");
    }
}
