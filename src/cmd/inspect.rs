//! `lokust-shell inspect FILE`: a readable summary of either `.lok` variant.

use std::io::Write;

use anyhow::Context;

use crate::cli::InspectArgs;
use crate::latest;
use crate::lok::Lok;
use crate::probe::Probe;
use crate::summary;

pub fn run(args: &InspectArgs, out: &mut impl Write) -> anyhow::Result<u8> {
    let file = match (&args.file, args.latest) {
        (Some(f), _) => f.clone(),
        (None, _) => {
            let probe = Probe::from_process().context("could not read the working directory")?;
            let found = latest::find(&probe, Some(std::os::unix::process::parent_id()))
                .context("no snapshot found: no export, snapshot or live file in $XDG_STATE_HOME/lokust")?;
            eprintln!(
                "lokust: latest is {} ({}, {})",
                found.path.display(),
                found.kind.describe(),
                crate::summary::utc(
                    found
                        .modified
                        .duration_since(std::time::UNIX_EPOCH)
                        .map(|d| d.as_millis() as u64)
                        .unwrap_or(0)
                )
            );
            found.path
        }
    };
    let lok = Lok::read_path(&file)?;
    if args.json {
        lok.write_to(&mut *out).context("could not write the JSON")?;
    } else {
        match &lok {
            Lok::Shell(s) => summary::inspect_shell(s, args.history, out)?,
            Lok::Coordination(c) => summary::inspect_coordination(c, out)?,
        }
    }
    out.flush()?;
    Ok(crate::exit::SUCCESS)
}
