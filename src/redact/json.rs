//! Redacting the strings of one JSON text where they lie, without building a tree.
//!
//! Every Claude Code transcript line names its session (`"sessionId"`), so nearly every
//! line holds a keyword and cannot be waved through whole. Parsing each line into a
//! `serde_json::Value`, scanning every string again and writing the tree back cost more
//! than the redaction itself. This walks the bytes once, checking the grammar as it goes,
//! scans each string once, and splices in only the strings that change: the rest of the
//! line, escapes included, is kept byte for byte.
//!
//! Transcripts repeat themselves: a tool's output is in the message and again in
//! `toolUseResult`, and the same file is read again and again. Long strings are
//! remembered per thread with what redacting them did, so a repeat costs a checksum and a
//! comparison instead of a scan.

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};

use super::below::Named;
use super::find::{NotJson, decode_to_quote};
use super::heredoc::FileSyntax;
use super::link::Links;
use super::memo::Memo;
use super::pair;
use super::report::Report;
use super::scan::{self, LineScanner};
use super::value::{self, Class, Form};
use crate::lok::REDACTED;

/// Nesting deeper than this is refused, as serde_json refuses it.
const MAX_DEPTH: usize = 128;

/// Keys whose string values are integrity tags, not credentials: Claude Code keeps the
/// API's `signature` on every thinking block, and a resumed conversation is rejected if it
/// is altered. Their values are still scanned as text, but in a thinking block's own.
const INTEGRITY_KEYS: &[&str] = &["signature", "sig"];

/// The API's own opaque values in a content block of this type: a thinking block's
/// `signature` and a redacted thinking block's encrypted `data`. Nothing a user wrote is in
/// them and they must come back byte for byte, so they are not read at all (a twentieth
/// of a real transcript's bytes).
fn opaque(block_type: &[u8], key: &str) -> bool {
    matches!((block_type, key), (b"\"thinking\"", "signature") | (b"\"redacted_thinking\"", "data"))
}

/// Keys whose value is an HTTP credential with its scheme (`Bearer …`, `Basic …`).
const AUTH_HEADERS: &[&str] = &["authorization", "proxy-authorization"];

/// One of [`AUTH_HEADERS`], in any case. Asked of every string value's key: the lengths
/// turn nearly all away before any comparison.
fn is_auth_header(name: &str) -> bool {
    AUTH_HEADERS.iter().any(|h| h.len() == name.len() && name.eq_ignore_ascii_case(h))
}

/// JSON inside a string is read as JSON this many levels deep; deeper, as text.
const MAX_NESTING: u8 = 4;

/// Redacts every string of the JSON text `line` (keys as text; values as text and with
/// their key as context). `Ok(None)` when nothing changed; counts go to `report`.
pub(crate) fn redact_strings(line: &str, report: &mut Report) -> Result<Option<String>, NotJson> {
    redact_nested(line, report, 0, None)
}

/// [`redact_strings`] for a record of a transcript whose earlier tool calls are `links`:
/// the output of a call whose command named a secret is read as that command's output
/// (`link.rs`).
pub(crate) fn redact_strings_linked(
    line: &str,
    links: &Links,
    report: &mut Report,
) -> Result<Option<String>, NotJson> {
    redact_nested(line, report, 0, Some(links))
}

/// [`redact_strings`] for JSON found `nesting` strings deep.
///
/// A record that shows a key file by its path (Claude Code's `Read` result holds
/// `toolUseResult.file.filePath` beside the numbered view and the content) is read again
/// with every string taken as that file's lines, since a `.pgpass` line holds no keyword.
/// The path comes after the view in the record, so it is known only after a first walk.
fn redact_nested(
    line: &str,
    report: &mut Report,
    nesting: u8,
    links: Option<&Links>,
) -> Result<Option<String>, NotJson> {
    let mut local = Report::default();
    let (walked, shows) = walk(line, &mut local, nesting, None, links);
    let walked = match shows {
        Some(syntax) if walked.is_ok() => {
            local = Report::default();
            walk(line, &mut local, nesting, Some(syntax), links).0
        }
        _ => walked,
    };
    report.merge(&local);
    walked
}

/// One walk of `line`; also the key file a path in it names, if any.
fn walk(
    line: &str,
    report: &mut Report,
    nesting: u8,
    shown: Option<FileSyntax>,
    links: Option<&Links>,
) -> (Result<Option<String>, NotJson>, Option<FileSyntax>) {
    let decoded = DECODED.take();
    // Known calls are looked for only in a record that names one's id.
    let links = links.filter(|l| !l.is_empty());
    let record_output = links.and_then(|l| l.of_record(line.as_bytes()));
    let mut w = Walker {
        line,
        b: line.as_bytes(),
        pos: 0,
        out: None,
        copied: 0,
        report,
        decoded,
        nesting,
        shown,
        shows: None,
        links,
        record_output,
        output: None,
    };
    let walked = w.walk();
    DECODED.set(std::mem::take(&mut w.decoded));
    let shows = w.shows;
    if let Err(e) = walked {
        return (Err(e), shows);
    }
    let Some(mut out) = w.out else { return (Ok(None), shows) };
    out.extend_from_slice(&w.b[w.copied..]);
    // Replacements are whole strings, valid UTF-8 each; the lossy path is never taken.
    let out = String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
    (Ok(Some(out)), shows)
}

/// A string literal: `start..end` includes its quotes.
struct Literal {
    start: usize,
    end: usize,
    /// Holds a backslash escape, so its text is read decoded (in the walker's `decoded`):
    /// an escape can spell a keyword's letters (`\u0070assword`, `https:\/\/`).
    escaped: bool,
}

struct Walker<'a, 'r> {
    line: &'a str,
    b: &'a [u8],
    pos: usize,
    /// The line so far, once something changed.
    out: Option<Vec<u8>>,
    /// Bytes of the line up to here are in `out`.
    copied: usize,
    report: &'r mut Report,
    /// The text of the last literal read, when it has escapes: decoded while its end
    /// was looked for, not in a second pass.
    decoded: Vec<u8>,
    /// How many strings deep this JSON text is.
    nesting: u8,
    /// Every string is read as this key file's lines: the record shows one.
    shown: Option<FileSyntax>,
    /// A key file that a path in the record names (`"filePath": "…/.pgpass"`).
    shows: Option<FileSyntax>,
    /// The transcript's tool calls whose commands named a secret, when the record holds
    /// a result of one.
    links: Option<&'r Links>,
    /// What the call whose result the record holds said of its output: the context of
    /// `toolUseResult.stdout` and of a result block whose id comes after its content.
    record_output: Option<Named>,
    /// Inside a call's result whose command named a secret: its text is that command's
    /// output.
    output: Option<Named>,
}

impl<'a> Walker<'a, '_> {
    /// The whole line as one JSON value, or as objects and arrays one after another: two
    /// records written without a newline between them (`{…}{…}`), which transcripts hold
    /// where two writes met. Read as text, their escapes would hide names and values.
    fn walk(&mut self) -> Result<(), NotJson> {
        self.ws();
        self.value(0, None)?;
        self.ws();
        while let Some(b'{' | b'[') = self.b.get(self.pos) {
            self.value(0, None)?;
            self.ws();
        }
        if self.pos != self.b.len() {
            return Err(NotJson);
        }
        Ok(())
    }

    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.b.get(self.pos) {
            self.pos += 1;
        }
    }

    fn expect(&mut self, byte: u8) -> Result<(), NotJson> {
        if self.b.get(self.pos) != Some(&byte) {
            return Err(NotJson);
        }
        self.pos += 1;
        Ok(())
    }

    fn value(&mut self, depth: usize, key: Option<(&str, Option<Class>)>) -> Result<(), NotJson> {
        match self.b.get(self.pos).ok_or(NotJson)? {
            b'{' => self.object(depth + 1),
            b'[' if key.is_some_and(|(name, _)| name == "lines") => self.lines(depth + 1),
            b'[' => self.array(depth + 1),
            b'"' => {
                let lit = self.literal()?;
                self.string_value(&lit, key)
            }
            b't' => self.word(b"true"),
            b'f' => self.word(b"false"),
            b'n' => self.word(b"null"),
            b'-' | b'0'..=b'9' => self.number(),
            _ => Err(NotJson),
        }
    }

    fn object(&mut self, depth: usize) -> Result<(), NotJson> {
        if depth > MAX_DEPTH {
            return Err(NotJson);
        }
        self.pos += 1;
        self.ws();
        if self.b.get(self.pos) == Some(&b'}') {
            self.pos += 1;
            return Ok(());
        }
        // The class of the secret this entry's naming key names (`{"name": "DB_PASSWORD",
        // "value": …}`, `pair.rs`): its value key's value is judged as that secret's.
        let mut named = None;
        // This object's `"type"`, as written, when it came first (as the API writes it).
        let mut block_type: &[u8] = b"";
        // A tool result's `"tool_use_id"`, when this object has one: what its call's
        // command said of the output.
        let mut result_of: Option<Option<Named>> = None;
        loop {
            self.ws();
            if self.b.get(self.pos) != Some(&b'"') {
                return Err(NotJson);
            }
            let key = self.literal()?;
            let name = self.decode(&key)?;
            let known = if key.escaped { None } else { known_key(&name) };
            // A key is text like any other: a token used as a key is still a token.
            if !known.is_some_and(|k| k.clean) {
                self.text(&key)?;
            }
            let class = match known {
                Some(k) => k.class,
                None => value::name_class(name.as_bytes(), Form::Colon),
            };
            // A header entry's value is read as that header's line (`is_auth_header`).
            let (name, class) = match named {
                Some(pair::Named::Secret(named)) if pair::is_value_key(&name) => {
                    (name, class.or(Some(named)))
                }
                Some(pair::Named::Header) if pair::is_value_key(&name) => {
                    (Cow::Borrowed("Authorization"), None)
                }
                _ => (name, class),
            };
            self.ws();
            self.expect(b':')?;
            self.ws();
            let start = self.pos;
            if !block_type.is_empty() && self.b.get(start) == Some(&b'"') && opaque(block_type, &name) {
                self.literal()?;
            } else if self.links.is_some()
                && let Some(output) = self.output_under(&name, block_type, &result_of)
            {
                let outer = self.output.replace(output);
                let walked = self.value(depth, Some((&name, class)));
                self.output = outer;
                walked?;
            } else {
                self.value(depth, Some((&name, class)))?;
            }
            if let Some(links) = self.links
                && name == "tool_use_id"
            {
                let id = &self.b[start..self.pos];
                let id = id.strip_prefix(b"\"").and_then(|i| i.strip_suffix(b"\"")).unwrap_or_default();
                result_of = Some(std::str::from_utf8(id).ok().and_then(|id| links.get(id)).cloned());
            }
            if name == "type" {
                block_type = &self.b[start..self.pos];
            }
            if pair::is_naming_key(&name) {
                named = pair::named(&self.b[start..self.pos]);
            }
            self.ws();
            match self.b.get(self.pos) {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(());
                }
                _ => return Err(NotJson),
            }
        }
    }

    /// What the value under `key` of an object is the output of, in a record that holds
    /// a result of a known call: a result block's `content` (its id before it, as the API
    /// writes it, else the record's one call), and `toolUseResult.stdout`.
    fn output_under(&self, key: &str, block_type: &[u8], result_of: &Option<Option<Named>>) -> Option<Named> {
        match (key, result_of) {
            ("content", Some(named)) => named.clone(),
            ("content", None) if block_type == b"\"tool_result\"" => self.record_output.clone(),
            ("stdout", _) => self.record_output.clone(),
            _ => None,
        }
    }

    fn array(&mut self, depth: usize) -> Result<(), NotJson> {
        if depth > MAX_DEPTH {
            return Err(NotJson);
        }
        self.pos += 1;
        self.ws();
        if self.b.get(self.pos) == Some(&b']') {
            self.pos += 1;
            return Ok(());
        }
        loop {
            self.ws();
            self.value(depth, None)?;
            self.ws();
            match self.b.get(self.pos) {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(());
                }
                _ => return Err(NotJson),
            }
        }
    }

    /// An array of strings under `"lines"` (Claude Code's `structuredPatch`, a diff's
    /// hunk a line a string) read as the one text they are: a name on one line and its
    /// value on the next (`- name: DB_PASSWORD` / `+  value: …`), a YAML block or a key's
    /// body, are only seen together. Any other array is read as arrays are.
    fn lines(&mut self, depth: usize) -> Result<(), NotJson> {
        if depth > MAX_DEPTH {
            return Err(NotJson);
        }
        let open = self.pos;
        let mut lits = Vec::new();
        let mut texts: Vec<String> = Vec::new();
        self.pos += 1;
        self.ws();
        let mut more = self.b.get(self.pos) != Some(&b']');
        if !more {
            self.pos += 1;
        }
        while more {
            self.ws();
            if self.b.get(self.pos) != Some(&b'"') {
                self.pos = open;
                return self.array(depth);
            }
            let lit = self.literal()?;
            texts.push(self.decode(&lit)?.into_owned());
            lits.push(lit);
            self.ws();
            match self.b.get(self.pos) {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    more = false;
                }
                _ => return Err(NotJson),
            }
        }
        // A string holding a line ending could not be mapped back: each is read alone.
        if texts.iter().any(|t| t.contains('\n')) {
            self.pos = open;
            return self.array(depth);
        }
        let joined = texts.join("\n");
        let mut counts = Report::default();
        let redacted = match self.shown {
            Some(syntax) => super::text::redact_shown(joined.as_bytes(), syntax, &mut counts),
            None => super::text::redact_bytes(joined.as_bytes(), &mut counts),
        };
        let Some(redacted) = redacted else { return Ok(()) };
        let redacted = String::from_utf8(redacted).map_err(|_| NotJson)?;
        let parts: Vec<&str> = redacted.split('\n').collect();
        // Redaction keeps every line ending; were one lost, each string is read alone.
        if parts.len() != texts.len() {
            self.pos = open;
            return self.array(depth);
        }
        for ((lit, text), part) in lits.iter().zip(&texts).zip(parts) {
            if part != text {
                let quoted = serde_json::to_string(part).map_err(|_| NotJson)?;
                self.replace(lit, quoted.as_bytes());
            }
        }
        self.report.merge(&counts);
        Ok(())
    }

    fn word(&mut self, word: &[u8]) -> Result<(), NotJson> {
        if !self.b[self.pos..].starts_with(word) {
            return Err(NotJson);
        }
        self.pos += word.len();
        Ok(())
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`
    fn number(&mut self) -> Result<(), NotJson> {
        if self.b[self.pos] == b'-' {
            self.pos += 1;
        }
        match self.b.get(self.pos) {
            Some(b'0') => self.pos += 1,
            Some(b'1'..=b'9') => self.digits(),
            _ => return Err(NotJson),
        }
        if self.b.get(self.pos) == Some(&b'.') {
            self.pos += 1;
            self.some_digits()?;
        }
        if let Some(b'e' | b'E') = self.b.get(self.pos) {
            self.pos += 1;
            if let Some(b'+' | b'-') = self.b.get(self.pos) {
                self.pos += 1;
            }
            self.some_digits()?;
        }
        Ok(())
    }

    fn digits(&mut self) {
        while self.b.get(self.pos).is_some_and(u8::is_ascii_digit) {
            self.pos += 1;
        }
    }

    fn some_digits(&mut self) -> Result<(), NotJson> {
        let from = self.pos;
        self.digits();
        if self.pos == from { Err(NotJson) } else { Ok(()) }
    }

    /// The string literal at `pos`, escapes checked; `pos` moves past it. One with escapes
    /// is decoded into `decoded` on the way: most of a transcript's text is in such
    /// literals, and finding their end and then decoding them read each twice. Inlined:
    /// returned through memory, its fields were read back before their stores had landed.
    #[inline(always)]
    fn literal(&mut self) -> Result<Literal, NotJson> {
        let start = self.pos;
        let first = start + 1;
        let at = first + super::find::quote_or_backslash(&self.b[first..]).ok_or(NotJson)?;
        if self.b[at] == b'"' {
            self.pos = at + 1;
            return Ok(Literal { start, end: at + 1, escaped: false });
        }
        self.decoded.clear();
        self.decoded.extend_from_slice(&self.b[first..at]);
        let close = decode_to_quote(self.b, at, &mut self.decoded)?;
        self.pos = close + 1;
        Ok(Literal { start, end: close + 1, escaped: true })
    }

    /// The text a literal stands for. `lit` must be the last literal read.
    fn decode(&self, lit: &Literal) -> Result<Cow<'a, str>, NotJson> {
        if !lit.escaped {
            return Ok(Cow::Borrowed(&self.line[lit.start + 1..lit.end - 1]));
        }
        String::from_utf8(self.decoded.clone()).map(Cow::Owned).map_err(|_| NotJson)
    }

    fn string_value(&mut self, lit: &Literal, key: Option<(&str, Option<Class>)>) -> Result<(), NotJson> {
        if let Some((name, _)) = key
            && matches!(name, "filePath" | "file_path")
        {
            self.shows = self.shows.or(super::shell::shown_syntax(self.decode(lit)?.as_bytes()));
        }
        // `"headers": {"Authorization": "Bearer …"}` (an MCP server's entry, a request in a
        // tool call): the value is read as the header line it stands for, so the scheme
        // stays and the credential goes, as on a `curl -H` line.
        if let Some((name, _)) = key
            && is_auth_header(name)
        {
            let text = self.decode(lit)?;
            let line = format!("Authorization: {text}");
            let mut counts = Report::default();
            if let Cow::Owned(red) = super::text::redact_report(&line, &mut counts)
                && let Some(value) = red.strip_prefix("Authorization: ")
            {
                let quoted = serde_json::to_string(value).map_err(|_| NotJson)?;
                self.replace(lit, quoted.as_bytes());
                self.report.merge(&counts);
                return Ok(());
            }
        }
        // `{"password": "hunter2"}`: the key is context for a bare string value.
        if let Some((name, Some(class))) = key
            && !INTEGRITY_KEYS.contains(&name)
        {
            let text = self.decode(lit)?;
            if value::should_redact(class, text.as_bytes()) {
                super::echo::note(text.as_bytes(), "kv");
                self.replace(lit, format!("\"{REDACTED}\"").as_bytes());
                self.report.count("kv");
                return Ok(());
            }
        }
        // A command's output: the result's own text, or a text block's in it.
        if let Some(named) = self.output.clone()
            && let Some((name, _)) = key
            && matches!(name, "content" | "text" | "stdout")
        {
            return self.output_text(lit, named);
        }
        self.text(lit)
    }

    /// A literal that holds what a command printed, whose words named a secret: its lines
    /// are read as the lines below that command at a prompt are, each a value position
    /// besides every other reading. Output that is JSON is read as JSON instead. Not
    /// remembered: the same bytes elsewhere are read without the command.
    fn output_text(&mut self, lit: &Literal, named: Named) -> Result<(), NotJson> {
        let text = self.decode(lit)?;
        if text.trim_ascii_start().starts_with(['{', '[']) {
            return self.text(lit);
        }
        let mut counts = Report::default();
        let new = super::text::redact_output(text.as_bytes(), named, &mut counts);
        self.replace_text(lit, new, &counts)
    }

    /// Puts `new`, a literal's text as a reading redacted it, in its place as a JSON
    /// string, with what that reading counted; nothing when it changed nothing.
    fn replace_text(&mut self, lit: &Literal, new: Option<Vec<u8>>, counts: &Report) -> Result<(), NotJson> {
        if let Some(new) = new {
            let new = String::from_utf8(new).map_err(|_| NotJson)?;
            let quoted = serde_json::to_string(&new).map_err(|_| NotJson)?;
            self.replace(lit, quoted.as_bytes());
            self.report.merge(counts);
        }
        Ok(())
    }

    /// Redacts a literal's text as any other text.
    fn text(&mut self, lit: &Literal) -> Result<(), NotJson> {
        // Read as the file the record shows: not as the same bytes elsewhere, so no memo.
        if let Some(syntax) = self.shown {
            let text = self.decode(lit)?;
            let mut counts = Report::default();
            let new = super::text::redact_shown(text.as_bytes(), syntax, &mut counts);
            return self.replace_text(lit, new, &counts);
        }
        let raw = &self.b[lit.start..lit.end];
        // A short string seen clean before is clean again: its redaction depends on its
        // bytes alone. Transcripts repeat the same short values on every line (a role, a
        // model, a version, a branch); a lookup costs a fifth of scanning one.
        let inner = &raw[1..raw.len() - 1];
        let short = inner.len() <= super::memo::MAX;
        if short && CLEAN_SHORT.with_borrow(|m| m.get(inner)).is_some() {
            return Ok(());
        }
        let crc = (REMEMBER_FROM..=REMEMBER_UPTO).contains(&raw.len()).then(|| crc32fast::hash(raw));
        let (with, counts) = match crc.and_then(|crc| recall(crc, raw)) {
            Some(known) => known,
            None => {
                let mut counts = Report::default();
                let with = self.redact_literal(lit, &mut counts)?;
                if let Some(crc) = crc {
                    keep(crc, raw, &with, &counts);
                }
                (with, counts)
            }
        };
        self.report.merge(&counts);
        match with {
            Some(with) => self.replace(lit, &with),
            None if short && counts.values == 0 => CLEAN_SHORT.with_borrow_mut(|m| m.put(inner, ())),
            None => {}
        }
        Ok(())
    }

    /// The literal that replaces `lit`, if its text holds a secret.
    fn redact_literal(&self, lit: &Literal, counts: &mut Report) -> Result<Option<Vec<u8>>, NotJson> {
        if !lit.escaped {
            // One line: a raw newline cannot be inside a JSON string.
            let inner = &self.b[lit.start + 1..lit.end - 1];
            let mask = scan::woken(inner);
            if mask == 0 {
                return Ok(None);
            }
            let mut new = Vec::with_capacity(inner.len() + 2);
            new.push(b'"');
            let mut sc = LineScanner::default();
            // One line cannot end with a continuation `\` here; were it held, `finish` writes it.
            if !(sc.line_masked(inner, Some(mask), &mut new, counts) | sc.finish(&mut new, counts)) {
                return Ok(None);
            }
            // Nothing in it needed an escape before, and the marker needs none.
            new.push(b'"');
            return Ok(Some(new));
        }
        // `lit` was the last literal read: its text is in `decoded`.
        let walked = self.nested_json(counts);
        let text = walked.as_ref().map_or(&self.decoded[..], |w| w.as_bytes());
        let new = match (super::text::redact_bytes(text, counts), walked) {
            (None, None) => return Ok(None),
            (Some(new), _) => String::from_utf8(new).map_err(|_| NotJson)?,
            (None, Some(walked)) => walked,
        };
        Ok(Some(serde_json::to_string(&new).map_err(|_| NotJson)?.into_bytes()))
    }

    /// The last literal's text with its strings redacted, when that text is JSON (a tool
    /// result holding a `Read` view, an API's response, JSON Lines): its lines are joined
    /// by escapes one level deeper, so read as text a view's numbers were not at a line's
    /// start. Its strings are read as the record's are, and the text is read after as
    /// before.
    fn nested_json(&self, counts: &mut Report) -> Option<String> {
        // Most strings are not JSON: only one that starts like it is walked.
        let first = self.decoded.iter().find(|b| !b.is_ascii_whitespace())?;
        if !matches!(first, b'{' | b'[') || self.nesting >= MAX_NESTING {
            return None;
        }
        let text = std::str::from_utf8(&self.decoded).ok()?;
        // A walk that fails has counted what it found before failing: counts are kept
        // only from the reading that stands.
        let mut found = Report::default();
        let walked = match redact_nested(text, &mut found, self.nesting + 1, None) {
            Ok(walked) => walked,
            Err(NotJson) => {
                found = Report::default();
                json_lines(text, &mut found, self.nesting + 1)
            }
        }?;
        counts.merge(&found);
        Some(walked)
    }

    fn replace(&mut self, lit: &Literal, with: &[u8]) {
        let out = self.out.get_or_insert_with(|| Vec::with_capacity(self.b.len() + 64));
        out.extend_from_slice(&self.b[self.copied..lit.start]);
        out.extend_from_slice(with);
        self.copied = lit.end;
    }
}

/// `text` with the strings of each line that is JSON redacted, when `text` is JSON Lines
/// (a tool's output of a log or a transcript, one record a line); `None` when nothing
/// changed. Other lines are kept for the text reading.
fn json_lines(text: &str, report: &mut Report, nesting: u8) -> Option<String> {
    if !text.contains('\n') {
        return None;
    }
    let mut out = String::with_capacity(text.len() + 64);
    let mut changed = false;
    for line in text.split_inclusive('\n') {
        let body = line.trim_end_matches(['\n', '\r']);
        let record = body.trim_start().starts_with(['{', '[']);
        let mut found = Report::default();
        match record.then(|| redact_nested(body, &mut found, nesting, None)) {
            Some(Ok(Some(new))) => {
                out.push_str(&new);
                out.push_str(&line[body.len()..]);
                report.merge(&found);
                changed = true;
            }
            _ => out.push_str(line),
        }
    }
    changed.then_some(out)
}

thread_local! {
    /// Long texts are decoded into one buffer per thread, not a string each.
    static DECODED: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    /// Short strings found clean, by their raw bytes. Few enough slots that a string seen
    /// once (a timestamp, an id) is soon pushed out by the ones a transcript repeats.
    static CLEAN_SHORT: RefCell<Memo<()>> = RefCell::new(Memo::new(128));
}

/// What is known of a key: how its name classifies a value, and whether its own text is
/// clean.
#[derive(Clone, Copy)]
struct KnownKey {
    class: Option<Class>,
    clean: bool,
}

/// Keys longer than this are looked at afresh each time instead of being remembered.
const KNOWN_KEY_MAX: usize = 64;

/// A key as seen before on this thread: a transcript repeats the same few dozen keys on
/// every line. `None` for a key too long to remember.
fn known_key(key: &str) -> Option<KnownKey> {
    if key.len() > KNOWN_KEY_MAX {
        return None;
    }
    if key.len() <= SHORT_KEY {
        return Some(known_short_key(key));
    }
    thread_local! {
        static SEEN: RefCell<HashMap<Box<str>, KnownKey, BuildKeyHasher>> = RefCell::new(HashMap::default());
    }
    SEEN.with_borrow_mut(|seen| {
        if let Some(known) = seen.get(key) {
            return Some(*known);
        }
        // Keys can be data (a map keyed by file name): keep the memory bounded.
        if seen.len() >= 4096 {
            seen.clear();
        }
        let known = judge_key(key);
        seen.insert(key.into(), known);
        Some(known)
    })
}

fn judge_key(key: &str) -> KnownKey {
    KnownKey {
        class: value::name_class(key.as_bytes(), Form::Colon),
        clean: matches!(super::text::redact_report(key, &mut Report::default()), Cow::Borrowed(_)),
    }
}

/// Keys up to this long, nearly all of a transcript's, are remembered in slots of their
/// own and compared in place: hashing them into a map and comparing them there was a
/// twentieth of the redaction of a transcript.
const SHORT_KEY: usize = super::memo::MAX;

fn known_short_key(key: &str) -> KnownKey {
    thread_local! {
        static KEYS: RefCell<Memo<KnownKey>> = RefCell::new(Memo::new(512));
    }
    super::memo::remembered(&KEYS, key.as_bytes(), || judge_key(key))
}

/// A multiply-rotate hash for the keys of one's own transcripts: keys are short, the
/// table is bounded, and SipHash's resistance to chosen collisions cost a tenth of the
/// walk for nothing to defend.
#[derive(Default, Clone, Copy)]
struct BuildKeyHasher;

impl std::hash::BuildHasher for BuildKeyHasher {
    type Hasher = KeyHasher;
    fn build_hasher(&self) -> KeyHasher {
        KeyHasher(0)
    }
}

struct KeyHasher(u64);

impl std::hash::Hasher for KeyHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.0 =
                (self.0.rotate_left(5) ^ u64::from_le_bytes(word)).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
    }
    fn write_u8(&mut self, b: u8) {
        self.write(&[b]);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

/// Literals of these lengths are remembered with what redacting them did.
const REMEMBER_FROM: usize = 256;
const REMEMBER_UPTO: usize = 128 << 10;
/// How many each thread remembers: at most 2 MiB.
const REMEMBER_COUNT: usize = 16;

struct Remembered {
    crc: u32,
    raw: Box<[u8]>,
    with: Option<Vec<u8>>,
    counts: Report,
}

thread_local! {
    static RECENT: RefCell<VecDeque<Remembered>> = const { RefCell::new(VecDeque::new()) };
}

/// What redacting the literal `raw` (whose CRC is `crc`) did the last time it was seen on
/// this thread.
fn recall(crc: u32, raw: &[u8]) -> Option<(Option<Vec<u8>>, Report)> {
    RECENT.with_borrow(|recent| {
        recent.iter().find(|r| r.crc == crc && *r.raw == *raw).map(|r| (r.with.clone(), r.counts.clone()))
    })
}

fn keep(crc: u32, raw: &[u8], with: &Option<Vec<u8>>, counts: &Report) {
    RECENT.with_borrow_mut(|recent| {
        if recent.len() == REMEMBER_COUNT {
            recent.pop_front();
        }
        recent.push_back(Remembered { crc, raw: raw.into(), with: with.clone(), counts: counts.clone() });
    });
}

/// One line given as bytes: a JSON Lines record when `jsonl`, else text. A line that is
/// not UTF-8 is read as it would be with each bad byte as U+FFFD, so that one bad byte
/// does not turn the reading of a record's JSON strings off (an escaped secret in
/// another of its strings would pass); its bytes stay as they are unless that reading
/// finds a secret, and then each bad byte is U+FFFD in what comes back.
pub fn redact_line_bytes<'a>(body: &'a [u8], jsonl: bool, report: &mut Report) -> Cow<'a, [u8]> {
    redact_line_bytes_linked(body, jsonl, None, report)
}

/// [`redact_line_bytes`] for a record of a transcript whose earlier tool calls are
/// `links` ([`Links::learn`]).
pub fn redact_line_bytes_linked<'a>(
    body: &'a [u8],
    jsonl: bool,
    links: Option<&Links>,
    report: &mut Report,
) -> Cow<'a, [u8]> {
    fn read<'t>(text: &'t str, jsonl: bool, links: Option<&Links>, report: &mut Report) -> Cow<'t, str> {
        if jsonl {
            redact_json_line_linked(text, links, report)
        } else {
            super::text::redact_report(text, report)
        }
    }
    match simdutf8::basic::from_utf8(body) {
        Ok(text) => match read(text, jsonl, links, report) {
            Cow::Borrowed(_) => Cow::Borrowed(body),
            Cow::Owned(s) => Cow::Owned(s.into_bytes()),
        },
        Err(_) => {
            let lossy = String::from_utf8_lossy(body);
            let mut found = Report::default();
            let red = read(&lossy, jsonl, links, &mut found);
            if found.values == 0 {
                Cow::Borrowed(body)
            } else {
                report.merge(&found);
                Cow::Owned(red.into_owned().into_bytes())
            }
        }
    }
}

/// Redacts every string of one JSON Lines record: keys and values as text, and a value
/// also with its key as context (`{"password": "hunter2"}`).
///
/// Only the strings that change are rewritten, so an untouched record comes back
/// borrowed and byte-identical and a changed one stays valid JSON with every other byte
/// kept. A line that is not JSON is redacted as plain text, so a malformed record cannot
/// smuggle a secret past. A changed record counts as one line in `report`.
pub fn redact_json_line<'a>(line: &'a str, report: &mut Report) -> Cow<'a, str> {
    redact_json_line_linked(line, None, report)
}

/// [`redact_json_line`] for a record of a transcript whose earlier tool calls are
/// `links`: a result of a call whose command named a secret is read as its output.
pub fn redact_json_line_linked<'a>(
    line: &'a str,
    links: Option<&Links>,
    report: &mut Report,
) -> Cow<'a, str> {
    let mut local = Report::default();
    let walked = match links {
        Some(links) => redact_strings_linked(line, links, &mut local),
        None => redact_strings(line, &mut local),
    };
    match walked {
        Ok(None) => Cow::Borrowed(line),
        Ok(Some(new)) => {
            local.lines = 1;
            report.merge(&local);
            Cow::Owned(new)
        }
        Err(NotJson) => super::text::redact_report(line, report),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::redact::find::decode_to_quote_portable;
    use crate::redact::tests::Rng;

    /// Every character escaped as Python's `json.dumps` does by default (`ensure_ascii`).
    fn ascii_escaped(s: &str) -> String {
        let mut out = String::new();
        for c in s.chars() {
            let mut units = [0u16; 2];
            for u in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{u:04x}"));
            }
        }
        out
    }

    #[test]
    fn short_strings_remembered_clean_are_redacted_as_afresh() {
        // Short values from the corpus, secrets among them, and values made to share the
        // length and the first and last eight bytes of a secret; each judged first alone,
        // on a thread of its own (nothing remembered), then all in a shuffled order on one
        // thread, each several times, with the memo full and its pairs shared.
        let corpus = include_str!("../../fixtures/redaction/corpus.jsonl");
        let mut values: Vec<String> = Vec::new();
        for line in corpus.lines() {
            let text = serde_json::from_str::<serde_json::Value>(line).unwrap()["line"]
                .as_str()
                .unwrap()
                .to_string();
            let words: Vec<&str> = text.split(' ').collect();
            for n in 1..=3 {
                values.extend(words.windows(n).map(|w| w.join(" ")).filter(|v| v.len() <= SHORT_KEY));
            }
        }
        for middle in ["Hunter2xyz", "harmless1", "wQ9#zzTq"] {
            values.push(format!("password={middle}"));
            values.push(format!("-p{middle} -u root"));
        }
        values.sort();
        values.dedup();
        let record = |v: &str| serde_json::json!({ "x": v }).to_string();
        let alone: Vec<(String, String)> = values
            .iter()
            .map(|v| {
                let line = record(v);
                let want = std::thread::scope(|s| {
                    s.spawn(|| super::super::redact_json_line(&line, &mut Report::default()).into_owned())
                        .join()
                        .unwrap()
                });
                (line, want)
            })
            .collect();
        let changed = alone.iter().filter(|(line, want)| line != want).count();
        assert!(changed > 50 && changed < alone.len() / 2, "{changed} of {}", alone.len());
        let mut r = Rng(0x5e55);
        for _ in 0..4 * alone.len() {
            let (line, want) = &alone[r.below(alone.len())];
            assert_eq!(
                super::super::redact_json_line(line, &mut Report::default()),
                *want.as_str(),
                "{line}"
            );
        }
    }

    /// Two records written on one line, as a transcript holds where two writes met
    /// without a newline between them (seven such lines in the real transcripts).
    #[test]
    fn records_glued_on_one_line_are_read_as_json() {
        let first = r#"{"type":"user","message":{"content":"run it"},"sessionId":"5a3b"}"#;
        // An escape spells the name: only the JSON reading sees `password=` here.
        let second = r#"{"type":"assistant","message":{"content":"export pass\u0077ord=Hunter2xyz\nok"}}"#;
        for line in
            [format!("{first}{second}"), format!("{first} \t{second}"), format!("{second}{first}{second}")]
        {
            let mut report = Report::default();
            let out = super::super::redact_json_line(&line, &mut report).into_owned();
            assert!(!out.contains("Hunter2xyz"), "{out}");
            // Every record still parses, and the first is kept byte for byte.
            let records: Vec<serde_json::Value> =
                serde_json::Deserializer::from_str(&out).into_iter().collect::<Result<_, _>>().expect(&out);
            assert_eq!(records.len(), line.matches("\"type\"").count(), "{out}");
            assert!(out.contains(first), "{out}");
            assert_eq!(report.lines, 1);
        }
        // A record followed by what is not a record is still not JSON: read as text.
        let line = format!("{first} password=Hunter2xyz");
        let out = super::super::redact_json_line(&line, &mut Report::default()).into_owned();
        assert_eq!(out, format!("{first} password=[REDACTED]"));
    }

    /// Claude Code's record of an edit: a diff's hunk, a line a string. A name and its value
    /// on two of them, and a YAML block, are read together; harmless lines stay as they were.
    #[test]
    fn a_hunk_of_lines_is_read_as_one_text() {
        let line = r#"{"toolUseResult":{"filePath":"/k/deploy.yaml","structuredPatch":[{"oldStart":24,"lines":["         - name: DB_HOST","           value: db","+        - name: DB_PASSWORD","+          value: correcthorse","+        - name: TLS_KEY_PASSPHRASE","+          value: |","+            two words","  # \"quoted\" \u00e9"]}]}}"#;
        let out = super::super::redact_json_line(line, &mut Report::default()).into_owned();
        assert!(!out.contains("correcthorse") && !out.contains("two words"), "{out}");
        let v: serde_json::Value = serde_json::from_str(&out).expect(&out);
        let lines = &v["toolUseResult"]["structuredPatch"][0]["lines"];
        assert_eq!(lines[3], "+          value: [REDACTED]");
        assert_eq!(lines[1], "           value: db");
        // Untouched strings keep their bytes, escapes included.
        assert!(out.contains(r#""  # \"quoted\" \u00e9""#), "{out}");
        // Not all strings, or a string with a line ending: each element alone, as before.
        for line in [r#"{"lines":["password=Hunter2xyz",3]}"#, r#"{"lines":["a\npassword=Hunter2xyz"]}"#] {
            let out = super::super::redact_json_line(line, &mut Report::default()).into_owned();
            assert!(!out.contains("Hunter2xyz"), "{out}");
            serde_json::from_str::<serde_json::Value>(&out).expect(&out);
        }
    }

    /// A record's own objects that give a secret's name and its value as two keys: a tool
    /// call's input holding an ECS container's `environment`, an MCP tool's arguments.
    #[test]
    fn entries_of_a_record_are_read_as_pairs() {
        for (line, kept) in [
            (
                r#"{"type":"tool_use","input":{"environment":[{"name":"DB_HOST","value":"db"},{"name":"DB_PASSWORD","value":"Hx4k9Qw2"}]}}"#,
                r#"{"name":"DB_HOST","value":"db"}"#,
            ),
            (
                r#"{"args":[{"ParameterKey":"DBPassword","ParameterValue":"Hx4k9Qw2"}]}"#,
                r#"{"ParameterKey":"DBPassword","#,
            ),
            // A HAR file's header: the scheme stays, as on a `curl -H` line.
            (
                r#"{"headers":[{"name":"Authorization","value":"Bearer Hx4k9Qw2abcdef"}]}"#,
                r#""value":"Bearer [REDACTED]""#,
            ),
        ] {
            let out = super::super::redact_json_line(line, &mut Report::default()).into_owned();
            assert!(!out.contains("Hx4k9Qw2") && out.contains(kept), "{out}");
            serde_json::from_str::<serde_json::Value>(&out).expect(&out);
        }
        // A value before its name, another entry's value, a reference: kept.
        for line in [
            r#"{"env":[{"value":"Hx4k9Qw2","name":"DB_PASSWORD"}]}"#,
            r#"{"env":[{"name":"DB_PASSWORD","valueFrom":{"secretKeyRef":{"name":"db","key":"password"}}},{"name":"PORT","value":"8080"}]}"#,
            r#"{"env":[{"name":"DB_PASSWORD","value":"$(DB_PASS)"}]}"#,
            r#"{"type":"tool_use","name":"mcp__vault__read_secret","input":{"value":"status"}}"#,
        ] {
            assert_eq!(super::super::redact_json_line(line, &mut Report::default()), line);
        }
    }

    #[test]
    fn remembered_keys_are_judged_as_afresh() {
        // Keys from the corpus, and keys made to share a slot's pair, their first and last
        // eight bytes, or their length, judged in a shuffled order, each several times.
        let mut keys: Vec<String> = include_str!("../../fixtures/redaction/corpus.jsonl")
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
            .filter(|w| w.len() <= SHORT_KEY)
            .map(str::to_string)
            .collect();
        // Same length, same first and last eight bytes, different verdicts.
        for middle in ["SECRET", "PUBLIC", "PASSWORD", "HARMLESS"] {
            keys.push(format!("PROJECT_{middle}_ACCESS_KEY"));
        }
        for [a, b] in [["secret", "harmle"], ["password", "harmless"]] {
            keys.push(format!("client_{a}_of_the_app_a"));
            keys.push(format!("client_{b}_of_the_app_a"));
        }
        keys.push(String::new());
        let mut r = Rng(0x4b45);
        let mut secret = 0;
        for _ in 0..8 * keys.len() {
            let key = &keys[r.below(keys.len())];
            let (got, want) = (known_short_key(key), judge_key(key));
            assert_eq!((got.class, got.clean), (want.class, want.clean), "{key:?}");
            secret += usize::from(want.class.is_some());
        }
        assert!(secret > 100, "{secret}");
    }

    /// The text of a literal's inside `raw`, read by `decode` up to the quote after it.
    fn unescape(raw: &[u8], out: &mut Vec<u8>) -> Result<(), NotJson> {
        read_inside(decode_to_quote, raw, out)
    }

    fn unescape_portable(raw: &[u8], out: &mut Vec<u8>) -> Result<(), NotJson> {
        read_inside(decode_to_quote_portable, raw, out)
    }

    /// A reader of a literal to its closing quote: the AVX2 one or the portable one.
    type Decoder = fn(&[u8], usize, &mut Vec<u8>) -> Result<usize, NotJson>;

    fn read_inside(decode: Decoder, raw: &[u8], out: &mut Vec<u8>) -> Result<(), NotJson> {
        let literal = [raw, b"\""].concat();
        let close = decode(&literal, 0, out)?;
        assert_eq!(close, raw.len(), "{raw:?}");
        Ok(())
    }

    #[test]
    fn unescape_reads_what_serde_json_reads() {
        let mut r = Rng(0x5e7d);
        let pool = [
            'a', 'Z', '"', '\\', '/', '\n', '\r', '\t', '\u{8}', '\u{c}', '\u{1}', 'é', '→', '日', '🦀', ' ',
        ];
        // Mostly plain text, so that stretches between escapes cross the 32-byte steps.
        let plain = ['a', 'Z', ' ', 'é', '→'];
        for _ in 0..4000 {
            let text: String = (0..r.below(120))
                .map(
                    |_| if r.below(3) == 0 { pool[r.below(pool.len())] } else { plain[r.below(plain.len())] },
                )
                .collect();
            for written in [serde_json::to_string(&text).unwrap(), format!("\"{}\"", ascii_escaped(&text))] {
                let raw = &written.as_bytes()[1..written.len() - 1];
                let mut out = b"kept".to_vec();
                unescape(raw, &mut out).unwrap();
                assert_eq!(String::from_utf8(out).unwrap(), format!("kept{text}"), "{written}");
                let mut portable = b"kept".to_vec();
                unescape_portable(raw, &mut portable).unwrap();
                assert_eq!(String::from_utf8(portable).unwrap(), format!("kept{text}"), "{written}");
            }
        }
        // Lone and reversed surrogates, which serde_json refuses, are U+FFFD each, as
        // JavaScript reads them; the escape after a lone one is read on its own.
        for (broken, text) in [
            (r"\ud800", "\u{fffd}"),
            (r"\udc00", "\u{fffd}"),
            (r"\ud800x", "\u{fffd}x"),
            (r"\ud800\u0041", "\u{fffd}A"),
            (r"\udc00\ud800", "\u{fffd}\u{fffd}"),
            (r"\ud800\ud800\udc00", "\u{fffd}\u{10000}"),
            (r"\ud83d\ude00\ud83d", "\u{1f600}\u{fffd}"),
        ] {
            for raw in [broken.to_string(), format!("{}{broken}", "y".repeat(40))] {
                let want = format!("{}{text}", &raw[..raw.len() - broken.len()]);
                for decode in [unescape, unescape_portable] {
                    let mut out = Vec::new();
                    decode(raw.as_bytes(), &mut out).unwrap();
                    assert_eq!(String::from_utf8(out).unwrap(), want, "{raw}");
                }
            }
        }
        // A literal with no closing quote is not JSON, however long it runs.
        for open in ["abc", "abc\\n", &format!("{}\\t{}", "x".repeat(40), "y".repeat(40)), "\\ud800"] {
            for decode in [decode_to_quote, decode_to_quote_portable] {
                assert!(decode(open.as_bytes(), 0, &mut Vec::new()).is_err(), "{open}");
            }
        }
        // What no reader takes is refused.
        for bad in [r"\q", r"\u12", r"\ud800\u12"] {
            assert!(unescape(bad.as_bytes(), &mut Vec::new()).is_err(), "{bad}");
            assert!(unescape_portable(bad.as_bytes(), &mut Vec::new()).is_err(), "{bad}");
            let long = format!("{}{bad}", "x".repeat(40));
            assert!(unescape(long.as_bytes(), &mut Vec::new()).is_err(), "{long}");
            assert!(serde_json::from_str::<String>(&format!("\"{bad}\"")).is_err(), "{bad}");
        }
    }
}
