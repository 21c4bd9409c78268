//! The agents whose sessions lokust moves with a project, one module each.
//!
//! Every agent is an [`Agent`]: it says where it keeps its state, finds the sessions of one
//! project, lists the files that may travel (an allowlist: credentials, settings and
//! indexes never do), checks what a `.lok` offers before anything is written, plans where
//! the files go for the new path as typed placements that [`crate::place`] alone writes,
//! and says how to resume. Its files travel as one element of the
//! `.lok`'s `bundles` array (`docs/format.md`), written and read by
//! [`crate::bundle::elements`] for every agent alike.
//!
//! Claude Code is the exception the format fixes: its project travels in the top-level
//! `bundle`, streamed by `bundle/` and placed by `restore/`, because a
//! reader that knows only the format spec must still restore it. What this module keeps of
//! it ([`claude`]) is what a restore may install from its configuration.
//!
//! Adding an agent: a module here implementing [`Agent`], one line in [`AGENTS`], a row in
//! `scripts/agent-clis` for its real CLI, and a test driving that CLI (see
//! `ARCHITECTURE.md`).

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use anyhow::Context;
use serde_json::{Map, Value};

use crate::bundle::elements;
pub use crate::place::Plan;
use crate::probe::Probe;
use crate::redact::Report;

pub mod claude;
pub mod codeloops;
pub mod codex;
pub mod copilot;
pub mod disk;
pub mod droid;
pub mod event;
pub mod gemini;
pub mod known;
pub mod opencode;
pub mod retention;

pub use crate::bundle::elements::File;
pub use crate::policy::ConfigName;
use crate::policy::{Owner, Policy};

/// Every agent whose sessions travel in `bundles`, in the order the summary lists them.
pub static AGENTS: &[&dyn Agent] = &[
    &codex::Codex,
    &droid::Droid,
    &gemini::Gemini,
    &opencode::OpenCode,
    &codeloops::Codeloops,
    &copilot::Copilot,
];

/// The one table of what a restore never lays in a checkout from someone else's file:
/// Claude Code's names, every [`AGENTS`] entry's, and the other tools'.
pub fn policy() -> Policy {
    let agents = AGENTS.iter().map(|a| Owner { tool: a.name(), names: a.config_names() });
    Policy::new(
        std::iter::once(Owner { tool: claude::DISPLAY_NAME, names: claude::CONFIG_NAMES })
            .chain(agents)
            .chain(crate::policy::OTHER_TOOLS.iter().copied()),
    )
}

/// The names `--agents` accepts: Claude Code's and every [`AGENTS`] entry's.
pub fn names() -> Vec<&'static str> {
    std::iter::once(claude::NAME).chain(AGENTS.iter().map(|a| a.id())).collect()
}

/// The agent whose elements are of `kind`.
pub fn by_kind(kind: &str) -> Option<&'static dyn Agent> {
    AGENTS.iter().copied().find(|a| a.kind() == kind)
}

/// One conversation, as the summary and `inspect` show it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Session {
    pub id: String,
    pub first_prompt: Option<String>,
    pub turns: usize,
    /// When it was last written to (RFC 3339), when the agent records it.
    pub last_updated: Option<String>,
    /// Paths inside the element of every file of this session.
    pub files: Vec<String>,
    /// How it ended, when the agent records it (codeloops: `success`, `failed`, …).
    pub outcome: Option<String>,
}

/// Where the receiver's own store holds a conversation, as `lokust-shell find` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    /// The file or folder that holds it.
    pub path: PathBuf,
    /// The project directory recorded inside the conversation.
    pub dir: Option<String>,
}

/// How a restore places an agent's files.
#[derive(Debug, Clone)]
pub struct PlaceOptions {
    /// The project's path on the sending machine, as the element records it.
    pub old_root: Option<String>,
    /// Replace a session the receiver has with other content, keeping a backup.
    pub force: bool,
    /// Keep what grants reach beyond the project (`--trust-config`), such as a chat's
    /// workspace folders outside it.
    pub trust_config: bool,
    pub now: SystemTime,
}

/// What a restore of one element did, for the report.
#[derive(Debug, Clone, Default)]
pub struct Restored {
    /// One line per thing done (or, in a plan, to be done), terminal-safe.
    pub lines: Vec<String>,
    /// The command that resumes the newest session, run in the new directory.
    pub resume: Option<String>,
    /// A signal stopped it part way: what is listed was done, nothing after it.
    pub interrupted: bool,
}

/// An agent whose sessions lokust moves with a project.
///
/// `root` is always a realpath in UTF-8: the project directory on the sending machine when
/// collecting, the new one when restoring. Files come in and go out unredacted by the
/// agent; [`element`] redacts what it collects.
pub trait Agent: Sync {
    /// The name `--agents` takes (`gemini`).
    fn id(&self) -> &'static str;
    /// The name in messages (`Gemini CLI`).
    fn name(&self) -> &'static str;
    /// The `kind` of its element in `bundles`.
    fn kind(&self) -> &'static str;
    /// What a session's `turns` count, for `inspect`.
    fn turn_word(&self) -> &'static str {
        "turns"
    }
    /// Where it keeps its state on this machine, from the environment; `None` when nowhere.
    fn home(&self, probe: &Probe) -> Option<PathBuf>;
    /// What of that state never travels and is never installed (credentials, settings
    /// that can run commands, indexes), as names for docs and `--help`.
    fn never_carried(&self) -> &'static [&'static str];
    /// The files and folders of a checkout it reads settings, hooks, plugins, commands,
    /// MCP servers or permissions from: the policy table ([`policy`]) withholds them from
    /// someone else's file. Never empty (a test checks it).
    fn config_names(&self) -> &'static [ConfigName];
    /// The files of `root`'s sessions that may travel; `None` when it has none there.
    fn collect(&self, home: &Path, root: &str) -> anyhow::Result<Option<Vec<File>>>;
    /// The sessions in a list of element files, oldest first.
    fn sessions(&self, files: &[File]) -> Vec<Session>;
    /// Where this machine's store (at `home`) holds conversation `id`, read-only;
    /// `None` when it holds none of that id.
    fn find(&self, home: &Path, id: &str) -> anyhow::Result<Option<Located>>;
    /// The files and folders of this machine's store (at `home`) that hold conversation
    /// `id` of the project at `root` (a copy of the same id in another project is not
    /// named), each one for `move` to set aside whole while the same conversation is laid
    /// at the new path; `None` when the agent keeps it where nothing can be set aside
    /// (rows of a database).
    fn stored(&self, home: &Path, root: &str, id: &str) -> anyhow::Result<Option<Vec<PathBuf>>> {
        let found =
            self.find(home, id)?.filter(|l| l.dir.as_deref().is_some_and(|d| disk::is_under(d, root)));
        Ok(Some(found.map(|l| l.path).into_iter().collect()))
    }
    /// Whether the store records the folder `dir` (or one below it) anywhere, a
    /// conversation or not: `move` never lays a project where the store knows another.
    fn names_folder(&self, home: &Path, dir: &str) -> anyhow::Result<bool> {
        let _ = (home, dir);
        Ok(false)
    }
    /// For an agent whose [`Agent::stored`] is `None`: repoints, in place, every record of
    /// its store that names `old` (or a folder below it) to `new`, all or nothing.
    fn repoint(&self, home: &Path, old: &str, new: &str) -> anyhow::Result<()> {
        let _ = (home, old, new);
        anyhow::bail!("{} keeps its conversations in files, set aside and laid again", self.name())
    }
    /// The command that resumes conversation `id` in its directory; `None` when the agent
    /// has no resume.
    fn resume_command(&self, id: &str) -> Option<String>;
    /// The names its program runs under, for telling it in a terminal's process tree: the
    /// executable's, and the npm package's when it runs on node or bun.
    fn programs(&self) -> &'static [&'static str];
    /// Whether `id` has the form of its conversation ids: a resume command is only ever
    /// built from such an id.
    fn is_id(&self, id: &str) -> bool {
        disk::is_uuid(id)
    }
    /// One session of the element as normalized events, for `inspect --transcript`;
    /// empty when the element holds no such session.
    fn events(&self, files: &[File], session: &str) -> Vec<event::Event>;
    /// Refuses the whole element unless every file is one the agent allows, and reads.
    fn validate(&self, files: &[File]) -> anyhow::Result<()>;
    /// What a restore of validated `files` for `root` writes, read from the receiver and
    /// written nowhere: [`crate::place::apply`] alone writes it, and `--dry-run` prints the
    /// same plan. Never replaces what the receiver has unless `opts.force`.
    fn plan(&self, home: &Path, root: &str, files: &[File], opts: &PlaceOptions) -> anyhow::Result<Plan>;
}

/// Which agents `--agents` chose: every one (the default), or those named.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Chosen {
    #[default]
    All,
    Only(Vec<String>),
}

impl Chosen {
    pub fn from_list(list: Option<&[String]>) -> Chosen {
        match list {
            None => Chosen::All,
            Some(names) => Chosen::Only(names.to_vec()),
        }
    }

    pub fn has(&self, id: &str) -> bool {
        match self {
            Chosen::All => true,
            Chosen::Only(names) => names.iter().any(|n| n == id),
        }
    }
}

/// One agent's sessions, ready for `bundles`.
pub struct Carried {
    pub agent: &'static dyn Agent,
    pub element: Value,
    pub sessions: Vec<Session>,
}

/// The elements of every chosen agent with sessions for the first of `roots` (realpaths,
/// most specific first) where it has any.
pub fn carry(
    probe: &Probe,
    roots: &[String],
    chosen: &Chosen,
    redact: bool,
    report: &mut Report,
) -> anyhow::Result<Vec<Carried>> {
    let mut out = Vec::new();
    for &agent in AGENTS.iter().filter(|a| chosen.has(a.id())) {
        let Some(home) = agent.home(probe) else { continue };
        for root in roots {
            let found = element(agent, &home, root, redact, report)
                .with_context(|| format!("could not carry the {} sessions", agent.name()))?;
            if let Some((element, sessions)) = found {
                out.push(Carried { agent, element, sessions });
                break;
            }
        }
    }
    Ok(out)
}

/// `agent`'s element for `root`, its files redacted unless `redact` is off (the sessions
/// are listed from the redacted files, so a prompt in the summary is redacted too); `None`
/// when it has no session there.
pub fn element(
    agent: &dyn Agent,
    home: &Path,
    root: &str,
    redact: bool,
    report: &mut Report,
) -> anyhow::Result<Option<(Value, Vec<Session>)>> {
    let Some(mut files) = agent.collect(home, root)? else { return Ok(None) };
    if redact {
        for f in &mut files {
            f.data = elements::redact_file(&f.rel, &f.data, report);
        }
    }
    let sessions = agent.sessions(&files);
    let fields = fields(root, &sessions);
    Ok(Some((elements::encode(agent.kind(), &files, fields)?, sessions)))
}

/// The fields of an element beside its data: the old path and the sessions, for readers
/// that list without inflating.
fn fields(root: &str, sessions: &[Session]) -> Map<String, Value> {
    let mut fields = Map::new();
    fields.insert("project_dir".into(), root.into());
    let list = sessions
        .iter()
        .map(|s| {
            let mut fields = serde_json::json!({"id": s.id, "first_prompt": s.first_prompt, "turns": s.turns,
                "last_updated": s.last_updated});
            if let Some(outcome) = &s.outcome {
                fields["outcome"] = outcome.as_str().into();
            }
            fields
        })
        .collect();
    fields.insert("sessions".into(), list);
    fields
}

/// The files of an element of `agent`'s kind, refused whole unless every one is allowed.
pub fn files(agent: &dyn Agent, element: &Map<String, Value>, max_bytes: u64) -> anyhow::Result<Vec<File>> {
    let files = elements::decode(element, max_bytes)?;
    agent.validate(&files).with_context(|| format!("the {} element is refused", agent.kind()))?;
    Ok(files)
}

/// The sending machine's project path an element records, when it is a plain string.
pub fn old_root(element: &Map<String, Value>) -> Option<String> {
    element.get("project_dir").and_then(Value::as_str).map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_agent_has_its_own_name_and_kind() {
        let mut ids = std::collections::BTreeSet::new();
        let mut kinds = std::collections::BTreeSet::new();
        for a in AGENTS {
            assert!(ids.insert(a.id()), "{} twice", a.id());
            assert!(kinds.insert(a.kind()), "{} twice", a.kind());
            assert!(!a.never_carried().is_empty(), "{} says nothing of what never travels", a.id());
            assert!(!a.config_names().is_empty(), "{} declares no config names for the policy", a.id());
            assert_eq!(by_kind(a.kind()).map(|b| b.id()), Some(a.id()));
        }
        assert!(!ids.contains(claude::NAME));
        assert!(by_kind("no-such-kind").is_none());
    }

    /// The whole table holds every agent's names, matched in any case.
    #[test]
    fn the_policy_holds_every_agents_names() {
        let policy = policy();
        for a in AGENTS {
            for n in a.config_names() {
                let sample = n.pattern.trim_start_matches('*').to_ascii_uppercase();
                let sample = if n.pattern.ends_with('/') { format!("{sample}x") } else { sample };
                assert_eq!(policy.matches(&sample).map(|m| m.tool), Some(a.name()), "{}", n.pattern);
            }
        }
        assert!(policy.matches(".GitHub/Hooks/x.json").is_some());
    }
}
