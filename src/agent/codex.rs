//! Codex CLI conversations of one project: find the rollouts that ran there, and on restore
//! put them where Codex looks, with every path the CLI and the model read moved to the new
//! directory.
//!
//! Codex (`@openai/codex`, verified on 0.169.0) keeps each conversation as one JSONL file,
//! `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl` (`~/.codex` without
//! `CODEX_HOME`). Resume by id needs that canonical name; `resume --last` and the picker
//! filter on every `turn_context.cwd`; the model reads the `<cwd>` inside the
//! `<environment_context>` message. An index, `state_5.sqlite`, maps each id to its file's
//! absolute path: a row naming another file makes resume fail, so a restore points it at
//! the restored file, and never adds a row.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsStr;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use anyhow::{Context, bail};
use serde_json::Value;

pub use super::disk::is_uuid;
use super::disk::{complete_lines, is_under, moved, read_bounded, step_for, time_of};
use super::{File, Session};
use crate::place::{Edit, Kind, Placement, Plan, Step};

/// The kind of this payload in the `.lok`'s `bundles` array.
pub const KIND: &str = "codex-sessions";

/// What of `$CODEX_HOME` never travels: credentials, configuration (providers, MCP servers,
/// approval and sandbox policy), indexes, prompt history, logs and per-machine state. Only
/// rollout files under `sessions/` are ever read.
pub const NEVER_CARRIED: &[&str] = &[
    "auth.json",
    "config.toml",
    "state_*.sqlite",
    "thread_history_*.sqlite",
    "logs_*.sqlite",
    "memories_*.sqlite",
    "history.jsonl",
    "installation_id",
    "archived_sessions/",
    "shell_snapshots/",
    "skills/",
    "app-server-daemon/",
];

/// One rollout larger than this is refused: long real sessions are tens of MB.
pub const MAX_FILE: u64 = 512 << 20;

/// `$CODEX_HOME` when it is set and not empty, else `~/.codex`.
pub fn codex_home(codex_home: Option<&OsStr>, home: Option<&Path>) -> Option<PathBuf> {
    match codex_home {
        Some(h) if !h.is_empty() => Some(PathBuf::from(h)),
        _ => home.map(|h| h.join(".codex")),
    }
}

/// What a canonical rollout name says: `rollout-YYYY-MM-DDThh-mm-ss-<uuid>.jsonl`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RolloutName {
    pub year: String,
    pub month: String,
    pub day: String,
    pub id: String,
}

fn digits(s: &str, n: usize) -> bool {
    s.len() == n && s.bytes().all(|b| b.is_ascii_digit())
}

/// The parts of a canonical rollout file name; `None` for any other name, which Codex
/// refuses to resume.
pub fn parse_name(name: &str) -> Option<RolloutName> {
    let stem = name.strip_prefix("rollout-")?.strip_suffix(".jsonl")?;
    // YYYY-MM-DDThh-mm-ss is 19 characters, then a dash and the id.
    let (time, id) = (stem.get(..19)?, stem.get(20..)?);
    if stem.as_bytes().get(19) != Some(&b'-') || !is_uuid(id) {
        return None;
    }
    let (date, clock) = time.split_once('T')?;
    let d: Vec<&str> = date.split('-').collect();
    let c: Vec<&str> = clock.split('-').collect();
    let ok = d.len() == 3
        && digits(d[0], 4)
        && digits(d[1], 2)
        && digits(d[2], 2)
        && c.len() == 3
        && c.iter().all(|p| digits(p, 2));
    ok.then(|| RolloutName {
        year: d[0].to_string(),
        month: d[1].to_string(),
        day: d[2].to_string(),
        id: id.to_string(),
    })
}

/// Where a rollout goes inside the element and under `$CODEX_HOME`: `sessions/YYYY/MM/DD/`
/// of the date in its name.
pub fn rel_of(name: &str) -> Option<String> {
    let n = parse_name(name)?;
    Some(format!("sessions/{}/{}/{}/{name}", n.year, n.month, n.day))
}

/// What a rollout says about its conversation.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rollout {
    pub id: String,
    /// Every working directory it records (`session_meta` and each `turn_context`).
    pub cwds: BTreeSet<String>,
    pub first_prompt: Option<String>,
    /// User and assistant messages.
    pub turns: usize,
    /// The timestamp of its last line.
    pub last_time: Option<String>,
}

fn user_text(item: &Value) -> Option<String> {
    let parts = item.get("content")?.as_array()?;
    let text: Vec<&str> = parts.iter().filter_map(|p| p.get("text").and_then(Value::as_str)).collect();
    (!text.is_empty()).then(|| text.join(" "))
}

/// Reads a rollout: line 1 must be a `session_meta` with an id; unreadable later lines are
/// skipped as Codex skips them. `None` when it is not a rollout.
pub fn parse_rollout(data: &[u8]) -> Option<Rollout> {
    let mut lines = data.split(|b| *b == b'\n').filter(|l| !l.iter().all(u8::is_ascii_whitespace));
    let first: Value = serde_json::from_slice(lines.next()?).ok()?;
    if first.get("type").and_then(Value::as_str) != Some("session_meta") {
        return None;
    }
    let meta = first.get("payload")?;
    let id = meta.get("id").and_then(Value::as_str).filter(|id| is_uuid(id))?.to_string();
    let mut out = Rollout {
        id,
        last_time: first.get("timestamp").and_then(Value::as_str).map(str::to_string),
        ..Rollout::default()
    };
    if let Some(cwd) = meta.get("cwd").and_then(Value::as_str) {
        out.cwds.insert(cwd.to_string());
    }
    for line in lines {
        // Only the records read here are parsed: line 1 and tool output are the bulk.
        let wanted = [&b"turn_context"[..], b"item_completed", b"user_message", b"agent_message"]
            .iter()
            .any(|k| memchr::memmem::find(line, k).is_some());
        if !wanted {
            if let Some(t) = timestamp_of(line) {
                out.last_time = Some(t);
            }
            continue;
        }
        let Ok(record) = serde_json::from_slice::<Value>(line) else { continue };
        if let Some(t) = record.get("timestamp").and_then(Value::as_str) {
            out.last_time = Some(t.to_string());
        }
        let payload = &record["payload"];
        match (record.get("type").and_then(Value::as_str), payload.get("type").and_then(Value::as_str)) {
            (Some("turn_context"), _) => {
                if let Some(cwd) = payload.get("cwd").and_then(Value::as_str) {
                    out.cwds.insert(cwd.to_string());
                }
            }
            (Some("event_msg"), Some("item_completed")) => match payload["item"]["type"].as_str() {
                Some("UserMessage") => {
                    out.turns += 1;
                    if out.first_prompt.is_none() {
                        out.first_prompt = user_text(&payload["item"]);
                    }
                }
                Some("AgentMessage") => out.turns += 1,
                _ => {}
            },
            // Releases before the item events wrote these.
            (Some("event_msg"), Some("user_message")) => {
                out.turns += 1;
                if out.first_prompt.is_none() {
                    out.first_prompt = payload.get("message").and_then(Value::as_str).map(str::to_string);
                }
            }
            (Some("event_msg"), Some("agent_message")) => out.turns += 1,
            _ => {}
        }
    }
    Some(out)
}

/// The `timestamp` of a line without parsing it all: it is the first key Codex writes.
fn timestamp_of(line: &[u8]) -> Option<String> {
    let rest = line.strip_prefix(b"{\"timestamp\":\"")?;
    let end = memchr::memchr(b'"', rest)?;
    std::str::from_utf8(&rest[..end]).ok().map(str::to_string)
}

/// Every canonical rollout below `sessions/` (dated folders, or flat as older releases
/// left them), as (path, name), links never followed.
fn rollout_files(sessions: &Path) -> Vec<(PathBuf, String)> {
    fn walk(dir: &Path, depth: usize, out: &mut Vec<(PathBuf, String)>) {
        let Ok(entries) = fs::read_dir(dir) else { return };
        let mut entries: Vec<_> = entries.flatten().collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let Some(name) = e.file_name().to_str().map(str::to_string) else { continue };
            let Ok(meta) = fs::symlink_metadata(e.path()) else { continue };
            if meta.is_dir() && depth < 3 && digits(&name, if depth == 0 { 4 } else { 2 }) {
                walk(&e.path(), depth + 1, out);
            } else if meta.is_file() && parse_name(&name).is_some() {
                out.push((e.path(), name));
            }
        }
    }
    let mut out = Vec::new();
    walk(sessions, 0, &mut out);
    out
}

/// The rollouts of `root` (a realpath) and of every folder below it, unredacted; `None`
/// when Codex has no conversation there.
pub fn carried_files(home: &Path, root: &str) -> anyhow::Result<Option<Vec<File>>> {
    let mut files = Vec::new();
    let mut seen = BTreeSet::new();
    for (path, name) in rollout_files(&home.join("sessions")) {
        // Too large to carry: an error only when it is this project's, by its first records;
        // another project's giant rollout must not stop this one's bundle.
        if fs::symlink_metadata(&path).is_ok_and(|m| m.len() > MAX_FILE) {
            if head_is_under(&path, root) {
                bail!("{} is larger than {MAX_FILE} bytes", path.display());
            }
            continue;
        }
        let data = match read_bounded(&path, MAX_FILE) {
            Ok(d) => complete_lines(d),
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue, // deleted meanwhile
            Err(e) => return Err(e).with_context(|| format!("could not read {}", path.display())),
        };
        let Some(rollout) = parse_rollout(&data) else { continue };
        if !rollout.cwds.iter().any(|c| is_under(c, root)) || !name.contains(&rollout.id) {
            continue;
        }
        let Some(rel) = rel_of(&name) else { continue };
        if seen.insert(rollout.id.clone()) {
            files.push(File { rel, data });
        }
    }
    Ok((!files.is_empty()).then_some(files))
}

/// Whether the first MiB of a rollout says it worked below `root`. When its first record
/// is longer than that, its `cwd` field is read where it stands; a rollout that cannot be
/// read, or names no directory, counts as this project's, so it is never left out quietly.
fn head_is_under(path: &Path, root: &str) -> bool {
    use std::io::Read;
    let mut head = Vec::new();
    if fs::File::open(path).and_then(|f| f.take(1 << 20).read_to_end(&mut head)).is_err() {
        return true;
    }
    if let Some(r) = parse_rollout(&complete_lines(head.clone())) {
        return r.cwds.iter().any(|c| is_under(c, root));
    }
    first_cwd(&head).is_none_or(|cwd| is_under(&cwd, root))
}

/// The first `"cwd": "…"` string in `bytes`, unescaped.
fn first_cwd(bytes: &[u8]) -> Option<String> {
    let at = memchr::memmem::find(bytes, b"\"cwd\"")? + b"\"cwd\"".len();
    let skip_space = |r: &[u8]| r.iter().position(|b| !b.is_ascii_whitespace());
    let rest = &bytes[at..];
    let rest = &rest[skip_space(rest)?..];
    let rest = rest.strip_prefix(b":")?;
    let rest = &rest[skip_space(rest)?..];
    if rest.first() != Some(&b'"') {
        return None;
    }
    let mut escaped = false;
    let end = rest.iter().enumerate().skip(1).find_map(|(i, &b)| {
        let closes = b == b'"' && !escaped;
        escaped = b == b'\\' && !escaped;
        closes.then_some(i)
    })?;
    serde_json::from_slice(&rest[..=end]).ok()
}

/// The conversations in a list of element files, oldest first.
pub fn summarize(files: &[File]) -> Vec<Session> {
    let mut out: Vec<Session> = files
        .iter()
        .filter_map(|f| {
            let r = parse_rollout(&f.data)?;
            Some(Session {
                id: r.id,
                first_prompt: r.first_prompt,
                turns: r.turns,
                last_updated: r.last_time,
                files: vec![f.rel.clone()],
                outcome: None,
            })
        })
        .collect();
    out.sort_by(|a, b| a.last_updated.cmp(&b.last_updated).then(a.id.cmp(&b.id)));
    out
}

/// Checks a path inside a `codex-sessions` element: exactly
/// `sessions/YYYY/MM/DD/rollout-YYYY-MM-DDThh-mm-ss-<uuid>.jsonl`, its folders the date of
/// its name.
pub fn check_rel(rel: &str) -> anyhow::Result<()> {
    let parts: Vec<&str> = rel.split('/').collect();
    let ok = match parts.as_slice() {
        ["sessions", y, m, d, name] => {
            parse_name(name).is_some_and(|n| n.year == *y && n.month == *m && n.day == *d)
        }
        _ => false,
    };
    if !ok {
        bail!("{rel:?} is not sessions/YYYY/MM/DD/ with a canonical rollout name of that date");
    }
    Ok(())
}

/// Refuses the element whole unless every file is an allowed path, once, holding a
/// rollout whose `session_meta` id is the one in its name, each id once.
pub fn validate(files: &[File]) -> anyhow::Result<()> {
    let mut ids = BTreeSet::new();
    for f in files {
        check_rel(&f.rel)?;
        if f.data.len() as u64 > MAX_FILE {
            bail!("{} is larger than {MAX_FILE} bytes", f.rel);
        }
        let rollout = parse_rollout(&f.data).with_context(|| format!("{} is not a Codex rollout", f.rel))?;
        let name = f.rel.rsplit('/').next().unwrap_or_default();
        if parse_name(name).map(|n| n.id).as_deref() != Some(rollout.id.as_str()) {
            bail!("{}: its session_meta id {} is not the one in its name", f.rel, rollout.id);
        }
        if !ids.insert(rollout.id.clone()) {
            bail!("session {} appears twice", rollout.id);
        }
    }
    Ok(())
}

/// Text with every `>old<` and `>old/` (a path as the content of an XML element, as in
/// `<cwd>` and `<root>` of the environment context) moved to `new`.
fn moved_in_markup(text: &str, old: &str, new: &str) -> Option<String> {
    let (whole, below) = (format!(">{old}<"), format!(">{old}/"));
    if !text.contains(&whole) && !text.contains(&below) {
        return None;
    }
    Some(text.replace(&whole, &format!(">{new}<")).replace(&below, &format!(">{new}/")))
}

/// Moves the paths of one record; true when something changed.
fn move_value(value: &mut Value, old: &str, new: &str) -> bool {
    let mut changed = false;
    match value {
        Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                match (key.as_str(), &mut *v) {
                    ("cwd", Value::String(s)) => {
                        if let Some(m) = moved(s, old, new) {
                            *s = m;
                            changed = true;
                        }
                    }
                    ("runtime_workspace_roots", Value::Array(list)) => {
                        for item in list.iter_mut() {
                            if let Value::String(s) = item
                                && let Some(m) = moved(s, old, new)
                            {
                                *s = m;
                                changed = true;
                            }
                        }
                    }
                    _ => changed |= move_value(v, old, new),
                }
            }
        }
        Value::Array(list) => {
            for v in list {
                changed |= move_value(v, old, new);
            }
        }
        Value::String(s) => {
            if let Some(m) = moved_in_markup(s, old, new) {
                *s = m;
                changed = true;
            }
        }
        _ => {}
    }
    changed
}

/// A rollout moved from `old` to `new`: every `cwd`, every `runtime_workspace_roots` entry
/// and every path in the environment-context markup the model reads. Lines with nothing
/// to move keep their bytes.
pub fn relocate(data: &[u8], old: &str, new: &str) -> Vec<u8> {
    if old == new {
        return data.to_vec();
    }
    // The old path as it appears inside a JSON string.
    let needle = super::disk::json_inner(old);
    let mut out = Vec::with_capacity(data.len() + 1024);
    for line in data.split_inclusive(|b| *b == b'\n') {
        let body = line.strip_suffix(b"\n").unwrap_or(line);
        if super::disk::json_line_may_hold(body, &needle)
            && let Ok(mut record) = serde_json::from_slice::<Value>(body)
            && move_value(&mut record, old, new)
        {
            out.extend_from_slice(record.to_string().as_bytes());
            out.extend_from_slice(&line[body.len()..]);
        } else {
            out.extend_from_slice(line);
        }
    }
    out
}

/// Every rollout of the receiver by id.
fn receiver_rollouts(home: &Path) -> BTreeMap<String, Vec<PathBuf>> {
    let mut by_id: BTreeMap<String, Vec<PathBuf>> = BTreeMap::new();
    // An archived conversation is still the receiver's: an incoming one of the same id is
    // a conflict, not a new file for the index to be pointed at.
    let active = rollout_files(&home.join("sessions"));
    let archived = rollout_files(&home.join("archived_sessions"));
    for (path, name) in active.into_iter().chain(archived) {
        if let Some(n) = parse_name(&name) {
            by_id.entry(n.id).or_default().push(path);
        }
    }
    by_id
}

/// The index databases of the receiver (`state_<n>.sqlite`), oldest schema first.
fn index_databases(home: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = fs::read_dir(home)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| {
            e.file_name().to_str().is_some_and(|n| {
                n.strip_prefix("state_")
                    .and_then(|r| r.strip_suffix(".sqlite"))
                    .is_some_and(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()))
            }) && fs::symlink_metadata(e.path()).is_ok_and(|m| m.is_file())
        })
        .map(|e| e.path())
        .collect();
    found.sort();
    found
}

/// The file an index names for `id`, when it has a row for it. A database without the
/// table or column is not one lokust understands, and is left alone.
fn indexed_path(db: &Path, id: &str) -> anyhow::Result<Option<String>> {
    let conn = rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .with_context(|| format!("could not open {}", db.display()))?;
    conn.busy_timeout(Duration::from_secs(5))?;
    let found = conn.query_row("SELECT rollout_path FROM threads WHERE id = ?1", [id], |row| row.get(0));
    match found {
        Ok(path) => Ok(Some(path)),
        Err(rusqlite::Error::QueryReturnedNoRows) => Ok(None),
        Err(rusqlite::Error::SqliteFailure(_, Some(msg))) if msg.contains("no such") => Ok(None),
        Err(e) => Err(e).with_context(|| format!("could not read {}", db.display())),
    }
}

/// An index row to point at a placed rollout, only if it still names the file it named
/// when the plan was made.
struct Repoint {
    id: String,
    was: String,
    dest: PathBuf,
}

impl Edit for Repoint {
    fn describe(&self) -> String {
        format!("index row of {}: {} → {}", self.id, self.was, self.dest.display())
    }

    fn apply(&self, db: &Path) -> anyhow::Result<()> {
        let conn = rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE)
            .with_context(|| format!("could not open {}", db.display()))?;
        conn.busy_timeout(Duration::from_secs(10))?;
        let dest = self.dest.to_str().context("the rollout path is not UTF-8")?;
        conn.execute(
            "UPDATE threads SET rollout_path = ?1 WHERE id = ?2 AND rollout_path = ?3",
            [dest, &self.id, &self.was],
        )
        .with_context(|| format!("could not update {}", db.display()))?;
        Ok(())
    }
}

/// A Codex process of this user working in `home`, which may hold its index open: its
/// pid. A process whose environment cannot be read counts as one; so does any process
/// when the process table cannot be read.
pub fn running_codex(home: &Path) -> Option<u32> {
    use sysinfo::{ProcessRefreshKind, ProcessesToUpdate, System, UpdateKind};
    // SAFETY: getuid has no preconditions and cannot fail.
    let me = unsafe { libc::getuid() };
    let Ok(mut system) = System::new() else { return Some(0) };
    system.refresh_processes_specifics(
        ProcessesToUpdate::All,
        true,
        ProcessRefreshKind::nothing().with_user(UpdateKind::Always).with_environ(UpdateKind::Always),
    );
    let ours = fs::canonicalize(home).unwrap_or_else(|_| home.to_path_buf());
    system
        .processes()
        .iter()
        // A zombie (a Codex that has exited, not yet reaped) shows no environment and
        // holds nothing open.
        .filter(|(_, p)| {
            p.name() == "codex"
                && p.user_id().is_some_and(|u| **u == me)
                && !matches!(p.status(), sysinfo::ProcessStatus::Zombie | sysinfo::ProcessStatus::Dead)
        })
        .find(|(_, p)| {
            let var = |name: &str| {
                p.environ().iter().find_map(|kv| {
                    kv.to_str()?.strip_prefix(name)?.strip_prefix('=').map(std::ffi::OsString::from)
                })
            };
            if p.environ().is_empty() {
                return true;
            }
            let home_var = var("HOME").map(PathBuf::from);
            codex_home(var("CODEX_HOME").as_deref(), home_var.as_deref())
                .is_none_or(|h| fs::canonicalize(&h).unwrap_or(h) == ours)
        })
        .map(|(pid, _)| pid.as_u32())
}

/// When the rollout was last written: its last timestamp, never later than `now`.
fn last_written(data: &[u8], now: SystemTime) -> Option<SystemTime> {
    time_of(&parse_rollout(data)?.last_time?, now)
}

/// Where each rollout of a validated element goes for `root`, what is in the way, and
/// which index rows must follow; reads the receiver, writes nothing. Refused when an
/// index row must change while Codex runs, since it holds the index open.
pub fn plan(
    home: &Path,
    root: &str,
    old_root: Option<&str>,
    files: &[File],
    force: bool,
    now: SystemTime,
) -> anyhow::Result<Plan> {
    validate(files)?;
    let have = receiver_rollouts(home);
    let databases = index_databases(home);
    let mut plan = Plan::new("Codex CLI", "conversation", home.join("sessions").to_string_lossy());
    let mut newest = None;
    let mut repoints = false;
    for f in files {
        let id = parse_name(f.rel.rsplit('/').next().unwrap_or_default()).map(|n| n.id).unwrap_or_default();
        // The old path comes from the file: only an absolute path below `/` is moved.
        let data = match old_root.filter(|o| o.starts_with('/') && o.len() > 1) {
            Some(old) => relocate(&f.data, old, root),
            None => f.data.clone(),
        };
        let dest = home.join(&f.rel);
        let step = step_for(have.get(&id).map_or(&[][..], Vec::as_slice), &dest, &data, force);
        let mtime = last_written(&data, now);
        let kept = matches!(step, Step::Keep(_));
        if !kept {
            newest = newest.max(Some((mtime, id.clone())));
        }
        plan.items.push(
            Placement::file(Kind::Conversation, &id, home, &f.rel, data).with_mtime(mtime).with_step(step),
        );
        if kept {
            continue;
        }
        for db in &databases {
            if let Some(named) = indexed_path(db, &id)?
                && Path::new(&named) != dest
            {
                let name = db.file_name().context("an index without a name")?;
                let edit = Repoint { id: id.clone(), was: named, dest: dest.clone() };
                plan.items.push(Placement::edit(Kind::Index, &id, home, name, Box::new(edit)));
                repoints = true;
            }
        }
    }
    if repoints && let Some(pid) = running_codex(home) {
        bail!(
            "Codex is running (pid {pid}) and its index names another file for a restored session; \
             quit Codex and restore again"
        );
    }
    plan.newest = newest.map(|(_, id)| id);
    Ok(plan)
}

/// Codex CLI as an [`Agent`](super::Agent).
pub struct Codex;

impl super::Agent for Codex {
    fn id(&self) -> &'static str {
        "codex"
    }

    fn name(&self) -> &'static str {
        "Codex CLI"
    }

    fn kind(&self) -> &'static str {
        KIND
    }

    fn home(&self, probe: &crate::probe::Probe) -> Option<PathBuf> {
        codex_home(probe.var_os("CODEX_HOME"), probe.home().as_deref())
    }

    fn config_names(&self) -> &'static [super::ConfigName] {
        use crate::policy::name;
        const NAMES: &[super::ConfigName] =
            &[name(".codex/", "project config.toml (MCP servers, approval and sandbox policy), hooks")];
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
        &["codex", "@openai/codex"]
    }

    fn resume_command(&self, id: &str) -> Option<String> {
        Some(format!("codex resume {id}"))
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

/// A rollout as normalized events: its messages (the developer's and the system's as
/// meta), function calls and their outputs; the event stream's copies of the messages
/// only when the rollout has no message items (older formats).
pub fn events(files: &[File], session: &str) -> Vec<super::event::Event> {
    use super::event::{Event, Kind, json_lines, str_of, text_of};
    let Some(file) = files
        .iter()
        .find(|f| parse_name(f.rel.rsplit('/').next().unwrap_or_default()).is_some_and(|n| n.id == session))
    else {
        return Vec::new();
    };
    let mut items = Vec::new();
    let mut stream = Vec::new();
    for record in json_lines(&file.data) {
        let at = str_of(&record, "/timestamp");
        let p = &record["payload"];
        let ty = str_of(p, "/type");
        match (str_of(&record, "/type"), ty) {
            (Some("response_item"), Some("message")) => {
                let role = str_of(p, "/role").unwrap_or("assistant");
                let kind = match role {
                    "user" => Kind::User,
                    "assistant" => Kind::Assistant,
                    _ => Kind::Meta,
                };
                items.push(Event::text(kind, text_of(&p["content"])).at(at).role(role));
            }
            (Some("response_item"), Some("function_call" | "custom_tool_call" | "local_shell_call")) => {
                let input =
                    p.get("arguments").or_else(|| p.get("input")).or_else(|| p.get("action")).cloned();
                let input = match input {
                    Some(Value::String(s)) => serde_json::from_str(&s).ok().or(Some(Value::String(s))),
                    other => other,
                };
                items.push(Event {
                    tool_name: str_of(p, "/name").or(ty).map(str::to_string),
                    tool_input: input,
                    message_id: str_of(p, "/call_id").map(str::to_string),
                    ..Event::new(Kind::ToolCall).at(at).role("assistant")
                });
            }
            (Some("response_item"), Some("function_call_output" | "custom_tool_call_output")) => {
                items.push(Event {
                    tool_output: Some(text_of(&p["output"])),
                    message_id: str_of(p, "/call_id").map(str::to_string),
                    ..Event::new(Kind::ToolResult).at(at).role("tool")
                });
            }
            (Some("event_msg"), Some("user_message")) => {
                stream.push(Event::text(Kind::User, text_of(&p["message"])).at(at).role("user"))
            }
            (Some("event_msg"), Some("agent_message")) => {
                stream.push(Event::text(Kind::Assistant, text_of(&p["message"])).at(at).role("assistant"))
            }
            (Some("event_msg"), Some("error")) => {
                items.push(Event::text(Kind::Error, text_of(&p["message"])).at(at))
            }
            _ => {}
        }
    }
    let spoken = items.iter().any(|e| matches!(e.kind, Kind::User | Kind::Assistant));
    if !spoken {
        items.extend(stream);
        items.sort_by(|a, b| a.timestamp.cmp(&b.timestamp));
    }
    super::event::number(session, items)
}

/// Conversation `id` in this home, active or archived, and the folder it worked in.
pub fn find(home: &Path, id: &str) -> anyhow::Result<Option<super::Located>> {
    let active = rollout_files(&home.join("sessions"));
    let archived = rollout_files(&home.join("archived_sessions"));
    for (path, name) in active.into_iter().chain(archived) {
        if parse_name(&name).is_some_and(|n| n.id == id) {
            let data = read_bounded(&path, MAX_FILE)
                .with_context(|| format!("could not read {}", path.display()))?;
            let dir = parse_rollout(&data).and_then(|r| r.cwds.into_iter().next());
            return Ok(Some(super::Located { path, dir }));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests;
