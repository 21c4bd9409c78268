//! The one entry point every captured text goes through before it reaches a `.lok`.
//!
//! Everything lokust writes may be shared, so this module is the product's promise: history
//! lines, environment values, git remotes, scrollback and transcripts all pass through
//! [`redact_report`]. A secret's *value* is replaced by `[REDACTED]` and the structure
//! around it is kept (`export GITHUB_TOKEN=[REDACTED]`), so the line stays useful.
//!
//! Readings find, the pipeline runs them, the entry points drive the pipeline; each layer
//! names only those below it (`tests/layers.rs` checks it):
//!
//! - below every reading: `span.rs` what a reading hands back (a span, how the text is
//!   read, a way to read decoded text again), `report.rs` the counts, `value.rs` what a
//!   name says of its value and the values that are never secrets, `shape.rs` a value
//!   that is prose or code, `yaml_syntax.rs`, `lex.rs`, `view.rs` the prefixes a tool puts
//!   before a file's lines (`N→`, `cat -n`, `grep -n`, diffs), `quoting.rs` what
//!   replacing a value does to the quotes around it, `keywords.rs` the prefilter's finder;
//! - the readings, one per kind of text: `shell.rs` command lines (and `heredoc.rs`,
//!   `below.rs` what a command's lines below it give), `assign.rs` `name=value` and
//!   `name: value`, `declare.rs`, `arrow.rs` `key => value`, `pair.rs` an entry's name and
//!   value as two keys, `yaml.rs` block scalars, `web.rs` URLs, headers and cookies,
//!   `pem.rs` key blocks, `formats.rs` files with their own syntax, `prose.rs` secrets
//!   given in words, `table.rs`, `literal.rs`, `expansion.rs`, `mnemonic.rs` a wallet's
//!   recovery phrase;
//! - `gate.rs` and `rules.rs`: which rules a keyword wakes, and where its engine may fire;
//! - `scan.rs` the pipeline for one line: the keyword prefilter, the rules it woke, the
//!   merged spans replaced; `text.rs` a text through it line by line;
//! - `json.rs` JSON text (transcripts), string by string, on top of `find.rs`; `link.rs`
//!   a transcript's tool call and its result, whose output the call's command names;
//! - `filter.rs` streams; `echo.rs` a secret found once, replaced wherever it comes again.
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
mod report;
mod rules;
mod scan;
mod shape;
mod shell;
mod span;
mod table;
mod text;
mod value;
mod view;
mod web;
mod yaml;
mod yaml_syntax;

pub mod filter;

use std::borrow::Cow;

pub use crate::lok::REDACTED;
pub use echo::{Echoes, collecting, redact_document};
pub use json::{redact_json_line, redact_json_line_linked, redact_line_bytes, redact_line_bytes_linked};
pub use link::Links;
pub use report::Report;
pub use rules::{Engine, Gate, Matcher, RULES, Rule};
pub use span::Reading;
pub use text::redact_report;

/// Returns `text` with every secret replaced by `[REDACTED]`. Unchanged text is returned
/// borrowed and byte-identical. `text` may span lines (a PEM block, a scrollback page).
pub fn redact(text: &str) -> Cow<'_, str> {
    redact_report(text, &mut Report::default())
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

#[cfg(test)]
mod tests;
