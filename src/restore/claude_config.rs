//! The project's entry in the receiver's `.claude.json`: which of the carried keys a
//! restore may install, and a merge that loses nothing written meanwhile.
//!
//! A `.lok` can come from anyone, and the entry is where Claude Code keeps what it may
//! run and what it may do without asking: MCP servers (any command), allowed tools,
//! the folder's trust. So a default restore installs only an allowlist of keys that
//! cannot start a process or widen a permission (the last session's pointers and
//! figures); everything else is withheld, listed, and installed only with
//! `--trust-config`. See: docs in SECURITY.md, "What a restore installs".
//!
//! The file is rewritten by Claude Code itself, often, and possibly by other restores:
//! the merge holds an exclusive lock on the file's directory (for lokust runs), reads,
//! edits, and re-reads just before the rename, starting over when the file changed
//! (for any writer); then it reads the result back, so it never reports an entry that
//! did not stick. A symlinked `.claude.json` (dotfiles) is written through: its target
//! is replaced atomically, the link stays.

use std::fs::{self, File};
use std::io;
use std::os::unix::fs::MetadataExt;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use serde_json::{Map, Value};

use crate::sanitize::for_terminal as safe;

/// Keys of a project entry that neither run anything nor widen what the agent may do:
/// the last session's pointer and statistics, onboarding counters. Anything not named
/// here is withheld by default, including keys a newer Claude Code may add.
const INERT_KEYS: &[&str] = &[
    "lastSessionId",
    "lastCost",
    "lastAPIDuration",
    "lastAPIDurationWithoutRetries",
    "lastToolDuration",
    "lastDuration",
    "lastLinesAdded",
    "lastLinesRemoved",
    "lastTotalInputTokens",
    "lastTotalOutputTokens",
    "lastTotalCacheCreationInputTokens",
    "lastTotalCacheReadInputTokens",
    "lastTotalWebSearchRequests",
    "lastModelUsage",
    "lastFpsAverage",
    "lastFpsLow1Pct",
    "projectOnboardingSeenCount",
    "hasCompletedProjectOnboarding",
    "exampleFiles",
    "exampleFilesGeneratedAt",
];

/// A carried key that a default restore does not install, with what it would do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Withheld {
    pub key: String,
    /// One line per thing it would run or allow, already safe for a terminal.
    pub details: Vec<String>,
}

/// The carried entry split into what is always installed and what needs `--trust-config`.
#[derive(Debug, Clone, Default)]
pub struct Split {
    pub inert: Map<String, Value>,
    pub withheld: Vec<Withheld>,
    /// The withheld keys with their values, installed with `--trust-config`.
    pub withheld_values: Map<String, Value>,
}

/// Sorts a carried project entry's keys by what they can do.
pub fn split(entry: &Map<String, Value>) -> Split {
    let mut out = Split::default();
    for (key, value) in entry {
        if INERT_KEYS.contains(&key.as_str()) {
            out.inert.insert(key.clone(), value.clone());
        } else {
            out.withheld.push(Withheld { key: safe(key).into_owned(), details: describe(key, value) });
            out.withheld_values.insert(key.clone(), value.clone());
        }
    }
    out
}

/// What a withheld key would run or allow, command by command.
fn describe(key: &str, value: &Value) -> Vec<String> {
    let text = |v: &Value| match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    match (key, value) {
        ("mcpServers", Value::Object(servers)) => servers
            .iter()
            .map(|(name, server)| {
                let what = match (server.get("command"), server.get("url")) {
                    (Some(cmd), _) => {
                        let args: Vec<String> = server
                            .get("args")
                            .and_then(Value::as_array)
                            .map(|a| a.iter().map(text).collect())
                            .unwrap_or_default();
                        let line = std::iter::once(text(cmd)).chain(args).collect::<Vec<_>>().join(" ");
                        format!("runs: {line}")
                    }
                    (None, Some(url)) => format!("connects to: {}", text(url)),
                    (None, None) => "a server without command or url".to_string(),
                };
                let env: Vec<&str> = server
                    .get("env")
                    .and_then(Value::as_object)
                    .map(|e| e.keys().map(String::as_str).collect())
                    .unwrap_or_default();
                let env = if env.is_empty() { String::new() } else { format!(" (env: {})", env.join(", ")) };
                safe(&format!("MCP server {name} {what}{env}")).into_owned()
            })
            .collect(),
        ("allowedTools", Value::Array(tools)) => {
            tools.iter().map(|t| safe(&format!("allows without asking: {}", text(t))).into_owned()).collect()
        }
        ("hasTrustDialogAccepted", Value::Bool(true)) => vec!["marks the folder as trusted".into()],
        ("enabledMcpjsonServers", Value::Array(names)) => names
            .iter()
            .map(|n| safe(&format!("starts the repository's .mcp.json server {}", text(n))).into_owned())
            .collect(),
        ("enableAllProjectMcpServers", Value::Bool(true)) => {
            vec!["starts every server of the repository's .mcp.json".into()]
        }
        ("hooks", _) => vec!["runs hook commands".into()],
        _ => {
            let mut shown = text(value);
            if shown.len() > 80 {
                let cut = (0..=80).rev().find(|&i| shown.is_char_boundary(i)).unwrap_or(0);
                shown.truncate(cut);
                shown.push('…');
            }
            vec![safe(&format!("set to {shown}")).into_owned()]
        }
    }
}

/// The one line a restore prints when it withheld keys.
pub fn left_out_line(withheld: &[Withheld]) -> String {
    let keys: Vec<&str> = withheld.iter().map(|w| w.key.as_str()).collect();
    format!(
        "left out of the .claude.json project entry, as it can run commands or grant permissions: {} \
         (lokust-shell-restore --dry-run lists it; --trust-config installs it)",
        keys.join(", ")
    )
}

/// What became of the entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Merged {
    /// Added under the new path, with this many keys.
    Added { keys: usize },
    /// The receiver already had an entry for the path; it was kept as it is.
    KeptExisting,
}

/// Where a `.claude.json` really is: a symlink is followed to its target (which may not
/// exist yet), so the link itself is never replaced by a regular file.
pub fn resolve(global: &Path) -> anyhow::Result<PathBuf> {
    let mut path = global.to_path_buf();
    for _ in 0..40 {
        match fs::symlink_metadata(&path) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let target = fs::read_link(&path)
                    .with_context(|| format!("could not read the link {}", path.display()))?;
                path = match path.parent() {
                    Some(dir) if target.is_relative() => dir.join(target),
                    _ => target,
                };
            }
            Ok(meta) if !meta.is_file() => bail!("{} is not a regular file", path.display()),
            _ => return Ok(path),
        }
    }
    bail!("{}: too many levels of symbolic links", global.display())
}

/// An exclusive `flock` on a directory, held until dropped: lokust's own writers of one
/// file take turns.
struct DirLock {
    _held: File,
}

impl DirLock {
    fn take(dir: &Path) -> anyhow::Result<DirLock> {
        let file = File::open(dir).with_context(|| format!("could not open {} to lock it", dir.display()))?;
        // SAFETY: flock on a descriptor this struct owns.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } != 0 {
            return Err(io::Error::last_os_error())
                .with_context(|| format!("could not lock {}", dir.display()));
        }
        Ok(DirLock { _held: file })
    }
}

/// The identity of a file's content as last seen: a rewrite by anyone changes it.
fn version(path: &Path) -> Option<(u64, u64, i64, i64)> {
    fs::metadata(path).ok().map(|m| (m.ino(), m.len(), m.mtime(), m.mtime_nsec()))
}

/// Adds `entry` under `projects[new_dir]` of the `.claude.json` at `global` unless the
/// receiver has an entry for that path already; every other key of the file is kept.
pub fn merge(global: &Path, new_dir: &str, entry: Map<String, Value>) -> anyhow::Result<Merged> {
    let target = resolve(global)?;
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let _lock = DirLock::take(&dir)?;
    let keys = entry.len();
    for _ in 0..20 {
        let seen = version(&target);
        let mut doc: Value = match fs::read(&target) {
            Ok(text) => serde_json::from_slice(&text).with_context(|| {
                format!("{} is not valid JSON; its project entry was not added", target.display())
            })?,
            Err(e) if e.kind() == io::ErrorKind::NotFound => Value::Object(Map::new()),
            Err(e) => return Err(e).with_context(|| format!("could not read {}", target.display())),
        };
        let Some(top) = doc.as_object_mut() else { bail!("{} is not a JSON object", target.display()) };
        let projects = top.entry("projects").or_insert_with(|| Value::Object(Map::new()));
        let Some(projects) = projects.as_object_mut() else {
            bail!("{}: projects is not an object", target.display())
        };
        if projects.contains_key(new_dir) {
            return Ok(Merged::KeptExisting);
        }
        projects.insert(new_dir.to_string(), Value::Object(entry.clone()));
        let mode = crate::fsutil::mode(&target).unwrap_or(0o600);
        let mut changed_meanwhile = false;
        crate::fsutil::write_private_atomic_checked(
            &target,
            |f| {
                serde_json::to_writer_pretty(&mut *f, &doc)?;
                use std::os::unix::fs::PermissionsExt;
                f.set_permissions(fs::Permissions::from_mode(mode))
            },
            || {
                changed_meanwhile = version(&target) != seen;
                !changed_meanwhile
            },
        )
        .with_context(|| format!("could not write {}", target.display()))?;
        if changed_meanwhile {
            continue;
        }
        // Read back: another writer may have replaced the file right after the rename.
        let stuck = fs::read(&target)
            .ok()
            .and_then(|t| serde_json::from_slice::<Value>(&t).ok())
            .is_some_and(|d| d.get("projects").and_then(|p| p.get(new_dir)).is_some());
        if stuck {
            return Ok(Merged::Added { keys });
        }
    }
    bail!("{} kept changing while the project entry was added; it was not added", target.display())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn only_inert_keys_pass_and_everything_else_is_described() {
        let entry = obj(json!({
            "lastSessionId": "abc",
            "lastCost": 0.5,
            "hasTrustDialogAccepted": true,
            "allowedTools": ["Bash(*)"],
            "mcpServers": {"x": {"command": "sh", "args": ["-c", "touch /tmp/p"], "env": {"K": "v"}}},
            "someFutureKey": {"a": 1},
        }));
        let s = split(&entry);
        assert_eq!(s.inert.keys().collect::<Vec<_>>(), ["lastSessionId", "lastCost"]);
        let keys: Vec<&str> = s.withheld.iter().map(|w| w.key.as_str()).collect();
        assert_eq!(keys, ["hasTrustDialogAccepted", "allowedTools", "mcpServers", "someFutureKey"]);
        let mcp = &s.withheld[2].details[0];
        assert_eq!(mcp, "MCP server x runs: sh -c touch /tmp/p (env: K)");
        assert_eq!(s.withheld[1].details, ["allows without asking: Bash(*)"]);
        assert_eq!(s.withheld_values.len(), 4);
    }

    #[test]
    fn hostile_names_are_shown_escaped() {
        let entry = obj(json!({"mcpServers": {"a\u{1b}[2Jb": {"command": "x\u{202e}y"}}}));
        let d = &split(&entry).withheld[0].details[0];
        assert!(!d.contains('\u{1b}') && !d.contains('\u{202e}'), "{d}");
    }

    #[test]
    fn merge_keeps_other_keys_and_an_existing_entry() {
        let dir = tempfile::tempdir().unwrap();
        let global = dir.path().join(".claude.json");
        fs::write(&global, r#"{"userID":"u","projects":{"/a":{"x":1}}}"#).unwrap();
        assert_eq!(
            merge(&global, "/b", obj(json!({"lastSessionId": "s"}))).unwrap(),
            Merged::Added { keys: 1 }
        );
        assert_eq!(merge(&global, "/a", obj(json!({"lastSessionId": "s"}))).unwrap(), Merged::KeptExisting);
        let doc: Value = serde_json::from_slice(&fs::read(&global).unwrap()).unwrap();
        assert_eq!(doc["userID"], "u");
        assert_eq!(doc["projects"]["/a"]["x"], 1);
        assert_eq!(doc["projects"]["/b"]["lastSessionId"], "s");
    }

    #[test]
    fn a_symlinked_config_is_written_through_the_link() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("dotfiles").join("claude.json");
        fs::create_dir(dir.path().join("dotfiles")).unwrap();
        fs::write(&real, r#"{"projects":{}}"#).unwrap();
        let link = dir.path().join(".claude.json");
        std::os::unix::fs::symlink("dotfiles/claude.json", &link).unwrap();
        merge(&link, "/p", obj(json!({"lastSessionId": "s"}))).unwrap();
        assert!(fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        let doc: Value = serde_json::from_slice(&fs::read(&real).unwrap()).unwrap();
        assert_eq!(doc["projects"]["/p"]["lastSessionId"], "s");
    }
}
