//! `lokust-shell`: the umbrella command (snapshot, restore, inspect, redact, init, completions).

use std::io;
use std::process::ExitCode;

use clap::Parser;
use lokust::cli::{ShellCli, ShellCommand};
use lokust::{cmd, exit};

fn main() -> ExitCode {
    let cli = ShellCli::parse();
    exit::run(|| match &cli.command {
        ShellCommand::Snapshot(args) => cmd::snapshot::run(args),
        ShellCommand::Restore(args) => cmd::restore::run(args),
        ShellCommand::Inspect(args) => cmd::inspect::run(args, &mut io::stdout().lock()),
        ShellCommand::Redact(args) => cmd::redact::run(args),
        ShellCommand::Init(args) => cmd::init::run(args, &mut io::stdout().lock()),
        ShellCommand::Completions(args) => cmd::completions::run(args, &mut io::stdout().lock()),
        ShellCommand::Find(args) => cmd::find::run(args, &mut io::stdout().lock()),
        ShellCommand::Doctor(args) => cmd::doctor::run(args, &mut io::stdout().lock()),
        ShellCommand::Archive(args) => cmd::archive::archive(args),
        ShellCommand::List(args) => cmd::archive::list(args, &mut io::stdout().lock()),
        ShellCommand::Prune(args) => cmd::archive::prune(args),
        ShellCommand::Move(args) => cmd::relocate::run(args),
    })
}
