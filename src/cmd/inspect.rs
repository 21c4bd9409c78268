//! `lokust-shell inspect FILE`: a readable summary of either `.lok` variant.

use std::io::Write;

use anyhow::Context;

use crate::cli::InspectArgs;
use crate::lok::Lok;
use crate::summary;

pub fn run(args: &InspectArgs, out: &mut impl Write) -> anyhow::Result<u8> {
    let lok = Lok::read_path(&args.file)?;
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
