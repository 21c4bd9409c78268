//! `lokust-shell completions SHELL`: completion scripts generated from the clap definitions.

use std::io::Write;

use clap::CommandFactory;
use clap_complete::{Shell, generate};

use crate::cli::{CompletionsArgs, ShellCli, SnapshotCli, TmuxCli};
use crate::shell::Shell as Ours;

pub fn run(args: &CompletionsArgs, out: &mut impl Write) -> anyhow::Result<u8> {
    let shell = match args.shell {
        Ours::Zsh => Shell::Zsh,
        Ours::Bash => Shell::Bash,
        Ours::Fish => Shell::Fish,
    };
    // clap_complete panics when its writer fails, so it writes to memory and a closed
    // pipe (`completions zsh | head`) surfaces here as an error that exits quietly.
    let mut script = Vec::new();
    generate(shell, &mut ShellCli::command(), "lokust-shell", &mut script);
    generate(shell, &mut SnapshotCli::command(), "lokust-shell-snapshot", &mut script);
    generate(shell, &mut TmuxCli::command(), "lokust-tmux", &mut script);
    out.write_all(&script)?;
    out.flush()?;
    Ok(crate::exit::SUCCESS)
}
