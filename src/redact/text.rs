//! A text through the pipeline, line by line: stretches with no keyword are copied, the
//! lines around a hit go to the line engine (`scan.rs`), and a secret found once is
//! replaced wherever it comes again in the text.

use std::borrow::Cow;
use std::io::{self, Write};

use super::below::Named;
use super::heredoc::FileSyntax;
use super::report::Report;
use super::scan::{self, LineScanner};

/// Returns `text` with every secret replaced by `[REDACTED]`, counting what it did into
/// `report`. Unchanged text is returned borrowed and byte-identical.
pub fn redact_report<'a>(text: &'a str, report: &mut Report) -> Cow<'a, str> {
    match redact_bytes(text.as_bytes(), report) {
        None => Cow::Borrowed(text),
        // Spans are widened to character boundaries and the marker is ASCII, so the
        // result is valid UTF-8; the lossy path is never taken but costs nothing.
        Some(out) => Cow::Owned(
            String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()),
        ),
    }
}

/// The byte-level engine behind every entry point: `None` when nothing changed.
///
/// One keyword scan serves the whole text: it finds the lines to read and wakes only
/// their rules, the same way `lokust-shell redact` reads a stream.
pub(crate) fn redact_bytes(text: &[u8], report: &mut Report) -> Option<Vec<u8>> {
    let mut hits = Vec::new();
    let seen = scan::keyword_lines(text, &mut hits);
    // A keyword whose gate its line alone does not pass may pass in the command that
    // line ends (`echo X | \` / `  sudo -S …`).
    if hits.is_empty() && !(seen && has_continuation(text)) {
        return None;
    }
    redact_with(text, LineScanner::default(), &hits, report)
}

/// [`redact_bytes`] for text that starts with the lines of a key file in `syntax` (what a
/// `Read` of a `.pgpass` shows), which hold no keyword.
pub(crate) fn redact_shown(text: &[u8], syntax: FileSyntax, report: &mut Report) -> Option<Vec<u8>> {
    let mut hits = Vec::new();
    scan::keyword_lines(text, &mut hits);
    redact_with(text, LineScanner::showing(syntax), &hits, report)
}

/// [`redact_bytes`] for what a command printed whose words named a secret as `named`
/// says (a transcript's tool result, `link.rs`): its lines are read as the lines below
/// that command at a prompt.
pub(crate) fn redact_output(text: &[u8], named: Named, report: &mut Report) -> Option<Vec<u8>> {
    let mut hits = Vec::new();
    scan::keyword_lines(text, &mut hits);
    redact_with(text, LineScanner::below(named), &hits, report)
}

fn redact_with(
    text: &[u8],
    mut sc: LineScanner,
    hits: &[(usize, usize, u128)],
    report: &mut Report,
) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len() + 16);
    let mut local = Report::default();
    let ((), found) = super::echo::collecting(|| {
        block(&mut sc, text, hits, &mut Vec::new(), &mut local, &mut out)
            .expect("writing to a Vec cannot fail");
        sc.finish(&mut out, &mut local);
    });
    // A text is one document: a secret found in it goes wherever else it stands in it.
    if !found.is_empty() {
        let mut echoes = super::echo::Echoes::default();
        echoes.learn(found);
        if let Cow::Owned(more) = echoes.redact(&out, false, &mut local) {
            out = more;
        }
    }
    // Every change counts a line.
    if local.lines == 0 {
        return None;
    }
    report.merge(&local);
    Some(out)
}

/// Complete lines: copy the stretches without keywords, hand the rest to the engine.
/// `hits` are `chunk`'s keyword lines ([`keyword_lines`]), found by the caller: a text
/// that must be scanned to know whether to read it at all is not scanned twice.
pub(crate) fn block<W: Write>(
    sc: &mut LineScanner,
    chunk: &[u8],
    hits: &[(usize, usize, u128)],
    out: &mut Vec<u8>,
    report: &mut Report,
    w: &mut W,
) -> io::Result<()> {
    // Everything before `done` has been written.
    let mut done = 0;
    // A block (PEM, a continued command) the previous chunk's last line opened.
    block_lines(sc, chunk, &mut done, out, report, w)?;
    for &(start, end, mask) in hits {
        continued_lines(sc, chunk, start, &mut done, out, report, w)?;
        if start < done {
            // A line already handled inside a block.
            continue;
        }
        w.write_all(&chunk[done..start])?;
        out.clear();
        let changed = sc.line_masked(&chunk[start..end], Some(mask), out, report);
        w.write_all(if changed { out } else { &chunk[start..end] })?;
        done = end;
        block_lines(sc, chunk, &mut done, out, report, w)?;
    }
    continued_lines(sc, chunk, chunk.len(), &mut done, out, report, w)?;
    w.write_all(&chunk[done..])
}

/// Inside a PEM block or a continued command every line matters, keywords or not.
fn block_lines<W: Write>(
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

/// The lines of `chunk[*done..upto]` that end with a continuation `\` go to the engine
/// whatever they hold, with the lines they continue into: the command goes on below,
/// where a keyword may say what it was (`echo X | \` / `  sudo -S …`). Only the bytes
/// after each backslash are looked at, so text without one costs a `memchr` pass.
fn continued_lines<W: Write>(
    sc: &mut LineScanner,
    chunk: &[u8],
    upto: usize,
    done: &mut usize,
    out: &mut Vec<u8>,
    report: &mut Report,
    w: &mut W,
) -> io::Result<()> {
    if !sc.carries() {
        return Ok(());
    }
    let mut from = *done;
    while from < upto {
        let Some(i) = memchr::memchr(b'\\', &chunk[from..upto]) else { break };
        let at = from + i;
        from = at + 1;
        let Some(eol) = continuation_at(chunk, at) else { continue };
        let start = memchr::memrchr(b'\n', &chunk[*done..at]).map_or(*done, |j| *done + j + 1);
        let end = at + 1 + eol;
        w.write_all(&chunk[*done..start])?;
        line(sc, &chunk[start..end], out, report, w)?;
        *done = end;
        block_lines(sc, chunk, done, out, report, w)?;
        from = *done;
    }
    Ok(())
}

/// Whether the backslash at `at` ends its line, and the length of the line's ending.
fn continuation_at(text: &[u8], at: usize) -> Option<usize> {
    match text.get(at + 1..)? {
        [b'\n', ..] => Some(1),
        [b'\r', b'\n', ..] => Some(2),
        _ => None,
    }
}

/// Whether a line of `text` ends with a continuation `\`.
pub(crate) fn has_continuation(text: &[u8]) -> bool {
    memchr::memchr_iter(b'\\', text).any(|at| continuation_at(text, at).is_some())
}

pub(crate) fn line<W: Write>(
    sc: &mut LineScanner,
    l: &[u8],
    out: &mut Vec<u8>,
    report: &mut Report,
    w: &mut W,
) -> io::Result<()> {
    out.clear();
    if sc.line(l, out, report) { w.write_all(out) } else { w.write_all(l) }
}
