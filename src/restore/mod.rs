//! `lokust-shell-restore`: puts a bundled Claude Code project back at another path, so
//! `claude --resume` finds the conversation there.
//!
//! The order of work is what keeps it safe. The document is validated first (for a
//! file, all of it before anything is written; for standard input, everything that
//! precedes the data, and the rest before anything is committed). The bundle is
//! extracted into a private temp dir beside the target slot, with every hostile entry
//! refusing the whole restore. Only then is anything renamed into place: a new slot in
//! one rename, an existing one merged file by file, each file by rename, so an
//! interruption at any moment leaves every file either old or new. A later run removes
//! the temp dirs of runs that were killed. See: docs/claude-code.md.

pub mod claude_config;
pub mod elements;
mod error;
mod history;
mod lay;
mod paths;
pub mod shell_env;
mod times;

use std::collections::{BTreeMap, HashSet};
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use anyhow::{Context, anyhow, bail};
use serde_json::{Map, Value};

use crate::bundle::top_level_transcript;
use crate::bundle::{self, EXTRAS};
use crate::capture::claude;
use crate::interrupt::{Interrupted, interrupted};
use crate::lok::{Lok, ShellLok};
use crate::place;

pub use crate::bundle::unpack::Budget;
use crate::bundle::{scan, unpack};
pub use error::{PartlyPlaced, RestoreError};
pub use paths::PathMap;

/// The default `--max-size`: 4 GiB of decompressed tar.
pub const DEFAULT_MAX_SIZE: u64 = 4 << 30;

/// The carried `.claude.json` entry and prompt history are read into memory; past this
/// they are refused as hostile.
const MAX_CARRIED_TEXT: u64 = 16 << 20;

/// Temp dirs of restores in progress are named `.lokust-restore-<pid>-<random>`.
const STAGING_PREFIX: &str = ".lokust-restore-";

/// Where the `.lok` comes from.
pub enum Source {
    File(PathBuf),
    Stdin,
    /// Any stream (e.g. from another process), named for messages.
    Reader(Box<dyn Read + Send>, String),
    /// A project of this machine, read in place: a move lays its old copies again.
    Local(Box<Local>),
}

/// A Claude Code project planned as a bundle would carry it, its slot now at `at`, and the
/// document that would have held it (the other agents' elements).
pub struct Local {
    /// None when Claude Code has no conversations there: only the elements are restored.
    pub plan: Option<crate::bundle::Plan>,
    pub at: PathBuf,
    pub lok: ShellLok,
}

impl Source {
    /// `-` is standard input.
    pub fn from_arg(path: &Path) -> Source {
        if path == Path::new("-") { Source::Stdin } else { Source::File(path.to_path_buf()) }
    }

    pub fn name(&self) -> String {
        match self {
            Source::File(p) => p.display().to_string(),
            Source::Stdin => "standard input".into(),
            Source::Reader(_, name) => name.clone(),
            Source::Local(local) => local.at.display().to_string(),
        }
    }

    /// The file as restore reads it. A sealed file is opened and streamed through the same
    /// path as standard input: every chunk is authenticated as it is read, the bundle goes
    /// into the temp dir, and nothing is renamed into place until the last chunk has been
    /// authenticated and the whole document checked, so a cut or changed file leaves
    /// nothing behind. One pass: the plaintext is never kept, in memory or on disk.
    pub fn open(file: &Path, keys: &crate::seal::Keys) -> anyhow::Result<Source> {
        let name = crate::lok::display_name(file);
        if file == Path::new("-") {
            let (_, r) = crate::seal::open_any(io::stdin(), None, &name, keys)?;
            return Ok(Source::Reader(r, name));
        }
        let f = std::fs::File::open(file).with_context(|| format!("could not read {name}"))?;
        let regular = f.metadata().is_ok_and(|m| m.is_file());
        let (sealed, r) = crate::seal::open_any(f, Some(file), &name, keys)?;
        // A plain regular file keeps restore's own two passes over it (check, then extract);
        // a pipe can be read only once, so what was read of it goes on as a stream.
        Ok(if sealed || !regular { Source::Reader(r, name) } else { Source::from_arg(file) })
    }
}

/// How to restore.
#[derive(Debug, Clone)]
pub struct RestoreOptions {
    /// The project's new path; created when missing.
    pub to: PathBuf,
    /// Claude Code's config dir (`$CLAUDE_CONFIG_DIR`, else `~/.claude`).
    pub claude_dir: PathBuf,
    /// The home dir, to find `~/.claude.json` when `claude_dir` is `~/.claude`.
    pub home: Option<PathBuf>,
    /// Print the plan, write nothing.
    pub dry_run: bool,
    /// Replace transcripts that differ, keeping the old ones as backups.
    pub force: bool,
    /// Ceiling on the decompressed size.
    pub max_size: u64,
    /// Also install the carried configuration that can run commands or grant
    /// permissions (MCP servers, allowed tools, trust); without it only inert keys are.
    pub trust_config: bool,
    /// Place this one conversation (its transcript, subagents and per-session extras)
    /// and nothing else of the bundle: no memory, settings or prompt history.
    pub only_session: Option<String>,
}

/// One file the restore places (or would place).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placed {
    /// Where it goes.
    pub path: PathBuf,
    pub bytes: u64,
    pub action: Action,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// A new file.
    Add,
    /// Already there with the same content.
    Same,
    /// Different content there: replaced (`--force`), the old one kept as a backup.
    Replace,
    /// Different content there: kept, the incoming one refused.
    Refuse,
}

/// What a restore did (or, with `dry_run`, would do).
#[derive(Debug, Clone)]
pub struct RestoreOutcome {
    pub dry_run: bool,
    /// The new working directory (its real path).
    pub project_dir: PathBuf,
    /// Whether the `.lok` held a Claude Code project (the top-level `bundle`); without
    /// one it carries only other agents' sessions and the fields below are empty.
    pub claude_bundle: bool,
    /// The new slot's name and directory.
    pub slot: String,
    pub slot_dir: PathBuf,
    /// The slot name in the bundle (the old machine's).
    pub old_slot: String,
    /// Old path → new path, as applied to every event.
    pub path_map: Vec<(String, String)>,
    /// Conversations in the bundle, newest last.
    pub sessions: Vec<String>,
    /// The conversation to resume: the newest transcript.
    pub newest_session: Option<String>,
    /// Every file placed, with what happened to it.
    pub files: Vec<Placed>,
    /// Session ids that also exist in another slot on this machine: (id, that slot).
    pub duplicates: Vec<(String, String)>,
    /// Prompt-history lines added to `history.jsonl`.
    pub history_lines: u64,
    /// Carried prompt-history lines of other projects, refused.
    pub history_refused: u64,
    /// What became of the `.claude.json` project entry.
    pub claude_json: Option<String>,
    /// Carried `.claude.json` keys that can run commands or grant permissions: left out
    /// unless `trust_config`, installed (and shown first) with it.
    pub config_withheld: Vec<crate::agent::claude::Withheld>,
    /// Whether those keys were installed (`--trust-config`).
    pub config_trusted: bool,
    /// Backups made by `--force`.
    pub backups: Vec<PathBuf>,
    /// Temp dirs of killed runs that were removed.
    pub cleaned: Vec<PathBuf>,
    /// What could not be done after the conversations were placed.
    pub warnings: Vec<String>,
    /// The snapshot the bundle came in.
    pub lok: ShellLok,
}

impl RestoreOutcome {
    /// An outcome with nothing of Claude Code's placed yet.
    fn empty(dry_run: bool, project_dir: PathBuf, lok: ShellLok, cleaned: Vec<PathBuf>) -> RestoreOutcome {
        RestoreOutcome {
            dry_run,
            project_dir,
            claude_bundle: false,
            slot: String::new(),
            slot_dir: PathBuf::new(),
            old_slot: String::new(),
            path_map: Vec::new(),
            sessions: Vec::new(),
            newest_session: None,
            files: Vec::new(),
            duplicates: Vec::new(),
            history_lines: 0,
            history_refused: 0,
            claude_json: None,
            config_withheld: Vec::new(),
            config_trusted: false,
            backups: Vec::new(),
            cleaned,
            warnings: Vec::new(),
            lok,
        }
    }

    pub fn refused(&self) -> impl Iterator<Item = &Placed> {
        self.files.iter().filter(|f| f.action == Action::Refuse)
    }
}

// Reading the document

/// The parts of the `.lok` the restore needs, validated.
struct Doc {
    lok: ShellLok,
}

/// Builds the typed snapshot from the scanned document (with `bundle.data` empty) and
/// checks everything the restore relies on.
fn validate(doc: Value, name: &str, data_len: u64) -> anyhow::Result<Doc> {
    let lok = match Lok::from_value(doc, name)? {
        Lok::Shell(s) => *s,
        Lok::Coordination(_) => {
            return Err(not_restorable(format!(
                "{name} is a coordination session, which holds no terminal or Claude Code project to restore; \
             read it with `lokust-shell inspect {name}`"
            )));
        }
    };
    let Some(b) = &lok.bundle else {
        if carries_elements(&lok) {
            return Ok(Doc { lok });
        }
        return Err(not_restorable(format!(
            "{name} has no bundle to restore (it was captured without --bundle)"
        )));
    };
    check_bundle_header(b.kind.as_str(), b.format.as_str(), name)?;
    if b.base64_bytes != data_len {
        return Err(not_restorable(format!(
            "{name}: bundle.data is {data_len} characters long but base64_bytes says {} (truncated?)",
            b.base64_bytes
        )));
    }
    Ok(Doc { lok })
}

/// Whether the snapshot carries other agents' sessions in `bundles` (checked element by
/// element when they are restored).
fn carries_elements(lok: &ShellLok) -> bool {
    lok.extra.get("bundles").and_then(Value::as_array).is_some_and(|list| !list.is_empty())
}

/// Refuses a bundle of a kind or format this lokust does not restore.
pub fn check_bundle_header(kind: &str, format: &str, name: &str) -> anyhow::Result<()> {
    if kind != bundle::KIND {
        return Err(not_restorable(format!(
            "{name}: bundle.kind is {:?}; this lokust restores {:?}",
            crate::sanitize::for_terminal(kind),
            bundle::KIND
        )));
    }
    if format != bundle::FORMAT {
        return Err(not_restorable(format!(
            "{name}: bundle.format is {:?}; this lokust reads {:?}",
            crate::sanitize::for_terminal(format),
            bundle::FORMAT
        )));
    }
    Ok(())
}

/// Checks what is known of a document before its data streams (standard input).
fn validate_partial(so_far: &Map<String, Value>, name: &str) -> anyhow::Result<Option<u64>> {
    let mut probe = so_far.clone();
    // Fields that may still follow are filled in so the typed check only judges what is here.
    let complete = probe.contains_key("session") && probe.contains_key("shell");
    if let Some(Value::Object(b)) = probe.get_mut("bundle") {
        let kind = b.get("kind").and_then(Value::as_str);
        let format = b.get("format").and_then(Value::as_str);
        if let (Some(k), Some(f)) = (kind, format) {
            check_bundle_header(k, f, name)?;
        } else if let Some(k) = kind {
            check_bundle_header(k, bundle::FORMAT, name)?;
        } else if let Some(f) = format {
            check_bundle_header(bundle::KIND, f, name)?;
        }
    }
    if let Some(session) = probe.get("session") {
        let kind = session.get("kind");
        if kind.is_none() || kind == Some(&Value::Null) {
            return Err(not_restorable(format!(
                "{name} is a coordination session, which holds no terminal or Claude Code project to restore; \
                 read it with `lokust-shell inspect {name}`"
            )));
        }
    }
    if complete {
        if let Some(Value::Object(b)) = probe.get_mut("bundle") {
            for (k, v) in [("kind", bundle::KIND), ("format", bundle::FORMAT)] {
                b.entry(k).or_insert(Value::String(v.into()));
            }
            b.entry("uncompressed_bytes").or_insert(0.into());
            b.entry("base64_bytes").or_insert(0.into());
            b.insert("data".into(), Value::String(String::new()));
        }
        Lok::from_value(Value::Object(probe.clone()), name)?;
    } else if probe.contains_key("format_version") {
        let v = &probe["format_version"];
        let fake =
            serde_json::json!({"format_version": v, "session": {"kind": "shell", "id": "x"}, "shell": {}});
        if let Err(e) = Lok::from_value(fake, name) {
            return Err(e.into());
        }
    }
    Ok(so_far.get("bundle").and_then(|b| b.get("uncompressed_bytes")).and_then(Value::as_u64))
}

// ---------------------------------------------------------------------------
// The restore

/// Restores the bundle in `source` to `opts.to`. See the module docs for the order of
/// work; with `dry_run` nothing is written. An interruption (after
/// [`crate::interrupt::install_signal_handlers`]) is an error holding [`Interrupted`]; files that exist
/// with other content are not an error but [`Action::Refuse`] entries in the outcome.
///
/// ```no_run
/// use lokust::restore::{self, RestoreOptions, Source, DEFAULT_MAX_SIZE};
/// let opts = RestoreOptions {
///     to: "/home/me/src/project".into(),
///     claude_dir: "/home/me/.claude".into(),
///     home: Some("/home/me".into()),
///     dry_run: false,
///     force: false,
///     max_size: DEFAULT_MAX_SIZE,
///     // Never the sender's MCP servers, tools or trust without asking.
///     trust_config: false,
///     only_session: None,
/// };
/// let outcome = restore::restore(Source::File("s.lok".into()), &opts)?;
/// println!("cd {} && claude --resume {}", outcome.project_dir.display(),
///          outcome.newest_session.unwrap_or_default());
/// # anyhow::Ok(())
/// ```
pub fn restore(source: Source, opts: &RestoreOptions) -> Result<RestoreOutcome, RestoreError> {
    run(source, opts).map_err(error::classify)
}

fn run(source: Source, opts: &RestoreOptions) -> anyhow::Result<RestoreOutcome> {
    let name = source.name();
    let new_dir = paths::predict_realpath(&opts.to)
        .with_context(|| format!("cannot restore to {}", opts.to.display()))?;
    let new_dir_str = new_dir.to_str().context("the target path is not valid UTF-8")?.to_string();
    let projects = opts.claude_dir.join("projects");
    let mut cleaned = Vec::new();
    if !opts.dry_run {
        cleaned = clean_stale(&projects);
    }
    match source {
        Source::File(path) => {
            let file = File::open(&path).with_context(|| format!("could not read {name}"))?;
            if !file.metadata().is_ok_and(|m| m.is_file()) {
                // A pipe, such as <(ssh host lokust-shell-snapshot --bundle): read it once.
                return stream(Box::new(file), &name, opts, &new_dir, &new_dir_str, &projects, cleaned);
            }
            let mut scanner = scan::Scanner::new(BufReader::with_capacity(256 * 1024, file), 0);
            let scanned = scanner.scan(None).map_err(|e| doc_error(e, &name))?;
            let doc = validate(scanned.doc, &name, scanned.data_len)?;
            if doc.lok.bundle.is_none() {
                return elements_only(opts, &new_dir, doc.lok, cleaned);
            }
            let offset = scanned.data_offset.context("no bundle.data")?;
            let mut file = File::open(&path).with_context(|| format!("could not read {name}"))?;
            file.seek(SeekFrom::Start(offset))?;
            let mut data = DataUntilQuote { r: BufReader::with_capacity(256 * 1024, file), done: false };
            let declared = doc.lok.bundle.as_ref().map(|b| b.uncompressed_bytes);
            let mut job = Job::new(opts, &new_dir, &new_dir_str, &projects)?;
            job.lok = Some(doc.lok.clone());
            job.map_from_lok();
            let budget = Budget { declared, ceiling: opts.max_size };
            job.run_data(unpack::Data::Sendable(&mut data), budget).map_err(|e| data_error(e, &name))?;
            job.finish(doc.lok, cleaned)
        }
        Source::Stdin => {
            let stdin = io::stdin();
            stream(Box::new(stdin.lock()), &name, opts, &new_dir, &new_dir_str, &projects, cleaned)
        }
        Source::Reader(r, _) => stream(r, &name, opts, &new_dir, &new_dir_str, &projects, cleaned),
        Source::Local(local) if local.plan.is_none() => elements_only(opts, &new_dir, local.lok, cleaned),
        Source::Local(local) => {
            let mut job = Job::new(opts, &new_dir, &new_dir_str, &projects)?;
            job.stage_local(&local)?;
            job.lok = Some(local.lok.clone());
            job.map_from_lok();
            job.finish(local.lok, cleaned)
        }
    }
}

/// The document of a plain `.lok` file, checked as a restore checks it, its bundle's data
/// stepped over and never inflated: what a plan of its elements needs.
pub fn read_document(path: &Path) -> anyhow::Result<ShellLok> {
    let name = path.display().to_string();
    let file = File::open(path).with_context(|| format!("could not read {name}"))?;
    let mut scanner = scan::Scanner::new(BufReader::with_capacity(256 * 1024, file), 0);
    let scanned = scanner.scan(None).map_err(|e| doc_error(e, &name))?;
    Ok(validate(scanned.doc, &name, scanned.data_len)?.lok)
}

fn stream(
    r: Box<dyn Read + '_>,
    name: &str,
    opts: &RestoreOptions,
    new_dir: &Path,
    new_dir_str: &str,
    projects: &Path,
    cleaned: Vec<PathBuf>,
) -> anyhow::Result<RestoreOutcome> {
    let mut scanner = scan::Scanner::new(BufReader::with_capacity(256 * 1024, r), 0);
    let mut job = Job::new(opts, new_dir, new_dir_str, projects)?;
    let mut ran = false;
    let mut consume = |so_far: &Map<String, Value>, data: &mut dyn Read| -> anyhow::Result<()> {
        let declared = validate_partial(so_far, name)?;
        if let Some(cwd) = so_far.get("shell").and_then(|s| s.get("cwd")).and_then(Value::as_str) {
            job.add_old(cwd);
        }
        ran = true;
        job.run_data(unpack::Data::Here(data), Budget { declared, ceiling: opts.max_size })
            .map_err(|e| data_error(e, name))
    };
    let scanned = scanner.scan(Some(&mut consume)).map_err(|e| doc_error(e, name));
    let scanned = match scanned {
        Ok(s) => s,
        Err(e) => {
            job.abort();
            return Err(e);
        }
    };
    let doc = match validate(scanned.doc, name, scanned.data_len) {
        Ok(d) => d,
        Err(e) => {
            job.abort();
            return Err(e);
        }
    };
    if !ran {
        job.abort();
        if doc.lok.bundle.is_none() {
            return elements_only(opts, new_dir, doc.lok, cleaned);
        }
        return Err(not_restorable(format!("{name} has no bundle.data")));
    }
    let declared = doc.lok.bundle.as_ref().map(|b| b.uncompressed_bytes).unwrap_or(0);
    let allowed = declared.saturating_add(declared / 4).saturating_add(1 << 20);
    if job.tar_bytes > allowed {
        job.abort();
        return Err(RestoreError::Data {
            name: name.into(),
            reason: format!(
                "the bundle inflates past its declared uncompressed_bytes ({declared}); refusing a decompression bomb"
            ),
        }
        .into());
    }
    job.lok = Some(doc.lok.clone());
    job.map_from_lok();
    job.finish(doc.lok, cleaned)
}

/// A `.lok` that carries only other agents' sessions, no Claude Code project: nothing of
/// Claude Code's is placed, and the target directory is made for the agents' restores.
fn elements_only(
    opts: &RestoreOptions,
    new_dir: &Path,
    lok: ShellLok,
    cleaned: Vec<PathBuf>,
) -> anyhow::Result<RestoreOutcome> {
    let project_dir = if opts.dry_run {
        new_dir.to_path_buf()
    } else {
        fs::create_dir_all(&opts.to).with_context(|| format!("could not create {}", opts.to.display()))?;
        fs::canonicalize(&opts.to).with_context(|| format!("could not resolve {}", opts.to.display()))?
    };
    Ok(RestoreOutcome::empty(opts.dry_run, project_dir, lok, cleaned))
}

fn not_restorable(message: String) -> anyhow::Error {
    RestoreError::NotRestorable(message).into()
}

fn doc_error(e: anyhow::Error, name: &str) -> anyhow::Error {
    error::reading(e, name).into()
}

fn data_error(e: anyhow::Error, name: &str) -> anyhow::Error {
    error::data(e, name).into()
}

/// Reads the base64 characters from a file positioned at the start of `bundle.data`.
struct DataUntilQuote<R> {
    r: R,
    done: bool,
}

impl<R: BufRead> Read for DataUntilQuote<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if self.done || out.is_empty() {
            return Ok(0);
        }
        let buf = self.r.fill_buf()?;
        if buf.is_empty() {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "the file ends inside bundle.data"));
        }
        let want = out.len().min(buf.len());
        match memchr::memchr2(b'"', b'\\', &buf[..want]) {
            Some(0) if buf[0] == b'"' => {
                self.done = true;
                Ok(0)
            }
            Some(0) => {
                // The scan accepted only `\/`.
                if buf.len() < 2 {
                    self.r.consume(1);
                    let next = self.r.fill_buf()?.first().copied();
                    if next != Some(b'/') {
                        return Err(io::Error::other("bundle.data holds a JSON escape"));
                    }
                    self.r.consume(1);
                } else {
                    self.r.consume(2);
                }
                out[0] = b'/';
                Ok(1)
            }
            Some(i) => {
                out[..i].copy_from_slice(&buf[..i]);
                self.r.consume(i);
                Ok(i)
            }
            None => {
                out[..want].copy_from_slice(&buf[..want]);
                self.r.consume(want);
                Ok(want)
            }
        }
    }
}

/// A restore in progress: the staging dir and what has been learned.
struct Job<'a> {
    opts: &'a RestoreOptions,
    new_dir: PathBuf,
    new_dir_str: String,
    projects: PathBuf,
    /// Dirs created for staging (the projects dir itself, when it was missing).
    created: Vec<PathBuf>,
    staging: Option<PathBuf>,
    map: PathMap,
    /// Entries seen: relative path, size, mtime, whether a directory.
    entries: Vec<(PathBuf, u64, u64, bool)>,
    /// In a dry run, each file's content as it would be written: (length, CRC).
    fingerprints: BTreeMap<PathBuf, (u64, u32)>,
    /// Transcripts written before the path map was known; rewritten afterwards.
    unmapped: Vec<PathBuf>,
    /// Every JSONL file staged.
    transcripts: Vec<PathBuf>,
    old_slot: String,
    tar_bytes: u64,
    lok: Option<ShellLok>,
    manifest_dir: Option<String>,
    /// The carried `.claude.json` entry and prompt history, kept in memory (they are
    /// small) so a dry run can show what they would change outside the slot.
    carried_config: Option<Vec<u8>>,
    carried_history: Option<Vec<u8>>,
    /// The project's memory notes: plain text whose absolute paths move too.
    memory_notes: Vec<PathBuf>,
    /// The cwd the transcripts record was read from the first of them and is covered.
    recorded_cwd_read: bool,
    /// Staged conversations already found to record no cwd: not read again.
    without_cwd: usize,
    /// In a dry run, the transcripts read before the recorded cwd was found, held until it
    /// is (or the bundle ends), so their fingerprints are what the restore would write.
    held_back: Vec<(PathBuf, Vec<u8>)>,
    held_back_bytes: u64,
    /// While a project on this machine is staged: the threads laying its transcripts,
    /// and the map they rewrite by (complete once the recorded cwd is read).
    layers: Option<lay::Layers>,
    final_map: Option<std::sync::Arc<PathMap>>,
    /// A project read where it is on this machine (a move), not from a bundle.
    read_in_place: bool,
}

/// What a dry run holds back in memory waiting for the recorded cwd; past it, a file's
/// fingerprint is taken without (and may differ from what the restore writes).
const MAX_HELD_BACK: u64 = 64 << 20;

impl<'a> Job<'a> {
    fn new(
        opts: &'a RestoreOptions,
        new_dir: &Path,
        new_dir_str: &str,
        projects: &Path,
    ) -> anyhow::Result<Job<'a>> {
        Ok(Job {
            opts,
            new_dir: new_dir.to_path_buf(),
            new_dir_str: new_dir_str.to_string(),
            projects: projects.to_path_buf(),
            created: Vec::new(),
            staging: None,
            map: PathMap::new(new_dir_str),
            entries: Vec::new(),
            fingerprints: BTreeMap::new(),
            unmapped: Vec::new(),
            transcripts: Vec::new(),
            old_slot: String::new(),
            tar_bytes: 0,
            lok: None,
            manifest_dir: None,
            carried_config: None,
            carried_history: None,
            memory_notes: Vec::new(),
            recorded_cwd_read: false,
            without_cwd: 0,
            held_back: Vec::new(),
            held_back_bytes: 0,
            layers: None,
            final_map: None,
            read_in_place: false,
        })
    }

    fn add_old(&mut self, old: &str) {
        self.map.add(old);
    }

    /// The snapshot's cwd is an old path too, unless it lies inside the bundled project
    /// (a snapshot taken in a subdirectory): then the project's own path covers it.
    fn map_from_lok(&mut self) {
        if let Some(lok) = &self.lok {
            let cwd = lok.shell.cwd.clone();
            if !self.manifest_dir.as_deref().is_some_and(|dir| is_below(&cwd, dir)) {
                self.map.add(&cwd);
            }
        }
    }

    /// Makes the staging dir beside the target slot (not in dry-run).
    fn staging(&mut self) -> anyhow::Result<PathBuf> {
        if let Some(s) = &self.staging {
            return Ok(s.clone());
        }
        let mut missing = Vec::new();
        let mut dir = self.projects.clone();
        while !dir.exists() {
            missing.push(dir.clone());
            if !dir.pop() {
                break;
            }
        }
        for d in missing.iter().rev() {
            match fs::DirBuilder::new().mode(0o700).create(d) {
                Ok(()) => self.created.push(d.clone()),
                // Another restore made it meanwhile: it is that one's, and stays.
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists && d.is_dir() => {}
                Err(e) => return Err(anyhow!("could not create {}: {e}", d.display())),
            }
        }
        let stage = tempfile::Builder::new()
            .prefix(&format!("{STAGING_PREFIX}{}-", std::process::id()))
            .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700))
            .tempdir_in(&self.projects)
            .with_context(|| format!("could not create a temp dir in {}", self.projects.display()))?
            .keep();
        // The tree becomes the slot by rename: private from the start.
        fs::DirBuilder::new().mode(0o700).create(stage.join("tree"))?;
        self.staging = Some(stage.clone());
        Ok(stage)
    }

    /// Removes the staging dir and any dir made for it.
    fn abort(&mut self) {
        if let Some(s) = self.staging.take() {
            let _ = fs::remove_dir_all(&s);
        }
        for d in self.created.drain(..).rev() {
            let _ = fs::remove_dir(&d);
        }
    }

    /// Streams the bundle into the staging dir (or, in dry-run, through the checks only).
    fn run_data(&mut self, data: unpack::Data<'_>, budget: Budget) -> anyhow::Result<()> {
        let result = self.unpack_into(data, budget);
        if result.is_err() {
            self.abort();
        }
        result
    }

    fn unpack_into(&mut self, data: unpack::Data<'_>, budget: Budget) -> anyhow::Result<()> {
        let tree = if self.opts.dry_run { None } else { Some(self.staging()?.join("tree")) };
        let unpacked = data.unpack(budget, &mut |entry| self.stage(entry, tree.as_deref()))?;
        self.old_slot = unpacked.root;
        self.tar_bytes = unpacked.tar_bytes;
        Ok(())
    }

    /// A project on this machine, read where `local` says it is now.
    fn stage_local(&mut self, local: &Local) -> anyhow::Result<()> {
        let Some(plan) = &local.plan else { return Ok(()) };
        self.read_in_place = true;
        let tree = if self.opts.dry_run { None } else { Some(self.staging()?.join("tree")) };
        self.layers = tree.is_some().then(lay::Layers::new);
        let visited = plan.visit_local(&local.at, &mut |entry| self.stage(entry, tree.as_deref()));
        // Every thread is done with the staging dir before it is kept or removed.
        let laid = self.layers.take().map_or(Ok(()), lay::Layers::finish);
        self.final_map = None;
        let result = visited.and(laid);
        if result.is_err() {
            self.abort();
        }
        self.old_slot = plan.slot.clone();
        result
    }

    /// One entry of the bundle staged below `tree`, or only learned in a dry run.
    fn stage(&mut self, entry: bundle::unpack::Entry<'_>, tree: Option<&Path>) -> anyhow::Result<()> {
        {
            if interrupted() {
                return Err(anyhow!(Interrupted));
            }
            let is_manifest = entry.rel == Path::new(EXTRAS).join("manifest.json");
            // One conversation: the rest is not even staged (a new slot is renamed into
            // place whole).
            if let Some(id) = &self.opts.only_session
                && !is_manifest
                && !of_session(&entry.rel, id)
            {
                return Ok(());
            }
            self.entries.push((entry.rel.clone(), entry.size, entry.mtime, entry.is_dir));
            if is_manifest && entry.size < (1 << 20) {
                return self.take_manifest(entry, tree);
            }
            let extra = Path::new(EXTRAS);
            let in_memory = if entry.rel == extra.join("claude-project.json") {
                Some(&mut self.carried_config)
            } else if entry.rel == extra.join("history.jsonl") {
                Some(&mut self.carried_history)
            } else {
                None
            };
            if let Some(slot) = in_memory {
                if entry.size > MAX_CARRIED_TEXT {
                    return Err(anyhow!(unpack::UnpackError::Refused(format!(
                        "{} is larger than {}",
                        entry.rel.display(),
                        crate::human::size(MAX_CARRIED_TEXT)
                    ))));
                }
                // Rewritten at commit, once the path map is complete.
                let mut text = Vec::new();
                entry.reader.read_to_end(&mut text)?;
                *slot = Some(text);
                return Ok(());
            }
            let Some(tree) = tree else {
                // A dry run writes nothing, but learns what each file would hold.
                if !entry.is_dir {
                    self.learn_fingerprint(entry)?;
                }
                return Ok(());
            };
            let dest = tree.join(&entry.rel);
            if entry.is_dir {
                if !entry.rel.as_os_str().is_empty() {
                    // Recursive: with --session the folders above may have been skipped.
                    match fs::DirBuilder::new().recursive(true).mode(0o700).create(&dest) {
                        Ok(()) => {}
                        Err(e) if e.kind() == io::ErrorKind::AlreadyExists && dest.is_dir() => {}
                        Err(e) => {
                            return Err(anyhow!(unpack::UnpackError::Refused(format!(
                                "could not create {}: {e}",
                                entry.rel.display()
                            ))));
                        }
                    }
                }
                return Ok(());
            }
            if let Some(parent) = dest.parent() {
                fs::DirBuilder::new().recursive(true).mode(0o700).create(parent)?;
            }
            if is_text_rewritten(&entry.rel) {
                self.transcripts.push(entry.rel.clone());
                if self.map.is_empty() {
                    self.unmapped.push(entry.rel.clone());
                    write_new(&dest, entry.reader)?;
                } else if let (true, Some(file), Some(layers)) =
                    (self.recorded_cwd_read, entry.local, &self.layers)
                {
                    let map = self.final_map.get_or_insert_with(|| std::sync::Arc::new(self.map.clone()));
                    layers.lay(lay::Lay {
                        src: bundle::WholeFile::new(file.try_clone()?, entry.size, &entry.rel),
                        dest,
                        map: std::sync::Arc::clone(map),
                    })?;
                } else {
                    let map = &self.map;
                    write_new_with(&dest, |out| map.rewrite_stream(entry.reader, out))
                        .with_context(|| format!("could not lay {}", entry.rel.display()))?;
                    // Read as soon as one is staged, so the files after it are written once.
                    if !self.recorded_cwd_read && top_level_transcript(&entry.rel).is_some() {
                        self.cover_recorded_cwd()?;
                    }
                }
            } else {
                if is_memory_note(&entry.rel) {
                    self.memory_notes.push(entry.rel.clone());
                }
                write_new(&dest, entry.reader)?;
            }
            Ok(())
        }
    }

    /// The bundle's manifest: the old project folder and cwd it names start the map of
    /// old paths; it is staged as it came.
    fn take_manifest(&mut self, entry: bundle::unpack::Entry<'_>, tree: Option<&Path>) -> anyhow::Result<()> {
        let mut text = Vec::new();
        entry.reader.read_to_end(&mut text)?;
        if let Ok(v) = serde_json::from_slice::<Value>(&text) {
            for key in ["project_dir", "cwd"] {
                if let Some(p) = v.get(key).and_then(Value::as_str) {
                    self.map.add(p);
                    if key == "project_dir" {
                        self.manifest_dir = Some(p.to_string());
                        self.map.remove_below(p);
                    }
                }
            }
        }
        if let Some(tree) = tree {
            let dest = tree.join(&entry.rel);
            if let Some(parent) = dest.parent() {
                fs::DirBuilder::new().recursive(true).mode(0o700).create(parent)?;
            }
            write_new(&dest, &mut &text[..])?;
        }
        Ok(())
    }

    /// What a file would hold once rewritten, for a dry run to compare with the receiver's.
    fn learn_fingerprint(&mut self, entry: bundle::unpack::Entry<'_>) -> anyhow::Result<()> {
        // As the restore rewrites them again once the recorded cwd is known, a dry run
        // holds the transcripts before it back.
        if is_text_rewritten(&entry.rel)
            && !self.recorded_cwd_read
            && self.held_back_bytes.saturating_add(entry.size) <= MAX_HELD_BACK
        {
            let mut bytes = Vec::new();
            entry.reader.take(MAX_HELD_BACK).read_to_end(&mut bytes)?;
            self.held_back_bytes += bytes.len() as u64;
            let cwd = top_level_transcript(&entry.rel).and_then(|_| first_cwd_in(&bytes[..]));
            self.held_back.push((entry.rel, bytes));
            if let Some(cwd) = cwd {
                self.recorded_cwd_read = true;
                self.fingerprint_held_back(Some(&cwd))?;
            }
            return Ok(());
        }
        let mut sink = Fingerprint::default();
        if is_memory_note(&entry.rel) {
            self.map.plain().rewrite_stream(entry.reader, &mut sink)?;
        } else if is_text_rewritten(&entry.rel) {
            self.map.rewrite_stream(entry.reader, &mut sink)?;
        } else {
            io::copy(entry.reader, &mut sink)?;
        }
        self.fingerprints.insert(entry.rel, (sink.len, sink.crc.finalize()));
        Ok(())
    }

    /// The fingerprints of the transcripts a dry run held back, as the restore writes them:
    /// rewritten by the map, then again for the recorded `cwd`, which joins the map.
    fn fingerprint_held_back(&mut self, cwd: Option<&str>) -> anyhow::Result<()> {
        let extra = cwd.and_then(|c| self.recorded_map(c));
        for (rel, bytes) in std::mem::take(&mut self.held_back) {
            let mut once = Vec::with_capacity(bytes.len());
            self.map.rewrite_stream(&mut &bytes[..], &mut once)?;
            let mut sink = Fingerprint::default();
            match &extra {
                Some(extra) => extra.rewrite_stream(&mut &once[..], &mut sink)?,
                None => sink.write_all(&once)?,
            }
            self.fingerprints.insert(rel, (sink.len, sink.crc.finalize()));
        }
        self.held_back_bytes = 0;
        if let (Some(cwd), Some(_)) = (cwd, extra) {
            self.map.add(cwd);
        }
        Ok(())
    }

    /// The map of the recorded `cwd` alone to the new path, when it is another path than
    /// the ones the map has (not the new path, above or below it).
    fn recorded_map(&self, cwd: &str) -> Option<PathMap> {
        let new = &self.new_dir_str;
        if cwd == new || cwd.starts_with(&format!("{new}/")) || new.starts_with(&format!("{cwd}/")) {
            return None;
        }
        let mut extra = PathMap::new(new);
        extra.add(cwd);
        (!extra.is_empty()).then_some(extra)
    }

    /// The events' own cwd is the truth (docs/claude-code.md): when the snapshot's
    /// cwd and the manifest did not name it (a bundle from another writer, a link in the
    /// old path), the transcripts staged so far get a second pass for it, and the ones
    /// staged after are rewritten for it in their one pass.
    fn cover_recorded_cwd(&mut self) -> anyhow::Result<()> {
        if self.recorded_cwd_read {
            return Ok(());
        }
        let Some(tree) = self.staging.as_ref().map(|s| s.join("tree")) else { return Ok(()) };
        let top: Vec<&PathBuf> =
            self.transcripts.iter().filter(|r| top_level_transcript(r).is_some()).collect();
        let mut found = None;
        for rel in &top[self.without_cwd.min(top.len())..] {
            found = first_cwd(&tree.join(rel));
            if found.is_some() {
                break;
            }
            self.without_cwd += 1;
        }
        let Some(cwd) = found else { return Ok(()) };
        self.recorded_cwd_read = true;
        let Some(extra) = self.recorded_map(&cwd) else { return Ok(()) };
        for rel in &self.transcripts {
            let path = tree.join(rel);
            let tmp = path.with_extension("lokust-tmp");
            {
                let mut src = File::open(&path)?;
                write_new_with(&tmp, |out| extra.rewrite_stream(&mut src, out))?;
            }
            fs::rename(&tmp, &path)?;
        }
        self.map.add(&cwd);
        Ok(())
    }

    /// Validated and staged: place everything (or describe it, in dry-run).
    fn finish(mut self, lok: ShellLok, cleaned: Vec<PathBuf>) -> anyhow::Result<RestoreOutcome> {
        let result = self.commit(lok, cleaned);
        self.abort();
        result
    }

    fn commit(&mut self, lok: ShellLok, cleaned: Vec<PathBuf>) -> anyhow::Result<RestoreOutcome> {
        if let Some(id) = self.opts.only_session.clone() {
            self.entries.retain(|(rel, ..)| of_session(rel, &id));
            self.carried_config = None;
            self.carried_history = None;
            if !self.entries.iter().any(|(rel, ..)| top_level_transcript(rel).as_deref() == Some(id.as_str()))
            {
                // Not a Claude Code conversation of this bundle: nothing of it is placed.
                return Ok(RestoreOutcome::empty(self.opts.dry_run, self.new_dir.clone(), lok, cleaned));
            }
        }
        self.rewrite_unmapped()?;
        self.cover_recorded_cwd()?;
        // No transcript records a cwd: the ones held back are as the map makes them.
        self.fingerprint_held_back(None)?;
        self.rewrite_memory_notes()?;
        if interrupted() {
            bail!(Interrupted);
        }
        // The conversations, oldest to newest by their mtime in the bundle.
        let mut transcripts: Vec<(u64, String)> = self
            .entries
            .iter()
            .filter(|(_, _, _, dir)| !dir)
            .filter_map(|(rel, _, mtime, _)| top_level_transcript(rel).map(|id| (*mtime, id)))
            .collect();
        transcripts.sort();
        let sessions: Vec<String> = transcripts.iter().map(|(_, id)| id.clone()).collect();
        let newest_session = sessions.last().cloned();

        if !self.opts.dry_run {
            fs::create_dir_all(&self.opts.to)
                .with_context(|| format!("could not create {}", self.opts.to.display()))?;
        }
        let project_dir = if self.opts.dry_run {
            self.new_dir.clone()
        } else {
            fs::canonicalize(&self.opts.to)
                .with_context(|| format!("could not resolve {}", self.opts.to.display()))?
        };
        if project_dir != self.new_dir {
            // The path resolved differently once created (a link appeared): follow it.
            let s = project_dir.to_string_lossy().into_owned();
            self.map.set_new(&s);
            self.new_dir_str = s;
        }
        let slot = claude::slot_name(&self.new_dir_str);
        let slot_dir =
            claude::find_slot_dir(&self.projects, &slot).unwrap_or_else(|| self.projects.join(&slot));
        let slot = slot_dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or(slot);

        let now = crate::clock::now().as_secs();
        let times = if self.read_in_place {
            times::Retimer::same_clock(now)
        } else {
            times::Retimer::new(
                transcripts.iter().map(|(m, _)| *m),
                now,
                times::cleanup_days(&self.opts.claude_dir, Some(&self.new_dir)),
            )
        };

        let mut outcome = RestoreOutcome {
            claude_bundle: true,
            slot: slot.clone(),
            slot_dir: slot_dir.clone(),
            old_slot: self.old_slot.clone(),
            path_map: self.map.pairs(),
            sessions: sessions.clone(),
            newest_session,
            duplicates: duplicates(&self.projects, &slot, &sessions),
            ..RestoreOutcome::empty(self.opts.dry_run, project_dir.clone(), lok, cleaned)
        };

        let layout = layout(&self.entries, &slot_dir, &self.opts.claude_dir);
        // A link on the way to any file refuses the whole restore before anything is
        // placed, and the dry run says so too.
        let folders: std::collections::BTreeSet<&Path> =
            layout.files.iter().filter_map(|p| p.dest.parent()).collect();
        for folder in folders {
            // A store's own folder (`todos`) is a root: the user may have made it a link.
            if folder.parent() == Some(self.opts.claude_dir.as_path()) {
                continue;
            }
            let (root, rel) = confined(&self.opts.claude_dir, folder)?;
            crate::place::check_folder(&root, rel)?;
        }
        self.plan_files(&layout, &times, &mut outcome)?;
        keep_with_their_conversation(&layout, &sessions, &mut outcome.files);
        if !self.opts.dry_run {
            self.apply(&layout, &slot_dir, &mut outcome)?;
        }
        // The line to resume names a conversation of the bundle's, never one kept.
        outcome.newest_session = sessions
            .iter()
            .rev()
            .find(|id| {
                layout.files.iter().zip(&outcome.files).any(|(f, placed)| {
                    top_level_transcript(&f.rel).as_deref() == Some(id.as_str())
                        && placed.action != Action::Refuse
                })
            })
            .cloned();
        self.apply_outside_slot(&mut outcome);
        Ok(outcome)
    }

    /// Files staged before the map of old paths was known (a bundle with no manifest and a
    /// snapshot with no cwd): the map is taken from the first event that records a cwd,
    /// and they are rewritten with it.
    fn rewrite_unmapped(&mut self) -> anyhow::Result<()> {
        let Some(tree) = self.staging.as_ref().map(|s| s.join("tree")) else { return Ok(()) };
        if self.map.is_empty()
            && let Some(cwd) = self.unmapped.iter().find_map(|rel| first_cwd(&tree.join(rel)))
        {
            self.map.add(&cwd);
        }
        for rel in std::mem::take(&mut self.unmapped) {
            let path = tree.join(&rel);
            let tmp = path.with_extension("lokust-tmp");
            {
                let mut src = File::open(&path)?;
                let map = &self.map;
                write_new_with(&tmp, |out| map.rewrite_stream(&mut src, out))?;
            }
            fs::rename(&tmp, &path)?;
        }
        Ok(())
    }

    /// What becomes of each file of the layout, in `outcome.files`: written, the same as
    /// the receiver's, kept or replaced; each staged file gets its time in the window.
    fn plan_files(
        &self,
        layout: &Layout,
        times: &times::Retimer,
        outcome: &mut RestoreOutcome,
    ) -> anyhow::Result<()> {
        let tree = self.staging.as_ref().map(|s| s.join("tree"));
        for p in &layout.files {
            let staged = tree.as_ref().map(|t| t.join(&p.rel));
            let exists = fs::symlink_metadata(&p.dest).is_ok();
            let same = exists
                && match &staged {
                    Some(s) => same_content(s, &p.dest)?,
                    None => self.fingerprints.get(&p.rel) == fingerprint(&p.dest).as_ref(),
                };
            let bytes = match &staged {
                Some(s) => fs::metadata(s).map(|m| m.len()).unwrap_or(p.size),
                None => self.fingerprints.get(&p.rel).map_or(p.size, |f| f.0),
            };
            if let Some(s) = &staged {
                set_times(s, times.map(p.mtime));
            }
            outcome.files.push(Placed {
                path: p.dest.clone(),
                bytes,
                action: action(exists, same, self.opts.force),
            });
        }
        Ok(())
    }

    /// Puts the staged tree in place as `outcome.files` planned it, through the placement
    /// layer every agent uses, recording what each file's action became: a new slot goes
    /// in with one rename (its files are all new), then the extras file by file; into an
    /// existing slot every file is merged.
    fn apply(
        &mut self,
        layout: &Layout,
        slot_dir: &Path,
        outcome: &mut RestoreOutcome,
    ) -> anyhow::Result<()> {
        let staging = self.staging.clone().context("no staging dir")?;
        let tree = staging.join("tree");
        let claude_dir = self.opts.claude_dir.clone();
        let now = std::time::SystemTime::now();
        let extras = Path::new(EXTRAS);
        let new_slot = fs::symlink_metadata(slot_dir).is_err();
        let mut merged: Vec<usize> = (0..layout.files.len()).collect();
        // The extras folder is placed below the config dir, not in the slot: a new slot
        // goes in without it.
        let stage_extras = staging.join("extras");
        let from_staged = |rel: &Path| match rel.strip_prefix(extras) {
            Ok(inner) if new_slot => stage_extras.join(inner),
            _ => tree.join(rel),
        };
        if new_slot {
            if tree.join(EXTRAS).exists() {
                fs::rename(tree.join(EXTRAS), &stage_extras)?;
            }
            let (root, rel) = confined(&claude_dir, slot_dir)?;
            let mut slot = place::Plan::new("Claude Code", "conversation", slot_dir.display().to_string());
            slot.items.push(place::Placement {
                kind: place::Kind::Conversation,
                session: String::new(),
                root,
                rel: rel.to_path_buf(),
                content: place::Content::Staged(tree.clone()),
                step: place::Step::Write,
            });
            let placed = place::apply(&slot, now).map_err(|e| anyhow!("{e}"))?;
            if placed.placed.first() != Some(&Some(place::Placed::Written)) {
                // Another restore created the slot since this one looked: nothing of
                // this run was placed, and running again merges file by file.
                bail!(
                    "{} was created by another restore while this one ran; nothing was changed \
                     by this one: run it again to merge",
                    slot_dir.display()
                )
            }
            self.created.clear();
            merged.retain(|&i| layout.files[i].rel.starts_with(extras));
        } else {
            // The bundle's own folders, empty ones too, made with no link followed on the way.
            for dir in std::iter::once(slot_dir).chain(layout.dirs.iter().map(PathBuf::as_path)) {
                let (root, rel) = confined(&claude_dir, dir)?;
                place::open_below(&root, rel)?;
            }
        }
        // Each transcript before the files beside it: one found kept as it is placed (it
        // appeared meanwhile) keeps them out too.
        merged.sort_by_key(|&i| top_level_transcript(&layout.files[i].rel).is_none());
        let mut plan = place::Plan::new("Claude Code", "conversation", slot_dir.display().to_string());
        for &i in &merged {
            let session = session_of(&layout.files[i].rel, &outcome.sessions).unwrap_or_default();
            plan.items.push(file_placement(
                &claude_dir,
                &layout.files[i],
                &outcome.files[i],
                session,
                &from_staged,
            )?);
        }
        let in_slot = layout.files.len() - merged.len();
        let partly = |reached: usize, backups: Vec<PathBuf>| error::PartlyPlaced {
            placed: in_slot + reached,
            total: layout.files.len(),
            slot: slot_dir.to_path_buf(),
            backups,
        };
        let done = match place::apply(&plan, now) {
            Ok(done) if done.interrupted => bail!(partly(done.placed.len(), done.backups)),
            Ok(done) => done,
            // A signal that cut a system call short surfaces as its failure.
            Err(place::Failure::Stopped { at, backups, .. }) if interrupted() => bail!(partly(at, backups)),
            Err(e) => return Err(anyhow!("{e}")),
        };
        for (&i, placed) in merged.iter().zip(&done.placed) {
            let file = &mut outcome.files[i];
            file.action = match placed {
                Some(place::Placed::Written) => file.action,
                Some(place::Placed::Same) => Action::Same,
                Some(place::Placed::Kept) | None => Action::Refuse,
            };
        }
        outcome.backups.extend(done.backups);
        Ok(())
    }

    /// Rewrites the staged memory notes' absolute paths, as plain text.
    fn rewrite_memory_notes(&mut self) -> anyhow::Result<()> {
        let Some(tree) = self.staging.as_ref().map(|s| s.join("tree")) else { return Ok(()) };
        if self.map.is_empty() {
            return Ok(());
        }
        let plain = self.map.plain();
        for rel in &self.memory_notes {
            let path = tree.join(rel);
            let tmp = path.with_extension("lokust-tmp");
            {
                let mut src = File::open(&path)?;
                write_new_with(&tmp, |out| plain.rewrite_stream(&mut src, out))?;
            }
            fs::rename(&tmp, &path)?;
        }
        Ok(())
    }

    /// The prompt history and the project's `.claude.json` entry: what lives outside the
    /// slot. The conversations are in place by now, so a problem here is a warning, not
    /// a failure. A dry run computes the same report and writes nothing.
    fn apply_outside_slot(&mut self, outcome: &mut RestoreOutcome) {
        let dry = self.opts.dry_run;
        if let Some(text) = self.carried_history.take() {
            let text = self.map.rewrite_line(&text).into_owned();
            let (own, refused) = history::own_project_lines(&text, &self.new_dir_str);
            outcome.history_refused = refused;
            match history::append(&self.opts.claude_dir.join("history.jsonl"), &own, dry) {
                Ok(n) => outcome.history_lines = n,
                Err(e) => outcome.warnings.push(format!("prompt history not updated: {e:#}")),
            }
        }
        let Some(text) = self.carried_config.take() else { return };
        let text = self.map.rewrite_line(&text).into_owned();
        let entry = match serde_json::from_slice::<Value>(&text) {
            Ok(v) => v.get("entry").and_then(Value::as_object).cloned(),
            Err(e) => {
                outcome.warnings.push(format!("the carried .claude.json entry is not JSON ({e}); not added"));
                return;
            }
        };
        let Some(entry) = entry else { return };
        let split = crate::agent::claude::split(&entry);
        outcome.config_withheld = split.withheld.clone();
        outcome.config_trusted = self.opts.trust_config;
        let mut install = split.inert;
        if self.opts.trust_config {
            install.extend(split.withheld_values);
        }
        let global = bundle::global_config(&self.opts.claude_dir, self.opts.home.as_deref());
        if install.is_empty() {
            outcome.claude_json = Some("not added: every carried key was withheld".into());
            return;
        }
        if dry {
            outcome.claude_json = Some(format!(
                "{} would be added to {}",
                crate::human::count(install.len() as u64, "key"),
                global.display()
            ));
            return;
        }
        match claude_config::merge(&global, &self.new_dir_str, install) {
            Ok(claude_config::Merged::Added { keys }) => {
                outcome.claude_json = Some(format!(
                    "added to {} ({})",
                    global.display(),
                    crate::human::count(keys as u64, "key")
                ))
            }
            Ok(claude_config::Merged::KeptExisting) => {
                outcome.claude_json = Some(format!("kept the existing entry in {}", global.display()))
            }
            Err(e) => outcome.warnings.push(format!("project entry not added: {e:#}")),
        }
    }
}

/// Whether `path` is strictly below `dir`, on component boundaries.
/// Where one staged file goes.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Placement {
    /// Its path in the bundle (and the staging tree).
    rel: PathBuf,
    dest: PathBuf,
    size: u64,
    mtime: u64,
}

/// Where every entry of the bundle goes: the slot's own files into `slot_dir`, and of the
/// carried extras only the per-session folders Claude Code reads (`file-history`, `tasks`,
/// `todos`) into `claude_dir`. Anything else in the extras is not placed.
#[derive(Debug, Default, PartialEq, Eq)]
struct Layout {
    files: Vec<Placement>,
    dirs: Vec<PathBuf>,
}

fn layout(entries: &[(PathBuf, u64, u64, bool)], slot_dir: &Path, claude_dir: &Path) -> Layout {
    let mut out = Layout::default();
    let extras = Path::new(EXTRAS);
    for (rel, size, mtime, is_dir) in entries {
        let dest = if let Ok(inner) = rel.strip_prefix(extras) {
            let mut comps = inner.components();
            let Some(first) = comps.next().and_then(|c| c.as_os_str().to_str()) else { continue };
            let rest: PathBuf = comps.collect();
            match first {
                "file-history" | "tasks" | "todos" if !rest.as_os_str().is_empty() => {
                    claude_dir.join(first).join(rest)
                }
                _ => continue,
            }
        } else if rel.as_os_str().is_empty() {
            continue;
        } else {
            slot_dir.join(rel)
        };
        if *is_dir {
            out.dirs.push(dest);
        } else {
            out.files.push(Placement { rel: rel.clone(), dest, size: *size, mtime: *mtime });
        }
    }
    out
}

/// Whether a bundle entry belongs to conversation `id`: its transcript, its folder
/// (subagents), and its per-session extras (file history, tasks, todos).
fn of_session(rel: &Path, id: &str) -> bool {
    let mut comps = rel.components().map(|c| c.as_os_str().to_str().unwrap_or_default());
    match comps.next() {
        Some(first) if first == format!("{id}.jsonl") || first == id => true,
        Some(EXTRAS) => match (comps.next(), comps.next()) {
            (Some("file-history" | "tasks"), Some(name)) => name == id,
            (Some("todos"), Some(name)) => name.starts_with(&format!("{id}-")),
            _ => false,
        },
        _ => false,
    }
}

/// What becomes of one file: new, already there, or there with other content (replaced
/// only with `--force`, which keeps a backup).
fn action(exists: bool, same: bool, force: bool) -> Action {
    match (exists, same, force) {
        (false, _, _) => Action::Add,
        (true, true, _) => Action::Same,
        (true, false, true) => Action::Replace,
        (true, false, false) => Action::Refuse,
    }
}

fn is_below(path: &str, dir: &str) -> bool {
    path.strip_prefix(dir.trim_end_matches('/')).is_some_and(|rest| rest.len() > 1 && rest.starts_with('/'))
}

/// Transcripts and the carried prompt history get their paths rewritten.
fn is_text_rewritten(rel: &Path) -> bool {
    rel.extension().is_some_and(|e| e == "jsonl")
}

/// `memory/*.md`: notes Claude Code reads back, plain text with absolute paths in it.
fn is_memory_note(rel: &Path) -> bool {
    rel.starts_with("memory") && rel.extension().is_some_and(|e| e == "md")
}

/// The first absolute `cwd` among a transcript's first lines; lines longer than 1 MiB
/// (a large tool result) are skipped unread, so memory stays flat.
fn first_cwd(path: &Path) -> Option<String> {
    first_cwd_in(BufReader::new(File::open(path).ok()?))
}

fn first_cwd_in(mut reader: impl BufRead) -> Option<String> {
    const MAX_LINE: u64 = 1 << 20;
    let mut line = Vec::new();
    for _ in 0..1000 {
        line.clear();
        let n = (&mut reader).take(MAX_LINE).read_until(b'\n', &mut line).ok()?;
        if n == 0 {
            return None;
        }
        if n as u64 == MAX_LINE && !line.ends_with(b"\n") {
            reader.skip_until(b'\n').ok()?;
            continue;
        }
        if let Ok(v) = serde_json::from_slice::<Value>(&line)
            && let Some(cwd) = v.get("cwd").and_then(Value::as_str)
            && cwd.starts_with('/')
        {
            return Some(cwd.to_string());
        }
    }
    None
}

/// Creates `dest` (mode 0600, never over an existing file) and fills it from `src`.
fn write_new(dest: &Path, src: &mut dyn Read) -> anyhow::Result<()> {
    write_new_with(dest, |out| io::copy(src, out).map(|_| ()))
}

fn write_new_with(dest: &Path, fill: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> anyhow::Result<()> {
    let file = OpenOptions::new().write(true).create_new(true).mode(0o600).open(dest).map_err(|e| {
        if e.kind() == io::ErrorKind::AlreadyExists {
            anyhow!(unpack::UnpackError::Refused(format!("the bundle holds {} twice", dest.display())))
        } else {
            anyhow!("could not write {}: {e}", dest.display())
        }
    })?;
    let mut out = io::BufWriter::with_capacity(128 * 1024, file);
    fill(&mut out)?;
    out.flush()?;
    Ok(())
}

fn set_times(path: &Path, secs: u64) {
    let t = filetime::FileTime::from_unix_time(secs as i64, 0);
    let _ = filetime::set_file_times(path, t, t);
}

fn same_content(a: &Path, b: &Path) -> io::Result<bool> {
    if !fs::symlink_metadata(b)?.is_file() {
        return Ok(false);
    }
    crate::fsutil::same_bytes(&mut File::open(a)?, &mut File::open(b)?)
}

/// Length and CRC of what passes through, for a dry run's comparisons.
#[derive(Default)]
struct Fingerprint {
    len: u64,
    crc: crc32fast::Hasher,
}

impl Write for Fingerprint {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.len += buf.len() as u64;
        self.crc.update(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The receiver's file at `path` as a dry run compares it: a regular file only, reached
/// with no link followed at its name and never waiting on a FIFO, as the restore itself
/// reads it; anything else is the receiver's own, and differs.
fn fingerprint(path: &Path) -> Option<(u64, u32)> {
    if !fs::symlink_metadata(path).ok()?.is_file() {
        return None;
    }
    let mut file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .ok()
        .filter(|f| f.metadata().is_ok_and(|m| m.is_file()))?;
    let mut sink = Fingerprint::default();
    io::copy(&mut file, &mut sink).ok()?;
    Some((sink.len, sink.crc.finalize()))
}

/// The conversation of `sessions` a bundle entry belongs to: its transcript, its folder
/// (subagents, tool results) and its per-session extras.
fn session_of<'a>(rel: &Path, sessions: &'a [String]) -> Option<&'a str> {
    sessions.iter().map(String::as_str).find(|id| of_session(rel, id))
}

/// A conversation the receiver keeps in its own, other version keeps the files beside it
/// too: the bundle's subagents, file history and todos would attach to another
/// conversation. Planned so, the dry run and the restore say the same.
fn keep_with_their_conversation(layout: &Layout, sessions: &[String], files: &mut [Placed]) {
    let kept: Vec<&str> = layout
        .files
        .iter()
        .zip(files.iter())
        .filter(|(f, placed)| placed.action == Action::Refuse && top_level_transcript(&f.rel).is_some())
        .filter_map(|(f, _)| session_of(&f.rel, sessions))
        .collect();
    for (f, placed) in layout.files.iter().zip(files.iter_mut()) {
        if matches!(placed.action, Action::Add | Action::Replace)
            && session_of(&f.rel, sessions).is_some_and(|id| kept.contains(&id))
        {
            placed.action = Action::Refuse;
        }
    }
}

/// The placement of one staged file of conversation `session` (empty for the project's
/// own files), with the step its planned action gives; a conversation's transcript is one
/// of its kind, the files beside it companions.
fn file_placement(
    claude_dir: &Path,
    file: &Placement,
    planned: &Placed,
    session: &str,
    staged: &dyn Fn(&Path) -> PathBuf,
) -> anyhow::Result<place::Placement> {
    let (root, rel) = confined(claude_dir, &file.dest)?;
    let transcript = top_level_transcript(&file.rel).is_some();
    Ok(place::Placement {
        kind: if transcript { place::Kind::Conversation } else { place::Kind::Companion },
        session: session.to_string(),
        root,
        rel: rel.to_path_buf(),
        content: place::Content::Staged(staged(&file.rel)),
        step: match planned.action {
            Action::Add => place::Step::Write,
            Action::Same => place::Step::Same,
            Action::Refuse => place::Step::Keep(vec![file.dest.clone()]),
            Action::Replace => place::Step::Replace(vec![file.dest.clone()]),
        },
    })
}

/// The root a path of the restore is confined to, and the path below it: the config
/// dir's own folder it goes in (`projects`, `file-history`, `todos`: the user may have
/// made one a link, to another disk), with no link followed below it.
fn confined<'a>(claude_dir: &Path, dest: &'a Path) -> anyhow::Result<(PathBuf, &'a Path)> {
    let rel = dest
        .strip_prefix(claude_dir)
        .with_context(|| format!("{} is outside {}", dest.display(), claude_dir.display()))?;
    let mut parts = rel.components();
    match (parts.next(), parts.as_path()) {
        (Some(std::path::Component::Normal(store)), below) if !below.as_os_str().is_empty() => {
            Ok((claude_dir.join(store), below))
        }
        _ => Ok((claude_dir.to_path_buf(), rel)),
    }
}

/// Other slots on this machine that hold one of these session ids.
fn duplicates(projects: &Path, slot: &str, sessions: &[String]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let Ok(dirs) = fs::read_dir(projects) else { return out };
    let ids: HashSet<&str> = sessions.iter().map(String::as_str).collect();
    let mut found = BTreeMap::new();
    for d in dirs.flatten() {
        let name = d.file_name().to_string_lossy().into_owned();
        if name == slot || name.starts_with(STAGING_PREFIX) || !d.path().is_dir() {
            continue;
        }
        for id in &ids {
            if d.path().join(format!("{id}.jsonl")).is_file() {
                found.insert((id.to_string(), name.clone()), ());
            }
        }
    }
    out.extend(found.into_keys());
    out
}

/// Removes the temp dirs of restores whose process is gone (killed, crashed).
/// Removes the staging folders in `projects` of restores that are no longer running (one
/// killed, or a move killed while restoring); the ones removed.
pub fn clean_stale(projects: &Path) -> Vec<PathBuf> {
    let mut cleaned = Vec::new();
    let Ok(dirs) = fs::read_dir(projects) else { return cleaned };
    for d in dirs.flatten() {
        let name = d.file_name().to_string_lossy().into_owned();
        let Some(rest) = name.strip_prefix(STAGING_PREFIX) else { continue };
        let pid: Option<i32> = rest.split('-').next().and_then(|p| p.parse().ok());
        let alive = pid.is_some_and(crate::fsutil::process_alive);
        if !alive && fs::remove_dir_all(d.path()).is_ok() {
            cleaned.push(d.path());
        }
    }
    cleaned
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_layout_places_the_slot_and_only_the_session_folders_of_the_extras() {
        let e = |rel: &str, is_dir: bool| (PathBuf::from(rel), 10, 1_700_000_000, is_dir);
        let entries = [
            e("", true),
            e("abc.jsonl", false),
            e("abc/subagents", true),
            e("abc/subagents/agent-1.jsonl", false),
            e(".lokust/manifest.json", false),
            e(".lokust/claude-project.json", false),
            e(".lokust/history.jsonl", false),
            e(".lokust/todos", true),
            e(".lokust/todos/abc-agent-abc.json", false),
            e(".lokust/file-history/abc/f@v1", false),
            e(".lokust/tasks/abc/1.json", false),
            // Only three folders of the extras are Claude Code's own; nothing else is placed.
            e(".lokust/settings.json", false),
            e(".lokust/commands/x.md", false),
            e(".lokust/file-history", false),
        ];
        let got = layout(&entries, Path::new("/c/projects/-new"), Path::new("/c"));
        let files: Vec<(&str, &str)> =
            got.files.iter().map(|p| (p.rel.to_str().unwrap(), p.dest.to_str().unwrap())).collect();
        assert_eq!(
            files,
            [
                ("abc.jsonl", "/c/projects/-new/abc.jsonl"),
                ("abc/subagents/agent-1.jsonl", "/c/projects/-new/abc/subagents/agent-1.jsonl"),
                (".lokust/todos/abc-agent-abc.json", "/c/todos/abc-agent-abc.json"),
                (".lokust/file-history/abc/f@v1", "/c/file-history/abc/f@v1"),
                (".lokust/tasks/abc/1.json", "/c/tasks/abc/1.json"),
            ]
        );
        assert_eq!(got.dirs, [PathBuf::from("/c/projects/-new/abc/subagents")]);
    }

    #[test]
    fn one_session_takes_its_transcript_folder_and_extras_only() {
        let id = "abc";
        for (rel, want) in [
            ("abc.jsonl", true),
            ("abc/subagents/agent-1.jsonl", true),
            (".lokust/file-history/abc/f@v1", true),
            (".lokust/tasks/abc/1.json", true),
            (".lokust/todos/abc-agent-abc.json", true),
            ("abd.jsonl", false),
            ("abcd.jsonl", false),
            ("memory/notes.md", false),
            (".lokust/claude-project.json", false),
            (".lokust/todos/other-agent-abc.json", false),
            (".lokust/file-history/other/f@v1", false),
        ] {
            assert_eq!(of_session(Path::new(rel), id), want, "{rel}");
        }
    }

    #[test]
    fn a_file_with_other_content_is_replaced_only_with_force() {
        assert_eq!(action(false, false, false), Action::Add);
        assert_eq!(action(false, false, true), Action::Add);
        assert_eq!(action(true, true, false), Action::Same);
        assert_eq!(action(true, true, true), Action::Same);
        assert_eq!(action(true, false, false), Action::Refuse);
        assert_eq!(action(true, false, true), Action::Replace);
    }
}
