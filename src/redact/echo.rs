//! A secret found once is a secret wherever it appears again in the same document. An
//! agent quotes back the value it just read ("found it: `X` is hard-coded"), a diff shows
//! the line a Read showed, a later command repeats it bare: there nothing around the
//! value says what it is. The readings find a value where its context does; this finds
//! its echoes.
//!
//! The values replaced while a caller collects ([`collecting`]) are handed back to it; it
//! learns them into [`Echoes`] and replaces their other occurrences, in the same file or
//! stream only (a value is never carried from one document to another).

use std::borrow::Cow;
use std::cell::RefCell;

use aho_corasick::{AhoCorasick, MatchKind};

use super::report::Report;
use super::value;
use crate::lok::REDACTED;

thread_local! {
    /// The values replaced on this thread while a caller collects, else `None`.
    static FOUND: RefCell<Option<Vec<Vec<u8>>>> = const { RefCell::new(None) };
}

/// Records a value a reading replaced, when someone collects. A literal judged by its
/// shape alone, with no name or provider's format beside it, is not chased: misjudged, it
/// would be wrong everywhere it appears.
pub(crate) fn note(value: &[u8], rule: &str) {
    if rule == "generated-literal" {
        return;
    }
    // A field a credential file gives its secret in is one by the file's format, whatever
    // it looks like (`rmvpzkdjvjddlfwi` in Postfix's sasl_passwd).
    let by_format = rule == "key-file";
    FOUND.with(|f| {
        if let Some(found) = f.borrow_mut().as_mut()
            && (if by_format { matchable(value) } else { worth_echoing(value) })
        {
            found.push(value.to_vec());
        }
    });
}

/// Runs `f`, returning with its result the values redaction replaced while it ran. A
/// collection inside another hands what it found to the outer one as well.
pub fn collecting<T>(f: impl FnOnce() -> T) -> (T, Vec<Vec<u8>>) {
    let outer = FOUND.with(|s| s.borrow_mut().replace(Vec::new()));
    let result = f();
    let found = FOUND.with(|s| {
        let mut slot = s.borrow_mut();
        let found = slot.take().unwrap_or_default();
        if let Some(mut outer) = outer {
            outer.extend(found.iter().cloned());
            *slot = Some(outer);
        }
        found
    });
    (result, found)
}

/// A value long enough not to be found by chance, whose raw match cannot cross a JSON
/// string's edge (no quotes, backslashes, blanks or control characters).
fn matchable(v: &[u8]) -> bool {
    v.len() >= 8
        && v.len() <= 1024
        && !v.starts_with(REDACTED.as_bytes())
        && !v.iter().any(|b| {
            matches!(b, b'"' | b'\\' | b'\'' | b'`') || b.is_ascii_whitespace() || *b < 0x20 || *b == 0x7f
        })
}

/// A value whose other occurrences can be replaced without harm: one the judge would call
/// a secret on its own, with no name beside it, since a value misjudged once would
/// otherwise be chased through the whole file (a style name taken for a token, then every
/// `Name.Variable` of a lexer). That is a generated value, a password of words, a hex key,
/// or letters, digits and a symbol mixed, not a chain of names; never shorter than eight
/// bytes, and free of what would make a raw match in JSON text cross a string's edge
/// (quotes, backslashes, control characters).
fn worth_echoing(v: &[u8]) -> bool {
    if !matchable(v) {
        return false;
    }
    if value::is_password_of_words(v) {
        return true;
    }
    if value::is_member_chain(v) {
        return false;
    }
    let letter = v.iter().any(u8::is_ascii_alphabetic);
    let digit = v.iter().any(u8::is_ascii_digit);
    let symbol = v.iter().any(|b| b.is_ascii_punctuation() && !matches!(b, b'.' | b'_' | b'-'));
    // `NScUykT8C8UB`: letters of both cases with digits among them more than once, as a
    // generator draws them; a name has its number in one place (`PKCS7PrivateKey`,
    // `X509_sig_st`).
    let digit_runs = v.windows(2).filter(|w| w[1].is_ascii_digit() && !w[0].is_ascii_digit()).count()
        + usize::from(v[0].is_ascii_digit());
    let mixed = v.len() >= 10
        && v.iter().all(u8::is_ascii_alphanumeric)
        && v.iter().any(u8::is_ascii_uppercase)
        && v.iter().any(u8::is_ascii_lowercase)
        && digit_runs >= 2
        && !value::is_made_of_words(v);
    value::is_generated(v)
        || value::is_hex_key(v)
        || mixed
        || (letter
            && digit
            && symbol
            && !v
                .iter()
                .any(|b| matches!(b, b'(' | b')' | b'{' | b'}' | b'[' | b']' | b'<' | b'>' | b',' | b';')))
}

/// The most values one document's echoes are looked for.
pub const MAX_VALUES: usize = 512;

/// The secrets found so far in one document, and a finder for them.
#[derive(Default, Clone)]
pub struct Echoes {
    values: Vec<Vec<u8>>,
    finder: Option<AhoCorasick>,
}

impl Echoes {
    /// Adds `found`; the finder is rebuilt only when something new came. Past
    /// [`MAX_VALUES`] nothing more is learned: a file of thousands of secrets would rebuild
    /// the finder with each, and each of them is replaced where its own reading finds it.
    pub fn learn(&mut self, found: Vec<Vec<u8>>) {
        let before = self.values.len();
        for v in found {
            if self.values.len() >= MAX_VALUES {
                break;
            }
            if !self.values.contains(&v) {
                self.values.push(v);
            }
        }
        if self.values.len() != before {
            // Longest first at one position: a secret that holds another is replaced whole.
            self.finder = AhoCorasick::builder().match_kind(MatchKind::Standard).build(&self.values).ok();
        }
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// `text` with every occurrence of a learned value replaced by the marker (two that
    /// overlap go together); in JSON Lines (`json`) only inside a string, and never
    /// after a backslash, so every record stays valid JSON. Counts one value per
    /// replacement and one line per line it changes that nothing else had.
    pub fn redact<'a>(&self, text: &'a [u8], json: bool, report: &mut Report) -> Cow<'a, [u8]> {
        let Some(finder) = &self.finder else { return Cow::Borrowed(text) };
        let mut found: Vec<(usize, usize)> =
            finder.find_overlapping_iter(text).map(|m| (m.start(), m.end())).collect();
        if found.is_empty() {
            return Cow::Borrowed(text);
        }
        found.sort_unstable();
        let mut spans: Vec<(usize, usize)> = Vec::with_capacity(found.len());
        for (start, end) in found {
            match spans.last_mut() {
                Some(last) if start <= last.1 => last.1 = last.1.max(end),
                _ => spans.push((start, end)),
            }
        }
        if json {
            let mut strings = JsonStrings::default();
            spans.retain(|&(start, _)| strings.inside_at(text, start));
        }
        if spans.is_empty() {
            return Cow::Borrowed(text);
        }
        let mut out = Vec::with_capacity(text.len());
        let mut at = 0;
        let mut last_line = None;
        for (start, end) in spans {
            out.extend_from_slice(&text[at..start]);
            out.extend_from_slice(REDACTED.as_bytes());
            at = end;
            report.count("echo");
            let line_start = memchr::memrchr(b'\n', &text[..start]).map_or(0, |i| i + 1);
            if last_line != Some(line_start) {
                last_line = Some(line_start);
                let line_end = memchr::memchr(b'\n', &text[start..]).map_or(text.len(), |i| start + i);
                if memchr::memmem::find(&text[line_start..line_end], REDACTED.as_bytes()).is_none() {
                    report.lines += 1;
                }
            }
        }
        out.extend_from_slice(&text[at..]);
        Cow::Owned(out)
    }
}

/// Where JSON Lines text stands, read forward once: inside a string or not, and whether
/// the byte before was an escaping backslash. A newline starts a new record.
#[derive(Default)]
struct JsonStrings {
    pos: usize,
    inside: bool,
    escaped: bool,
}

impl JsonStrings {
    /// Whether `at` (not before the last position asked) starts inside a string, not
    /// right after a backslash.
    fn inside_at(&mut self, text: &[u8], at: usize) -> bool {
        for &b in &text[self.pos..at] {
            match b {
                b'\n' => (self.inside, self.escaped) = (false, false),
                _ if self.escaped => self.escaped = false,
                b'\\' if self.inside => self.escaped = true,
                b'"' => self.inside = !self.inside,
                _ => {}
            }
        }
        self.pos = at;
        self.inside && !self.escaped
    }
}

/// `bytes`, line by line, as one document: each line redacted by `line` (a JSON Lines
/// record or text), then every secret found anywhere in it replaced wherever else it
/// appears, before or after.
pub fn redact_document<'a>(
    bytes: &'a [u8],
    json: bool,
    report: &mut Report,
    mut line: impl FnMut(&'a [u8], &mut Report) -> Cow<'a, [u8]>,
) -> Cow<'a, [u8]> {
    let (red, found) = collecting(|| {
        let mut out: Option<Vec<u8>> = None;
        let mut at = 0;
        for l in bytes.split_inclusive(|b| *b == b'\n') {
            let body = l.strip_suffix(b"\n").unwrap_or(l);
            if let Cow::Owned(new) = line(body, report) {
                let out = out.get_or_insert_with(|| {
                    let mut v = Vec::with_capacity(bytes.len() + 16);
                    v.extend_from_slice(&bytes[..at]);
                    v
                });
                out.extend_from_slice(&new);
                out.extend_from_slice(&l[body.len()..]);
            } else if let Some(out) = out.as_mut() {
                out.extend_from_slice(l);
            }
            at += l.len();
        }
        out
    });
    let red = match red {
        Some(v) => Cow::Owned(v),
        None => Cow::Borrowed(bytes),
    };
    if found.is_empty() {
        return red;
    }
    let mut echoes = Echoes::default();
    echoes.learn(found);
    match echoes.redact(&red, json, report) {
        Cow::Borrowed(_) => red,
        Cow::Owned(v) => Cow::Owned(v),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_found_once_is_replaced_where_it_comes_again() {
        let text = b"said Kx9#mQ2vLp7 first\npassword = Kx9#mQ2vLp7\nthen Kx9#mQ2vLp7 again\n";
        let mut report = Report::default();
        let out =
            redact_document(text, false, &mut report, |l, r| super::super::redact_line_bytes(l, false, r));
        let out = String::from_utf8(out.into_owned()).unwrap();
        assert!(!out.contains("Kx9#mQ2vLp7"), "{out}");
        assert_eq!(out.lines().count(), 3);
        assert!(out.starts_with("said [REDACTED] first\n"), "{out}");
    }

    #[test]
    fn words_and_short_values_are_not_chased() {
        for v in [
            &b"hunter2"[..],
            b"changeme",
            b"CHANGEME",
            b"say \"hi\" x1",
            b"a\\b12345",
            b"Name.Variable",
            b"CRAM-MD5",
            b"AWS4-HMAC-SHA256",
            b"ROCKET_LAUNCHER_0001",
            b"ed25519.Ed25519PrivateKey",
            b"{message}",
            b"X509_sig_st",
        ] {
            assert!(!worth_echoing(v), "{}", String::from_utf8_lossy(v));
        }
        for v in [
            &b"Hunter2#x"[..],
            b"NScUykT8C8UB",
            b"Sequoia+Fjord3176",
            b"juniper_ember_raven_basil3",
            b"9eaf2faf17ec70ab3f72d3df153d1ab8",
            b"tD8P1f2#5B8j2UdjFEXVXOE",
        ] {
            assert!(worth_echoing(v), "{}", String::from_utf8_lossy(v));
        }
    }

    #[test]
    fn collections_nest() {
        let ((_, inner), outer) = collecting(|| {
            note(b"Outer#value1x", "assign");
            collecting(|| note(b"Inner#value2x", "assign"))
        });
        assert_eq!(inner, vec![b"Inner#value2x".to_vec()]);
        assert_eq!(outer, vec![b"Outer#value1x".to_vec(), b"Inner#value2x".to_vec()]);
        note(b"Nobody#collects3", "assign");
        assert!(FOUND.with(|f| f.borrow().is_none()));
    }

    fn echoes_of(values: &[&str]) -> Echoes {
        let mut e = Echoes::default();
        e.learn(values.iter().map(|v| v.as_bytes().to_vec()).collect());
        e
    }

    /// Found by an attack: a match right after a backslash (`\nK8#…` for `nK8#…`) or on a
    /// bare number broke the record's JSON.
    #[test]
    fn in_json_lines_only_whole_string_content_is_replaced() {
        let e = echoes_of(&["nK8#zqp2Lm4", "1234567890123e45"]);
        let text = b"{\"text\":\"ok\\nK8#zqp2Lm4 x\",\"n\":1234567890123e45}\n{\"a\":\"nK8#zqp2Lm4\"}";
        let out = e.redact(text, true, &mut Report::default());
        let out = String::from_utf8(out.into_owned()).unwrap();
        for line in out.lines() {
            serde_json::from_str::<serde_json::Value>(line).unwrap_or_else(|err| panic!("{err}: {line}"));
        }
        assert!(out.ends_with("{\"a\":\"[REDACTED]\"}"), "{out}");
    }

    #[test]
    fn overlapping_secrets_go_together() {
        let e = echoes_of(&["Kx9#mQ2vLp7zT", "Lp7zT#99abcXYZ"]);
        let out = e.redact(b"x Kx9#mQ2vLp7zT#99abcXYZ y", false, &mut Report::default());
        assert_eq!(&out[..], b"x [REDACTED] y");
    }

    #[test]
    fn a_literal_judged_by_its_shape_alone_is_not_chased() {
        let ((), found) = collecting(|| {
            note(b"N23_ossl_old_des_ks_struct4DOLLAR_10E", "generated-literal");
            note(b"NScUykT8C8UB", "assign");
        });
        assert_eq!(found, vec![b"NScUykT8C8UB".to_vec()]);
    }
}
