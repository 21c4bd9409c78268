//! The backup laid at NEW by the restore's own plan and placement code, or only planned:
//! a move rehearses it before any store changes, then lays it.

use std::path::Path;

use anyhow::{Context, bail};

use super::Paths;
use super::journal::Journal;
use crate::agent;
use crate::probe::Probe;
use crate::restore::elements::{self, Outcome};

/// Restores `backup` at NEW; with no journal, only plans it (a dry run, with the old
/// copies still where they are: a copy the plan would keep is not a refusal then). Agents
/// in `in_place` are not laid again: their rows are repointed, each one written in the
/// journal first. The resume lines.
pub fn lay(
    probe: &Probe,
    paths: &Paths,
    backup: &Path,
    in_place: &[(&'static dyn agent::Agent, Vec<String>)],
    journal: Option<&mut Journal>,
) -> anyhow::Result<Vec<String>> {
    let dry_run = journal.is_none();
    let claude_dir = crate::capture::claude::config_dir(probe).context("set HOME or CLAUDE_CONFIG_DIR")?;
    let restore_opts = crate::restore::RestoreOptions {
        to: paths.new_real.clone(),
        claude_dir,
        home: probe.home(),
        dry_run,
        force: false,
        max_size: crate::restore::DEFAULT_MAX_SIZE,
        // The user's own settings, moving on their own machine.
        trust_config: true,
        only_session: None,
    };
    let keys = crate::seal::Keys::without_prompts(probe);
    let outcome = crate::restore::restore(crate::restore::Source::open(backup, &keys)?, &restore_opts)?;
    if !dry_run && let Some(refused) = outcome.refused().next() {
        bail!("{} exists with other content", refused.path.display());
    }
    let resume = |r: &str| {
        let dir = outcome.project_dir.to_string_lossy();
        format!("  resume: cd {} && {r}", crate::shell::posix_quote(&dir, crate::shell::Quote::WhenNeeded))
    };
    let mut lines: Vec<String> =
        outcome.newest_session.iter().map(|id| resume(&format!("claude --resume {id}"))).collect();
    // What is repointed in place is not laid again.
    let mut lok = outcome.lok.clone();
    if let Some(serde_json::Value::Array(list)) = lok.extra.get_mut("bundles") {
        list.retain(|e| in_place.iter().all(|(a, _)| e["kind"].as_str() != Some(a.kind())));
    }
    if let Some(journal) = journal {
        for (a, ids) in in_place {
            let home = a.home(probe).context("no home for the agent")?;
            journal.repointed.push(a.id().to_string());
            journal.save()?;
            a.repoint(&home, &paths.old_str, &paths.new_str)?;
            lines.extend(ids.last().and_then(|id| a.resume_command(id)).map(|r| resume(&r)));
        }
    }
    let element_opts = elements::Options {
        dry_run,
        force: false,
        clone: false,
        trust_config: true,
        max_size: crate::restore::DEFAULT_MAX_SIZE,
    };
    for done in elements::restore_all(probe, &lok, &outcome.project_dir, element_opts, None)? {
        match done {
            Outcome::Done(d) => lines.extend(d.resume.map(|r| resume(&r))),
            Outcome::Refused(why) => bail!(why),
            Outcome::Interrupted => bail!(crate::interrupt::Interrupted),
            Outcome::Unknown(kind) => bail!("an element of kind {kind:?} was not restored"),
        }
    }
    Ok(lines)
}
