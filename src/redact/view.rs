//! Views: the prefixes a tool puts before each line of a file it shows.
//!
//! Claude Code's `Read` numbers every line (`     3→`), `cat -n` and `nl` put the number
//! and a tab, `grep -n` and `rg -n` put `path:12:`, a unified diff puts `+`, `-` or a space.
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
        // `grep -n` on one file: `12:`.
        if spaces == 0 && line.get(after) == Some(&b':') {
            return after + 1;
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

/// `path:12:` as `grep -n`/`rg -n` print it over several files: a path without spaces,
/// then the line number between colons.
fn grep_prefix(line: &[u8]) -> Option<usize> {
    let colon = memchr::memchr(b':', &line[..line.len().min(4096)])?;
    let path = &line[..colon];
    if path.is_empty() || path.iter().any(|b| b.is_ascii_whitespace() || *b == b'=') {
        return None;
    }
    let rest = &line[colon + 1..];
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    (digits > 0 && digits <= 9 && rest.get(digits) == Some(&b':')).then_some(colon + 1 + digits + 1)
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
