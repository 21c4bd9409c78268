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
                    summary::withheld_config(&listing.config_withheld, out)?;
                }
            }
            Lok::Coordination(c) => summary::inspect_coordination(c, out)?,
        }
    }
    out.flush()?;
    Ok(crate::exit::SUCCESS)
}
