//! The one entry point every captured text goes through before it reaches a `.lok`.
//!
//! Everything lokust writes may be shared, so this module is the product's promise: history
//! lines, environment values, git remotes, scrollback and transcripts all pass through
//! [`redact_report`]. A secret's *value* is replaced by `[REDACTED]` and the structure
//! around it is kept (`export GITHUB_TOKEN=[REDACTED]`), so the line stays useful.
//!
//! The pipeline (`scan.rs`): a keyword prefilter (`keywords.rs`), so that text with no
//! candidate comes back borrowed and byte-identical; the rules it woke (`rules.rs`), each
//! only where what surrounds the keyword lets its engine fire (`gate.rs`); the merged
//! spans replaced. One module per kind of text the rules read:
//!
//! - `shell.rs` shell command lines, on top of the lexer in `lex.rs`; `heredoc.rs` the
//!   bodies of here-documents fed to a reader of secrets or into a key file;
//! - `assign.rs` `name=value` and `name: value` in shell, config files and code;
//!   `arrow.rs` `key => value` in PHP, Ruby, Perl and Puppet;
//!   `yaml.rs` YAML's block scalars and scalars below their key, whose value is on the
//!   lines below its name;
//! - `web.rs` URLs with credentials, HTTP headers, cookies;
//! - `pem.rs` private-key blocks; `formats.rs` files with their own syntax (`.netrc`,
//!   PHP `define()`, the AWS prompt); `prose.rs` secrets given in words;
//! - `json.rs` JSON text (transcripts), string by string; `link.rs` a transcript's tool
//!   call and its result, whose output the call's command names; `view.rs` the prefixes a
//!   tool puts before a file's lines (`N→`, `cat -n`, `grep -n`, diffs);
//! - `value.rs` what a name says of its value, and the values that are never secrets;
//!   `quoting.rs` what replacing a value does to the quotes around it;
//! - `mnemonic.rs` a wallet's recovery phrase, judged by its words alone;
//! - `echo.rs` a secret found once, replaced wherever it comes again in the document.
//!
//! See SECURITY.md for what is and is not redacted.

mod arrow;
mod assign;
mod below;
mod declare;
mod echo;
mod expansion;
mod find;
mod formats;
mod gate;
mod heredoc;
mod json;
mod keywords;
mod lex;
mod link;
mod literal;
mod memo;
mod mnemonic;
mod pair;
mod pem;
mod prose;
mod quoting;
mod rules;
mod scan;
mod shell;
mod table;
mod value;
mod view;
mod web;
mod yaml;

pub mod filter;

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::io;

pub use crate::lok::REDACTED;
pub use echo::{Echoes, collecting, redact_document};
pub use link::Links;
pub use rules::{Engine, Gate, Matcher, RULES, Rule};

/// What a redaction pass did, by rule. Holds counts only, never secret text, so it can be
/// printed, logged and stored in a snapshot summary.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Report {
    /// Lines that changed.
    pub lines: u64,
    /// Secret values replaced.
    pub values: u64,
    /// Values replaced, by rule id.
    pub by_rule: BTreeMap<&'static str, u64>,
}

impl Report {
    /// Adds `other`'s counts to this report.
    pub fn merge(&mut self, other: &Report) {
        // Most texts redact nothing; their empty reports are merged by the thousand.
        if other.values == 0 && other.lines == 0 && other.by_rule.is_empty() {
            return;
        }
        self.lines += other.lines;
        self.values += other.values;
        for (k, v) in &other.by_rule {
            *self.by_rule.entry(k).or_default() += v;
        }
    }

    fn count(&mut self, rule: &'static str) {
        self.values += 1;
        *self.by_rule.entry(rule).or_default() += 1;
    }

    /// Writes the counts, one rule per line, for `lokust-shell redact --explain`.
    /// Only rule ids and numbers: never the text that was redacted.
    pub fn write_explain<W: io::Write>(&self, mut w: W) -> io::Result<()> {
        writeln!(
            w,
            "redacted {} value{} on {} line{}",
            self.values,
            if self.values == 1 { "" } else { "s" },
            self.lines,
            if self.lines == 1 { "" } else { "s" }
        )?;
        let width = self.by_rule.keys().map(|k| k.len()).max().unwrap_or(0);
        for (rule, n) in &self.by_rule {
            writeln!(w, "  {rule:<width$}  {n}")?;
        }
        Ok(())
    }
}

/// Returns `text` with every secret replaced by `[REDACTED]`. Unchanged text is returned
/// borrowed and byte-identical. `text` may span lines (a PEM block, a scrollback page).
pub fn redact(text: &str) -> Cow<'_, str> {
    redact_report(text, &mut Report::default())
}

/// [`redact`], counting what it did into `report`.
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
    if hits.is_empty() && !(seen && filter::has_continuation(text)) {
        return None;
    }
    redact_with(text, scan::LineScanner::default(), &hits, report)
}

/// [`redact_bytes`] for text that starts with the lines of a key file in `syntax` (what a
/// `Read` of a `.pgpass` shows), which hold no keyword.
pub(crate) fn redact_shown(text: &[u8], syntax: heredoc::FileSyntax, report: &mut Report) -> Option<Vec<u8>> {
    let mut hits = Vec::new();
    scan::keyword_lines(text, &mut hits);
    redact_with(text, scan::LineScanner::showing(syntax), &hits, report)
}

/// [`redact_bytes`] for what a command printed whose words named a secret as `named`
/// says (a transcript's tool result, `link.rs`): its lines are read as the lines below
/// that command at a prompt.
pub(crate) fn redact_output(text: &[u8], named: below::Named, report: &mut Report) -> Option<Vec<u8>> {
    let mut hits = Vec::new();
    scan::keyword_lines(text, &mut hits);
    redact_with(text, scan::LineScanner::below(named), &hits, report)
}

fn redact_with(
    text: &[u8],
    mut sc: scan::LineScanner,
    hits: &[(usize, usize, u128)],
    report: &mut Report,
) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len() + 16);
    let mut local = Report::default();
    let ((), found) = echo::collecting(|| {
        filter::block(&mut sc, text, hits, &mut Vec::new(), &mut local, &mut out)
            .expect("writing to a Vec cannot fail");
        sc.finish(&mut out, &mut local);
    });
    // A text is one document: a secret found in it goes wherever else it stands in it.
    if !found.is_empty() {
        let mut echoes = echo::Echoes::default();
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

/// Redacts one environment variable's value, using its name as context: the value of
/// `DB_PASSWORD` is a secret whatever it looks like, the value of `TOKENIZERS_PARALLELISM`
/// is not. Values of other variables are redacted as text (a token in `GIT_ASKPASS_ARGS`,
/// a URL with a password in `DATABASE_URL`).
pub fn redact_env<'a>(name: &str, value: &'a str, report: &mut Report) -> Cow<'a, str> {
    if let Some(class) = value::name_class(name.as_bytes(), value::Form::Env)
        && value::should_redact(class, value.as_bytes())
    {
        report.lines += 1;
        report.count("assign");
        return Cow::Owned(REDACTED.to_string());
    }
    redact_report(value, report)
}

/// One line given as bytes: a JSON Lines record when `jsonl`, else text. A line that is
/// not UTF-8 is read as it would be with each bad byte as U+FFFD, so that one bad byte
/// does not turn the reading of a record's JSON strings off (an escaped secret in
/// another of its strings would pass); its bytes stay as they are unless that reading
/// finds a secret, and then each bad byte is U+FFFD in what comes back.
pub fn redact_line_bytes<'a>(body: &'a [u8], jsonl: bool, report: &mut Report) -> Cow<'a, [u8]> {
    redact_line_bytes_linked(body, jsonl, None, report)
}

/// [`redact_line_bytes`] for a record of a transcript whose earlier tool calls are
/// `links` ([`Links::learn`]).
pub fn redact_line_bytes_linked<'a>(
    body: &'a [u8],
    jsonl: bool,
    links: Option<&Links>,
    report: &mut Report,
) -> Cow<'a, [u8]> {
    fn read<'t>(text: &'t str, jsonl: bool, links: Option<&Links>, report: &mut Report) -> Cow<'t, str> {
        if jsonl { redact_json_line_linked(text, links, report) } else { redact_report(text, report) }
    }
    match simdutf8::basic::from_utf8(body) {
        Ok(text) => match read(text, jsonl, links, report) {
            Cow::Borrowed(_) => Cow::Borrowed(body),
            Cow::Owned(s) => Cow::Owned(s.into_bytes()),
        },
        Err(_) => {
            let lossy = String::from_utf8_lossy(body);
            let mut found = Report::default();
            let red = read(&lossy, jsonl, links, &mut found);
            if found.values == 0 {
                Cow::Borrowed(body)
            } else {
                report.merge(&found);
                Cow::Owned(red.into_owned().into_bytes())
            }
        }
    }
}

/// Redacts every string of one JSON Lines record: keys and values as text, and a value
/// also with its key as context (`{"password": "hunter2"}`).
///
/// Only the strings that change are rewritten, so an untouched record comes back
/// borrowed and byte-identical and a changed one stays valid JSON with every other byte
/// kept. A line that is not JSON is redacted as plain text, so a malformed record cannot
/// smuggle a secret past. A changed record counts as one line in `report`.
pub fn redact_json_line<'a>(line: &'a str, report: &mut Report) -> Cow<'a, str> {
    redact_json_line_linked(line, None, report)
}

/// [`redact_json_line`] for a record of a transcript whose earlier tool calls are
/// `links`: a result of a call whose command named a secret is read as its output.
pub fn redact_json_line_linked<'a>(
    line: &'a str,
    links: Option<&Links>,
    report: &mut Report,
) -> Cow<'a, str> {
    let mut local = Report::default();
    let walked = match links {
        Some(links) => json::redact_strings_linked(line, links, &mut local),
        None => json::redact_strings(line, &mut local),
    };
    match walked {
        Ok(None) => Cow::Borrowed(line),
        Ok(Some(new)) => {
            local.lines = 1;
            report.merge(&local);
            Cow::Owned(new)
        }
        Err(json::NotJson) => redact_report(line, report),
    }
}

#[cfg(test)]
mod tests;
