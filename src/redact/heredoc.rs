//! Here-documents: the lines after `cmd <<EOF`, up to a line that is `EOF`, are `cmd`'s
//! standard input (bash manual, "Here Documents"; POSIX `sh`, 2.7.4). When `cmd` reads a
//! secret there (`docker login --password-stdin`, `sudo -S`) or writes what it reads into
//! a key or credential file (`cat > ~/.pgpass`, `tee ~/.vault-token`), each body line is
//! that secret or that file's content, though it holds no keyword. `shell.rs` says which
//! here-documents a command opens and what their bodies are; this module follows the
//! bodies line by line and finds what to redact in them.

use std::collections::VecDeque;

use super::span::Span;
use super::value::{Class, should_redact};

/// What a here-document's body is to the command that reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Body {
    /// Text like any other (`cat <<EOF > README.md`, `python - <<'PY'`).
    Plain,
    /// A secret a line (`--password-stdin`, `sudo -S`); `user:secret` for `chpasswd`.
    Secret { after_user: bool },
    /// A key or credential file's content.
    KeyFile(FileSyntax),
    /// Not a here-document's: a line of a YAML block scalar under a secret's name
    /// (`yaml.rs`), whose content is the secret as a reader's line is.
    BlockValue,
    /// Not a here-document's: the value key's line of an entry whose naming key names a
    /// secret of this class (`pair.rs`).
    PairValue(super::pair::Named),
}

/// The syntax of a key or credential file, where it is known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FileSyntax {
    /// `hostname:port:database:username:password` (libpq's password file).
    Pgpass,
    /// `machine NAME login NAME password STRING account STRING`.
    Netrc,
    /// Blank-separated fields, quoted or not, one of them the secret: see [`BY_POSITION`].
    Fields(Fields),
    /// Anything else: the file's whole content is the secret.
    Other,
}

/// Where a line of blank-separated fields holds its secret.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Fields {
    /// Fields an entry has at least, and at most: a line of prose after the file's output
    /// has more (`The quick brown fox jumps` is no `client server secret` entry).
    pub least: usize,
    pub most: usize,
    /// The secret's field, from 0.
    pub secret: usize,
    /// The secret follows the field's first `:` (`user:password`).
    pub after_colon: bool,
}

/// Files whose lines give a credential by its position alone, no name beside it, by the
/// end of their path (a name too common alone keeps its folder): what a command or an
/// agent's `Read` shows of them is read in their syntax.
pub(crate) const BY_POSITION: &[(&[u8], FileSyntax)] = &[
    // libpq: `hostname:port:database:username:password`.
    (b".pgpass", FileSyntax::Pgpass),
    // PgBouncer's auth_file: `"user" "password"`.
    (
        b"pgbouncer/userlist.txt",
        FileSyntax::Fields(Fields { least: 2, most: 2, secret: 1, after_colon: false }),
    ),
    // Postfix's smtp_sasl_password_maps source: `[relay]:port user:password`.
    (b"sasl_passwd", FileSyntax::Fields(Fields { least: 2, most: 2, secret: 1, after_colon: true })),
    // rsyncd's secrets file: `user:password`.
    (b"rsyncd.secrets", FileSyntax::Fields(Fields { least: 1, most: 1, secret: 0, after_colon: true })),
    // pppd's CHAP and PAP secrets: `client server secret [addresses]`.
    (b"chap-secrets", FileSyntax::Fields(Fields { least: 3, most: 4, secret: 2, after_colon: false })),
    (b"pap-secrets", FileSyntax::Fields(Fields { least: 3, most: 4, secret: 2, after_colon: false })),
];

/// The syntax of a file that gives credentials by position, by its path.
pub(crate) fn by_position(path: &[u8]) -> Option<FileSyntax> {
    BY_POSITION
        .iter()
        .find(|(end, _)| {
            path.ends_with(end) && (path.len() == end.len() || path[path.len() - end.len() - 1] == b'/')
        })
        .map(|(_, syntax)| *syntax)
}

/// The fields of a line (`start..end` of `text`): each one's span, quotes included.
fn fields(text: &[u8], start: usize, end: usize) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut i = start;
    while i < end {
        if text[i].is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let from = i;
        if text[i] == b'"' {
            i += 1;
            while i < end && text[i] != b'"' {
                i += 1 + usize::from(text[i] == b'\\');
            }
            i = (i + 1).min(end);
        } else {
            while i < end && !text[i].is_ascii_whitespace() {
                i += 1;
            }
        }
        out.push((from, i));
    }
    out
}

/// The secret's span in a line of `f`'s syntax, when the line is one: its field without
/// quotes, or what follows the field's first `:`.
fn field_secret(text: &[u8], start: usize, end: usize, f: Fields) -> Option<(usize, usize)> {
    let all = fields(text, start, end);
    let &(mut from, mut to) = all.get(f.secret).filter(|_| (f.least..=f.most).contains(&all.len()))?;
    if to - from >= 2 && text[from] == b'"' && text[to - 1] == b'"' {
        (from, to) = (from + 1, to - 1);
    }
    if f.after_colon {
        from += memchr::memchr(b':', &text[from..to])? + 1;
    }
    (from < to).then_some((from, to))
}

/// A here-document a command opened.
#[derive(Debug)]
pub(crate) struct HereDoc {
    /// Quotes removed: `<<'EOF'` ends at the line `EOF`.
    pub delimiter: Vec<u8>,
    /// `<<-`: tabs before the body's lines and the delimiter are dropped.
    pub strip_tabs: bool,
    pub body: Body,
}

/// Body lines read, for all the here-documents of a command, before they are taken to
/// have no end: a cut file or prose naming a here-document must not have the rest of a
/// file redacted. A password is a line, a key file's content a few; a 4096-bit PEM key,
/// the longest body expected, is 51 lines.
pub(crate) const MAX_BODY_LINES: usize = 64;

/// How the command that opened the here-documents was written, which says how their
/// body lines are.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Form {
    /// In a view (`     3→`): so are its body lines.
    pub view: bool,
    /// As a line of a unified diff (`+cmd`, ` cmd`): so are its body lines, and the
    /// delimiter line may be a context line (` EOF`).
    pub diff: bool,
    /// In zsh's history file: every line of a command but its last ends with `\`.
    pub zsh: bool,
    /// After a prompt, in a terminal's scrollback: every body line follows a continuation
    /// prompt, and a line without one is the command's output or the next prompt (the
    /// body was cut short with Ctrl-C or Ctrl-D).
    pub prompted: bool,
}

/// The bodies still to come, in the order their here-documents were opened.
#[derive(Debug, Default)]
pub(crate) struct Bodies {
    docs: VecDeque<HereDoc>,
    lines: usize,
    form: Form,
}

impl Bodies {
    /// Follows the bodies of `docs` when one of them holds a secret; a body that is
    /// plain text is followed only to know where the next one starts.
    pub fn open(&mut self, docs: Vec<HereDoc>, form: Form) {
        // A delimiter with a backquote is prose quoting a command (`` `<<EOF` ``).
        if docs.iter().all(|d| d.body == Body::Plain)
            || docs.iter().any(|d| d.delimiter.is_empty() || d.delimiter.contains(&b'`'))
        {
            return;
        }
        *self = Bodies { docs: docs.into(), lines: 0, form };
    }

    pub fn active(&self) -> bool {
        !self.docs.is_empty()
    }

    /// What the current body is.
    pub fn body(&self) -> Body {
        self.docs.front().map_or(Body::Plain, |d| d.body)
    }

    /// Where the text of a body line starts: after the command's view prefix and a
    /// terminal's continuation prompt (bash's `> `, zsh's `heredoc> `). Also whether it
    /// had a prompt.
    pub fn cut(&self, body: &[u8]) -> (usize, bool) {
        let view = if self.form.view || self.form.diff { super::view::prefix(body) } else { 0 };
        let prompt = super::view::continuation_prompt(&body[view..]);
        (view + prompt, prompt > 0)
    }

    /// Whether `text` (a body line after its cut) ends the current here-document; the
    /// next one's body, if any, starts below it.
    pub fn ends(&mut self, text: &[u8], prompted: bool) -> bool {
        let Some(doc) = self.docs.front() else { return false };
        let mut t = text;
        if self.form.diff {
            t = t.strip_prefix(b" ").unwrap_or(t);
        }
        if self.form.zsh {
            t = t.strip_suffix(b"\\").unwrap_or(t);
        }
        if doc.strip_tabs {
            // A terminal shows the tabs as spaces.
            let blank = |b: &u8| *b == b'\t' || prompted && *b == b' ';
            t = &t[t.iter().take_while(|b| blank(b)).count()..];
        }
        let ends = t == doc.delimiter.as_slice();
        if ends {
            self.docs.pop_front();
        }
        ends
    }

    /// Counts a body line (`prompted`: it followed a continuation prompt); returns false,
    /// and stops following the bodies, when it cannot be one: past the bound, or without
    /// the prompt a terminal shows before each.
    pub fn count(&mut self, prompted: bool) -> bool {
        self.lines += 1;
        if self.lines > MAX_BODY_LINES || self.form.prompted && !prompted {
            self.docs.clear();
        }
        self.active()
    }

    /// Stops following the bodies after `text` when it ends its command: in zsh's history
    /// file, a line that does not end with `\` is its command's last.
    pub fn after(&mut self, text: &[u8]) {
        if self.form.zsh && !text.ends_with(b"\\") {
            self.docs.clear();
        }
    }
}

/// Where the content of a body line is: blanks around it, and the backslashes zsh's
/// history or a continuation put at its end, are not the secret.
fn content(text: &[u8]) -> (usize, usize) {
    let start = text.len() - text.trim_ascii_start().len();
    let mut end = text.len();
    while end > start && (text[end - 1].is_ascii_whitespace() || text[end - 1] == b'\\') {
        end -= 1;
    }
    (start, end)
}

/// A PEM armour line (`-----BEGIN … KEY-----`): it says what follows, and the PEM rule
/// reads the block.
pub(crate) fn is_armour(text: &[u8]) -> bool {
    [&b"-----BEGIN"[..], b"-----END"].iter().any(|a| memchr::memmem::find(text, a).is_some())
}

/// The secret on a body line read as a password: the whole line, or what follows
/// `user:` for `chpasswd`.
pub(crate) fn secret(text: &[u8], after_user: bool) -> Option<Span> {
    let (mut start, end) = content(text);
    let v = &text[start..end];
    if is_armour(v) {
        return None;
    }
    if after_user {
        start += memchr::memchr(b':', v)? + 1;
    }
    (start < end && should_redact(Class::Password, &text[start..end])).then_some(Span {
        start,
        end,
        rule: "stdin",
    })
}

/// The secrets of a key file's line in its own syntax, or `None` when the syntax is not
/// known and the rules are to read it.
pub(crate) fn in_file(text: &[u8], syntax: FileSyntax) -> Option<Vec<Span>> {
    let (start, end) = content(text);
    if text[start..end].starts_with(b"#") {
        return Some(vec![]);
    }
    match syntax {
        FileSyntax::Pgpass => pgpass(text, start, end).map(|s| s.into_iter().collect()),
        FileSyntax::Netrc => Some(netrc(text, start, end)),
        FileSyntax::Fields(f) => Some(
            field_secret(text, start, end, f)
                .filter(|&(from, to)| should_redact(Class::Password, &text[from..to]))
                .map(|(from, to)| Span { start: from, end: to, rule: "key-file" })
                .into_iter()
                .collect(),
        ),
        FileSyntax::Other => None,
    }
}

/// A line of a key file whose syntax is not known: the whole of it is the secret, or
/// the value of a `name = value` or `name: value` line; a comment, an INI section
/// (`[default]`) and a PEM armour line are kept.
pub(crate) fn whole(text: &[u8]) -> Option<Span> {
    let (mut start, end) = content(text);
    let v = &text[start..end];
    // Redacted already, by the rules or a first pass: what is left of it is not the secret.
    if memchr::memmem::find(v, crate::lok::REDACTED.as_bytes()).is_some()
        || v.starts_with(b"#")
        || is_armour(v)
        || (v.starts_with(b"[") && v.ends_with(b"]") && !v.contains(&b' '))
    {
        return None;
    }
    let name = v.iter().take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-')).count();
    let blanks = |from: usize| v[from..].iter().take_while(|b| matches!(b, b' ' | b'\t')).count();
    let sep = name + blanks(name);
    if name > 0 && matches!(v.get(sep), Some(b'=' | b':')) {
        start += sep + 1 + blanks(sep + 1);
    }
    (start < end && should_redact(Class::Password, &text[start..end])).then_some(Span {
        start,
        end,
        rule: "key-file",
    })
}

/// Whether `text` is a line of a key file in `syntax` as a command shows it (`cat
/// ~/.pgpass`): a comment, or an entry whose fields are where the syntax puts them. The
/// first line that is not ends the file's output.
pub(crate) fn is_line_of(text: &[u8], syntax: FileSyntax) -> bool {
    let (start, end) = content(text);
    let t = &text[start..end];
    if t.starts_with(b"#") {
        return true;
    }
    match syntax {
        // `host:5432:db:user:pw`: the port a number or `*`, the names without blanks
        // (`src/main.rs:12:use std::io;`, grep's output, is no entry).
        FileSyntax::Pgpass => {
            let mut fields = Vec::with_capacity(5);
            let mut from = 0;
            let mut i = 0;
            while i < t.len() && fields.len() < 4 {
                match t[i] {
                    b'\\' => i += 1,
                    b':' => {
                        fields.push(&t[from..i]);
                        from = i + 1;
                    }
                    _ => {}
                }
                i += 1;
            }
            fields.len() == 4
                && pgpass(text, start, end).is_some()
                && fields.iter().all(|f| !f.is_empty() && !f.iter().any(u8::is_ascii_whitespace))
                && (fields[1] == b"*" || fields[1].len() <= 5 && fields[1].iter().all(u8::is_ascii_digit))
        }
        FileSyntax::Fields(f) => field_secret(text, start, end, f).is_some(),
        FileSyntax::Netrc | FileSyntax::Other => false,
    }
}

/// `hostname:port:database:username:password`: the password is the fifth field, to the
/// line's end; `\:` and `\\` stand for themselves
/// (<https://www.postgresql.org/docs/current/libpq-pgpass.html>).
fn pgpass(text: &[u8], start: usize, end: usize) -> Option<Option<Span>> {
    let mut colons = 0;
    let mut i = start;
    while i < end && colons < 4 {
        match text[i] {
            b'\\' => i += 1,
            b':' => colons += 1,
            _ => {}
        }
        i += 1;
    }
    if colons < 4 {
        return None;
    }
    let from = i.min(end);
    Some((from < end && should_redact(Class::Password, &text[from..end])).then_some(Span {
        start: from,
        end,
        rule: "key-file",
    }))
}

/// The words after `password` and `account` on a `.netrc` line.
fn netrc(text: &[u8], start: usize, end: usize) -> Vec<Span> {
    let mut out = Vec::new();
    let mut secret_next = false;
    let mut i = start;
    while i < end {
        if text[i].is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let w = i;
        while i < end && !text[i].is_ascii_whitespace() {
            i += 1;
        }
        let word = &text[w..i];
        if secret_next && should_redact(Class::Password, word) {
            out.push(Span { start: w, end: i, rule: "key-file" });
        }
        secret_next = matches!(word, b"password" | b"account");
    }
    out
}
