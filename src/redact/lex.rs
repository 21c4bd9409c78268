//! A small shell lexer: enough of POSIX quoting to find "the word after `--password`" and
//! "the `echo` before `| sudo -S`", with byte offsets back into the original line.
//!
//! It is deliberately forgiving. History lines are often not valid shell (prompts pasted
//! into scrollback, fish syntax, unterminated quotes), and a lexer that gave up on them
//! would let their secrets through. Unclosed quotes run to the end of the line.

/// One word, with its text after quote removal and where each byte of it came from.
#[derive(Debug, Clone)]
pub(crate) struct Word {
    pub text: Vec<u8>,
    /// `map[i]` is the offset in the line of `text[i]`.
    map: Vec<u32>,
}

impl Word {
    fn new() -> Word {
        // Most words are short: one allocation each instead of growing from empty.
        Word { text: Vec::with_capacity(32), map: Vec::with_capacity(32) }
    }

    /// The span of the line that holds `text[from..]`, quotes around it excluded.
    pub fn span_from(&self, from: usize) -> Option<(usize, usize)> {
        self.span(from, self.text.len())
    }

    /// Whether `text[from..]` stands in the line as it is: no quote or escape removed.
    pub fn is_verbatim(&self, from: usize) -> bool {
        self.map.get(from..).is_some_and(|m| m.windows(2).all(|w| w[1] == w[0] + 1))
    }

    /// The span of the line that holds `text[from..to]`.
    pub fn span(&self, from: usize, to: usize) -> Option<(usize, usize)> {
        if from >= to || to > self.text.len() {
            return None;
        }
        Some((self.map[from] as usize, self.map[to - 1] as usize + 1))
    }
}

#[derive(Debug, Clone)]
pub(crate) enum Tok {
    Word(Word),
    /// `|` or `|&`.
    Pipe,
    /// `;`, `&&`, `||`, `&`, `(`, `)`: the start of a new command.
    Sep,
    /// `<<<`: the next word is the command's standard input.
    HereString,
    /// `<`, `>`, `>>`, `2>`, …: the next word is a file.
    Redirect,
}

fn push(cur: &mut Option<Word>, b: u8, at: usize) {
    let w = cur.get_or_insert_with(Word::new);
    w.text.push(b);
    w.map.push(at as u32);
}

/// Reads the quoted stretch whose opening quote is at `open`, up to `close`, into the
/// word; a backslash before a byte that `escapes` accepts stands for that byte. Returns
/// where reading goes on, past the closing quote.
fn quoted(
    line: &[u8],
    open: usize,
    close: u8,
    cur: &mut Option<Word>,
    escapes: impl Fn(u8) -> bool,
) -> usize {
    cur.get_or_insert_with(Word::new);
    let n = line.len();
    let mut i = open + 1;
    while i < n && line[i] != close {
        if line[i] == b'\\' && i + 1 < n && escapes(line[i + 1]) {
            push(cur, line[i + 1], i + 1);
            i += 2;
            continue;
        }
        push(cur, line[i], i);
        i += 1;
    }
    i + 1
}

pub(crate) fn lex(line: &[u8]) -> Vec<Tok> {
    let mut toks = Vec::new();
    let mut i = 0;
    let n = line.len();
    let mut cur: Option<Word> = None;
    let flush = |cur: &mut Option<Word>, toks: &mut Vec<Tok>| {
        if let Some(w) = cur.take() {
            toks.push(Tok::Word(w));
        }
    };
    while i < n {
        let b = line[i];
        match b {
            b' ' | b'\t' | b'\r' | b'\n' => {
                flush(&mut cur, &mut toks);
                i += 1;
            }
            // A backslash ending the line continues the command on the next one.
            b'\\' if i + 1 == n => {
                flush(&mut cur, &mut toks);
                i += 1;
            }
            b'\\' if i + 1 < n => {
                // `\n` inside a word stays two characters: fish and zsh history write
                // embedded newlines that way, and PEM bodies on one line use it too.
                if line[i + 1] == b'\n' {
                    i += 2;
                    continue;
                }
                push(&mut cur, line[i + 1], i + 1);
                i += 2;
            }
            b'\'' => {
                // `$'…'` (ANSI-C quoting) takes backslash escapes; plain '…' takes none.
                let ansi_c = cur.as_ref().is_some_and(|w| w.text.last() == Some(&b'$'));
                i = quoted(line, i, b'\'', &mut cur, |_| ansi_c);
            }
            b'"' => {
                i = quoted(line, i, b'"', &mut cur, |e| matches!(e, b'"' | b'\\' | b'$' | b'`'));
            }
            b'|' => {
                flush(&mut cur, &mut toks);
                if line.get(i + 1) == Some(&b'|') {
                    toks.push(Tok::Sep);
                    i += 2;
                } else {
                    toks.push(Tok::Pipe);
                    i += if line.get(i + 1) == Some(&b'&') { 2 } else { 1 };
                }
            }
            b';' | b'&' => {
                flush(&mut cur, &mut toks);
                toks.push(Tok::Sep);
                i += 1;
                while i < n && matches!(line[i], b';' | b'&') {
                    i += 1;
                }
            }
            b'(' | b')' if cur.is_none() || b == b')' && !word_has_open_paren(&cur) => {
                flush(&mut cur, &mut toks);
                toks.push(Tok::Sep);
                i += 1;
            }
            b'<' if line[i..].starts_with(b"<<<") => {
                flush(&mut cur, &mut toks);
                toks.push(Tok::HereString);
                i += 3;
            }
            b'<' | b'>' => {
                // `2>` and `&>`: a lone fd number before the arrow belongs to the redirect.
                if cur.as_ref().is_some_and(|w| w.text.iter().all(u8::is_ascii_digit)) {
                    cur = None;
                }
                flush(&mut cur, &mut toks);
                toks.push(Tok::Redirect);
                i += 1;
                while i < n && matches!(line[i], b'<' | b'>' | b'&' | b'|') {
                    i += 1;
                }
                // `2>&1`: the target is a descriptor, not a file word we must skip.
                if i < n && line[i].is_ascii_digit() && line[i - 1] == b'&' {
                    toks.pop();
                    while i < n && line[i].is_ascii_digit() {
                        i += 1;
                    }
                }
            }
            _ => {
                push(&mut cur, b, i);
                i += 1;
            }
        }
    }
    flush(&mut cur, &mut toks);
    toks
}

fn word_has_open_paren(cur: &Option<Word>) -> bool {
    cur.as_ref().is_some_and(|w| w.text.contains(&b'('))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<String> {
        lex(line.as_bytes())
            .into_iter()
            .map(|t| match t {
                Tok::Word(w) => String::from_utf8(w.text).unwrap(),
                Tok::Pipe => "|".into(),
                Tok::Sep => ";".into(),
                Tok::HereString => "<<<".into(),
                Tok::Redirect => ">".into(),
            })
            .collect()
    }

    #[test]
    fn quotes_and_operators() {
        assert_eq!(
            words(r#"echo 'a b' "c\"d" e\ f | sudo -S x && y <<< z 2>&1 > out"#),
            ["echo", "a b", "c\"d", "e f", "|", "sudo", "-S", "x", ";", "y", "<<<", "z", ">", "out"]
        );
        assert_eq!(words("X=$(cat f) y"), ["X=$(cat", "f", ";", "y"]);
    }

    #[test]
    fn spans_point_inside_quotes() {
        let line = br#"--password="p w""#;
        let Tok::Word(w) = &lex(line)[0] else { panic!() };
        let (s, e) = w.span_from(11).unwrap();
        assert_eq!(&line[s..e], b"p w");
    }
}
