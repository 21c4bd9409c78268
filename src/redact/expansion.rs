//! `${NAME:-word}`: a default, assignment or alternative inside a parameter expansion
//! (POSIX, 2.6.2: `:-`, `-`, `:=`, `=`, `:+`, `+`; Docker Compose interpolates the same
//! forms). The word is the variable's value whenever it is unset, so under a secret's
//! name a literal word is judged as that name's own value would be. The expansion itself
//! is a reference and stays; `:?` and `?` give an error message, not a value.

use std::sync::LazyLock;

use regex::bytes::Regex;

use super::scan::{Span, ascii_regex, lazy_re};
use super::value::{Form, name_class_strict, should_redact};

// A word with an expansion, a quote, an escape or a blank in it is left: it is made at
// run time, quoted as the shell reads it, or a sentence (`${PW:-not set}`).
lazy_re!(EXPANSION, r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::?[-=+])([^}$`'\x22\\\s{]+)\}");

pub(crate) fn spans(line: &[u8], out: &mut Vec<Span>) {
    if memchr::memmem::find(line, b"${").is_none() {
        return;
    }
    for c in EXPANSION.captures_iter(line) {
        let (Some(name), Some(word)) = (c.get(1), c.get(2)) else { continue };
        let Some(class) = name_class_strict(name.as_bytes(), Form::Colon) else { continue };
        if should_redact(class, word.as_bytes()) && !super::value::is_schema_word(word.as_bytes()) {
            out.push(Span { start: word.start(), end: word.end(), rule: "kv" });
        }
    }
}
