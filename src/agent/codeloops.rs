//! codeloops session logs of one project: the actor–critic loop's own record, one JSONL
//! file per run, moved with its `working_dir`.
//!
//! codeloops keeps every run as `<data dir>/codeloops/sessions/<time>_<hash>.jsonl`
//! (`$XDG_DATA_HOME`, else `~/.local/share`), one flat folder for every project: a
//! `session_start` line with `working_dir`, `iteration` lines, and a `session_end` once it
//! is over. Lines are written whole and never changed (the format's promise), so a log
//! being written is cut at its last complete line, and a restore changes `working_dir` on
//! line 1 and keeps every other byte. Its configuration names the agents and their keys:
//! only session logs travel. The conversations of the actor agent it drove travel with
//! that agent. Not verified on a binary: codeloops is in no registry reachable here.

use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use anyhow::{Context, bail};
use serde_json::Value;

use super::disk::{complete_lines, is_plain_absolute, is_under, moved, read_bounded, time_of};
use super::{File, Session};
use crate::place::{Kind, Placement, Plan, Step};

/// The kind of this payload in the `.lok`'s `bundles` array.
pub const KIND: &str = "codeloops-sessions";

/// What of the codeloops data folder never travels: its configuration (agents, models,
/// keys) and its database. Only `sessions/*.jsonl` is ever read.
pub const NEVER_CARRIED: &[&str] = &["config.toml", "codeloops.db", "everything outside sessions/"];

/// One log larger than this is refused.
pub const MAX_FILE: u64 = 256 << 20;

/// `$XDG_DATA_HOME/codeloops` when that is an absolute path, else
/// `~/.local/share/codeloops`.
pub fn data_dir(xdg_data_home: Option<&OsStr>, home: Option<&Path>) -> Option<PathBuf> {
    match xdg_data_home.map(Path::new) {
        Some(d) if d.is_absolute() => Some(d.join("codeloops")),
        _ => home.map(|h| h.join(".local/share/codeloops")),
    }
}

fn digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// A log's file name as codeloops makes it: `YYYY-MM-DDThh-mm-ss[.fff]Z_<6 hex>.jsonl`.
pub fn is_log_name(name: &str) -> bool {
    let Some(stem) = name.strip_suffix(".jsonl") else { return false };
    let Some((time, hash)) = stem.split_once('_') else { return false };
    let hash_ok = hash.len() == 6 && hash.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    let Some(time) = time.strip_suffix('Z') else { return false };
    let Some((date, clock)) = time.split_once('T') else { return false };
    let (clock, fraction) = clock.split_once('.').unwrap_or((clock, "0"));
    let d: Vec<&str> = date.split('-').collect();
    let c: Vec<&str> = clock.split('-').collect();
    hash_ok
        && d.len() == 3
        && [4, 2, 2].iter().zip(&d).all(|(n, p)| p.len() == *n && digits(p))
        && c.len() == 3
        && c.iter().all(|p| p.len() == 2 && digits(p))
        && digits(fraction)
        && fraction.len() <= 9
}

/// What a log says about its run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Log {
    pub working_dir: String,
    pub prompt: Option<String>,
    pub iterations: usize,
    pub outcome: Option<String>,
    pub last_time: Option<String>,
}

/// Reads a log: line 1 must be a `session_start` with an absolute `working_dir`; later
/// lines that do not read are skipped. `None` when it is not a codeloops log.
pub fn parse_log(data: &[u8]) -> Option<Log> {
    let mut lines = data.split(|b| *b == b'\n').filter(|l| !l.iter().all(u8::is_ascii_whitespace));
    let first: Value = serde_json::from_slice(lines.next()?).ok()?;
    if first.get("type").and_then(Value::as_str) != Some("session_start") {
        return None;
    }
    let mut out = Log {
        working_dir: first
            .get("working_dir")
            .and_then(Value::as_str)
            .filter(|d| d.starts_with('/'))?
            .to_string(),
        prompt: first.get("prompt").and_then(Value::as_str).map(str::to_string),
        last_time: first.get("timestamp").and_then(Value::as_str).map(str::to_string),
        ..Log::default()
    };
    for line in lines {
        let Ok(record) = serde_json::from_slice::<Value>(line) else { continue };
        if let Some(t) = record.get("timestamp").and_then(Value::as_str) {
            out.last_time = Some(t.to_string());
        }
        match record.get("type").and_then(Value::as_str) {
            Some("iteration") => out.iterations += 1,
            Some("session_end") => {
                out.outcome = record.get("outcome").and_then(Value::as_str).map(str::to_string)
            }
            _ => {}
        }
    }
    Some(out)
}

/// The logs of `root` (a realpath) and of every folder below it, cut at their last complete
/// line, unredacted; `None` when codeloops has none there.
pub fn carried_files(dir: &Path, root: &str) -> anyhow::Result<Option<Vec<File>>> {
    let sessions = dir.join("sessions");
    let mut entries: Vec<_> = match fs::read_dir(&sessions) {
        Ok(e) => e.flatten().collect(),
        Err(_) => return Ok(None),
    };
    entries.sort_by_key(|e| e.file_name());
    let mut files = Vec::new();
    for e in entries {
        let Some(name) = e.file_name().to_str().map(str::to_string) else { continue };
        if !is_log_name(&name) || !fs::symlink_metadata(e.path()).is_ok_and(|m| m.is_file()) {
            continue;
        }
        let data = match read_bounded(&e.path(), MAX_FILE) {
            Ok(d) => complete_lines(d),
            Err(err) if err.kind() == io::ErrorKind::NotFound => continue,
            Err(err) => return Err(err).with_context(|| format!("could not read {}", e.path().display())),
        };
        if parse_log(&data).is_some_and(|log| is_under(&log.working_dir, root)) {
            files.push(File { rel: name, data });
        }
    }
    Ok((!files.is_empty()).then_some(files))
}

/// The runs in a list of element files, oldest first.
pub fn summarize(files: &[File]) -> Vec<Session> {
    let mut out: Vec<Session> = files
        .iter()
        .filter_map(|f| {
            let log = parse_log(&f.data)?;
            Some(Session {
                id: f.rel.trim_end_matches(".jsonl").to_string(),
                first_prompt: log.prompt,
                turns: log.iterations,
                last_updated: log.last_time,
                files: vec![f.rel.clone()],
                outcome: Some(log.outcome.unwrap_or_else(|| "not ended".to_string())),
            })
        })
        .collect();
    out.sort_by(|a, b| a.id.cmp(&b.id));
    out
}

/// Refuses the element whole unless every file is a log name, once, holding a log.
pub fn validate(files: &[File]) -> anyhow::Result<()> {
    let mut seen = BTreeSet::new();
    for f in files {
        if !is_log_name(&f.rel) {
            bail!("{:?} is not a codeloops log name (<time>_<hash>.jsonl)", f.rel);
        }
        if !seen.insert(f.rel.as_str()) {
            bail!("{} appears twice", f.rel);
        }
        if f.data.len() as u64 > MAX_FILE {
            bail!("{} is larger than {MAX_FILE} bytes", f.rel);
        }
        let log = parse_log(&f.data).with_context(|| format!("{} is not a codeloops session log", f.rel))?;
        if !is_plain_absolute(&log.working_dir) {
            bail!("{}: its working_dir is not a plain absolute path", f.rel);
        }
    }
    Ok(())
}

/// The log with `working_dir` on line 1 moved from `old` to `new`, its other keys in
/// their order, and every later byte kept.
pub fn relocate(data: &[u8], old: &str, new: &str) -> anyhow::Result<Vec<u8>> {
    let (first, rest) = data.split_at(memchr::memchr(b'\n', data).unwrap_or(data.len()));
    let mut start: Value = serde_json::from_slice(first).context("line 1 is not JSON")?;
    let dir = start.get("working_dir").and_then(Value::as_str).unwrap_or_default();
    let Some(moved_dir) = moved(dir, old, new) else {
        bail!("it ran in {dir}, which is not in the project's directory {old}");
    };
    if moved_dir == dir {
        return Ok(data.to_vec());
    }
    start["working_dir"] = Value::String(moved_dir);
    let mut out = start.to_string().into_bytes();
    out.extend_from_slice(rest);
    Ok(out)
}

/// Where each log of a validated element goes for `root`, writing nothing. A log of the
/// same name with other content is kept unless `force`.
pub fn plan(
    dir: &Path,
    root: &str,
    old_root: Option<&str>,
    files: &[File],
    force: bool,
    now: SystemTime,
) -> anyhow::Result<Plan> {
    validate(files)?;
    let old =
        old_root.filter(|o| o.starts_with('/')).context("the element does not say where it came from")?;
    let mut plan = Plan::new("codeloops", "session log", dir.join("sessions").to_string_lossy());
    for f in files {
        let data = relocate(&f.data, old, root).with_context(|| format!("log {}", f.rel))?;
        let rel = Path::new("sessions").join(&f.rel);
        let dest = dir.join(&rel);
        let step = match fs::symlink_metadata(&dest) {
            Err(_) => Step::Write,
            Ok(m) if m.is_file() && fs::read(&dest).is_ok_and(|b| b == data) => Step::Same,
            Ok(m) if m.is_file() && force => Step::Replace(vec![dest]),
            Ok(_) => Step::Keep(vec![dest]),
        };
        let mtime = parse_log(&data).and_then(|l| l.last_time).and_then(|t| time_of(&t, now));
        let id = f.rel.trim_end_matches(".jsonl");
        plan.items
            .push(Placement::file(Kind::Conversation, id, dir, rel, data).with_mtime(mtime).with_step(step));
    }
    // codeloops has no resume: a run is a record, read in its UI.
    Ok(plan)
}

/// codeloops as an [`Agent`](super::Agent).
pub struct Codeloops;

impl super::Agent for Codeloops {
    fn id(&self) -> &'static str {
        "codeloops"
    }

    fn name(&self) -> &'static str {
        "codeloops"
    }

    fn kind(&self) -> &'static str {
        KIND
    }

    fn turn_word(&self) -> &'static str {
        "iterations"
    }

    fn home(&self, probe: &crate::probe::Probe) -> Option<PathBuf> {
        data_dir(probe.var_os("XDG_DATA_HOME"), probe.home().as_deref())
    }

    fn config_names(&self) -> &'static [super::ConfigName] {
        use crate::policy::name;
        const NAMES: &[super::ConfigName] = &[
            name("codeloops.toml", "which agent commands the loop runs"),
            name(".codeloops/", "project configuration"),
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
        &["codeloops"]
    }

    fn resume_command(&self, id: &str) -> Option<String> {
        let _ = id;
        None
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

/// A log as normalized events: the task as the user's, each iteration's actor output and
/// critic decision, and how it ended.
pub fn events(files: &[File], session: &str) -> Vec<super::event::Event> {
    use super::event::{Event, Kind, json_lines, str_of, text_of};
    let Some(file) = files.iter().find(|f| f.rel == format!("{session}.jsonl")) else { return Vec::new() };
    let mut out = Vec::new();
    for record in json_lines(&file.data) {
        let at = str_of(&record, "/timestamp");
        match str_of(&record, "/type") {
            Some("session_start") => {
                out.push(Event::text(Kind::User, text_of(&record["prompt"])).at(at).role("user"))
            }
            Some("iteration") => {
                let actor = text_of(&record["actor_output"]);
                out.push(Event {
                    model: str_of(&record, "/actor_model").map(str::to_string),
                    ..Event::text(Kind::Assistant, actor).at(at).role("actor")
                });
                let decision = str_of(&record, "/critic_decision").unwrap_or_default();
                let feedback = text_of(&record["feedback"]);
                let said = if feedback.is_empty() {
                    decision.to_string()
                } else {
                    format!("{decision}: {feedback}")
                };
                if !said.is_empty() {
                    out.push(Event::text(Kind::Assistant, said).at(at).role("critic"));
                }
            }
            Some("session_end") => {
                let outcome = str_of(&record, "/outcome").unwrap_or("ended");
                let summary = text_of(&record["summary"]);
                out.push(Event::text(Kind::Meta, format!("{outcome}: {summary}")).at(at).role("system"));
            }
            _ => {}
        }
    }
    super::event::number(session, out)
}

/// Log `id` in this data folder, and the folder its loop worked in.
pub fn find(home: &Path, id: &str) -> anyhow::Result<Option<super::Located>> {
    if id.contains('/') || id.starts_with('.') {
        return Ok(None);
    }
    let path = home.join("sessions").join(format!("{id}.jsonl"));
    if !fs::symlink_metadata(&path).is_ok_and(|m| m.is_file()) {
        return Ok(None);
    }
    let data = read_bounded(&path, MAX_FILE).with_context(|| format!("could not read {}", path.display()))?;
    Ok(Some(super::Located { dir: parse_log(&data).map(|l| l.working_dir), path }))
}

#[cfg(test)]
mod tests;
