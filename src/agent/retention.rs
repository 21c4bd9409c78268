//! When the agents delete conversations on their own, and which of them are close to it,
//! judged as the agents themselves judge (their own code was read for it):
//!
//! - Claude Code deletes transcripts whose mtime is older than `cleanupPeriodDays` (30 by
//!   default) five seconds after it starts, in every project.
//! - Gemini CLI deletes the chats of the project it starts in whose `lastUpdated` (inside
//!   the file, not its mtime) is older than `general.sessionRetention.maxAge`, and those
//!   beyond `maxCount`; it is on, at 30 days, unless a settings file says otherwise.
//!
//! Read-only: lokust never edits an agent's settings, it says which line to change.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde_json::Value;

use crate::probe::Probe;

/// How far ahead a warning looks: a conversation this close to its cutoff is "due".
pub const MARGIN: Duration = Duration::from_secs(5 * 86_400);
/// The words of [`MARGIN`] in messages.
pub const MARGIN_WORDS: &str = "five days";

const DAY: Duration = Duration::from_secs(86_400);
/// Settings files larger than this are not read (the agents' own are a few KB).
const MAX_SETTINGS: u64 = 16 << 20;

/// One agent's rule and what it means for a set of conversations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Due {
    /// The name `--agents` takes.
    pub id: &'static str,
    /// The agent's name in messages.
    pub agent: &'static str,
    /// The rule in the agent's own words (`cleanupPeriodDays 30`).
    pub rule: String,
    /// Conversations within [`MARGIN`] of the cutoff, or past it.
    pub due: u64,
    pub total: u64,
    pub ids: Vec<String>,
    /// The settings line that keeps them longer, and the file it goes in.
    pub fix: String,
}

impl Due {
    /// `Claude Code deletes 2 conversations of this project in five days or less
    /// (cleanupPeriodDays 30)`.
    pub fn warning(&self) -> String {
        format!(
            "{} deletes {} of this project in {MARGIN_WORDS} or less ({})",
            self.agent,
            crate::human::count(self.due, "conversation"),
            self.rule
        )
    }

    /// Adds another set measured by the same agent (another project of the machine); the
    /// rule stays when both say the same.
    fn absorb(&mut self, other: Due) {
        self.due += other.due;
        self.total += other.total;
        self.ids.extend(other.ids);
        if self.rule != other.rule {
            self.rule = "as each project's settings say".to_string();
        }
        if self.fix != other.fix {
            self.fix = "raise it in the settings file that sets it for each project".to_string();
        }
    }
}

// ---------------------------------------------------------------- Claude Code

/// Claude Code's cleanup as its settings decide it.
#[derive(Debug, Clone, PartialEq)]
pub enum Cleanup {
    /// Transcripts older than this many days go; the file that said so, if any.
    After { days: f64, from: Option<PathBuf> },
    /// A `cleanupPeriodDays` the CLI refuses (below 1, not a number): it then skips the
    /// cleanup, as its own message says.
    Skipped { from: PathBuf },
}

/// Claude Code's default `cleanupPeriodDays`.
pub const CLAUDE_DEFAULT_DAYS: u64 = 30;

/// Where Claude Code reads managed settings on Linux, above every other layer.
const CLAUDE_MANAGED: &str = "/etc/claude-code/managed-settings.json";

/// The effective `cleanupPeriodDays`: the first layer that sets it among managed settings,
/// the project's `.claude/settings.local.json` and `.claude/settings.json`, and the user's
/// `settings.json` in `config`.
pub fn claude_cleanup(config: &Path, project: Option<&Path>) -> Cleanup {
    let mut layers = vec![PathBuf::from(CLAUDE_MANAGED)];
    if let Some(p) = project {
        layers.push(p.join(".claude/settings.local.json"));
        layers.push(p.join(".claude/settings.json"));
    }
    layers.push(config.join("settings.json"));
    for layer in layers {
        let Some(value) = read_settings(&layer).and_then(|s| s.get("cleanupPeriodDays").cloned()) else {
            continue;
        };
        return match value.as_f64().filter(|d| d.is_finite() && *d >= 1.0) {
            Some(days) => Cleanup::After { days, from: Some(layer) },
            None => Cleanup::Skipped { from: layer },
        };
    }
    Cleanup::After { days: CLAUDE_DEFAULT_DAYS as f64, from: None }
}

impl Cleanup {
    /// Whole days, for re-timing restored files into the window; the default when the CLI
    /// would skip its cleanup (a later fix of the setting must not find them old).
    pub fn days(&self) -> u64 {
        match self {
            Cleanup::After { days, .. } => days.min(u64::MAX as f64) as u64,
            Cleanup::Skipped { .. } => CLAUDE_DEFAULT_DAYS,
        }
    }
}

/// The transcripts of Claude Code's project folders `slots` measured against the cleanup
/// that `project`'s settings give; `None` when there are none or the cleanup is skipped.
pub fn claude_due(config: &Path, project: Option<&Path>, slots: &[PathBuf], now: SystemTime) -> Option<Due> {
    let cleanup = claude_cleanup(config, project);
    let Cleanup::After { days, from } = &cleanup else { return None };
    // A period longer than the clock reaches back deletes nothing.
    let cutoff = Duration::try_from_secs_f64(days * 86_400.0).ok().and_then(|d| now.checked_sub(d));
    let mut due = Due {
        id: super::claude::NAME,
        agent: "Claude Code",
        rule: format!("cleanupPeriodDays {days}"),
        due: 0,
        total: 0,
        ids: Vec::new(),
        fix: format!(
            "raise \"cleanupPeriodDays\" in {}",
            from.clone().unwrap_or_else(|| config.join("settings.json")).display()
        ),
    };
    for dir in slots {
        for f in fs::read_dir(dir).into_iter().flatten().flatten() {
            let name = f.file_name();
            let Some(id) = name.to_str().and_then(|n| n.strip_suffix(".jsonl")) else { continue };
            due.total += 1;
            let changed = f.metadata().ok().and_then(|m| m.modified().ok());
            if let (Some(changed), Some(cutoff)) = (changed, cutoff)
                && changed < cutoff + MARGIN
            {
                due.due += 1;
                due.ids.push(id.to_string());
            }
        }
    }
    (due.total > 0).then_some(due)
}

/// Every project folder of Claude Code on this machine, each measured with its own
/// project's settings (the folder's transcripts record the project's directory).
pub fn claude_due_everywhere(config: &Path, now: SystemTime) -> Option<Due> {
    let mut all: Option<Due> = None;
    for slot in fs::read_dir(config.join("projects")).into_iter().flatten().flatten() {
        let slot = slot.path();
        let project = fs::read_dir(&slot)
            .into_iter()
            .flatten()
            .flatten()
            .filter(|f| f.file_name().to_str().is_some_and(|n| n.ends_with(".jsonl")))
            .find_map(|f| super::claude::recorded_cwd(&f.path()))
            .map(PathBuf::from);
        if let Some(d) = claude_due(config, project.as_deref(), std::slice::from_ref(&slot), now) {
            match &mut all {
                Some(a) => a.absorb(d),
                None => all = Some(d),
            }
        }
    }
    all
}

// ---------------------------------------------------------------- Gemini CLI

/// Gemini CLI's `general.sessionRetention` after its settings layers are merged, as its
/// `validateRetentionConfig` and `identifySessionsToDelete` read it.
#[derive(Debug, Clone, PartialEq)]
pub struct Retention {
    /// `None`: nothing goes by age (`maxAge` empty, or so long the cutoff is before time).
    pub max_age: Option<Duration>,
    /// JavaScript's number for `maxCount`: sessions past this many, newest first, go;
    /// NaN keeps every one.
    pub max_count: Option<f64>,
    /// The words of the rule, as the settings write it.
    pub rule: String,
    /// The file that set `maxAge` (the user's when none did): where a fix goes.
    pub set_in: PathBuf,
}

/// Where Gemini CLI reads settings, lowest precedence first: system defaults, the user's,
/// the workspace's, the system's.
pub struct GeminiLayers {
    pub files: Vec<PathBuf>,
    /// The user's file.
    pub user: PathBuf,
}

impl GeminiLayers {
    /// `gh` is the user's `.gemini` folder; `project` adds the workspace layer.
    pub fn new(probe: Option<&Probe>, gh: &Path, project: Option<&Path>) -> GeminiLayers {
        let var = |name: &str| match probe {
            Some(p) => p.var_os(name).map(PathBuf::from),
            None => std::env::var_os(name).map(PathBuf::from),
        };
        let defaults = var("GEMINI_CLI_SYSTEM_DEFAULTS_PATH")
            .unwrap_or_else(|| "/etc/gemini-cli/system-defaults.json".into());
        let system =
            var("GEMINI_CLI_SYSTEM_SETTINGS_PATH").unwrap_or_else(|| "/etc/gemini-cli/settings.json".into());
        let user = gh.join("settings.json");
        let mut files = vec![defaults, user.clone()];
        files.extend(project.map(|p| p.join(".gemini/settings.json")));
        files.push(system);
        GeminiLayers { files, user }
    }
}

/// The merged retention; `None` when the CLI deletes nothing: turned off, or a value its
/// validation refuses, which turns the cleanup off.
pub fn gemini_retention(layers: &GeminiLayers) -> Option<Retention> {
    let mut merged = serde_json::Map::new();
    let mut set_in = layers.user.clone();
    for layer in &layers.files {
        if let Some(Value::Object(r)) = read_settings(layer).map(|s| s["general"]["sessionRetention"].clone())
        {
            if r.contains_key("maxAge") {
                set_in = layer.clone();
            }
            merged.extend(r);
        }
    }
    // The schema's defaults fill what no layer sets.
    let enabled = merged.get("enabled").is_none_or(truthy);
    let max_age = merged.get("maxAge").cloned().unwrap_or_else(|| Value::from("30d"));
    if !enabled {
        return None;
    }
    let age = if truthy(&max_age) {
        let period = max_age.as_str().and_then(parse_period)?;
        let min = merged
            .get("minRetention")
            .filter(|m| truthy(m))
            .and_then(Value::as_str)
            .and_then(parse_period)
            .unwrap_or(Period::Of(DAY));
        if period < min {
            return None;
        }
        Some(period)
    } else {
        None
    };
    let max_count = match merged.get("maxCount") {
        None => None,
        // `maxCount < 1` refuses it; NaN passes and keeps every session.
        Some(v) => Some(js_number(v)).filter(|n| n.is_nan() || *n >= 1.0).map(Some)?,
    };
    if age.is_none() && max_count.is_none() {
        return None;
    }
    let mut words = Vec::new();
    match (age, merged.get("maxAge").and_then(Value::as_str)) {
        (Some(_), Some(a)) => words.push(format!("maxAge {a}")),
        (Some(_), None) => words.push("maxAge 30d, its default".to_string()),
        _ => {}
    }
    if let Some(v) = merged.get("maxCount").filter(|_| max_count.is_some()) {
        words.push(format!("maxCount {v}"));
    }
    Some(Retention {
        max_age: age.and_then(|p| match p {
            Period::Of(d) => Some(d),
            Period::Beyond => None,
        }),
        max_count,
        rule: format!("sessionRetention {}", words.join(", ")),
        set_in,
    })
}

/// A period the CLI accepts: a duration, or one so long the cutoff is before time.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
pub enum Period {
    Of(Duration),
    Beyond,
}

/// The CLI's `<number><h|d|w|m>` (a month is 30 days); `None` for what it refuses.
pub fn parse_period(text: &str) -> Option<Period> {
    let unit = text.chars().last()?;
    let digits = &text[..text.len() - unit.len_utf8()];
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let hours = match unit {
        'h' => 1.0,
        'd' => 24.0,
        'w' => 24.0 * 7.0,
        'm' => 24.0 * 30.0,
        _ => return None,
    };
    // JavaScript's parseInt: a float, never an overflow.
    let n: f64 = digits.parse().ok()?;
    if n == 0.0 {
        return None;
    }
    Some(Duration::try_from_secs_f64(n * hours * 3600.0).map_or(Period::Beyond, Period::Of))
}

/// JavaScript's truthiness.
fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(_) | Value::Object(_) => true,
    }
}

/// JavaScript's `Number(v)`, as a comparison with a number converts it.
fn js_number(v: &Value) -> f64 {
    match v {
        Value::Null => 0.0,
        Value::Bool(b) => f64::from(u8::from(*b)),
        Value::Number(n) => n.as_f64().unwrap_or(f64::NAN),
        Value::String(s) if s.trim().is_empty() => 0.0,
        Value::String(s) => s.trim().parse().unwrap_or(f64::NAN),
        Value::Array(a) if a.is_empty() => 0.0,
        Value::Array(a) if a.len() == 1 => js_number(&a[0]),
        _ => f64::NAN,
    }
}

/// The chats of Gemini's project folders `dirs` (each `tmp/<id>`, pruned on its own as the
/// CLI prunes one project at a time) measured against `retention`.
pub fn gemini_due(retention: &Retention, dirs: &[PathBuf], now: SystemTime) -> Option<Due> {
    let mut due = Due {
        id: "gemini",
        agent: "Gemini CLI",
        rule: retention.rule.clone(),
        due: 0,
        total: 0,
        ids: Vec::new(),
        fix: format!("raise \"general.sessionRetention.maxAge\" in {}", retention.set_in.display()),
    };
    let cutoff = retention.max_age.and_then(|a| now.checked_sub(a));
    for dir in dirs {
        let mut sessions = chat_times(&dir.join("chats"));
        // Newest first, as the CLI counts `maxCount`.
        sessions.sort_by_key(|s| std::cmp::Reverse(s.1));
        for (i, (id, updated)) in sessions.iter().enumerate() {
            due.total += 1;
            // A chat without `lastUpdated` is read as updated now.
            let by_age = cutoff.is_some_and(|c| updated.is_some_and(|t| t < c + MARGIN));
            // Past the last one kept, it goes at the next start: due now.
            let by_count = retention.max_count.is_some_and(|n| i as f64 >= n);
            if by_age || by_count {
                due.due += 1;
                due.ids.push(id.clone());
            }
        }
    }
    (due.total > 0).then_some(due)
}

/// Every project folder of Gemini CLI on this machine, each measured with its own
/// workspace's settings (its `.project_root` marker names the project).
pub fn gemini_due_everywhere(probe: &Probe, gh: &Path, now: SystemTime) -> Option<Due> {
    let mut all: Option<Due> = None;
    for dir in fs::read_dir(gh.join("tmp")).into_iter().flatten().flatten() {
        let dir = dir.path();
        let project = super::disk::read_bounded(&dir.join(".project_root"), 64 << 10)
            .ok()
            .and_then(|b| String::from_utf8(b).ok())
            .map(PathBuf::from);
        let layers = GeminiLayers::new(Some(probe), gh, project.as_deref());
        let Some(rule) = gemini_retention(&layers) else { continue };
        if let Some(d) = gemini_due(&rule, std::slice::from_ref(&dir), now) {
            match &mut all {
                Some(a) => a.absorb(d),
                None => all = Some(d),
            }
        }
    }
    all
}

/// Each session in a `chats` folder with its `lastUpdated`, one entry per session id. Read
/// line by line as the CLI reads it: a line that does not parse (one being written) is
/// passed over, not the whole chat.
fn chat_times(chats: &Path) -> Vec<(String, Option<SystemTime>)> {
    let mut out: Vec<(String, Option<SystemTime>)> = Vec::new();
    for f in fs::read_dir(chats).into_iter().flatten().flatten() {
        let name = f.file_name();
        let Some(name) = name.to_str() else { continue };
        if !name.starts_with("session-") || !(name.ends_with(".json") || name.ends_with(".jsonl")) {
            continue;
        }
        if !f.file_type().is_ok_and(|t| t.is_file()) {
            continue;
        }
        let Ok(bytes) = super::disk::read_bounded(&f.path(), super::gemini::MAX_FILE) else { continue };
        let Some((id, updated)) = session_and_time(&bytes) else { continue };
        match out.iter_mut().find(|(i, _)| *i == id) {
            Some(seen) => seen.1 = seen.1.max(updated),
            None => out.push((id, updated)),
        }
    }
    out
}

/// A chat's `sessionId` and last `lastUpdated`, from a whole JSON document or from JSONL
/// records and their `$set`s.
fn session_and_time(bytes: &[u8]) -> Option<(String, Option<SystemTime>)> {
    let (mut id, mut updated) = (None, None);
    let mut absorb = |record: &Value| {
        if let Some(i) = record.get("sessionId").and_then(Value::as_str) {
            id = Some(i.to_string());
        }
        if let Some(t) = record.get("lastUpdated").and_then(Value::as_str) {
            updated = humantime::parse_rfc3339_weak(t).ok();
        }
    };
    match serde_json::from_slice::<Value>(bytes) {
        Ok(doc) => absorb(&doc),
        Err(_) => {
            for line in bytes.split(|b| *b == b'\n') {
                let Ok(record) = serde_json::from_slice::<Value>(line) else { continue };
                absorb(record.get("$set").unwrap_or(&record));
            }
        }
    }
    Some((id?, updated))
}

// ---------------------------------------------------------------- both

/// What is due in the project at `dir` (a realpath), for every agent that deletes.
pub fn of_project(probe: &Probe, dir: &Path) -> Vec<Due> {
    let now = SystemTime::now();
    let mut out = Vec::new();
    let Some(text) = dir.to_str() else { return out };
    if let Some(config) = crate::capture::claude::config_dir(probe) {
        let slot = crate::capture::claude::slot_name(text);
        let slots: Vec<PathBuf> =
            crate::capture::claude::find_slot_dir(&config.join("projects"), &slot).into_iter().collect();
        out.extend(claude_due(&config, Some(dir), &slots, now));
    }
    if let Some(gh) = super::Agent::home(&super::gemini::Gemini, probe) {
        let layers = GeminiLayers::new(Some(probe), &gh, Some(dir));
        if let Some(r) = gemini_retention(&layers) {
            out.extend(gemini_due(&r, &super::gemini::source_dirs(&gh, text), now));
        }
    }
    out
}

/// Settings JSON, comments allowed as Gemini CLI allows them, read through links as the
/// agents read it; `None` when absent, not a regular file, or unreadable.
fn read_settings(path: &Path) -> Option<Value> {
    let bytes = crate::fsutil::read_regular(path, MAX_SETTINGS)?;
    // Node reads a stray byte as U+FFFD and goes on.
    let text = String::from_utf8_lossy(&bytes);
    serde_json::from_str(&text).ok().or_else(|| serde_json::from_str(&without_comments(&text)).ok())
}

/// `text` with `//` and `/* */` comments outside strings blanked.
fn without_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            if c == '\\' {
                out.extend(chars.next());
            } else if c == '"' {
                in_string = false;
            }
            continue;
        }
        match (c, chars.peek()) {
            ('"', _) => {
                in_string = true;
                out.push(c);
            }
            ('/', Some('/')) => {
                for n in chars.by_ref() {
                    if n == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            ('/', Some('*')) => {
                chars.next();
                let mut last = ' ';
                for n in chars.by_ref() {
                    if last == '*' && n == '/' {
                        break;
                    }
                    last = n;
                }
                out.push(' ');
            }
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests;
