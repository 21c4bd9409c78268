//! Views: the prefixes a tool puts before each line of a file it shows.
//!
//! Claude Code's `Read` numbers every line (`     3→`), `cat -n` and `nl` put the number
//! and a tab, `grep -n` and `rg -n` put `path:12:` before a match and `path-11-` before a
//! context line, a unified diff puts `+`, `-` or a space.
//! Rules that read a file's own syntax (`key = value` at the start of a line, the body of a
//! PEM block) must see the line as it is in the file, so the prefix is set aside before the
//! rules run and written back unchanged after.

/// The length of the view prefix at the start of `line`, or 0.
///
/// Only prefixes that no file line of the formats the rules read starts with are taken:
/// a diff's `+`/`-` is taken only when the next byte is not the same sign, and a `-` only
/// when no space follows, so `---`, `+++`, a PEM `-----BEGIN` line and a `- item` list
/// stay whole.
pub(crate) fn prefix(line: &[u8]) -> usize {
    let spaces = line.iter().take_while(|&&b| b == b' ').count();
    let digits = line[spaces..].iter().take_while(|b| b.is_ascii_digit()).count();
    if digits > 0 && digits <= 9 {
        let after = spaces + digits;
        // Claude Code's `Read`: `     3→` (U+2192).
        if line[after..].starts_with("\u{2192}".as_bytes()) {
            return after + 3;
        }
        // `cat -n`, `nl`: the number right-aligned, then a tab.
        if line.get(after) == Some(&b'\t') {
            return after + 1;
        }
        if spaces == 0 && digits <= GREP_DIGITS {
            // `grep -n` on one file: `12:` before a match, `11-` before a context line.
            // A date (`2024-01-15`) has a digit after its first hyphen.
            match line.get(after) {
                Some(b':') => return after + 1,
                Some(b'-') if !line.get(after + 1).is_some_and(u8::is_ascii_digit) => return after + 1,
                _ => {}
            }
        }
    }
    if spaces == 0 {
        if let Some(n) = grep_prefix(line) {
            return n;
        }
        // `- item` is a YAML or Markdown list, whose rules read the dash.
        if let [sign @ (b'+' | b'-'), next, ..] = line
            && next != sign
            && !(*sign == b'-' && *next == b' ')
        {
            return 1;
        }
    }
    0
}

/// The length of a shell's continuation prompt at the start of `line`, as a terminal
/// shows a command typed over several lines: bash's `> `, and zsh's, which names the
/// constructs still open (`pipe> `, `heredoc> `, `cmdand quote> `).
pub(crate) fn continuation_prompt(line: &[u8]) -> usize {
    // zsh's parser states (`%_`, zsh's `Src/prompt.c`).
    const STATES: &[&[u8]] = &[
        b"for",
        b"while",
        b"repeat",
        b"select",
        b"until",
        b"if",
        b"then",
        b"else",
        b"elif",
        b"math",
        b"cond",
        b"cmdor",
        b"cmdand",
        b"pipe",
        b"errpipe",
        b"foreach",
        b"case",
        b"function",
        b"subsh",
        b"cursh",
        b"array",
        b"quote",
        b"dquote",
        b"bquote",
        b"cmdsubst",
        b"mathsubst",
        b"elif-then",
        b"heredoc",
        b"heredocd",
        b"brace",
        b"braceparam",
        b"always",
    ];
    // A terminal drops the blank after the prompt of an empty line.
    let end = |rest: &[u8]| match rest {
        [b'>'] => Some(1),
        [b'>', b' ', ..] => Some(2),
        _ => None,
    };
    if let Some(n) = end(line) {
        return n;
    }
    let mut at = 0;
    loop {
        let word = line[at..].iter().take_while(|b| b.is_ascii_lowercase() || **b == b'-').count();
        if !STATES.contains(&&line[at..at + word]) {
            return 0;
        }
        at += word;
        if let Some(n) = end(&line[at..]) {
            return at + n;
        }
        if line.get(at) != Some(&b' ') {
            return 0;
        }
        at += 1;
    }
}

/// Line numbers grep prints without a path have at most this many digits: a Telegram
/// bot's token (`123456789:AAH…`) starts with a longer number and a colon, and was read
/// as a line number and the rest of a line.
const GREP_DIGITS: usize = 7;

/// `path:12:` or `path-11-`, as `grep -n` and `rg -n` print a match and a context line
/// over several files (`--` between groups; `rg --column` adds `5:` after a match's
/// number, `grep -b` an offset, neither taken). A path with a space, a colon past a
/// Windows drive, `=` or a quote is not taken: the line is then read whole, as any line.
fn grep_prefix(line: &[u8]) -> Option<usize> {
    let line = &line[..line.len().min(4096)];
    // `grep -Z`, `rg --null`: the path ends with a NUL, then `12:` or `11-` with `-n`.
    if let Some(nul) = memchr::memchr(0, line)
        && nul > 0
        && line[..nul].iter().all(|&b| is_path_byte(b))
    {
        return Some(
            number_between(line, nul, b':').or_else(|| number_between(line, nul, b'-')).unwrap_or(nul + 1),
        );
    }
    let drive = windows_drive(line);
    // A context line: nothing in the path that a file name rarely holds and a command
    // or a token often does, since what is taken for a path is not read for secrets. The
    // path has no colon, so this comes before any `:12:` in the line.
    let path_end = drive + line[drive..].iter().position(|&b| !is_path_byte(b)).unwrap_or(line.len() - drive);
    // A few numbers between hyphens at most are looked at, so that a long line of them
    // costs no more than a few reads of its start.
    let context = memchr::memchr_iter(b'-', &line[..path_end])
        .filter_map(|dash| Some((dash, number_between(line, dash, b'-')?)))
        .take(4)
        .find_map(|(dash, end)| looks_like_path(&line[..dash]).then_some(end));
    if context.is_some() {
        return context;
    }
    let colon = drive + memchr::memchr(b':', &line[drive..])?;
    let path = &line[..colon];
    if path.is_empty() || path.iter().any(|b| b.is_ascii_whitespace() || *b == b'=') {
        return None;
    }
    number_between(line, colon, b':')
}

/// The end of `11-` or `12:` after `sep` at `at` (1 to 9 digits, then `sep` again), when
/// the text after it does not start with a digit (`x.y-12-3` is arithmetic, not a line).
fn number_between(line: &[u8], at: usize, sep: u8) -> Option<usize> {
    let rest = &line[at + 1..];
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    let end = at + 1 + digits + 1;
    (digits > 0
        && digits <= 9
        && rest.get(digits) == Some(&sep)
        && (sep == b':' || !line.get(end).is_some_and(u8::is_ascii_digit)))
    .then_some(end)
}

/// `C:\` or `C:/` at the start of a Windows path: its colon is no separator.
fn windows_drive(line: &[u8]) -> usize {
    match line {
        [d, b':', b'\\' | b'/', ..] if d.is_ascii_alphabetic() => 2,
        _ => 0,
    }
}

/// A byte of a file name: not only ASCII (`données/.env`).
fn is_path_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric()
        || b >= 0x80
        || matches!(b, b'.' | b'_' | b'-' | b'/' | b'\\' | b'~' | b'+' | b'@')
}

/// A directory, or a file name with an extension that starts with a letter (`.env`,
/// `app.ini`): not a word (`a-1-b`), a version (`1.2.3`) or a token's segment, which has
/// a long run of letters and digits (`eyJhbGciOiJIUzI1NiJ9`) that file names seldom have.
fn looks_like_path(path: &[u8]) -> bool {
    let Some(&first) = path.first() else { return false };
    if matches!(first, b'-' | b'+') {
        return false;
    }
    let mut run = 0;
    let mut run_digit = false;
    for &b in path {
        if b.is_ascii_alphanumeric() {
            run += 1;
            run_digit |= b.is_ascii_digit();
            if run >= 16 && run_digit {
                return false;
            }
        } else {
            run = 0;
            run_digit = false;
        }
    }
    let name = path.rsplit(|&b| b == b'/' || b == b'\\').next().unwrap_or(path);
    name.len() < path.len()
        || name
            .iter()
            .rposition(|&b| b == b'.')
            .is_some_and(|dot| name.get(dot + 1).is_some_and(u8::is_ascii_alphabetic))
}

#[cfg(test)]
mod tests {
    use super::prefix;

    #[test]
    fn prefixes_of_each_view() {
        let cases: &[(&str, usize)] = &[
            ("     3\u{2192}aws_secret_access_key = x", 9),
            ("    12\tpassword = x", 7),
            ("12:password = x", 3),
            ("config/app.ini:12:password = x", 18),
            ("+password = x", 1),
            ("-password = x", 1),
            ("--- PASS: TestX (0.05s)", 0),
            ("+++ b/file", 0),
            ("-----BEGIN OPENSSH PRIVATE KEY-----", 0),
            ("+-----BEGIN OPENSSH PRIVATE KEY-----", 1),
            ("https://example.org:8080/x", 0),
            ("password = x", 0),
            ("", 0),
            ("-", 0),
            ("- cmd: mysql -phunter2", 0),
            ("+  password x", 1),
            ("123", 0),
            // grep's and rg's context lines: `path-11-` over several files, `11-` over one.
            ("config/.env-11-DB_PASSWORD=x", 15),
            ("11-aws_secret_access_key = x", 3),
            ("11-", 3),
            ("./src/main.rs-12-    let x = 1;", 17),
            ("keys/id_ed25519-2-b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAE", 18),
            ("@types/node/fs.d.ts-40-x", 23),
            ("C:\\x\\.env-3-a", 12),
            ("C:\\x\\.env:3:a", 12),
            ("-config/.env-3-x", 1),
            // Ordinary text with hyphens and digits.
            ("well-known-thing", 0),
            ("2024-01-15 12:00", 0),
            ("a-1-b", 0),
            ("foo-1.2.3-4-gabcdef", 0),
            ("v1.2-3-beta", 0),
            ("x.y-12-3", 0),
            ("--", 0),
            ("Makefile-3-x", 0),
            // A path with a space or a colon is not taken: anything could be before it.
            ("my dir/x.env-3-a", 0),
            ("a:b.env-3-a", 0),
            ("https://u:pa.ss-1-x@host", 0),
            // Tokens: a bot's id is longer than any line number grep prints, and a
            // segment of a JWT is no file name.
            ("123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawq", 0),
            ("12345678-abcdef", 0),
            ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIx.Sfl-12-KxwRJSMeK", 0),
        ];
        for (line, want) in cases {
            assert_eq!(prefix(line.as_bytes()), *want, "{line:?}");
        }
    }

    #[test]
    fn continuation_prompts_of_bash_and_zsh() {
        let cases: &[(&str, usize)] = &[
            ("> -u root", 2),
            (">", 1),
            ("pipe>   sudo -S x", 6),
            ("heredoc> s3cr3t", 9),
            ("heredocd>       END", 10),
            ("cmdand quote> x", 14),
            ("pipe heredoc>", 13),
            ("echo> x", 0),
            ("pipe > x", 0),
            ("password> x", 0),
            ("", 0),
        ];
        for (line, want) in cases {
            assert_eq!(super::continuation_prompt(line.as_bytes()), *want, "{line:?}");
        }
    }
}
