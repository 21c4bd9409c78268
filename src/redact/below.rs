//! A secret on the line below the line that names it: what a command that prints one
//! shows (`cat config/master.key`, `kubectl get secret … {.data.password} | base64 -d`,
//! `vault kv get -field=password …`) and what a message announces ("Please use the
//! following password to proceed to installation:", `Your API token:`). The value line
//! has no name of its own, so no reading of it alone finds it; the naming line arms the
//! scanner, and the next non-blank line is judged as that name's value.
//!
//! A command typed at a prompt whose own words name a secret (`cat ~/.vault_pass`,
//! `aws ecr get-login-password`, `heroku auth:token`, `op item get … --fields password`,
//! `pass show x`) makes every line it prints, up to the next prompt, a value position:
//! such a line that is one token shaped as a secret ([`is_output_secret`]) is one.

use super::value::{self, Class, Form, name_class, should_redact};

/// Blank lines that may come between the naming line and its value.
pub(crate) const BLANKS: u8 = 2;

/// What a line says of the line below it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Named {
    /// Blank lines still allowed before the value.
    pub blanks: u8,
    /// The prompt the command was typed at: output without a final newline runs into the
    /// next prompt (`T9VRSYoVv1GWbReZdev@box:~/proj$ `), which ends the value there.
    pub prompt: Option<Vec<u8>>,
    /// The rule that reports it.
    pub rule: &'static str,
    /// A declaration left open at the end of its line (`const API_KEY =`): the value is a
    /// quoted literal, judged by the name's class.
    pub literal: Option<Class>,
    /// Lines of a command's output still to read, each a value position: a command whose
    /// words name a secret prints it among other lines (`heroku auth:token` warns first)
    /// or over several (`cat /etc/mongo/keyfile`). 0: the next non-blank line only.
    pub output: u16,
}

/// Lines of a command's output read as its values, at most.
pub(crate) const OUTPUT_LINES: u16 = 64;

/// Whether a word, or two beside each other (`api key`), names a secret as the value
/// judge reads names (`password`, `token`, `initialAdminPassword`, `master.key`).
fn names_a_secret(words: &[&str]) -> bool {
    let named = |w: &str| name_class(w.as_bytes(), Form::Env).is_some();
    words.iter().any(|w| named(w)) || words.windows(2).any(|p| named(&format!("{}_{}", p[0], p[1])))
}

/// Whether `text` (a line past its view's prefix) names a secret that the next line
/// holds.
pub(crate) fn names_what_follows(text: &[u8]) -> Option<Named> {
    let t = std::str::from_utf8(text).ok()?.trim();
    if t.len() > 512 {
        return None;
    }
    if let Some(class) = super::declare::left_open(t.as_bytes()) {
        return Some(Named { blanks: 0, prompt: None, rule: "declaration", literal: Some(class), output: 0 });
    }
    if let Some((prompt, command)) = prompted(t) {
        return names_of_command(command, Some(prompt));
    }
    // A message: a few words ending in a colon, one of the last of them a secret's noun
    // (`…the following password to proceed to installation:`, `…app password for "Mail":`).
    // Written as a sentence is: capitalised, no code's punctuation (`def apop(self,
    // password):` and `for token in self:` are code).
    if !t.ends_with(':')
        || !t.starts_with(|c: char| c.is_ascii_uppercase())
        || t.contains(['(', ')', '[', ']', '{', '}', '=', ';'])
    {
        return None;
    }
    let words: Vec<&str> = t
        .trim_end_matches(':')
        .split_whitespace()
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric() && c != '-'))
        .collect();
    let last = &words[words.len().saturating_sub(8)..];
    (words.len() >= 3 && names_a_secret(last)).then_some(Named {
        blanks: BLANKS,
        prompt: None,
        rule: "prose",
        literal: None,
        output: 0,
    })
}

/// What a command's words say of what it prints, when they name a secret: the next line
/// is it (a secret store's read of one field), or every line it prints is a value
/// position ([`names_its_output`]). `prompt`: the one it was typed at in a terminal, where
/// output without a final newline runs into the next; none for a command whose output
/// is recorded apart from it (a transcript's tool call and its result).
pub(crate) fn names_of_command(command: &str, prompt: Option<&str>) -> Option<Named> {
    let prompt = prompt.map(|p| p.as_bytes().to_vec());
    if prints_a_secret(command) {
        return Some(Named { blanks: 0, prompt, rule: "key-file-shown", literal: None, output: 0 });
    }
    names_its_output(command).then_some(Named {
        blanks: 0,
        prompt,
        rule: "command-output",
        literal: None,
        output: OUTPUT_LINES,
    })
}

/// The length of a shell's prompt (with the blank after it) at the start of `line`, as a
/// terminal shows a command typed at it: a word ending in `$`, `#` or `%` that holds `@`,
/// `:` or `~` or is that sign alone (`dev@box:~/proj$ `, `root@h:/# `, `$ `), its colours'
/// escapes included.
pub(crate) fn prompt_len(line: &[u8]) -> Option<usize> {
    let lead = line.len() - line.trim_ascii_start().len();
    let t = &line[lead..line.len().min(lead + 256)];
    let end = t.iter().position(|b| matches!(b, b'$' | b'#' | b'%'))?;
    let prompt = &t[..=end];
    let looks = prompt.iter().any(|b| matches!(b, b'@' | b':' | b'~')) || prompt.len() == 1;
    (looks && !prompt.iter().any(u8::is_ascii_whitespace) && t.get(end + 1) == Some(&b' '))
        .then_some(lead + end + 2)
}

/// The prompt (with the blank after it) and the command of a line typed at a shell.
fn prompted(t: &str) -> Option<(&str, &str)> {
    let n = prompt_len(t.as_bytes())?;
    // The prompt ends with an ASCII sign and a blank: `n` is a character boundary.
    Some((t.get(..n)?.trim_start(), t.get(n..)?.trim()))
}

/// A line of a command's output: the value on it, and whether it ends the output (the
/// next prompt starts it, or the output ran into it: `T9VRSYoVv1GWbReZdev@box:~/proj$ `).
pub(crate) fn output_line(text: &[u8], named: &Named) -> (Option<(usize, usize)>, bool) {
    let t = visible(text);
    // A PEM block is the PEM rule's: a certificate's body is public, a private key's
    // is read there.
    if prompt_len(t).is_some() || super::heredoc::is_armour(t) {
        return (None, true);
    }
    let ran_into = named
        .prompt
        .as_deref()
        .map(<[u8]>::trim_ascii)
        .filter(|p| !p.is_empty())
        .is_some_and(|p| memchr::memmem::find(t, p).is_some());
    (value_below(text, named), ran_into)
}

/// What a terminal shows of a line: past the escapes and carriage returns before its text
/// (`\x1b[?2004l\r` after a command, bracketed paste turned off).
fn visible(text: &[u8]) -> &[u8] {
    let mut t = text;
    loop {
        match t {
            [b'\r', rest @ ..] => t = rest,
            [0x1b, b'[', rest @ ..] => match rest.iter().position(|b| (0x40..=0x7e).contains(b)) {
                Some(end) => t = &rest[end + 1..],
                None => return t,
            },
            _ => return t,
        }
    }
}

/// Commands that print about files, or search for what their words name, rather than
/// what those words name: `ls ~/.password-store`, `grep -r token src/`, `sha256sum
/// secret.key`, `man pass`. Their words say nothing of their output's lines.
const NOT_CONTENT: &[&str] = &[
    "ls",
    "ll",
    "la",
    "tree",
    "stat",
    "file",
    "du",
    "df",
    "wc",
    "find",
    "fd",
    "locate",
    "grep",
    "egrep",
    "fgrep",
    "rg",
    "ag",
    "ack",
    "sha1sum",
    "sha224sum",
    "sha256sum",
    "sha384sum",
    "sha512sum",
    "md5sum",
    "b2sum",
    "cksum",
    "shasum",
    "chmod",
    "chown",
    "chgrp",
    "rm",
    "mv",
    "cp",
    "mkdir",
    "touch",
    "ln",
    "which",
    "type",
    "whereis",
    "man",
    "help",
    "apropos",
    "history",
    "tmux",
    "screen",
    "ssh",
    "mosh",
];

/// Extensions of source code and documents: a file named for a secret's subject
/// (`tokenizer.py`, `password_reset.md`) holds code or prose about it, not the secret.
const CODE_EXT: &[&str] = &[
    "py", "rs", "js", "mjs", "cjs", "ts", "tsx", "jsx", "go", "rb", "java", "kt", "c", "h", "cc", "cpp",
    "hpp", "cs", "php", "swift", "scala", "pl", "pm", "sh", "bash", "zsh", "md", "rst", "html", "htm", "css",
    "scss", "adoc", "tex", "txt.gz", "lock", "log", "sql", "vue", "svelte", "ex", "exs", "erl", "lua",
];

/// Whether a command's own words name a secret, so that what it prints is one: a
/// sub-command, a switch, a field or a file whose name names a password, a token, a key
/// or a secret, as the value judge reads names (`get-login-password`, `auth:token`,
/// `--fields label=password`, `--show-secrets`, `.vault_pass`, `/etc/mongo/keyfile`), or
/// the command itself (`pass`, `gopass`). A name given a value on the line names that
/// value, not the output (`--password X`, `PGPASSWORD=x`, `password X`, a URL's
/// `?private_token=…`). Not when its standard output goes to a file, for a command that
/// prints about files or searches ([`NOT_CONTENT`]) or asks for help, nor for a line
/// after a prompt that is no command (a message, a `name = value` or `name: value` line).
pub(crate) fn names_its_output(command: &str) -> bool {
    if command.len() > 1024 || super::shell::stdout_redirected(command.as_bytes()) {
        return false;
    }
    let first = command.split_whitespace().next().unwrap_or_default();
    if !first.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || "./~_$".contains(c))
        || first.ends_with(':')
    {
        return false;
    }
    // What follows `#` is a comment.
    let words: Vec<&str> = command.split_whitespace().take_while(|w| !w.starts_with('#')).collect();
    if words.iter().any(|w| matches!(*w, "=" | ":" | "--help" | "-h" | "help")) {
        return false;
    }
    let stages: Vec<&[&str]> = words.split(|w| matches!(*w, "|" | "|&")).collect();
    let cmd = |st: &[&str]| {
        st.iter()
            .find(|w| !w.contains('=') && !matches!(**w, "sudo" | "command" | "exec" | "env" | "time"))
            .map(|w| w.rsplit('/').next().unwrap_or(w).to_string())
    };
    if stages.last().and_then(|st| cmd(st)).is_none_or(|c| NOT_CONTENT.contains(&c.as_str())) {
        return false;
    }
    stages.iter().any(|st| {
        st.iter().enumerate().any(|(i, w)| {
            let w = w.trim_matches(|c| matches!(c, '"' | '\''));
            if let Some((name, value)) = w.split_once('=') {
                // `NAME=x`, `--password=x`: a name given its value; `label=password`,
                // `-field=password`: a field selected, which the output holds.
                return !word_names_a_secret(name) && word_names_a_secret(value);
            }
            // `--password X`, `password X`: the word after is the named value.
            let given = st.get(i + 1).map(|n| n.trim_matches(|c| matches!(c, '"' | '\''))).is_some_and(|n| {
                !n.starts_with('-') && !n.is_empty() && should_redact(Class::Secret, n.as_bytes())
            });
            !given && word_names_a_secret(w)
        })
    })
}

/// Whether one word of a command names a secret: a path's or a URL's last part (less its
/// query, its fragment and a trailing `file`: `keyfile`), or a folder of it named for what
/// it holds; or the word's parts between a field's or an option's punctuation
/// (`auth:token`, `get-login-password`, `keys`).
fn word_names_a_secret(word: &str) -> bool {
    let word = word.trim_start_matches('-');
    let word = word.split(['?', '#']).next().unwrap_or_default();
    // A URL's host is a server's name, no folder of what it holds
    // (`https://token.actions.githubusercontent.com/.well-known/jwks`): its path is read.
    let word = match word.split_once("://") {
        Some((_, rest)) => rest.split_once('/').map_or("", |(_, path)| path),
        None => word,
    };
    let path = word.contains('/') || word.starts_with('.') || word.starts_with('~');
    let parts: Vec<&str> = if path {
        // A folder named for what it holds says so of its files (`/run/secrets/db`,
        // `…/serviceaccount/token`); one named for a subject (`src/auth/`) does not.
        let (dirs, file) = word.rsplit_once('/').unwrap_or(("", word));
        let holds = |d: &str| {
            let d = d.to_ascii_lowercase();
            ["secret", "token", "credential", "password", "passwd"].iter().any(|w| d.contains(w))
        };
        let code = file
            .rsplit_once('.')
            .is_some_and(|(_, ext)| CODE_EXT.contains(&ext.to_ascii_lowercase().as_str()));
        if !code && dirs.split('/').any(holds) {
            return true;
        }
        vec![file]
    } else {
        word.split(|c: char| "{}[]\"'=:,@$()<>`".contains(c)).collect()
    };
    parts.into_iter().any(|part| {
        let part = part.trim_start_matches(['-', '.', '~']);
        if part.is_empty() || part.len() > 64 {
            return false;
        }
        if part.rsplit_once('.').is_some_and(|(_, ext)| CODE_EXT.contains(&ext.to_ascii_lowercase().as_str()))
        {
            return false;
        }
        let lower = part.to_ascii_lowercase();
        let stem = if path {
            lower.strip_suffix("file").filter(|s| !s.is_empty()).unwrap_or(&lower)
        } else {
            &lower
        };
        let stem = stem.trim_end_matches(['_', '-', '.']);
        // A session named on a command line is a terminal's or a login's, whose output is
        // the session itself (`tmux attach-session`, `loginctl show-session`).
        let segments = value::segments(stem.as_bytes());
        if segments.iter().any(|s| s.starts_with("session")) {
            return false;
        }
        name_class(stem.as_bytes(), Form::Env).is_some()
    })
}

/// Whether a line a command printed, alone on its line, is shaped as a secret: one token
/// that a generator made, a hex key, a password of words, or a typed password (letters of
/// both cases and digits, among few symbols); not a word, a path, a file's or a
/// package's name, a version, an identifier, a number, a UUID, a short hex id or a
/// commit's hash, nor a line of box drawing.
pub(crate) fn is_output_secret(v: &[u8]) -> bool {
    if !(8..=512).contains(&v.len()) || v.iter().any(|b| b.is_ascii_whitespace() || !b.is_ascii_graphic()) {
        return false;
    }
    if !should_redact(Class::Secret, v) || v.ends_with(b":") {
        return false;
    }
    // `DB_PASSWORD=x`: a name and its value, which the rules read as such.
    let name = v.iter().take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-')).count();
    if name > 0 && v.get(name) == Some(&b'=') && v[0].is_ascii_alphabetic() {
        return false;
    }
    if v.iter().all(|b| b.is_ascii_hexdigit() || *b == b'-') {
        return value::is_hex_key(v);
    }
    let (upper, lower, digit) = (
        v.iter().any(u8::is_ascii_uppercase),
        v.iter().any(u8::is_ascii_lowercase),
        v.iter().any(u8::is_ascii_digit),
    );
    let symbols = v.iter().filter(|b| !b.is_ascii_alphanumeric()).count();
    let structural = |b: Option<&u8>| b.is_some_and(|b| b"+|[]{}()<>#=-".contains(b));
    let typed = upper
        && lower
        && digit
        && v.len() <= 64
        && symbols * 3 <= v.len()
        && !structural(v.first())
        && !structural(v.last().filter(|_| !v.ends_with(b"==")));
    value::is_generated(v) || value::is_password_of_words(v) || typed
}

/// Whether a command prints a secret on its own: a file whose name says it holds one, a
/// secret store's read of one field, or a Kubernetes secret decoded.
fn prints_a_secret(command: &str) -> bool {
    let lower = command.to_ascii_lowercase();
    if super::shell::stdout_redirected(lower.as_bytes()) {
        return false;
    }
    let stages: Vec<&str> = lower.split('|').map(str::trim).collect();
    let last = stages.last().copied().unwrap_or_default();
    let words: Vec<&str> = last.split_whitespace().collect();
    // A path, a field or a JSON path names a secret when one of its words does.
    let named = |s: &str| names_a_secret(&s.split(|c: char| "/{}[]\"'=:,".contains(c)).collect::<Vec<_>>());
    // `… | base64 -d` of a field named as a secret.
    if matches!(words.as_slice(), ["base64", "-d" | "--decode" | "-D"]) {
        return stages.len() > 1 && named(&stages[..stages.len() - 1].join("|"));
    }
    // A file named for a secret that `cat` shows is the command's words naming its
    // output (`names_its_output`).
    match words.as_slice() {
        ["vault", "kv" | "read", ..] => words.iter().any(|w| w.starts_with("-field=") && named(w)),
        ["op", "read", ..] | ["pass", "show", ..] | ["gopass", "show", ..] => true,
        ["security", "find-generic-password" | "find-internet-password", ..] => words.contains(&"-w"),
        ["gcloud", "secrets", "versions", "access", ..] => true,
        ["aws", "secretsmanager", "get-secret-value", ..] => lower.contains("secretstring"),
        _ => false,
    }
}

/// Where in `text` (the line below a naming line) the named value is: the line's one
/// word, cut where the next prompt starts; `None` when the line is not one value.
pub(crate) fn value_below(text: &[u8], named: &Named) -> Option<(usize, usize)> {
    if let Some(class) = named.literal {
        return super::declare::literal_line(text, class);
    }
    let text_start = text.len() - visible(text).len();
    let start = text_start + text[text_start..].iter().position(|b| !b.is_ascii_whitespace())?;
    let mut end = text.len() - text.iter().rev().position(|b| !b.is_ascii_whitespace()).unwrap_or(0);
    if let Some(prompt) = named.prompt.as_deref().map(<[u8]>::trim_ascii_end).filter(|p| !p.is_empty())
        && let Some(at) = memchr::memmem::find(&text[start..end], prompt).filter(|&at| at > 0)
    {
        end = start + at;
    }
    let v = &text[start..end];
    if named.output > 0 {
        return is_output_secret(v).then_some((start, end));
    }
    let one_word = !v.iter().any(u8::is_ascii_whitespace) && (8..=512).contains(&v.len());
    (one_word && should_redact(Class::Secret, v) || is_grouped_app_password(v)).then_some((start, end))
}

/// An app password as Google and Apple show one: four groups of four lower-case letters.
fn is_grouped_app_password(v: &[u8]) -> bool {
    let groups: Vec<&[u8]> = v.split(|b| *b == b' ').collect();
    groups.len() == 4 && groups.iter().all(|g| g.len() == 4 && g.iter().all(u8::is_ascii_lowercase))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_and_messages_that_name_the_line_below() {
        for line in [
            "dev@box:~/proj$ cat config/master.key",
            "dev@box:~/proj$ kubectl -n argocd get secret argocd-initial-admin-secret -o jsonpath=\"{.data.password}\" | base64 -d",
            "$ sudo cat /var/jenkins_home/secrets/initialAdminPassword",
            "u@h:~$ vault kv get -field=password secret/db",
            "Please use the following password to proceed to installation:",
            "Google generated this app password for \"Nextcloud mail\":",
        ] {
            assert!(names_what_follows(line.as_bytes()).is_some(), "{line}");
        }
        for line in [
            "dev@box:~/proj$ cat README.md",
            "dev@box:~/proj$ base64 -d notes.txt",
            "password:",
            "    def apop(self, user, password):",
            "        for token in self:",
            "The steps are:",
            "Run the following command:",
        ] {
            assert!(names_what_follows(line.as_bytes()).is_none(), "{line}");
        }
    }

    /// Every line a command prints, up to the next prompt, when the command's words name
    /// a secret; only a line that is one token shaped as one.
    #[test]
    fn a_command_that_names_a_secret_has_its_output_lines_judged() {
        for (text, want) in [
            (
                "dev@box:~/proj$ heroku auth:token\n ›   Warning: token will expire\nHRKU-AA8i8ltf3AZLWc8Ce8E5qbmt3n8Lom7W3gzvp\ndev@box:~/proj$ ",
                "dev@box:~/proj$ heroku auth:token\n ›   Warning: token will expire\n[REDACTED]\ndev@box:~/proj$ ",
            ),
            (
                "$ cat /etc/mongo/keyfile\nKn7YzJsFb+KDOBSnb1ENh7pJHf+TQyM5X57yYSdsJAP6\nDSaYqs7M8sV5UCaVR9oF08aFUeRT4SN31MAv/h5VOo1n\n$ ls\nKn8YzJsFb1KDOBSnb1ENh7pJHf2TQyM5X57yYSdsJAP6\n",
                "$ cat /etc/mongo/keyfile\n[REDACTED]\n[REDACTED]\n$ ls\nKn8YzJsFb1KDOBSnb1ENh7pJHf2TQyM5X57yYSdsJAP6\n",
            ),
            (
                "u@h:~$ security find-generic-password -s db -w\nsaffron.lotus.walrus.basil7\nu@h:~$ ",
                "u@h:~$ security find-generic-password -s db -w\n[REDACTED]\nu@h:~$ ",
            ),
            (
                "\x1b[?2004h\x1b[01;32mdev@box\x1b[00m:~$ gh auth token\r\n\x1b[?2004l\rgho_notaformat8B7wYTUq49oV4U5jDfoK\r\n",
                "\x1b[?2004h\x1b[01;32mdev@box\x1b[00m:~$ gh auth token\r\n\x1b[?2004l\r[REDACTED]\r\n",
            ),
        ] {
            assert_eq!(crate::redact::redact(text), want);
        }
    }

    /// Look-alikes: a command that names no secret, prints about files or searches, sends
    /// its output to a file or asks for help; and lines that are no secret's shape.
    #[test]
    fn output_that_is_no_secret_or_of_no_named_command_is_left() {
        for text in [
            "dev@box:~$ cat package.json\nKx9vQ2mZp4Lw8Rt7Yb3N\ndev@box:~$ ",
            "dev@box:~$ node --version\nv20.11.1\n",
            "dev@box:~$ grep -rl token src/\nsrc/TokenStore2.rs\n",
            "dev@box:~$ ls ~/.password-store\nGithub2Work.gpg\n",
            "dev@box:~$ cat .vault_pass > /tmp/x\nEmber!Orbit7537\n",
            "dev@box:~$ vault token --help\nUsage2Token!x\n",
            "dev@box:~$ cat src/tokenizer.py\nTokenizerBase2x\n",
            "dev@box:~$ tmux attach-session -t key\nKx9vQ2mZp4Lw8Rt7Yb3N\n",
            // A host named for a token serves more than tokens; the path says what.
            "dev@box:~$ curl -s https://token.actions.githubusercontent.com/.well-known/openid-configuration | jq -r .jwks_uri | head -c 40\nsPfKy4F3Hg1TqxvG7ZVbYd2o5nW8aJ1uRcL0mXeA\n",
            // A certificate's body; and `buypass` ends with what the name judge reads as
            // a password.
            "dev@box:~$ cat Buypass_Class_3_Root_CA.crt\n-----BEGIN CERTIFICATE-----\nMIIFWTCCA0GgAwIBAgIBAjANBgkqhkiG9w0BAQsFADBOMQswCQYDVQQGEwJOTzEd\n-----END CERTIFICATE-----\n",
            "dev@box:~$ cat /usr/share/doc/passwd/examples/passwd.expire.cron\n#!/usr/bin/perl\n",
        ] {
            assert_eq!(crate::redact::redact(text), text);
        }
        for v in [
            "/usr/lib/x86_64-linux-gnu",
            "v1.2.3",
            "keyring-24.3.1",
            "README.md",
            "e6e30b29-cf0c-47da-8639-2dcd42a295b7",
            "3f4e1a2b9c7d",
            "5d41402abc4b2a76b9719d911017c592aabbccdd",
            "+----[SHA256]-----+",
            "metadata:",
            "Successfully",
            "12345678",
            "Kx9vQ2 mZp4Lw8",
            "TokenStore",
        ] {
            assert!(!is_output_secret(v.as_bytes()), "{v}");
        }
        for v in ["Ember!Orbit7537", "comet-maple-nimbus-cactus31", "c5214417d8d3998e485a368a2b3bc694"] {
            assert!(is_output_secret(v.as_bytes()), "{v}");
        }
    }

    #[test]
    fn the_value_below_is_one_word_cut_at_the_next_prompt() {
        let command = names_what_follows(b"dev@box:~/proj$ cat config/master.key").unwrap();
        let line = b"T9VRSYoVv1GWbReZdev@box:~/proj$ ";
        assert_eq!(value_below(line, &command), Some((0, 16)));
        assert_eq!(value_below(b"c5214417d8d3998e485a368a2b3bc694", &command), Some((0, 32)));
        let message = names_what_follows(b"Your new API token:").unwrap();
        assert_eq!(value_below(b"    djjb wzcj lfcx lxqv", &message), Some((4, 23)));
        for not in [&b"File encrypted and saved."[..], b"see the docs", b"short", b"/var/lib/secret.txt"] {
            assert_eq!(value_below(not, &message), None, "{}", String::from_utf8_lossy(not));
        }
    }
}
