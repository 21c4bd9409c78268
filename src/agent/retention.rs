//! When the agents delete conversations on their own, and which of them are close to it.
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

/// One agent's rule and what it means for a set of conversations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Due {
    /// The agent's name in messages.
    pub agent: &'static str,
    /// The rule in the agent's own words (`cleanupPeriodDays 30`).
    pub rule: String,
    /// Conversations within [`MARGIN`] of the cutoff, or past it.
    pub due: u64,
    pub total: u64,
    /// Their ids, for the archive's decision and for tests.
    pub ids: Vec<String>,
    /// The settings line that keeps them longer, and the file it goes in.
    pub fix: String,
}

impl Due {
    /// `Claude Code deletes 2 conversations of this project in 5 days or less
    /// (cleanupPeriodDays 30)`.
    pub fn warning(&self) -> String {
        format!(
            "{} deletes {} of this project in {MARGIN_WORDS} or less ({})",
            self.agent,
            crate::human::count(self.due, "conversation"),
            self.rule
        )
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
            Cleanup::After { days, .. } => *days as u64,
            Cleanup::Skipped { .. } => CLAUDE_DEFAULT_DAYS,
        }
    }
}

/// The transcripts of Claude Code's project folders `slots` measured against its cleanup;
/// `None` when there are none or the cleanup is skipped.
pub fn claude_due(config: &Path, project: Option<&Path>, slots: &[PathBuf], now: SystemTime) -> Option<Due> {
    let cleanup = claude_cleanup(config, project);
    let Cleanup::After { days, from } = &cleanup else { return None };
    let cutoff = now.checked_sub(Duration::from_secs_f64(days * 86_400.0))?;
    let mut due = Due {
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
            if changed.is_some_and(|t| t < cutoff + MARGIN) {
                due.due += 1;
                due.ids.push(id.to_string());
            }
        }
    }
    (due.total > 0).then_some(due)
}

// ---------------------------------------------------------------- Gemini CLI

/// Gemini CLI's `general.sessionRetention` after its settings layers are merged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Retention {
    pub max_age: Duration,
    pub max_count: Option<u64>,
    /// The words of the rule, as the settings write it.
    pub rule: String,
}

/// Where Gemini CLI reads settings, lowest precedence first: system defaults, the user's,
/// the workspace's, the system's.
pub struct GeminiLayers {
    pub files: Vec<PathBuf>,
    /// The user's file, where a fix goes.
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

/// The merged retention; `None` when the CLI deletes nothing (turned off, or a value its
/// validation refuses, which turns the cleanup off).
pub fn gemini_retention(layers: &GeminiLayers) -> Option<Retention> {
    let mut merged = serde_json::Map::new();
    for layer in &layers.files {
        if let Some(Value::Object(r)) = read_settings(layer).map(|s| s["general"]["sessionRetention"].clone())
        {
            merged.extend(r);
        }
    }
    if merged.get("enabled") == Some(&Value::Bool(false)) {
        return None;
    }
    let max_count = match merged.get("maxCount") {
        None | Some(Value::Null) => None,
        Some(v) => Some(v.as_u64().filter(|n| *n >= 1)?),
    };
    // The schema's default fills a missing `maxAge` even beside `maxCount`.
    let max_age = match merged.get("maxAge") {
        None | Some(Value::Null) => 30 * DAY,
        Some(v) => v.as_str().and_then(parse_period)?,
    };
    let min = merged.get("minRetention").and_then(Value::as_str).and_then(parse_period).unwrap_or(DAY);
    if max_age < min {
        return None;
    }
    let mut words = Vec::new();
    match merged.get("maxAge").and_then(Value::as_str) {
        Some(a) => words.push(format!("maxAge {a}")),
        None => words.push("maxAge 30d, its default".to_string()),
    }
    words.extend(max_count.map(|n| format!("maxCount {n}")));
    Some(Retention { max_age, max_count, rule: format!("sessionRetention {}", words.join(", ")) })
}

/// The CLI's `<number><h|d|w|m>` (a month is 30 days); `None` for anything it refuses.
pub fn parse_period(text: &str) -> Option<Duration> {
    let unit = text.chars().last()?;
    let digits = &text[..text.len() - unit.len_utf8()];
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: u64 = digits.parse().ok().filter(|n| *n > 0)?;
    let hours = match unit {
        'h' => 1,
        'd' => 24,
        'w' => 24 * 7,
        'm' => 24 * 30,
        _ => return None,
    };
    Some(Duration::from_secs(n.checked_mul(hours * 3600)?))
}

/// The chats of Gemini's project folders `dirs` (each `tmp/<id>`, pruned on its own as the
/// CLI prunes one project at a time) measured against `retention`.
pub fn gemini_due(retention: &Retention, user: &Path, dirs: &[PathBuf], now: SystemTime) -> Option<Due> {
    let mut due = Due {
        agent: "Gemini CLI",
        rule: retention.rule.clone(),
        due: 0,
        total: 0,
        ids: Vec::new(),
        fix: format!("raise \"general.sessionRetention.maxAge\" in {}", user.display()),
    };
    let cutoff = now.checked_sub(retention.max_age);
    for dir in dirs {
        let mut sessions = chat_times(&dir.join("chats"));
        // Newest first, as the CLI counts `maxCount`.
        sessions.sort_by_key(|s| std::cmp::Reverse(s.1));
        for (i, (id, updated)) in sessions.iter().enumerate() {
            due.total += 1;
            let by_age = cutoff.is_some_and(|c| updated.is_none_or(|t| t < c + MARGIN));
            // The one after the last kept goes at the next start: due now.
            let by_count = retention.max_count.is_some_and(|n| i as u64 >= n);
            if by_age || by_count {
                due.due += 1;
                due.ids.push(id.clone());
            }
        }
    }
    (due.total > 0).then_some(due)
}

/// Each session in a `chats` folder with its `lastUpdated`, one entry per session id.
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
        let Some(chat) = super::gemini::parse_chat(&bytes) else { continue };
        let Some(id) = chat.session_id else { continue };
        let updated = chat.last_updated.as_deref().and_then(|t| humantime::parse_rfc3339_weak(t).ok());
        match out.iter_mut().find(|(i, _)| *i == id) {
            Some(seen) => seen.1 = seen.1.max(updated),
            None => out.push((id, updated)),
        }
    }
    out
}

// ---------------------------------------------------------------- both

/// What is due in the project at `dir` (a realpath), for every agent that deletes.
pub fn of_project(probe: &Probe, dir: &Path) -> Vec<Due> {
    let now = SystemTime::now();
    let mut out = Vec::new();
    if let (Some(config), Some(text)) = (crate::capture::claude::config_dir(probe), dir.to_str()) {
        let slot = crate::capture::claude::slot_name(text);
        let slots: Vec<PathBuf> =
            crate::capture::claude::find_slot_dir(&config.join("projects"), &slot).into_iter().collect();
        out.extend(claude_due(&config, Some(dir), &slots, now));
    }
    if let (Some(gh), Some(text)) = (super::Agent::home(&super::gemini::Gemini, probe), dir.to_str()) {
        let layers = GeminiLayers::new(Some(probe), &gh, Some(dir));
        if let Some(r) = gemini_retention(&layers) {
            out.extend(gemini_due(&r, &layers.user, &super::gemini::source_dirs(&gh, text), now));
        }
    }
    out
}

/// Settings JSON, comments allowed as Gemini CLI allows them; `None` when absent or unreadable.
fn read_settings(path: &Path) -> Option<Value> {
    let bytes = super::disk::read_bounded(path, 4 << 20).ok()?;
    let text = String::from_utf8(bytes).ok()?;
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
