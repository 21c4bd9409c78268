//! The pipeline for one line: keyword prefilter, then only the rules it woke, then the
//! replacement of merged spans.
//!
//! The prefilter finds every rule's keywords in one scan (`keywords.rs`). A line with no
//! keyword is never lexed or matched against a regex; that is what keeps harmless
//! text both fast and byte-for-byte unchanged. Each rule's regex is compiled on first use
//! (a `OnceLock` per rule), so a process that redacts a few lines compiles a few regexes:
//! compiling all of them costs more than the whole start-up budget.

use std::sync::{LazyLock, OnceLock};

use regex::bytes::{Regex, RegexBuilder};

use super::keywords::Keywords;
use super::rules::{Engine, Matcher, RULES};
use super::value::{Class, Form, name_class, should_redact};
use super::{REDACTED, Report};

/// A byte range of a line to replace, and the rule that found it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Span {
    pub start: usize,
    pub end: usize,
    pub rule: &'static str,
}

struct Prefilter {
    /// Pattern id → rule index.
    rule_of: Vec<u8>,
    finder: Keywords,
}

static PREFILTER: LazyLock<Prefilter> = LazyLock::new(|| {
    let (pats, rule_of) = keyword_list();
    let finder = Keywords::new(&pats);
    Prefilter { rule_of, finder }
});

/// Every rule's keywords, case variants included, and the rule of each.
fn keyword_list() -> (Vec<String>, Vec<u8>) {
    assert!(RULES.len() <= 128, "rule masks are u128");
    let mut pats: Vec<String> = Vec::new();
    let mut rule_of = Vec::new();
    for (i, r) in RULES.iter().enumerate() {
        for kw in r.keywords {
            let mut variants = vec![kw.to_string()];
            if matches!(r.matcher, Matcher::Context(_)) {
                variants.push(kw.to_ascii_uppercase());
                let mut cap = kw.to_string();
                if let Some(f) = cap.get_mut(0..1) {
                    f.make_ascii_uppercase();
                }
                variants.push(cap);
            }
            variants.sort();
            variants.dedup();
            for v in variants {
                pats.push(v);
                rule_of.push(i as u8);
            }
        }
    }
    (pats, rule_of)
}

/// Every keyword the prefilter looks for, case variants included.
#[cfg(test)]
pub(crate) fn keywords() -> Vec<String> {
    keyword_list().0
}

/// Every line of `chunk` (complete lines) that holds a keyword, with the rules it wakes:
/// `(start, end, mask)`, in order, into `hits`. One pass over the bytes serves both the
/// decision to copy a stretch untouched and the choice of rules for the other lines.
///
/// The whole chunk is scanned before any line is processed: interleaving the two let
/// the rule engines evict the automaton's tables from the cache between hits, which made
/// the scan ten times slower on history where most lines hold a keyword.
pub(crate) fn keyword_lines(chunk: &[u8], hits: &mut Vec<(usize, usize, u128)>) {
    hits.clear();
    let p = &*PREFILTER;
    p.finder.each(chunk, |start, end, id| {
        let bit = 1u128 << p.rule_of[id];
        match hits.last_mut() {
            // Keywords hold no newline: a match ending by the line's end is on the line.
            Some(last) if end <= last.1 => last.2 |= bit,
            _ => {
                let line_start = memchr::memrchr(b'\n', &chunk[..start]).map_or(0, |i| i + 1);
                let line_end = memchr::memchr(b'\n', &chunk[end..]).map_or(chunk.len(), |i| end + i + 1);
                hits.push((line_start, line_end, bit));
            }
        }
    });
}

/// The rules the keywords in `line` wake.
pub(crate) fn woken(line: &[u8]) -> u128 {
    let p = &*PREFILTER;
    let mut mask = 0u128;
    p.finder.each(line, |_, _, id| mask |= 1u128 << p.rule_of[id]);
    mask
}

static COMPILED: [OnceLock<Regex>; 128] = [const { OnceLock::new() }; 128];

fn ascii_regex(pattern: &str) -> Regex {
    RegexBuilder::new(pattern)
        .unicode(false)
        .build()
        .unwrap_or_else(|e| panic!("rule pattern {pattern:?} does not compile: {e}"))
}

pub(crate) fn rule_regex(i: usize) -> Option<&'static Regex> {
    match RULES[i].matcher {
        Matcher::Token(p) => Some(COMPILED[i].get_or_init(|| ascii_regex(p))),
        Matcher::Context(_) => None,
    }
}

/// A token match that is really a placeholder: `ghp_xxxx…`, `…EXAMPLE`, `sk-1111…`.
fn placeholder_token(m: &[u8]) -> bool {
    if m.windows(7).any(|w| w.eq_ignore_ascii_case(b"example")) {
        return true;
    }
    let mut seen = [false; 256];
    let mut distinct = 0;
    for &b in m {
        if !seen[b as usize] {
            seen[b as usize] = true;
            distinct += 1;
        }
    }
    distinct < 10
}

/// Every span any woken rule finds in `line`, unmerged.
/// Rules woken by a secret's *name* (`NAME_WORDS`) rather than by a command or a format.
const NAME_RULES: &[&str] = &["assign", "flag", "query", "kv"];

pub(crate) fn find_spans(line: &[u8]) -> Vec<Span> {
    find_spans_depth(line, 0)
}

pub(crate) fn find_spans_depth(line: &[u8], depth: u8) -> Vec<Span> {
    find_spans_masked(line, woken(line), depth)
}

/// [`find_spans`] when the prefilter has already said which rules `line` wakes.
pub(crate) fn find_spans_masked(line: &[u8], mask: u128, depth: u8) -> Vec<Span> {
    let mut out = Vec::new();
    if mask == 0 {
        return out;
    }
    let mut engines = 0u16;
    let mut name_woken = false;
    let mut bits = mask;
    while bits != 0 {
        let i = bits.trailing_zeros() as usize;
        bits &= bits - 1;
        let rule = &RULES[i];
        match rule.matcher {
            Matcher::Token(_) => {
                let re = rule_regex(i).expect("token rule");
                for caps in re.captures_iter(line) {
                    let m = caps.name("s").unwrap_or_else(|| caps.get(0).unwrap());
                    if !placeholder_token(m.as_bytes()) {
                        out.push(Span { start: m.start(), end: m.end(), rule: rule.id });
                    }
                }
            }
            Matcher::Context(_) if NAME_RULES.contains(&rule.id) => name_woken = true,
            Matcher::Context(e) => engines |= 1 << e as u16,
        }
    }
    // A secret's name only matters next to a value: after `=` or `:`, or as a flag. A
    // base64 blob in scrollback that happens to contain "key" has none of them, and
    // skipping it keeps long harmless lines cheap.
    if name_woken && memchr::memchr3(b'=', b':', b'-', line).is_some() {
        engines |= 1 << Engine::Shell as u16 | 1 << Engine::Colon as u16;
    }
    let on = |e: Engine| engines & (1 << e as u16) != 0;
    // The name-keyed rules share keywords; whichever woke, run both readings.
    if on(Engine::Shell) || on(Engine::Equals) {
        super::shell::scan(line, &mut out, depth);
        equals(line, &mut out);
        code_assign(line, &mut out);
    }
    for (engine, read) in READERS {
        if on(engine) {
            read(line, &mut out);
        }
    }
    out
}

/// Finds an engine's spans in a line.
type Reader = fn(&[u8], &mut Vec<Span>);

/// The context engines that read a line on their own, each woken by its rules' keywords.
const READERS: [(Engine, Reader); 9] = [
    (Engine::Colon, colon),
    (Engine::Url, url),
    (Engine::Header, header),
    (Engine::Cookie, cookie),
    (Engine::Pem, pem_inline),
    (Engine::AwsPrompt, aws_prompt),
    (Engine::Netrc, netrc),
    (Engine::PhpDefine, php_define),
    (Engine::Prose, prose),
];

macro_rules! lazy_re {
    ($name:ident, $re:expr) => {
        static $name: LazyLock<Regex> = LazyLock::new(|| ascii_regex($re));
    };
}

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
fn code_assign(line: &[u8], out: &mut Vec<Span>) {
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

fn equals(line: &[u8], out: &mut Vec<Span>) {
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

fn colon(line: &[u8], out: &mut Vec<Span>) {
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

lazy_re!(URL, r"(?i)\b[a-z][a-z0-9+.\-]*://([^\s/@:'\x22]*)(?::([^\s/'\x22]*))?@[^\s@/'\x22]");

fn url(line: &[u8], out: &mut Vec<Span>) {
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

lazy_re!(
    HEADER,
    r"(?i)\b(?:proxy-)?authorization[ \t]*[:=][ \t]*['\x22]?(?:(bearer|basic|token|bot|ssws|digest|negotiate|apikey|api-key|key|hmac|dsn|gitlab-ci-token|sso-key)[ \t]+)?([^\s'\x22]+(?:[ \t]*,[ \t]*[^\s'\x22]+)*)"
);

fn header(line: &[u8], out: &mut Vec<Span>) {
    for c in HEADER.captures_iter(line) {
        let v = c.get(2).unwrap();
        let scheme_given = c.get(1).is_some();
        let class = if scheme_given { Class::Password } else { Class::Secret };
        if should_redact(class, v.as_bytes()) {
            out.push(Span { start: v.start(), end: v.end(), rule: "header" });
        }
    }
}

lazy_re!(COOKIE, r"(?i)\b(?:set-)?cookie[ \t]*:[ \t]*([^'\x22\r\n]+)");

fn cookie(line: &[u8], out: &mut Vec<Span>) {
    for c in COOKIE.captures_iter(line) {
        let m = c.get(1).unwrap();
        let mut at = m.start();
        for part in m.as_bytes().split(|&b| b == b';') {
            if let Some(eq) = part.iter().position(|&b| b == b'=') {
                let name = part[..eq].trim_ascii();
                let attr = String::from_utf8_lossy(name).to_ascii_lowercase();
                let v = &part[eq + 1..];
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

lazy_re!(PEM_BEGIN, r"-----BEGIN[A-Z0-9 ]{0,40} PRIVATE KEY(?: BLOCK)?-----");

fn is_b64_body(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=')
}

/// Does the PEM header at the end of this line open a block whose body follows on the
/// next lines? Used by the line-by-line state machine.
pub(crate) fn pem_opens_block(line: &[u8]) -> bool {
    let Some(m) = PEM_BEGIN.find_iter(line).last() else {
        return false;
    };
    let rest = line[m.end()..].trim_ascii();
    rest.is_empty() || rest == b"\\" || (rest.len() == 1 && matches!(rest[0], b'"' | b'\''))
}

/// A body line inside a PEM block: base64, or an RFC 1421 header (`Proc-Type: …`).
pub(crate) fn pem_body_line(line: &[u8]) -> bool {
    let t = line.trim_ascii();
    let t = t.strip_suffix(b"\\").unwrap_or(t).trim_ascii_end();
    !t.is_empty()
        && (t.iter().copied().all(is_b64_body)
            || [&b"Proc-Type:"[..], b"DEK-Info:", b"Comment:"].iter().any(|p| t.starts_with(p)))
}

/// A whole block on one line, the body written with literal `\n` or spaces.
fn pem_inline(line: &[u8], out: &mut Vec<Span>) {
    for m in PEM_BEGIN.find_iter(line) {
        let mut s = m.end();
        let end = memchr::memmem::find(&line[s..], b"-----END").map(|e| s + e);
        let limit = end.unwrap_or(line.len());
        // Skip the separator after the header: spaces, a literal `\n`, `\r\n`.
        loop {
            if line[s..limit].starts_with(b"\\n") || line[s..limit].starts_with(b"\\r") {
                s += 2;
            } else if s < limit && matches!(line[s], b' ' | b'\t') {
                s += 1;
            } else {
                break;
            }
        }
        // The body runs over base64, literal `\n`, spaces and RFC 1421 headers.
        let mut e = s;
        let mut b64 = 0;
        while e < limit {
            let b = line[e];
            if is_b64_body(b) {
                b64 += 1;
                e += 1;
            } else if matches!(b, b' ' | b'\t' | b':' | b',' | b'-') || b == b'\\' {
                e += 1;
            } else {
                break;
            }
        }
        // Trim a trailing separator so the END line keeps its `\n`.
        while e > s && matches!(line[e - 1], b' ' | b'\t' | b'\\' | b'n' | b'-') {
            if line[e - 1] == b'n' && !(e >= 2 + s && line[e - 2] == b'\\') {
                break;
            }
            e -= if line[e - 1] == b'n' { 2 } else { 1 };
        }
        if b64 >= 16 {
            out.push(Span { start: s, end: e, rule: "private-key" });
        }
    }
}

lazy_re!(AWS_PROMPT, r"Secret Access Key(?: \[[^\]]*\])?:[ \t]*([A-Za-z0-9/+=]{40})");

fn aws_prompt(line: &[u8], out: &mut Vec<Span>) {
    for c in AWS_PROMPT.captures_iter(line) {
        let m = c.get(1).unwrap();
        out.push(Span { start: m.start(), end: m.end(), rule: "aws-secret" });
    }
}

lazy_re!(NETRC, r"\bmachine[ \t]+\S+.*?\bpassword[ \t]+([^\s'\x22]+)");

// `.netrc` allows an entry over several lines, so a line can be only `password X`, or
// `login me password X`: the whole line, so that prose ("password reset") is left alone.
lazy_re!(NETRC_LINE, r"(?:^|[;:])[ \t]*(?:login[ \t]+\S+[ \t]+)?password[ \t]+([^\s'\x22=:]+)[ \t]*$");

fn netrc(line: &[u8], out: &mut Vec<Span>) {
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

fn php_define(line: &[u8], out: &mut Vec<Span>) {
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

// "the staging db password is X", "my API token: X". The value must look typed, not
// be a word: "the password is wrong" is a sentence, not a secret.
lazy_re!(
    PROSE,
    r"(?i)\b(?:password|passphrase|passwd|token|secret)\s+(?:is|was)\s+[`'\x22]?([^\s`'\x22]+?)[`'\x22]?[.,;:!)]?(?:\s|$)"
);

fn prose(line: &[u8], out: &mut Vec<Span>) {
    for c in PROSE.captures_iter(line) {
        let m = c.get(1).unwrap();
        if m.len() >= 6 && should_redact(Class::Password, m.as_bytes()) && looks_typed(m.as_bytes()) {
            out.push(Span { start: m.start(), end: m.end(), rule: "prose" });
        }
    }
}

/// A value someone typed or generated rather than a word of a sentence: it mixes
/// letters with digits or symbols, or has capitals after its first letter.
fn looks_typed(v: &[u8]) -> bool {
    // A sentence's own punctuation ("the password combination.") says nothing.
    let end = v.iter().rposition(|b| !b".,;:!?)".contains(b)).map_or(0, |i| i + 1);
    let v = &v[..end];
    let letters = v.iter().any(u8::is_ascii_alphabetic);
    let others = v.iter().any(|b| !b.is_ascii_alphabetic());
    let inner_caps = v.iter().skip(1).any(u8::is_ascii_uppercase) && v.iter().any(u8::is_ascii_lowercase);
    (letters && others) || inner_caps
}

/// Merges overlapping spans (the first one's rule wins) and keeps them on UTF-8
/// character boundaries, so that replacing them never splits a character.
pub(crate) fn merge(line: &[u8], mut spans: Vec<Span>) -> Vec<Span> {
    for s in &mut spans {
        while s.start > 0 && (line[s.start] & 0xC0) == 0x80 {
            s.start -= 1;
        }
        while s.end < line.len() && (line[s.end] & 0xC0) == 0x80 {
            s.end += 1;
        }
    }
    spans.retain(|s| s.start < s.end);
    spans.sort_by_key(|s| (s.start, std::cmp::Reverse(s.end)));
    let mut merged: Vec<Span> = Vec::with_capacity(spans.len());
    for s in spans {
        match merged.last_mut() {
            Some(last) if s.start < last.end => last.end = last.end.max(s.end),
            _ => merged.push(s),
        }
    }
    merged
}

/// Writes `line` with `spans` replaced by the marker; counts into `report`.
pub(crate) fn apply(line: &[u8], spans: &[Span], out: &mut Vec<u8>, report: &mut Report) {
    let mut at = 0;
    for s in spans {
        out.extend_from_slice(&line[at..s.start]);
        out.extend_from_slice(REDACTED.as_bytes());
        // A value that ran through a quote (`'word'more`) keeps its quotes after the
        // marker: dropping one would pair the next quote on the line with the wrong one,
        // and the rest of the line would read differently the next time round.
        out.extend(line[s.start..s.end].iter().filter(|b| matches!(b, b'\'' | b'"' | b'`')));
        at = s.end;
        report.count(s.rule);
    }
    out.extend_from_slice(&line[at..]);
}

/// Line-by-line state: inside a multi-line PEM block or not.
#[derive(Debug, Default)]
pub(crate) struct LineScanner {
    in_pem: bool,
    /// No body line of the current block seen yet.
    pem_first: bool,
    /// The command so far when the last line ended with a continuation `\`: the next
    /// line is read after it, so that `mysql -u root \` / `  -phunter2` is still mysql.
    carry: Vec<u8>,
}

/// Longest command kept as context for continuation lines.
const CARRY_MAX: usize = 4096;

impl LineScanner {
    /// Inside a multi-line PEM block or a command continued over lines, where lines
    /// without keywords matter too.
    pub fn in_block(&self) -> bool {
        self.in_pem || !self.carry.is_empty()
    }

    /// Redacts one line (with or without its line ending) into `out`. Returns whether
    /// anything changed.
    pub fn line(&mut self, line: &[u8], out: &mut Vec<u8>, report: &mut Report) -> bool {
        self.line_masked(line, None, out, report)
    }

    /// [`LineScanner::line`] with the prefilter's verdict on `line`, when known.
    pub fn line_masked(
        &mut self,
        line: &[u8],
        mask: Option<u128>,
        out: &mut Vec<u8>,
        report: &mut Report,
    ) -> bool {
        let body_len =
            line.len() - if line.ends_with(b"\r\n") { 2 } else { usize::from(line.ends_with(b"\n")) };
        let (body, eol) = line.split_at(body_len);
        // A continuation line's leading `-` is an option of the carried command, not a diff.
        let cut =
            if self.carry.is_empty() || !body.starts_with(b"-") { super::view::prefix(body) } else { 0 };
        let (view, body) = body.split_at(cut);
        if self.in_pem {
            let long_enough = !self.pem_first || body.trim_ascii().len() >= 16;
            if long_enough && pem_body_line(body) {
                if self.pem_first {
                    // One value per block, however many lines its body has.
                    report.count("private-key");
                    self.pem_first = false;
                }
                let indent = body.len() - body.trim_ascii_start().len();
                out.extend_from_slice(view);
                out.extend_from_slice(&body[..indent]);
                out.extend_from_slice(REDACTED.as_bytes());
                // A line-continuation backslash is shell syntax, not key material.
                if body.trim_ascii_end().ends_with(b"\\") {
                    out.extend_from_slice(b" \\");
                }
                out.extend_from_slice(eol);
                report.lines += 1;
                return true;
            }
            self.in_pem = false;
        }
        let continued = body.trim_ascii_end().ends_with(b"\\");
        let spans = if self.carry.is_empty() {
            match mask {
                Some(m) => find_spans_masked(body, m, 0),
                None => find_spans(body),
            }
        } else {
            // Read the line as the rest of the carried command, then keep only the spans
            // that fall on this line.
            let off = self.carry.len() + 1;
            self.carry.push(b' ');
            self.carry.extend_from_slice(body);
            let spans: Vec<Span> = find_spans(&self.carry)
                .into_iter()
                .filter(|s| s.end > off)
                .map(|s| Span { start: s.start.max(off) - off, end: s.end - off, rule: s.rule })
                .collect();
            self.carry.truncate(off - 1);
            spans
        };
        if continued && self.carry.len() + body.len() < CARRY_MAX {
            if !self.carry.is_empty() {
                self.carry.push(b' ');
            }
            let t = body.trim_ascii_end();
            self.carry.extend_from_slice(&t[..t.len() - 1]);
        } else {
            self.carry.clear();
        }
        if pem_opens_block(body) {
            self.in_pem = true;
            self.pem_first = true;
        }
        if spans.is_empty() {
            out.extend_from_slice(line);
            return false;
        }
        let spans = merge(body, spans);
        out.extend_from_slice(view);
        apply(body, &spans, out, report);
        out.extend_from_slice(eol);
        report.lines += 1;
        true
    }
}
