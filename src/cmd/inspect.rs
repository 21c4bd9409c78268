//! `lokust-shell inspect FILE`: a readable summary of either `.lok` variant.

use std::io::Write;

use anyhow::Context;

use crate::bundle;
use crate::cli::InspectArgs;
use crate::latest;
use crate::lok::Lok;
use crate::probe::Probe;
use crate::summary;

pub fn run(args: &InspectArgs, out: &mut impl Write) -> anyhow::Result<u8> {
    let probe = Probe::from_process().unwrap_or_default();
    let keys = crate::seal::Keys::new(&args.keys.identity, &probe);
    let file = match (&args.file, args.latest) {
        (Some(f), _) => f.clone(),
        (None, _) => latest::find_for_user(&probe)?,
    };
    let lok = crate::seal::read_lok(&file, &keys)?;
    if args.transcript.is_some() || args.transcripts {
        let Lok::Shell(s) = &lok else {
            anyhow::bail!(
                "{} is a coordination session; it holds no conversation",
                crate::lok::display_name(&file)
            );
        };
        super::transcript::run(
            s,
            &crate::lok::display_name(&file),
            args.transcript.as_deref(),
            args.json,
            out,
        )?;
        out.flush()?;
        return Ok(crate::exit::SUCCESS);
    }
    if args.json {
        lok.write_to(&mut *out).context("could not write the JSON")?;
    } else {
        match &lok {
            Lok::Shell(s) => {
                summary::inspect_shell(s, args.history, out)?;
                if let Some(b) =
                    s.bundle.as_ref().filter(|b| b.kind == bundle::KIND && b.format == bundle::FORMAT)
                {
                    let name = crate::lok::display_name(&file);
                    let listing = bundle::list_bundle(&mut b.data.as_bytes(), Some(b.uncompressed_bytes))
                        .with_context(|| format!("could not read the bundle in {name}"))?;
                    summary::bundle_sessions(&listing.sessions, out)?;
                    let withheld = listing
                        .config_entry
                        .as_ref()
                        .map(|e| crate::agent::claude::split(e).withheld)
                        .unwrap_or_default();
                    summary::withheld_config(&withheld, out)?;
                }
                inspect_elements(s, &crate::lok::display_name(&file), out)?;
            }
            Lok::Coordination(c) => summary::inspect_coordination(c, out)?,
        }
    }
    out.flush()?;
    Ok(crate::exit::SUCCESS)
}

/// Every element of `bundles`: an agent's conversations read from the data itself (so a
/// hostile element shows as refused here too), any other kind named.
fn inspect_elements(s: &crate::lok::ShellLok, name: &str, out: &mut impl Write) -> anyhow::Result<()> {
    let elements =
        crate::bundle::elements::elements(&s.extra).with_context(|| format!("{name}: bad bundles"))?;
    for element in elements {
        let kind = crate::bundle::elements::kind_of(element);
        if kind == crate::worktree::KIND {
            match crate::worktree::read_element(element, crate::restore::DEFAULT_MAX_SIZE) {
                Ok(carried) => {
                    writeln!(out)?;
                    for line in carried.describe(Some(&crate::agent::policy()))? {
                        writeln!(out, "{line}")?;
                    }
                }
                Err(e) => writeln!(out, "\ngit work: refused ({e:#})")?,
            }
        } else if let Some(agent) = crate::agent::by_kind(&kind) {
            match crate::agent::files(agent, element, crate::restore::DEFAULT_MAX_SIZE) {
                Ok(files) => {
                    summary::agent_sessions(agent.name(), agent.turn_word(), &agent.sessions(&files), out)?
                }
                Err(e) => writeln!(out, "\n{} conversations: refused ({e:#})", agent.name())?,
            }
        } else {
            writeln!(out, "\nbundles: an element of kind {kind:?}, unknown to this lokust")?;
        }
    }
    Ok(())
}
