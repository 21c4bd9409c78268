//! `lokust-shell redact`: the redactor as a streaming filter.

use std::fs::File;
use std::io::{self, BufReader, Write};
use std::path::Path;

use anyhow::Context;

use crate::cli::{RedactArgs, RedactAs};
use crate::exit;
use crate::redact::{Report, filter};

pub fn run(args: &RedactArgs) -> anyhow::Result<u8> {
    let stdout = io::stdout();
    let mut out = io::BufWriter::with_capacity(256 * 1024, stdout.lock());
    let mut report = Report::default();
    let stdin_only = [Path::new("-").to_path_buf()];
    let files = if args.files.is_empty() { &stdin_only[..] } else { &args.files[..] };
    let kind = match args.kind {
        RedactAs::Auto => filter::Kind::Auto,
        RedactAs::Text => filter::Kind::Text,
        RedactAs::Shell => filter::Kind::Shell,
        RedactAs::Code => filter::Kind::Code,
        RedactAs::Config => filter::Kind::Config,
        RedactAs::Transcript => filter::Kind::Transcript,
    };
    for file in files {
        let part = if file == Path::new("-") {
            filter::run_as(kind, io::stdin().lock(), &mut out).context("could not redact standard input")?
        } else {
            let f = File::open(file).with_context(|| format!("could not read {}", file.display()))?;
            filter::run_as(kind, BufReader::with_capacity(256 * 1024, f), &mut out)
                .with_context(|| format!("could not redact {}", file.display()))?
        };
        report.merge(&part);
    }
    out.flush()?;
    if args.explain {
        report.write_explain(io::stderr().lock())?;
    }
    Ok(exit::SUCCESS)
}
