//! `lokust-shell-snapshot`: the same command as `lokust-shell snapshot`.

use std::process::ExitCode;

use clap::Parser;
use lokust::cli::SnapshotCli;
use lokust::{cmd, exit};

fn main() -> ExitCode {
    let cli = SnapshotCli::parse();
    exit::run(|| cmd::snapshot::run(&cli.args))
}
