//! YAML's block scalars: under `password: |` or `password: >` the value is on the lines
//! below, each more indented than the key, and none of them holds a keyword (YAML 1.2.2,
//! 8.1.1, <https://yaml.org/spec/1.2.2/#81-block-scalar-styles>). The header opens the
//! block when the key names a secret; the scanner hands each line after it here to know
//! whether it is the block's, and the rules then take the whole content of each.
//!
//! A plain or quoted scalar may also start on the line below its key, more indented, and
//! go on over lines, folded with a space (7.3.3, 6.5): `password:` then `  hunter2`. After
//! a key with nothing behind it but node properties and a comment, the scanner holds the
//! lines that are such a scalar's ([`Block::below`]) until it ends, and [`Scalar::judge`]
//! reads the value as the key's own line would read it, were it written there.

use super::span::{Reading, Rescan, Span};
use super::value::{Form, name_class_strict};
use super::yaml_syntax::{blanks, properties};

/// Lines followed at most: a password or a token is a few lines, and a private key's
/// body is the PEM rule's, whose armour the block's lines keep. A header in a cut file
/// or in prose must not take the rest of an indented text.
const MAX_LINES: usize = 64;

/// A block scalar being followed.
#[derive(Debug)]
pub(crate) struct Block {
    /// The indentation of the header's line: the content is indented more.
    indent: usize,
    /// The content's indentation: the indicator's past the key's column, or the first
    /// non-empty line's. The block ends at the first non-empty line indented less.
    content: Option<usize>,
    /// The header's line had a diff's sign before it (`+`, `-`, a context line's
    /// space), or a YAML list's dash: so does each of the block's lines.
    sign: bool,
    lines: usize,
    /// A scalar below a bare key, not a block scalar.
    below: Option<Scalar>,
}

/// A plain or quoted scalar below its key, as far as it has been read.
#[derive(Debug)]
pub(crate) struct Scalar {
    /// The key's line up to its value, as the `name: value` reading is to read it: the
    /// key, its `:` and a tag (an anchor names the node, it says nothing of the value).
    key: Vec<u8>,
    /// Who judges the value: the `name: value` reading, or an entry's name (`pair.rs`).
    judge: Judge,
    /// A line of the scalar has come.
    started: bool,
    /// Inside a quoted scalar: its quote.
    quote: Option<u8>,
    /// The scalar can take no more lines: its quote closed, or a comment followed it.
    done: bool,
    /// Bytes of the lines held so far.
    bytes: usize,
    /// A line below was no YAML's or was code's: the lines held are no value.
    abandoned: bool,
}

/// Who judges a scalar below its key.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Judge {
    /// The key names a secret: the rules read `key: value`.
    Name,
    /// An entry's value key (`value:` under `- name: DB_PASSWORD`): the entry's name.
    Entry(super::pair::Named),
}

/// What a line is to a scalar below its key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Below {
    /// Before the value: a blank line, a comment.
    Before,
    /// A line of the value, its text at this byte (past its view's prefix or its sign).
    Value(usize),
    /// Not the scalar's: the scalar ended above (or there was none).
    Ended,
}

/// Bytes held at most for a scalar below its key: a secret is a line or a few.
const MAX_BELOW_BYTES: usize = 16 * 1024;

impl Block {
    /// The block `line` opens (`cut` the length of its view's prefix) when it is the
    /// header of a block scalar under a secret's name.
    pub(crate) fn opens(line: &[u8], cut: usize) -> Option<Block> {
        let sign = signed(line, cut);
        let text = if sign { &line[1..] } else { &line[cut..] };
        if let Some((indent, content)) = header(text) {
            return Some(Block { indent, content, sign, lines: 0, below: None });
        }
        let (column, key) = bare_key(text)?;
        Some(Block::under(column, sign, key, Judge::Name))
    }

    fn under(column: usize, sign: bool, key: Vec<u8>, judge: Judge) -> Block {
        let below =
            Scalar { key, judge, started: false, quote: None, done: false, bytes: 0, abandoned: false };
        Block { indent: column, content: None, sign, lines: 0, below: Some(below) }
    }

    /// The scalar a value key's line with nothing after its key opens (`value:` in an
    /// entry whose name names a secret, `pair.rs`), the key at `key` of `line`, to be
    /// read as `read_as` (the key, its `:`, its tags) before the value.
    pub(crate) fn below_key(
        line: &[u8],
        cut: usize,
        key: usize,
        read_as: Vec<u8>,
        named: super::pair::Named,
    ) -> Option<Block> {
        let sign = signed(line, cut);
        let base = if sign { 1 } else { cut };
        // YAML indents with spaces: a tab before the key is no YAML's.
        if line[base..key].contains(&b'\t') {
            return None;
        }
        Some(Block::under(key.saturating_sub(base), sign, read_as, Judge::Entry(named)))
    }

    /// The scalar below a bare key this is, when it is one.
    pub(crate) fn below(&self) -> Option<&Scalar> {
        self.below.as_ref()
    }

    /// The side of a diff `line` is on, when the key's line had a sign.
    pub(crate) fn side(&self, line: &[u8]) -> Option<u8> {
        line.first().copied().filter(|b| self.sign && matches!(b, b'+' | b'-'))
    }

    /// What `line` (its view's prefix `cut` bytes long) is to the scalar below the key,
    /// as YAML reads it: blank and comment lines before it; then a line more indented than
    /// the key (with spaces) that starts a plain or quoted scalar, not a collection or an
    /// alias; then the lines that go on with it, up to a line indented no more than the
    /// key or a comment line. A more indented line that cannot be the scalar's (a key, text
    /// after its closing quote, a tab's indentation) or that reads as code abandons it:
    /// nothing of it is taken.
    pub(crate) fn below_line(&mut self, line: &[u8], cut: usize) -> Below {
        let Some(s) = self.below.as_mut() else { return Below::Ended };
        self.lines += 1;
        if self.lines > MAX_LINES || s.bytes > MAX_BELOW_BYTES {
            return Below::Ended;
        }
        let at = if self.sign {
            match line.first() {
                Some(b'+' | b'-' | b' ') => 1,
                None => 0,
                // The hunk ended.
                Some(_) => return Below::Ended,
            }
        } else {
            cut
        };
        let text = line[at..].trim_ascii_end();
        let indent = text.iter().take_while(|b| **b == b' ').count();
        let rest = &text[indent..];
        if rest.is_empty() {
            return if s.started { Below::Value(at) } else { Below::Before };
        }
        if s.quote.is_none() && rest.first() == Some(&b'#') {
            return if s.started { Below::Ended } else { Below::Before };
        }
        if indent <= self.indent {
            return Below::Ended;
        }
        // More indented, and yet no line of the scalar: no YAML (a tab indents, a key
        // inside, text after a closed quote), or code's lines (a C++ class's members below
        // `private:`). Nothing of it is judged. One word, or a quoted scalar's line, is
        // judged as on the key's line: a password may end with `;` or hold `/*`.
        let one_word = !rest.iter().any(|b| matches!(b, b' ' | b'\t'));
        let quoted = s.quote.is_some() || (!s.started && matches!(rest[0], b'"' | b'\''));
        if s.done || rest.first() == Some(&b'\t') || (!one_word && !quoted && is_code_line(rest)) {
            return s.abandon();
        }
        let rest = if s.started {
            rest
        } else {
            match scalar_start(rest) {
                Some(from) => &rest[from..],
                None => return s.abandon(),
            }
        };
        if let Some(q) =
            s.quote.or_else(|| (!s.started).then(|| rest[0]).filter(|b| matches!(b, b'"' | b'\'')))
        {
            let from = usize::from(!s.started && s.quote.is_none());
            match closing(&rest[from..], q) {
                Some(end) => {
                    let after = rest[from + end + 1..].trim_ascii_start();
                    if !(after.is_empty() || after.starts_with(b"#")) {
                        return s.abandon();
                    }
                    s.quote = None;
                    s.done = true;
                }
                None => s.quote = Some(q),
            }
        } else {
            // A plain scalar's line: no key in it; a comment ends it.
            if rest.ends_with(b":") || memchr::memmem::find(rest, b": ").is_some() {
                return s.abandon();
            }
            if memchr::memmem::find(rest, b" #").is_some() {
                s.done = true;
            }
        }
        s.started = true;
        s.bytes += line.len();
        Below::Value(at)
    }

    /// The block a value key's line opens (`value: |` in an entry whose name names a
    /// secret, `pair.rs`), the key at `key` of `line`.
    pub(crate) fn under_key(line: &[u8], cut: usize, key: usize) -> Block {
        let sign = signed(line, cut);
        let base = if sign { 1 } else { cut };
        Block { indent: key.saturating_sub(base), content: None, sign, lines: 0, below: None }
    }

    /// Where the text of `line` starts (past its view's prefix, `cut`, or its diff sign)
    /// when it is one of the block's lines, or `None` when it ends the block.
    pub(crate) fn line(&mut self, line: &[u8], cut: usize) -> Option<usize> {
        self.lines += 1;
        if self.lines > MAX_LINES {
            return None;
        }
        let at = if self.sign { usize::from(matches!(line.first(), Some(b'+' | b'-' | b' '))) } else { cut };
        let text = &line[at..];
        let indent = blanks(text);
        if indent == text.len() {
            return Some(at);
        }
        let content = *self.content.get_or_insert(indent);
        (indent >= content && content > self.indent).then_some(at)
    }
}

impl Scalar {
    fn abandon(&mut self) -> Below {
        self.abandoned = true;
        Below::Ended
    }

    /// The spans of the value in `lines` (each a line's text past its prefix, and the
    /// diff side it is on, `b'+'`, `b'-'` or none), line by line: the lines folded into one
    /// value as YAML folds them (each line's text, less its indentation, joined by a
    /// space), read after the key as the key's own line would read it. A diff's sides are
    /// two values, each with the lines both sides have.
    pub(crate) fn judge(
        &self,
        lines: &[(&[u8], Option<u8>)],
        reading: Reading,
        rescan: Rescan,
    ) -> Vec<Vec<Span>> {
        let mut out = vec![Vec::new(); lines.len()];
        if self.abandoned {
            return out;
        }
        let sides: &[Option<u8>] =
            if lines.iter().any(|(_, side)| side.is_some()) { &[Some(b'-'), Some(b'+')] } else { &[None] };
        for side in sides {
            let mut folded = self.key.clone();
            folded.push(b' ');
            let value = folded.len();
            // (line, where its text starts in the line, where in `folded`, how long)
            let mut pieces = Vec::new();
            for (i, (text, on)) in lines.iter().enumerate() {
                if on.is_some_and(|b| Some(b) != *side) {
                    continue;
                }
                let t = text.trim_ascii_end();
                let start = t.len() - t.trim_ascii_start().len();
                if start == t.len() {
                    continue;
                }
                if folded.len() > value {
                    folded.push(b' ');
                }
                pieces.push((i, start, folded.len(), t.len() - start));
                folded.extend_from_slice(&t[start..]);
            }
            if pieces.is_empty() {
                continue;
            }
            let spans = match self.judge {
                Judge::Name => rescan(&folded, 0, reading),
                Judge::Entry(named) => super::pair::value_line(&folded, named),
            };
            for span in spans.iter().filter(|s| s.end > value) {
                for &(i, start, at, len) in &pieces {
                    let (from, to) = (span.start.max(at), span.end.min(at + len));
                    if from < to {
                        let s = Span { start: start + from - at, end: start + to - at, rule: span.rule };
                        if !out[i].contains(&s) {
                            out[i].push(s);
                        }
                    }
                }
            }
        }
        out
    }
}

/// Where the scalar starts in the first line below its key, past node properties (a tag,
/// an anchor), when the line can start a plain or quoted scalar (YAML 1.2.2, 7.3.3): not a
/// sequence's item, a collection, an alias, a block scalar's header, a reserved or a key's
/// indicator; not a private key's armour, which the PEM rule reads.
fn scalar_start(rest: &[u8]) -> Option<usize> {
    let mut at = 0;
    while matches!(rest.get(at), Some(b'!' | b'&')) {
        let word = rest[at..].iter().take_while(|b| **b != b' ').count();
        let gap = rest[at + word..].iter().take_while(|b| **b == b' ').count();
        if gap == 0 {
            return None;
        }
        at += word + gap;
    }
    let v = &rest[at..];
    let &first = v.first()?;
    let blank_after = v.get(1).is_none_or(|b| *b == b' ');
    if matches!(first, b'-' | b'?' | b':') && blank_after
        || matches!(
            first,
            b'[' | b']' | b'{' | b'}' | b',' | b'#' | b'&' | b'*' | b'!' | b'|' | b'>' | b'%' | b'@' | b'`'
        )
        || v.starts_with(b"-----BEGIN")
    {
        return None;
    }
    Some(at)
}

/// A line as code writes it, not YAML, though YAML would read it as a scalar's: one that
/// ends a statement, a list's item or an expression that goes on (`;`, `,`, `{`, `}`,
/// `(`, `)`, `&`, `*`, `\\`: a C++ member, a declaration's type, a continued command),
/// holds a comment (`//` after a blank, `/*`, `*/`) or a call (`name(`).
fn is_code_line(text: &[u8]) -> bool {
    matches!(text.last(), Some(b';' | b',' | b'{' | b'}' | b'(' | b')' | b'&' | b'*' | b'\\'))
        || text.starts_with(b"//")
        || memchr::memmem::find(text, b" //").is_some()
        || memchr::memmem::find(text, b"/*").is_some()
        || memchr::memmem::find(text, b"*/").is_some()
        || memchr::memchr_iter(b'(', text)
            .any(|i| i > 0 && (text[i - 1].is_ascii_alphanumeric() || text[i - 1] == b'_'))
}

/// Where the quote `q` closes in `text`: `\"` escapes in double quotes, `''` in single.
fn closing(text: &[u8], q: u8) -> Option<usize> {
    let mut i = 0;
    while i < text.len() {
        match text[i] {
            b'\\' if q == b'"' => i += 1,
            b'\'' if q == b'\'' && text.get(i + 1) == Some(&b'\'') => i += 1,
            b if b == q => return Some(i),
            _ => {}
        }
        i += 1;
    }
    None
}

/// A unified diff's sign, a context line's space or a list's dash before the line: its
/// view leaves a `-` before a blank, and a space, in the line, so the sign is set aside
/// here for the header and each of the block's lines alike.
fn signed(line: &[u8], cut: usize) -> bool {
    cut <= 1 && matches!(line.first(), Some(b'+' | b'-' | b' '))
}

/// The indentation of `text` and where the content starts if the header says, when
/// `text` is `name: |` or `name: >` under a secret's name: a key (quoted or not, after a list's `- `), node properties (`!!str`, `&anchor`), the
/// style, an indentation indicator (1-9) and a chomping indicator (`-`, `+`) in either
/// order, and a comment after a blank.
fn header(text: &[u8]) -> Option<(usize, Option<usize>)> {
    let text = text.trim_ascii_end();
    let text = text.strip_prefix(BOM).unwrap_or(text);
    let indent = blanks(text);
    let mut rest = &text[indent..];
    if let Some(item) = rest.strip_prefix(b"- ") {
        rest = &item[blanks(item)..];
    }
    let key = text.len() - rest.len();
    let quote = rest.first().copied().filter(|q| matches!(q, b'"' | b'\''));
    rest = &rest[usize::from(quote.is_some())..];
    let len =
        rest.iter().take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-')).count();
    let name = &rest[..len];
    rest = &rest[len..];
    if let Some(q) = quote {
        rest = rest.strip_prefix(&[q])?;
    }
    rest = &rest[blanks(rest)..];
    rest = rest.strip_prefix(b":")?;
    let mut sep = blanks(rest);
    if sep == 0 {
        return None;
    }
    rest = &rest[sep..];
    // Node properties: a tag, an anchor.
    for _ in 0..2 {
        if matches!(rest.first(), Some(b'!' | b'&')) {
            let word = rest.iter().take_while(|b| !matches!(b, b' ' | b'\t')).count();
            sep = blanks(&rest[word..]);
            if sep == 0 {
                return None;
            }
            rest = &rest[word + sep..];
        }
    }
    rest = rest.strip_prefix(b"|").or_else(|| rest.strip_prefix(b">"))?;
    let (mut digit, mut chomp) = (None, false);
    while let Some(&b) = rest.first() {
        match b {
            b'1'..=b'9' if digit.is_none() => digit = Some(key + usize::from(b - b'0')),
            b'-' | b'+' if !chomp => chomp = true,
            _ => break,
        }
        rest = &rest[1..];
    }
    let sep = blanks(rest);
    if !(rest.len() == sep || sep > 0 && rest[sep] == b'#') {
        return None;
    }
    name_class_strict(name, Form::Colon).map(|_| (indent, digit))
}

/// A byte order mark, which a file's first line may start with.
const BOM: &[u8] = "\u{feff}".as_bytes();

/// The key's column and the key up to its value as the `name: value` reading is to read
/// it, when `text` is a key that names a secret with nothing after it but node properties
/// (`!!str`, `&pw`) and a comment (`password:`, `- api_token: &t  # rotated`), indented
/// with spaces, as YAML indents.
fn bare_key(text: &[u8]) -> Option<(usize, Vec<u8>)> {
    let text = text.trim_ascii_end();
    let text = text.strip_prefix(BOM).unwrap_or(text);
    // Cheap refusals first: most lines a secret's word is on have more after the colon.
    if !text.ends_with(b":")
        && memchr::memchr(b'#', text).is_none()
        && memchr::memchr2(b'!', b'&', text).is_none()
    {
        return None;
    }
    let indent = text.iter().take_while(|b| **b == b' ').count();
    let mut rest = &text[indent..];
    if let Some(item) = rest.strip_prefix(b"- ") {
        rest = &item[item.iter().take_while(|b| **b == b' ').count()..];
    }
    let column = text.len() - rest.len();
    let quote = rest.first().copied().filter(|q| matches!(q, b'"' | b'\''));
    let mut i = usize::from(quote.is_some());
    let len =
        rest[i..].iter().take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-')).count();
    let name = &rest[i..i + len];
    i += len;
    if let Some(q) = quote {
        (rest.get(i) == Some(&q)).then_some(())?;
        i += 1;
    }
    i += blanks(&rest[i..]);
    (rest.get(i) == Some(&b':')).then_some(())?;
    i += 1;
    let mut key = text[..column + i].to_vec();
    key.extend(properties(&rest[i..])?);
    name_class_strict(name, Form::Colon).map(|_| (column, key))
}

#[cfg(test)]
mod tests {
    use super::{bare_key, header};

    #[test]
    fn headers_as_the_spec_writes_them() {
        for (line, indent) in [
            ("password: |", Some((0, None))),
            ("password: >", Some((0, None))),
            ("  password: |-", Some((2, None))),
            ("password: >+", Some((0, None))),
            ("password: |2", Some((0, Some(2)))),
            ("password: |2-", Some((0, Some(2)))),
            ("password: |-2", Some((0, Some(2)))),
            ("  password: >9+ # comment", Some((2, Some(11)))),
            ("- password: |1", Some((0, Some(3)))),
            ("\"password\": |", Some((0, None))),
            ("'db_password' : |", Some((0, None))),
            ("password: !!str |", Some((0, None))),
            ("password: &pw !!str >-", Some((0, None))),
            ("\tpassword: |\r", Some((1, None))),
            // Not a header, or not a secret's name.
            ("password: |0", None),
            ("password: |22", None),
            ("password: |--", None),
            ("password: |#x", None),
            ("password: |x", None),
            ("password:|", None),
            ("password: \"|\"", None),
            ("description: |", None),
            ("password_file: |", None),
            ("grep password: | sort", None),
            ("echo password: |", None),
        ] {
            assert_eq!(header(line.as_bytes()), indent, "{line:?}");
        }
    }

    /// A key whose value is on the lines below (7.3.3): nothing after its `:` but node
    /// properties (6.9) and a comment; the key kept as the value is to be read after it.
    #[test]
    fn bare_keys_as_the_spec_writes_them() {
        for (line, want) in [
            ("password:", Some((0, "password:"))),
            ("  db_password:  # below", Some((2, "  db_password:"))),
            ("- api_token:", Some((2, "- api_token:"))),
            ("\"password\" :", Some((0, "\"password\" :"))),
            ("password: &pw", Some((0, "password:"))),
            ("password: !!str", Some((0, "password: !!str"))),
            ("password: &pw !!str # x", Some((0, "password: !!str"))),
            ("\u{feff}password:\r", Some((0, "password:"))),
            // A value after it, no blank before a comment or a property, not a secret's
            // name, not a key at the line's start, a tab before it.
            ("password: x", None),
            ("password:#x", None),
            ("password:&pw", None),
            ("password: & x", None),
            ("description:", None),
            ("password_file:", None),
            ("if password:", None),
            ("case token:", None),
            ("\tpassword:", None),
            ("password: |", None),
        ] {
            let got = bare_key(line.as_bytes());
            let got = got.as_ref().map(|(c, k)| (*c, std::str::from_utf8(k).unwrap()));
            assert_eq!(got, want, "{line:?}");
        }
    }
}
