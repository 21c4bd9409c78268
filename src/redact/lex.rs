//! A small shell lexer: enough of POSIX quoting to find "the word after `--password`" and
//! "the `echo` before `| sudo -S`", with byte offsets back into the original line.
//!
//! It is deliberately forgiving. History lines are often not valid shell (prompts pasted
//! into scrollback, fish syntax, unterminated quotes), and a lexer that gave up on them
//! would let their secrets through. Unclosed quotes run to the end of the line.

/// One word, with its text after quote removal and where each byte of it came from.
/// It borrows from the [`Lexed`] line it is a word of.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Word<'a> {
    pub text: &'a [u8],
    /// `map[i]` is the offset in the line of `text[i]`.
    map: &'a [u32],
}

impl Word<'_> {
    /// The span of the line that holds `text[from..]`, quotes around it excluded.
    pub fn span_from(&self, from: usize) -> Option<(usize, usize)> {
        self.span(from, self.text.len())
    }

    /// Whether `text[from..]` stands in the line as it is: no quote or escape removed.
    pub fn is_verbatim(&self, from: usize) -> bool {
        self.map.get(from..).is_some_and(|m| m.windows(2).all(|w| w[1] == w[0] + 1))
    }

    /// How many bytes of `text[from..]` stand in the line as they are, from `from` up to
    /// the first quote or escape removed.
    pub fn verbatim_len(&self, from: usize) -> usize {
        let Some(m) = self.map.get(from..) else { return 0 };
        if m.is_empty() {
            return 0;
        }
        1 + m.windows(2).take_while(|w| w[1] == w[0] + 1).count()
    }

    /// The span of the line that holds `text[from..to]`.
    pub fn span(&self, from: usize, to: usize) -> Option<(usize, usize)> {
        if from >= to || to > self.text.len() {
            return None;
        }
        Some((self.map[from] as usize, self.map[to - 1] as usize + 1))
    }
}

#[derive(Debug, Clone, Copy)]
pub(crate) enum Tok<'a> {
    Word(Word<'a>),
    /// `|` or `|&`.
    Pipe,
    /// `;`, `&&`, `||`, `&`, `(`, `)`: the start of a new command.
    Sep,
    /// `<<<`: the next word is the command's standard input.
    HereString,
    /// `<<` or `<<-` (`strip_tabs`): the next word is a here-document's delimiter.
    HereDoc {
        strip_tabs: bool,
    },
    /// `<`, `>`, `>>`, `2>`, …: the next word is a file.
    Redirect,
}

/// What a token is, with a word's place in [`Lexed`]'s buffers.
#[derive(Debug, Clone, Copy)]
enum Kind {
    Word { start: u32, end: u32 },
    Pipe,
    Sep,
    HereString,
    HereDoc(bool),
    Redirect,
}

/// A lexed line: every word's text in one buffer, where each byte came from in another.
/// A line's words are lexed often (every line a secret's name wakes, and again each
/// quoted string in it), and two allocations per word were most of what that cost.
#[derive(Debug, Default)]
pub(crate) struct Lexed {
    text: Vec<u8>,
    map: Vec<u32>,
    toks: Vec<Kind>,
    /// A quote was still open at the line's end.
    pub open_quote: bool,
}

impl Lexed {
    /// The tokens, in order.
    pub fn tokens(&self) -> impl Iterator<Item = Tok<'_>> {
        self.toks.iter().map(|k| match *k {
            Kind::Word { start, end } => {
                let (start, end) = (start as usize, end as usize);
                Tok::Word(Word { text: &self.text[start..end], map: &self.map[start..end] })
            }
            Kind::Pipe => Tok::Pipe,
            Kind::Sep => Tok::Sep,
            Kind::HereString => Tok::HereString,
            Kind::HereDoc(strip_tabs) => Tok::HereDoc { strip_tabs },
            Kind::Redirect => Tok::Redirect,
        })
    }
}

/// The word being read: where its bytes start in the buffers, once it has begun.
struct Lexer {
    out: Lexed,
    word: Option<usize>,
}

impl Lexer {
    fn begin(&mut self) {
        if self.word.is_none() {
            self.word = Some(self.out.text.len());
        }
    }

    fn push(&mut self, b: u8, at: usize) {
        self.begin();
        self.out.text.push(b);
        self.out.map.push(at as u32);
    }

    /// The bytes of the word being read.
    fn current(&self) -> Option<&[u8]> {
        self.word.map(|start| &self.out.text[start..])
    }

    fn flush(&mut self) {
        if let Some(start) = self.word.take() {
            self.out.toks.push(Kind::Word { start: start as u32, end: self.out.text.len() as u32 });
        }
    }

    fn token(&mut self, kind: Kind) {
        self.flush();
        self.out.toks.push(kind);
    }

    /// Whether the quote at `at` is opened by an unescaped `$` just before it (`$'…'`,
    /// `$"…"`): the `$` then belongs to the quoting, not to the word's text, which is
    /// the quoted literal (bash and zsh read `$'abc'` as `abc`). Drops that `$`.
    fn dollar_quote(&mut self, line: &[u8], at: usize) -> bool {
        let opens = at >= 1
            && line[at - 1] == b'$'
            && (at < 2 || line[at - 2] != b'\\')
            && self.out.map.last() == Some(&((at - 1) as u32))
            && self.current().is_some_and(|w| w.last() == Some(&b'$'));
        if opens {
            self.out.text.pop();
            self.out.map.pop();
        }
        opens
    }

    /// Drops the word being read.
    fn discard(&mut self) {
        if let Some(start) = self.word.take() {
            self.out.text.truncate(start);
            self.out.map.truncate(start);
        }
    }

    /// Reads the quoted stretch whose opening quote is at `open`, up to `close`, into the
    /// word; a backslash before a byte that `escapes` accepts stands for that byte.
    /// Returns where reading goes on, past the closing quote.
    fn quoted(&mut self, line: &[u8], open: usize, close: u8, escapes: impl Fn(u8) -> bool) -> usize {
        self.begin();
        let n = line.len();
        let mut i = open + 1;
        while i < n && line[i] != close {
            if line[i] == b'\\' && i + 1 < n && escapes(line[i + 1]) {
                self.push(line[i + 1], i + 1);
                i += 2;
                continue;
            }
            self.push(line[i], i);
            i += 1;
        }
        self.out.open_quote |= i >= n;
        i + 1
    }
}

impl Lexer {
    /// A here-string, a here-document or a redirect starting at `line[i]`; where the
    /// next token starts.
    fn angle(&mut self, line: &[u8], mut i: usize) -> usize {
        let n = line.len();
        if line[i..].starts_with(b"<<<") {
            self.token(Kind::HereString);
            return i + 3;
        }
        // `3<<EOF`, `2>` and `&>`: a lone fd number before the arrow belongs to it.
        if self.current().is_some_and(|w| w.iter().all(u8::is_ascii_digit)) {
            self.discard();
        }
        if line[i..].starts_with(b"<<") {
            let strip_tabs = line.get(i + 2) == Some(&b'-');
            self.token(Kind::HereDoc(strip_tabs));
            return i + 2 + usize::from(strip_tabs);
        }
        self.token(Kind::Redirect);
        i += 1;
        while i < n && matches!(line[i], b'<' | b'>' | b'&' | b'|') {
            i += 1;
        }
        // `2>&1`: the target is a descriptor, not a file word we must skip.
        if i < n && line[i].is_ascii_digit() && line[i - 1] == b'&' {
            self.out.toks.pop();
            while i < n && line[i].is_ascii_digit() {
                i += 1;
            }
        }
        i
    }
}

pub(crate) fn lex(line: &[u8]) -> Lexed {
    let mut lx = Lexer {
        out: Lexed {
            text: Vec::with_capacity(line.len()),
            map: Vec::with_capacity(line.len()),
            toks: Vec::with_capacity(16),
            open_quote: false,
        },
        word: None,
    };
    let mut i = 0;
    let n = line.len();
    while i < n {
        let b = line[i];
        match b {
            b' ' | b'\t' | b'\r' | b'\n' => {
                lx.flush();
                i += 1;
            }
            // A backslash ending the line continues the command on the next one.
            b'\\' if i + 1 == n => {
                lx.flush();
                i += 1;
            }
            b'\\' if i + 1 < n => {
                // `\n` inside a word stays two characters: fish and zsh history write
                // embedded newlines that way, and PEM bodies on one line use it too.
                if line[i + 1] == b'\n' {
                    i += 2;
                    continue;
                }
                lx.push(line[i + 1], i + 1);
                i += 2;
            }
            b'\'' => {
                // `$'…'` (ANSI-C quoting) takes backslash escapes; plain '…' takes none.
                let ansi_c = lx.dollar_quote(line, i);
                i = lx.quoted(line, i, b'\'', |_| ansi_c);
            }
            b'"' => {
                lx.dollar_quote(line, i);
                i = lx.quoted(line, i, b'"', |e| matches!(e, b'"' | b'\\' | b'$' | b'`'));
            }
            b'|' => {
                if line.get(i + 1) == Some(&b'|') {
                    lx.token(Kind::Sep);
                    i += 2;
                } else {
                    lx.token(Kind::Pipe);
                    i += if line.get(i + 1) == Some(&b'&') { 2 } else { 1 };
                }
            }
            b';' | b'&' => {
                lx.token(Kind::Sep);
                i += 1;
                while i < n && matches!(line[i], b';' | b'&') {
                    i += 1;
                }
            }
            b'(' | b')'
                if lx.word.is_none() || b == b')' && !lx.current().is_some_and(|w| w.contains(&b'(')) =>
            {
                lx.token(Kind::Sep);
                i += 1;
            }
            b'<' | b'>' => i = lx.angle(line, i),
            _ => {
                lx.push(b, i);
                i += 1;
            }
        }
    }
    lx.flush();
    lx.out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<String> {
        lex(line.as_bytes())
            .tokens()
            .map(|t| match t {
                Tok::Word(w) => String::from_utf8(w.text.to_vec()).unwrap(),
                Tok::Pipe => "|".into(),
                Tok::Sep => ";".into(),
                Tok::HereString => "<<<".into(),
                Tok::HereDoc { strip_tabs: false } => "<<".into(),
                Tok::HereDoc { strip_tabs: true } => "<<-".into(),
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
        assert_eq!(
            words("cat <<'EOF' >out; x<<-\\END 3<<\"A B\""),
            ["cat", "<<", "EOF", ">", "out", ";", "x", "<<-", "END", "<<", "A B"]
        );
    }

    #[test]
    fn spans_point_inside_quotes() {
        let line = br#"--password="p w""#;
        let lexed = lex(line);
        let Some(Tok::Word(w)) = lexed.tokens().next() else { panic!() };
        let (s, e) = w.span_from(11).unwrap();
        assert_eq!(&line[s..e], b"p w");
    }
}
