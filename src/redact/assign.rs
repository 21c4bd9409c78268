//! `name=value` and `name: value`, the way shell lines, config files and code write a
//! secret's name beside its value: the value is one only when the name says so and the
//! value could be one (not a reference, a placeholder, a call or an expression).

use std::sync::LazyLock;

use regex::bytes::Regex;

use super::scan::{Span, ascii_regex, lazy_re};
use super::value::{Form, name_class, should_redact};

/// A quoted or bare value; bare values stop at shell and URL delimiters.
const VALUE: &str = r#"("(?:[^"\\]|\\.)*"|'[^']*'|[^\s;&|'"<>()=,][^\s;&|'"<>)=,]*=*)"#;

lazy_re!(
    EQUALS,
    &format!(r#"(?:^|[\s;&|('"`,{{?:/\[])(-{{0,2}})([A-Za-z_][A-Za-z0-9_.\-]*)[ \t]*=[ \t]*{VALUE}"#)
);

/// The inner span of a captured value: quotes excluded.
fn unquote(line: &[u8], s: usize, e: usize) -> (usize, usize) {
    let v = &line[s..e];
    if v.len() >= 2 && (v[0] == b'"' || v[0] == b'\'') && v[v.len() - 1] == v[0] {
        (s + 1, e - 1)
    } else {
        (s, e)
    }
}

lazy_re!(
    CODE_ASSIGN,
    r#"[\[(][ \t]*["']([A-Za-z_][A-Za-z0-9_.\-]*)["'][ \t]*(?:\][ \t]*=|,)[ \t]*("(?:[^"\\]|\\.)*"|'[^']*')"#
);

/// `os.environ["API_KEY"] = "…"`, `SetEnvironmentVariable("API_TOKEN", "…")`.
pub(crate) fn code_assign(line: &[u8], out: &mut Vec<Span>) {
    for c in CODE_ASSIGN.captures_iter(line) {
        let val = c.get(2).unwrap();
        let (vs, ve) = unquote(line, val.start(), val.end());
        if let Some(class) = name_class(c.get(1).unwrap().as_bytes(), Form::Env)
            && should_redact(class, &line[vs..ve])
        {
            out.push(Span { start: vs, end: ve, rule: "assign" });
        }
    }
}

pub(crate) fn equals(line: &[u8], out: &mut Vec<Span>) {
    let mut pos = 0;
    while let Some(c) = EQUALS.captures_at(line, pos) {
        let dashes = c.get(1).unwrap();
        let name = c.get(2).unwrap();
        let val = c.get(3).unwrap();
        let (vs, mut ve) = unquote(line, val.start(), val.end());
        let before = line[..dashes.start()].last().copied();
        // `s/PASSWORD=.*/PASSWORD=X/` (sed, perl): the pattern is no value, and the
        // replacement's value ends at the expression's delimiter.
        if before == Some(b'/')
            && vs == val.start()
            && let Some(slash) = line[vs..ve].iter().position(|&b| b == b'/')
            && slash > 0
        {
            ve = vs + slash;
        }
        let form = if !dashes.is_empty() {
            Form::Flag
        } else if matches!(before, Some(b'?' | b'&')) || line[..name.start()].contains(&b'?') {
            Form::Query
        } else {
            Form::Env
        };
        let rule = match form {
            Form::Flag => "flag",
            Form::Query => "query",
            _ => "assign",
        };
        let class = name_class(name.as_bytes(), form).filter(|_| !tracking(name.as_bytes()));
        let v = &line[vs..ve];
        let bare = vs == val.start();
        if let Some(class) = class
            && !(bare && (looks_like_code(v) || is_regex_pattern(v)))
            && !is_expression(line, name.as_bytes(), name.end(), val.start(), val.end(), bare)
            && should_redact(class, v)
        {
            out.push(Span { start: vs, end: ve, rule });
            pos = val.end();
        } else {
            // `--from-literal=password=x`: look again inside the value.
            pos = if val.start() > name.start() { val.start() } else { c.get(0).unwrap().end() };
        }
        if pos >= line.len() {
            break;
        }
    }
}

/// Whether the value of `name = value` (the value at `start..end` of `line`) is source
/// code rather than a literal: the start of a call, an index or a string concatenation
/// (`kw['password']`, `headers.get(…)`), a format string (`"…" % args`), the name itself
/// (`session=session`), or an identifier assigned with spaces around `=` as code writes it
/// (`getpass = fallback_getpass`; a shell assignment has no spaces).
fn is_expression(line: &[u8], name: &[u8], name_end: usize, start: usize, end: usize, bare: bool) -> bool {
    let v = &line[start..end];
    let v = v.strip_suffix(b",").unwrap_or(v);
    let last = name.rsplit(|b| *b == b'.').next().unwrap_or(name);
    if v == last {
        return true;
    }
    let after = line.get(end).copied();
    // A quote after the value mostly closes the string the line is in (`'…?key=X'`).
    if bare && (matches!(after, Some(b'(' | b'[')) || v.ends_with(b"[")) {
        return true;
    }
    let rest = line[end..].trim_ascii_start();
    if !bare && (rest.starts_with(b"%") || rest.starts_with(b".format(") || rest.starts_with(b"+ ")) {
        return true;
    }
    let spaced = line[name_end..start].iter().any(|b| *b == b' ' || *b == b'\t');
    bare && spaced && super::value::is_code_identifier(v)
}

/// The pattern of a substitution (`s/KEY=.*/…/`): a wildcard, not a literal.
fn is_regex_pattern(v: &[u8]) -> bool {
    [&b".*"[..], b".+", b"[^", b"\\S"].iter().any(|p| v.starts_with(p))
}

/// An unquoted value that is source code, as scrollback shows it: a call
/// (`bcrypt.hashpw(pw)`, `std::env::var(…)`) or a member chain (`process.env.API_KEY`,
/// `self.token`). Shell would need quotes around a literal with parentheses, and a
/// literal secret is not a chain of identifiers.
pub(crate) fn looks_like_code(v: &[u8]) -> bool {
    if v.contains(&b'(') || v.contains(&b')') || v.windows(2).any(|w| w == b"::") {
        return true;
    }
    let parts: Vec<&[u8]> = v.split(|&b| b == b'.').collect();
    parts.len() >= 2
        && parts.iter().all(|p| {
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

/// Tracking and pagination parameters are never secrets, whatever they are called.
fn tracking(name: &[u8]) -> bool {
    let n = String::from_utf8_lossy(name).to_ascii_lowercase();
    n.starts_with("utm_")
        || matches!(n.as_str(), "gclid" | "fbclid" | "ved" | "ei" | "si" | "msclkid" | "dclid")
        || ["page", "next", "continuation", "cursor", "sync", "pagination"]
            .iter()
            .any(|p| n.starts_with(p) && (n.contains("token") || n.contains("key")))
}

lazy_re!(
    COLON,
    r#"(?:^|[\s{,\[(;])(["']?)([A-Za-z_][A-Za-z0-9_.\-]*)["']?[ \t]*:[ \t]*("(?:[^"\\]|\\.)*"|'[^']*'|[^\s,;}\]'":()][^\s,;}\]'"()]*)"#
);

pub(crate) fn colon(line: &[u8], out: &mut Vec<Span>) {
    let mut pos = 0;
    while pos < line.len() {
        let Some(c) = COLON.captures_at(line, pos) else {
            break;
        };
        let name = c.get(2).unwrap().as_bytes();
        let val = c.get(3).unwrap();
        let (vs, ve) = unquote(line, val.start(), val.end());
        let lower = String::from_utf8_lossy(name).to_ascii_lowercase();
        let header =
            matches!(lower.as_str(), "authorization" | "proxy-authorization" | "cookie" | "set-cookie");
        if !header
            && let Some(class) = name_class(name, Form::Colon)
            && !(vs == val.start() && looks_like_code(&line[vs..ve]))
            && should_redact(class, &line[vs..ve])
        {
            out.push(Span { start: vs, end: ve, rule: "kv" });
            pos = val.end();
        } else {
            // `- cmd:   password: x`: the value may itself start the next pair.
            pos = (val.start() - 1).max(c.get(0).unwrap().start() + 1);
        }
    }
}
