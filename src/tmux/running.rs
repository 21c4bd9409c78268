//! Which agent runs in a pane's foreground job, and which conversation it holds.
//!
//! The agent is told from the whole argv, not from tmux's `pane_current_command` (Codex
//! and Gemini CLI show up there as `node`). The conversation id is taken in order of
//! trust: the agent's own registry of live processes (Claude Code's
//! `sessions/<pid>.json`, checked against the live process and its start time), the id
//! on the command line, a session file the process holds open, and last the one
//! conversation of the directory written since the process started, only when exactly one
//! was. Never a guess between two: that puts every pane of a directory on one
//! conversation.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::process::{self, Proc};
use crate::agent::known::Known;
use crate::probe::Probe;

/// Programs that run an agent's script: the agent is named by the script.
const RUNTIMES: &[&str] = &["node", "nodejs", "bun", "deno"];

/// How a conversation id was found, most trusted first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum How {
    Registry,
    Argv,
    OpenFile,
    Newest,
}

impl How {
    pub fn as_str(self) -> &'static str {
        match self {
            How::Registry => "registry",
            How::Argv => "argv",
            How::OpenFile => "open-file",
            How::Newest => "newest",
        }
    }
}

/// An agent found in a pane.
pub struct Running {
    pub agent: Known,
    /// The process recognised as the agent.
    pub pid: u32,
    pub session_id: Option<String>,
    pub how: Option<How>,
    /// Why no id was recorded, when none was.
    pub note: Option<String>,
}

/// The agent among a pane's foreground processes (breadth first: the job's leader first).
pub fn detect(procs: &[Proc]) -> Option<Running> {
    let (agent, proc) = procs.iter().find_map(|p| program_of(p).map(|k| (k, p)))?;
    let env = process::environment(proc.pid);
    let cwd = process::cwd(proc.pid).unwrap_or_default();
    let probe = Probe::from_vars(env, &cwd);
    let mut found = Running { agent, pid: proc.pid, session_id: None, how: None, note: None };
    let by_order = [
        (How::Registry, registry(agent, procs, &probe, &cwd)),
        (How::Argv, procs.iter().find_map(|p| id_in_argv(agent, &p.argv))),
        (How::OpenFile, open_file(agent, procs, &probe)),
    ];
    if let Some((how, id)) = by_order.into_iter().find_map(|(how, id)| id.map(|id| (how, id))) {
        found.session_id = Some(id);
        found.how = Some(how);
        return Some(found);
    }
    match newest(agent, proc, &probe, &cwd) {
        Ok(id) => {
            found.session_id = Some(id);
            found.how = Some(How::Newest);
        }
        Err(why) => found.note = Some(why),
    }
    Some(found)
}

/// The agent whose program `p` is, from its argv: the executable's name, or for a runtime
/// (`node script`) the script's name or the npm package it lies in.
pub fn program_of(p: &Proc) -> Option<Known> {
    let first = p.argv.first()?;
    let name = base_name(first);
    if RUNTIMES.contains(&name.as_str()) {
        let script = p.argv.iter().skip(1).find(|a| !a.starts_with('-'))?;
        let real = process::cwd(p.pid)
            .map(|cwd| cwd.join(script))
            .and_then(|s| std::fs::canonicalize(s).ok())
            .unwrap_or_else(|| PathBuf::from(script));
        let script_name = base_name(script);
        return Known::all().find(|k| {
            k.programs().iter().any(|prog| {
                *prog == script_name
                    || [Path::new(script), real.as_path()]
                        .iter()
                        .any(|path| path.to_string_lossy().contains(&format!("/{prog}/")))
            })
        });
    }
    Known::all().find(|k| k.programs().contains(&name.as_str()))
}

/// `/usr/lib/node_modules/x/bin/codex.js` → `codex`; a login shell's `-zsh` → `zsh`.
fn base_name(arg: &str) -> String {
    let name = arg.rsplit('/').next().unwrap_or(arg).trim_start_matches('-');
    let name = [".js", ".mjs", ".cjs", ".exe"].iter().find_map(|x| name.strip_suffix(x)).unwrap_or(name);
    name.to_string()
}

/// Claude Code's `sessions/<pid>.json` of one of the processes, trusted only when that
/// process is alive, started when the entry says (`procStart`, which a reused pid does not
/// match), and works in the directory the entry names.
fn registry(agent: Known, procs: &[Proc], probe: &Probe, cwd: &Path) -> Option<String> {
    if !matches!(agent, Known::Claude) {
        return None;
    }
    let config = agent.home(probe)?;
    procs.iter().find_map(|p| {
        let path = config.join("sessions").join(format!("{}.json", p.pid));
        let text = crate::agent::disk::read_bounded(&path, 64 * 1024).ok()?;
        let entry: Value = serde_json::from_slice(&text).ok()?;
        let start = match entry.get("procStart")? {
            Value::String(s) => s.parse::<u64>().ok()?,
            Value::Number(n) => n.as_u64()?,
            _ => return None,
        };
        let same_dir = entry.get("cwd").and_then(Value::as_str).is_some_and(|d| {
            std::fs::canonicalize(d).ok().as_deref() == std::fs::canonicalize(cwd).ok().as_deref()
        });
        let id = entry.get("sessionId")?.as_str()?;
        let pid_matches = entry.get("pid").and_then(Value::as_u64) == Some(u64::from(p.pid));
        (pid_matches
            && start == p.start_ticks
            && process::is_same(p.pid, start)
            && same_dir
            && agent.is_id(id))
        .then(|| id.to_string())
    })
}

/// The id an agent was started with: `--resume ID`, `--resume=ID`, `-r ID`, `--session ID`,
/// `-s ID`, `--session-id ID`, or a `resume ID` subcommand; only an id of the agent's form
/// counts, so an index (`gemini --resume 5`) or `latest` is not taken for one.
pub fn id_in_argv(agent: Known, argv: &[String]) -> Option<String> {
    const FLAGS: &[&str] = &["--resume", "-r", "--session", "-s", "--session-id", "resume"];
    let mut args = argv.iter().skip(1);
    while let Some(arg) = args.next() {
        let value = match arg.split_once('=') {
            Some((flag, value)) if FLAGS.contains(&flag) && flag.starts_with('-') => Some(value.to_string()),
            _ if FLAGS.contains(&arg.as_str()) => args.clone().next().cloned(),
            _ => None,
        };
        if let Some(id) = value.filter(|v| agent.is_id(v)) {
            return Some(id);
        }
    }
    None
}

/// A conversation file one of the processes holds open in the agent's store, named by its
/// id (`<id>.jsonl`, or ending in it, as Codex's `rollout-<time>-<id>.jsonl`).
fn open_file(agent: Known, procs: &[Proc], probe: &Probe) -> Option<String> {
    let home = agent.home(probe)?;
    let home = std::fs::canonicalize(&home).unwrap_or(home);
    procs.iter().flat_map(|p| process::open_files(p.pid)).find_map(|file| {
        if !file.starts_with(&home) {
            return None;
        }
        let stem = file.file_stem()?.to_str()?;
        let tail = stem.get(stem.len().saturating_sub(36)..).unwrap_or(stem);
        [stem, tail].into_iter().find(|s| agent.is_id(s)).map(str::to_string)
    })
}

/// The one conversation of `cwd` written since the process started. Two or more: none,
/// and the reason.
fn newest(agent: Known, proc: &Proc, probe: &Probe, cwd: &Path) -> Result<String, String> {
    let Known::Other(a) = agent else {
        return Err("no live registry entry names its conversation".into());
    };
    let started = process::started_at(proc).ok_or("its start time is unreadable")?;
    let home = a.home(probe).ok_or("its store is not found")?;
    let root = std::fs::canonicalize(cwd).map_err(|_| "its directory is unreadable")?;
    let root = root.to_str().ok_or("its directory is not UTF-8")?;
    let files = a.collect(&home, root).ok().flatten().unwrap_or_default();
    let since: Vec<String> = a
        .sessions(&files)
        .into_iter()
        .filter(|s| {
            s.last_updated
                .as_deref()
                .and_then(|t| humantime::parse_rfc3339_weak(t.trim_end_matches('Z')).ok())
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .is_some_and(|t| t.as_secs() + 2 >= started)
        })
        .map(|s| s.id)
        .filter(|id| agent.is_id(id))
        .collect();
    match since.as_slice() {
        [one] => Ok(one.clone()),
        [] => Err("no conversation of its directory was written since it started".into()),
        many => Err(format!(
            "{} conversations of its directory were written since it started; which one is its own \
             cannot be told, so none is recorded",
            many.len()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn proc(argv: &[&str]) -> Proc {
        Proc {
            pid: u32::MAX,
            ppid: 1,
            tpgid: -1,
            start_ticks: 0,
            argv: argv.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn agents_are_told_through_their_runtimes() {
        let id = |argv: &[&str]| program_of(&proc(argv)).map(|k| k.id());
        assert_eq!(id(&["claude", "--resume", "x"]), Some("claude"));
        assert_eq!(id(&["node", "/w/fake/bin/codex", "resume", "019d"]), Some("codex"));
        assert_eq!(
            id(&[
                "node",
                "--max-old-space-size=4096",
                "/u/lib/node_modules/@google/gemini-cli/dist/index.js"
            ]),
            Some("gemini")
        );
        assert_eq!(id(&["/home/u/.local/bin/opencode", "--session", "ses_x"]), Some("opencode"));
        assert_eq!(id(&["-zsh"]), None);
        assert_eq!(id(&["vim", "claude.md"]), None);
        assert_eq!(id(&["node", "server.js"]), None);
    }

    #[test]
    fn ids_on_the_command_line_must_have_the_agents_form() {
        let uuid = "019d56b2-7a2c-7d41-9f3e-0c1b2a3d4e5f";
        let claude = Known::by_id("claude").unwrap();
        let codex = Known::by_id("codex").unwrap();
        let gemini = Known::by_id("gemini").unwrap();
        let argv = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(id_in_argv(codex, &argv(&["codex", "resume", uuid])).as_deref(), Some(uuid));
        assert_eq!(
            id_in_argv(claude, &argv(&["claude", &format!("--resume={uuid}")])).as_deref(),
            Some(uuid)
        );
        assert_eq!(id_in_argv(gemini, &argv(&["gemini", "--resume", "5"])), None);
        assert_eq!(id_in_argv(codex, &argv(&["codex", "-s", "workspace-write"])), None);
        assert_eq!(id_in_argv(claude, &argv(&["claude", "-r", "$(touch pwned)"])), None);
    }
}
