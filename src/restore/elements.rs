//! The further payloads of a `.lok` (its `bundles` array) put back for the restored
//! project, each on its own: one refused does not undo the others or the Claude Code
//! project. Every agent's element goes through its [`Agent`](crate::agent::Agent); a kind
//! this lokust does not know is left out with a warning.

use std::path::Path;
use std::time::SystemTime;

use serde_json::{Map, Value};

use crate::agent::{self, Agent, PlaceOptions, Restored};
use crate::lok::ShellLok;
use crate::probe::Probe;

/// What became of one element.
pub enum Outcome {
    /// Placed (or, in a dry run, planned): what was done and how to resume.
    Done(Restored),
    /// Refused whole, nothing of it written.
    Refused { what: String, why: String },
    /// A kind this lokust does not know: left out.
    Unknown(String),
}

/// How to restore the elements.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    pub dry_run: bool,
    pub force: bool,
    pub max_size: u64,
}

/// Restores every element of `lok`'s `bundles` for `project_dir` (a realpath that exists,
/// unless a dry run). An error only when `bundles` itself is malformed.
pub fn restore_all(
    probe: &Probe,
    lok: &ShellLok,
    project_dir: &Path,
    opts: Options,
) -> anyhow::Result<Vec<Outcome>> {
    let elements = crate::bundle::elements::elements(&lok.extra)?;
    Ok(elements.into_iter().map(|element| restore_one(probe, element, project_dir, opts)).collect())
}

fn restore_one(probe: &Probe, element: &Map<String, Value>, project_dir: &Path, opts: Options) -> Outcome {
    let kind = crate::bundle::elements::kind_of(element);
    let Some(agent) = agent::by_kind(&kind) else { return Outcome::Unknown(kind) };
    match restore_agent(agent, probe, element, project_dir, opts) {
        Ok(done) => Outcome::Done(done),
        Err(e) => Outcome::Refused { what: format!("{} conversations", agent.name()), why: format!("{e:#}") },
    }
}

fn restore_agent(
    agent: &dyn Agent,
    probe: &Probe,
    element: &Map<String, Value>,
    project_dir: &Path,
    opts: Options,
) -> anyhow::Result<Restored> {
    use anyhow::Context;
    let files = agent::files(agent, element, opts.max_size)?;
    let home = agent.home(probe).with_context(|| format!("no home for {} (set HOME)", agent.name()))?;
    let root = project_dir.to_str().context("the target path is not valid UTF-8")?;
    let place =
        PlaceOptions { old_root: agent::old_root(element), force: opts.force, now: SystemTime::now() };
    if opts.dry_run {
        agent.plan(&home, root, &files, &place)
    } else {
        agent.restore(&home, root, &files, &place)
    }
}
