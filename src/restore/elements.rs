//! The further payloads of a `.lok` (its `bundles` array) put back for the restored
//! project, each on its own: one refused does not undo the others or the Claude Code
//! project. Every agent's element goes through its [`Agent`](crate::agent::Agent), the git
//! work through `worktree`; a kind this lokust does not know is left out with a warning.

use std::path::Path;
use std::time::SystemTime;

use serde_json::{Map, Value};

use crate::agent::{self, Agent, PlaceOptions, Restored};
use crate::lok::ShellLok;
use crate::place::Failure;
use crate::probe::Probe;
use crate::worktree;

/// What became of one element.
pub enum Outcome {
    /// Placed (or, in a dry run, planned): what was done and how to resume.
    Done(Restored),
    /// Refused whole, nothing of it written: the message says what and why.
    Refused(String),
    /// A kind this lokust does not know: left out.
    Unknown(String),
    /// Ctrl-C (or TERM, HUP) came before this element: it and the rest were not touched.
    Interrupted,
}

/// How to restore the elements.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    pub dry_run: bool,
    /// Replace what differs, keeping a copy (a backup, a stash, a backup branch).
    pub force: bool,
    /// Clone the snapshot's remote into an absent or empty directory for the git work.
    pub clone: bool,
    /// Also lay carried files that configure what an agent or an editor runs.
    pub trust_config: bool,
    pub max_size: u64,
}

/// Restores every element of `lok`'s `bundles` for `project_dir` (a realpath that exists,
/// unless a dry run). An error only when `bundles` itself is malformed.
pub fn restore_all(
    probe: &Probe,
    lok: &ShellLok,
    project_dir: &Path,
    opts: Options,
    only_session: Option<&str>,
) -> anyhow::Result<Vec<Outcome>> {
    let elements = crate::bundle::elements::elements(&lok.extra)?;
    let mut done = Vec::new();
    for element in elements {
        let element = match only_session {
            // One conversation: the element holding it, cut to its files; nothing else.
            Some(id) => match one_session(element, id, opts.max_size) {
                Some(cut) => std::borrow::Cow::Owned(cut),
                None => continue,
            },
            None => std::borrow::Cow::Borrowed(element),
        };
        let element = element.as_ref();
        // Each element is whole or untouched; a signal stops the restore between two.
        if crate::interrupt::interrupted() {
            done.push(Outcome::Interrupted);
            break;
        }
        let outcome = restore_one(probe, element, project_dir, opts);
        // A signal that killed a git or an agent CLI mid-way surfaces as its failure;
        // what that failure says of what was done is kept.
        if matches!(outcome, Outcome::Refused(_)) && crate::interrupt::interrupted() {
            if matches!(&outcome, Outcome::Refused(m) if m.contains("laid only in part")) {
                done.push(outcome);
            }
            done.push(Outcome::Interrupted);
            break;
        }
        let stopped = matches!(&outcome, Outcome::Done(d) if d.interrupted);
        done.push(outcome);
        if stopped {
            done.push(Outcome::Interrupted);
            break;
        }
    }
    Ok(done)
}

/// `element` cut to the files of conversation `id`, when it is an agent's element
/// holding it.
fn one_session(element: &Map<String, Value>, id: &str, max_size: u64) -> Option<Map<String, Value>> {
    let agent = agent::by_kind(&crate::bundle::elements::kind_of(element))?;
    let files = agent::files(agent, element, max_size).ok()?;
    let session = agent.sessions(&files).into_iter().find(|s| s.id == id)?;
    let kept: Vec<agent::File> = files.into_iter().filter(|f| session.files.contains(&f.rel)).collect();
    let mut cut = element.clone();
    let rebuilt = crate::bundle::elements::encode(agent.kind(), &kept, Map::new()).ok()?;
    for key in ["format", "data", "uncompressed_bytes", "base64_bytes"] {
        if let Some(v) = rebuilt.get(key) {
            cut.insert(key.into(), v.clone());
        }
    }
    Some(cut)
}

fn restore_one(probe: &Probe, element: &Map<String, Value>, project_dir: &Path, opts: Options) -> Outcome {
    let kind = crate::bundle::elements::kind_of(element);
    if kind == worktree::KIND {
        return match restore_worktree(element, project_dir, opts) {
            Ok(done) => Outcome::Done(done),
            Err(e) if e.chain().any(|c| c.is::<crate::interrupt::Interrupted>()) => {
                // The context says what was done; the signal's own words ("nothing was
                // changed") are not true here.
                Outcome::Refused(format!("the carried git work was laid only in part: {e}"))
            }
            Err(e) => Outcome::Refused(format!("the carried git work was not laid on the checkout: {e:#}")),
        };
    }
    let Some(agent) = agent::by_kind(&kind) else { return Outcome::Unknown(kind) };
    match restore_agent(agent, probe, element, project_dir, opts) {
        Ok(done) => Outcome::Done(done),
        Err(Failure::Refused(e)) => Outcome::Refused(format!(
            "{} conversations refused, nothing of them written: {e:#}",
            agent.name()
        )),
        Err(Failure::Stopped { error: e, .. }) => Outcome::Refused(format!(
            "placing the {} conversations stopped part way; what was placed before stays: {e:#}",
            agent.name()
        )),
    }
}

/// Lays the unpushed commits, the index, the working tree and the untracked files on the
/// checkout at `dir` (cloned first with `--clone`); refuses what would destroy something
/// there unless `--force`, which saves it first.
fn restore_worktree(element: &Map<String, Value>, dir: &Path, opts: Options) -> anyhow::Result<Restored> {
    let carried = worktree::read_element(element, opts.max_size)?;
    let safe = |s: &str| crate::sanitize::for_terminal(s).into_owned();
    let mut lines = Vec::new();
    if worktree::Carried::needs_clone(dir) && !opts.clone {
        // Not a refusal: nothing is there to protect. Say how to get the code, then the work.
        lines.push(format!(
            "git work: {} has no checkout to lay the carried work on",
            safe(&dir.to_string_lossy()),
        ));
        lines.push(format!(
            "  run `{}` and restore again, or restore with --clone",
            safe(&carried.clone_command(dir)?)
        ));
        return Ok(Restored { lines, ..Restored::default() });
    }
    let apply = worktree::ApplyOptions {
        force: opts.force,
        clone: opts.clone,
        withhold: (!opts.trust_config).then(agent::policy),
        deadline: None,
    };
    let plan = carried.plan(dir, &apply)?;
    if opts.dry_run {
        lines.push(format!("git work: would be laid on {}:", safe(&dir.to_string_lossy())));
        lines.extend(plan.steps.iter().map(|s| format!("  {}", safe(&s.to_string()))));
        lines.extend(carried.untracked_lines(dir));
        return Ok(Restored { lines, ..Restored::default() });
    }
    let applied = carried.apply(&plan, &apply)?;
    lines.push(format!("git work laid on {}:", safe(&dir.to_string_lossy())));
    lines.extend(plan.steps.iter().map(|s| format!("  {}", safe(&s.to_string()))));
    for saved in &applied.saved {
        lines.push(format!("  saved: {}", safe(saved)));
    }
    for left in &carried.meta.left_out {
        lines.push(format!("  left behind on the old machine: {} ({})", safe(&left.path), safe(&left.why)));
    }
    Ok(Restored { lines, ..Restored::default() })
}

fn restore_agent(
    agent: &dyn Agent,
    probe: &Probe,
    element: &Map<String, Value>,
    project_dir: &Path,
    opts: Options,
) -> Result<Restored, Failure> {
    use anyhow::Context;
    let planned = || -> anyhow::Result<(crate::place::Plan, SystemTime)> {
        let files = agent::files(agent, element, opts.max_size)?;
        let home = agent.home(probe).with_context(|| format!("no home for {} (set HOME)", agent.name()))?;
        let root = project_dir.to_str().context("the target path is not valid UTF-8")?;
        let place = PlaceOptions {
            old_root: agent::old_root(element),
            force: opts.force,
            trust_config: opts.trust_config,
            now: SystemTime::now(),
        };
        let mut plan = agent.plan(&home, root, &files, &place)?;
        crate::place::settle(&mut plan);
        // A resume line is only ever built from an id of the agent's own form.
        plan.newest = plan.newest.filter(|id| agent.is_id(id));
        Ok((plan, place.now))
    };
    let (plan, now) = planned().map_err(Failure::Refused)?;
    if opts.dry_run {
        crate::place::check(&plan).map_err(Failure::Refused)?;
        return Ok(Restored { lines: plan.describe(), ..Restored::default() });
    }
    let applied = crate::place::apply(&plan, now)?;
    Ok(Restored {
        lines: applied.report(&plan),
        resume: plan
            .newest
            .as_deref()
            .filter(|_| !applied.interrupted)
            .and_then(|id| agent.resume_command(id)),
        interrupted: applied.interrupted,
    })
}
