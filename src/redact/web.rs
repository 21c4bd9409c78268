//! URLs with credentials in them, HTTP headers and cookies.

use std::sync::LazyLock;

use regex::bytes::Regex;

use super::span::{Span, ascii_regex, lazy_re};
use super::value::{Class, should_redact};

lazy_re!(URL, r"(?i)\b[a-z][a-z0-9+.\-]*://([^\s/@:'\x22]*)(?::([^\s/'\x22]*))?@[^\s@/'\x22]");

pub(crate) fn url(line: &[u8], out: &mut Vec<Span>) {
    for c in URL.captures_iter(line) {
        let user = c.get(1).unwrap();
        match c.get(2) {
            Some(pw) if !pw.is_empty() => {
                if should_redact(Class::Password, pw.as_bytes()) {
                    out.push(Span { start: pw.start(), end: pw.end(), rule: "url-password" });
                }
            }
            // `https://<token>@github.com`: a token used as the user name.
            _ => {
                if user.len() >= 20 && should_redact(Class::Secret, user.as_bytes()) {
                    out.push(Span { start: user.start(), end: user.end(), rule: "url-password" });
                }
            }
        }
    }
}

// A value runs through a backslash escape (`Bearer abc\"def` inside a double-quoted
// word): stopping at the escaped quote left the rest of the token after the marker.
lazy_re!(
    HEADER,
    r"(?i)\b(?:proxy-)?authorization['\x22]?[ \t]*[:=][ \t]*['\x22]?(?:(bearer|basic|token|bot|ssws|digest|negotiate|apikey|api-key|key|hmac|dsn|gitlab-ci-token|sso-key)[ \t]+)?((?:\\.|[^\s'\x22\\])+(?:[ \t]*,[ \t]*(?:\\.|[^\s'\x22\\])+)*)"
);

pub(crate) fn header(line: &[u8], out: &mut Vec<Span>) {
    for c in HEADER.captures_iter(line) {
        let v = c.get(2).unwrap();
        let scheme_given = c.get(1).is_some();
        let class = if scheme_given { Class::Password } else { Class::Secret };
        // `authorization = request.headers.get(…)`: code reading the header, not its value.
        // `Authorization::into_raw`: a path in code, not a header.
        // `Authorization: creds.token_type + " " + …`, `= requestHeaders.Authorization;`.
        let code = !scheme_given
            && super::shape::is_code_value(
                v.as_bytes().strip_suffix(b";").unwrap_or(v.as_bytes()),
                &line[v.end()..],
            );
        let call = code
            || !scheme_given
                && (matches!(line.get(v.end()), Some(b'(' | b'['))
                    || v.as_bytes().contains(&b'(')
                    || v.as_bytes().starts_with(b":"));
        if !call && should_redact(class, v.as_bytes()) {
            out.push(Span { start: v.start(), end: v.end(), rule: "header" });
        }
    }
}

lazy_re!(COOKIE, r"(?i)\b(?:set-)?cookie[ \t]*:[ \t]*([^'\x22\r\n]+)");

pub(crate) fn cookie(line: &[u8], out: &mut Vec<Span>) {
    for c in COOKIE.captures_iter(line) {
        let m = c.get(1).unwrap();
        let mut at = m.start();
        for part in m.as_bytes().split(|&b| b == b';') {
            if let Some(eq) = part.iter().position(|&b| b == b'=') {
                let name = part[..eq].trim_ascii();
                let attr = String::from_utf8_lossy(name).to_ascii_lowercase();
                let v = &part[eq + 1..];
                // A cookie value has no space, comma or backslash: `\r\n` in a string ends it.
                let v = &v[..v.iter().position(|b| matches!(b, b' ' | b',' | b'\\')).unwrap_or(v.len())];
                let vt = v.trim_ascii_end();
                if !matches!(attr.as_str(), "path" | "domain" | "expires" | "max-age" | "samesite")
                    && should_redact(Class::Secret, vt)
                {
                    let s = at + eq + 1;
                    let lead = v.len() - v.trim_ascii_start().len();
                    out.push(Span { start: s + lead, end: s + vt.len(), rule: "cookie" });
                }
            }
            at += part.len() + 1;
        }
    }
    // `curl -b name=value` is read by the shell engine, which "curl" wakes.
}
