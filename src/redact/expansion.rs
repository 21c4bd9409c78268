//! A default given to a reference: the value a secret's name takes when the reference is
//! unset is judged as that name's own value would be. The reference itself stays.
//!
//! - `${NAME:-word}`: a default, assignment or alternative inside a parameter expansion
//!   (POSIX, 2.6.2: `:-`, `-`, `:=`, `=`, `:+`, `+`; Docker Compose interpolates the same
//!   forms); `:?` and `?` give an error message, not a value. Spring's placeholders write
//!   a default after one colon (`${spring.datasource.password:word}`).
//! - A fallback in code: `process.env.DB_PASSWORD || "word"`, `?? "word"`, Python's
//!   `os.environ.get("API_KEY") or "word"`, Ruby's `ENV.fetch("DB_PASSWORD") { "word" }`.

use std::sync::LazyLock;

use regex::bytes::Regex;

use super::span::{Span, ascii_regex, lazy_re};
use super::value::{Form, name_class_strict, should_redact};

// A word with an expansion, a quote, an escape or a blank in it is left: it is made at
// run time, quoted as the shell reads it, or a sentence (`${PW:-not set}`).
lazy_re!(EXPANSION, r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::?[-=+])([^}$`'\x22\\\s{]+)\}");
// Spring's `${name:default}`: a dotted name, the default after one colon.
lazy_re!(PLACEHOLDER, r"\$\{([A-Za-z_][A-Za-z0-9_.\-]*):([^-=+?}$`'\x22\\\s{][^}$`'\x22\\\s{]*)\}");
// A reference (a dotted name, with `["KEY"]` or `("KEY")` after it), a fallback operator,
// and a quoted literal; or Ruby's fetch with a block giving the default.
lazy_re!(
    FALLBACK,
    r#"([A-Za-z_$][\w$]*(?:\??\.[A-Za-z_$][\w$]*|\[\s*["'][^"'\]]+["']\s*\]|\(\s*["'][^"')]+["']\s*\))*)\s*(?:\|\||\?\?|\bor\b|\)?\s*\{)\s*(?:"([^"\\\s]+)"|'([^'\\\s]+)')"#
);

/// The name a reference reads: its last quoted key, or its last name.
fn referenced_name(reference: &[u8]) -> &[u8] {
    let quotes: Vec<usize> =
        reference.iter().enumerate().filter(|(_, b)| matches!(b, b'"' | b'\'')).map(|(i, _)| i).collect();
    if let [.., open, close] = quotes[..] {
        return &reference[open + 1..close];
    }
    let start = reference.iter().rposition(|b| *b == b'.').map_or(0, |i| i + 1);
    &reference[start..]
}

/// A literal given as the fallback of a reference to a secret's name.
fn fallbacks(line: &[u8], out: &mut Vec<Span>) {
    if !(memchr::memmem::find(line, b"||").is_some()
        || memchr::memmem::find(line, b"??").is_some()
        || memchr::memmem::find(line, b" or ").is_some()
        || memchr::memmem::find(line, b"fetch").is_some())
    {
        return;
    }
    for c in FALLBACK.captures_iter(line) {
        let (Some(whole), Some(reference)) = (c.get(0), c.get(1)) else { continue };
        let Some(word) = c.get(2).or(c.get(3)) else { continue };
        let op = &line[reference.end()..word.start()];
        // A block's default only after a fetch (`ENV.fetch("X") { "…" }`), not after any
        // call or name (`if (token) { "…"`).
        if op.contains(&b'{') && !reference.as_bytes().contains(&b'(') {
            continue;
        }
        if op.contains(&b'{') && !whole.as_bytes().windows(5).any(|w| w == b"fetch") {
            continue;
        }
        let name = referenced_name(reference.as_bytes());
        let Some(class) = name_class_strict(name, Form::Colon) else { continue };
        if should_redact(class, word.as_bytes()) && !super::value::is_schema_word(word.as_bytes()) {
            out.push(Span { start: word.start(), end: word.end(), rule: "kv" });
        }
    }
}

pub(crate) fn spans(line: &[u8], out: &mut Vec<Span>) {
    fallbacks(line, out);
    if memchr::memmem::find(line, b"${").is_none() {
        return;
    }
    let placeholders = PLACEHOLDER.captures_iter(line);
    for c in EXPANSION.captures_iter(line).chain(placeholders) {
        let (Some(name), Some(word)) = (c.get(1), c.get(2)) else { continue };
        let Some(class) = name_class_strict(name.as_bytes(), Form::Colon) else { continue };
        if should_redact(class, word.as_bytes()) && !super::value::is_schema_word(word.as_bytes()) {
            out.push(Span { start: word.start(), end: word.end(), rule: "kv" });
        }
    }
}
