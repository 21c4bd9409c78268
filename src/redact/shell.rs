//! Context rules that need to know the command: which flag takes a password, which `-p` is
//! a port, which `echo` feeds `sudo -S`.
//!
//! A line is lexed (see `lex.rs`), cut into commands at `;`/`&&`/`||` and into stages at
//! `|`, and each stage is read as wrappers (`sudo`, `env`, a pasted prompt), a command
//! name, and its arguments. The tables below say, per command, where its secrets sit;
//! they are the data, the code only walks them.

use super::heredoc::{Body, FileSyntax, HereDoc};
use super::lex::{Tok, Word, lex};
use super::span::{Nested, Span};
use super::value::{Class, Form, name_class, name_class_strict, should_redact};

/// Short flags whose value is a secret, per command. `-p` is a password for `mysql` and a
/// port for `ssh`, `psql`, `docker run` and `redis-cli`, so nothing here is global.
struct ShortFlag {
    commands: &'static [&'static str],
    /// Only counts when this word follows the command (`docker login -p`).
    sub: Option<&'static str>,
    flag: &'static str,
    /// `mysql -pX` only: `mysql -p db` prompts, and `db` is the database.
    attached_only: bool,
    value: ValueKind,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum ValueKind {
    /// The whole value is the secret.
    Plain,
    /// `user<sep>password`: only the part after the first separator is the secret.
    UserPass(u8),
}

const MYSQL: &[&str] = &[
    "mysql",
    "mysqldump",
    "mysqladmin",
    "mysqlimport",
    "mysqlcheck",
    "mysqlshow",
    "mariadb",
    "mariadb-dump",
    "mysqlpump",
    "mysqlsh",
];
const MONGO: &[&str] =
    &["mongo", "mongosh", "mongodump", "mongorestore", "mongoexport", "mongoimport", "mongostat", "mongotop"];
const LDAP: &[&str] = &[
    "ldapsearch",
    "ldapadd",
    "ldapmodify",
    "ldapdelete",
    "ldapwhoami",
    "ldappasswd",
    "ldapcompare",
    "ldapmodrdn",
];
const REGISTRY_LOGIN: &[&str] = &[
    "docker", "podman", "buildah", "skopeo", "nerdctl", "helm", "oras", "crane", "cf", "az", "argocd",
    "regctl",
];

const SHORT_FLAGS: &[ShortFlag] = &[
    sf(MYSQL, None, "-p", true, ValueKind::Plain),
    sf(&["7z", "7za", "7zz", "7zr"], None, "-p", true, ValueKind::Plain),
    sf(&["rar", "unrar"], None, "-p", true, ValueKind::Plain),
    sf(&["rar", "unrar"], None, "-hp", true, ValueKind::Plain),
    sf(&["sqlcmd", "bcp", "osql", "isql"], None, "-P", false, ValueKind::Plain),
    sf(&["mosquitto_pub", "mosquitto_sub", "mosquitto_rr"], None, "-P", false, ValueKind::Plain),
    sf(&["zip", "unzip", "zipcloak", "funzip"], None, "-P", false, ValueKind::Plain),
    sf(LDAP, None, "-w", false, ValueKind::Plain),
    sf(&["redis-cli", "valkey-cli", "keydb-cli"], None, "-a", false, ValueKind::Plain),
    sf(&["openssl"], None, "-k", false, ValueKind::Plain),
    sf(&["openssl"], None, "-K", false, ValueKind::Plain),
    sf(&["ssh-keygen"], None, "-N", false, ValueKind::Plain),
    sf(&["ssh-keygen"], None, "-P", false, ValueKind::Plain),
    sf(&["sshpass"], None, "-p", false, ValueKind::Plain),
    sf(&["ipmitool"], None, "-P", false, ValueKind::Plain),
    // SNMP v1/v2c's community string is its password.
    sf(
        &[
            "snmpwalk",
            "snmpget",
            "snmpgetnext",
            "snmpbulkwalk",
            "snmpbulkget",
            "snmpset",
            "snmptable",
            "snmptrap",
        ],
        None,
        "-c",
        false,
        ValueKind::Plain,
    ),
    sf(MONGO, None, "-p", false, ValueKind::Plain),
    sf(&["doctl", "codecov", "cml"], None, "-t", false, ValueKind::Plain),
    sf(REGISTRY_LOGIN, Some("login"), "-p", false, ValueKind::Plain),
    sf(&["curl"], None, "-u", false, ValueKind::UserPass(b':')),
    sf(&["curl"], None, "-U", false, ValueKind::UserPass(b':')),
    sf(
        &["smbclient", "rpcclient", "smbmap", "smbcacls", "net"],
        None,
        "-U",
        false,
        ValueKind::UserPass(b'%'),
    ),
    sf(&["lftp"], None, "-u", false, ValueKind::UserPass(b',')),
    sf(&["http", "https", "xh", "xhs"], None, "-a", false, ValueKind::UserPass(b':')),
    sf(&["wget"], None, "--password", false, ValueKind::Plain),
    sf(&["pg_basebackup", "psql"], None, "--password", false, ValueKind::Plain),
];

const fn sf(
    commands: &'static [&'static str],
    sub: Option<&'static str>,
    flag: &'static str,
    attached_only: bool,
    value: ValueKind,
) -> ShortFlag {
    ShortFlag { commands, sub, flag, attached_only, value }
}

/// `CMD … SUB …` and the flags whose value is then a secret whatever it is named: the
/// secret stores' own spellings (`gh secret set NAME -b X`, `--body=X`; `aws ssm
/// put-parameter --value X`; `az keyvault secret set --value X`).
const VALUE_FLAGS: &[(&str, &str, &[&str])] = &[
    ("gh", "secret", &["--body", "-b"]),
    ("aws", "put-parameter", &["--value"]),
    ("az", "secret", &["--value"]),
];

/// Long flags that name a secret but take no value.
const NO_VALUE_FLAGS: &[&str] = &[
    "ask-pass",
    "ask-become-pass",
    "ask-vault-pass",
    "password-stdin",
    "with-token",
    "no-password",
    "prompt-password",
    "token-stdin",
    "passphrase-fd",
    "auth-only",
    "no-auth",
    "skip-auth",
    "insecure-skip-tls-verify",
    "pass-through",
    "passthrough",
    "keep-session",
    "ask-password",
    "password-prompt",
    "private",
    "secret-stdin",
    "auth-token-stdin",
    "show-token",
    "print-access-token",
    "print-identity-token",
    "oauth",
    "session",
    "new-session",
    "auth",
    "secrets",
    "key",
    "session-token-stdin",
    "stdin",
];

/// Flags whose value is `user:password`, wherever they appear.
const USERPASS_FLAGS: &[&str] =
    &["user", "proxy-user", "creds", "src-creds", "dest-creds", "registry-creds", "credentials"];

/// `CMD SUB… NAME VALUE`: commands that store a named setting.
const SETTERS: &[(&str, &[&str])] = &[
    ("aws", &["configure", "set"]),
    ("dotenvx", &["set"]),
    ("dotenv", &["set"]),
    ("npm", &["config", "set"]),
    ("pnpm", &["config", "set"]),
    ("yarn", &["config", "set"]),
    ("poetry", &["config"]),
    ("git", &["config"]),
    ("launchctl", &["setenv"]),
    ("setenv", &[]),
    ("conda", &["env", "config", "vars", "set"]),
];

/// `CMD SUB… VALUE`: the first positional argument after these words is the secret.
const POSITIONAL: &[(&str, &[&str], Class)] = &[
    ("vault", &["login"], Class::Secret),
    ("ngrok", &["authtoken"], Class::Secret),
    ("ngrok", &["config", "add-authtoken"], Class::Secret),
    ("snyk", &["auth"], Class::Secret),
    ("cloudflared", &["service", "install"], Class::Secret),
    ("tailscale", &["up", "--auth-key"], Class::Secret),
    ("heroku", &["auth:token"], Class::Secret),
    // Kickstart's `rootpw [--plaintext|--iscrypted] PASSWORD` (a crypted one is kept
    // from guessing too).
    ("rootpw", &[], Class::Password),
];

/// Commands that read a password (or key) on standard input.
fn reads_secret_on_stdin(cmd: &str, args: &[Word], sudo_s: bool) -> bool {
    let has = |f: &str| args.iter().any(|w| w.text == f.as_bytes());
    sudo_s
        || args.iter().any(|w| is_stdin_secret_flag(w.text))
        || has("--password-stdin")
        || has("--with-token")
        || has("--token-stdin")
        || has("--passphrase-fd")
        || (cmd == "passwd" && has("--stdin"))
        || matches!(cmd, "chpasswd" | "kinit" | "cryptsetup" | "chgpasswd" | "ssh-add")
        || (cmd == "wg" && has("pubkey"))
        || (matches!(cmd, "docker" | "podman") && has("secret") && has("create"))
        || (cmd == "vault" && has("login") && has("-"))
        || (cmd == "az" && has("devops") && has("login"))
        || (cmd == "htpasswd" && args.iter().any(|w| is_cluster_with(w, b'i')))
}

/// A flag saying a secret comes on standard input, whatever the tool calls it:
/// `--password-stdin`, `--passwd-on-stdin`, `--api-key-stdin`, `--token-stdin`.
fn is_stdin_secret_flag(t: &[u8]) -> bool {
    let Some(name) = t.strip_prefix(b"--") else { return false };
    let lower = name.to_ascii_lowercase();
    let has = |part: &[u8]| lower.windows(part.len()).any(|w| w == part);
    has(b"stdin") && [&b"pass"[..], b"token", b"secret", b"key", b"cred"].iter().any(|p| has(p))
}

fn is_cluster_with(w: &Word, c: u8) -> bool {
    w.text.len() > 1
        && w.text[0] == b'-'
        && w.text[1] != b'-'
        && w.text[1..].iter().all(u8::is_ascii_alphabetic)
        && w.text.contains(&c)
}

struct Stage<'a> {
    words: Vec<Word<'a>>,
    here: Option<Word<'a>>,
    /// Its here-documents' delimiters, and whether each strips tabs (`<<-`).
    here_docs: Vec<(Word<'a>, bool)>,
    /// Files its output or input is redirected to or from.
    redirects: Vec<Word<'a>>,
}

fn stages<'a>(toks: impl Iterator<Item = Tok<'a>>) -> Vec<Vec<Stage<'a>>> {
    // Starts with one command of one stage and only ever grows, so `last_mut` always finds one.
    let new = || Stage { words: vec![], here: None, here_docs: vec![], redirects: vec![] };
    let mut cmds: Vec<Vec<Stage>> = vec![vec![new()]];
    let mut pending_here = false;
    let mut pending_doc = None;
    let mut skip_next = false;
    for t in toks {
        match t {
            Tok::Word(w) => {
                let st = cmds.last_mut().unwrap().last_mut().unwrap();
                if pending_here {
                    st.here = Some(w);
                    pending_here = false;
                } else if let Some(strip_tabs) = pending_doc.take() {
                    st.here_docs.push((w, strip_tabs));
                } else if skip_next {
                    skip_next = false;
                    st.redirects.push(w);
                } else {
                    st.words.push(w);
                }
            }
            Tok::Pipe => cmds.last_mut().unwrap().push(new()),
            Tok::Sep => cmds.push(vec![new()]),
            Tok::HereString => pending_here = true,
            Tok::HereDoc { strip_tabs } => pending_doc = Some(strip_tabs),
            Tok::Redirect => skip_next = true,
        }
    }
    cmds
}

fn push(out: &mut Vec<Span>, span: Option<(usize, usize)>, base: usize, rule: &'static str) {
    if let Some((s, e)) = span {
        out.push(Span { start: s + base, end: e + base, rule });
    }
}

fn text<'a>(w: &Word<'a>) -> &'a str {
    std::str::from_utf8(w.text).unwrap_or("")
}

fn basename<'a>(w: &Word<'a>) -> &'a str {
    let t = text(w);
    let b = t.rsplit('/').next().unwrap_or(t);
    b.strip_suffix(".exe").unwrap_or(b)
}

fn is_prompt(w: &Word) -> bool {
    let t = w.text;
    matches!(t.last(), Some(b'$' | b'#' | b'%' | b'>'))
        && (t.len() == 1 || t.contains(&b'@') || t.contains(&b':') || t.contains(&b'~'))
        // The shells' own defaults: zsh's `%m%# ` (`box%`, `box#`), bash's `\s-\v\$ `
        // (`bash-5.2$`).
        || matches!(t.split_last(), Some((b'$' | b'#' | b'%', host)) if is_host_like(host))
        || t == "❯".as_bytes()
        || t == "➜".as_bytes()
        || t == "λ".as_bytes()
}

/// Whether `line` starts with a prompt, as a terminal shows a command.
pub(crate) fn starts_with_prompt(line: &[u8]) -> bool {
    lex(line).tokens().next().is_some_and(|t| matches!(t, Tok::Word(w) if is_prompt(&w)))
}

/// A host name or a shell's name and version: `box`, `web-01.example`, `bash-5.2`.
fn is_host_like(t: &[u8]) -> bool {
    t.first().is_some_and(u8::is_ascii_alphabetic)
        && t.iter().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_'))
}

fn is_assignment(t: &[u8]) -> Option<usize> {
    let eq = t.iter().position(|&b| b == b'=')?;
    let name = &t[..eq];
    (!name.is_empty()
        && (name[0].is_ascii_alphabetic() || name[0] == b'_')
        && name.iter().all(|&b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-')))
    .then_some(eq)
}

/// Checks `text[from..]` as `NAME=VALUE` and redacts VALUE when NAME is a secret's name.
fn assignment(w: &Word, from: usize, base: usize, out: &mut Vec<Span>, strict: bool) {
    let t = &w.text[from..];
    let Some(eq) = is_assignment(t) else { return };
    let name = &t[..eq];
    let val = &t[eq + 1..];
    // `session=session,` is a keyword argument passing a variable along, not a value.
    if val.strip_suffix(b",").unwrap_or(val) == name {
        return;
    }
    // An unquoted URL's `&page_token=…` is a word of its own to a shell; it is still a
    // pagination parameter, which the URL rules leave alone.
    if crate::redact::assign::tracking(name) {
        return;
    }
    // `authkey=process.current_process().authkey` unquoted: code, as the shell would not run
    // it; `key=self.key,` a keyword argument, its comma no part of it; and
    // `token=self._get("x"),` code up to its first quote.
    let lead = &val[..w.verbatim_len(from + eq + 1)];
    if super::shape::looks_like_code(lead.strip_suffix(b",").unwrap_or(lead)) {
        return;
    }
    let class = if strict { name_class_strict(name, Form::Env) } else { name_class(name, Form::Env) };
    if let Some(c) = class
        && should_redact(c, val)
    {
        push(out, w.span_from(from + eq + 1), base, "assign");
    } else if is_assignment(val).is_some() {
        // `--from-literal=password=x`, `-var=db_password=x`: a pair inside a flag.
        assignment(w, from + eq + 1, base, out, strict);
    }
}

/// Redacts `w[from..]`, keeping a `user<sep>` prefix when the value has one.
fn value(
    w: &Word,
    from: usize,
    kind: ValueKind,
    class: Class,
    base: usize,
    rule: &'static str,
    out: &mut Vec<Span>,
) {
    let t = &w.text[from..];
    let (skip, v) = match kind {
        ValueKind::Plain => {
            // openssl's `pass:X`; `env:VAR`, `file:PATH`, `fd:N` and `stdin` name no secret.
            if let Some(rest) = t.strip_prefix(b"pass:") {
                (5, rest)
            } else if [&b"env:"[..], b"file:", b"fd:"].iter().any(|p| t.starts_with(p)) {
                return;
            } else {
                (0, t)
            }
        }
        ValueKind::UserPass(sep) => match t.iter().position(|&b| b == sep) {
            Some(i) => (i + 1, &t[i + 1..]),
            // A bare user name: curl prompts for the password.
            None => return,
        },
    };
    if should_redact(class, v) {
        push(out, w.span_from(from + skip), base, rule);
    }
}

/// `strict`: in code or a config file, a `NAME=VALUE` word's name must end with what
/// names a secret.
pub(crate) fn scan(line: &[u8], out: &mut Vec<Span>, nested: Nested, strict: bool) {
    // fish history: `- cmd: …`.
    let (base, body) = match line.trim_ascii_start().strip_prefix(b"- cmd: ") {
        Some(rest) => (line.len() - rest.len(), rest),
        None => (0, line),
    };
    let lexed = lex(body);
    json_in_words(&lexed, base, out);
    for cmd in stages(lexed.tokens()) {
        for i in 0..cmd.len() {
            let prev = i.checked_sub(1).map(|p| &cmd[p]);
            stage(&cmd[i], prev, base, out, nested, strict);
        }
    }
    if nested.depth == 0 {
        let inner = Nested { depth: 1, ..nested };
        commands_in_strings(body, base, out, inner, strict);
        argv_lists(body, base, out, inner, strict);
    }
}

fn stage(st: &Stage, prev: Option<&Stage>, base: usize, out: &mut Vec<Span>, nested: Nested, strict: bool) {
    let words = &st.words;
    assignments(words, base, out, strict);
    let Some((idx, sudo_s)) = command_at(words) else { return };
    let (cmd, args) = command(words, idx);
    fish_set(cmd, args, base, out);
    setters(cmd, args, base, out);
    positionals(cmd, args, base, out);
    per_command(cmd, args, base, out);
    flags(cmd, args, base, out);
    stdin(st, prev, cmd, args, sudo_s, base, out);
    base64_blobs(st, prev, cmd, args, base, out, nested);
    into_key_file(st, prev, cmd, args, base, out);
}

/// The command named at `idx` and its arguments. A continuation line read on its own
/// starts with an option: no command is known, but `--password X` still is one.
fn command<'w, 'a>(words: &'w [Word<'a>], idx: usize) -> (&'a str, &'w [Word<'a>]) {
    if words[idx].text.first() == Some(&b'-') {
        ("", &words[idx..])
    } else {
        (basename(&words[idx]), &words[idx + 1..])
    }
}

/// The here-documents a command line opens, in the order their bodies follow it, each
/// with what its body is to the command that reads it.
pub(crate) fn here_documents(line: &[u8]) -> Vec<HereDoc> {
    let lexed = lex(line);
    let mut docs = Vec::new();
    for cmd in stages(lexed.tokens()) {
        for (i, st) in cmd.iter().enumerate() {
            if st.here_docs.is_empty() {
                continue;
            }
            let mut body = stdin_body(st);
            // `cat <<EOF | docker login --password-stdin`: `cat` hands the body on.
            if body == Body::Plain
                && is_bare_cat(st)
                && let Some(next) = cmd.get(i + 1)
            {
                body = stdin_body(next);
            }
            docs.extend(st.here_docs.iter().map(|(w, strip_tabs)| HereDoc {
                delimiter: w.text.to_vec(),
                strip_tabs: *strip_tabs,
                body,
            }));
        }
    }
    docs
}

/// What a stage makes of its standard input: a secret it reads, or what it writes into
/// a key or credential file.
fn stdin_body(st: &Stage) -> Body {
    let Some((idx, sudo_s)) = command_at(&st.words) else { return Body::Plain };
    let (cmd, args) = command(&st.words, idx);
    if reads_secret_on_stdin(cmd, args, sudo_s) {
        return Body::Secret { after_user: matches!(cmd, "chpasswd" | "chgpasswd") };
    }
    let file =
        st.redirects.iter().map(|w| w.text).find(|f| is_key_file(f)).or_else(|| tee_key_file(cmd, args));
    if let Some(syntax) = file.and_then(super::heredoc::by_position) {
        return Body::KeyFile(syntax);
    }
    match file.map(file_name) {
        Some(b".netrc" | b"_netrc") => Body::KeyFile(FileSyntax::Netrc),
        Some(_) => Body::KeyFile(FileSyntax::Other),
        None => Body::Plain,
    }
}

/// The key file whose syntax is known that `line`'s last command prints to the terminal
/// (`cat ~/.pgpass`, `sudo tail -n 3 .pgpass`, `grep prod ~/.pgpass`): the lines after it,
/// in scrollback, are that file's. Not when its output is piped on or redirected.
pub(crate) fn shown_key_file(line: &[u8]) -> Option<FileSyntax> {
    // Most lines that reach here name no such file: no need to lex them.
    super::heredoc::BY_POSITION.iter().find(|(end, _)| memchr::memmem::find(line, end).is_some())?;
    let body = line.trim_ascii_start().strip_prefix(b"- cmd: ").unwrap_or(line);
    if stdout_redirected(body) {
        return None;
    }
    let lexed = lex(body);
    let cmds = stages(lexed.tokens());
    // Its output is what follows the line when it is the line's last command, or its
    // first (`cat ~/.pgpass; echo`, `cat ~/.pgpass && psql …`): piped on, it is not.
    [cmds.first()?, cmds.last()?].into_iter().find_map(|stages| {
        let [st] = stages.as_slice() else { return None };
        if !st.here_docs.is_empty() {
            return None;
        }
        let (idx, _) = command_at(&st.words)?;
        let (cmd, args) = command(&st.words, idx);
        if !matches!(
            cmd,
            "cat" | "head" | "tail" | "less" | "more" | "nl" | "grep" | "egrep" | "fgrep" | "rg"
        ) {
            return None;
        }
        args.iter().filter(|w| w.text.first() != Some(&b'-')).find_map(|w| shown_syntax(w.text))
    })
}

/// Whether a command on `line` sends its standard output to a file (`>`, `>>`, `1>`,
/// `&>`); `2>/dev/null`, `2>&1` and `>&2` leave it on the terminal.
pub(crate) fn stdout_redirected(line: &[u8]) -> bool {
    memchr::memchr_iter(b'>', line).any(|i| {
        if i > 0 && line[i - 1] == b'>' {
            // The second of `>>`: the first decided.
            return false;
        }
        let fd = match i.checked_sub(1).map(|j| line[j]) {
            Some(b'&') => return true,
            Some(d @ b'0'..=b'9') if i < 2 || !line[i - 2].is_ascii_alphanumeric() => d,
            _ => b'1',
        };
        let rest = &line[i + 1..];
        let rest = rest.strip_prefix(b">").unwrap_or(rest);
        let to_fd = rest.first() == Some(&b'&') && rest.get(1).is_some_and(u8::is_ascii_digit);
        fd == b'1' && !to_fd
    })
}

/// The syntax of the key file at `path`, when it is one whose lines are read in it.
pub(crate) fn shown_syntax(path: &[u8]) -> Option<FileSyntax> {
    super::heredoc::by_position(path)
}

/// `cat` or `cat -` with no file: what it reads is what it writes.
fn is_bare_cat(st: &Stage) -> bool {
    command_at(&st.words).is_some_and(|(idx, _)| {
        let (cmd, args) = command(&st.words, idx);
        cmd == "cat" && args.iter().all(|w| w.text.first() == Some(&b'-'))
    })
}

/// `curl -d "{\"password\":\"…\"}"`: JSON written inside a double-quoted word has its
/// quotes escaped, so its pairs are only seen in the word as the shell hands it over.
fn json_in_words(lexed: &super::lex::Lexed, base: usize, out: &mut Vec<Span>) {
    for t in lexed.tokens() {
        let Tok::Word(w) = t else { continue };
        if w.text.contains(&b'"') && w.text.contains(&b':') && !w.is_verbatim(0) {
            let mut found = Vec::new();
            super::assign::colon(w.text, &mut found);
            for s in found {
                push(out, w.span(s.start, s.end), base, s.rule);
            }
        }
    }
}

/// `os.system("mysql -u root -p…")`, `subprocess.run('sshpass -p … ssh host')`: a quoted
/// string in a line that holds a command line is read as one, one level deep.
fn commands_in_strings(line: &[u8], base: usize, out: &mut Vec<Span>, nested: Nested, strict: bool) {
    let mut i = 0;
    while let Some(open) = line[i..].iter().position(|b| matches!(b, b'"' | b'\'')).map(|p| p + i) {
        let q = line[open];
        let mut close = open + 1;
        while close < line.len() && line[close] != q {
            close += if q == b'"' && line[close] == b'\\' { 2 } else { 1 };
        }
        if close >= line.len() {
            return;
        }
        let inner = &line[open + 1..close];
        if inner.contains(&b' ') {
            let mut found = Vec::new();
            scan(inner, &mut found, nested, strict);
            out.extend(found.into_iter().map(|s| Span {
                start: s.start + open + 1 + base,
                end: s.end + open + 1 + base,
                rule: s.rule,
            }));
        }
        i = close + 1;
    }
}

/// `["sshpass", "-p", "X", "ssh", "h"]`, `['mysql', '-pX']`: a command given as a list
/// of its words (a Dockerfile's exec form, Python's `subprocess.run`, a `command:` in
/// YAML, Java's `new String[]{…}`) or as a call's arguments (Go's `exec.Command("mysql",
/// "-pX")`, Node's `spawn('sshpass', ['-p', 'X'])`, Rust's `Command::new("x").arg("-p")`)
/// is read as the line its words make, each element one word, one level deep. A name
/// among them (`host`, `&cfg.user`) is a word that is not read; the words end at an
/// element that is neither a string nor a name.
fn argv_lists(line: &[u8], base: usize, out: &mut Vec<Span>, nested: Nested, strict: bool) {
    let mut from = 0;
    while let Some(open) = memchr::memchr3(b'[', b'{', b'(', &line[from..]).map(|i| from + i) {
        from = open + 1;
        let elements = if line[open] == b'(' {
            let (elements, end) = call_words(line, open);
            // The call's own lists were read as part of it.
            from = from.max(end);
            elements
        } else {
            let Some((elements, close)) = quoted_list(line, open).or_else(|| yaml_flow_words(line, open))
            else {
                continue;
            };
            from = close + 1;
            elements
        };
        if elements.iter().flatten().count() >= 2 {
            read_words(line, &elements, base, out, nested, strict);
        }
    }
}

/// One word of a command given as a list or a call: a string literal's text (its range
/// in the line), or `None` for a name or a literal with an escape, a word not read.
pub(crate) type Element = Option<(usize, usize)>;

/// The element that starts at `i` (a string literal or a name) and where it ends.
pub(crate) fn element_at(line: &[u8], i: usize) -> Option<(Element, usize)> {
    match *line.get(i)? {
        b'"' | b'\'' => {
            let start = i + 1;
            let end = closing_quote(line, i)?;
            // An escape keeps the literal whole but its text unread (`"C:\\bin"`, `"a\"b"`).
            let escaped = line[start..end].contains(&b'\\');
            Some(((!escaped).then_some((start, end)), end + 1))
        }
        b if b.is_ascii_alphanumeric() || matches!(b, b'_' | b'$' | b'&' | b'*') => {
            let len = line[i..]
                .iter()
                .take_while(|b| {
                    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'$' | b'&' | b'*' | b':')
                })
                .count();
            Some((None, i + len))
        }
        _ => None,
    }
}

fn blanks_from(line: &[u8], i: usize) -> usize {
    i + line[i..].iter().take_while(|b| matches!(b, b' ' | b'\t')).count()
}

/// The words a call starting at `open` (its `(`) gives, and where the reading stopped:
/// its arguments, those of a list among them (`spawn('x', ['-p', 'X'])`), and those of
/// the calls chained to it that add words (`.arg("-p")`, `.args(["-p"])`). Names before
/// the first string (Go's `ctx`) are passed over: the command is the first string.
fn call_words(line: &[u8], open: usize) -> (Vec<Element>, usize) {
    let mut elements = Vec::new();
    let mut i = blanks_from(line, open + 1);
    loop {
        if let Some(at) = list_opens(line, i) {
            // A list of words: `[…]`, `&[…]`, `vec![…]`, `new String[]{…}`.
            let Some((words, close)) = quoted_list(line, at) else { break };
            elements.extend(words);
            i = blanks_from(line, close + 1);
        } else {
            let Some((element, end)) = element_at(line, i) else { break };
            if element.is_some() || elements.iter().any(Option::is_some) {
                elements.push(element);
            }
            i = blanks_from(line, end);
        }
        match line.get(i) {
            Some(b',') => i = blanks_from(line, i + 1),
            // `Command::new("x").arg("-p").args(["X"])`: the chain goes on adding words.
            Some(b')') => match chained_arguments(line, i) {
                Some(at) => i = blanks_from(line, at),
                None => break,
            },
            _ => break,
        }
    }
    (elements, i)
}

/// Where the arguments of the next `.arg(` or `.args(` in the chain after the call that
/// closes at `close` start, past the calls that add no words (`.env("K", v)`,
/// `.current_dir(dir)`, `.stdin(Stdio::null())`), if the chain goes on to one.
fn chained_arguments(line: &[u8], close: usize) -> Option<usize> {
    let mut i = close;
    // A chain of a builder's setters is short; a line of them is not read on and on.
    for _ in 0..8 {
        let rest = &line[i..];
        if let Some(c) = [&b").arg("[..], b").args("].iter().find(|c| rest.starts_with(c)) {
            return Some(i + c.len());
        }
        // `).name(`: a setter; its arguments are passed over to its own `)`.
        let name = rest.strip_prefix(b").")?;
        let len = name.iter().take_while(|b| b.is_ascii_alphanumeric() || **b == b'_').count();
        if len == 0 || name.get(len) != Some(&b'(') {
            return None;
        }
        i = matching_paren(line, i + 2 + len)?;
    }
    None
}

/// The quote that closes the string literal opening at `open`, a backslash escaping the
/// byte after it, if the line has one.
fn closing_quote(line: &[u8], open: usize) -> Option<usize> {
    let q = line[open];
    let mut i = open + 1;
    while i < line.len() && line[i] != q {
        i += if line[i] == b'\\' { 2 } else { 1 };
    }
    (i < line.len()).then_some(i)
}

/// The `)` that closes the `(` at `open`, quotes and nested parentheses passed over.
fn matching_paren(line: &[u8], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = open;
    while i < line.len() {
        match line[i] {
            b'"' | b'\'' => i = closing_quote(line, i)?,
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// Where the list of words that starts at `i` opens (its `[` or `{`), if one does.
fn list_opens(line: &[u8], i: usize) -> Option<usize> {
    let rest = &line[i..];
    let skip =
        [&b"&["[..], b"vec![", b"new String[]{", b"[", b"{"].iter().find(|p| rest.starts_with(p))?.len();
    Some(i + skip - 1)
}

/// Reads the words at `elements` of `line` as the shell line they make.
fn read_words(
    line: &[u8],
    elements: &[Element],
    base: usize,
    out: &mut Vec<Span>,
    nested: Nested,
    strict: bool,
) {
    // The words as a shell line, each element one word (quoted as below when it holds a
    // blank or a shell's special byte), a word not read written as `x`. An element
    // that starts with an option and holds blanks is the arguments as one string
    // (C#'s `Process.Start("mysql", "-u root -pX")`): its words are words.
    let mut words = Vec::new();
    let mut at = Vec::new();
    for &element in elements {
        let Some((start, end)) = element else {
            if !words.is_empty() {
                words.push(b' ');
            }
            words.push(b'x');
            continue;
        };
        let text = &line[start..end];
        let arguments =
            text.starts_with(b"-") && text.contains(&b' ') && text.iter().all(|b| *b == b' ' || plain(*b));
        if arguments {
            let mut from = start;
            for word in text.split(|b| *b == b' ') {
                if !word.is_empty() {
                    push_word(&mut words, &mut at, line, from, from + word.len());
                }
                from += word.len() + 1;
            }
        } else {
            push_word(&mut words, &mut at, line, start, end);
        }
    }
    let mut found = Vec::new();
    scan(&words, &mut found, nested, strict);
    for s in found {
        // The element the span falls in: the last that starts at or before it.
        let Some(i) = at.partition_point(|(w, _, _)| *w <= s.start).checked_sub(1) else { continue };
        let (w, start, len) = at[i];
        if s.end <= w + len {
            out.push(Span { start: start + s.start - w + base, end: start + s.end - w + base, rule: s.rule });
        }
    }
}

/// A byte a word may hold unquoted.
fn plain(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"-_./:=@%+,".contains(&b)
}

/// Appends `line[start..end]` to `words` as one word, and where it went to `at`.
fn push_word(
    words: &mut Vec<u8>,
    at: &mut Vec<(usize, usize, usize)>,
    line: &[u8],
    start: usize,
    end: usize,
) {
    if !words.is_empty() {
        words.push(b' ');
    }
    let element = &line[start..end];
    // Single quotes keep every byte as it is; an element with one in it is put in
    // double quotes, where only `"`, `\\`, `$` and a backtick mean something.
    let quote = match (!element.is_empty() && element.iter().all(|b| plain(*b)), element.contains(&b'\'')) {
        (true, _) => None,
        (false, false) => Some(b'\''),
        (false, true) if !element.iter().any(|b| matches!(b, b'"' | b'\\' | b'$' | b'`')) => Some(b'"'),
        (false, true) => {
            words.push(b'x');
            return;
        }
    };
    words.extend(quote);
    at.push((words.len(), start, end - start));
    words.extend_from_slice(element);
    words.extend(quote);
}

/// The words of a YAML flow sequence (`[redis-server, --requirepass, X]`) that is a
/// key's whole value (`command: [...]`, a comment after it), plain scalars or quoted ones,
/// and where it closes. An array in code (`[sshpass, -p, pw]`) holds names: not read.
fn yaml_flow_words(line: &[u8], open: usize) -> Option<(Vec<Element>, usize)> {
    let key = line[..open].trim_ascii_end().strip_suffix(b":")?;
    let key = key.trim_ascii_start();
    let key = key.strip_prefix(b"- ").unwrap_or(key).trim_ascii_start();
    if key.is_empty() || !key.iter().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.')) {
        return None;
    }
    let close = open + memchr::memchr(b']', &line[open..])?;
    let rest = line[close + 1..].trim_ascii();
    if !(rest.is_empty() || rest.starts_with(b"#")) {
        return None;
    }
    let mut elements = Vec::new();
    let mut at = open + 1;
    for item in line[open + 1..close].split(|b| *b == b',') {
        let lead = item.len() - item.trim_ascii_start().len();
        let text = item.trim_ascii();
        let start = at + lead;
        at += item.len() + 1;
        let (start, text) = match text {
            [q @ (b'"' | b'\''), inner @ .., last] if last == q && !inner.contains(q) => (start + 1, inner),
            // A plain scalar holds no quote, flow indicator or comment.
            _ if text.iter().any(|b| matches!(b, b'"' | b'\'' | b'{' | b'}' | b'[' | b'#' | b'\\')) => {
                return None;
            }
            _ => (start, text),
        };
        if text.is_empty() {
            return None;
        }
        elements.push(Some((start, start + text.len())));
    }
    Some((elements, close))
}

/// The elements of the list that opens at `open` (`[` or `{`): string literals and names
/// (`['sshpass', '-p', 'X', 'ssh', host]`), a comma after the last allowed; and where it
/// closes. A list with any other element (a call, an expression) is not read.
fn quoted_list(line: &[u8], open: usize) -> Option<(Vec<Element>, usize)> {
    let close = if line[open] == b'{' { b'}' } else { b']' };
    let mut elements = Vec::new();
    let mut i = blanks_from(line, open + 1);
    loop {
        if line.get(i) == Some(&close) && !elements.is_empty() {
            return Some((elements, i));
        }
        let (element, end) = element_at(line, i)?;
        elements.push(element);
        i = blanks_from(line, end);
        match line.get(i)? {
            b',' => i = blanks_from(line, i + 1),
            b if *b == close => return Some((elements, i)),
            _ => return None,
        }
    }
}

/// `echo "…" >> ~/.ssh/id_ed25519`, `printf '%s' TOKEN > ~/.config/x/token`, `echo TOKEN |
/// tee ~/.vault-token`: text written into a file that holds a key or a credential is that
/// key, whatever it looks like. A PEM armour line (`-----BEGIN … KEY-----`) is kept: it
/// says what the file is.
fn into_key_file(
    st: &Stage,
    prev: Option<&Stage>,
    cmd: &str,
    args: &[Word],
    base: usize,
    out: &mut Vec<Span>,
) {
    let written = if st.redirects.iter().any(|f| is_key_file(f.text)) {
        echo_args(st)
    } else if let Some(p) = prev
        && tee_key_file(cmd, args).is_some()
    {
        echo_args(p)
    } else {
        return;
    };
    for w in written {
        if w.text.starts_with(b"-----") {
            continue;
        }
        value(w, 0, ValueKind::Plain, Class::Password, base, "key-file", out);
    }
}

/// `tee [-a] FILE…`'s key or credential file, if it writes one: what it reads on
/// standard input goes into that file, as with `>`.
fn tee_key_file<'a>(cmd: &str, args: &[Word<'a>]) -> Option<&'a [u8]> {
    if cmd != "tee" {
        return None;
    }
    args.iter().map(|w| w.text).find(|t| t.first() != Some(&b'-') && is_key_file(t))
}

/// A path's last part.
fn file_name(path: &[u8]) -> &[u8] {
    path.rsplit(|b| *b == b'/').next().unwrap_or(path)
}

/// A file that holds a private key or a credential by its name.
fn is_key_file(path: &[u8]) -> bool {
    let name = file_name(path);
    let name = String::from_utf8_lossy(name).to_ascii_lowercase();
    let ext = |e: &str| name.ends_with(e);
    (name.starts_with("id_") && !ext(".pub"))
        || [".pem", ".key", ".p12", ".pfx", ".jks", ".keystore", ".ppk"].iter().any(|e| ext(e))
        || matches!(
            name.as_str(),
            ".netrc" | "_netrc" | ".pgpass" | ".git-credentials" | "master.key" | "credentials"
        )
        || ["token", "secret", "password", "apikey", "api_key"].iter().any(|w| name.contains(w))
}

/// Every word of the form NAME=VALUE, wherever it is: inline prefixes, `export`,
/// `docker -e`, `-var`, `--set`, `make`; and `--password=x`, a flag with its value.
fn assignments(words: &[Word], base: usize, out: &mut Vec<Span>, strict: bool) {
    for w in words {
        let from = usize::from(w.text.first() == Some(&b'-'))
            + usize::from(w.text.get(1) == Some(&b'-') && w.text[0] == b'-');
        if from > 0 {
            // `--password=x` is a flag with an attached value.
            if let Some(eq) = w.text.iter().position(|&b| b == b'=') {
                let flag = &w.text[from..eq];
                // `--password[=name]` in a usage text is not a flag with a value.
                if !is_flag_name(flag) {
                    continue;
                }
                if flag == b"from-literal" {
                    if let Some(eq2) = w.text[eq + 1..].iter().position(|&b| b == b'=') {
                        let v = &w.text[eq + 2 + eq2..];
                        if should_redact(Class::Password, v) {
                            push(out, w.span_from(eq + 2 + eq2), base, "assign");
                        }
                    }
                    continue;
                }
                if let Some(c) = name_class(flag, Form::Flag) {
                    value(w, eq + 1, ValueKind::Plain, c, base, "flag", out);
                    continue;
                }
                assignment(w, eq + 1, base, out, strict);
            }
        } else {
            assignment(w, 0, base, out, strict);
        }
    }
}

/// Words after which a command starts, as a shell reads them.
const SHELL_RESERVED: &[&str] = &["if", "then", "else", "elif", "do", "while", "until", "!", "{"];

/// Dockerfile instructions whose shell form is a command line (`ONBUILD` and
/// `HEALTHCHECK` take another instruction).
const DOCKER_INSTRUCTIONS: &[&str] = &["RUN", "CMD", "ENTRYPOINT", "ONBUILD", "HEALTHCHECK"];

/// Where the command is, past a pasted prompt, inline assignments and wrappers (`sudo`,
/// `env`, `timeout 5`, a Dockerfile's `RUN`…), and whether `sudo -S` reads a password on
/// standard input.
fn command_at(words: &[Word]) -> Option<(usize, bool)> {
    let mut idx = usize::from(words.first().is_some_and(is_prompt));
    let mut sudo_s = false;
    loop {
        let w = words.get(idx)?;
        if is_assignment(w.text).is_some() {
            idx += 1;
            continue;
        }
        let name = basename(w);
        // A shell's reserved words before a command (`then mysql …`), and a Dockerfile's
        // shell-form instructions, in any case as Docker reads them, with their options
        // (BuildKit's `--mount=…`, `HEALTHCHECK --interval=5m CMD …`).
        if SHELL_RESERVED.contains(&name) || DOCKER_INSTRUCTIONS.iter().any(|d| name.eq_ignore_ascii_case(d))
        {
            idx += 1;
            while words.get(idx).is_some_and(|f| f.text.starts_with(b"--")) {
                idx += 1;
            }
            continue;
        }
        match name {
            "sudo" | "doas" | "env" | "time" | "nohup" | "exec" | "command" | "builtin" | "noglob"
            | "nice" | "timeout" | "npx" | "bunx" | "pnpx" | "caffeinate" => {
                idx += 1;
                while let Some(f) = words.get(idx) {
                    if f.text.first() == Some(&b'-') && f.text.len() > 1 {
                        if name == "sudo" && is_cluster_with(f, b'S') || f.text == b"--stdin" {
                            sudo_s = true;
                        }
                        let takes = matches!(
                            (name, f.text),
                            ("sudo", b"-u" | b"-g" | b"-C" | b"-D" | b"-h" | b"-p" | b"-r" | b"-t")
                                | ("nice", b"-n")
                                | ("env", b"-u" | b"-C")
                        );
                        idx += 1 + usize::from(takes);
                    } else if name == "timeout" && f.text.first().is_some_and(u8::is_ascii_digit) {
                        idx += 1;
                    } else {
                        break;
                    }
                }
            }
            _ => break,
        }
    }
    Some((idx, sudo_s))
}

/// Words of the commands that give a secret by position or by an option, whatever
/// its name: fish's `set -gx NAME VALUE`, `gh secret set NAME --body VALUE`, `aws ssm
/// put-parameter --name NAME --value VALUE`. A name with neither `=` nor `:` after it
/// wakes the engines only on a line holding one of them (see `gate.rs`).
pub(crate) const GIVES_BY_POSITION: &[&[u8]] = &[b"set", b"secret", b"put-parameter"];

/// fish `set -gx NAME VALUE…` (also `-x`, `-Ux`, `--export`).
fn fish_set(cmd: &str, args: &[Word], base: usize, out: &mut Vec<Span>) {
    if cmd == "set"
        && args
            .iter()
            .take_while(|w| w.text.first() == Some(&b'-'))
            .any(|w| w.text == b"--export" || is_cluster_with(w, b'x'))
    {
        let rest: Vec<&Word> = args.iter().skip_while(|w| w.text.first() == Some(&b'-')).collect();
        if let Some((name, vals)) = rest.split_first()
            && let Some(c) = name_class(name.text, Form::Env)
        {
            for v in vals {
                if should_redact(c, v.text) {
                    push(out, v.span_from(0), base, "assign");
                }
            }
        }
    }
}

/// Setters: `aws configure set NAME VALUE`, `setenv NAME VALUE`, `git config K V`.
fn setters(cmd: &str, args: &[Word], base: usize, out: &mut Vec<Span>) {
    let argtext = |j: usize| args.get(j).map(|w| w.text);
    for (c, subs) in SETTERS {
        if cmd != *c {
            continue;
        }
        let mut j = 0;
        let mut ok = true;
        for s in *subs {
            while argtext(j).is_some_and(|t| t.first() == Some(&b'-')) {
                j += 1;
            }
            if argtext(j) != Some(s.as_bytes()) {
                ok = false;
                break;
            }
            j += 1;
        }
        while ok && argtext(j).is_some_and(|t| t.first() == Some(&b'-')) {
            j += 1;
        }
        if !ok {
            continue;
        }
        let (Some(name), Some(v)) = (args.get(j), args.get(j + 1)) else {
            continue;
        };
        if name.text.starts_with(b"http-basic.") {
            // `poetry config http-basic.repo USER PASSWORD`.
            if let Some(p) = args.get(j + 2)
                && should_redact(Class::Password, p.text)
            {
                push(out, p.span_from(0), base, "positional");
            }
        } else if let Some(class) = name_class(name.text, Form::Env)
            && should_redact(class, v.text)
        {
            let rule = if matches!(*c, "setenv" | "launchctl") { "assign" } else { "positional" };
            push(out, v.span_from(0), base, rule);
        }
    }
}

/// `vault login TOKEN`, `ngrok config add-authtoken TOKEN`, `snyk auth TOKEN`.
fn positionals(cmd: &str, args: &[Word], base: usize, out: &mut Vec<Span>) {
    for (c, subs, class) in POSITIONAL {
        if cmd != *c {
            continue;
        }
        let positional: Vec<&Word> = args
            .iter()
            .filter(|w| w.text.first() != Some(&b'-') || subs.iter().any(|s| s.as_bytes() == w.text))
            .collect();
        if positional.len() > subs.len() && subs.iter().zip(&positional).all(|(s, w)| s.as_bytes() == w.text)
        {
            let v = positional[subs.len()];
            if is_assignment(v.text).is_none() && should_redact(*class, v.text) {
                push(out, v.span_from(0), base, "positional");
            }
        }
    }
}

/// Commands whose password is a positional argument of their own grammar.
fn per_command(cmd: &str, args: &[Word], base: usize, out: &mut Vec<Span>) {
    let argtext = |j: usize| args.get(j).map(|w| w.text);
    match cmd {
        // `openssl passwd [-1|-5|-6|-apr1] [-salt S] PASSWORD…`: the hash of a literal.
        "openssl" if argtext(0) == Some(b"passwd") => {
            let mut j = 1;
            while let Some(w) = args.get(j) {
                let t = w.text;
                if t.first() == Some(&b'-') {
                    j += 1 + usize::from(matches!(t, b"-salt" | b"-in"));
                    continue;
                }
                if should_redact(Class::Password, t) {
                    push(out, w.span_from(0), base, "positional");
                }
                j += 1;
            }
        }
        "wpa_passphrase" => {
            if let Some(p) = args.get(1)
                && should_redact(Class::Password, p.text)
            {
                push(out, p.span_from(0), base, "positional");
            }
        }
        "nmcli" => {
            for j in 0..args.len() {
                let t = args[j].text;
                if matches!(t, b"password" | b"wifi-sec.psk" | b"802-1x.password" | b"vpn.secrets")
                    && let Some(v) = args.get(j + 1)
                    && should_redact(Class::Password, v.text)
                {
                    push(out, v.span_from(0), base, "positional");
                }
            }
        }
        "htpasswd" if args.iter().any(|w| is_cluster_with(w, b'b')) => {
            let pos: Vec<&Word> = args.iter().filter(|w| w.text.first() != Some(&b'-')).collect();
            if pos.len() >= 3 && should_redact(Class::Password, pos[2].text) {
                push(out, pos[2].span_from(0), base, "userpass");
            }
        }
        "rabbitmqctl" => {
            if matches!(argtext(0), Some(b"add_user" | b"change_password"))
                && let Some(p) = args.get(2)
                && should_redact(Class::Password, p.text)
            {
                push(out, p.span_from(0), base, "userpass");
            }
        }
        "mysqladmin" => {
            for j in 0..args.len() {
                if args[j].text == b"password"
                    && let Some(p) = args.get(j + 1)
                    && should_redact(Class::Password, p.text)
                {
                    push(out, p.span_from(0), base, "userpass");
                }
            }
        }
        // `rclone config create NAME TYPE key value …`: the pairs are positional.
        "rclone" if args.iter().any(|w| w.text == b"config") => {
            for j in 0..args.len() {
                if let Some(c) = name_class(args[j].text, Form::Colon)
                    && let Some(v) = args.get(j + 1)
                    && should_redact(c, v.text)
                {
                    push(out, v.span_from(0), base, "positional");
                }
            }
        }
        "xfreerdp" | "xfreerdp3" | "wlfreerdp" | "sdl-freerdp" => {
            for w in args {
                if w.text.starts_with(b"/p:") || w.text.starts_with(b"-p:") {
                    value(w, 3, ValueKind::Plain, Class::Password, base, "userpass", out);
                }
            }
        }
        _ => {}
    }
}

/// Flags, one argument at a time: per-command short flags, then names of secrets.
/// One flag word of a command, with what follows it.
struct Flag<'a, 'w> {
    cmd: &'a str,
    args: &'a [Word<'w>],
    w: &'a Word<'w>,
    /// The next word, when it is a value rather than another flag.
    next: Option<&'a Word<'w>>,
    /// The word holds `=`.
    assigned: bool,
    base: usize,
}

impl Flag<'_, '_> {
    /// A short flag the command defines (`mysql -p`): its value attached or next; how
    /// many more words it took, or `None` when the command has no such flag.
    fn short(&self, out: &mut Vec<Span>) -> Option<usize> {
        let t = self.w.text;
        for f in SHORT_FLAGS {
            if !f.commands.contains(&self.cmd) {
                continue;
            }
            if let Some(sub) = f.sub
                && !self.args.iter().any(|w| w.text == sub.as_bytes())
            {
                continue;
            }
            let fl = f.flag.as_bytes();
            if t == fl {
                if !f.attached_only
                    && let Some(n) = self.next
                {
                    value(n, 0, f.value, Class::Password, self.base, short_rule(f.value), out);
                    return Some(1);
                }
                return Some(0);
            }
            // `-pX`, `-hpX`; but openssl's options are single-dash words (`-key`, not `-k ey`).
            if t.len() > fl.len()
                && t.starts_with(fl)
                && self.cmd != "openssl"
                && (!self.assigned || (fl.len() == 2 && fl[1] != b'-'))
            {
                value(self.w, fl.len(), f.value, Class::Password, self.base, short_rule(f.value), out);
                return Some(0);
            }
        }
        None
    }

    /// `gh secret set NAME --body X`, `-b X`, `--body=X`: the value whatever its name; how
    /// many more words it took.
    fn valued(&self, out: &mut Vec<Span>) -> Option<usize> {
        let t = self.w.text;
        let (_, _, names) = VALUE_FLAGS
            .iter()
            .find(|(c, sub, _)| *c == self.cmd && self.args.iter().any(|w| w.text == sub.as_bytes()))?;
        if let Some(n) = self.next.filter(|_| names.iter().any(|f| t == f.as_bytes())) {
            value(n, 0, ValueKind::Plain, Class::Password, self.base, "flag", out);
            return Some(1);
        }
        let glued = names
            .iter()
            .find(|f| f.starts_with("--") && t.starts_with(f.as_bytes()) && t.get(f.len()) == Some(&b'='))?;
        value(self.w, glued.len() + 1, ValueKind::Plain, Class::Password, self.base, "flag", out);
        Some(0)
    }
}

fn flags(cmd: &str, args: &[Word], base: usize, out: &mut Vec<Span>) {
    let mut j = 0;
    while j < args.len() {
        let w = &args[j];
        let t = w.text;
        j += 1;
        // Windows' spelling of `--name=value`: `/name:value` (`cmdkey /pass:X`,
        // `/password:X`, `/token:X`), judged by its name as a flag is.
        if let Some(rest) = t.strip_prefix(b"/")
            && let Some(colon) = rest.iter().position(|&b| b == b':')
            && is_flag_name(&rest[..colon])
            && let Some(c) = name_class(&rest[..colon], Form::Flag)
        {
            value(w, colon + 2, ValueKind::Plain, c, base, "flag", out);
            continue;
        }
        if t.len() < 2 || t[0] != b'-' {
            continue;
        }
        // `--name=value` is the assignment reader's; a password glued to a short flag may
        // hold `=` (base64: `-pBsEAfWKxxCm…==`), so only those are read here.
        let assigned = t.contains(&b'=');
        let next = args.get(j);
        let next_is_value = next.is_some_and(|n| !looks_like_flag(n.text));
        // Per-command short flags first: they decide what `-p` means here.
        let at = Flag { cmd, args, w, next: next.filter(|_| next_is_value), assigned, base };
        if let Some(took) = at.short(out).or_else(|| at.valued(out)) {
            j += took;
            continue;
        }
        if assigned {
            continue;
        }
        if cmd == "curl" && matches!(t, b"-b" | b"--cookie") {
            if let Some(n) = next.filter(|_| next_is_value) {
                cookie_pairs(n, base, out);
                j += 1;
            }
            continue;
        }
        let dashes = if t.starts_with(b"--") { 2 } else { 1 };
        let flag = &t[dashes..];
        if dashes == 1 && flag.len() < 2 {
            continue;
        }
        if !is_flag_name(flag) {
            continue;
        }
        let flag_s = std::str::from_utf8(flag).unwrap_or("");
        // After a one-dash word, PowerShell's next parameter (`-PassThru -ArgumentList`):
        // a dash, a capital and letters only. A value may start with a dash.
        let option_next = |n: &&Word| {
            dashes == 1
                && n.text.len() > 2
                && n.text[0] == b'-'
                && n.text[1].is_ascii_uppercase()
                && n.text[2..].iter().all(u8::is_ascii_alphabetic)
        };
        let Some(n) = next.filter(|n| next_is_value && !option_next(n)) else {
            continue;
        };
        // `http --auth user:pass` (httpie); `mongod --auth` takes no value.
        let auth_pair = flag_s == "auth" && dashes == 2 && n.text.contains(&b':');
        if (USERPASS_FLAGS.contains(&flag_s) && dashes == 2) || auth_pair {
            value(n, 0, ValueKind::UserPass(b':'), Class::Password, base, "userpass", out);
            j += 1;
            continue;
        }
        if NO_VALUE_FLAGS.contains(&flag_s) {
            continue;
        }
        if let Some(c) = name_class(flag, Form::Flag) {
            value(n, 0, ValueKind::Plain, c, base, "flag", out);
            j += 1;
        }
    }
}

/// Standard input: `echo X | sudo -S …`, `… --password-stdin <<< X`, `| chpasswd`.
fn stdin(
    st: &Stage,
    prev: Option<&Stage>,
    cmd: &str,
    args: &[Word],
    sudo_s: bool,
    base: usize,
    out: &mut Vec<Span>,
) {
    if reads_secret_on_stdin(cmd, args, sudo_s) {
        let kind = if cmd == "chpasswd" || cmd == "chgpasswd" {
            ValueKind::UserPass(b':')
        } else {
            ValueKind::Plain
        };
        if let Some(h) = &st.here {
            value(h, 0, kind, Class::Password, base, "stdin", out);
        }
        if let Some(p) = prev {
            for w in echo_args(p) {
                value(w, 0, kind, Class::Password, base, "stdin", out);
            }
        }
    }
}

/// `echo BLOB | base64 -d`: decode the blob and look for a secret inside it; `echo -n
/// user:password | base64` builds a Basic credential.
fn base64_blobs(
    st: &Stage,
    prev: Option<&Stage>,
    cmd: &str,
    args: &[Word],
    base: usize,
    out: &mut Vec<Span>,
    nested: Nested,
) {
    let argtext = |j: usize| args.get(j).map(|w| w.text);
    if cmd == "base64" || cmd == "openssl" && argtext(0) == Some(b"base64") {
        let decode = args.iter().any(|w| matches!(w.text, b"-d" | b"--decode" | b"-D" | b"-di" | b"-id"));
        let mut blobs: Vec<&Word> = st.here.iter().collect();
        if let Some(p) = prev {
            blobs.extend(echo_args(p));
        }
        for w in blobs {
            if decode {
                if nested.depth < 2 && decodes_to_secret(w.text, nested) {
                    push(out, w.span_from(0), base, "base64-secret");
                }
            } else if let Some(colon) = w.text.iter().position(|&b| b == b':')
                && colon > 0
                && !w.text.contains(&b' ')
                && !w.text.windows(3).any(|x| x == b"://")
            {
                // `echo -n user:password | base64`: building a Basic credential.
                value(w, colon + 1, ValueKind::Plain, Class::Password, base, "stdin", out);
            } else if !w.text.contains(&b' ') && !w.text.contains(&b'$') {
                // `echo -n 'hunter2' | base64`: a literal encoded for a Secret manifest or a
                // header; what is encoded so is a credential.
                value(w, 0, ValueKind::Plain, Class::Password, base, "stdin", out);
            }
        }
    }
}

/// What an option's name is made of; anything else is not an option.
fn is_flag_name(f: &[u8]) -> bool {
    !f.is_empty()
        && f[0].is_ascii_alphanumeric()
        && f.iter().all(|&b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

/// `--verbose`, `-x`, `-p1`: an option. A word like `-7RhLJ…` is a value that happens to
/// start with a dash (random tokens do, one time in 64).
fn looks_like_flag(t: &[u8]) -> bool {
    // `--name=value` is the next option, whatever its value.
    if let Some(rest) = t.strip_prefix(b"--")
        && let Some(eq) = rest.iter().position(|&b| b == b'=')
        && eq > 0
        && rest[..eq].iter().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'-' | b'_'))
    {
        return true;
    }
    t.first() == Some(&b'-')
        && t.len() > 1
        && (t.len() <= 3
            || t[1..]
                .iter()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'-' | b'_')))
}

fn short_rule(kind: ValueKind) -> &'static str {
    match kind {
        ValueKind::Plain => "short-flag",
        ValueKind::UserPass(_) => "userpass",
    }
}

/// The words an `echo`/`printf` stage writes.
fn echo_args<'s, 'a>(st: &'s Stage<'a>) -> Vec<&'s Word<'a>> {
    let mut ws = st.words.iter().skip_while(|w| is_prompt(w));
    let Some(cmd) = ws.next() else { return vec![] };
    match basename(cmd) {
        "echo" => ws.filter(|w| !matches!(w.text, b"-n" | b"-e" | b"-ne" | b"-en" | b"-E")).collect(),
        "printf" => {
            let rest: Vec<&Word> = ws.collect();
            match rest.split_first() {
                Some((fmt, args)) if fmt.text.contains(&b'%') => args.to_vec(),
                _ => rest,
            }
        }
        _ => vec![],
    }
}

fn cookie_pairs(w: &Word, base: usize, out: &mut Vec<Span>) {
    if !w.text.contains(&b'=') {
        // A cookie jar file.
        return;
    }
    let mut start = 0;
    for part in w.text.split(|&b| b == b';') {
        if let Some(eq) = part.iter().position(|&b| b == b'=') {
            let v = &part[eq + 1..];
            if should_redact(Class::Secret, v) {
                push(out, w.span(start + eq + 1, start + part.len()), base, "cookie");
            }
        }
        start += part.len() + 1;
    }
}

fn decodes_to_secret(blob: &[u8], nested: Nested) -> bool {
    use base64::Engine as _;
    let trimmed: Vec<u8> = blob.iter().copied().filter(|&b| b != b'=').collect();
    let cfg = base64::engine::GeneralPurposeConfig::new()
        .with_decode_padding_mode(base64::engine::DecodePaddingMode::Indifferent)
        .with_decode_allow_trailing_bits(true);
    let std_ = base64::engine::GeneralPurpose::new(&base64::alphabet::STANDARD, cfg);
    let url = base64::engine::GeneralPurpose::new(&base64::alphabet::URL_SAFE, cfg);
    let Ok(decoded) = std_.decode(&trimmed).or_else(|_| url.decode(&trimmed)) else {
        return false;
    };
    // `user:password`, the payload of an HTTP Basic credential.
    let basic = decoded.iter().position(|&b| b == b':').is_some_and(|c| {
        c > 0
            && c + 1 < decoded.len()
            && decoded.iter().all(|b| b.is_ascii_graphic())
            && !decoded.windows(3).any(|w| w == b"://")
    });
    basic || !nested.read(&decoded).is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every command this file knows a secret flag of wakes the engine on its own: a
    /// keyword of its own, not another rule's word that happens to be on the line, takes
    /// the line to it (`isql -P X`, `smbcacls -U u%X`, `cml runner -t X`).
    #[test]
    fn every_short_flag_command_is_read_without_help() {
        let mut missed = Vec::new();
        for f in SHORT_FLAGS {
            for cmd in f.commands {
                let sub = f.sub.map(|s| format!(" {s}")).unwrap_or_default();
                let value = match f.value {
                    ValueKind::Plain => "Hunter2xyz9".to_string(),
                    ValueKind::UserPass(sep) => format!("bob{}Hunter2xyz9", sep as char),
                };
                let line = if f.attached_only {
                    format!("{cmd}{sub} {}{value} -x y", f.flag)
                } else {
                    format!("{cmd}{sub} {} {value} -x y", f.flag)
                };
                if crate::redact::redact(&line).contains("Hunter2xyz9") {
                    missed.push(line);
                }
            }
        }
        assert!(missed.is_empty(), "{} passed:\n{}", missed.len(), missed.join("\n"));
    }

    /// The secret stores' documented spellings of their value flag (`gh secret set --help`,
    /// `aws ssm put-parameter help`, `az keyvault secret set --help`).
    #[test]
    fn secret_stores_lose_the_value_in_every_spelling() {
        for line in [
            "gh secret set API_TOKEN -b Hunter2xyz9",
            "gh secret set API_TOKEN --body Hunter2xyz9 --repo o/r",
            "gh secret set API_TOKEN --body=Hunter2xyz9",
            "aws ssm put-parameter --name n --value=Hunter2xyz9 --type SecureString",
            "aws ssm put-parameter --name n --type SecureString --value Hunter2xyz9",
            "az keyvault secret set --vault-name kv --name db --value Hunter2xyz9",
            "az keyvault secret set --vault-name kv --name db --value=Hunter2xyz9",
        ] {
            let out = crate::redact::redact(line);
            assert!(!out.contains("Hunter2xyz9") && out.contains("[REDACTED]"), "{line} -> {out}");
        }
        // Not under the sub-command, `-b` and `--value` are other things.
        for line in ["gh pr create -b 'fix the parser'", "az tag create --name env --value production"] {
            assert_eq!(crate::redact::redact(line), line);
        }
    }
}
