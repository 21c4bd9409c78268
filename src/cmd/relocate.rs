//! `lokust-shell move OLD NEW`.

use anyhow::Context;

use crate::cli::MoveArgs;
use crate::probe::Probe;
use crate::relocate::{self, MoveOptions};

pub fn run(args: &MoveArgs) -> anyhow::Result<u8> {
    crate::interrupt::install_signal_handlers();
    let probe = Probe::from_process().context("could not read the working directory")?;
    let opts = MoveOptions {
        agents: crate::agent::Chosen::from_list(args.agents.as_deref()),
        move_dir: args.move_dir,
        keep_old: args.keep_old,
        dry_run: args.dry_run,
    };
    let moved = relocate::relocate(&probe, &args.old, &args.new, &opts)?;
    if args.dry_run {
        println!("would move (dry run: nothing changed):");
    }
    for line in &moved.lines {
        println!("{line}");
    }
    if let Some(b) = &moved.backup {
        println!("backup: {}", b.display());
    }
    let here = probe.cwd();
    if args.move_dir && !args.dry_run && here.starts_with(std::path::absolute(&args.old).unwrap_or_default())
    {
        eprintln!(
            "lokust: this shell is still in the old folder: cd {}",
            crate::shell::posix_quote(&moved.new.to_string_lossy(), crate::shell::Quote::WhenNeeded)
        );
    }
    Ok(crate::exit::SUCCESS)
}
