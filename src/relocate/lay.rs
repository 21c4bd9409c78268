//! The old copies laid at NEW by the restore's own plan and placement code, or only planned:
//! a move rehearses it before any store changes, then lays it.

use std::path::Path;

use anyhow::{Context, bail};

use super::Paths;
use super::journal::Journal;
use crate::agent;
use crate::lok::ShellLok;
use crate::probe::Probe;
use crate::restore::elements::{self, Outcome};

/// What a move lays: the document a bundle of OLD would be (the other agents' elements),
/// and Claude Code's old slot where it was set aside, with the plan a bundle of it follows.
pub struct From<'a> {
    pub lok: &'a ShellLok,
    pub claude: Option<(&'a crate::bundle::Plan, &'a Path)>,
    /// Plan the other agents' elements first, applying nothing.
    pub rehearse: bool,
}

/// Restores `from` at NEW; with no journal, only plans what the other agents' elements
/// would lay ([`rehearse`]). Agents in `in_place` are not laid again: their rows are
/// repointed, each one written in the journal first. The resume lines.
pub fn lay(
    probe: &Probe,
    paths: &Paths,
    from: &From<'_>,
    in_place: &[(&'static dyn agent::Agent, Vec<String>)],
    journal: Option<&mut Journal>,
) -> anyhow::Result<Vec<String>> {
    let Some(journal) = journal else { return rehearse(probe, paths, from.lok, in_place) };
    let claude_dir = crate::capture::claude::config_dir(probe).context("set HOME or CLAUDE_CONFIG_DIR")?;
    let restore_opts = crate::restore::RestoreOptions {
        to: paths.new_real.clone(),
        claude_dir,
        home: probe.home(),
        dry_run: false,
        force: false,
        max_size: crate::restore::DEFAULT_MAX_SIZE,
        // The user's own settings, moving on their own machine.
        trust_config: true,
        only_session: None,
    };
    // Claude Code's old slot, set aside, is read in place: no byte of it goes through a
    // backup file and back.
    let source = crate::restore::Source::Local(Box::new(crate::restore::Local {
        plan: from.claude.map(|(plan, _)| plan.clone()),
        at: from.claude.map(|(_, at)| at.to_path_buf()).unwrap_or_default(),
        lok: from.lok.clone(),
    }));
    let outcome = crate::restore::restore(source, &restore_opts)?;
    if let Some(refused) = outcome.refused().next() {
        bail!("{} exists with other content", refused.path.display());
    }
    let resume = |r: &str| {
        let dir = outcome.project_dir.to_string_lossy();
        let line = format!(
            "  resume: cd {} && {r}",
            crate::shell::posix_quote(&dir, crate::shell::Quote::WhenNeeded)
        );
        // A folder's name may hold control characters: shown, never sent to the terminal.
        crate::sanitize::for_terminal(&line).into_owned()
    };
    let mut lines: Vec<String> =
        outcome.newest_session.iter().map(|id| resume(&format!("claude --resume {id}"))).collect();
    for (a, ids) in in_place {
        let home = a.home(probe).context("no home for the agent")?;
        journal.repointed.push(a.id().to_string());
        journal.save()?;
        a.repoint(&home, &paths.old_str, &paths.new_str)?;
        lines.extend(ids.last().and_then(|id| a.resume_command(id)).map(|r| resume(&r)));
    }
    let lok = without_in_place(&outcome.lok, in_place);
    for done in elements::restore_all(probe, &lok, &outcome.project_dir, element_options(false), None)? {
        match done {
            Outcome::Done(d) => lines.extend(d.resume.map(|r| resume(&r))),
            Outcome::Refused(why) => bail!(why),
            Outcome::Interrupted => bail!(crate::interrupt::Interrupted),
            Outcome::Unknown(kind) => bail!("an element of kind {kind:?} was not restored"),
        }
    }
    Ok(lines)
}

/// The other agents' elements of the document planned at NEW and applied nowhere: what their
/// restore would refuse is an error. Claude Code's part is not planned here: its restore
/// stages everything before the first rename, so a refusal there changes nothing anyway.
fn rehearse(
    probe: &Probe,
    paths: &Paths,
    lok: &ShellLok,
    in_place: &[(&'static dyn agent::Agent, Vec<String>)],
) -> anyhow::Result<Vec<String>> {
    let lok = without_in_place(lok, in_place);
    for done in elements::restore_all(probe, &lok, &paths.new_real, element_options(true), None)? {
        match done {
            Outcome::Done(_) => {}
            Outcome::Refused(why) => bail!(why),
            Outcome::Interrupted => bail!(crate::interrupt::Interrupted),
            Outcome::Unknown(kind) => bail!("an element of kind {kind:?} would not be restored"),
        }
    }
    Ok(Vec::new())
}

/// The document without the elements of the agents whose rows are repointed in place.
fn without_in_place(lok: &ShellLok, in_place: &[(&'static dyn agent::Agent, Vec<String>)]) -> ShellLok {
    let mut lok = lok.clone();
    if let Some(serde_json::Value::Array(list)) = lok.extra.get_mut("bundles") {
        list.retain(|e| in_place.iter().all(|(a, _)| e["kind"].as_str() != Some(a.kind())));
    }
    lok
}

fn element_options(dry_run: bool) -> elements::Options {
    elements::Options {
        dry_run,
        force: false,
        clone: false,
        trust_config: true,
        max_size: crate::restore::DEFAULT_MAX_SIZE,
    }
}
