//! Streaming redaction for `lokust-shell redact`: stdin to stdout, line by line, with no
//! line-length limit and without holding the input in memory.
//!
//! Bytes are preserved: invalid UTF-8 passes through untouched (the engine works on bytes
//! and only ever replaces ASCII-delimited spans), so a history file in Latin-1 or with zsh
//! metafied bytes comes out as it went in, apart from its secrets.
//!
//! Harmless text costs close to a copy: the keyword prefilter runs over whole buffers,
//! and only the lines around a keyword hit are handed to the line engine.

use std::io::{self, BufRead, Write};

use super::Report;
use super::scan::{LineScanner, keyword_lines};

/// Copies `input` to `output`, redacting secrets; returns what was redacted.
pub fn run<R: BufRead, W: Write>(mut input: R, mut output: W) -> io::Result<Report> {
    let mut report = Report::default();
    let mut sc = LineScanner::default();
    let mut out = Vec::new();
    let mut hits = Vec::new();
    // A line longer than the reader's buffer, collected whole.
    let mut long = Vec::new();
    loop {
        if !long.is_empty() {
            input.read_until(b'\n', &mut long)?;
            line(&mut sc, &long, &mut out, &mut report, &mut output)?;
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
                line(&mut sc, &long, &mut out, &mut report, &mut output)?;
                long.clear();
            }
            continue;
        };
        let chunk = &buf[..=last_nl];
        block(&mut sc, chunk, &mut hits, &mut out, &mut report, &mut output)?;
        input.consume(last_nl + 1);
        // Per read, not per line: a slow pipe (`tail -f | lokust-shell redact`) shows each
        // line as it comes, and a fast one still gets large writes.
        output.flush()?;
    }
    output.flush()?;
    Ok(report)
}

/// Complete lines: copy the stretches without keywords, hand the rest to the engine.
pub(crate) fn block<W: Write>(
    sc: &mut LineScanner,
    chunk: &[u8],
    hits: &mut Vec<(usize, usize, u128)>,
    out: &mut Vec<u8>,
    report: &mut Report,
    w: &mut W,
) -> io::Result<()> {
    // Everything before `done` has been written.
    let mut done = 0;
    // A PEM block opened by the previous chunk's last line.
    pem_body(sc, chunk, &mut done, out, report, w)?;
    keyword_lines(chunk, hits);
    for &(start, end, mask) in hits.iter() {
        if start < done {
            // A line already handled inside a PEM block.
            continue;
        }
        w.write_all(&chunk[done..start])?;
        out.clear();
        let changed = sc.line_masked(&chunk[start..end], Some(mask), out, report);
        w.write_all(if changed { out } else { &chunk[start..end] })?;
        done = end;
        pem_body(sc, chunk, &mut done, out, report, w)?;
    }
    w.write_all(&chunk[done..])
}

/// Inside a PEM block every line matters, keywords or not.
fn pem_body<W: Write>(
    sc: &mut LineScanner,
    chunk: &[u8],
    done: &mut usize,
    out: &mut Vec<u8>,
    report: &mut Report,
    w: &mut W,
) -> io::Result<()> {
    while sc.in_block() && *done < chunk.len() {
        let at = *done;
        let e = memchr::memchr(b'\n', &chunk[at..]).map_or(chunk.len(), |i| at + i + 1);
        line(sc, &chunk[at..e], out, report, w)?;
        *done = e;
    }
    Ok(())
}

fn line<W: Write>(
    sc: &mut LineScanner,
    l: &[u8],
    out: &mut Vec<u8>,
    report: &mut Report,
    w: &mut W,
) -> io::Result<()> {
    out.clear();
    if sc.line(l, out, report) { w.write_all(out) } else { w.write_all(l) }
}
