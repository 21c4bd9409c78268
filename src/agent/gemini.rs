//! Gemini CLI conversations of one project: find them the way the CLI does, list the files
//! that may travel, and on restore register the new path so the CLI finds them there.
//!
//! The CLI (`@google/gemini-cli`, verified on 0.61.0) keeps a project's chats in
//! `<gh>/tmp/<id>/chats/`, where `<gh>` is `$GEMINI_CLI_HOME/.gemini` or `~/.gemini`. The id
//! comes from `<gh>/projects.json`, but only when the owner markers `tmp/<id>/.project_root`
//! and `history/<id>/.project_root` agree with the path; otherwise the CLI silently drops
//! the entry, scans the markers, and finally claims a fresh slug. Before the registry
//! existed (up to 0.28) the folder was `tmp/<sha256(path)>/`. So a restore must leave a
//! folder whose markers and registry entry all name the new realpath, and must keep every
//! session inside the CLI's retention window, which reads `lastUpdated` inside the file.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsStr;
use std::fs::{self, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use anyhow::{Context, bail};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::{File, Session};
use crate::fsutil;
use crate::place::{Edit, Kind, Placement, Plan, Step};

/// The kind of this payload in the `.lok`'s `bundles` array.
pub const KIND: &str = "gemini-project";

/// Files of `<gh>` that never travel: credentials, keys, settings (MCP `env` and headers
/// may hold tokens), trust and machine identity. Only `tmp/<id>/` content is ever read, so
/// this list documents the boundary and is checked by tests.
pub const NEVER_CARRIED: &[&str] = &[
    "oauth_creds.json",
    "google_accounts.json",
    "gemini-credentials.json",
    "mcp-oauth-tokens.json",
    "a2a-oauth-tokens.json",
    ".env",
    "installation_id",
    "settings.json",
    "trustedFolders.json",
    "projects.json",
];

/// One file of a session larger than this is refused: real chats are a few MB.
pub const MAX_FILE: u64 = 256 << 20;
/// Folders below `tmp/<id>/<session id>/` that hold a session's own work (plans, task lists).
const SESSION_FOLDERS: &[&str] = &["plans", "tracker", "tasks"];
const MARKER: &str = ".project_root";

/// `<gh>`: `$GEMINI_CLI_HOME/.gemini` when that is set and not empty, else `~/.gemini`.
pub fn gemini_home(gemini_cli_home: Option<&OsStr>, home: Option<&Path>) -> Option<PathBuf> {
    match gemini_cli_home {
        Some(h) if !h.is_empty() => Some(Path::new(h).join(".gemini")),
        _ => home.map(|h| h.join(".gemini")),
    }
}

/// The CLI's folder name for a path: lowercase, every other character a dash, runs of
/// dashes collapsed and trimmed, `project` when nothing is left.
pub fn slugify(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            out.push(c);
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    let out = out.trim_matches('-');
    if out.is_empty() { "project".to_string() } else { out.to_string() }
}

/// The legacy folder name (CLI ≤ 0.28): sha256 hex of the project path.
pub fn legacy_hash(root: &str) -> String {
    Sha256::digest(root.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

/// A folder name that is one plain path component, as the CLI creates them. A registry
/// value that is not one is never followed.
fn is_plain_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 255
        && name != "."
        && name != ".."
        && !name.starts_with('.')
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

fn read_marker(dir: &Path) -> Option<String> {
    let meta = fs::symlink_metadata(dir.join(MARKER)).ok()?;
    if !meta.is_file() || meta.len() > 64 * 1024 {
        return None;
    }
    fs::read_to_string(dir.join(MARKER)).ok().map(|s| s.trim().to_string())
}

/// The registry `{"projects": {path: id}}`; a missing file is empty.
fn read_registry(gh: &Path) -> anyhow::Result<Map<String, Value>> {
    let path = gh.join("projects.json");
    let text = match fs::read(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Map::new()),
        Err(e) => return Err(e).with_context(|| format!("could not read {}", path.display())),
    };
    let doc: Value = serde_json::from_slice(&text)
        .with_context(|| format!("{} is not valid JSON; left as it is", path.display()))?;
    match doc.get("projects") {
        None => Ok(Map::new()),
        Some(Value::Object(m)) => Ok(m.clone()),
        Some(_) => bail!("{}: \"projects\" is not an object; left as it is", path.display()),
    }
}

/// Every marker of `id` that exists and names another path.
fn disagreeing_markers(gh: &Path, id: &str, root: &str) -> Vec<PathBuf> {
    ["tmp", "history"]
        .iter()
        .map(|top| gh.join(top).join(id))
        .filter(|dir| read_marker(dir).is_some_and(|m| m != root))
        .map(|dir| dir.join(MARKER))
        .collect()
}

/// Folder names below `<gh>/<top>/` whose marker names `root`, sorted.
fn scan_markers(gh: &Path, top: &str, root: &str) -> Vec<String> {
    let mut found: Vec<String> = fs::read_dir(gh.join(top))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .filter(|name| is_plain_name(name) && read_marker(&gh.join(top).join(name)).as_deref() == Some(root))
        .collect();
    found.sort();
    found
}

/// The folder id the CLI would use for `root` (a realpath) right now, if any: the registry
/// entry whose markers agree, else the first folder whose marker names it.
pub fn find_project(gh: &Path, root: &str) -> Option<String> {
    let registry = read_registry(gh).unwrap_or_default();
    if let Some(id) = registry.get(root).and_then(Value::as_str)
        && is_plain_name(id)
        && disagreeing_markers(gh, id, root).is_empty()
    {
        return Some(id.to_string());
    }
    scan_markers(gh, "tmp", root).into_iter().chain(scan_markers(gh, "history", root)).next()
}

/// Every folder under `<gh>/tmp/` that holds chats of `root`: the CLI's current one, every
/// other one whose marker names it, and the legacy hash folder.
pub fn source_dirs(gh: &Path, root: &str) -> Vec<PathBuf> {
    let mut names: Vec<String> = find_project(gh, root).into_iter().collect();
    names.extend(scan_markers(gh, "tmp", root));
    names.push(legacy_hash(root));
    let mut seen = BTreeSet::new();
    names
        .into_iter()
        .filter(|n| seen.insert(n.clone()))
        .map(|n| gh.join("tmp").join(n))
        .filter(|d| fs::symlink_metadata(d.join("chats")).is_ok_and(|m| m.is_dir()))
        .collect()
}

/// What a chat file says about its session, later records winning as in the CLI.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChatFile {
    pub session_id: Option<String>,
    pub last_updated: Option<String>,
    /// User and model turns.
    pub turns: usize,
    pub first_prompt: Option<String>,
}

fn text_of(content: &Value) -> Option<String> {
    match content {
        Value::String(s) => Some(s.clone()),
        Value::Array(parts) => {
            let joined: Vec<&str> =
                parts.iter().filter_map(|p| p.get("text").and_then(Value::as_str)).collect();
            (!joined.is_empty()).then(|| joined.join(" "))
        }
        _ => None,
    }
}

/// Reads a chat file: JSONL (`header`, messages, `$set`, `$rewindTo`) or the older single
/// JSON object with a `messages` array. `None` when it is neither.
pub fn parse_chat(bytes: &[u8]) -> Option<ChatFile> {
    let mut out = ChatFile::default();
    let mut messages: Vec<Value> = Vec::new();
    let absorb = |record: &Map<String, Value>, messages: &mut Vec<Value>, out: &mut ChatFile| {
        if let Some(id) = record.get("sessionId").and_then(Value::as_str) {
            out.session_id = Some(id.to_string());
        }
        if let Some(t) = record.get("lastUpdated").and_then(Value::as_str) {
            out.last_updated = Some(t.to_string());
        }
        if let Some(Value::Array(list)) = record.get("messages") {
            *messages = list.clone();
        }
    };
    if let Ok(Value::Object(doc)) = serde_json::from_slice::<Value>(bytes) {
        if doc.contains_key("type") && doc.contains_key("id") {
            messages.push(Value::Object(doc));
        } else {
            absorb(&doc, &mut messages, &mut out);
        }
    } else {
        let text = std::str::from_utf8(bytes).ok()?;
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let Ok(Value::Object(record)) = serde_json::from_str::<Value>(line) else { return None };
            if let Some(Value::Object(set)) = record.get("$set") {
                absorb(set, &mut messages, &mut out);
            } else if let Some(to) = record.get("$rewindTo").and_then(Value::as_str) {
                if let Some(at) =
                    messages.iter().position(|m| m.get("id").and_then(Value::as_str) == Some(to))
                {
                    messages.truncate(at);
                }
            } else if record.contains_key("type") && record.contains_key("id") {
                messages.push(Value::Object(record));
            } else {
                absorb(&record, &mut messages, &mut out);
            }
        }
    }
    for m in &messages {
        let kind = m.get("type").and_then(Value::as_str);
        if matches!(kind, Some("user") | Some("gemini")) {
            out.turns += 1;
        }
        if kind == Some("user") && out.first_prompt.is_none() {
            out.first_prompt = m
                .get("content")
                .and_then(text_of)
                .filter(|t| !t.trim_start().starts_with("<session_context>"));
        }
    }
    Some(out)
}

/// The folders a chat adds to the workspace (`directories`, from `/directory add`) made
/// fit for `root`: Gemini CLI gives its file tools every one of them on an interactive
/// `--resume`, so they are grants. Those below the old project move with it; any other is
/// dropped unless `trust`. Returns the new bytes and a line per folder moved or dropped,
/// or `None` when the chat names no folder that changes.
pub fn workspace_dirs(
    data: &[u8],
    old_root: Option<&str>,
    root: &str,
    trust: bool,
) -> Option<(Vec<u8>, Vec<String>)> {
    let mut said = Vec::new();
    let mut fix = |record: &mut Map<String, Value>| -> bool {
        let Some(Value::Array(dirs)) = record.get_mut("directories") else { return false };
        let before = dirs.clone();
        dirs.retain_mut(|d| {
            let Some(path) = d.as_str() else { return false };
            let old = old_root.filter(|o| o.starts_with('/') && o.len() > 1);
            // Below the project on paper only: `<old>/../../home` climbs out when resolved.
            let plain = path.starts_with('/') && !path.split('/').any(|c| c == "." || c == "..");
            match old.filter(|_| plain).and_then(|o| super::disk::moved(path, o, root)) {
                Some(new) => {
                    said.push(format!("workspace folder {} moved to {}", safe(path), safe(&new)));
                    *d = Value::String(new);
                    true
                }
                None if trust => true,
                None => {
                    said.push(format!(
                        "workspace folder {} dropped (outside the project; --trust-config keeps it)",
                        safe(path)
                    ));
                    false
                }
            }
        });
        *dirs != before
    };
    let mut fix_record = |record: &mut Map<String, Value>| {
        let mut changed = fix(record);
        if let Some(Value::Object(set)) = record.get_mut("$set") {
            changed |= fix(set);
        }
        changed
    };
    if let Ok(Value::Object(mut doc)) = serde_json::from_slice::<Value>(data) {
        return fix_record(&mut doc).then(|| {
            (serde_json::to_vec_pretty(&Value::Object(doc)).unwrap_or_else(|_| data.to_vec()), said)
        });
    }
    let text = std::str::from_utf8(data).ok()?;
    let mut changed = false;
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let body = line.trim_end_matches('\n');
        // Every record is parsed: a key can be written with escapes (`director\u0069es`).
        let fixed = match serde_json::from_str::<Value>(body) {
            Ok(Value::Object(mut record)) => {
                fix_record(&mut record).then(|| Value::Object(record).to_string())
            }
            _ => None,
        };
        match fixed {
            Some(record) => {
                changed = true;
                out.push_str(&record);
                out.push_str(&line[body.len()..]);
            }
            None => out.push_str(line),
        }
    }
    changed.then(|| (out.into_bytes(), said))
}

/// The element's files with every chat's workspace folders made fit for `root`
/// ([`workspace_dirs`]), and what changed.
fn with_workspace_dirs(files: &[File], opts: &super::PlaceOptions, root: &str) -> (Vec<File>, Vec<String>) {
    let mut lines = Vec::new();
    let files = files
        .iter()
        .map(|f| {
            let mut f = f.clone();
            if let Some((data, said)) =
                workspace_dirs(&f.data, opts.old_root.as_deref(), root, opts.trust_config)
            {
                f.data = data;
                lines.extend(said.into_iter().map(|l| format!("  {l}")));
            }
            f
        })
        .collect();
    (files, lines)
}

/// One file that travels: where it is, and its path inside the element (below `tmp/<id>/`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Carried {
    pub source: PathBuf,
    pub rel: String,
}

#[derive(Debug, Default)]
pub struct Collected {
    pub files: Vec<Carried>,
    /// Oldest first.
    pub sessions: Vec<Session>,
}

fn is_chat_name(name: &str) -> bool {
    name.starts_with("session-") && (name.ends_with(".jsonl") || name.ends_with(".json"))
}

/// Regular files (never links) below `dir`, as paths relative to `base`, sorted.
fn regular_files(dir: &Path, base: &Path, out: &mut Vec<(PathBuf, String)>) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    let mut entries: Vec<_> = entries.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let path = e.path();
        let Some(name) = e.file_name().to_str().map(str::to_string) else { continue };
        if !is_plain_name(&name) {
            continue;
        }
        match fs::symlink_metadata(&path) {
            Ok(m) if m.is_dir() => regular_files(&path, base, out),
            Ok(m) if m.is_file() && m.len() <= MAX_FILE => {
                if let Ok(rel) = path.strip_prefix(base) {
                    out.push((path.clone(), rel.to_string_lossy().into_owned()));
                }
            }
            _ => {}
        }
    }
}

fn read_bounded(path: &Path) -> Option<Vec<u8>> {
    let mut buf = Vec::new();
    fs::File::open(path).ok()?.take(MAX_FILE + 1).read_to_end(&mut buf).ok()?;
    (buf.len() as u64 <= MAX_FILE).then_some(buf)
}

/// The chats of `root` (a realpath) under `gh`: every file of each session that has a user
/// or model turn, grouped by the `sessionId` inside the files, with its subagent chats and
/// its own folders. Nothing outside `tmp/<id>/chats/` and `tmp/<id>/<session id>/` is read.
pub fn collect(gh: &Path, root: &str) -> Collected {
    struct Group {
        files: Vec<Carried>,
        turns: usize,
        first_prompt: Option<String>,
        last_updated: Option<String>,
    }
    let mut groups: BTreeMap<String, Group> = BTreeMap::new();
    let mut taken: BTreeSet<String> = BTreeSet::new();
    for dir in source_dirs(gh, root) {
        let chats = dir.join("chats");
        let mut found = Vec::new();
        regular_files(&chats, &dir, &mut found);
        for (source, rel) in found {
            if taken.contains(&rel) {
                continue; // the legacy folder copied into the current one: same file twice
            }
            let parts: Vec<&str> = rel.split('/').collect();
            let parsed = match parts.as_slice() {
                ["chats", name] if is_chat_name(name) => read_bounded(&source).and_then(|b| parse_chat(&b)),
                // A subagent's chat travels with its parent session.
                ["chats", parent, name] if name.ends_with(".jsonl") || name.ends_with(".json") => {
                    Some(ChatFile { session_id: Some((*parent).to_string()), ..Default::default() })
                }
                _ => None,
            };
            let Some(parsed) = parsed else { continue };
            let Some(id) = parsed.session_id.filter(|id| is_plain_name(id)) else { continue };
            taken.insert(rel.clone());
            let group = groups.entry(id).or_insert(Group {
                files: Vec::new(),
                turns: 0,
                first_prompt: None,
                last_updated: None,
            });
            group.files.push(Carried { source, rel });
            group.turns += parsed.turns;
            if group.first_prompt.is_none() {
                group.first_prompt = parsed.first_prompt;
            }
            if parsed.last_updated > group.last_updated {
                group.last_updated = parsed.last_updated;
            }
        }
        for (id, group) in groups.iter_mut() {
            for folder in SESSION_FOLDERS {
                let mut found = Vec::new();
                regular_files(&dir.join(id).join(folder), &dir, &mut found);
                for (source, rel) in found {
                    if taken.insert(rel.clone()) {
                        group.files.push(Carried { source, rel });
                    }
                }
            }
        }
    }
    let mut out = Collected::default();
    for (id, group) in groups {
        if group.turns == 0 {
            continue; // nothing to resume: a header-only file, or a warning alone
        }
        out.sessions.push(Session {
            id,
            first_prompt: group.first_prompt,
            turns: group.turns,
            last_updated: group.last_updated,
            files: group.files.iter().map(|c| c.rel.clone()).collect(),
            outcome: None,
        });
        out.files.extend(group.files);
    }
    out.sessions.sort_by(|a, b| a.last_updated.cmp(&b.last_updated).then(a.id.cmp(&b.id)));
    out
}

/// Checks a path inside a `gemini-project` element against the allowlist:
/// `chats/session-*.json(l)`, `chats/<session>/<name>.json(l)` and
/// `<session>/{plans,tracker,tasks}/…`, every component a plain name.
pub fn check_rel(rel: &str) -> anyhow::Result<()> {
    let parts: Vec<&str> = rel.split('/').collect();
    if rel.len() > 1024 || parts.len() > 12 || !parts.iter().all(|p| is_plain_name(p)) {
        bail!("{rel:?} is not a plain relative path");
    }
    let ok = match parts.as_slice() {
        ["chats", name] => is_chat_name(name),
        ["chats", _, name] => name.ends_with(".jsonl") || name.ends_with(".json"),
        [_, folder, _, ..] => SESSION_FOLDERS.contains(folder),
        _ => false,
    };
    if !ok {
        bail!("{rel:?} is not a Gemini chat or session folder file");
    }
    Ok(())
}

/// Refuses the element whole unless every path is allowed, once, and every chat file is a
/// chat the CLI can read.
pub fn validate(files: &[File]) -> anyhow::Result<()> {
    let mut seen = BTreeSet::new();
    for f in files {
        check_rel(&f.rel)?;
        if !seen.insert(f.rel.as_str()) {
            bail!("{} appears twice", f.rel);
        }
        if f.data.len() as u64 > MAX_FILE {
            bail!("{} is larger than {} bytes", f.rel, MAX_FILE);
        }
        if f.rel.split('/').count() == 2 {
            let chat = parse_chat(&f.data).with_context(|| format!("{} is not a Gemini chat file", f.rel))?;
            if !chat.session_id.as_deref().is_some_and(is_plain_name) {
                bail!("{} has no usable sessionId", f.rel);
            }
        }
    }
    Ok(())
}

/// The receiver's retention by age for `root`, from every settings layer; `None` when the
/// CLI will not delete by age.
pub fn retention(gh: &Path, root: &str) -> Option<Duration> {
    let layers = super::retention::GeminiLayers::new(None, gh, Some(Path::new(root)));
    super::retention::gemini_retention(&layers).and_then(|r| r.max_age)
}

/// RFC 3339 in milliseconds and UTC, as the CLI writes it.
pub fn iso(t: SystemTime) -> String {
    humantime::format_rfc3339_millis(t).to_string()
}

/// New `lastUpdated` per session so each lies at least half the window from expiry, with
/// the sessions' order kept: the i-th oldest gets `max(its own, floor + i ms)`.
pub fn keep_in_window(
    sessions: &[(String, Option<String>)],
    now: SystemTime,
    window: Duration,
) -> BTreeMap<String, String> {
    let floor = now - window / 2;
    let mut sorted: Vec<&(String, Option<String>)> = sessions.iter().collect();
    sorted.sort_by(|a, b| a.1.cmp(&b.1).then(a.0.cmp(&b.0)));
    let mut out = BTreeMap::new();
    for (i, (id, last)) in sorted.into_iter().enumerate() {
        let least = floor + Duration::from_millis(i as u64);
        let own = last.as_deref().and_then(|t| humantime::parse_rfc3339_weak(t).ok());
        if own.is_none_or(|t| t < least) {
            out.insert(id.clone(), iso(least));
        }
    }
    out
}

/// The chat file with `lastUpdated` set: a `$set` line appended to JSONL, the field set
/// in a single JSON object.
pub fn set_last_updated(data: &[u8], when: &str) -> Vec<u8> {
    if let Ok(Value::Object(mut doc)) = serde_json::from_slice::<Value>(data)
        && !doc.contains_key("type")
    {
        doc.insert("lastUpdated".into(), Value::String(when.to_string()));
        return serde_json::to_vec_pretty(&Value::Object(doc)).unwrap_or_else(|_| data.to_vec());
    }
    let mut out = data.to_vec();
    if !out.is_empty() && !out.ends_with(b"\n") {
        out.push(b'\n');
    }
    out.extend_from_slice(serde_json::json!({"$set": {"lastUpdated": when}}).to_string().as_bytes());
    out.push(b'\n');
    out
}

/// Held while lokust edits the registry: the CLI's own lock (`projects.json.lock`, a
/// directory, as proper-lockfile makes it) so a running Gemini waits for us and we for it.
struct RegistryLock {
    dir: PathBuf,
}

impl RegistryLock {
    fn take(gh: &Path) -> anyhow::Result<RegistryLock> {
        let dir = gh.join("projects.json.lock");
        let deadline = SystemTime::now() + Duration::from_secs(15);
        loop {
            match fs::create_dir(&dir) {
                Ok(()) => return Ok(RegistryLock { dir }),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                    // proper-lockfile refreshes a live lock's mtime; one untouched for 10 s
                    // belongs to a process that died.
                    let stale = fs::metadata(&dir)
                        .and_then(|m| m.modified())
                        .is_ok_and(|t| t.elapsed().is_ok_and(|age| age > Duration::from_secs(10)));
                    if stale {
                        let _ = fs::remove_dir(&dir);
                    } else if SystemTime::now() > deadline {
                        bail!("{} is held by another process; try again when Gemini is idle", dir.display());
                    } else {
                        std::thread::sleep(Duration::from_millis(50));
                    }
                }
                Err(e) => return Err(e).with_context(|| format!("could not lock {}", dir.display())),
            }
        }
    }
}

impl Drop for RegistryLock {
    fn drop(&mut self) {
        let _ = fs::remove_dir(&self.dir);
    }
}

fn registry_version(path: &Path) -> Option<(u64, u64, i64, i64)> {
    fs::metadata(path).ok().map(|m| (m.ino(), m.len(), m.mtime(), m.mtime_nsec()))
}

/// Sets `projects[root] = id` in the registry, keeping every other entry.
fn register(gh: &Path, root: &str, id: &str) -> anyhow::Result<()> {
    update_registry(gh, |projects| {
        if projects.get(root).and_then(Value::as_str) == Some(id) {
            return false;
        }
        projects.insert(root.to_string(), Value::String(id.to_string()));
        true
    })
}

/// Changes the registry's projects with `change` (which says whether it changed them),
/// keeping every other key: read, write a temp file, and rename only if nobody changed
/// the file meanwhile (else read again).
fn update_registry(gh: &Path, change: impl Fn(&mut Map<String, Value>) -> bool) -> anyhow::Result<()> {
    let path = gh.join("projects.json");
    for _ in 0..50 {
        let before = registry_version(&path);
        let mut projects = read_registry(gh)?;
        if !change(&mut projects) {
            return Ok(());
        }
        let mut doc = match fs::read(&path).ok().and_then(|t| serde_json::from_slice::<Value>(&t).ok()) {
            Some(Value::Object(m)) => m,
            _ => Map::new(),
        };
        doc.insert("projects".into(), Value::Object(projects));
        let body = serde_json::to_vec_pretty(&Value::Object(doc))?;
        let mut written = false;
        fsutil::write_private_atomic_checked(
            &path,
            |f| f.write_all(&body),
            || {
                written = registry_version(&path) == before;
                written
            },
        )
        .with_context(|| format!("could not write {}", path.display()))?;
        if written {
            return Ok(());
        }
    }
    bail!("{} kept changing; try again", path.display())
}

/// Takes back what a restore at `root` registered, when nothing else came of it: the
/// registry entry, and its folder holding nothing but the marker and empty folders. A
/// folder with anything in it stays, and its entry with it.
pub fn forget(gh: &Path, root: &str) -> anyhow::Result<()> {
    let _lock = RegistryLock::take(gh)?;
    let Some(id) = read_registry(gh)?.get(root).and_then(Value::as_str).map(str::to_string) else {
        return Ok(());
    };
    let folder = gh.join("tmp").join(&id);
    if !is_plain_name(&id) || !only_marker(&folder, &folder) {
        return Ok(());
    }
    update_registry(gh, |projects| projects.remove(root).is_some())?;
    let _ = fs::remove_dir_all(&folder);
    Ok(())
}

/// Whether `dir` holds nothing but the marker (at `top`) and empty folders.
fn only_marker(dir: &Path, top: &Path) -> bool {
    fs::read_dir(dir).into_iter().flatten().flatten().all(|e| {
        let path = e.path();
        match fs::symlink_metadata(&path) {
            Ok(m) if m.is_dir() => only_marker(&path, top),
            Ok(_) => dir == top && e.file_name() == MARKER,
            Err(_) => true,
        }
    })
}

/// Writes a marker naming `root`, replacing one that names another path.
fn write_marker(dir: &Path, root: &str) -> anyhow::Result<()> {
    fsutil::create_private_dir(dir).with_context(|| format!("could not create {}", dir.display()))?;
    let path = dir.join(MARKER);
    if fs::symlink_metadata(&path).is_ok_and(|m| !m.is_file()) {
        bail!("{} is not a regular file; left as it is", path.display());
    }
    fsutil::write_private_atomic(&path, |f| f.write_all(root.as_bytes()))
        .with_context(|| format!("could not write {}", path.display()))
}

/// Where a restore puts the chats of `root`, and what it changes to get there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub id: String,
    /// The receiver already had a folder for this path: the chats merge into it.
    pub existing: bool,
    /// Markers that named another path and are set to `root`.
    pub fixed_markers: Vec<PathBuf>,
}

/// The folder for `root` as the CLI will find it: the receiver's own one (a disagreeing
/// marker of it fixed), else the first slug the CLI would claim.
pub fn plan_target(gh: &Path, root: &str) -> anyhow::Result<Target> {
    let registry = read_registry(gh)?;
    // The registry's folder for this path, unless one of its markers names a path that the
    // registry also maps there (then the folder belongs to that other project).
    if let Some(id) = registry.get(root).and_then(Value::as_str).filter(|id| is_plain_name(id)) {
        let disagreeing = disagreeing_markers(gh, id, root);
        let owned_elsewhere = disagreeing.iter().any(|m| {
            let other = fs::read_to_string(m).unwrap_or_default();
            registry.get(other.trim()).and_then(Value::as_str) == Some(id)
        });
        if !owned_elsewhere {
            return Ok(Target { id: id.to_string(), existing: true, fixed_markers: disagreeing });
        }
    }
    if let Some(id) =
        scan_markers(gh, "tmp", root).into_iter().chain(scan_markers(gh, "history", root)).next()
    {
        return Ok(Target {
            id: id.clone(),
            existing: true,
            fixed_markers: disagreeing_markers(gh, &id, root),
        });
    }
    let base = slugify(Path::new(root).file_name().and_then(OsStr::to_str).unwrap_or(""));
    let taken: BTreeSet<&str> = registry.values().filter_map(Value::as_str).collect();
    for n in 0..10_000 {
        let id = if n == 0 { base.clone() } else { format!("{base}-{n}") };
        if !taken.contains(id.as_str()) && disagreeing_markers(gh, &id, root).is_empty() {
            return Ok(Target { id, existing: false, fixed_markers: Vec::new() });
        }
    }
    bail!("no free Gemini project folder name for {root}")
}

/// The marker of a project folder, set to name `root`.
struct SetMarker {
    root: String,
}

impl Edit for SetMarker {
    fn describe(&self) -> String {
        format!("set to name {}", self.root)
    }

    fn apply(&self, path: &Path) -> anyhow::Result<()> {
        write_marker(path.parent().context("a marker without a folder")?, &self.root)
    }
}

/// The registry's entry for a project path: the claim on its folder, made first.
struct Register {
    root: String,
    id: String,
    /// The folder is a new one: another path taking it meanwhile stops the restore.
    new: bool,
}

impl Edit for Register {
    fn describe(&self) -> String {
        format!("maps {} to {}", self.root, self.id)
    }

    fn apply(&self, path: &Path) -> anyhow::Result<()> {
        let gh = path.parent().context("a registry without a folder")?;
        let _lock = RegistryLock::take(gh)?;
        if self.new
            && read_registry(gh)?
                .iter()
                .any(|(p, id)| *p != self.root && id.as_str() == Some(self.id.as_str()))
        {
            bail!("another project took the folder {} meanwhile; restore again", self.id);
        }
        register(gh, &self.root, &self.id)
    }
}

/// What a restore of a validated element writes for `root` (a realpath) under `gh`: the
/// registry entry, the folder's marker and markers that named another path, then the
/// chats, none over a file the receiver has; every session dated inside the retention
/// window.
pub fn plan(gh: &Path, root: &str, files: &[File], force: bool, now: SystemTime) -> anyhow::Result<Plan> {
    validate(files)?;
    let target = plan_target(gh, root)?;
    let folder = Path::new("tmp").join(&target.id);
    let how = if target.existing { "merged into the existing folder" } else { "a new folder" };
    let mut plan = Plan::new(
        "Gemini CLI",
        "conversation",
        format!("{} ({how})", gh.join(&folder).join("chats").to_string_lossy()),
    );
    let edit = Register { root: root.to_string(), id: target.id.clone(), new: !target.existing };
    plan.items.push(Placement::edit(Kind::Registry, "", gh, "projects.json", Box::new(edit)));
    if read_marker(&gh.join(&folder)).as_deref() != Some(root) {
        let edit = SetMarker { root: root.to_string() };
        plan.items.push(Placement::edit(Kind::Marker, "", gh, folder.join(MARKER), Box::new(edit)));
    }
    for marker in target.fixed_markers.iter().filter(|m| **m != gh.join(&folder).join(MARKER)) {
        let rel = marker.strip_prefix(gh).context("a marker outside the Gemini home")?;
        let edit = SetMarker { root: root.to_string() };
        plan.items.push(Placement::edit(Kind::Marker, "", gh, rel, Box::new(edit)));
    }

    // Which session each top-level chat file belongs to, and when it was last updated.
    let mut sessions: BTreeMap<String, Option<String>> = BTreeMap::new();
    let mut owner: BTreeMap<&str, String> = BTreeMap::new();
    for f in files.iter().filter(|f| f.rel.split('/').count() == 2) {
        let chat = parse_chat(&f.data).unwrap_or_default();
        let id = chat.session_id.unwrap_or_default();
        let last = sessions.entry(id.clone()).or_default();
        if chat.last_updated > *last {
            *last = chat.last_updated;
        }
        owner.insert(f.rel.as_str(), id);
    }
    let list: Vec<(String, Option<String>)> = sessions.clone().into_iter().collect();
    let refreshed = match retention(gh, root) {
        Some(window) => keep_in_window(&list, now, window),
        None => BTreeMap::new(),
    };
    let by_time: Vec<(Option<String>, &String)> =
        list.iter().map(|(id, last)| (refreshed.get(id).cloned().or_else(|| last.clone()), id)).collect();
    if !refreshed.is_empty() {
        plan.notes.push(format!(
            "  {} older conversations dated into Gemini's retention window, order kept",
            refreshed.len()
        ));
    }
    for f in files {
        let rel = folder.join(&f.rel);
        let session = match owner.get(f.rel.as_str()) {
            Some(id) => id.clone(),
            // A subagent's chat (`chats/<parent>/…`) belongs to its parent, a session's
            // own folder (`<id>/…`) to it.
            None => match f.rel.split('/').collect::<Vec<_>>().as_slice() {
                ["chats", parent, ..] | [parent, ..] => (*parent).to_string(),
                [] => String::new(),
            },
        };
        let data = match refreshed.get(&session) {
            Some(when) => set_last_updated(&f.data, when),
            None => f.data.clone(),
        };
        let dest = gh.join(&rel);
        let step = match fs::symlink_metadata(&dest) {
            Err(_) => Step::Write,
            Ok(_) if fs::read(&dest).is_ok_and(|have| have == data || have == f.data) => Step::Same,
            Ok(_) if force => Step::Replace(vec![dest]),
            Ok(_) => Step::Keep(vec![dest]),
        };
        plan.items.push(Placement::file(Kind::Conversation, &session, gh, rel, data).with_step(step));
    }
    // The newest conversation that is not the receiver's own, kept.
    let kept = |id: &str| plan.items.iter().any(|p| p.session == id && matches!(p.step, Step::Keep(_)));
    plan.newest = by_time.into_iter().filter(|(_, id)| !kept(id)).max().map(|(_, id)| id.clone());
    Ok(plan)
}

/// Reads a session's files for the element: the caller redacts them on the way.
pub fn read_carried(c: &Carried) -> io::Result<Vec<u8>> {
    let mut f = OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW).open(&c.source)?;
    let mut buf = Vec::new();
    (&mut f).take(MAX_FILE + 1).read_to_end(&mut buf)?;
    if buf.len() as u64 > MAX_FILE {
        return Err(io::Error::other(format!("{} is larger than {MAX_FILE} bytes", c.source.display())));
    }
    Ok(buf)
}

/// The sessions in a list of element files, oldest first: the summary and `inspect` show
/// these, read from the (redacted) files themselves.
pub fn summarize(files: &[File]) -> Vec<Session> {
    let mut groups: BTreeMap<String, Session> = BTreeMap::new();
    for f in files {
        let parts: Vec<&str> = f.rel.split('/').collect();
        let (id, chat) = match parts.as_slice() {
            ["chats", _] => match parse_chat(&f.data) {
                Some(c) => (c.session_id.clone().unwrap_or_default(), c),
                None => continue,
            },
            ["chats", parent, _] => ((*parent).to_string(), ChatFile::default()),
            [id, ..] => ((*id).to_string(), ChatFile::default()),
            [] => continue,
        };
        let s = groups.entry(id.clone()).or_insert(Session {
            id,
            first_prompt: None,
            turns: 0,
            last_updated: None,
            files: Vec::new(),
            outcome: None,
        });
        s.turns += chat.turns;
        if s.first_prompt.is_none() {
            s.first_prompt = chat.first_prompt;
        }
        if chat.last_updated > s.last_updated {
            s.last_updated = chat.last_updated;
        }
        s.files.push(f.rel.clone());
    }
    let mut out: Vec<Session> = groups.into_values().filter(|s| s.turns > 0).collect();
    out.sort_by(|a, b| a.last_updated.cmp(&b.last_updated).then(a.id.cmp(&b.id)));
    out
}

/// The files that travel for `root` (a realpath), unredacted, with its sessions; `None`
/// when Gemini has no conversation there.
pub fn carried_files(gh: &Path, root: &str) -> anyhow::Result<Option<Vec<File>>> {
    let collected = collect(gh, root);
    if collected.sessions.is_empty() {
        return Ok(None);
    }
    let mut files = Vec::new();
    for c in &collected.files {
        let data = read_carried(c).with_context(|| format!("could not read {}", c.source.display()))?;
        files.push(File { rel: c.rel.clone(), data });
    }
    Ok(Some(files))
}

/// Gemini CLI as an [`Agent`](super::Agent).
pub struct Gemini;

impl super::Agent for Gemini {
    fn id(&self) -> &'static str {
        "gemini"
    }

    fn name(&self) -> &'static str {
        "Gemini CLI"
    }

    fn kind(&self) -> &'static str {
        KIND
    }

    fn home(&self, probe: &crate::probe::Probe) -> Option<PathBuf> {
        gemini_home(probe.var_os("GEMINI_CLI_HOME"), probe.home().as_deref())
    }

    fn config_names(&self) -> &'static [super::ConfigName] {
        use crate::policy::name;
        const NAMES: &[super::ConfigName] = &[name(
            ".gemini/",
            "settings with MCP servers, hooks and tool discovery commands; commands; extensions",
        )];
        NAMES
    }

    fn never_carried(&self) -> &'static [&'static str] {
        NEVER_CARRIED
    }

    fn collect(&self, home: &Path, root: &str) -> anyhow::Result<Option<Vec<File>>> {
        carried_files(home, root)
    }

    fn events(&self, files: &[File], session: &str) -> Vec<super::event::Event> {
        events(files, session)
    }

    fn find(&self, home: &Path, id: &str) -> anyhow::Result<Option<super::Located>> {
        find(home, id)
    }

    fn stored(&self, home: &Path, root: &str, id: &str) -> anyhow::Result<Option<Vec<PathBuf>>> {
        Ok(Some(stored(home, root, id)))
    }

    fn programs(&self) -> &'static [&'static str] {
        &["gemini", "@google/gemini-cli"]
    }

    fn resume_command(&self, id: &str) -> Option<String> {
        Some(format!("gemini --resume {id}"))
    }

    /// Gemini's ids are UUIDs, older chats' plain names; never one that reads as an
    /// option (`--yolo`), and never what `--resume` reads as something else: an index
    /// (`5`) or `latest`.
    fn is_id(&self, id: &str) -> bool {
        is_plain_name(id)
            && id.as_bytes()[0].is_ascii_alphanumeric()
            && id.len() <= 128
            && !id.bytes().all(|b| b.is_ascii_digit())
            && id != "latest"
    }

    fn sessions(&self, files: &[File]) -> Vec<Session> {
        summarize(files)
    }

    fn validate(&self, files: &[File]) -> anyhow::Result<()> {
        validate(files)
    }

    fn plan(
        &self,
        home: &Path,
        root: &str,
        files: &[File],
        opts: &super::PlaceOptions,
    ) -> anyhow::Result<Plan> {
        let (files, grants) = with_workspace_dirs(files, opts, root);
        let mut plan = plan(home, root, &files, opts.force, opts.now)?;
        plan.notes.extend(grants);
        Ok(plan)
    }
}

fn safe(s: &str) -> std::borrow::Cow<'_, str> {
    crate::sanitize::for_terminal(s)
}

/// A session's chats as normalized events: user and model turns, each tool call with its
/// result, and the CLI's notes (`info`, `error`, `warning`).
pub fn events(files: &[File], session: &str) -> Vec<super::event::Event> {
    use super::event::{Event, Kind, json_lines, str_of, text_of};
    let mut out = Vec::new();
    for f in files.iter().filter(|f| f.rel.split('/').count() == 2) {
        if parse_chat(&f.data).and_then(|c| c.session_id).as_deref() != Some(session) {
            continue;
        }
        let messages: Vec<Value> = match serde_json::from_slice::<Value>(&f.data) {
            Ok(doc) => doc.get("messages").and_then(Value::as_array).cloned().unwrap_or_default(),
            Err(_) => {
                json_lines(&f.data).filter(|r| r.get("type").is_some() && r.get("id").is_some()).collect()
            }
        };
        for m in &messages {
            let at = str_of(m, "/timestamp");
            let base = Event {
                id: str_of(m, "/id").unwrap_or_default().to_string(),
                model: str_of(m, "/model").map(str::to_string),
                ..Event::new(Kind::Meta).at(at)
            };
            let (kind, role) = match str_of(m, "/type") {
                Some("user") => (Kind::User, "user"),
                Some("gemini") => (Kind::Assistant, "assistant"),
                Some("error") => (Kind::Error, "system"),
                _ => (Kind::Meta, "system"),
            };
            let text = text_of(m.get("content").unwrap_or(&Value::Null));
            if !text.trim().is_empty() {
                out.push(Event { kind, text: Some(text), role: Some(role.into()), ..base.clone() });
            }
            for call in m.get("toolCalls").and_then(Value::as_array).into_iter().flatten() {
                let call_id = str_of(call, "/id").map(str::to_string);
                out.push(Event {
                    id: String::new(),
                    kind: Kind::ToolCall,
                    role: Some("assistant".into()),
                    tool_name: str_of(call, "/name").map(str::to_string),
                    tool_input: call.get("args").cloned(),
                    message_id: call_id.clone(),
                    ..base.clone()
                });
                let result = call
                    .get("resultDisplay")
                    .filter(|r| !r.is_null())
                    .or_else(|| call.get("result"))
                    .map(text_of)
                    .unwrap_or_default();
                out.push(Event {
                    id: String::new(),
                    kind: if str_of(call, "/status") == Some("error") {
                        Kind::Error
                    } else {
                        Kind::ToolResult
                    },
                    role: Some("tool".into()),
                    tool_output: Some(result),
                    message_id: call_id,
                    ..base.clone()
                });
            }
        }
    }
    super::event::number(session, out)
}

/// Session `id` in this home: its chat file, and the project folder its marker names.
/// Every file of conversation `id` in the project folders of `root` (those a bundle of
/// `root` reads), exactly those a bundle carries: its chat files, its subagents' chats, its
/// session folders. A copy of the id in another project's folder is not named.
pub fn stored(gh: &Path, root: &str, id: &str) -> Vec<PathBuf> {
    if !is_plain_name(id) {
        return Vec::new();
    }
    let mut out = Vec::new();
    for dir in source_dirs(gh, root) {
        for chat in fs::read_dir(dir.join("chats")).into_iter().flatten().flatten() {
            let name = chat.file_name().to_string_lossy().into_owned();
            if is_chat_name(&name)
                && fs::symlink_metadata(chat.path()).is_ok_and(|m| m.is_file())
                && read_bounded(&chat.path())
                    .and_then(|b| parse_chat(&b))
                    .and_then(|c| c.session_id)
                    .as_deref()
                    == Some(id)
            {
                out.push(chat.path());
            }
        }
        let mut found = Vec::new();
        regular_files(&dir.join("chats").join(id), &dir, &mut found);
        for folder in SESSION_FOLDERS {
            regular_files(&dir.join(id).join(folder), &dir, &mut found);
        }
        out.extend(found.into_iter().map(|(source, _)| source));
    }
    out
}

pub fn find(gh: &Path, id: &str) -> anyhow::Result<Option<super::Located>> {
    let Ok(folders) = fs::read_dir(gh.join("tmp")) else { return Ok(None) };
    for folder in folders.flatten().filter(|f| fs::symlink_metadata(f.path()).is_ok_and(|m| m.is_dir())) {
        let Ok(chats) = fs::read_dir(folder.path().join("chats")) else { continue };
        for chat in chats.flatten() {
            let name = chat.file_name().to_string_lossy().into_owned();
            if !is_chat_name(&name) || !fs::symlink_metadata(chat.path()).is_ok_and(|m| m.is_file()) {
                continue;
            }
            let Ok(data) = fs::read(chat.path()) else { continue };
            if parse_chat(&data).and_then(|c| c.session_id).as_deref() == Some(id) {
                return Ok(Some(super::Located { path: chat.path(), dir: read_marker(&folder.path()) }));
            }
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests;
