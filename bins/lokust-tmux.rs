//! `lokust-tmux`: save tmux panes as .lok files (export, from a key binding) and bring
//! them back as tmux sessions (import).

use std::process::ExitCode;

use clap::Parser;
use lokust::cli::{TmuxCli, TmuxCommand};
use lokust::{cmd, exit};

fn main() -> ExitCode {
    let cli = TmuxCli::parse();
    exit::run(|| match &cli.command {
        TmuxCommand::Export(args) => cmd::tmux::export(&cli, args),
        TmuxCommand::Import(args) => cmd::tmux::import(&cli, args),
        TmuxCommand::Bind(args) => cmd::tmux::bind(&cli, args),
    })
}
