//! A secret's name and its value given as two keys of one entry, not as `name: value`:
//! Kubernetes' and ECS's `env` entries (`- name: DB_PASSWORD` then `value: …`),
//! CloudFormation parameters (`ParameterKey=DBPassword,ParameterValue=…`), Elastic
//! Beanstalk option settings (`"OptionName": …, "Value": …`, `option_name:`), the
//! Terraform Kubernetes provider's `env { name = … value = … }`, and a HAR file's or a
//! Postman export's header entries (`{"name": "Authorization", "value": "Bearer …"}`), a
//! Postman environment's variables (`{"key": "API_SECRET", "value": …}`) and .NET's
//! `<add key="SmtpPassword" value="…"/>`.
//!
//! On one line (a flow mapping, compact JSON, a CLI argument) the entry is read here
//! whole. Over several lines, the naming key's line opens a [`Pair`], which the scanner
//! hands the lines below until the entry ends; each value key's line at the naming key's
//! column is the value's (a diff shows the old one and the new one). What stands before
//! the naming key (a diff's sign, a comment's `#`, a list's dash, `terraform plan`'s
//! `+`/`~`) is read once, and each line below must have the same before its key.
//!
//! Only a value after its name is read: every format above writes the name first.

use super::span::Span;
use super::value::{Class, Form, name_class_strict, should_redact};
use super::yaml_syntax::{Tag, blanks};

/// Keys whose value names the entry.
/// Longest first: a key that ends another (`Key`, `ParameterKey`) must not be found in it.
const NAMING: &[&[u8]] = &[b"ParameterKey", b"OptionName", b"option_name", b"name", b"Name", b"key", b"Key"];
/// Keys whose value is the named thing's value (Azure Container Instances' `secureValue`
/// is a secret whatever its name).
const VALUE: &[&[u8]] = &[b"value", b"Value", b"ParameterValue", b"secureValue"];

/// Keys that hold the value of an object keyed by a secret's name: Terraform's
/// `output` (`value`) and `variable` (`default`) blocks, and their JSON.
const NESTED_VALUE: &[&[u8]] =
    &[b"value", b"Value", b"ParameterValue", b"secureValue", b"default", b"Default"];

/// An object or block opened on its line and keyed by a secret's name, nothing after its
/// brace: `"db_password": {`, `db_password = {`, `output "db_password" {`.
fn object_named(text: &[u8], at: usize) -> Option<Named> {
    let mut i = at;
    // HCL's block type before its label (`output`, `variable`).
    let word = text[i..].iter().take_while(|b| b.is_ascii_alphabetic()).count();
    let labelled = word > 0 && text.get(i + word) == Some(&b' ') && text.get(i + word + 1) == Some(&b'"');
    if labelled {
        i += word + 1;
    }
    let quote = quote_at(text, i).filter(|q| q.len() == 1).map(|q| q[0]);
    i += usize::from(quote.is_some());
    let start = i;
    i += text[i..].iter().take_while(|b| is_name_byte(**b)).count();
    let name = &text[start..i];
    if let Some(q) = quote {
        (text.get(i) == Some(&q)).then_some(())?;
        i += 1;
    }
    i += text[i..].iter().take_while(|b| is_blank(**b)).count();
    if !labelled {
        matches!(text.get(i), Some(b':' | b'=')).then_some(())?;
        i += 1;
        i += text[i..].iter().take_while(|b| is_blank(**b)).count();
    }
    (text.get(i) == Some(&b'{')).then_some(())?;
    let rest = text[i + 1..].trim_ascii();
    if !(rest.is_empty() || rest.starts_with(b"#") || rest.starts_with(b"//")) || name.is_empty() {
        return None;
    }
    named_by(name)
}

/// Lines followed after the naming key's: an entry is a few keys, and a name in prose or
/// a cut file must not reach far.
const MAX_LINES: usize = 12;

/// Blanks at most between a naming key's separator and the name: values aligned in a
/// column have a few. Bounded so that the gate, which walks back from every hit of a
/// secret's word, does not walk an indented line's whole indentation.
const MAX_GAP: usize = 8;

/// Bytes at most of a parameter's path before its last segment (`/web/prod/`): the engine
/// reads no longer path than the gate walks back.
const MAX_PATH: usize = 64;

/// XML that names a thing in one element and gives its value in the next, as Hadoop's
/// configuration (`<name>fs.s3a.secret.key</name>` then `<value>…</value>`), a property
/// list (`<key>ClientSecret</key>` then `<string>…</string>`) and a KeePass export
/// (`<Key>Password</Key>` then `<Value ProtectInMemory="True">…</Value>`) write it: the
/// naming element's tag, and the value element's.
const XML_PAIRS: &[(&[u8], &[u8])] = &[(b"name", b"value"), (b"key", b"string"), (b"Key", b"Value")];

/// Elements that hold the value of the element around them, when that one is named by a
/// secret's name: Windows' answer file (`<AdministratorPassword>` then `<Value>…</Value>`)
/// and Spring's beans (`<property name="password">` then `<value>…</value>`).
const XML_VALUES: &[&[u8]] = &[b"Value", b"value"];

/// An element opened alone on its line and named by a secret's name, by its tag or by a
/// `name` or `key` attribute: `<AdministratorPassword>`, `<property name="db.password">`.
fn element_named(text: &[u8], at: usize) -> Option<Named> {
    let rest = text.get(at..)?.strip_prefix(b"<")?;
    let tag = rest.iter().take_while(|b| is_name_byte(**b) || **b == b':').count();
    let gt = memchr::memchr(b'>', rest)?;
    if tag == 0 || gt < tag || rest[..gt].ends_with(b"/") || !rest[gt + 1..].trim_ascii().is_empty() {
        return None;
    }
    let attrs = &rest[tag..gt];
    let named = [&b" name=\""[..], b" key=\""].iter().find_map(|key| {
        let from = memchr::memmem::find(attrs, key)? + key.len();
        let len = memchr::memchr(b'"', &attrs[from..])?;
        Some(&attrs[from..from + len])
    });
    named_by(named.unwrap_or(&rest[..tag]))
}

/// The rule's id, as the catalogue lists it.
const RULE: &str = "env-pair";

fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-')
}

fn is_blank(b: u8) -> bool {
    matches!(b, b' ' | b'\t')
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

/// A key of `keys` at `at`, quoted or not, then blanks and `:` or `=`, then blanks.
struct Key {
    /// Where its value starts.
    value: usize,
    sep: u8,
    /// Blanks around the separator (`value = x`, as HCL and code write it; a command
    /// line's `ParameterValue=x` has none).
    spaced: bool,
}

fn key_at(text: &[u8], at: usize, keys: &[&[u8]]) -> Option<Key> {
    let quote = quote_at(text, at);
    // `Key` ends `ParameterKey`: a key is a name of its own.
    if quote.is_none() && at > 0 && is_name_byte(text[at - 1]) {
        return None;
    }
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
    let before = blanks(&text[i..]);
    i += before;
    let sep = *text.get(i).filter(|b| matches!(b, b':' | b'='))?;
    i += 1;
    let gap = blanks(&text[i..]);
    // A name further from its naming key than the gate looks is not read as one.
    (gap <= MAX_GAP || keys != NAMING).then_some(Key { value: i + gap, sep, spaced: before + gap > 0 })
}

/// The name a naming key gives at `at` (quoted or not), where it ends (its quote
/// included), and whether it was quoted. A parameter store's path (`/web/prod/DB_PASSWORD`,
/// as `aws ssm get-parameter` prints it) names what its last segment names.
fn name_at(text: &[u8], at: usize) -> Option<(&[u8], usize, bool)> {
    let quote = quote_at(text, at);
    let start = at + quote.map_or(0, <[u8]>::len);
    let mut from = start + text[start..].iter().take_while(|b| is_name_byte(**b) || **b == b'/').count();
    from -= text[..from].iter().rev().take_while(|b| is_name_byte(**b)).count();
    if from - start > MAX_PATH {
        return None;
    }
    let len = text[from..].iter().take_while(|b| is_name_byte(**b)).count();
    let mut end = from + len;
    if let Some(q) = quote {
        end += q.len() * usize::from(text[end..].starts_with(q));
        if !text[..end].ends_with(q) {
            return None;
        }
    }
    (len > 0).then(|| (&text[from..from + len], end, quote.is_some()))
}

/// What an entry's name says of its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Named {
    /// A secret of this class (`DB_PASSWORD`, `API_TOKEN`).
    Secret(Class),
    /// A header that carries credentials after a scheme (`Authorization`): its value is
    /// read as that header's line.
    Header,
}

/// What `name` names, as an environment variable's or a parameter's name, or a header
/// that carries credentials. `PASS` alone is a test's outcome (`{name: "PASS", value:
/// "passed"}`, axe-core's result groups) more often than a variable.
fn named_by(name: &[u8]) -> Option<Named> {
    if name.eq_ignore_ascii_case(b"pass") {
        return None;
    }
    if name.eq_ignore_ascii_case(b"authorization") || name.eq_ignore_ascii_case(b"proxy-authorization") {
        return Some(Named::Header);
    }
    name_class_strict(name, Form::Env).map(Named::Secret)
}

/// Where a value is read: on one line, among an entry's other keys (a flow mapping, JSON, a
/// command's argument), or alone on its key's line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Context {
    Flow,
    Block,
}

/// The end of a quoted value that starts at `from`, its closing quote `q` excluded: JSON's
/// and a shell's escapes in double quotes, YAML's doubled `''` in single ones, and, in JSON
/// inside a string (`\"…\"`), escapes one level deeper.
fn closing(text: &[u8], from: usize, q: &[u8]) -> Option<usize> {
    let mut i = from;
    while i < text.len() {
        if q == b"\\\"" && (text[i..].starts_with(b"\\\\\\\"") || text[i..].starts_with(b"\\\\\\\\")) {
            // `\\\"` and `\\\\`: an escaped quote and backslash of the string inside.
            i += 4;
        } else if q == b"\\\"" && text[i..].starts_with(b"\\\\") {
            i += 2;
        } else if text[i..].starts_with(q) {
            if q == b"'" && text.get(i + 1) == Some(&b'\'') {
                i += 2;
                continue;
            }
            return Some(i);
        } else {
            i += if q == b"\"" && text[i] == b'\\' { 2 } else { 1 };
        }
    }
    None
}

/// A bare value that is code, not a literal: an attribute path or a call (`var.db_password`,
/// `process.env.X`, `os.environ["X"]`, `get_secret("db")`). References and templates,
/// quoted or not, are the judgement's (`value::is_reference_or_placeholder`).
fn is_code(v: &[u8]) -> bool {
    let ident = |w: &[u8]| {
        !w.is_empty()
            && !w[0].is_ascii_digit()
            && w.iter().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'$'))
    };
    v.iter().any(|b| matches!(b, b'(' | b'[' | b'"' | b'\''))
        || (v.contains(&b'.') && v.split(|b| *b == b'.').all(ident))
}

/// The values a value key gives at `key`: their spans, quotes excluded. `terraform plan`
/// shows a change as `"old" -> "new"`: both. A bare value after `=` with blanks around
/// it (HCL, code) is an expression; one of a command's arguments (`ParameterValue=x`)
/// ends at a blank not escaped (`\ `, `\,`); one in a flow mapping at `,`, `}` or `]`;
/// one alone on its line at the line's end, less a comment.
fn values_at(text: &[u8], key: &Key, context: Context, name_quoted: bool) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut at = key.value;
    // A YAML tag: CloudFormation's `!Ref DbPassword` names another node; after `!!str`
    // or `!Sub` the value follows (`assign.rs` reads tags the same way).
    if text.get(at) == Some(&b'!') {
        let word = text[at..].iter().take_while(|b| !is_blank(**b)).count();
        match super::yaml_syntax::yaml_tag(&text[at..at + word]) {
            Tag::Reference => return out,
            Tag::Core | Tag::Literal => {
                at += word;
                at += blanks(&text[at..]);
            }
            Tag::Other => {}
        }
    }
    while let Some(q) = quote_at(text, at) {
        let from = at + q.len();
        let Some(end) = closing(text, from, q) else { break };
        out.push((from, end));
        let rest = &text[end + q.len()..];
        let arrow = blanks(rest);
        if !rest[arrow..].starts_with(b"->") {
            return out;
        }
        at = end + q.len() + arrow + 2;
        at += blanks(&text[at..]);
    }
    if !out.is_empty() || quote_at(text, at).is_some() {
        return out;
    }
    // Code writes a string's name quoted and a variable bare (`{"name": "X", "value":
    // db_password}`); YAML's flow mappings quote both or neither.
    if matches!(text.get(at), None | Some(b'[' | b'{' | b'(')) || key.sep == b'=' && key.spaced {
        return out;
    }
    if context == Context::Flow && name_quoted {
        return out;
    }
    let mut end = at;
    while end < text.len() {
        let b = text[end];
        if key.sep == b'=' && b == b'\\' {
            end += 2;
            continue;
        }
        let stop = match context {
            // A command's argument also ends where its quoting does (`"…,ParameterValue=X"`).
            Context::Flow => {
                matches!(b, b',' | b'}' | b']')
                    || key.sep == b'=' && (is_blank(b) || matches!(b, b'"' | b'\''))
            }
            Context::Block => b == b'#' && end > at && is_blank(text[end - 1]),
        };
        if stop {
            break;
        }
        end += 1;
    }
    let end = end.min(text.len());
    let v = text[at..end].trim_ascii_end();
    // A trailing comma after a bare value on its own line is code's (`value: password,`).
    let code = is_code(v) || context == Context::Block && v.ends_with(b",");
    if !v.is_empty() && !code {
        out.push((at, at + v.len()));
    }
    out
}

/// The value at `start..end` judged as `named` says: as a secret of its class, or as the
/// header's line it stands for, so the header rule keeps the scheme (`Bearer …`) and
/// judges the rest.
fn judge(text: &[u8], (start, end): (usize, usize), named: Named, out: &mut Vec<Span>) {
    const HEADER: &[u8] = b"Authorization: ";
    match named {
        Named::Secret(class) => {
            if should_redact(class, &text[start..end]) {
                out.push(Span { start, end, rule: RULE });
            }
        }
        Named::Header => {
            let line = [HEADER, &text[start..end]].concat();
            let mut found = Vec::new();
            super::web::header(&line, &mut found);
            out.extend(found.into_iter().filter(|s| s.start >= HEADER.len()).map(|s| Span {
                start: start + s.start - HEADER.len(),
                end: start + s.end - HEADER.len(),
                rule: RULE,
            }));
        }
    }
}

/// The spans of the values at `key` that are secrets as `named` says.
fn judged(text: &[u8], key: &Key, context: Context, name_quoted: bool, named: Named, out: &mut Vec<Span>) {
    for value in values_at(text, key, context, name_quoted) {
        judge(text, value, named, out);
    }
}

/// The content of the element `<tag>`…`</tag>` that starts at `at` (its opening tag may
/// have attributes): its span.
fn element_at(text: &[u8], at: usize, tag: &[u8]) -> Option<(usize, usize)> {
    let rest = text[at..].strip_prefix(b"<")?.strip_prefix(tag)?;
    let open = match rest.first()? {
        b'>' => 1,
        b' ' | b'\t' => memchr::memchr(b'>', rest).filter(|gt| rest[..*gt].last() != Some(&b'/'))? + 1,
        _ => return None,
    };
    let from = at + 1 + tag.len() + open;
    let close = [&b"</"[..], tag, b">"].concat();
    let len = memchr::memmem::find(&text[from..], &close)?;
    Some((from, from + len))
}

/// A value element's content at `at`, of whichever pair, judged as `named` says.
fn xml_value(text: &[u8], at: usize, named: Named, out: &mut Vec<Span>) {
    if let Some((start, end)) = XML_PAIRS.iter().find_map(|(_, value)| element_at(text, at, value)) {
        let v = &text[start..end];
        let lead = v.len() - v.trim_ascii_start().len();
        let (start, end) = (start + lead, start + v.trim_ascii_end().len());
        if start < end {
            judge(text, (start, end), named, out);
        }
    }
}

/// What a naming element at `at` names, where it ends, and its value element's tag.
fn xml_name(text: &[u8], at: usize) -> Option<(Named, usize, &'static [u8])> {
    let (tag, value) = XML_PAIRS.iter().find(|(tag, _)| text[at..].get(1..1 + tag.len()) == Some(tag))?;
    let (start, end) = element_at(text, at, tag)?;
    let name = &text[start..end];
    if name.is_empty() || !name.iter().all(|b| is_name_byte(*b)) {
        return None;
    }
    named_by(name).map(|named| (named, end + tag.len() + 3, *value))
}

/// Whether a naming element of any pair starts `text`.
fn names_element(text: &[u8]) -> bool {
    XML_PAIRS.iter().any(|(tag, _)| starts_element(text, tag))
}

/// Whether an element with this tag starts `text`.
fn starts_element(text: &[u8], tag: &[u8]) -> bool {
    text.strip_prefix(b"<")
        .and_then(|t| t.strip_prefix(tag))
        .is_some_and(|t| matches!(t.first(), Some(b'>' | b' ' | b'\t')))
}

/// Whether `at` may start a key: the line's start, or after a blank, a quote, a quote's
/// backslash, or a mapping's or list's punctuation.
fn key_starts(text: &[u8], at: usize) -> bool {
    at == 0 || matches!(text[at - 1], b' ' | b'\t' | b'{' | b',' | b'[' | b'\\' | b'"' | b'\'')
}

/// Entries given on one line: `{name: DB_PASSWORD, value: X}`, `{"name":"DB_PASSWORD",
/// "value":"X"}`, `ParameterKey=DBPassword,ParameterValue=X`, `env { name = "A" value =
/// "X" }`.
pub(crate) fn spans(line: &[u8], out: &mut Vec<Span>) {
    for at in memchr::memchr_iter(b'<', line) {
        let Some((class, after, value)) = xml_name(line, at) else { continue };
        let rest = &line[after..];
        // The value element before the next naming one.
        let mut lt = memchr::memchr_iter(b'<', rest).map(|i| (i, &rest[i..]));
        let found = lt.find(|(_, t)| starts_element(t, value) || names_element(t));
        if let Some((v, t)) = found
            && starts_element(t, value)
        {
            xml_value(line, after + v, class, out);
        }
    }
    for sep in memchr::memchr2_iter(b':', b'=', line) {
        // The naming key ends just before the separator, after blanks and a quote.
        let mut k = sep;
        k -= line[..k].iter().rev().take_while(|b| is_blank(**b)).count();
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
        let Some(naming) = key_at(line, key, NAMING) else { continue };
        let Some((name, mut i, quoted)) = name_at(line, naming.value) else { continue };
        let Some(class) = named_by(name) else { continue };
        // The rest of this entry: up to its end or the next entry's name. Each byte is
        // looked at once, and a key is tried only where one may start.
        while i < line.len() && !matches!(line[i], b'{' | b'}' | b'[' | b']') {
            if key_starts(line, i) && !is_blank(line[i]) {
                if let Some(value) = key_at(line, i, VALUE) {
                    judged(line, &value, Context::Flow, quoted, class, out);
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

/// What stands at one byte before an entry's keys, as its naming key's line has it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot {
    /// A blank: indentation.
    Blank,
    /// A unified diff's sign at the line's start, or a context line's blank: any of them.
    Sign,
    /// `terraform plan`'s action (`+`, `-`, `~`), or its absence: any of them or a blank.
    Action,
    /// A YAML list's dash before the naming key: a blank on the entry's other lines, a
    /// dash on the next entry's.
    Dash,
    /// A comment's `#` or `/`: the same on each of the entry's lines.
    Comment(u8),
    /// A mapping's `{` before the naming key: a blank on the entry's other lines.
    Open,
}

/// An entry whose naming key's line names a secret and whose value is on a line below.
#[derive(Debug)]
pub(crate) struct Pair {
    /// What stands before the naming key, byte by byte: its column is their count.
    before: Vec<Slot>,
    class: Named,
    /// Opened by a naming element: the value element's tag.
    xml: Option<&'static [u8]>,
    /// Opened by an object or block keyed by the secret's own name (`"db_password": {`,
    /// `variable "db_password" {`): its value keys stand deeper than that key.
    nested: bool,
    lines: usize,
}

/// What a line is to an open [`Pair`].
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Step {
    /// A value key's line: its key starts at this byte.
    Value(usize, Named),
    /// Another line of the entry.
    Within,
    /// Past the entry.
    Ended,
}

/// Where the text of a line starts: past its view's prefix, but a diff's sign is read as
/// one of the entry's slots.
fn text_start(cut: usize) -> usize {
    if cut <= 1 { 0 } else { cut }
}

impl Pair {
    /// The entry `line` opens (`cut` the length of its view's prefix) when it is a naming
    /// key alone on its line, naming a secret: `- name: DB_PASSWORD`, `"name":
    /// "DB_PASSWORD",`, `name  = "DB_PASSWORD"`, `# - name: …`, `+ name = …`.
    pub(crate) fn opens(line: &[u8], cut: usize) -> Option<Pair> {
        let text = &line[text_start(cut)..];
        let mut before = Vec::new();
        let mut i = 0;
        // A diff's sign, unless the line is a list's item at the first column.
        let item = text.starts_with(b"- ") && key_at(text, 2, NAMING).is_some();
        if cut <= 1 && matches!(text.first(), Some(b'+' | b'-' | b' ')) && !item {
            before.push(Slot::Sign);
            i = 1;
        }
        let mut comment = false;
        let mut action = None;
        loop {
            match text.get(i..)? {
                [b, ..] if is_blank(*b) => before.push(Slot::Blank),
                [b'#', ..] if !comment && action.is_none() => {
                    comment = true;
                    before.push(Slot::Comment(b'#'));
                }
                [b'/', b'/', ..] if !comment && action.is_none() => {
                    comment = true;
                    before.extend([Slot::Comment(b'/'); 2]);
                    i += 1;
                }
                [b'{', ..] => before.push(Slot::Open),
                [b @ (b'-' | b'+' | b'~'), b' ' | b'\t', ..] if action.is_none() => {
                    action = Some((*b, before.len()));
                    before.push(Slot::Action);
                }
                _ => break,
            }
            i += 1;
        }
        if let Some((class, after, value)) = xml_name(text, i) {
            return text[after..].trim_ascii().is_empty().then_some(Pair {
                before,
                class,
                xml: Some(value),
                nested: false,
                lines: 0,
            });
        }
        if let Some(class) = object_named(text, i) {
            return Some(Pair { before, class, xml: None, nested: true, lines: 0 });
        }
        if let Some(class) = element_named(text, i) {
            return Some(Pair { before, class, xml: Some(b"Value"), nested: true, lines: 0 });
        }
        let naming = key_at(text, i, NAMING)?;
        let (name, end, _) = name_at(text, naming.value)?;
        let rest = &text[end..];
        let rest = rest.strip_prefix(b",").unwrap_or(rest).trim_ascii();
        if !(rest.is_empty() || rest.starts_with(b"#")) {
            return None;
        }
        // In YAML (`name:`) a dash before the key is a list's; in HCL (`name =`) and
        // `terraform plan`'s output it is an action, as `+` and `~` are.
        if let Some((b'-', at)) = action
            && naming.sep == b':'
        {
            before[at] = Slot::Dash;
        }
        // `terraform plan` leaves its action's column blank on an unchanged line: the
        // entry's other keys may have one (`~ value = "old" -> "new"`).
        let n = before.len();
        if naming.sep == b'=' && action.is_none() && n >= 2 && before[n - 2..] == [Slot::Blank, Slot::Blank] {
            before[n - 2] = Slot::Action;
        }
        let class = named_by(name)?;
        Some(Pair { before, class, xml: None, nested: false, lines: 0 })
    }

    /// What `line` (its view's prefix `cut` bytes long) is to the entry.
    pub(crate) fn line(&mut self, line: &[u8], cut: usize) -> Step {
        self.lines += 1;
        if self.lines > MAX_LINES {
            return Step::Ended;
        }
        let start = text_start(cut).min(line.len());
        let text = &line[start..];
        if text.trim_ascii().is_empty() {
            return Step::Within;
        }
        for (i, slot) in self.before.iter().enumerate() {
            let Some(&b) = text.get(i) else {
                // Only what stands before the keys: a comment's or a diff's empty line.
                return Step::Within;
            };
            let fits = match slot {
                Slot::Blank => is_blank(b),
                Slot::Sign => matches!(b, b'+' | b'-' | b' '),
                Slot::Action => matches!(b, b'+' | b'-' | b'~' | b' ' | b'\t'),
                Slot::Dash | Slot::Open => is_blank(b),
                Slot::Comment(c) => b == *c,
            };
            if !fits {
                return Step::Ended;
            }
        }
        let column = self.before.len();
        if self.nested {
            // The object's own lines stand deeper; the first at its key's column (its
            // closing brace, the next key) ends it.
            let Some(at) = text.iter().skip(column).position(|b| !is_blank(*b)).map(|p| column + p) else {
                return Step::Within;
            };
            return match () {
                _ if at == column => Step::Ended,
                _ if self.xml.is_some() => match XML_VALUES.iter().any(|v| starts_element(&text[at..], v)) {
                    true => Step::Value(start + at, self.class),
                    false => Step::Within,
                },
                _ if key_at(text, at, NESTED_VALUE).is_some() => Step::Value(start + at, self.class),
                _ => Step::Within,
            };
        }
        match text.get(column) {
            None => Step::Within,
            Some(b) if is_blank(*b) => Step::Within,
            Some(_) if self.xml.is_some_and(|value| starts_element(&text[column..], value)) => {
                Step::Value(start + column, self.class)
            }
            Some(_) if self.xml.is_some() && names_element(&text[column..]) => Step::Ended,
            Some(_) if self.xml.is_some() => Step::Within,
            Some(_) if key_at(text, column, VALUE).is_some() => Step::Value(start + column, self.class),
            Some(_) if key_at(text, column, NAMING).is_some() => Step::Ended,
            Some(_) => Step::Within,
        }
    }
}

/// The values' spans on a value key's line (`text` from the key on).
pub(crate) fn value_line(text: &[u8], class: Named) -> Vec<Span> {
    let mut out = Vec::new();
    if let Some(key) = key_at(text, 0, NESTED_VALUE) {
        judged(text, &key, Context::Block, false, class, &mut out);
    } else {
        xml_value(text, 0, class, &mut out);
    }
    out
}

/// Whether a value key's line (`text` from the key on) opens a YAML block scalar (`value:
/// |`, `value: >-`), whose lines below are the value.
pub(crate) fn opens_block(text: &[u8]) -> bool {
    key_at(text, 0, VALUE).is_some_and(|key| {
        let v = &text[key.value..];
        let v = v.iter().position(|b| *b == b'#').map_or(v, |c| &v[..c]).trim_ascii();
        key.sep == b':' && super::yaml_syntax::is_style(v)
    })
}

/// When a value key's line (`text` from the key on) has nothing after its `:` but node
/// properties and a comment (`value:`, `value: !!str  # rotated`), its value is on the
/// lines below (`yaml.rs`): the key as the value is to be read after it, its tags kept.
pub(crate) fn opens_below(text: &[u8]) -> Option<Vec<u8>> {
    let key = key_at(text, 0, VALUE).filter(|key| key.sep == b':')?;
    let colon = text[..key.value].iter().rposition(|b| *b == b':')?;
    let mut read_as = text[..=colon].to_vec();
    read_as.extend(super::yaml_syntax::properties(text[colon + 1..].trim_ascii_end())?);
    Some(read_as)
}

/// Whether the name that starts at `from` (its opening quote included) is given by a
/// naming key: `name: `, `"name": `, `name = `, `ParameterKey=`, `\"name\":`. Part of the
/// name rules' gate (`gate.rs`), and a necessary condition of both readings above.
pub(crate) fn given_by_key(line: &[u8], from: usize) -> bool {
    if XML_PAIRS.iter().any(|(tag, _)| {
        line[..from].strip_suffix(b">").and_then(|l| l.strip_suffix(*tag)).is_some_and(|l| l.ends_with(b"<"))
    }) {
        return true;
    }
    // A path's earlier segments (`"/web/prod/DB_PASSWORD"`); a parameter store's names are
    // short, and paths are on every other line of a transcript.
    let mut from = from;
    if from > 0 && line[from - 1] == b'/' {
        let path = line[from.saturating_sub(MAX_PATH)..from]
            .iter()
            .rev()
            .take_while(|b| is_name_byte(**b) || **b == b'/')
            .count();
        from -= path;
        from -= line[..from].iter().rev().take(2).take_while(|b| matches!(b, b'"' | b'\'' | b'\\')).count();
    }
    // Most hits have a letter or a blank then a letter before them: turned away at once.
    let before = &line[from.saturating_sub(MAX_GAP + 1)..from];
    let Some(sep) = before.iter().rposition(|b| !is_blank(*b)) else {
        return false;
    };
    if !matches!(before[sep], b':' | b'=') {
        return false;
    }
    let mut i = from - (before.len() - sep);
    while i > 0 && is_blank(line[i - 1]) {
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
    named_by(name).is_some()
}

/// Whether a JSON object's key names its entry (one of [`NAMING`], asked of every key of
/// every record: a `match` on the length first).
pub(crate) fn is_naming_key(key: &str) -> bool {
    matches!(key, "name" | "Name" | "key" | "Key" | "ParameterKey" | "OptionName" | "option_name")
}

/// Whether a JSON object's key holds its entry's value (one of [`VALUE`]).
pub(crate) fn is_value_key(key: &str) -> bool {
    matches!(key, "value" | "Value" | "ParameterValue" | "secureValue")
}

/// What a naming key's JSON value (`"DB_PASSWORD"`, quotes included) names, if anything.
pub(crate) fn named(literal: &[u8]) -> Option<Named> {
    let name = literal.strip_prefix(b"\"")?.strip_suffix(b"\"")?;
    if !name.iter().all(|b| is_name_byte(*b)) {
        return None;
    }
    named_by(name)
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
            // An escaped quote one level deeper, inside the value.
            (
                "{\\\"name\\\":\\\"DB_PASSWORD\\\",\\\"value\\\":\\\"pa\\\\\\\"horse\\\"}",
                vec!["pa\\\\\\\"horse"],
            ),
            (
                "--parameters ParameterKey=DBUser,ParameterValue=app ParameterKey=DBPassword,ParameterValue=Hx4k9Qw2 --x",
                vec!["Hx4k9Qw2"],
            ),
            // The AWS CLI's escapes of a comma and a blank, and the item quoted whole.
            (
                "--parameters ParameterKey=DBPassword,ParameterValue=correct\\,horse\\ battery --x",
                vec!["correct\\,horse\\ battery"],
            ),
            ("--parameters \"ParameterKey=DBPassword,ParameterValue=Hx4k9Qw2\"", vec!["Hx4k9Qw2"]),
            ("env { name = \"DB_PASSWORD\" value = \"Hx4k9Qw2\" }", vec!["Hx4k9Qw2"]),
            ("{\"OptionName\": \"DB_PASSWORD\", \"Value\": \"Hx4k9Qw2\"}", vec!["Hx4k9Qw2"]),
            (
                "<property><name>javax.jdo.option.ConnectionPassword</name><value>Xy7pQ2mN9vB4</value></property>",
                vec!["Xy7pQ2mN9vB4"],
            ),
            ("<property><name>fs.s3a.endpoint</name><value>s3.amazonaws.com</value></property>", vec![]),
            ("<p><name>db.password</name></p><p><name>x</name><value>Xy7pQ2mN9vB4</value></p>", vec![]),
            ("{'name': 'DB_PASSWORD', 'type': 'secret', 'value': 'Hx4k9Qw2'}", vec!["Hx4k9Qw2"]),
            // A HAR file's or a Postman export's header: the credentials, not the scheme.
            (
                "{\"name\": \"Authorization\", \"value\": \"Bearer correcthorse-abcdef-123\"}",
                vec!["correcthorse-abcdef-123"],
            ),
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
            // Code and templates, not literals (a stranger's attack).
            ("{ name = \"DB_PASSWORD\", value = module.rds.rds_password }", vec![]),
            ("{ name: \"DB_PASSWORD\", value: process.env.DB_PASSWORD }", vec![]),
            ("form.append({name: \"password\", value: this.state.password});", vec![]),
            ("{\"name\": \"DB_PASSWORD\", \"value\": os.environ[\"DB_PASSWORD\"]}", vec![]),
            ("{\"name\": \"DB_PASSWORD\", \"value\": get_secret(\"db\")}", vec![]),
            ("{\"name\": \"DB_PASSWORD\", \"value\": db_password}", vec![]),
            ("<input name=\"password\" value=\"<?php echo htmlspecialchars($pw); ?>\">", vec![]),
            ("<input name=\"password\" value=\"<%= @user.password %>\">", vec![]),
            ("<input name=\"password\" value=\"@Model.Password\" />", vec![]),
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
                        for s in value_line(&b[at..], class) {
                            found.push(line[at + s.start..at + s.end].to_string());
                        }
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
            // A blank line between, and a value after eleven other keys.
            ("- name: DB_PASSWORD\n\n  value: Hx4k9Qw2\n", vec!["Hx4k9Qw2"]),
            (
                "- name: DB_PASSWORD\n  k1: a\n  k2: a\n  k3: a\n  k4: a\n  k5: a\n  k6: a\n  k7: a\n  k8: a\n  k9: a\n  k10: a\n  value: Hx4k9Qw2\n",
                vec!["Hx4k9Qw2"],
            ),
            // A diff that changes the value: the old one and the new one.
            (
                "         - name: DB_PASSWORD\n-          value: oldhorse\n+          value: newhorse\n",
                vec!["oldhorse", "newhorse"],
            ),
            (
                "   {\n     \"name\": \"DB_PASSWORD\",\n-    \"value\": \"oldhorse\"\n+    \"value\": \"newhorse\"\n   }\n",
                vec!["oldhorse", "newhorse"],
            ),
            // `terraform plan`: actions before the keys, and a change's two values.
            (
                "      + env {\n          + name  = \"DB_PASSWORD\"\n          + value = \"correcthorse\"\n        }\n",
                vec!["correcthorse"],
            ),
            (
                "      ~ env {\n            name  = \"DB_PASSWORD\"\n          ~ value = \"oldhorse\" -> \"newhorse\"\n        }\n",
                vec!["oldhorse", "newhorse"],
            ),
            // Commented out.
            (
                "        env:\n        # - name: DB_PASSWORD\n        #   value: correcthorse\n",
                vec!["correcthorse"],
            ),
            (
                "      #   {\n      #     name  = \"DB_PASSWORD\"\n      #     value = \"correcthorse\"\n      #   },\n",
                vec!["correcthorse"],
            ),
            ("// { name: 'DB_PASSWORD',\n//   value: 'correcthorse' }\n", vec!["correcthorse"]),
            // YAML's quoting and plain scalars in block style.
            ("- name: DB_PASSWORD\n  value: 'it''s a horse'\n", vec!["it''s a horse"]),
            ("- name: DB_PASSWORD\n  value: correct horse, battery}\n", vec!["correct horse, battery}"]),
            // Hadoop's configuration XML.
            (
                "  <property>\n    <name>fs.s3a.secret.key</name>\n    <value>wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ1x2b3c4d</value>\n  </property>\n",
                vec!["wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ1x2b3c4d"],
            ),
            (
                "<property>\n  <name>javax.jdo.option.ConnectionPassword</name>\n  <description>the metastore's</description>\n  <value>Xy7pQ2mN9vB4</value>\n</property>\n",
                vec!["Xy7pQ2mN9vB4"],
            ),
            (
                "<property>\n  <name>javax.jdo.option.ConnectionPassword</name>\n</property>\n<property>\n  <value>Xy7pQ2mN9vB4</value>\n",
                vec![],
            ),
            (
                "  <name>hive.server2.authentication.kerberos.keytab</name>\n  <value>/etc/hive.keytab</value>\n",
                vec![],
            ),
            // A stranger's second attack: compact JSON over lines, CloudFormation's list form.
            ("{\"name\":\"DB_PASSWORD\",\n \"value\":\"correcthorse\"}\n", vec!["correcthorse"]),
            (
                "Parameters:\n- ParameterKey: DBPassword\n  ParameterValue: Kp3mW9sLqT2zR\n",
                vec!["Kp3mW9sLqT2zR"],
            ),
            // References and tools' tokens, not values.
            ("- Name: DB_PASSWORD\n  Value: !Ref DbPassword\n", vec![]),
            ("- Name: DB_PASSWORD\n  Value: !!str Kp3mW9sLqT2zR\n", vec!["Kp3mW9sLqT2zR"]),
            (
                "{\n  \"name\": \"DB_PASSWORD\",\n  \"value\": \"[parameters('sqlAdminPassword')]\"\n}\n",
                vec![],
            ),
            ("- name: DB_PASSWORD\n  value: secretref:db-password\n", vec![]),
            ("- name: DB_PASSWORD\n  value: sm://project/db-password\n", vec![]),
            ("- name: DB_PASSWORD\n  value: file:///run/secrets/db\n", vec![]),
            ("- name: DB_PASSWORD\n  value: projects/p/secrets/db/versions/latest\n", vec![]),
            ("- name: DB_PASSWORD\n  value: '#{DbPassword}#'\n", vec![]),
            ("- name: DB_PASSWORD\n  value: '@@DB_PASSWORD@@'\n", vec![]),
            // `aws ssm get-parameter`'s output, and Azure Container Instances' `secureValue`.
            (
                "{\n    \"Parameter\": {\n        \"Name\": \"/web/prod/DB_PASSWORD\",\n        \"Type\": \"SecureString\",\n        \"Value\": \"correcthorse\",\n",
                vec!["correcthorse"],
            ),
            ("      - name: DB_PASSWORD\n        secureValue: correcthorse\n", vec!["correcthorse"]),
            // Elastic Beanstalk's `.ebextensions`.
            (
                "option_settings:\n  - namespace: aws:elasticbeanstalk:application:environment\n    option_name: DB_PASSWORD\n    value: correcthorse\n",
                vec!["correcthorse"],
            ),
            // The value of a nested key, another entry's, a reference, code, or past the entry.
            (
                "- name: DB_PASSWORD\n  valueFrom:\n    secretKeyRef:\n      name: db\n      value: x\n",
                vec![],
            ),
            ("- name: DB_PASSWORD\n- name: PORT\n  value: \"8080\"\n", vec![]),
            ("- name: DB_PASSWORD\n  value: $(DB_PASS)\n", vec![]),
            ("- name: DB_PASSWORD\nvalue: Hx4k9Qw2\n", vec![]),
            ("- name: password prompt\n  value: Hx4k9Qw2\n", vec![]),
            ("- name: DB_PASSWORD_FILE\n  value: secret.txt\n", vec![]),
            (
                "env:\n- name: DB_PASSWORD\n  valueFrom: {secretKeyRef: {name: db, key: pw}}\n- value: info\n  name: LOG_LEVEL\n",
                vec![],
            ),
            ("- name: REDIS_PASSWORD\n  valueFrom: {}\n- image: nginx\n  value: info\n", vec![]),
            ("      name  = \"DB_PASSWORD\"\n      value = var.rds_db_password\n", vec![]),
            ("      name  = \"DB_PASSWORD\"\n      value = random_password.db_password.result\n", vec![]),
            ("- name: DB_PASSWORD\n  value: <path:secret/data/db#password>\n", vec![]),
            ("{\n  name: 'DB_PASSWORD',\n  value: password,\n}\n", vec![]),
            ("# - name: DB_PASSWORD\nvalue: Hx4k9Qw2\n", vec![]),
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
            ("  option_name: DB_PASSWORD", "PASS", "  option_name: DB_PASSWORD\n  value: Hx4k9Qw2"),
            ("{name: DB_PASSWORD, value: Hx4k9Qw2}", "PASS", ""),
            ("ParameterKey=DBPassword,ParameterValue=Hx4k9Qw2", "Pass", ""),
            ("{\\\"name\\\":\\\"DB_PASSWORD\\\",\\\"value\\\":\\\"Hx4k9Qw2\\\"}", "PASS", ""),
            ("{'OptionName': 'API_TOKEN', 'Value': 'k9Qw2Hx4k9Qw2Hx4k9Qw2Hx4'}", "TOKEN", ""),
            ("{\"name\": \"Authorization\", \"value\": \"Bearer k9Qw2Hx4k9Qw2\"}", "Auth", ""),
            ("{\"Name\": \"/web/prod/DB_PASSWORD\", \"Value\": \"Hx4k9Qw2\"}", "PASS", ""),
            ("<name>javax.jdo.option.ConnectionPassword</name><value>Xy7pQ2mN9vB4</value>", "Pass", ""),
            (
                "  <name>db.password</name>",
                "pass",
                "  <name>db.password</name>\n  <value>Xy7pQ2mN9vB4</value>",
            ),
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

#[cfg(test)]
mod xml_tests {
    /// An element named by a secret holds its value in a `<Value>` inside, over several
    /// lines (Windows' answer file, Spring's beans) or on one; a placeholder, an empty
    /// value and an element that names no secret stay.
    #[test]
    fn a_value_element_inside_an_element_named_by_a_secret_is_its_value() {
        let unattend = "<UserAccounts>\n  <AdministratorPassword>\n    <Value>kestrel-harbor-orbit-otter60</Value>\n    <PlainText>true</PlainText>\n  </AdministratorPassword>\n  <Name>labadmin</Name>\n  <DisplayName>\n    <Value>Lab admin account</Value>\n  </DisplayName>\n</UserAccounts>\n";
        let spring = "<bean id=\"ds\">\n  <property name=\"password\">\n    <value>Hx4pZ7qLm2Wc</value>\n  </property>\n  <property name=\"url\">\n    <value>jdbc:h2:mem:test</value>\n  </property>\n</bean>\n";
        let one_line = "<Password><Value>Kestrel.Orbit6344</Value><PlainText>true</PlainText></Password>\n";
        let attribute = "<property name=\"password\"><value>hivepw123</value></property><property name=\"url\"><value>jdbc:h2</value></property>\n";
        for (text, secret, kept) in [
            (unattend, "kestrel-harbor-orbit-otter60", "<Value>Lab admin account</Value>"),
            (spring, "Hx4pZ7qLm2Wc", "<value>jdbc:h2:mem:test</value>"),
            (one_line, "Kestrel.Orbit6344", "<PlainText>true</PlainText>"),
            (attribute, "hivepw123", "<value>jdbc:h2</value>"),
        ] {
            let numbered: String =
                text.lines().enumerate().map(|(n, l)| format!("{:>6}\t{l}\n", n + 1)).collect();
            for t in [text.to_string(), numbered] {
                let out = crate::redact::redact(&t);
                assert!(!out.contains(secret) && out.contains(kept), "{out}");
            }
        }
        for kept in [
            "<AdministratorPassword>\n  <Value>*SENSITIVE*DATA*DELETED*</Value>\n</AdministratorPassword>\n",
            "<Password>\n  <Value></Value>\n</Password>\n",
            "<PasswordPolicy>\n  <Value>MinimumLength12</Value>\n</PasswordPolicy>\n",
            "<Password><Value>${ADMIN_PASSWORD}</Value></Password>\n",
        ] {
            assert_eq!(crate::redact::redact(kept), kept);
        }
    }

    /// A property list's `<key>`/`<string>` and a KeePass export's `<Key>`/`<Value>` (with
    /// attributes) name a secret and give it as Hadoop's `<name>`/`<value>` do, on one line
    /// or over several, in a view too.
    #[test]
    fn xml_naming_and_value_elements_of_every_pair() {
        let plist = "<dict>\n\t<key>CFBundleName</key>\n\t<string>Acme</string>\n\t<key>BackendClientSecret</key>\n\t<string>S45zIqkSF06zGEKAkAmU59uZkK7sAL2cJS3JiAPb</string>\n</dict>\n";
        let keepass = "\t<String>\n\t\t<Key>Title</Key>\n\t\t<Value>Router admin</Value>\n\t</String>\n\t<String>\n\t\t<Key>Password</Key>\n\t\t<Value ProtectInMemory=\"True\">Sequoia%Pixel4292</Value>\n\t</String>\n";
        let one_line = "<String><Key>Password</Key><Value>Sequoia%Pixel4292</Value></String>\n";
        for (text, secret, kept) in [
            (plist, "S45zIqkSF06zGEKAkAmU59uZkK7sAL2cJS3JiAPb", "<string>Acme</string>"),
            (keepass, "Sequoia%Pixel4292", "<Value>Router admin</Value>"),
            (one_line, "Sequoia%Pixel4292", "<Key>Password</Key>"),
        ] {
            let numbered: String =
                text.lines().enumerate().map(|(n, l)| format!("{:>6}\t{l}\n", n + 1)).collect();
            for t in [text.to_string(), numbered] {
                let out = crate::redact::redact(&t);
                assert!(!out.contains(secret) && out.contains(kept), "{out}");
            }
        }
    }
}
