//! OpenCode sessions of one project: read from its SQLite database, read-only, carried in
//! OpenCode's own export format, and handed to `opencode import` in the new directory,
//! which binds them to the project there.
//!
//! OpenCode (`opencode-ai`, verified on 1.18.33) keeps every session in
//! `<data>/opencode/opencode.db` (`$XDG_DATA_HOME`, else `~/.local/share`), in WAL mode: the
//! rows sit in the `-wal` file right after a run, so the database is read through SQLite,
//! never copied. A session is selected by its `directory` (every clone of a repository
//! shares one project id), with its subagent children. Resume runs a session in its
//! recorded directory, so a moved one must be re-bound: `opencode import FILE`, run in the
//! new directory, sets the project, `directory` and `path` from there. What is imported is
//! what the user could have exported by hand (`opencode export <id>`), without what grants:
//! a session's `permission` rules that allow, its pending `revert` and its share.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime};

use anyhow::{Context, bail};
use rusqlite::OptionalExtension;
use serde_json::{Map, Value};

use super::disk::is_under;
use super::{File, Session};
use crate::fsutil;
use crate::place::{Edit, Kind, Placement, Plan, Step};

/// The kind of this payload in the `.lok`'s `bundles` array.
pub const KIND: &str = "opencode-sessions";

/// What of OpenCode never travels: provider keys and logins, MCP tokens, its configuration
/// (providers, agents, permissions), the rows that hold accounts, credentials and share
/// secrets, file snapshots and logs. Only the session, message and part rows of this
/// project's sessions are read.
pub const NEVER_CARRIED: &[&str] = &[
    "auth.json",
    "mcp-auth.json",
    "opencode.json",
    "account, control_account, credential, session_share rows",
    "snapshot/",
    "log/",
];

/// One session's export larger than this is refused.
pub const MAX_FILE: u64 = 256 << 20;
/// How long one `opencode import` may take.
const IMPORT_DEADLINE: Duration = Duration::from_secs(120);

/// `$XDG_DATA_HOME/opencode` when that is an absolute path, else `~/.local/share/opencode`.
pub fn data_dir(xdg_data_home: Option<&OsStr>, home: Option<&Path>) -> Option<PathBuf> {
    match xdg_data_home.map(Path::new) {
        Some(d) if d.is_absolute() => Some(d.join("opencode")),
        _ => home.map(|h| h.join(".local/share/opencode")),
    }
}

/// An OpenCode id: its prefix (`ses_`, `msg_`, `prt_`) and letters and digits.
pub fn is_id(id: &str, prefix: &str) -> bool {
    id.strip_prefix(prefix).is_some_and(|rest| {
        !rest.is_empty() && rest.len() <= 64 && rest.bytes().all(|b| b.is_ascii_alphanumeric())
    })
}

fn open_read_only(db: &Path) -> anyhow::Result<rusqlite::Connection> {
    let conn = rusqlite::Connection::open_with_flags(
        db,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .with_context(|| format!("could not open {}", db.display()))?;
    conn.busy_timeout(Duration::from_secs(5))?;
    Ok(conn)
}

/// The columns that name a folder: sessions', a project's worktree and its folders, and
/// workspaces'. What a move repoints.
const FOLDER_COLUMNS: &[(&str, &str)] = &[
    ("session", "directory"),
    ("project", "worktree"),
    ("project_directory", "directory"),
    ("workspace", "directory"),
];

/// Whether any row of the database in `data` names `dir` or a folder below it: a session
/// (archived ones too), a project's worktree, a project folder, a workspace.
pub fn names_folder(data: &Path, dir: &str) -> anyhow::Result<bool> {
    let db = data.join("opencode.db");
    if !db.is_file() {
        return Ok(false);
    }
    let conn = open_read_only(&db)?;
    for (table, column) in FOLDER_COLUMNS {
        let has: bool = conn
            .prepare(&format!("SELECT 1 FROM pragma_table_info('{table}') WHERE name = '{column}'"))?
            .exists([])?;
        let sql = format!(
            "SELECT 1 FROM {table} WHERE {column} = ?1 OR substr({column}, 1, length(?1) + 1) = ?1 || '/' LIMIT 1"
        );
        if has && conn.prepare(&sql)?.exists([dir])? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Repoints every row of the database in `data` that names `old`, or a folder below it, to
/// `new`, in one transaction that waits its turn behind OpenCode's own writers (the
/// database keeps its journal mode, WAL included); how many sessions moved. A table or
/// column this release lacks is passed over.
pub fn repoint(data: &Path, old: &str, new: &str) -> anyhow::Result<usize> {
    let db = data.join("opencode.db");
    let mut conn = rusqlite::Connection::open_with_flags(
        &db,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .with_context(|| format!("could not open {}", db.display()))?;
    conn.busy_timeout(Duration::from_secs(10))?;
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let mut sessions = 0;
    for (table, column) in FOLDER_COLUMNS {
        let has: bool = tx
            .prepare(&format!("SELECT 1 FROM pragma_table_info('{table}') WHERE name = '{column}'"))?
            .exists([])?;
        if !has {
            continue;
        }
        // Compared by characters, as SQLite's substr and length count them.
        let sql = format!(
            "UPDATE {table} SET {column} = ?2 || substr({column}, length(?1) + 1) \
             WHERE {column} = ?1 OR substr({column}, 1, length(?1) + 1) = ?1 || '/'"
        );
        let n = tx
            .execute(&sql, [old, new])
            .with_context(|| format!("could not repoint {table}.{column} in {}", db.display()))?;
        if *table == "session" {
            sessions = n;
        }
    }
    tx.commit().with_context(|| format!("could not write {}", db.display()))?;
    Ok(sessions)
}

fn json_column(text: Option<String>) -> Option<Value> {
    text.and_then(|t| serde_json::from_str(&t).ok())
}

/// A session's `info` as `opencode export` prints it, from its row.
fn session_info(row: &rusqlite::Row<'_>) -> rusqlite::Result<Value> {
    let mut info = Map::new();
    let text = |name: &str| row.get::<_, Option<String>>(name);
    let int = |name: &str| row.get::<_, Option<i64>>(name);
    info.insert("id".into(), row.get::<_, String>("id")?.into());
    info.insert("slug".into(), row.get::<_, String>("slug")?.into());
    info.insert("projectID".into(), row.get::<_, String>("project_id")?.into());
    if let Some(w) = text("workspace_id")? {
        info.insert("workspaceID".into(), w.into());
    }
    info.insert("directory".into(), row.get::<_, String>("directory")?.into());
    if let Some(p) = text("parent_id")? {
        info.insert("parentID".into(), p.into());
    }
    if let Some(p) = text("path")? {
        info.insert("path".into(), p.into());
    }
    info.insert("title".into(), row.get::<_, String>("title")?.into());
    if let Some(a) = text("agent")? {
        info.insert("agent".into(), a.into());
    }
    if let Some(m) = json_column(text("model")?) {
        info.insert("model".into(), m);
    }
    info.insert("version".into(), row.get::<_, String>("version")?.into());
    if let Some(additions) = int("summary_additions")? {
        let mut summary = serde_json::json!({"additions": additions, "deletions": int("summary_deletions")?.unwrap_or(0),
            "files": int("summary_files")?.unwrap_or(0)});
        if let Some(diffs) = json_column(text("summary_diffs")?) {
            summary["diffs"] = diffs;
        }
        info.insert("summary".into(), summary);
    }
    // JavaScript prints a whole number without a fraction, as the CLI's export does.
    let cost = row.get::<_, f64>("cost")?;
    let cost = if cost.fract() == 0.0 && cost.abs() < 9e15 {
        serde_json::json!(cost as i64)
    } else {
        serde_json::json!(cost)
    };
    info.insert("cost".into(), cost);
    info.insert(
        "tokens".into(),
        serde_json::json!({"input": int("tokens_input")?, "output": int("tokens_output")?,
            "reasoning": int("tokens_reasoning")?,
            "cache": {"read": int("tokens_cache_read")?, "write": int("tokens_cache_write")?}}),
    );
    if let Some(m) = json_column(text("metadata")?) {
        info.insert("metadata".into(), m);
    }
    if let Some(p) = json_column(text("permission")?) {
        info.insert("permission".into(), p);
    }
    let mut time = serde_json::json!({"created": int("time_created")?, "updated": int("time_updated")?});
    for (column, key) in [("time_compacting", "compacting"), ("time_archived", "archived")] {
        if let Some(t) = int(column)? {
            time[key] = t.into();
        }
    }
    info.insert("time".into(), time);
    Ok(Value::Object(info))
}

/// One session as `opencode export <id>` prints it: `info`, then its messages in order,
/// each with its parts.
pub fn export(conn: &rusqlite::Connection, id: &str) -> anyhow::Result<Value> {
    let info = conn
        .query_row("SELECT * FROM session WHERE id = ?1", [id], session_info)
        .optional()?
        .with_context(|| format!("no session {id}"))?;
    let mut parts: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    let mut stmt =
        conn.prepare("SELECT id, message_id, data FROM part WHERE session_id = ?1 ORDER BY message_id, id")?;
    let rows = stmt
        .query_map([id], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, String>(2)?)))?;
    for row in rows {
        let (part_id, message_id, data) = row?;
        let Ok(Value::Object(mut part)) = serde_json::from_str::<Value>(&data) else { continue };
        part.insert("id".into(), part_id.into());
        part.insert("sessionID".into(), id.into());
        part.insert("messageID".into(), message_id.clone().into());
        parts.entry(message_id).or_default().push(Value::Object(part));
    }
    let mut messages = Vec::new();
    let mut stmt =
        conn.prepare("SELECT id, data FROM message WHERE session_id = ?1 ORDER BY time_created, id")?;
    let rows = stmt.query_map([id], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?;
    for row in rows {
        let (message_id, data) = row?;
        let Ok(Value::Object(mut message)) = serde_json::from_str::<Value>(&data) else { continue };
        message.insert("id".into(), message_id.clone().into());
        message.insert("sessionID".into(), id.into());
        let parts = parts.remove(&message_id).unwrap_or_default();
        messages.push(serde_json::json!({"info": Value::Object(message), "parts": parts}));
    }
    Ok(serde_json::json!({"info": info, "messages": messages}))
}

/// The export with nothing that grants: `permission` rules that allow are dropped (deny
/// and ask stay), and the pending `revert` and the share are left out.
pub fn without_grants(mut export: Value) -> Value {
    if let Some(info) = export.get_mut("info").and_then(Value::as_object_mut) {
        info.remove("revert");
        info.remove("share");
        if let Some(Value::Array(rules)) = info.get_mut("permission") {
            rules.retain(|r| r.get("action").and_then(Value::as_str).is_some_and(|a| a != "allow"));
        } else {
            info.remove("permission");
        }
    }
    export
}

/// The sessions of `root` (a realpath) and of every folder below it that are not
/// archived, each with its subagent children, parents first; `None` when OpenCode has
/// none there.
pub fn carried_files(data: &Path, root: &str) -> anyhow::Result<Option<Vec<File>>> {
    let db = data.join("opencode.db");
    if !db.is_file() {
        return Ok(None);
    }
    let conn = open_read_only(&db)?;
    let mut stmt = conn
        .prepare("SELECT id, parent_id, directory FROM session WHERE time_archived IS NULL ORDER BY time_created, id")
        .with_context(|| format!("{} has no session table OpenCode 1.18 would have", db.display()))?;
    let all: Vec<(String, Option<String>, String)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<rusqlite::Result<_>>()
        .with_context(|| format!("could not read {}", db.display()))?;
    let mut chosen: BTreeSet<&str> =
        all.iter().filter(|(_, _, dir)| is_under(dir, root)).map(|(id, _, _)| id.as_str()).collect();
    // Children, grandchildren: until nothing more joins.
    loop {
        let before = chosen.len();
        for (id, parent, _) in &all {
            if parent.as_deref().is_some_and(|p| chosen.contains(p)) {
                chosen.insert(id.as_str());
            }
        }
        if chosen.len() == before {
            break;
        }
    }
    let mut files = Vec::new();
    let mut placed = BTreeSet::new();
    // Parents before children, so an import never names a parent it has not seen.
    while placed.len() < chosen.len() {
        let before = placed.len();
        for (id, parent, _) in &all {
            let ready = parent.as_deref().is_none_or(|p| !chosen.contains(p) || placed.contains(p));
            if chosen.contains(id.as_str()) && !placed.contains(id.as_str()) && ready {
                let doc = without_grants(export(&conn, id)?);
                files.push(File { rel: format!("{id}.json"), data: serde_json::to_vec_pretty(&doc)? });
                placed.insert(id.as_str());
            }
        }
        if placed.len() == before {
            break; // a parent loop: what is left has no root
        }
    }
    Ok((!files.is_empty()).then_some(files))
}

fn text_of(parts: &Value) -> Option<String> {
    parts
        .as_array()?
        .iter()
        .find_map(|p| {
            (p.get("type").and_then(Value::as_str) == Some("text"))
                .then(|| p.get("text").and_then(Value::as_str))?
        })
        .map(|t| t.strip_prefix('"').and_then(|t| t.strip_suffix('"')).unwrap_or(t).to_string())
}

/// The sessions in a list of element files, oldest first.
pub fn summarize(files: &[File]) -> Vec<Session> {
    let mut out: Vec<Session> = files
        .iter()
        .filter_map(|f| {
            let doc: Value = serde_json::from_slice(&f.data).ok()?;
            let info = doc.get("info")?;
            let messages = doc.get("messages").and_then(Value::as_array).cloned().unwrap_or_default();
            let first_prompt = messages
                .iter()
                .find(|m| m["info"]["role"] == "user")
                .and_then(|m| text_of(&m["parts"]))
                .or_else(|| info.get("title").and_then(Value::as_str).map(str::to_string));
            let updated = info["time"]["updated"].as_u64().map(|ms| {
                humantime::format_rfc3339_millis(SystemTime::UNIX_EPOCH + Duration::from_millis(ms))
                    .to_string()
            });
            Some(Session {
                id: info.get("id")?.as_str()?.to_string(),
                first_prompt,
                turns: messages
                    .iter()
                    .filter(|m| matches!(m["info"]["role"].as_str(), Some("user" | "assistant")))
                    .count(),
                last_updated: updated,
                files: vec![f.rel.clone()],
                outcome: info.get("parentID").and_then(Value::as_str).map(|p| format!("subagent of {p}")),
            })
        })
        .collect();
    out.sort_by(|a, b| a.last_updated.cmp(&b.last_updated).then(a.id.cmp(&b.id)));
    out
}

/// Refuses the element whole unless every file is `<session id>.json` holding that
/// session's export, each message and part of that session and no other, every id plain,
/// and a parent, when named, one of the element's own sessions.
pub fn validate(files: &[File]) -> anyhow::Result<()> {
    let mut ids = BTreeSet::new();
    for f in files {
        let Some(id) = f.rel.strip_suffix(".json").filter(|id| is_id(id, "ses_")) else {
            bail!("{:?} is not <session id>.json", f.rel);
        };
        if !ids.insert(id) {
            bail!("{} appears twice", f.rel);
        }
    }
    for f in files {
        let id = f.rel.trim_end_matches(".json");
        if f.data.len() as u64 > MAX_FILE {
            bail!("{} is larger than {MAX_FILE} bytes", f.rel);
        }
        let doc: Value = serde_json::from_slice(&f.data).with_context(|| format!("{} is not JSON", f.rel))?;
        let info =
            doc.get("info").and_then(Value::as_object).with_context(|| format!("{} has no info", f.rel))?;
        if info.get("id").and_then(Value::as_str) != Some(id) {
            bail!("{}: its info.id is not the one in its name", f.rel);
        }
        if let Some(parent) = info.get("parentID")
            && !parent.as_str().is_some_and(|p| ids.contains(p))
        {
            bail!("{}: its parent is not a session of this element", f.rel);
        }
        let messages = doc
            .get("messages")
            .and_then(Value::as_array)
            .with_context(|| format!("{} has no messages", f.rel))?;
        for m in messages {
            let mid = m["info"]["id"].as_str().filter(|m| is_id(m, "msg_"));
            let (Some(mid), Some(sid)) = (mid, m["info"]["sessionID"].as_str()) else {
                bail!("{}: a message without a plain id and session", f.rel);
            };
            if sid != id {
                bail!("{}: message {mid} belongs to another session", f.rel);
            }
            for p in
                m["parts"].as_array().with_context(|| format!("{}: message {mid} has no parts", f.rel))?
            {
                let ok = p["id"].as_str().is_some_and(|pid| is_id(pid, "prt_"))
                    && p["sessionID"].as_str() == Some(id)
                    && p["messageID"].as_str() == Some(mid);
                if !ok {
                    bail!("{}: a part of message {mid} names another message or session", f.rel);
                }
            }
        }
    }
    Ok(())
}

/// The sessions the receiver's database already has, of `ids`.
fn present(data: &Path, ids: &[&str]) -> anyhow::Result<BTreeSet<String>> {
    let db = data.join("opencode.db");
    if !db.is_file() {
        return Ok(BTreeSet::new());
    }
    let conn = open_read_only(&db)?;
    let mut out = BTreeSet::new();
    for id in ids {
        let found: Option<String> = conn
            .query_row("SELECT id FROM session WHERE id = ?1", [id], |r| r.get(0))
            .optional()
            .with_context(|| format!("could not read {}", db.display()))?;
        out.extend(found);
    }
    Ok(out)
}

/// `opencode` on the PATH of this process, as the user would run it, resolved to where
/// it really is. A relative PATH entry (`.`, `bin`) would be looked up again in the
/// checkout the import runs in, and a program below `root` may have come in the same
/// file: neither is ever run.
fn opencode_on_path(root: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    std::env::split_paths(&std::env::var_os("PATH")?)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join("opencode"))
        .filter(|p| std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0))
        .filter_map(|p| std::fs::canonicalize(p).ok())
        .find(|p| p.to_str().is_some_and(|p| !is_under(p, root)))
}

/// What a restore of a validated element writes: each session imported by the user's own
/// `opencode` (the only writer of its database), or, when it is not on PATH, its export
/// saved to import later. A session the receiver's database has is kept unless `force`
/// (a re-import binds it to the new path and keeps its messages).
pub fn plan(data: &Path, root: &str, files: &[File], force: bool) -> anyhow::Result<Plan> {
    validate(files)?;
    let ids: Vec<&str> = files.iter().map(|f| f.rel.trim_end_matches(".json")).collect();
    let have = present(data, &ids)?;
    let opencode = opencode_on_path(root);
    let store = match &opencode {
        Some(bin) => format!("its database, by `{} import FILE` run in {root}", bin.display()),
        None => format!("{} to import later (opencode is not on PATH)", pending(data).display()),
    };
    let mut plan = Plan::new("OpenCode", "session", store);
    for f in files {
        let id = f.rel.trim_end_matches(".json");
        let doc = serde_json::from_slice(&f.data).map(without_grants).unwrap_or(Value::Null);
        let export = serde_json::to_vec_pretty(&doc)?;
        let kept = have.contains(id) && !force;
        let item = match &opencode {
            Some(bin) => {
                let import =
                    Import { opencode: bin.clone(), root: root.to_string(), id: id.to_string(), export };
                Placement::edit(Kind::Conversation, id, data, "opencode.db", Box::new(import))
            }
            None => {
                let rel = Path::new(PENDING).join(&f.rel);
                let file = data.join(&rel);
                let quoted =
                    crate::shell::posix_quote(&file.to_string_lossy(), crate::shell::Quote::WhenNeeded);
                if !kept {
                    plan.notes.push(format!("  then, in {}: opencode import {}", safe(root), safe(&quoted)));
                }
                let step = match std::fs::read(&file) {
                    Ok(b) if b == export => Step::Same,
                    // An earlier restore's export, lokust's own: set aside, not kept.
                    Ok(_) => Step::Replace(vec![file]),
                    Err(_) => Step::Write,
                };
                Placement::file(Kind::Conversation, id, data, rel, export).with_step(step)
            }
        };
        plan.items.push(if kept { item.with_step(Step::Keep(vec![data.join("opencode.db")])) } else { item });
    }
    // The newest session that is not a subagent's, once it is imported.
    if opencode.is_some() {
        plan.newest = summarize(files).into_iter().rev().find(|s| s.outcome.is_none()).map(|s| s.id);
    }
    Ok(plan)
}

/// One session imported by OpenCode's own CLI.
struct Import {
    opencode: PathBuf,
    root: String,
    id: String,
    export: Vec<u8>,
}

impl Edit for Import {
    fn describe(&self) -> String {
        format!("{} imported by {}", self.id, self.opencode.display())
    }

    fn apply(&self, _db: &Path) -> anyhow::Result<()> {
        import(&self.opencode, &self.root, &self.id, &self.export)
    }
}

/// Runs `opencode import FILE` in `root` for one export and checks OpenCode's own
/// confirmation, not only its exit code. It must run in `root`, since OpenCode binds the
/// session to the project of its working directory; it runs there with the project's own
/// configuration (`opencode.json`, `.opencode/` plugins) switched off, so nothing the
/// checkout configures runs during a restore.
fn import(opencode: &Path, root: &str, id: &str, export: &[u8]) -> anyhow::Result<()> {
    let dir = tempfile::Builder::new().prefix("lokust-opencode-").tempdir()?;
    let file = dir.path().join(format!("{id}.json"));
    fsutil::write_private_atomic(&file, |f| std::io::Write::write_all(f, export))?;
    let mut cmd = Command::new(opencode);
    cmd.arg("import").arg(&file).current_dir(root).env("OPENCODE_DISABLE_PROJECT_CONFIG", "true");
    let out =
        crate::exec::output(cmd, IMPORT_DEADLINE).with_context(|| format!("opencode import of {id}"))?;
    let said = String::from_utf8_lossy(&out);
    if !said.contains(&format!("Imported session: {id}")) {
        bail!("opencode import of {id} did not confirm it: {}", said.trim());
    }
    Ok(())
}

/// OpenCode as an [`Agent`](super::Agent).
pub struct OpenCode;

impl super::Agent for OpenCode {
    fn id(&self) -> &'static str {
        "opencode"
    }

    fn name(&self) -> &'static str {
        "OpenCode"
    }

    fn kind(&self) -> &'static str {
        KIND
    }

    fn home(&self, probe: &crate::probe::Probe) -> Option<PathBuf> {
        data_dir(probe.var_os("XDG_DATA_HOME"), probe.home().as_deref())
    }

    fn config_names(&self) -> &'static [super::ConfigName] {
        use crate::policy::name;
        const NAMES: &[super::ConfigName] = &[
            name("opencode.json", "plugins, MCP servers, permissions"),
            name("opencode.jsonc", "plugins, MCP servers, permissions"),
            name(".opencode/", "plugins, agents, commands and tools it loads"),
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

    /// Rows of its database: a move repoints them in place.
    fn stored(&self, _home: &Path, _root: &str, _id: &str) -> anyhow::Result<Option<Vec<PathBuf>>> {
        Ok(None)
    }

    fn names_folder(&self, home: &Path, dir: &str) -> anyhow::Result<bool> {
        names_folder(home, dir)
    }

    fn repoint(&self, home: &Path, old: &str, new: &str) -> anyhow::Result<()> {
        repoint(home, old, new).map(|_| ())
    }

    fn programs(&self) -> &'static [&'static str] {
        &["opencode", "opencode-ai"]
    }

    fn is_id(&self, id: &str) -> bool {
        is_id(id, "ses_")
    }

    fn resume_command(&self, id: &str) -> Option<String> {
        Some(format!("opencode --session {id}"))
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
        plan(home, root, files, opts.force)
    }
}

/// Where exports wait when OpenCode is not installed on the receiver.
fn pending(data: &Path) -> PathBuf {
    data.join(PENDING)
}

const PENDING: &str = "lokust-import";

fn safe(s: &str) -> std::borrow::Cow<'_, str> {
    crate::sanitize::for_terminal(s)
}

/// An export as normalized events: each message's text parts, tool parts as a call and
/// its result, and errors.
pub fn events(files: &[File], session: &str) -> Vec<super::event::Event> {
    use super::event::{Event, Kind, str_of, text_of};
    let Some(doc) = files
        .iter()
        .find(|f| f.rel == format!("{session}.json"))
        .and_then(|f| serde_json::from_slice::<Value>(&f.data).ok())
    else {
        return Vec::new();
    };
    let time = |v: Option<&Value>| {
        v.and_then(Value::as_u64).map(|ms| {
            humantime::format_rfc3339_millis(SystemTime::UNIX_EPOCH + Duration::from_millis(ms)).to_string()
        })
    };
    let mut out = Vec::new();
    for m in doc.get("messages").and_then(Value::as_array).into_iter().flatten() {
        let info = &m["info"];
        let role = str_of(info, "/role").unwrap_or("assistant");
        let base = Event {
            timestamp: time(info.pointer("/time/created")),
            role: Some(role.to_string()),
            message_id: str_of(info, "/id").map(str::to_string),
            parent_id: str_of(info, "/parentID").map(str::to_string),
            model: str_of(info, "/modelID").map(str::to_string),
            ..Event::new(Kind::Meta)
        };
        let own = if role == "user" { Kind::User } else { Kind::Assistant };
        for part in m.get("parts").and_then(Value::as_array).into_iter().flatten() {
            let id = str_of(part, "/id").unwrap_or_default().to_string();
            match str_of(part, "/type") {
                Some("text") => {
                    let text = str_of(part, "/text").unwrap_or_default();
                    if !text.trim().is_empty() {
                        out.push(Event { id, kind: own, text: Some(text.to_string()), ..base.clone() });
                    }
                }
                Some("tool") => {
                    let state = &part["state"];
                    out.push(Event {
                        id: id.clone(),
                        kind: Kind::ToolCall,
                        tool_name: str_of(part, "/tool").map(str::to_string),
                        tool_input: state.get("input").cloned(),
                        ..base.clone()
                    });
                    let failed = str_of(state, "/status") == Some("error");
                    let output = state.get("output").or_else(|| state.get("error"));
                    if let Some(output) = output {
                        out.push(Event {
                            id: format!("{id}#result"),
                            kind: if failed { Kind::Error } else { Kind::ToolResult },
                            role: Some("tool".into()),
                            tool_name: str_of(part, "/tool").map(str::to_string),
                            tool_output: Some(text_of(output)),
                            ..base.clone()
                        });
                    }
                }
                _ => {}
            }
        }
        if let Some(error) = info.get("error").filter(|e| !e.is_null()) {
            out.push(Event { kind: Kind::Error, text: Some(text_of(error)), ..base.clone() });
        }
    }
    super::event::number(session, out)
}

/// Session `id` in this data folder's database (opened read-only), and its directory.
pub fn find(data: &Path, id: &str) -> anyhow::Result<Option<super::Located>> {
    let db = data.join("opencode.db");
    if !db.is_file() {
        return Ok(None);
    }
    let conn = open_read_only(&db)?;
    let dir: Option<String> = conn
        .query_row("SELECT directory FROM session WHERE id = ?1", [id], |r| r.get(0))
        .optional()
        .with_context(|| format!("could not read {}", db.display()))?;
    Ok(dir.map(|dir| super::Located { path: db, dir: Some(dir) }))
}

#[cfg(test)]
mod tests;
