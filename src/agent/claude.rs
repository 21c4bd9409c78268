//! Claude Code as an agent whose sessions lokust moves: what of its configuration may
//! be installed on the receiving machine.
//!
//! A `.lok` can come from anyone, and a project's `.claude.json` entry is where Claude
//! Code keeps what it may run and what it may do without asking: MCP servers (any
//! command), allowed tools, the folder's trust. So a restore installs only an allowlist
//! of keys that cannot start a process or widen a permission (the last session's
//! pointers and figures); everything else is withheld, listed, and installed only with
//! `--trust-config`. See SECURITY.md, "What a restore installs from someone else's file".

use serde_json::{Map, Value};

use crate::policy::{ConfigName, name};
use crate::sanitize::for_terminal as safe;

/// The name `--agents` takes. Its project travels in the `.lok`'s top-level `bundle`.
pub const NAME: &str = "claude";

/// The name in messages.
pub const DISPLAY_NAME: &str = "Claude Code";

/// What Claude Code reads from a checkout that runs or allows: project settings (hooks,
/// allowed tools, MCP approvals), commands, subagents, skills, and project MCP servers.
pub const CONFIG_NAMES: &[ConfigName] = &[
    name(".claude/", "settings with hooks and allowed tools, commands, subagents, skills"),
    name(".mcp.json", "MCP servers it starts"),
];

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

/// A Claude Code transcript (`<id>.jsonl`) as normalized events: what was said, the tools
/// called and what they returned, summaries and system notes.
pub fn events(session: &str, data: &[u8]) -> Vec<super::event::Event> {
    use super::event::{Event, Kind, from_blocks, json_lines, str_of, text_of};
    let mut out = Vec::new();
    for record in json_lines(data) {
        let base = Event {
            id: str_of(&record, "/uuid").unwrap_or_default().to_string(),
            timestamp: str_of(&record, "/timestamp").map(str::to_string),
            parent_id: str_of(&record, "/parentUuid").map(str::to_string),
            message_id: str_of(&record, "/message/id").map(str::to_string),
            model: str_of(&record, "/message/model").map(str::to_string),
            ..Event::new(Kind::Meta)
        };
        match str_of(&record, "/type") {
            Some(role @ ("user" | "assistant")) => {
                let role = str_of(&record, "/message/role").unwrap_or(role);
                let content = record.pointer("/message/content").unwrap_or(&Value::Null);
                let mut found =
                    from_blocks(role, content, &Event { role: Some(role.into()), ..base.clone() });
                // Several blocks of one record share its uuid: the first keeps it.
                for (n, e) in found.iter_mut().enumerate().skip(1) {
                    e.id = format!("{}#{n}", e.id);
                }
                out.extend(found);
            }
            Some("summary") => out.push(Event {
                text: Some(text_of(&record["summary"])),
                role: Some("summary".into()),
                ..base
            }),
            Some("system") => {
                let text = text_of(record.get("content").unwrap_or(&Value::Null));
                if !text.trim().is_empty() {
                    out.push(Event { text: Some(text), role: Some("system".into()), ..base });
                }
            }
            _ => {}
        }
    }
    super::event::number(session, out)
}

/// The directory a transcript records (the first event's `cwd`).
pub fn recorded_cwd(path: &std::path::Path) -> Option<String> {
    use std::io::BufRead;
    let file = std::fs::File::open(path).ok()?;
    std::io::BufReader::new(file).split(b'\n').map_while(Result::ok).take(1000).find_map(|line| {
        serde_json::from_slice::<Value>(&line).ok()?.get("cwd")?.as_str().map(str::to_string)
    })
}

/// Conversation `id` in Claude Code's config folder: its transcript in whichever project
/// slot holds it, and the `cwd` it records.
pub fn find(config: &std::path::Path, id: &str) -> anyhow::Result<Option<super::Located>> {
    if !super::disk::is_uuid(id) {
        return Ok(None);
    }
    let Ok(slots) = std::fs::read_dir(config.join("projects")) else { return Ok(None) };
    // Slots start with `-`; a dot folder is lokust's own (a restore's staging, a move's
    // set-aside copy), not where Claude Code looks.
    for slot in slots.flatten().filter(|s| !s.file_name().to_string_lossy().starts_with('.')) {
        let path = slot.path().join(format!("{id}.jsonl"));
        if !std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file()) {
            continue;
        }
        let dir = recorded_cwd(&path);
        return Ok(Some(super::Located { path, dir }));
    }
    Ok(None)
}

/// The whole days of Claude Code's cleanup for a project at `project` (see
/// [`super::retention::claude_cleanup`]), the default when the CLI would skip it.
pub fn cleanup_days(config: &std::path::Path, project: Option<&std::path::Path>) -> u64 {
    super::retention::claude_cleanup(config, project).days()
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
}
