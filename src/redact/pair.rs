//! A secret's name and its value given as two keys of one entry, not as `name: value`:
//! Kubernetes' and ECS's `env` entries (`- name: DB_PASSWORD` then `value: …`),
//! CloudFormation parameters (`ParameterKey=DBPassword,ParameterValue=…`), Elastic
//! Beanstalk option settings (`"OptionName": …, "Value": …`) and the Terraform Kubernetes
//! provider's `env { name = … value = … }`.
//!
//! On one line (a flow mapping, compact JSON, a CLI argument) the entry is read here
//! whole. Over several lines, the naming key's line opens a [`Pair`], which the scanner
//! hands the lines below until the entry ends; the value key's line at the naming key's
//! column is the value's.
//!
//! Only a value after its name is read: every format above writes the name first.

use super::scan::Span;
use super::value::{Class, Form, name_class_strict, should_redact};

/// Keys whose value names the entry.
const NAMING: &[&[u8]] = &[b"name", b"Name", b"ParameterKey", b"OptionName"];
/// Keys whose value is the named thing's value.
const VALUE: &[&[u8]] = &[b"value", b"Value", b"ParameterValue"];

/// Lines followed after the naming key's: an entry is a few keys, and a name in prose or
/// a cut file must not reach far.
const MAX_LINES: usize = 8;

/// Blanks at most between a naming key's separator and the name: values aligned in a
/// column have a few. Bounded so that the gate, which walks back from every hit of a
/// secret's word, does not walk an indented line's whole indentation.
const MAX_GAP: usize = 8;

/// The rule's id, as the catalogue lists it.
const RULE: &str = "env-pair";

fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-')
}

fn blanks(text: &[u8]) -> usize {
    text.iter().take_while(|b| matches!(b, b' ' | b'\t')).count()
}

/// A quote at `text[at..]`: `"`, `'`, or `\"` as JSON inside a JSON string writes it;
/// its bytes.
fn quote_at(text: &[u8], at: usize) -> Option<&[u8]> {
    match text.get(at..)? {
        [b'\\', b'"', ..] => Some(&text[at..at + 2]),
        [b'"' | b'\'', ..] => Some(&text[at..at + 1]),
        _ => None,
    }
}

/// A key of `keys` at `at`, quoted or not, then blanks and `:` or `=`, then blanks: where
/// its value starts and the separator.
fn key_at(text: &[u8], at: usize, keys: &[&[u8]]) -> Option<(usize, u8)> {
    let quote = quote_at(text, at);
    let from = at + quote.map_or(0, <[u8]>::len);
    let key = keys.iter().find(|k| text[from..].starts_with(k))?;
    let mut i = from + key.len();
    if let Some(q) = quote {
        i += q.len() * usize::from(text[i..].starts_with(q));
        if !text[..i].ends_with(q) {
            return None;
        }
    } else if text.get(i).is_some_and(|b| is_name_byte(*b)) {
        return None;
    }
    i += blanks(&text[i..]);
    let sep = *text.get(i).filter(|b| matches!(b, b':' | b'='))?;
    i += 1;
    let gap = blanks(&text[i..]);
    // A name further from its naming key than the gate looks is not read as one.
    (gap <= MAX_GAP || keys != NAMING).then_some((i + gap, sep))
}

/// The name a naming key gives at `at` (quoted or not) and where it ends, quote included.
fn name_at(text: &[u8], at: usize) -> Option<(&[u8], usize)> {
    let quote = quote_at(text, at);
    let from = at + quote.map_or(0, <[u8]>::len);
    let len = text[from..].iter().take_while(|b| is_name_byte(**b)).count();
    let mut end = from + len;
    if let Some(q) = quote {
        end = end + q.len() * usize::from(text[end..].starts_with(q));
        if !text[..end].ends_with(q) {
            return None;
        }
    }
    (len > 0).then(|| (&text[from..from + len], end))
}

/// The class of a secret `name` names, as an environment variable's or a parameter's name.
/// `PASS` alone is a test's outcome (`{name: "PASS", value: "passed"}`, axe-core's
/// result groups) more often than a variable.
fn class_of(name: &[u8]) -> Option<Class> {
    if name.eq_ignore_ascii_case(b"pass") {
        return None;
    }
    name_class_strict(name, Form::Env)
}

/// The value at `at` (after a value key's separator `sep`): its span, quotes excluded.
/// A bare value after `=` ends at a blank (a command's next argument); after `:` at a
/// flow mapping's `,`, `}` or `]`, or a comment, less trailing blanks.
fn value_at(text: &[u8], at: usize, sep: u8) -> Option<(usize, usize)> {
    if let Some(q) = quote_at(text, at) {
        let from = at + q.len();
        let mut i = from;
        while i < text.len() {
            if text[i..].starts_with(q) {
                return Some((from, i));
            }
            // An escaped byte inside a double-quoted string (not when the quote is itself
            // written `\"`, whose content's escapes are a level deeper).
            i += if q == b"\"" && text[i] == b'\\' { 2 } else { 1 };
        }
        return None;
    }
    // A list or a mapping (`value: [{…}]`) is no secret's value; its own entries are read
    // on their own.
    if matches!(text.get(at), Some(b'[' | b'{' | b'(')) {
        return None;
    }
    let end = text[at..]
        .iter()
        .position(|&b| matches!(b, b',' | b'}' | b']') || (sep == b'=' && matches!(b, b' ' | b'\t')))
        .map_or(text.len(), |i| at + i);
    let mut v = &text[at..end];
    if let Some(c) = v.windows(2).position(|w| matches!(w[0], b' ' | b'\t') && w[1] == b'#') {
        v = &v[..c];
    }
    let v = v.trim_ascii_end();
    (!v.is_empty()).then_some((at, at + v.len()))
}

/// The span of the value at `at`, when it is a secret of `class`.
fn judged(text: &[u8], at: usize, sep: u8, class: Class) -> Option<Span> {
    let (start, end) = value_at(text, at, sep)?;
    should_redact(class, &text[start..end]).then_some(Span { start, end, rule: RULE })
}

/// Whether `at` may start a key: the line's start, or after a blank, a quote's
/// backslash, or a mapping's or list's punctuation.
fn key_starts(text: &[u8], at: usize) -> bool {
    at == 0 || matches!(text[at - 1], b' ' | b'\t' | b'{' | b',' | b'[' | b'\\')
}

/// Entries given on one line: `{name: DB_PASSWORD, value: X}`, `{"name":"DB_PASSWORD",
/// "value":"X"}`, `ParameterKey=DBPassword,ParameterValue=X`, `env { name = "A" value =
/// "X" }`.
pub(crate) fn spans(line: &[u8], out: &mut Vec<Span>) {
    for sep in memchr::memchr2_iter(b':', b'=', line) {
        // The naming key ends just before the separator, after blanks and a quote.
        let mut k = sep;
        k -= line[..k].iter().rev().take_while(|b| matches!(b, b' ' | b'\t')).count();
        // Every naming key ends with `e` or `y`: JSON and code have a colon or an equals
        // sign every few bytes, and most are turned away here.
        let last = line[..k].iter().rev().take(3).find(|b| !matches!(b, b'"' | b'\'' | b'\\'));
        if !matches!(last, Some(b'e' | b'y')) {
            continue;
        }
        let Some(key) = NAMING.iter().find_map(|key| {
            [0, 1, 2].into_iter().find_map(|q| {
                let end = k.checked_sub(q)?;
                let start = end.checked_sub(key.len())?;
                let quoted = quote_at(line, start.checked_sub(q)?).is_some_and(|qt| qt.len() == q);
                (line[start..end] == **key && (q == 0 || quoted)).then_some(start - q)
            })
        }) else {
            continue;
        };
        if !key_starts(line, key) {
            continue;
        }
        let Some((at, _)) = key_at(line, key, NAMING) else { continue };
        let Some((name, mut i)) = name_at(line, at) else { continue };
        let Some(class) = class_of(name) else { continue };
        // The rest of this entry: up to its end or the next entry's name.
        while i < line.len() && !matches!(line[i], b'{' | b'}' | b'[' | b']') {
            if key_starts(line, i) {
                if let Some((v, sep)) = key_at(line, i, VALUE) {
                    out.extend(judged(line, v, sep, class));
                    break;
                }
                if key_at(line, i, NAMING).is_some() {
                    break;
                }
            }
            i += 1;
        }
    }
}

/// An entry whose naming key's line names a secret and whose value is on a line below.
#[derive(Debug)]
pub(crate) struct Pair {
    /// Where the naming key starts, past the view's prefix: its entry's other keys start
    /// there too.
    column: usize,
    /// The naming key's line had a diff's sign before it: so does each of the entry's.
    sign: bool,
    class: Class,
    lines: usize,
}

/// What a line is to an open [`Pair`].
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Step {
    /// The value's line: its text starts at this byte.
    Value(usize, Class),
    /// Another line of the entry.
    Within,
    /// Past the entry.
    Ended,
}

/// A unified diff's sign, a context line's space or a list's dash before a line whose
/// view left at most one byte of prefix: set aside from the naming key's line and each
/// line after it alike, as `yaml.rs` does for a block's.
fn signed(line: &[u8], cut: usize) -> bool {
    cut <= 1 && matches!(line.first(), Some(b'+' | b'-' | b' '))
}

impl Pair {
    /// The entry `line` opens (`cut` the length of its view's prefix) when it is a naming
    /// key alone on its line, naming a secret: `- name: DB_PASSWORD`, `"name":
    /// "DB_PASSWORD",`, `name  = "DB_PASSWORD"`.
    pub(crate) fn opens(line: &[u8], cut: usize) -> Option<Pair> {
        let sign = signed(line, cut);
        let text = if sign { &line[1..] } else { &line[cut..] };
        let mut column = blanks(text);
        if text[column..].starts_with(b"- ") {
            column += 1 + blanks(&text[column + 1..]);
        }
        let (at, _) = key_at(text, column, NAMING)?;
        let (name, end) = name_at(text, at)?;
        let rest = &text[end..];
        let rest = rest.strip_prefix(b",").unwrap_or(rest).trim_ascii();
        if !(rest.is_empty() || rest.starts_with(b"#")) {
            return None;
        }
        let class = class_of(name)?;
        Some(Pair { column, sign, class, lines: 0 })
    }

    /// What `line` (its view's prefix `cut` bytes long) is to the entry.
    pub(crate) fn line(&mut self, line: &[u8], cut: usize) -> Step {
        self.lines += 1;
        if self.lines > MAX_LINES {
            return Step::Ended;
        }
        let at = if self.sign {
            if !matches!(line.first(), Some(b'+' | b'-' | b' ')) {
                return Step::Ended;
            }
            1
        } else {
            cut
        };
        let text = &line[at.min(line.len())..];
        if text.trim_ascii().is_empty() {
            return Step::Within;
        }
        let indent = blanks(text);
        match indent.cmp(&self.column) {
            std::cmp::Ordering::Less => Step::Ended,
            std::cmp::Ordering::Greater => Step::Within,
            std::cmp::Ordering::Equal if key_at(text, indent, VALUE).is_some() => Step::Value(at, self.class),
            std::cmp::Ordering::Equal if key_at(text, indent, NAMING).is_some() => Step::Ended,
            std::cmp::Ordering::Equal => Step::Within,
        }
    }
}

/// The value's span on the value key's line (`text` past its view's prefix).
pub(crate) fn value_line(text: &[u8], class: Class) -> Option<Span> {
    let indent = blanks(text);
    let (at, sep) = key_at(text, indent, VALUE)?;
    judged(text, at, sep, class)
}

/// Whether the name that starts at `from` (its opening quote included) is given by a
/// naming key: `name: `, `"name": `, `name = `, `ParameterKey=`, `\"name\":`. Part of the
/// name rules' gate (`gate.rs`), and a necessary condition of both readings above.
pub(crate) fn given_by_key(line: &[u8], from: usize) -> bool {
    // Most hits have a letter or a blank then a letter before them: turned away at once.
    let before = &line[from.saturating_sub(MAX_GAP + 1)..from];
    let Some(sep) = before.iter().rposition(|b| !matches!(b, b' ' | b'\t')) else {
        return false;
    };
    if !matches!(before[sep], b':' | b'=') {
        return false;
    }
    let mut i = from - (before.len() - sep);
    while i > 0 && matches!(line[i - 1], b' ' | b'\t') {
        i -= 1;
    }
    for _ in 0..2 {
        if i > 0 && matches!(line[i - 1], b'"' | b'\'' | b'\\') {
            i -= 1;
        }
    }
    NAMING.iter().any(|k| line[..i].ends_with(k) && (i == k.len() || !is_name_byte(line[i - k.len() - 1])))
}

/// Whether an entry named `name` holds a secret's value, as both readings judge it.
pub(crate) fn names_a_secret(name: &[u8]) -> bool {
    class_of(name).is_some()
}

/// Whether a JSON object's key names its entry (one of [`NAMING`], asked of every key of
/// every record: a `match` on the length first).
pub(crate) fn is_naming_key(key: &str) -> bool {
    matches!(key, "name" | "Name" | "ParameterKey" | "OptionName")
}

/// Whether a JSON object's key holds its entry's value (one of [`VALUE`]).
pub(crate) fn is_value_key(key: &str) -> bool {
    matches!(key, "value" | "Value" | "ParameterValue")
}

/// The class of the secret a naming key's JSON value (`"DB_PASSWORD"`, quotes
/// included) names.
pub(crate) fn named_class(literal: &[u8]) -> Option<Class> {
    let name = literal.strip_prefix(b"\"")?.strip_suffix(b"\"")?;
    name.iter().all(|b| is_name_byte(*b)).then(|| class_of(name)).flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_naming_key_ends_as_the_quick_test_expects() {
        assert!(NAMING.iter().all(|k| matches!(k.last(), Some(b'e' | b'y'))));
        // The JSON walker's tests are these lists.
        for k in NAMING {
            assert!(is_naming_key(std::str::from_utf8(k).unwrap()));
        }
        for k in VALUE {
            assert!(is_value_key(std::str::from_utf8(k).unwrap()));
        }
    }

    fn one_line(line: &str) -> Vec<&str> {
        let mut out = Vec::new();
        spans(line.as_bytes(), &mut out);
        out.iter().map(|s| &line[s.start..s.end]).collect()
    }

    #[test]
    fn entries_on_one_line() {
        for (line, want) in [
            ("env: [{name: DB_PASSWORD, value: Hx4k9Qw2}]", vec!["Hx4k9Qw2"]),
            ("- {name: DB_PASSWORD, value: two words here}", vec!["two words here"]),
            ("{\"name\": \"DB_PASSWORD\", \"value\": \"Hx4k9Qw2\"}", vec!["Hx4k9Qw2"]),
            (
                "[{\"name\":\"web\",\"environment\":[{\"name\":\"DB_PASSWORD\",\"value\":\"Hx\\\"4\"}]}]",
                vec!["Hx\\\"4"],
            ),
            ("{\\\"name\\\":\\\"DB_PASSWORD\\\",\\\"value\\\":\\\"Hx4k9Qw2\\\"}", vec!["Hx4k9Qw2"]),
            (
                "--parameters ParameterKey=DBUser,ParameterValue=app ParameterKey=DBPassword,ParameterValue=Hx4k9Qw2 --x",
                vec!["Hx4k9Qw2"],
            ),
            ("env { name = \"DB_PASSWORD\" value = \"Hx4k9Qw2\" }", vec!["Hx4k9Qw2"]),
            ("{\"OptionName\": \"DB_PASSWORD\", \"Value\": \"Hx4k9Qw2\"}", vec!["Hx4k9Qw2"]),
            ("{'name': 'DB_PASSWORD', 'type': 'secret', 'value': 'Hx4k9Qw2'}", vec!["Hx4k9Qw2"]),
            // Not a secret's value, or not this entry's.
            ("{name: DB_PASSWORD, valueFrom: {secretKeyRef: {name: db, key: password}}}", vec![]),
            ("- {name: DB_PASSWORD, value: $(DB_PASS)}", vec![]),
            ("{\"name\": \"DB_PASSWORD\", \"value\": \"\"}", vec![]),
            ("{\"name\": \"DB_PASSWORD_FILE\", \"value\": \"/run/secrets/db\"}", vec![]),
            ("{\"name\": \"API_TOKEN\"}, {\"name\": \"PORT\", \"value\": \"8080\"}", vec![]),
            ("ParameterKey=DBPassword,UsePreviousValue=true", vec![]),
            ("{\"name\": \"LOG_LEVEL\", \"value\": \"debug\"}", vec![]),
            ("{ name: 'password', value: password }", vec![]),
            ("filename: DB_PASSWORD, value: x", vec![]),
            ("{name:         DB_PASSWORD, value: Hx4k9Qw2}", vec![]),
            ("{name:        DB_PASSWORD, value:           Hx4k9Qw2}", vec!["Hx4k9Qw2"]),
            // From real JavaScript: axe-core's result groups, and forge's ASN.1 validators.
            ("{name:\"NA\",value:\"inapplicable\"},{name:\"PASS\",value:\"passed\",priority:1}", vec![]),
            (
                "{name:\"Certificate.TBSCertificate.signature\",constructed:!0,value:[{name:\"x.algorithm\"",
                vec![],
            ),
        ] {
            assert_eq!(one_line(line), want, "{line:?}");
        }
    }

    /// Each line of `text` handed to the state as the scanner does: the values found.
    fn over_lines(text: &str) -> Vec<String> {
        let mut pair: Option<Pair> = None;
        let mut found = Vec::new();
        for line in text.lines() {
            let b = line.as_bytes();
            if let Some(p) = &mut pair {
                match p.line(b, 0) {
                    Step::Value(at, class) => {
                        if let Some(s) = value_line(&b[at..], class) {
                            found.push(line[at + s.start..at + s.end].to_string());
                        }
                        pair = None;
                        continue;
                    }
                    Step::Within => continue,
                    Step::Ended => {}
                }
            }
            pair = Pair::opens(b, 0);
        }
        found
    }

    #[test]
    fn entries_over_lines() {
        for (text, want) in [
            ("env:\n- name: DB_PASSWORD\n  value: \"Hx4k9Qw2\"\n", vec!["Hx4k9Qw2"]),
            (
                "    - name: DB_PASSWORD # the app's\n      value: Hx4 k9Qw2 # set by hand\n",
                vec!["Hx4 k9Qw2"],
            ),
            ("{\n  \"name\": \"DB_PASSWORD\",\n  \"value\": \"Hx4k9Qw2\"\n}\n", vec!["Hx4k9Qw2"]),
            ("env {\n  name  = \"DB_PASSWORD\"\n  value = \"Hx4k9Qw2\"\n}\n", vec!["Hx4k9Qw2"]),
            (
                "{\n  \"OptionName\": \"API_TOKEN\",\n  \"Namespace\": \"aws:x\",\n  \"Value\": \"k9Qw2Hx4k9Qw2Hx4k9Qw2Hx4k9Qw2\"\n}",
                vec!["k9Qw2Hx4k9Qw2Hx4k9Qw2Hx4k9Qw2"],
            ),
            // The value of a nested key, another entry's, a reference, or past the entry.
            (
                "- name: DB_PASSWORD\n  valueFrom:\n    secretKeyRef:\n      name: db\n      value: x\n",
                vec![],
            ),
            ("- name: DB_PASSWORD\n- name: PORT\n  value: \"8080\"\n", vec![]),
            ("- name: DB_PASSWORD\n  value: $(DB_PASS)\n", vec![]),
            ("- name: DB_PASSWORD\nvalue: Hx4k9Qw2\n", vec![]),
            ("- name: password prompt\n  value: Hx4k9Qw2\n", vec![]),
            ("- name: DB_PASSWORD_FILE\n  value: secret.txt\n", vec![]),
        ] {
            assert_eq!(over_lines(text), want, "{text:?}");
        }
    }

    /// The name rules' gate passes every line either reading takes, and no line whose
    /// name no naming key gives.
    #[test]
    fn the_gate_holds_for_every_name_both_readings_take() {
        use super::super::gate::{Gate, LineFacts};
        let passes = |line: &str, word: &str| {
            let start = line.find(word).unwrap();
            Gate::Named.passes(line.as_bytes(), start, start + word.len(), &mut LineFacts::default())
        };
        // Each line, and the line or lines a reading takes it in.
        for (line, word, taken) in [
            ("- name: DB_PASSWORD", "PASS", "- name: DB_PASSWORD\n  value: Hx4k9Qw2"),
            (
                "  \"name\": \"DB_PASSWORD\",",
                "PASS",
                "  \"name\": \"DB_PASSWORD\",\n  \"value\": \"Hx4k9Qw2\"",
            ),
            ("name  = \"DB_PASSWORD\"", "PASS", "name  = \"DB_PASSWORD\"\nvalue = \"Hx4k9Qw2\""),
            ("{name: DB_PASSWORD, value: Hx4k9Qw2}", "PASS", ""),
            ("ParameterKey=DBPassword,ParameterValue=Hx4k9Qw2", "Pass", ""),
            ("{\\\"name\\\":\\\"DB_PASSWORD\\\",\\\"value\\\":\\\"Hx4k9Qw2\\\"}", "PASS", ""),
            ("{'OptionName': 'API_TOKEN', 'Value': 'k9Qw2Hx4k9Qw2Hx4k9Qw2Hx4'}", "TOKEN", ""),
        ] {
            assert!(passes(line, word), "{line:?}");
            let found = if taken.is_empty() { one_line(line).len() } else { over_lines(taken).len() };
            assert_eq!(found, 1, "{line:?}");
        }
        for line in ["the DB_PASSWORD", "filename: DB_PASSWORD", "name; DB_PASSWORD", "rename: DB_PASSWORD"] {
            assert!(!passes(line, "PASS"), "{line:?}");
        }
    }
}
