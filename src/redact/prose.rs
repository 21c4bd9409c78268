//! A secret given in words, as typed in a prompt: "the staging db password is X".

use std::sync::LazyLock;

use regex::bytes::Regex;

use super::span::{Span, ascii_regex, lazy_re};
use super::value::{Class, is_member_chain, should_redact};

// "the staging db password is X", "my API token: X". The value must look typed, not
// be a word: "the password is wrong" is a sentence, not a secret.
lazy_re!(
    PROSE,
    r"(?i)\b(?:password|passphrase|passwd|token|secret)\s+(?:is|was)\s+[`'\x22]?([^\s`'\x22]+?)[`'\x22]?[.,;:!)]?(?:\s|$)"
);

pub(crate) fn prose(line: &[u8], out: &mut Vec<Span>) {
    for c in PROSE.captures_iter(line) {
        let m = c.get(1).unwrap();
        // `if token is Name.Variable:` is Python comparing, not a sentence.
        let v = m.as_bytes();
        if m.len() >= 6 && should_redact(Class::Password, v) && looks_typed(v) && !is_member_chain(v) {
            out.push(Span { start: m.start(), end: m.end(), rule: "prose" });
        }
    }
}

/// A value someone typed or generated rather than a word of a sentence: it mixes
/// letters with digits or symbols, or has capitals after its first letter.
pub(crate) fn looks_typed(v: &[u8]) -> bool {
    // A sentence's own punctuation ("the password combination.") says nothing.
    let end = v.iter().rposition(|b| !b".,;:!?)".contains(b)).map_or(0, |i| i + 1);
    let v = &v[..end];
    let letters = v.iter().any(u8::is_ascii_alphabetic);
    let others = v.iter().any(|b| !b.is_ascii_alphabetic());
    let inner_caps = v.iter().skip(1).any(u8::is_ascii_uppercase) && v.iter().any(u8::is_ascii_lowercase);
    (letters && others) || inner_caps
}
