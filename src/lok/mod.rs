//! The `.lok` format: typed models of both variants and the rules for reading them.
//!
//! A `.lok` is one JSON object. `session.kind == "shell"` marks a shell session; an absent
//! `kind` means a coordination session (the older variant). Every struct keeps the fields it
//! does not know in `extra`, so a file written by a newer tool survives a read-modify-write.
//! See: docs/format.md.

use std::collections::BTreeMap;
use std::fmt;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub mod tmux;

/// The version this lokust writes and the highest it reads.
pub const FORMAT_VERSION: u64 = 1;

/// `session.kind` of a shell session.
pub const SHELL_KIND: &str = "shell";

/// The marker that replaces every redacted secret.
pub const REDACTED: &str = "[REDACTED]";

/// Fields this lokust does not know, kept verbatim.
pub type Extra = Map<String, Value>;

fn format_version_one() -> u64 {
    FORMAT_VERSION
}

/// A `.lok` of either variant.
#[derive(Debug, Clone, PartialEq)]
pub enum Lok {
    Shell(Box<ShellLok>),
    Coordination(Box<CoordinationLok>),
}

/// The JSON Schema's root: a `.lok` is one of the two variants.
#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
#[schemars(title = "lokust .lok file")]
#[allow(clippy::large_enum_variant)] // only ever used to derive the schema
pub enum LokSchema {
    Shell(ShellLok),
    Coordination(CoordinationLok),
}

// ---------------------------------------------------------------------------
// Shell variant

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ShellLok {
    /// Format version; absent means 1.
    #[serde(default = "format_version_one")]
    pub format_version: u64,
    pub session: ShellSessionMeta,
    pub shell: ShellState,
    /// Embedded payload, such as the Claude Code project directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bundle: Option<Bundle>,
    /// The capturing user.
    #[serde(default)]
    pub created_by: String,
    /// `lokust-shell-snapshot` or `lokust-tmux`.
    #[serde(default)]
    pub captured_via: String,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ShellSessionMeta {
    /// `shell-<uuid v4>`.
    pub id: String,
    /// Always `snapshot` for a shell session.
    #[serde(default)]
    pub status: String,
    /// Always `shell`.
    pub kind: ShellKind,
    /// Unix epoch milliseconds.
    #[serde(default)]
    pub created_at_ms: u64,
    #[serde(flatten)]
    pub extra: Extra,
}

/// The one value `session.kind` takes in a shell session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum ShellKind {
    #[serde(rename = "shell")]
    Shell,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ShellState {
    #[serde(default)]
    pub cwd: String,
    #[serde(default)]
    pub hostname: String,
    #[serde(default)]
    pub user: String,
    /// Basename of `$SHELL`: zsh, bash, fish…
    #[serde(default)]
    pub shell: String,
    /// Allowlisted, redacted environment.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// How many variables the filter left out.
    #[serde(default)]
    pub env_dropped_count: u64,
    /// The newest history entries, oldest first, redacted.
    #[serde(default)]
    pub history_tail: Vec<String>,
    /// How many of those entries the redactor changed.
    #[serde(default)]
    pub history_redacted_lines: u64,
    #[serde(default)]
    pub terminal: Option<Terminal>,
    #[serde(default)]
    pub multiplexer: Option<Multiplexer>,
    #[serde(default)]
    pub git: Option<Git>,
    #[serde(default)]
    pub claude_code: Option<ClaudeCode>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tmux_scrollback: Option<Scrollback>,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Terminal {
    pub program: Option<String>,
    pub version: Option<String>,
    pub term: Option<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Multiplexer {
    /// `tmux` or `zellij`.
    pub kind: String,
    /// tmux only: the `$TMUX` value (socket path, server pid, session index).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub socket: Option<String>,
    pub session: Option<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Git {
    /// The checked-out branch; null on a detached HEAD.
    pub branch: Option<String>,
    /// The full commit id of HEAD; null in a repository with no commit yet.
    pub head: Option<String>,
    /// Modified, staged and untracked files, ignored ones excluded.
    pub dirty_files: u64,
    /// The `origin` URL (or the first remote's), credentials removed.
    pub remote: Option<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ClaudeCode {
    /// The directory name under `<config>/projects/`.
    pub project_slot: String,
    /// Top-level `*.jsonl` transcripts in the slot.
    pub sessions_logged: u64,
    /// Files under the slot's `memory/`.
    pub memory_files: u64,
    /// Absolute path of the slot directory on the capturing machine.
    pub project_path: String,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Scrollback {
    /// `text+base64`.
    pub format: String,
    /// Length of the decoded text.
    pub bytes: u64,
    pub data: String,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Bundle {
    /// `claude-code-project`.
    pub kind: String,
    /// `tar.gz+base64`.
    pub format: String,
    /// Size of the tar stream.
    pub uncompressed_bytes: u64,
    /// Length of `data`.
    pub base64_bytes: u64,
    pub data: String,
    #[serde(flatten)]
    pub extra: Extra,
}

// ---------------------------------------------------------------------------
// Coordination variant

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CoordinationLok {
    #[serde(default = "format_version_one")]
    pub format_version: u64,
    pub session: CoordinationSession,
    #[serde(default)]
    pub project_dir: Option<String>,
    #[serde(default)]
    pub created_by: String,
    #[serde(default)]
    pub workflow_name: Option<String>,
    #[serde(default)]
    pub agent_prompts: Option<Vec<AgentPrompt>>,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CoordinationSession {
    pub id: String,
    /// idle | running | paused | completed | failed
    pub status: String,
    pub phases: Vec<Phase>,
    #[serde(default)]
    pub current_phase_index: u32,
    #[serde(default)]
    pub total_duration_ms: u64,
    #[serde(default)]
    pub total_tokens: u64,
    #[serde(default)]
    pub created_at_ms: u64,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Phase {
    pub agent_id: String,
    #[serde(default)]
    pub name: String,
    /// queued | running | paused | completed | failed
    pub status: String,
    #[serde(default)]
    pub output: String,
    #[serde(default)]
    pub duration_ms: u64,
    #[serde(default)]
    pub tokens_used: u64,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AgentPrompt {
    pub agent_id: String,
    #[serde(default)]
    pub system_prompt: String,
    #[serde(default)]
    pub task_prompt: String,
    #[serde(flatten)]
    pub extra: Extra,
}

// ---------------------------------------------------------------------------
// Reading and writing

/// Why a `.lok` could not be read. The message names the file.
#[derive(Debug)]
pub struct LokError {
    pub source_name: String,
    pub kind: LokErrorKind,
}

#[derive(Debug)]
pub enum LokErrorKind {
    Io(io::Error),
    Syntax(serde_json::Error),
    NotAnObject,
    BadVersion(Value),
    FutureVersion(u64),
    UnknownKind(String),
    Shape { path: String, message: String },
}

impl fmt::Display for LokError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = &self.source_name;
        match &self.kind {
            LokErrorKind::Io(e) => write!(f, "could not read {name}: {e}"),
            LokErrorKind::Syntax(e) => write!(f, "{name} is not valid JSON: {e}"),
            LokErrorKind::NotAnObject => {
                write!(f, "{name} is not a .lok: the top level is not a JSON object")
            }
            LokErrorKind::BadVersion(v) => {
                write!(f, "{name} has an invalid format_version {v}: expected a positive integer")
            }
            LokErrorKind::FutureVersion(v) => write!(
                f,
                "{name} uses format_version {v}; this lokust reads {FORMAT_VERSION} (upgrade lokust to read it)"
            ),
            LokErrorKind::UnknownKind(k) => write!(
                f,
                "{name} has session.kind {k:?}, which this lokust does not know (it reads \"shell\" and coordination sessions)"
            ),
            LokErrorKind::Shape { path, message } => {
                write!(f, "{name} is not a valid .lok: at {path}: {message}")
            }
        }
    }
}

impl std::error::Error for LokError {}

impl Lok {
    /// Reads a `.lok` from `path`, or from stdin when `path` is `-`.
    pub fn read_path(path: &Path) -> Result<Lok, LokError> {
        let name = display_name(path);
        let bytes = if path == Path::new("-") {
            let mut buf = Vec::new();
            io::stdin().lock().read_to_end(&mut buf).map(|_| buf)
        } else {
            std::fs::read(path)
        }
        .map_err(|e| LokError { source_name: name.clone(), kind: LokErrorKind::Io(e) })?;
        Lok::from_slice(&bytes, &name)
    }

    /// Parses a `.lok`; `name` is used in error messages.
    pub fn from_slice(bytes: &[u8], name: &str) -> Result<Lok, LokError> {
        let err = |kind| LokError { source_name: name.to_string(), kind };
        let value: Value = serde_json::from_slice(bytes).map_err(|e| err(LokErrorKind::Syntax(e)))?;
        Lok::from_value(value, name)
    }

    /// Checks the version, dispatches on `session.kind` and builds the typed model.
    pub fn from_value(value: Value, name: &str) -> Result<Lok, LokError> {
        let err = |kind| LokError { source_name: name.to_string(), kind };
        let Some(top) = value.as_object() else {
            return Err(err(LokErrorKind::NotAnObject));
        };
        check_version(top).map_err(err)?;
        let kind = top.get("session").and_then(|s| s.get("kind"));
        match kind {
            None | Some(Value::Null) => typed(value).map(|c| Lok::Coordination(Box::new(c))).map_err(err),
            Some(Value::String(k)) if k == SHELL_KIND => {
                typed(value).map(|s| Lok::Shell(Box::new(s))).map_err(err)
            }
            Some(other) => Err(err(LokErrorKind::UnknownKind(match other {
                Value::String(s) => s.clone(),
                v => v.to_string(),
            }))),
        }
    }

    /// Serialises as pretty JSON with a trailing newline.
    pub fn write_to<W: Write>(&self, mut out: W) -> io::Result<()> {
        match self {
            Lok::Shell(s) => return write_shell(s, out),
            Lok::Coordination(c) => serde_json::to_writer_pretty(&mut out, c)?,
        }
        out.write_all(b"\n")
    }

    pub fn to_json_string(&self) -> String {
        let mut buf = Vec::new();
        // Writing into a Vec cannot fail and the types hold only JSON-safe values.
        self.write_to(&mut buf).expect("serialising a .lok into memory");
        String::from_utf8(buf).expect("serde_json writes UTF-8")
    }
}

/// A shell snapshot as a `.lok` document, without first wrapping it in a [`Lok`].
pub fn write_shell<W: Write>(lok: &ShellLok, mut out: W) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut out, lok)?;
    out.write_all(b"\n")
}

/// Reads `format_version`: absent is 1, a higher one is refused.
fn check_version(top: &Map<String, Value>) -> Result<(), LokErrorKind> {
    match top.get("format_version") {
        None | Some(Value::Null) => Ok(()),
        Some(v) => match v.as_u64() {
            Some(0) | None => Err(LokErrorKind::BadVersion(v.clone())),
            Some(n) if n > FORMAT_VERSION => Err(LokErrorKind::FutureVersion(n)),
            Some(_) => Ok(()),
        },
    }
}

fn typed<T: serde::de::DeserializeOwned>(value: Value) -> Result<T, LokErrorKind> {
    serde_path_to_error::deserialize(value).map_err(|e| LokErrorKind::Shape {
        path: match e.path().to_string() {
            p if p == "." => "the top level".to_string(),
            p => p,
        },
        message: e.inner().to_string(),
    })
}

/// How a path is named in messages: `-` reads as "standard input".
pub fn display_name(path: &Path) -> String {
    if path == Path::new("-") { "standard input".to_string() } else { path.display().to_string() }
}

/// One element of a shell snapshot's `bundles` array, for the schema only: readers take
/// `bundles` from [`ShellLok::extra`], so a file from a lokust that knows other kinds
/// still reads.
#[derive(JsonSchema)]
#[allow(dead_code)] // only ever used to derive the schema
pub struct BundleElement {
    /// An agent's kind (docs/format.md lists each, read from the agent registry) or
    /// `git-worktree`; a reader leaves out a kind it does not know, with a warning.
    kind: String,
    /// `tar.gz+base64`.
    format: String,
    /// Size of the tar stream.
    uncompressed_bytes: u64,
    /// Length of `data`.
    base64_bytes: u64,
    data: String,
    /// An agent's element: the project's realpath on the sending machine.
    project_dir: Option<String>,
    /// An agent's element: its conversations, listed without inflating `data`.
    sessions: Option<Vec<ElementSession>>,
    #[serde(flatten)]
    extra: Extra,
}

/// One conversation an agent's element carries.
#[derive(JsonSchema)]
#[allow(dead_code)] // only ever used to derive the schema
pub struct ElementSession {
    id: String,
    first_prompt: Option<String>,
    turns: u64,
    /// RFC 3339, when the agent records it.
    last_updated: Option<String>,
    /// How it ended, when the agent records it.
    outcome: Option<String>,
}

/// The JSON Schema of both variants, as committed in `schema/lok.schema.json`.
pub fn json_schema() -> Value {
    let mut schema = serde_json::to_value(schemars::schema_for!(LokSchema)).expect("a schema is plain JSON");
    // `bundles` lives in the flattened rest of a shell snapshot; the schema names it.
    let mut element =
        serde_json::to_value(schemars::schema_for!(BundleElement)).expect("a schema is plain JSON");
    let defs = schema["$defs"].as_object_mut().expect("the schema has $defs");
    if let Some(Value::Object(more)) = element.as_object_mut().and_then(|e| e.remove("$defs")) {
        defs.extend(more);
    }
    if let Some(e) = element.as_object_mut() {
        e.remove("$schema");
    }
    defs.insert("BundleElement".into(), element);
    // So does `tmux_session`, the whole tmux session of `lokust-tmux export --session`.
    let mut session =
        serde_json::to_value(schemars::schema_for!(tmux::TmuxSession)).expect("a schema is plain JSON");
    if let Some(Value::Object(more)) = session.as_object_mut().and_then(|e| e.remove("$defs")) {
        defs.extend(more);
    }
    if let Some(e) = session.as_object_mut() {
        e.remove("$schema");
    }
    defs.insert("TmuxSession".into(), session);
    defs["ShellLok"]["properties"]["tmux_session"] = serde_json::json!({
        "description": "Every window and pane of a tmux session (additive to version 1); `shell` describes its active pane.",
        "$ref": "#/$defs/TmuxSession"
    });
    defs["ShellLok"]["properties"]["bundles"] = serde_json::json!({
        "description": "Every payload beyond the Claude Code project (additive to version 1).",
        "type": "array",
        "items": {"$ref": "#/$defs/BundleElement"}
    });
    schema
}

/// Where the committed schema lives, relative to the repository root.
pub fn schema_path() -> PathBuf {
    PathBuf::from("schema/lok.schema.json")
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHELL: &str = r#"{"session":{"id":"shell-1","status":"snapshot","kind":"shell","created_at_ms":1},
        "shell":{"cwd":"/x","future_field":{"a":1}},"created_by":"u","captured_via":"t","later":[1,2]}"#;

    #[test]
    fn absent_kind_is_coordination() {
        let lok =
            Lok::from_slice(br#"{"session":{"id":"a","status":"completed","phases":[]}}"#, "c.lok").unwrap();
        assert!(matches!(lok, Lok::Coordination(_)));
    }

    #[test]
    fn unknown_fields_survive_a_round_trip() {
        let lok = Lok::from_slice(SHELL.as_bytes(), "s.lok").unwrap();
        let again: Value = serde_json::from_str(&lok.to_json_string()).unwrap();
        assert_eq!(again["later"], serde_json::json!([1, 2]));
        assert_eq!(again["shell"]["future_field"]["a"], 1);
        assert_eq!(again["format_version"], 1);
    }

    #[test]
    fn future_version_is_refused_by_name() {
        let e = Lok::from_slice(br#"{"format_version":2,"session":{}}"#, "s.lok").unwrap_err();
        assert_eq!(
            e.to_string(),
            "s.lok uses format_version 2; this lokust reads 1 (upgrade lokust to read it)"
        );
    }

    #[test]
    fn bad_version_and_kind_and_shape_are_named() {
        let e = Lok::from_slice(br#"{"format_version":"x","session":{}}"#, "s.lok").unwrap_err();
        assert!(e.to_string().contains("invalid format_version \"x\""), "{e}");
        let e = Lok::from_slice(br#"{"session":{"kind":"editor"}}"#, "s.lok").unwrap_err();
        assert!(e.to_string().contains("session.kind \"editor\""), "{e}");
        let e = Lok::from_slice(br#"{"session":{"id":"x","kind":"shell"},"shell":{"env":{"A":1}}}"#, "s.lok")
            .unwrap_err();
        assert!(e.to_string().contains("at shell.env.A"), "{e}");
        let e = Lok::from_slice(b"[1]", "s.lok").unwrap_err();
        assert!(e.to_string().contains("not a JSON object"), "{e}");
    }
}
