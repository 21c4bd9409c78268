//! Factory Droid sessions of one project: find them by the directory each one records,
//! and on restore put them in the folder of the new path with that path recorded, both or
//! neither.
//!
//! Droid (`@factory/cli`, verified on 0.225.2) keeps a session as
//! `~/.factory/sessions/<slot>/<id>.jsonl` plus `<id>.settings.json`, the slot being the
//! working directory with every `/` turned into `-`. Resume finds the transcript by id in
//! any slot, then appends to the slot of the `cwd` in its first line (`session_start`): a
//! file in the new slot with the old `cwd`, or the reverse, fails after the model request
//! went out. The settings file holds grants (autonomy level, tool execution mode): only
//! the keys that grant nothing travel, and a restore writes no other.

use std::collections::BTreeSet;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use serde_json::{Map, Value};

use super::disk::{
    complete_lines, is_plain_absolute, is_under, is_uuid, moved, read_bounded, step_for, time_of,
};
use super::{File, Session};
use crate::place::{Kind, Placement, Plan, Step};

/// The kind of this payload in the `.lok`'s `bundles` array.
pub const KIND: &str = "droid-sessions";

/// What of `~/.factory` never travels: credentials and bring-your-own-key models
/// (`settings.json`), MCP servers, machine identity, logs and caches. Only session files
/// are ever read.
pub const NEVER_CARRIED: &[&str] = &[
    "settings.json",
    "settings.local.json",
    "config.json",
    "auth.json",
    "mcp.json",
    "host.json",
    "telemetry/",
    "logs/",
    "cache/",
    "droids/",
    "<id>.settings.json.bak",
];

/// The keys of a session's `<id>.settings.json` that travel: the model and what was
/// counted. Autonomy, interaction and tool execution modes grant; they never do.
pub const SETTINGS_KEPT: &[&str] = &[
    "model",
    "reasoningEffort",
    "tags",
    "assistantActiveTimeMs",
    "tokenUsage",
    "inclusiveTokenUsage",
    "childInclusiveTokenUsageBySessionId",
    "lastCallTokenUsage",
];

/// One session file larger than this is refused.
pub const MAX_FILE: u64 = 512 << 20;
const SETTINGS: &str = ".settings.json";

/// `~/.factory`.
pub fn factory_home(home: Option<&Path>) -> Option<PathBuf> {
    home.map(|h| h.join(".factory"))
}

/// The folder Droid keeps the sessions of `cwd` in: the path with `/` turned into `-`.
pub fn slot(cwd: &str) -> String {
    cwd.replace('/', "-")
}

/// What a transcript says about its session.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Transcript {
    pub id: String,
    pub cwd: String,
    pub title: Option<String>,
    pub first_prompt: Option<String>,
    pub turns: usize,
    pub last_time: Option<String>,
}

/// A session id as a file name: Droid writes UUIDs; any short plain name is safe.
fn is_session_id(id: &str) -> bool {
    is_uuid(id)
        || (!id.is_empty()
            && id.len() <= 128
            && !id.starts_with('-')
            && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'))
}

/// What the user typed in a message: its text parts without the `<system-reminder>`
/// blocks Droid puts before them.
fn text_of(message: &Value) -> Option<String> {
    let parts = message.get("content")?.as_array()?;
    let text: Vec<&str> = parts
        .iter()
        .filter(|p| p.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|p| p.get("text").and_then(Value::as_str))
        .map(|mut t| {
            while let Some(rest) = t.trim_start().strip_prefix("<system-reminder>") {
                t = rest.split_once("</system-reminder>").map_or("", |(_, after)| after);
            }
            t.trim()
        })
        .filter(|t| !t.is_empty())
        .collect();
    (!text.is_empty()).then(|| text.join(" "))
}

/// Reads a transcript: line 1 must be a `session_start` with an id and a `cwd`; later lines
/// that do not read are skipped. `None` when it is not a transcript.
pub fn parse_transcript(data: &[u8]) -> Option<Transcript> {
    let mut lines = data.split(|b| *b == b'\n').filter(|l| !l.iter().all(u8::is_ascii_whitespace));
    let first: Value = serde_json::from_slice(lines.next()?).ok()?;
    if first.get("type").and_then(Value::as_str) != Some("session_start") {
        return None;
    }
    let mut out = Transcript {
        id: first.get("id").and_then(Value::as_str).filter(|id| is_session_id(id))?.to_string(),
        cwd: first.get("cwd").and_then(Value::as_str)?.to_string(),
        title: first.get("title").and_then(Value::as_str).map(str::to_string),
        ..Transcript::default()
    };
    for line in lines {
        let Ok(record) = serde_json::from_slice::<Value>(line) else { continue };
        if let Some(t) = record.get("timestamp").and_then(Value::as_str) {
            out.last_time = Some(t.to_string());
        }
        if record.get("type").and_then(Value::as_str) != Some("message")
            || record.get("id").and_then(Value::as_str).is_some_and(|id| id.starts_with("context-"))
        {
            continue;
        }
        let message = &record["message"];
        match message.get("role").and_then(Value::as_str) {
            Some("user") => {
                if let Some(text) = text_of(message) {
                    out.turns += 1;
                    out.first_prompt.get_or_insert(text);
                }
            }
            Some("assistant") => out.turns += 1,
            _ => {}
        }
    }
    Some(out)
}

/// `<id>.jsonl` or `<id>.settings.json`: the id and whether it is the settings.
fn parse_file_name(name: &str) -> Option<(&str, bool)> {
    if let Some(id) = name.strip_suffix(".jsonl") {
        return is_session_id(id).then_some((id, false));
    }
    let id = name.strip_suffix(SETTINGS)?;
    is_session_id(id).then_some((id, true))
}

/// A session's settings with only the keys that grant nothing; `None` when it is not a
/// JSON object.
pub fn harmless_settings(data: &[u8]) -> Option<Vec<u8>> {
    let Value::Object(all) = serde_json::from_slice::<Value>(data).ok()? else { return None };
    let kept: Map<String, Value> =
        all.into_iter().filter(|(k, _)| SETTINGS_KEPT.contains(&k.as_str())).collect();
    serde_json::to_vec_pretty(&Value::Object(kept)).ok()
}

/// The keys of a session's settings that [`harmless_settings`] leaves out.
fn granting_keys(data: &[u8]) -> Vec<String> {
    match serde_json::from_slice::<Value>(data) {
        Ok(Value::Object(all)) => {
            all.into_iter().map(|(k, _)| k).filter(|k| !SETTINGS_KEPT.contains(&k.as_str())).collect()
        }
        _ => Vec::new(),
    }
}

/// The transcripts below `sessions/` (every slot, and flat as an older layout had them),
/// as (path, id), links never followed.
fn transcripts(sessions: &Path) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    let visit = |dir: &Path, depth: usize, out: &mut Vec<(PathBuf, String)>, dirs: &mut Vec<PathBuf>| {
        let Ok(entries) = fs::read_dir(dir) else { return };
        let mut entries: Vec<_> = entries.flatten().collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let Ok(meta) = fs::symlink_metadata(e.path()) else { continue };
            let name = e.file_name().to_string_lossy().into_owned();
            if meta.is_dir() && depth == 0 {
                dirs.push(e.path());
            } else if meta.is_file()
                && let Some((id, false)) = parse_file_name(&name)
            {
                out.push((e.path(), id.to_string()));
            }
        }
    };
    let mut slots = Vec::new();
    visit(sessions, 0, &mut out, &mut slots);
    for dir in slots {
        visit(&dir, 1, &mut out, &mut Vec::new());
    }
    out
}

/// The sessions of `root` (a realpath) and of every folder below it, unredacted, each its
/// transcript (cut at its last complete line) and its settings as they are (a restore
/// lays only their harmless keys unless told to trust them, as `move` does); `None` when
/// Droid has none there.
pub fn carried_files(home: &Path, root: &str) -> anyhow::Result<Option<Vec<File>>> {
    let mut files = Vec::new();
    let mut seen = BTreeSet::new();
    for (path, id) in transcripts(&home.join("sessions")) {
        let data = match read_bounded(&path, MAX_FILE) {
            Ok(d) => complete_lines(d),
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e).with_context(|| format!("could not read {}", path.display())),
        };
        let Some(t) = parse_transcript(&data) else { continue };
        if t.id != id || !is_under(&t.cwd, root) || t.turns == 0 || !seen.insert(id.clone()) {
            continue;
        }
        files.push(File { rel: format!("{id}.jsonl"), data });
        let settings = path.with_file_name(format!("{id}{SETTINGS}"));
        if let Ok(data) = read_bounded(&settings, 1 << 20)
            && harmless_settings(&data).is_some()
        {
            files.push(File { rel: format!("{id}{SETTINGS}"), data });
        }
    }
    Ok((!files.is_empty()).then_some(files))
}

/// The sessions in a list of element files, oldest first.
pub fn summarize(files: &[File]) -> Vec<Session> {
    let mut out: Vec<Session> = files
        .iter()
        .filter(|f| f.rel.ends_with(".jsonl"))
        .filter_map(|f| {
            let t = parse_transcript(&f.data)?;
            let mut own = vec![f.rel.clone()];
            let settings = format!("{}{SETTINGS}", t.id);
            if files.iter().any(|g| g.rel == settings) {
                own.push(settings);
            }
            Some(Session {
                id: t.id,
                first_prompt: t.first_prompt.or(t.title),
                turns: t.turns,
                last_updated: t.last_time,
                files: own,
                outcome: None,
            })
        })
        .collect();
    out.sort_by(|a, b| a.last_updated.cmp(&b.last_updated).then(a.id.cmp(&b.id)));
    out
}

/// Refuses the element whole unless every file is `<uuid>.jsonl` holding a transcript of
/// that id, or `<uuid>.settings.json` holding a JSON object beside its transcript, each
/// once.
pub fn validate(files: &[File]) -> anyhow::Result<()> {
    let mut names = BTreeSet::new();
    let mut transcripts = BTreeSet::new();
    for f in files {
        let Some((id, is_settings)) = parse_file_name(&f.rel) else {
            bail!("{:?} is not <uuid>.jsonl or <uuid>.settings.json", f.rel);
        };
        if !names.insert(f.rel.as_str()) {
            bail!("{} appears twice", f.rel);
        }
        if f.data.len() as u64 > MAX_FILE {
            bail!("{} is larger than {MAX_FILE} bytes", f.rel);
        }
        if is_settings {
            harmless_settings(&f.data).with_context(|| format!("{} is not a JSON object", f.rel))?;
        } else {
            let t =
                parse_transcript(&f.data).with_context(|| format!("{} is not a Droid transcript", f.rel))?;
            if t.id != id {
                bail!("{}: its session_start id {} is not the one in its name", f.rel, t.id);
            }
            if !is_plain_absolute(&t.cwd) {
                bail!("{}: its cwd is not a plain absolute path", f.rel);
            }
            transcripts.insert(id.to_string());
        }
    }
    if let Some(orphan) = files
        .iter()
        .filter_map(|f| parse_file_name(&f.rel))
        .find(|(id, is_settings)| *is_settings && !transcripts.contains(*id))
    {
        bail!("{}{SETTINGS} has no transcript beside it", orphan.0);
    }
    Ok(())
}

/// The transcript with `session_start.cwd` moved from `old` to `new`, and the `% pwd`
/// output of the environment reminder with it; every other line keeps its bytes.
pub fn relocate(data: &[u8], old: &str, new: &str) -> anyhow::Result<Vec<u8>> {
    let (first, rest) = match memchr::memchr(b'\n', data) {
        Some(i) => data.split_at(i),
        None => (data, &b""[..]),
    };
    let mut start: Value = serde_json::from_slice(first).context("line 1 is not JSON")?;
    let cwd = start.get("cwd").and_then(Value::as_str).unwrap_or_default();
    let Some(cwd) = moved(cwd, old, new) else {
        bail!("it was recorded in {cwd}, which is not in the project's directory {old}");
    };
    start["cwd"] = Value::String(cwd);
    let mut out = start.to_string().into_bytes();
    let pwd = |p: &str| serde_json::to_string(&format!("% pwd\n{p}")).unwrap_or_default();
    let (from, to) = (pwd(old), pwd(new));
    let (from, to) = (from.trim_matches('"'), to.trim_matches('"'));
    for line in rest.split_inclusive(|b| *b == b'\n') {
        if memchr::memmem::find(line, from.as_bytes()).is_some()
            && let Ok(text) = std::str::from_utf8(line)
        {
            // `% pwd\n<old>` followed by the end of that output or a deeper folder.
            let moved = text
                .replace(&format!("{from}\\n"), &format!("{to}\\n"))
                .replace(&format!("{from}/"), &format!("{to}/"));
            out.extend_from_slice(moved.as_bytes());
        } else {
            out.extend_from_slice(line);
        }
    }
    Ok(out)
}

/// Where each session of a validated element goes for `root`, reading the receiver and
/// writing nothing: the transcript, then its settings beside it, only their harmless keys
/// unless `--trust-config` (the autonomy a session was granted is the receiver's to give). A
/// session recorded outside `old_root` refuses the element.
pub fn plan(home: &Path, root: &str, files: &[File], opts: &super::PlaceOptions) -> anyhow::Result<Plan> {
    let (old_root, force, now) = (opts.old_root.as_deref(), opts.force, opts.now);
    validate(files)?;
    let old =
        old_root.filter(|o| o.starts_with('/')).context("the element does not say where it came from")?;
    let mut have: std::collections::BTreeMap<String, Vec<PathBuf>> = Default::default();
    for (path, id) in transcripts(&home.join("sessions")) {
        have.entry(id).or_default().push(path);
    }
    let mut plan = Plan::new("Factory Droid", "session", home.join("sessions").to_string_lossy());
    let mut newest = None;
    let mut granting: BTreeSet<String> = BTreeSet::new();
    for f in files.iter().filter(|f| f.rel.ends_with(".jsonl")) {
        let id = f.rel.trim_end_matches(".jsonl").to_string();
        let transcript = relocate(&f.data, old, root).with_context(|| format!("session {id}"))?;
        let parsed = parse_transcript(&transcript);
        let folder =
            Path::new("sessions").join(slot(parsed.as_ref().map(|t| t.cwd.as_str()).unwrap_or_default()));
        let dest = home.join(&folder).join(&f.rel);
        let mut step = step_for(have.get(&id).map_or(&[][..], Vec::as_slice), &dest, &transcript, force);
        // The receiver's settings go aside with its transcript.
        if let Step::Replace(theirs) = &mut step {
            let settings: Vec<PathBuf> = theirs
                .iter()
                .map(|t| t.with_file_name(format!("{id}{SETTINGS}")))
                .filter(|s| fs::symlink_metadata(s).is_ok())
                .collect();
            theirs.extend(settings);
        }
        let mtime = parsed.and_then(|t| t.last_time).and_then(|t| time_of(&t, now));
        if !matches!(step, Step::Keep(_)) {
            newest = newest.max(Some((mtime, id.clone())));
        }
        let carried = files.iter().find(|g| g.rel == format!("{id}{SETTINGS}"));
        let write = matches!(step, Step::Write | Step::Replace(_));
        if write && let Some(g) = carried {
            granting.extend(granting_keys(&g.data));
        }
        let settings = carried
            .and_then(|g| if opts.trust_config { Some(g.data.clone()) } else { harmless_settings(&g.data) });
        plan.items.push(
            Placement::file(Kind::Conversation, &id, home, folder.join(&f.rel), transcript)
                .with_mtime(mtime)
                .with_step(step),
        );
        if let Some(data) = settings.filter(|_| write) {
            let rel = folder.join(format!("{id}{SETTINGS}"));
            plan.items.push(Placement::file(Kind::Companion, &id, home, rel, data).with_mtime(mtime));
        }
    }
    plan.newest = newest.map(|(_, id)| id);
    if !granting.is_empty() {
        let keys =
            crate::sanitize::for_terminal(&granting.into_iter().collect::<Vec<_>>().join(", ")).into_owned();
        plan.notes.push(if opts.trust_config {
            format!("session settings installed whole (--trust-config), with: {keys}")
        } else {
            format!(
                "left out of the session settings, as they may let Droid act without asking: {keys} \
                 (--trust-config installs them)"
            )
        });
    }
    Ok(plan)
}

/// Factory Droid as an [`Agent`](super::Agent).
pub struct Droid;

impl super::Agent for Droid {
    fn id(&self) -> &'static str {
        "droid"
    }

    fn name(&self) -> &'static str {
        "Factory Droid"
    }

    fn kind(&self) -> &'static str {
        KIND
    }

    fn home(&self, probe: &crate::probe::Probe) -> Option<PathBuf> {
        factory_home(probe.home().as_deref())
    }

    fn config_names(&self) -> &'static [super::ConfigName] {
        use crate::policy::name;
        const NAMES: &[super::ConfigName] =
            &[name(".factory/", "settings with hooks, MCP servers, custom droids and commands")];
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

    /// The transcript of `root` and its settings beside it.
    fn stored(&self, home: &Path, root: &str, id: &str) -> anyhow::Result<Option<Vec<PathBuf>>> {
        let mut out = Vec::new();
        for (path, found) in transcripts(&home.join("sessions")) {
            if found != id {
                continue;
            }
            let data = read_bounded(&path, MAX_FILE)
                .with_context(|| format!("could not read {}", path.display()))?;
            if !parse_transcript(&data).is_some_and(|t| is_under(&t.cwd, root)) {
                continue;
            }
            let settings = path.with_file_name(format!("{id}{SETTINGS}"));
            out.push(path);
            // Whatever stands there, a link too: it is the session's, and a move that could
            // not carry it must stop and say so rather than leave it behind unsaid.
            out.extend(fs::symlink_metadata(&settings).is_ok().then_some(settings));
        }
        Ok(Some(out))
    }

    fn programs(&self) -> &'static [&'static str] {
        &["droid", "@factory/cli"]
    }

    fn resume_command(&self, id: &str) -> Option<String> {
        Some(format!("droid --resume {id}"))
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
        plan(home, root, files, opts)
    }
}

/// A transcript as normalized events: its messages' text, tool calls and results.
pub fn events(files: &[File], session: &str) -> Vec<super::event::Event> {
    use super::event::{Event, Kind, from_blocks, json_lines, str_of};
    let Some(file) = files.iter().find(|f| f.rel == format!("{session}.jsonl")) else { return Vec::new() };
    let mut out = Vec::new();
    for record in json_lines(&file.data) {
        if str_of(&record, "/type") != Some("message") {
            continue;
        }
        let role = str_of(&record, "/message/role").unwrap_or("user");
        let base = Event {
            id: str_of(&record, "/id").unwrap_or_default().to_string(),
            parent_id: str_of(&record, "/parentId").map(str::to_string),
            role: Some(role.to_string()),
            ..Event::new(Kind::Meta).at(str_of(&record, "/timestamp"))
        };
        let mut found = from_blocks(role, &record["message"]["content"], &base);
        for (n, e) in found.iter_mut().enumerate().skip(1) {
            e.id = format!("{}#{n}", e.id);
        }
        out.extend(found);
    }
    super::event::number(session, out)
}

/// Session `id` in this home, and the folder it worked in.
pub fn find(home: &Path, id: &str) -> anyhow::Result<Option<super::Located>> {
    for (path, found) in transcripts(&home.join("sessions")) {
        if found == id {
            let data = read_bounded(&path, MAX_FILE)
                .with_context(|| format!("could not read {}", path.display()))?;
            let dir = parse_transcript(&data).map(|t| t.cwd);
            return Ok(Some(super::Located { path, dir }));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests;
