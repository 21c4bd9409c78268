//! What a value is when it is no literal: a sentence written for people, or source
//! code (a call, a member chain, an operand). Every reading asks, so the answers sit
//! below them all, beside the judge of names and values (`value.rs`).

/// A quoted text written for people (`'The "pass" statement\n'`): several words, begun
/// with a capital or carrying a line break.
pub(crate) fn is_sentence(v: &[u8]) -> bool {
    let words = v.split(|b| *b == b' ').filter(|w| !w.is_empty()).count();
    words >= 3 && (v.first().is_some_and(u8::is_ascii_uppercase) || v.windows(2).any(|w| w == b"\\n"))
}

/// An unquoted value that is source code, as scrollback shows it: a call
/// (`bcrypt.hashpw(pw)`, `std::env::var(…)`) or a member chain (`process.env.API_KEY`,
/// `self.token`). Shell would need quotes around a literal with parentheses, and a
/// literal secret is not a chain of identifiers.
pub(crate) fn looks_like_code(v: &[u8]) -> bool {
    // `'APP_KEY='.$encrypter->…` read as a shell word (`APP_KEY=.$encrypter->…`): PHP's
    // and Perl's `.` joins a variable on.
    if v.contains(&b'(') || v.contains(&b')') || v.windows(2).any(|w| w == b"::") || v.starts_with(b".$") {
        return true;
    }
    // Perl's quote-like operators (`qr/[\x21…]/`, `qw{a b}`): a pattern or a list in code.
    if let [b'q', kind, delimiter, ..] = v
        && matches!(kind, b'r' | b'w' | b'q' | b'x')
        && matches!(delimiter, b'/' | b'{' | b'[' | b'!' | b'|' | b'#' | b'<')
    {
        return true;
    }
    // `auth[2]`, `line[start:pos]`, `grammar.opmap[value]`: an index into a variable.
    if let Some(open) = v.iter().position(|&b| b == b'[')
        && open > 0
        && (v[0].is_ascii_alphabetic() || v[0] == b'_')
        && v[..open].iter().all(|&b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.')
    {
        return true;
    }
    // A password of words is a literal, not a chain (`Walrus.Granite3933`), and so is what
    // a generator made (`A9ZhaLAWQZ.RPLf0`): no member is named so.
    if super::value::is_password_of_words(v) || super::value::is_generated(v) {
        return false;
    }
    // `a?.b` (optional chaining) and `this.#field` (a private field) are chains too.
    let parts: Vec<&[u8]> = v.split(|&b| b == b'.').map(|p| p.strip_suffix(b"?").unwrap_or(p)).collect();
    parts.len() >= 2
        && parts.iter().enumerate().all(|(i, p)| {
            let p = if i > 0 { p.strip_prefix(b"#").unwrap_or(p) } else { p };
            !p.is_empty()
                && (p[0].is_ascii_alphabetic() || p[0] == b'_' || p[0] == b'$')
                && p.iter().all(|&b| b.is_ascii_alphanumeric() || b == b'_' || b == b'$')
                // `s.AbCdEf0123456789…` (a Vault token) is not a member chain.
                && !(p.len() >= 16
                    && p.iter().any(u8::is_ascii_uppercase)
                    && p.iter().any(u8::is_ascii_lowercase)
                    && p.iter().any(u8::is_ascii_digit))
        })
}

/// A bare value that is code, by what it is or by what follows it (`rest`): a keyword
/// that starts an expression (`function* (…)`, `class extends`), a regular expression, a
/// member chain, an operand (`a ?? b`, `x === 0`, `a + " "`), or an identifier that code
/// punctuation ends (`signature: actualSignature }`, `progressToken: messageId,`).
pub(crate) fn is_code_value(v: &[u8], rest: &[u8]) -> bool {
    const KEYWORDS: &[&[u8]] = &[
        b"function",
        b"function*",
        b"class",
        b"new",
        b"async",
        b"await",
        b"typeof",
        b"void",
        b"this",
        b"require",
        b"lambda",
        b"yield",
        b"not",
        b"match",
    ];
    let after = rest.trim_ascii_start();
    const OPERATORS: &[&[u8]] = &[
        b"?? ",
        b"|| ",
        b"&& ",
        b"? ",
        b"+ ",
        b"- ",
        b"* ",
        b"/ ",
        b"=== ",
        b"!== ",
        b"== ",
        b"!= ",
        b"?.",
        b"instanceof ",
    ];
    // `/^[A-Za-z0-9-_]+…$/`, `/[A-Za-z0-9_-]+/`: a regular expression literal.
    let regex =
        v.starts_with(b"/") && (v.starts_with(b"/^") || v.starts_with(b"/[") || v.starts_with(b"/\\"));
    KEYWORDS.contains(&v)
        || regex
        || looks_like_code(v)
        || (rest.starts_with(b" ") && OPERATORS.iter().any(|op| after.starts_with(op)))
        || rest.starts_with(b"?.")
        || (super::value::is_code_identifier(v) && matches!(after.first(), Some(b',' | b')' | b'}' | b';')))
}
