//! A literal that stands alone as a call's argument or a list's element, judged by what
//! it is rather than by a name: code passes keys positionally (`new Client("acme",
//! "…", "…")`, `Auth("…")`, a `[…]` of tokens) and no name stands beside them. Only a
//! value a generator plainly made is taken ([`strongly_generated`]): long, of one token's
//! alphabet, upper and lower case and digits mixed, without words, dense in information.

use super::span::Span;
use super::value::{Class, bits_per_byte, should_redact};

/// The shortest value judged here: shorter generated strings are as often ids and salts.
const MIN_LEN: usize = 24;
/// The longest: past this a literal is data (an embedded image, a key's whole file),
/// which the block rules judge.
const MAX_LEN: usize = 128;

/// Every literal of `line` standing alone as an argument or an element whose value a
/// generator made, and every credential after an authorization scheme's word.
pub(crate) fn spans(line: &[u8], out: &mut Vec<Span>) {
    elements(line, out);
    after_scheme(line, out);
    credential_arguments(line, out);
}

/// Calls that take a user and a password by position, no name beside the password: the
/// callee as written before `(` and the password's place among the arguments. Requests'
/// and aiohttp's `auth=(user, password)` is a tuple in the same place.
pub(crate) const CREDENTIAL_ARGUMENTS: &[(&[u8], usize)] = &[
    (b"HTTPBasicAuth", 1),
    (b"HTTPDigestAuth", 1),
    (b"HTTPProxyAuth", 1),
    (b"BasicAuth", 1),
    (b"NetworkCredential", 1),
    (b"UsernamePasswordCredentials", 1),
    (b"PasswordAuthentication", 1),
    (b".login", 1),
    (b"auth=", 1),
    (b"auth =", 1),
];

/// The password a call of [`CREDENTIAL_ARGUMENTS`] is given as a literal, and the one
/// PowerShell's `ConvertTo-SecureString "…" -AsPlainText` makes a credential of.
fn credential_arguments(line: &[u8], out: &mut Vec<Span>) {
    for &(callee, place) in CREDENTIAL_ARGUMENTS {
        for at in memchr::memmem::find_iter(line, callee) {
            // The callee's whole name: `MyBasicAuth(` is another function's.
            if callee[0].is_ascii_alphabetic() && at > 0 && line[at - 1].is_ascii_alphanumeric() {
                continue;
            }
            let rest = &line[at + callee.len()..];
            let blanks = rest.iter().take_while(|b| matches!(b, b' ' | b'\t')).count();
            if rest.get(blanks) != Some(&b'(') {
                continue;
            }
            let open = at + callee.len() + blanks + 1;
            if let Some((start, end)) = literal_argument(line, open, place)
                && should_redact(Class::Password, &line[start..end])
            {
                out.push(Span { start, end, rule: "credential-argument" });
            }
        }
    }
    for at in memchr::memmem::find_iter(line, b"ConvertTo-SecureString") {
        let rest = &line[at..];
        if memchr::memmem::find(rest, b"-AsPlainText").is_none() {
            continue;
        }
        let mut i = at + b"ConvertTo-SecureString".len();
        // `-String "…"` names it; otherwise it is the first positional argument.
        loop {
            i += line[i..].iter().take_while(|b| matches!(b, b' ' | b'\t')).count();
            match line.get(i) {
                Some(b'"' | b'\'') => break,
                Some(b'-') => i += line[i..].iter().take_while(|b| !matches!(b, b' ' | b'\t')).count(),
                _ => break,
            }
        }
        if let Some((start, end)) = quoted_at(line, i)
            && should_redact(Class::Password, &line[start..end])
        {
            out.push(Span { start, end, rule: "credential-argument" });
        }
    }
}

/// The inside of the quoted literal starting at `at` and where it ends, as a command's
/// words are read ([`super::shell::element_at`]), with no escape or interpolation in it.
fn quoted_at(line: &[u8], at: usize) -> Option<(usize, usize)> {
    if !matches!(line.get(at), Some(b'"' | b'\'')) {
        return None;
    }
    let ((start, end), _) = super::shell::element_at(line, at).and_then(|(e, next)| Some((e?, next)))?;
    (start < end && !line[start..end].contains(&b'$')).then_some((start, end))
}

/// The argument at `place` of the call whose arguments start at `open`, when it is a
/// literal: the arguments before it are skipped whole (literals, names, calls).
fn literal_argument(line: &[u8], open: usize, place: usize) -> Option<(usize, usize)> {
    let mut i = open;
    for _ in 0..place {
        let mut depth = 0usize;
        loop {
            match *line.get(i)? {
                b'"' | b'\'' => i = quoted_at(line, i).map(|(_, end)| end)?,
                b'(' | b'[' | b'{' => depth += 1,
                b')' | b']' | b'}' if depth == 0 => return None,
                b')' | b']' | b'}' => depth -= 1,
                b',' if depth == 0 => break,
                _ => {}
            }
            i += 1;
        }
        i += 1;
    }
    i += line[i..].iter().take_while(|b| matches!(b, b' ' | b'\t')).count();
    let (start, end) = quoted_at(line, i)?;
    // The literal is the whole argument: `"a" + b` is made at run time.
    let after = line[end + 1..].iter().find(|b| !matches!(b, b' ' | b'\t'));
    matches!(after, Some(b',' | b')')).then_some((start, end))
}

/// `Bearer …` wherever it stands (`token = "Bearer …"`, `"Bearer " + "…"`, a log line):
/// the scheme says what follows is a credential, and a generated one is taken whatever
/// names it. A word or a variable after it (`Bearer $TOKEN`, `Bearer tokens are…`) is not.
fn after_scheme(line: &[u8], out: &mut Vec<Span>) {
    for at in memchr::memmem::find_iter(line, b"earer") {
        let Some(word_start) = at.checked_sub(1) else { continue };
        if !matches!(line[word_start], b'B' | b'b')
            || word_start.checked_sub(1).is_some_and(|i| line[i].is_ascii_alphanumeric())
        {
            continue;
        }
        let mut start = at + 5;
        // `"Bearer " + "…"`: the literal joined after the scheme's own.
        let gap = |b: &u8| matches!(b, b' ' | b'\t' | b'"' | b'\'' | b'+' | b'`');
        let blanks = line[start..].iter().take_while(|b| gap(b)).count();
        if blanks == 0 || !line[start..start + blanks].contains(&b' ') {
            continue;
        }
        start += blanks;
        let len = line[start..]
            .iter()
            .take_while(|b| {
                b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'+' | b'/' | b'=')
            })
            .count();
        let v = &line[start..start + len];
        let jwt = v.starts_with(b"eyJ") && v.iter().filter(|b| **b == b'.').count() == 2;
        if len >= 16 && (jwt || should_redact(Class::Generated, v)) {
            out.push(Span { start, end: start + len, rule: "bearer-credential" });
        }
    }
}

fn elements(line: &[u8], out: &mut Vec<Span>) {
    let mut at = 0;
    while let Some(i) = line[at..].iter().position(|b| matches!(b, b'"' | b'\'' | b'`')).map(|i| at + i) {
        let q = line[i];
        let Some(len) = line[i + 1..].iter().position(|b| *b == q || *b == b'\\') else { return };
        let end = i + 1 + len;
        if line[end] == b'\\' {
            // An escape inside: not a token's alphabet; step past the quote.
            at = i + 1;
            continue;
        }
        if opens_element(&line[..i])
            && closes_element(&line[end + 1..])
            && strongly_generated(&line[i + 1..end])
        {
            out.push(Span { start: i + 1, end, rule: "generated-literal" });
        }
        at = end + 1;
    }
}

/// What stands before a literal that makes it an argument or an element: `(`, `,` or `[`
/// (blanks between), or nothing (the next element of a list broken over lines).
fn opens_element(before: &[u8]) -> bool {
    match before.trim_ascii_end().last() {
        None => true,
        Some(b) => matches!(b, b'(' | b',' | b'['),
    }
}

/// What follows one: `,`, `)` or `]`, or the line's end.
fn closes_element(after: &[u8]) -> bool {
    match after.trim_ascii_start().first() {
        None => true,
        Some(b) => matches!(b, b',' | b')' | b']' | b';'),
    }
}

/// A value no person or program named: [`MIN_LEN`] to [`MAX_LEN`] characters, generated
/// as the name-keyed rules judge it, with two or more of each of upper case, lower case
/// and digits, and over four bits of information a character.
pub(crate) fn strongly_generated(v: &[u8]) -> bool {
    if !(MIN_LEN..=MAX_LEN).contains(&v.len()) || !should_redact(Class::Generated, v) {
        return false;
    }
    if is_encoded_text(v) {
        return false;
    }
    let count = |f: fn(&u8) -> bool| v.iter().filter(|b| f(b)).count();
    if count(u8::is_ascii_uppercase) < 2 || count(u8::is_ascii_lowercase) < 2 || count(u8::is_ascii_digit) < 2
    {
        return false;
    }
    bits_per_byte(v) > 4.0
}

/// Text written in an encoding rather than generated: percent-escapes (`%E5%BC%A0`), or
/// base64 whose bytes are printable text (`ZXhhbXBsZQ==` is `example`). A key's random
/// bytes decode to bytes no text is made of.
fn is_encoded_text(v: &[u8]) -> bool {
    use base64::Engine as _;
    let escapes =
        v.windows(3).filter(|w| w[0] == b'%' && w[1].is_ascii_hexdigit() && w[2].is_ascii_hexdigit());
    if escapes.count() >= 2 {
        return true;
    }
    let engines = [&base64::engine::general_purpose::STANDARD, &base64::engine::general_purpose::URL_SAFE];
    let unpadded = [
        &base64::engine::general_purpose::STANDARD_NO_PAD,
        &base64::engine::general_purpose::URL_SAFE_NO_PAD,
    ];
    let decoded = engines.iter().chain(&unpadded).find_map(|e| e.decode(v).ok());
    decoded.is_some_and(|d| d.len() >= 6 && d.iter().all(|b| b.is_ascii_graphic() || b.is_ascii_whitespace()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(line: &str) -> Vec<&str> {
        let mut out = Vec::new();
        spans(line.as_bytes(), &mut out);
        out.iter().map(|s| &line[s.start..s.end]).collect()
    }

    #[test]
    fn a_credential_after_bearer_is_found_wherever_it_stands() {
        let key = "He9UZgakvPVjFvbQm01bA79J8V5B6A7stIGJT90Q";
        for line in [
            format!("token = \"Bearer {key}\""),
            format!("headers.set(\"Authorization\", \"Bearer \" + \"{key}\");"),
            format!("2024-05-01 DEBUG sending bearer {key} to upstream"),
        ] {
            assert_eq!(found(&line), [key], "{line}");
        }
        for clean in [
            "curl -H \"Authorization: Bearer $TOKEN\"",
            "Bearer tokens are sent in the Authorization header",
            "the StandardBearer ZxQ8mN2pLk4vB7wR9tY3uI6o",
            "Bearer ${{ secrets.API_TOKEN }}",
        ] {
            assert!(found(clean).is_empty(), "{clean}: {:?}", found(clean));
        }
    }

    #[test]
    fn a_generated_argument_or_element_is_found_and_what_is_named_is_not() {
        let key = "Zuo5OSH1g8bjrIO2tG3t9qVNd5c1L4xn";
        assert_eq!(found(&format!("new Client(\"acme-prod\", \"{key}\", {{ retries: 3 }})")), [key]);
        assert_eq!(found(&format!("tokens = ['{key}', '{key}']")).len(), 2);
        assert_eq!(found(&format!("    \"{key}\",")), [key]);
        for clean in [
            "assert_eq!(digest, \"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08\")",
            "f(\"3fa85f64-5717-4562-b3fc-2c963f66afa6\")",
            "log(\"ConnectionRefusedErrorHandler2\")",
            "open(\"/usr/lib/x86_64-linux-gnu/libssl.so.3\")",
            "require(\"@babel/helper-plugin-utils\")",
            "t(\"GEMMA_4_31B_IT_MODEL\", \"en-US-x-2\")",
            "x = {\"key\": \"Zuo5OSH1g8bjrIO2tG3t9qVNd5c1L4xn\"}",
            "f(\"sha512-Zuo5OSH1g8bjrIO2tG3t9qVNd5c1L4xn\")",
            "f(\"short5OSH1g8b\")",
            "assert_eq!(encoded, \"ZXhhbXBsZSBieXRlc3RyaW5nIQ==\")",
            "assert_eq!(buf, \"name=%E5%BC%A0%E4%B8%89&speech=%C2%A1Ol%C3%A9%21\")",
        ] {
            assert!(found(clean).is_empty(), "{clean}: {:?}", found(clean));
        }
    }
}
