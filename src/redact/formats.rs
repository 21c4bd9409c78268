//! Files with a syntax of their own: the AWS CLI's prompt, `.netrc`, PHP `define()`,
//! XML elements.

use std::sync::LazyLock;

use regex::bytes::Regex;

use super::prose::looks_typed;
use super::scan::{Span, ascii_regex, lazy_re};
use super::value::{Class, Form, name_class, should_redact};

lazy_re!(AWS_PROMPT, r"Secret Access Key(?: \[[^\]]*\])?:[ \t]*([A-Za-z0-9/+=]{40})");

pub(crate) fn aws_prompt(line: &[u8], out: &mut Vec<Span>) {
    for c in AWS_PROMPT.captures_iter(line) {
        let m = c.get(1).unwrap();
        out.push(Span { start: m.start(), end: m.end(), rule: "aws-secret" });
    }
}

lazy_re!(NETRC, r"\bmachine[ \t]+\S+.*?\bpassword[ \t]+([^\s'\x22]+)");

// `.netrc` allows an entry over several lines, so a line can be only `password X`, or
// `login me password X`, or the `default` entry's: the whole line, so that prose
// ("password reset") is left alone. A diff's sign may start the line: the view keeps a
// `-` before an indented line (it reads as a list's dash), and a diff shown by `Read`
// keeps its sign after the number.
lazy_re!(
    NETRC_LINE,
    r"(?:^[-+]?|[;:])[ \t]*(?:default[ \t]+)?(?:login[ \t]+\S+[ \t]+)?password[ \t]+([^\s'\x22=:]+)[ \t]*$"
);

pub(crate) fn netrc(line: &[u8], out: &mut Vec<Span>) {
    if let Some(c) = NETRC_LINE.captures(line) {
        let m = c.get(1).unwrap();
        // A lone word is prose ("password reset"); a netrc password in a file of its own
        // shape has a digit, a symbol or mixed case.
        if should_redact(Class::Password, m.as_bytes()) && looks_typed(m.as_bytes()) {
            out.push(Span { start: m.start(), end: m.end(), rule: "netrc-line" });
        }
    }
    for c in NETRC.captures_iter(line) {
        let m = c.get(1).unwrap();
        if should_redact(Class::Password, m.as_bytes()) {
            out.push(Span { start: m.start(), end: m.end(), rule: "netrc" });
        }
    }
}

lazy_re!(
    PHP_DEFINE,
    r#"(?i)\bdefine\s*\(\s*['"]([A-Za-z0-9_]+)['"]\s*,\s*'([^'\\]*)'|(?i)\bdefine\s*\(\s*['"]([A-Za-z0-9_]+)['"]\s*,\s*"([^"\\$]*)""#
);

pub(crate) fn php_define(line: &[u8], out: &mut Vec<Span>) {
    for c in PHP_DEFINE.captures_iter(line) {
        let (name, value) = match (c.get(1), c.get(2), c.get(3), c.get(4)) {
            (Some(n), Some(v), ..) | (_, _, Some(n), Some(v)) => (n, v),
            _ => continue,
        };
        if let Some(class) = name_class(name.as_bytes(), Form::Env)
            && should_redact(class, value.as_bytes())
        {
            out.push(Span { start: value.start(), end: value.end(), rule: "php-define" });
        }
    }
}

lazy_re!(XML_ELEMENT, r"<([A-Za-z_][A-Za-z0-9_.:\-]*)>([^<>]{1,1024})</([A-Za-z_][A-Za-z0-9_.:\-]*)>");

/// `<password>X</password>`: an element whose name names a secret, on one line.
pub(crate) fn xml(line: &[u8], out: &mut Vec<Span>) {
    for c in XML_ELEMENT.captures_iter(line) {
        let (open, value, close) = (c.get(1).unwrap(), c.get(2).unwrap(), c.get(3).unwrap());
        if open.as_bytes() != close.as_bytes() {
            continue;
        }
        if let Some(class) = name_class(open.as_bytes(), Form::Colon)
            && should_redact(class, value.as_bytes())
        {
            out.push(Span { start: value.start(), end: value.end(), rule: "xml" });
        }
    }
}
