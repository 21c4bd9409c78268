//! GitHub Copilot CLI sessions of one project: found by the folder each one records, moved
//! with it, and placed whole or not at all.
//!
//! Copilot CLI 1.0.x (verified on 1.0.102) keeps a session as a folder
//! `$COPILOT_HOME/session-state/<uuid>/` (else `~/.copilot`): `events.jsonl` (one event per
//! line, the first a `session.start`), `workspace.yaml` (`cwd`, `git_root`, name, times)
//! and artifacts (`plan.md`, `checkpoints/`, `files/`, `research/`). `--resume=<id>` finds
//! the folder by id and changes into `workspace.yaml`'s `cwd` when that exists, so a moved
//! session must have its `cwd` and `git_root` moved too, or it silently works at the old
//! path. The cross-project store (`session-store.db`), sign-in (`config.json`), settings,
//! MCP and permission files never travel; neither do lock files or `/rewind` snapshots,
//! whose paths are hex-encoded.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsStr;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use anyhow::{Context, bail};
use serde_json::Value;

use super::disk::{complete_lines, is_plain_absolute, is_under, is_uuid, moved, read_bounded, time_of};
use super::{File, Session};
use crate::place::{Content, Entry, Kind, Placement, Plan, Step};

/// The kind of this payload in the `.lok`'s `bundles` array.
pub const KIND: &str = "copilot-sessions";

/// What of the Copilot home never travels: every project's prompts, sign-in and tokens,
/// settings that run hooks, MCP servers and their OAuth state, saved approvals, history,
/// logs, plugins; and of a session its locks and `/rewind` snapshots.
pub const NEVER_CARRIED: &[&str] = &[
    "session-store.db",
    "config.json",
    "settings.json",
    "mcp-config.json",
    "mcp-oauth-config*",
    "permissions-config*",
    "lsp-config*",
    "hooks/",
    "copilot-instructions.md",
    "installed-plugins/",
    "command-history-state.json",
    "logs/",
    "session-state/<id>/*.lock",
    "session-state/<id>/rewind-file-snapshots/",
];

/// One session file larger than this is refused.
pub const MAX_FILE: u64 = 512 << 20;
const EVENTS: &str = "events.jsonl";
const WORKSPACE: &str = "workspace.yaml";
/// What of a session folder travels: these files, and files below these folders.
const FILES: &[&str] = &[EVENTS, WORKSPACE, "plan.md"];
const FOLDERS: &[&str] = &["checkpoints", "files", "research"];

/// `$COPILOT_HOME` when set and not empty (the home itself), else `~/.copilot`.
pub fn copilot_home(copilot_home: Option<&OsStr>, home: Option<&Path>) -> Option<PathBuf> {
    match copilot_home {
        Some(h) if !h.is_empty() => Some(PathBuf::from(h)),
        _ => home.map(|h| h.join(".copilot")),
    }
}

/// What `events.jsonl` says of its session.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Events {
    pub id: String,
    pub cwd: Option<String>,
    pub first_prompt: Option<String>,
    pub turns: usize,
    pub last_time: Option<String>,
}

/// Reads a transcript: line 1 must be a `session.start` naming its session; later lines
/// that do not read are skipped. `None` when it is not one.
pub fn parse_events(data: &[u8]) -> Option<Events> {
    let mut lines = data.split(|b| *b == b'\n').filter(|l| !l.iter().all(u8::is_ascii_whitespace));
    let first: Value = serde_json::from_slice(lines.next()?).ok()?;
    if first.get("type").and_then(Value::as_str) != Some("session.start") {
        return None;
    }
    let data = first.get("data")?;
    let mut out = Events {
        id: data.get("sessionId").and_then(Value::as_str)?.to_string(),
        cwd: data.pointer("/context/cwd").and_then(Value::as_str).map(str::to_string),
        last_time: first.get("timestamp").and_then(Value::as_str).map(str::to_string),
        ..Events::default()
    };
    for line in lines {
        let Ok(event) = serde_json::from_slice::<Value>(line) else { continue };
        if let Some(t) = event.get("timestamp").and_then(Value::as_str) {
            out.last_time = Some(t.to_string());
        }
        match event.get("type").and_then(Value::as_str) {
            Some("user.message") => {
                out.turns += 1;
                if out.first_prompt.is_none() {
                    out.first_prompt =
                        event.pointer("/data/content").and_then(Value::as_str).map(str::to_string);
                }
            }
            Some("assistant.message") => out.turns += 1,
            _ => {}
        }
    }
    Some(out)
}

/// The top-level `key: value` pairs of `workspace.yaml` as the CLI writes them: plain
/// scalars, or JSON-style double-quoted ones.
pub fn workspace_fields(text: &str) -> BTreeMap<String, String> {
    // One reader of the format: a file in another form has no fields lokust trusts.
    strict_workspace(text).unwrap_or_default().into_iter().collect()
}

fn scalar(v: &str) -> Option<String> {
    if v.starts_with('"') {
        serde_json::from_str::<String>(v).ok()
    } else if let Some(inner) = v.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')) {
        Some(inner.replace("''", "'"))
    } else {
        Some(v.to_string())
    }
}

/// The fields of `workspace.yaml` a restore writes; any other is dropped.
const WORKSPACE_KEYS: &[&str] = &[
    "id",
    "cwd",
    "git_root",
    "repository",
    "host_type",
    "branch",
    "client_name",
    "name",
    "user_named",
    "summary_count",
    "fork_count",
    "created_at",
    "updated_at",
];

/// Reads `workspace.yaml` only in the form the CLI writes it: `key: scalar` lines at the
/// start of the line, each key once. Anything else (a quoted or explicit key, a block, a
/// flow collection, an indented line) is refused, since a YAML reader could take it for a
/// `cwd` this one did not see.
pub fn strict_workspace(text: &str) -> anyhow::Result<Vec<(String, String)>> {
    let mut out: Vec<(String, String)> = Vec::new();
    for line in text.lines() {
        let line = line.trim_end();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some((key, value)) = line.split_once(": ").or_else(|| line.strip_suffix(':').map(|k| (k, "")))
        else {
            bail!(
                "workspace.yaml has a line that is not `key: value`: {:?}",
                crate::sanitize::for_terminal(line)
            );
        };
        if key.is_empty() || !key.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_') {
            bail!(
                "workspace.yaml has a key Copilot does not write: {:?}",
                crate::sanitize::for_terminal(key)
            );
        }
        let value = value.trim();
        if value.starts_with(['[', '{', '&', '*', '!', '|', '>', '?']) {
            bail!("workspace.yaml's {key} is not a plain or quoted scalar");
        }
        let Some(value) = scalar(value) else { bail!("workspace.yaml's {key} is not a readable scalar") };
        if out.iter().any(|(k, _)| k == key) {
            bail!("workspace.yaml names {key} twice");
        }
        out.push((key.to_string(), value));
    }
    Ok(out)
}

/// A fresh `workspace.yaml` for `new`, written by lokust from the carried one's known
/// fields: `cwd` and `git_root` must lie in the old project folder and move with it, every
/// value is written as a double-quoted scalar (numbers and booleans as they are).
pub fn clean_workspace(text: &str, old: &str, new: &str) -> anyhow::Result<String> {
    let mut out = String::new();
    for (key, value) in strict_workspace(text)? {
        if !WORKSPACE_KEYS.contains(&key.as_str()) {
            continue;
        }
        let value = if key == "cwd" || key == "git_root" {
            if !is_plain_absolute(&value) {
                bail!("workspace.yaml's {key} is not a plain absolute path");
            }
            moved(&value, old, new).with_context(|| {
                format!(
                    "workspace.yaml's {key} is outside the project's directory {}",
                    crate::sanitize::for_terminal(old)
                )
            })?
        } else {
            value
        };
        let plain = value == "true"
            || value == "false"
            || (!value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()));
        let written = if plain { value } else { serde_json::to_string(&value)? };
        out.push_str(&format!("{key}: {written}\n"));
    }
    Ok(out)
}

/// `text` with every path at or below `old` moved to `new`: the old path must stand as a
/// path of its own (not inside a longer name) and end there or go on with `/`.
fn move_in_text(text: &str, old: &str, new: &str) -> Option<String> {
    if !text.contains(old) {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let mut changed = false;
    while let Some(at) = rest.find(old) {
        let before = rest[..at].chars().next_back();
        let after = rest[at + old.len()..].chars().next();
        let own = before.is_none_or(|c| !(c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '/')))
            && after.is_none_or(|c| !(c.is_alphanumeric() || matches!(c, '_' | '-' | '.')));
        out.push_str(&rest[..at]);
        out.push_str(if own { new } else { old });
        changed |= own;
        rest = &rest[at + old.len()..];
    }
    out.push_str(rest);
    changed.then_some(out)
}

fn move_strings(value: &mut Value, old: &str, new: &str) -> bool {
    match value {
        Value::String(s) => match move_in_text(s, old, new) {
            Some(m) => {
                *s = m;
                true
            }
            None => false,
        },
        Value::Array(list) => list.iter_mut().fold(false, |c, v| move_strings(v, old, new) | c),
        Value::Object(map) => map.values_mut().fold(false, |c, v| move_strings(v, old, new) | c),
        _ => false,
    }
}

/// The transcript with the old path moved in every string of every event; lines with
/// nothing to move keep their bytes, every line stays one JSON value.
pub fn move_events(data: &[u8], old: &str, new: &str) -> Vec<u8> {
    let needle = super::disk::json_inner(old);
    let mut out = Vec::with_capacity(data.len() + 1024);
    for line in data.split_inclusive(|b| *b == b'\n') {
        let body = line.strip_suffix(b"\n").unwrap_or(line);
        if super::disk::json_line_may_hold(body, &needle)
            && let Ok(mut event) = serde_json::from_slice::<Value>(body)
            && move_strings(&mut event, old, new)
        {
            out.extend_from_slice(event.to_string().as_bytes());
            out.extend_from_slice(&line[body.len()..]);
        } else {
            out.extend_from_slice(line);
        }
    }
    out
}

/// Where a session ran: `workspace.yaml`'s `cwd` and `git_root`, else the start event's.
fn recorded_dirs(workspace: Option<&[u8]>, events: &Events) -> (Option<String>, Option<String>) {
    let fields = workspace.map(|w| workspace_fields(&String::from_utf8_lossy(w))).unwrap_or_default();
    (fields.get("cwd").cloned().or_else(|| events.cwd.clone()), fields.get("git_root").cloned())
}

/// Whether `rel` (inside a session folder) is a file that travels.
fn travels(rel: &str) -> bool {
    let parts: Vec<&str> = rel.split('/').collect();
    let plain = parts.iter().all(|p| !p.is_empty() && *p != "." && *p != ".." && !p.ends_with(".lock"));
    plain
        && parts.len() <= 8
        && (parts.len() == 1 && FILES.contains(&parts[0]) || parts.len() > 1 && FOLDERS.contains(&parts[0]))
}

/// The regular files of one session folder that travel, as paths relative to it; links
/// are never followed.
fn session_files(folder: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![(folder.to_path_buf(), String::new())];
    while let Some((dir, prefix)) = stack.pop() {
        let Ok(entries) = fs::read_dir(&dir) else { continue };
        for e in entries.flatten() {
            let Some(name) = e.file_name().to_str().map(str::to_string) else { continue };
            let rel = if prefix.is_empty() { name } else { format!("{prefix}/{name}") };
            match fs::symlink_metadata(e.path()) {
                Ok(m) if m.is_dir() && rel.split('/').count() < 8 => stack.push((e.path(), rel)),
                Ok(m) if m.is_file() && travels(&rel) => out.push(rel),
                _ => {}
            }
        }
    }
    out.sort();
    out
}

/// The sessions whose folder is `root` or below it (or whose repository root is), each
/// folder's travelling files unredacted; `None` when Copilot has none there.
pub fn carried_files(home: &Path, root: &str) -> anyhow::Result<Option<Vec<File>>> {
    let state = home.join("session-state");
    let Ok(entries) = fs::read_dir(&state) else { return Ok(None) };
    let mut ids: Vec<String> = entries
        .flatten()
        .filter(|e| fs::symlink_metadata(e.path()).is_ok_and(|m| m.is_dir()))
        .filter_map(|e| e.file_name().to_str().filter(|n| is_uuid(n)).map(str::to_string))
        .collect();
    ids.sort();
    let mut files = Vec::new();
    for id in ids {
        let folder = state.join(&id);
        let events = match read_bounded(&folder.join(EVENTS), MAX_FILE) {
            Ok(d) => complete_lines(d),
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e).with_context(|| format!("could not read {}", folder.display())),
        };
        let Some(parsed) = parse_events(&events) else { continue };
        let workspace = read_bounded(&folder.join(WORKSPACE), 1 << 20).ok();
        let (cwd, git_root) = recorded_dirs(workspace.as_deref(), &parsed);
        let ours = cwd.as_deref().is_some_and(|c| is_under(c, root))
            || git_root.as_deref().is_some_and(|g| is_under(g, root));
        if parsed.id != id || !ours || parsed.turns == 0 {
            continue;
        }
        for rel in session_files(&folder) {
            let data = match rel.as_str() {
                EVENTS => events.clone(),
                _ => read_bounded(&folder.join(&rel), MAX_FILE)
                    .with_context(|| format!("could not read {}/{rel}", folder.display()))?,
            };
            files.push(File { rel: format!("{id}/{rel}"), data });
        }
    }
    Ok((!files.is_empty()).then_some(files))
}

/// The sessions in a list of element files, oldest first.
pub fn summarize(files: &[File]) -> Vec<Session> {
    let mut out: Vec<Session> = files
        .iter()
        .filter(|f| f.rel.ends_with(&format!("/{EVENTS}")) && f.rel.matches('/').count() == 1)
        .filter_map(|f| {
            let e = parse_events(&f.data)?;
            let prefix = format!("{}/", e.id);
            Some(Session {
                files: files.iter().filter(|g| g.rel.starts_with(&prefix)).map(|g| g.rel.clone()).collect(),
                id: e.id,
                first_prompt: e.first_prompt,
                turns: e.turns,
                last_updated: e.last_time,
                outcome: None,
            })
        })
        .collect();
    out.sort_by(|a, b| a.last_updated.cmp(&b.last_updated).then(a.id.cmp(&b.id)));
    out
}

/// Refuses the element whole unless every file is `<uuid>/<a file that travels>`, each
/// session has an `events.jsonl` that starts its own session, and a `workspace.yaml`
/// beside it names that session and a plain absolute folder.
pub fn validate(files: &[File]) -> anyhow::Result<()> {
    let mut names = BTreeSet::new();
    let mut sessions = BTreeSet::new();
    let mut with_events = BTreeSet::new();
    for f in files {
        let Some((id, rel)) = f.rel.split_once('/').filter(|(id, rel)| is_uuid(id) && travels(rel)) else {
            bail!("{:?} is not <uuid>/ and a file of a session folder that travels", f.rel);
        };
        if !names.insert(f.rel.as_str()) {
            bail!("{} appears twice", f.rel);
        }
        if f.data.len() as u64 > MAX_FILE {
            bail!("{} is larger than {MAX_FILE} bytes", f.rel);
        }
        sessions.insert(id);
        match rel {
            EVENTS => {
                let e = parse_events(&f.data)
                    .with_context(|| format!("{} is not a Copilot transcript", f.rel))?;
                if e.id != id {
                    bail!("{}: its session.start names session {}", f.rel, e.id);
                }
                with_events.insert(id);
            }
            WORKSPACE => {
                let text = std::str::from_utf8(&f.data).with_context(|| format!("{} is not UTF-8", f.rel))?;
                let fields = strict_workspace(text).with_context(|| f.rel.clone())?;
                let get = |key: &str| fields.iter().find(|(k, _)| k == key).map(|(_, v)| v);
                if get("id").is_some_and(|i| i != id) {
                    bail!("{}: it names another session", f.rel);
                }
                for key in ["cwd", "git_root"] {
                    if let Some(dir) = get(key).filter(|d| !is_plain_absolute(d)) {
                        bail!(
                            "{}: its {key} {:?} is not a plain absolute path",
                            f.rel,
                            crate::sanitize::for_terminal(dir)
                        );
                    }
                }
            }
            _ => {}
        }
    }
    if let Some(id) = sessions.difference(&with_events).next() {
        bail!("session {id} has no {EVENTS}");
    }
    Ok(())
}

/// Where each session of a validated element goes for `root`, reading the receiver and
/// writing nothing: one folder each, placed whole. A session the receiver has (any file of
/// its folder differing) is kept unless `force`.
pub fn plan(
    home: &Path,
    root: &str,
    old_root: Option<&str>,
    files: &[File],
    force: bool,
    now: SystemTime,
) -> anyhow::Result<Plan> {
    validate(files)?;
    // The session resumes in its `cwd`: it must come from the project folder the element
    // names, and go to `root`.
    let old = old_root
        .filter(|o| is_plain_absolute(o) && *o != "/")
        .context("the element does not say which project folder it came from")?;
    let mut by_id: BTreeMap<&str, Vec<Entry>> = BTreeMap::new();
    for f in files {
        let (id, rel) = f.rel.split_once('/').unwrap_or_default();
        let data = match rel {
            EVENTS => move_events(&f.data, old, root),
            WORKSPACE => clean_workspace(&String::from_utf8_lossy(&f.data), old, root)
                .with_context(|| format!("session {id}"))?
                .into_bytes(),
            _ => f.data.clone(),
        };
        by_id.entry(id).or_default().push(Entry { rel: rel.to_string(), data, mtime: None });
    }
    let state = home.join("session-state");
    let mut plan = Plan::new("GitHub Copilot CLI", "session", state.to_string_lossy());
    let mut newest = None;
    for (id, mut entries) in by_id {
        let folder = state.join(id);
        let step = match fs::symlink_metadata(&folder) {
            Err(_) => Step::Write,
            Ok(_) if entries.iter().all(|e| fs::read(folder.join(&e.rel)).is_ok_and(|b| b == e.data)) => {
                Step::Same
            }
            Ok(_) if force => Step::Replace(vec![folder.clone()]),
            Ok(_) => Step::Keep(vec![folder.clone()]),
        };
        let events = entries.iter().find(|e| e.rel == EVENTS).map(|e| e.data.as_slice()).unwrap_or_default();
        let mtime = parse_events(events).and_then(|e| e.last_time).and_then(|t| time_of(&t, now));
        for e in entries.iter_mut().filter(|e| e.rel == EVENTS) {
            e.mtime = mtime;
        }
        if !matches!(step, Step::Keep(_)) {
            newest = newest.max(Some((mtime, id.to_string())));
        }
        plan.items.push(Placement {
            kind: Kind::Conversation,
            session: id.to_string(),
            root: home.to_path_buf(),
            rel: Path::new("session-state").join(id),
            content: Content::Folder(entries),
            step,
        });
    }
    plan.newest = newest.map(|(_, id)| id);
    Ok(plan)
}

/// GitHub Copilot CLI as an [`Agent`](super::Agent).
pub struct Copilot;

impl super::Agent for Copilot {
    fn id(&self) -> &'static str {
        "copilot"
    }

    fn name(&self) -> &'static str {
        "GitHub Copilot CLI"
    }

    fn kind(&self) -> &'static str {
        KIND
    }

    fn home(&self, probe: &crate::probe::Probe) -> Option<PathBuf> {
        copilot_home(probe.var_os("COPILOT_HOME"), probe.home().as_deref())
    }

    fn config_names(&self) -> &'static [super::ConfigName] {
        use crate::policy::name;
        const NAMES: &[super::ConfigName] = &[
            name(".github/copilot/", "repository settings, hooks and MCP servers"),
            name(".github/hooks/", "hooks it runs on session events"),
        ];
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

    fn programs(&self) -> &'static [&'static str] {
        &["copilot", "@github/copilot"]
    }

    fn resume_command(&self, id: &str) -> Option<String> {
        Some(format!("copilot --resume={id}"))
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
        plan(home, root, opts.old_root.as_deref(), files, opts.force, opts.now)
    }
}

/// A transcript as normalized events: prompts, answers, tool runs and their results.
pub fn events(files: &[File], session: &str) -> Vec<super::event::Event> {
    use super::event::{Event, Kind, json_lines, str_of, text_of};
    let Some(file) = files.iter().find(|f| f.rel == format!("{session}/{EVENTS}")) else { return Vec::new() };
    let mut out = Vec::new();
    for record in json_lines(&file.data) {
        let d = &record["data"];
        let base = Event {
            id: str_of(&record, "/id").unwrap_or_default().to_string(),
            parent_id: str_of(&record, "/parentId").map(str::to_string),
            ..Event::new(Kind::Meta).at(str_of(&record, "/timestamp"))
        };
        match str_of(&record, "/type") {
            Some("user.message") => out.push(Event {
                kind: Kind::User,
                role: Some("user".into()),
                text: Some(text_of(&d["content"])),
                ..base
            }),
            Some("assistant.message") => {
                let text = text_of(&d["content"]);
                if !text.trim().is_empty() {
                    out.push(Event {
                        kind: Kind::Assistant,
                        role: Some("assistant".into()),
                        text: Some(text),
                        message_id: str_of(d, "/messageId").map(str::to_string),
                        ..base
                    });
                }
            }
            Some("tool.execution_start") => out.push(Event {
                kind: Kind::ToolCall,
                role: Some("assistant".into()),
                tool_name: str_of(d, "/toolName").map(str::to_string),
                tool_input: d.get("arguments").cloned(),
                message_id: str_of(d, "/toolCallId").map(str::to_string),
                ..base
            }),
            Some("tool.execution_complete") => out.push(Event {
                kind: if d.get("success").and_then(Value::as_bool) == Some(false) {
                    Kind::Error
                } else {
                    Kind::ToolResult
                },
                role: Some("tool".into()),
                tool_output: Some(text_of(
                    d.pointer("/result/content").or_else(|| d.get("result")).unwrap_or(&Value::Null),
                )),
                message_id: str_of(d, "/toolCallId").map(str::to_string),
                ..base
            }),
            Some("session.error") => {
                out.push(Event { kind: Kind::Error, text: Some(text_of(&d["message"])), ..base })
            }
            _ => {}
        }
    }
    super::event::number(session, out)
}

/// Session `id` in this home, and the folder it resumes in.
pub fn find(home: &Path, id: &str) -> anyhow::Result<Option<super::Located>> {
    if !is_uuid(id) {
        return Ok(None);
    }
    let folder = home.join("session-state").join(id);
    let Ok(events) = read_bounded(&folder.join(EVENTS), MAX_FILE) else { return Ok(None) };
    let parsed = parse_events(&events).unwrap_or_default();
    let workspace = read_bounded(&folder.join(WORKSPACE), 1 << 20).ok();
    let (cwd, _) = recorded_dirs(workspace.as_deref(), &parsed);
    Ok(Some(super::Located { path: folder, dir: cwd }))
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID: &str = "0b5e1f3c-2a4d-4e6f-8a9b-1c2d3e4f5a6b";

    fn events(cwd: &str) -> Vec<u8> {
        let lines = [
            serde_json::json!({"type": "session.start", "id": "1d4c0a52-5b2e-4c55-9d0e-0a1b2c3d4e5f",
                "timestamp": "2026-11-24T06:32:04.935Z", "parentId": null,
                "data": {"sessionId": ID, "version": 1, "context": {"cwd": cwd, "gitRoot": cwd}}}),
            serde_json::json!({"type": "user.message", "id": "2d4c0a52-5b2e-4c55-9d0e-0a1b2c3d4e5f",
                "timestamp": "2026-11-24T06:32:05.000Z", "data": {"content": "remember HERON-4"}}),
            serde_json::json!({"type": "assistant.message", "id": "3d4c0a52-5b2e-4c55-9d0e-0a1b2c3d4e5f",
                "timestamp": "2026-11-24T06:32:06.000Z",
                "data": {"content": format!("read {cwd}/src/main.rs and {cwd}-other")}}),
        ];
        lines.iter().map(|l| format!("{l}\n")).collect::<String>().into_bytes()
    }

    #[test]
    fn a_move_rewrites_workspace_and_events_on_component_boundaries() {
        let yaml = "id: x\ncwd: /old/p/sub\ngit_root: /old/p\nname: remember\nsummary_count: 2\nmc_task: z\n";
        let moved = clean_workspace(yaml, "/old/p", "/new place/ü").unwrap();
        assert_eq!(
            moved,
            "id: \"x\"\ncwd: \"/new place/ü/sub\"\ngit_root: \"/new place/ü\"\nname: \"remember\"\nsummary_count: 2\n"
        );
        let fields = workspace_fields(&moved);
        assert_eq!(fields["cwd"], "/new place/ü/sub");
        let e = String::from_utf8(move_events(&events("/old/p"), "/old/p", "/n")).unwrap();
        assert!(e.contains("\"cwd\":\"/n\"") && e.contains("read /n/src/main.rs and /old/p-other"), "{e}");
        for line in e.lines() {
            serde_json::from_str::<Value>(line).unwrap();
        }
    }

    /// A stranger's `workspace.yaml` cannot name a folder outside the project, nor hide a
    /// `cwd` in a YAML form this reader would not see.
    #[test]
    fn a_workspace_outside_the_project_or_in_another_yaml_form_is_refused() {
        for yaml in [
            "cwd: /etc\n",
            "cwd: /old/p/../../etc\n",
            "git_root: /root\n",
            "\"cwd\": /etc\n",
            "? cwd\n: /etc\n",
            "cwd: /old/p\ncwd: /etc\n",
            "  cwd: /etc\n",
            "cwd: [/etc]\n",
            "cwd: relative\n",
        ] {
            assert!(clean_workspace(yaml, "/old/p", "/n").is_err(), "{yaml:?}");
        }
    }

    #[test]
    fn only_session_folders_travel() {
        let ok = |rel: &str| File {
            rel: rel.into(),
            data: if rel.ends_with(EVENTS) { events("/p") } else { b"x".to_vec() },
        };
        assert!(validate(&[ok(&format!("{ID}/{EVENTS}")), ok(&format!("{ID}/files/a.txt"))]).is_ok());
        for bad in [
            "session-store.db".to_string(),
            "config.json".into(),
            format!("{ID}.jsonl"),
            format!("{ID}/../config.json"),
            format!("{ID}/rewind-file-snapshots/index.json"),
            format!("{ID}/.workspace-fork.lock"),
            format!("{ID}/hooks/x.sh"),
            format!("not-a-uuid/{EVENTS}"),
        ] {
            assert!(validate(&[ok(&format!("{ID}/{EVENTS}")), ok(&bad)]).is_err(), "{bad}");
        }
        // Artifacts without a transcript, or a transcript of another session.
        assert!(validate(&[ok(&format!("{ID}/plan.md"))]).is_err());
        let other = "1b5e1f3c-2a4d-4e6f-8a9b-1c2d3e4f5a6b";
        assert!(validate(&[File { rel: format!("{other}/{EVENTS}"), data: events("/p") }]).is_err());
        let yaml = File { rel: format!("{ID}/{WORKSPACE}"), data: b"cwd: ../../etc\n".to_vec() };
        assert!(validate(&[ok(&format!("{ID}/{EVENTS}")), yaml]).is_err());
    }

    #[test]
    fn sessions_read_their_prompt_and_turns() {
        let s = summarize(&[File { rel: format!("{ID}/{EVENTS}"), data: events("/p") }]);
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].first_prompt.as_deref(), Some("remember HERON-4"));
        assert_eq!(s[0].turns, 2);
    }
}
