//! YAML's block scalars: under `password: |` or `password: >` the value is on the lines
//! below, each more indented than the key, and none of them holds a keyword (YAML 1.2.2,
//! 8.1.1, <https://yaml.org/spec/1.2.2/#81-block-scalar-styles>). The header opens the
//! block when the key names a secret; the scanner hands each line after it here to know
//! whether it is the block's, and the rules then take the whole content of each.

use super::value::{Form, name_class_strict};

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
}

impl Block {
    /// The block `line` opens (`cut` the length of its view's prefix) when it is the
    /// header of a block scalar under a secret's name.
    pub(crate) fn opens(line: &[u8], cut: usize) -> Option<Block> {
        let sign = signed(line, cut);
        let text = if sign { &line[1..] } else { &line[cut..] };
        let (indent, content) = header(text)?;
        Some(Block { indent, content, sign, lines: 0 })
    }

    /// The block a value key's line opens (`value: |` in an entry whose name names a
    /// secret, `pair.rs`), the key at `key` of `line`.
    pub(crate) fn under_key(line: &[u8], cut: usize, key: usize) -> Block {
        let sign = signed(line, cut);
        let base = if sign { 1 } else { cut };
        Block { indent: key.saturating_sub(base), content: None, sign, lines: 0 }
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

/// A unified diff's sign, a context line's space or a list's dash before the line: its
/// view leaves a `-` before a blank, and a space, in the line, so the sign is set aside
/// here for the header and each of the block's lines alike.
fn signed(line: &[u8], cut: usize) -> bool {
    cut <= 1 && matches!(line.first(), Some(b'+' | b'-' | b' '))
}

/// How many blanks (spaces, tabs) `text` starts with.
pub(crate) fn blanks(text: &[u8]) -> usize {
    text.iter().take_while(|b| matches!(b, b' ' | b'\t')).count()
}

/// `|`, `>-`, `|2+`: a block scalar's style and indicators, which a `name: value`
/// reading must not take for the value.
pub(crate) fn is_style(v: &[u8]) -> bool {
    matches!(v.first(), Some(b'|' | b'>'))
        && v.len() <= 3
        && v[1..].iter().all(|b| matches!(b, b'1'..=b'9' | b'-' | b'+'))
}

/// The indentation of `text` and where the content starts if the header says, when
/// `text` is `name: |` or `name: >` under a secret's name: a key (quoted or not, after a list's `- `), node properties (`!!str`, `&anchor`), the
/// style, an indentation indicator (1-9) and a chomping indicator (`-`, `+`) in either
/// order, and a comment after a blank.
fn header(text: &[u8]) -> Option<(usize, Option<usize>)> {
    let text = text.trim_ascii_end();
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

#[cfg(test)]
mod tests {
    use super::header;

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
}
