//! Every agent lokust knows, Claude Code included, by what a running program, a lookup by
//! id and a resume need. Claude Code is not an [`Agent`] (its project travels in the
//! top-level `bundle`), so this is the one place both are seen alike.

use std::path::PathBuf;

use super::{AGENTS, Agent, Located, claude, disk};
use crate::probe::Probe;

/// One agent, whichever way its conversations travel.
#[derive(Clone, Copy)]
pub enum Known {
    Claude,
    Other(&'static dyn Agent),
}

/// The names Claude Code's program runs under.
const CLAUDE_PROGRAMS: &[&str] = &["claude", "@anthropic-ai/claude-code"];

impl Known {
    /// Claude Code first, then [`AGENTS`] in their order.
    pub fn all() -> impl Iterator<Item = Known> {
        std::iter::once(Known::Claude).chain(AGENTS.iter().map(|a| Known::Other(*a)))
    }

    /// By the name `--agents` takes.
    pub fn by_id(id: &str) -> Option<Known> {
        Known::all().find(|k| k.id() == id)
    }

    pub fn id(&self) -> &'static str {
        match self {
            Known::Claude => claude::NAME,
            Known::Other(a) => a.id(),
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            Known::Claude => claude::DISPLAY_NAME,
            Known::Other(a) => a.name(),
        }
    }

    pub fn programs(&self) -> &'static [&'static str] {
        match self {
            Known::Claude => CLAUDE_PROGRAMS,
            Known::Other(a) => a.programs(),
        }
    }

    pub fn is_id(&self, id: &str) -> bool {
        match self {
            Known::Claude => disk::is_uuid(id),
            Known::Other(a) => a.is_id(id),
        }
    }

    /// The command that resumes `id`, built here from a fixed form, only for an id of
    /// the agent's own form: never text taken from a file.
    pub fn resume_command(&self, id: &str) -> Option<String> {
        if !self.is_id(id) {
            return None;
        }
        self.resume_stored(id)
    }

    /// The command that resumes `id` as this machine's own store names it (`find` has
    /// just read it there), whatever its form.
    pub fn resume_stored(&self, id: &str) -> Option<String> {
        match self {
            Known::Claude => Some(format!("claude --resume {id}")),
            Known::Other(a) => a.resume_command(id),
        }
    }

    /// Where the agent keeps its state for an environment like `probe`'s.
    pub fn home(&self, probe: &Probe) -> Option<PathBuf> {
        match self {
            Known::Claude => crate::capture::claude::config_dir(probe),
            Known::Other(a) => a.home(probe),
        }
    }

    /// Where this machine's store holds conversation `id`, read-only.
    pub fn find(&self, probe: &Probe, id: &str) -> anyhow::Result<Option<Located>> {
        let Some(home) = self.home(probe) else { return Ok(None) };
        match self {
            Known::Claude => claude::find(&home, id),
            Known::Other(a) => a.find(&home, id),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_agent_is_known_once_with_a_program_name() {
        let ids: Vec<&str> = Known::all().map(|k| k.id()).collect();
        let mut unique = ids.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(ids.len(), unique.len());
        assert_eq!(ids.len(), AGENTS.len() + 1);
        for k in Known::all() {
            assert!(!k.programs().is_empty(), "{}", k.id());
        }
    }

    #[test]
    fn resume_commands_come_only_from_ids_of_the_agents_form() {
        let claude = Known::by_id("claude").unwrap();
        let id = "384e7524-0f5b-4c53-9d0e-2a3c4b5d6e7f";
        assert_eq!(claude.resume_command(id).as_deref(), Some(format!("claude --resume {id}").as_str()));
        for hostile in ["$(touch pwned)", "x; rm -rf ~", "", "5", "latest", "../x"] {
            for k in Known::all() {
                assert_eq!(k.resume_command(hostile), None, "{} {hostile}", k.id());
            }
        }
        let opencode = Known::by_id("opencode").unwrap();
        assert_eq!(
            opencode.resume_command("ses_3f2aAb09").as_deref(),
            Some("opencode --session ses_3f2aAb09")
        );
        assert_eq!(opencode.resume_command("ses_3f 2a"), None);
    }
}
