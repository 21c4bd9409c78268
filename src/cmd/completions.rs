//! `lokust-shell completions SHELL`: completion scripts generated from the clap definitions.

use std::io::Write;

use clap::CommandFactory;
use clap_complete::{Shell, generate};

use crate::cli::{CompletionShell, CompletionsArgs, ShellCli, SnapshotCli, TmuxCli};

pub fn run(args: &CompletionsArgs, out: &mut impl Write) -> anyhow::Result<u8> {
    let shell = match args.shell {
        CompletionShell::Zsh => Shell::Zsh,
        CompletionShell::Bash => Shell::Bash,
        CompletionShell::Fish => Shell::Fish,
    };
    generate(shell, &mut ShellCli::command(), "lokust-shell", out);
    generate(shell, &mut SnapshotCli::command(), "lokust-shell-snapshot", out);
    generate(shell, &mut TmuxCli::command(), "lokust-tmux", out);
    out.flush()?;
    Ok(crate::exit::SUCCESS)
}
