//! `lokust-shell-restore`: the same command as `lokust-shell restore`.

use std::process::ExitCode;

use clap::Parser;
use lokust::cli::RestoreCli;
use lokust::{cmd, exit};

fn main() -> ExitCode {
    let cli = RestoreCli::parse();
    exit::run(|| cmd::restore::run(&cli.args))
}
