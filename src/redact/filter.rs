//! Streaming redaction for `lokust-shell redact`: stdin to stdout, line by line, with no
//! line-length limit and without holding the input in memory.
//!
//! Bytes are preserved: invalid UTF-8 passes through untouched (the engine works on bytes
//! and only ever replaces ASCII-delimited spans), so a history file in Latin-1 or with zsh
//! metafied bytes comes out as it went in, apart from its secrets. A transcript record
//! that is not UTF-8 is the exception: it is read as JSON with U+FFFD for each bad byte,
//! and comes out so if a secret was redacted from it.
//!
//! Harmless text costs close to a copy: the keyword prefilter runs over whole buffers,
//! and only the lines around a keyword hit are handed to the line engine.

use std::io::{self, BufRead, Write};

use super::echo::Echoes;
use super::link::Links;
use super::report::Report;
use super::scan::{LineScanner, keyword_lines};
use super::span::Reading;
use super::text::{block, line};

/// What a stream holds, which decides how it is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A transcript when the first line is a JSON object or array, else text.
    Auto,
    /// Lines of text: shell history, scrollback, config files, prose; every form.
    Text,
    /// Shell lines: history, scrollback, a script (today read as `Text` is).
    Shell,
    /// Source code: a name counts only when it ends with what names a secret.
    Code,
    /// A configuration file: read as code is, and a value at a line's start runs to the
    /// line's end.
    Config,
    /// JSON Lines (Claude Code, Codex, Gemini transcripts): every line stays valid JSON
    /// with only its secret strings changed; a line that is not JSON is read as text.
    Transcript,
}

/// Copies `input` to `output` redacting secrets as `kind` says; returns what was redacted.
pub fn run_as<R: BufRead, W: Write>(kind: Kind, mut input: R, output: W) -> io::Result<Report> {
    let kind = match kind {
        Kind::Auto => sniff(&mut input)?,
        k => k,
    };
    match kind {
        Kind::Transcript => transcript(input, output),
        Kind::Code => run_reading(input, output, Reading::Code),
        Kind::Config => run_reading(input, output, Reading::Config),
        _ => run(input, output),
    }
}

/// A transcript when the first non-blank line starts a JSON object or array that parses,
/// alone or followed by others (as far as the reader's buffer holds it; a longer first
/// line is judged by its start).
fn sniff<R: BufRead>(input: &mut R) -> io::Result<Kind> {
    let buf = input.fill_buf()?;
    let start = buf.iter().position(|b| !b.is_ascii_whitespace()).unwrap_or(buf.len());
    let rest = &buf[start..];
    if !matches!(rest.first(), Some(b'{' | b'[')) {
        return Ok(Kind::Text);
    }
    let Some(end) = memchr::memchr(b'\n', rest) else { return Ok(Kind::Transcript) };
    let first = rest[..end].strip_suffix(b"\r").unwrap_or(&rest[..end]);
    // Records glued on one line (`{…}{…}`) are read as JSON too (see `json.rs`).
    let mut records = serde_json::Deserializer::from_slice(first).into_iter::<serde::de::IgnoredAny>();
    Ok(if records.next().is_some_and(|r| r.is_ok()) && records.all(|r| r.is_ok()) {
        Kind::Transcript
    } else {
        Kind::Text
    })
}

/// JSON Lines, one record at a time, with no line-length limit.
fn transcript<R: BufRead, W: Write>(mut input: R, mut output: W) -> io::Result<Report> {
    let mut report = Report::default();
    // A stream is read once: a secret's echoes after it are found, not those before.
    let mut echoes = Echoes::default();
    // The tool calls read so far whose commands named a secret: their results, in later
    // records, are read as their output (`link.rs`).
    let mut links = Links::default();
    let mut line = Vec::new();
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line)? == 0 {
            break;
        }
        let body_len =
            line.len() - if line.ends_with(b"\r\n") { 2 } else { usize::from(line.ends_with(b"\n")) };
        let (body, eol) = line.split_at(body_len);
        links.learn(body);
        let (red, found) = super::echo::collecting(|| {
            super::json::redact_line_bytes_linked(body, true, Some(&links), &mut report)
        });
        echoes.learn(found);
        output.write_all(&echoes.redact(&red, true, &mut report))?;
        output.write_all(eol)?;
        // Out before the next read may wait, so `tail -f | lokust-shell redact` shows each
        // record as it comes (records are large: a flush each costs little).
        output.flush()?;
    }
    output.flush()?;
    Ok(report)
}

/// Copies `input` to `output`, redacting secrets; returns what was redacted.
pub fn run<R: BufRead, W: Write>(input: R, output: W) -> io::Result<Report> {
    run_reading(input, output, Reading::Any)
}

fn run_reading<R: BufRead, W: Write>(mut input: R, mut output: W, reading: Reading) -> io::Result<Report> {
    let mut report = Report::default();
    let mut sc = LineScanner::reading(reading);
    let mut out = Vec::new();
    let mut hits = Vec::new();
    // A line longer than the reader's buffer, collected whole.
    let mut long = Vec::new();
    // One read's output, held until the secrets found in it are known.
    let mut held = Vec::new();
    let mut echoes = Echoes::default();
    loop {
        if !long.is_empty() {
            input.read_until(b'\n', &mut long)?;
            echoed(&mut echoes, &mut held, &mut report, &mut output, |held, report| {
                line(&mut sc, &long, &mut out, report, held)
            })?;
            long.clear();
            // A line that came in pieces (a slow writer): out before the next read waits.
            output.flush()?;
            continue;
        }
        let buf = input.fill_buf()?;
        if buf.is_empty() {
            break;
        }
        let Some(last_nl) = memchr::memrchr(b'\n', buf) else {
            long.extend_from_slice(buf);
            let n = buf.len();
            input.consume(n);
            // Reached the end without a newline: the last, unterminated line.
            if input.fill_buf()?.is_empty() {
                echoed(&mut echoes, &mut held, &mut report, &mut output, |held, report| {
                    line(&mut sc, &long, &mut out, report, held)
                })?;
                long.clear();
            }
            continue;
        };
        let chunk = &buf[..=last_nl];
        keyword_lines(chunk, &mut hits);
        echoed(&mut echoes, &mut held, &mut report, &mut output, |held, report| {
            block(&mut sc, chunk, &hits, &mut out, report, held)
        })?;
        input.consume(last_nl + 1);
        // Per read, not per line: a slow pipe (`tail -f | lokust-shell redact`) shows each
        // line as it comes, and a fast one still gets large writes.
        output.flush()?;
    }
    echoed(&mut echoes, &mut held, &mut report, &mut output, |held, report| {
        sc.finish(held, report);
        Ok(())
    })?;
    output.flush()?;
    Ok(report)
}

/// Runs `write` into `held` (one read's output), learns the secrets it found, then writes
/// `held` out with the echoes of every secret found so far replaced: those found in this
/// read too, before or after them in it.
fn echoed<W: Write>(
    echoes: &mut Echoes,
    held: &mut Vec<u8>,
    report: &mut Report,
    w: &mut W,
    write: impl FnOnce(&mut Vec<u8>, &mut Report) -> io::Result<()>,
) -> io::Result<()> {
    let (written, found) = super::echo::collecting(|| write(held, report));
    written?;
    echoes.learn(found);
    w.write_all(&echoes.redact(held, false, report))?;
    held.clear();
    Ok(())
}
