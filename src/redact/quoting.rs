//! What replacing a span does to the quoting around it.
//!
//! A value's span comes from the word it is in, as a shell reads it: `"DB_PASSWORD=X",`
//! is one word whose value is `X,`, and `-p'a'\''b'` one whose value is `a'b`. Replaced
//! as they are, the first loses its comma (a JSON member's separator), and the second the
//! backslash that escapes one of its quotes, which leaves a quote open and the rest of the
//! line read differently. So a span stops at the closing quote of its word when only
//! punctuation follows, and the quotes kept after the marker keep their escapes.

use super::span::Span;

fn is_quote(b: u8) -> bool {
    matches!(b, b'\'' | b'"' | b'`')
}

/// How many backslashes end `text`.
fn backslashes_before(text: &[u8]) -> usize {
    text.iter().rev().take_while(|&&b| b == b'\\').count()
}

/// Fits `s` to the quoting of `line`: a span that starts with an escaped quote (`\"x\"`
/// in JSON text) takes the backslash too, and one that runs past a closing quote into
/// punctuation only (`x",`, `x'),`) ends at that quote, which then stays as it was.
pub(crate) fn fit(line: &[u8], s: &mut Span) {
    // A string's whole content is replaced whole (see [`is_whole_string`]).
    if is_whole_string(line, s.start, s.end) {
        return;
    }
    if line.get(s.start).is_some_and(|&b| is_quote(b)) && backslashes_before(&line[..s.start]) % 2 == 1 {
        s.start -= 1;
    }
    let span = &line[s.start..s.end];
    let punctuation =
        span.iter().rev().take_while(|b| matches!(b, b',' | b';' | b':' | b')' | b']' | b'}')).count();
    if punctuation == 0 || punctuation == span.len() {
        return;
    }
    let quote = span.len() - punctuation - 1;
    if !is_quote(span[quote]) {
        return;
    }
    // An escaped quote keeps its backslash beside it.
    let end = quote - backslashes_before(&span[..quote]) % 2;
    if end > 0 {
        s.end = s.start + end;
    }
}

/// Whether `start..end` of `line` is the whole content of a double-quoted string whose
/// every quote is escaped (`"{\"k\":\"v\"}"`): none of them pairs a quote outside.
pub(crate) fn is_whole_string(line: &[u8], start: usize, end: usize) -> bool {
    let span = &line[start..end];
    start > 0
        && line[start - 1] == b'"'
        && line.get(end) == Some(&b'"')
        && backslashes_before(span).is_multiple_of(2)
        && !span.contains(&b'\'')
        && span.iter().enumerate().all(|(at, &b)| b != b'"' || backslashes_before(&span[..at]) % 2 == 1)
}

/// Writes the quotes of a replaced `span`, each with the backslashes just before it, so
/// that quoting after the marker stays as balanced as it was.
pub(crate) fn keep_quotes(span: &[u8], out: &mut Vec<u8>) {
    let mut from = 0;
    for (at, &b) in span.iter().enumerate() {
        if is_quote(b) {
            let escapes = backslashes_before(&span[from..at]);
            out.extend_from_slice(&span[at - escapes..=at]);
            from = at + 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fitted(line: &str, start: usize, end: usize) -> &str {
        let mut s = Span { start, end, rule: "t" };
        fit(line.as_bytes(), &mut s);
        &line[s.start..s.end]
    }

    #[test]
    fn spans_stop_at_their_words_closing_quote() {
        assert_eq!(fitted(r#""A=xy","#, 3, 7), "xy");
        assert_eq!(fitted(r#"f('A=xy'));"#, 5, 11), "xy");
        assert_eq!(fitted(r#"A=\"xy\","#, 2, 9), r#"\"xy"#);
        // Punctuation that is part of the value, or no quote before it, stays in.
        assert_eq!(fitted(r#"A="xy"z,"#, 3, 8), r#"xy"z,"#);
        assert_eq!(fitted("A=xy,", 2, 5), "xy,");
        assert_eq!(fitted(r#"A=",""#, 2, 4), r#"","#);
        assert_eq!(fitted(r#"A="","#, 3, 5), r#"","#);
    }

    #[test]
    fn kept_quotes_keep_their_escapes() {
        for (span, want) in [
            (r"a'\''b", r"'\''"),
            (r#"ab\"cd"#, r#"\""#),
            (r#"\"x\""#, r#"\"\""#),
            (r#"a\\"b"#, r#"\\""#),
            (r"a\b'c", "'"),
            ("plain", ""),
        ] {
            let mut out = Vec::new();
            keep_quotes(span.as_bytes(), &mut out);
            assert_eq!(String::from_utf8(out).unwrap(), want, "{span}");
        }
    }
}
