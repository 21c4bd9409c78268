//! Files with a syntax of their own: the AWS CLI's prompt, `.netrc`, PHP `define()`,
//! XML elements.

use std::sync::LazyLock;

use regex::bytes::Regex;

use super::prose::looks_typed;
use super::span::{Span, ascii_regex, lazy_re};
use super::value::{Class, Form, name_class, name_class_strict, should_redact};

lazy_re!(AWS_PROMPT, r"Secret Access Key(?: \[[^\]]*\])?:[ \t]*([A-Za-z0-9/+=]{40})");

pub(crate) fn aws_prompt(line: &[u8], out: &mut Vec<Span>) {
    for c in AWS_PROMPT.captures_iter(line) {
        let m = c.get(1).unwrap();
        out.push(Span { start: m.start(), end: m.end(), rule: "aws-secret" });
    }
}

lazy_re!(AWS_KEY_ID, r"\b(?:AKIA|ASIA)[A-Z2-7]{16}\b");
lazy_re!(BASE64_40, r"(?:^|[^A-Za-z0-9/+=])([A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+=]|$)");

/// The secret beside an AWS access key id: the id names its neighbour, as a CSV download
/// (`User,Access key ID,Secret access key`) or a pasted pair writes them, with no keyword.
/// A neighbour is 40 characters of the key's alphabet with a capital and a small letter, so
/// a commit id (hex) or a word is never taken for one.
pub(crate) fn partner(line: &[u8], out: &mut Vec<Span>) {
    if !AWS_KEY_ID.is_match(line) {
        return;
    }
    for c in BASE64_40.captures_iter(line) {
        let m = c.get(1).unwrap();
        let v = m.as_bytes();
        // Mixed case is enough beside the id: 40 letters of both cases are no word, and a
        // random secret without a digit is one in a few thousand.
        let mixed = v.iter().any(u8::is_ascii_uppercase) && v.iter().any(u8::is_ascii_lowercase);
        if mixed {
            out.push(Span { start: m.start(), end: m.end(), rule: "aws-secret-beside-id" });
        }
    }
}

lazy_re!(NETRC, r"\bmachine[ \t]+\S+.*?\bpassword[ \t]+([^\s'\x22]+)");

// `.netrc` allows an entry over several lines, so a line can be only `password X`, or
// `login me password X`, or the `default` entry's: the whole line, so that prose
// ("password reset") is left alone. A diff's sign may start the line: the view keeps a
// `-` before an indented line (it reads as a list's dash), and a diff shown by `Read`
// keeps its sign after the number.
// The same shape is every config file that writes a directive and its value with a blank
// between (msmtprc's `password X`, `smtp_password X`, a `/set …sasl_password "X"` of an
// IRC client): a name ending in `password` or `passwd`, then one value, quoted or bare
// (a bare one may hold `=` or `:`, but not start with one: `password = X` is an
// assignment, read elsewhere).
lazy_re!(
    NETRC_LINE,
    r#"(?:^[-+]?|[;:])[ \t]*(?:/?set[ \t]+)?(?:default[ \t]+)?(?:login[ \t]+\S+[ \t]+)?([A-Za-z_][A-Za-z0-9_.\-]*)[ \t]+("[^"\\\s]+"|'[^'\\\s]+'|[^\s'"=:][^\s'"]*)[ \t]*$"#
);

// A directive line of several settings (fetchmailrc's `poll … user "me" password "X"
// ssl`): a quoted value after a bare `password`, wherever it stands.
lazy_re!(QUOTED_AFTER, r#"(?:^|[ \t])(?:password|passwd|passphrase)[ \t]+("[^"\\\s]{4,}"|'[^'\\\s]{4,}')"#);

/// A directive's value, when it could be its name's secret: a lone word is prose
/// ("password reset"); a secret in a file of its own shape has a digit, a symbol or mixed
/// case. One that names a password (`"app.db.password"`, `password-input`) is a key.
fn directive_value(line: &[u8], (s, e): (usize, usize), class: Class, out: &mut Vec<Span>) {
    let v = &line[s..e];
    let names_one = v.windows(4).any(|w| w.eq_ignore_ascii_case(b"pass"));
    if should_redact(class, v) && looks_typed(v) && !names_one && !anonymous_address(line, v) {
        out.push(Span { start: s, end: e, rule: "netrc-line" });
    }
}

// debconf's selections, as a preseed file and `debconf-set-selections` read them: an
// owner, a question, its type and the value, which runs to the line's end. A question of
// type `password` holds one, whatever the question is called
// (`d-i passwd/user-password-again password X`, `mysql-server mysql-server/root_password
// password X` echoed into the reader).
lazy_re!(
    DEBCONF,
    r"(?:^|(['\x22])|[^A-Za-z0-9_./'\x22-])[a-z0-9][a-z0-9.+-]*[ \t]+[a-z0-9][A-Za-z0-9_.+-]*/[A-Za-z0-9_./+-]+[ \t]+password[ \t]+(\S.*)"
);

fn debconf(line: &[u8], out: &mut Vec<Span>) {
    let Some(c) = DEBCONF.captures(line) else { return };
    let m = c.get(2).unwrap();
    // Given in quotes to `echo` or `<<<`, the selection ends at its closing quote.
    let v = match c.get(1) {
        Some(q) => match m.as_bytes().iter().rposition(|b| *b == q.as_bytes()[0]) {
            Some(close) => &m.as_bytes()[..close],
            None => return,
        },
        None => m.as_bytes(),
    };
    let v = v.trim_ascii_end();
    if !v.is_empty() && should_redact(Class::Password, v) {
        out.push(Span { start: m.start(), end: m.start() + v.len(), rule: "debconf-password" });
    }
}

// snmpd.conf's community strings, which are SNMP v1/v2c's passwords: the first word after
// `rocommunity`/`rwcommunity` (a source and an OID may follow), the last of `com2sec NAME
// SOURCE COMMUNITY`, and `trapcommunity`'s. The defaults `public` and `private` are known
// to everyone, and stay.
lazy_re!(
    SNMPD,
    r"(?:^[-+]?|[:;])[ \t]*(?:(?:ro|rw)community6?|trapcommunity|com2sec6?(?:[ \t]+-Cn[ \t]+\S+)?[ \t]+\S+[ \t]+\S+)[ \t]+([^\s#'\x22]+)"
);

fn snmpd(line: &[u8], out: &mut Vec<Span>) {
    for c in SNMPD.captures_iter(line) {
        let m = c.get(1).unwrap();
        let v = m.as_bytes();
        if !(v == b"public" || v == b"private") && should_redact(Class::Password, v) {
            out.push(Span { start: m.start(), end: m.end(), rule: "snmp-community" });
        }
    }
}

/// The password of an anonymous FTP login, which by convention (RFC 1635) is the user's
/// e-mail address, or a stand-in for one (`login anonymous password user@site`): public.
fn anonymous_address(line: &[u8], v: &[u8]) -> bool {
    let address = v.iter().filter(|b| **b == b'@').count() == 1
        && v.iter().all(|b| b.is_ascii_alphanumeric() || b"@.-_+".contains(b));
    let anonymous = line.windows(6).enumerate().any(|(i, w)| {
        w.eq_ignore_ascii_case(b"login ")
            && line[i + 6..]
                .trim_ascii_start()
                .split(|b| b.is_ascii_whitespace())
                .next()
                .is_some_and(|u| u.eq_ignore_ascii_case(b"anonymous") || u.eq_ignore_ascii_case(b"ftp"))
    });
    address && anonymous
}

// strongSwan's `ipsec.secrets`: `[selectors] : TYPE secret`, the secret quoted, in hex
// after `0x` or in base64 after `0s`; a private key's file (or a smartcard's `%slot`) is
// followed by its passphrase or PIN. Unquoted, `Key type : RSA 2048 bits` is a report.
lazy_re!(
    IPSEC_SECRET,
    r#"(?:^|[ \t;]):[ \t]*(?:(?:PSK|EAP|NTLM|XAUTH)|(?:RSA|ECDSA|ED25519|ED448|BLISS|P12|PKCS8|PKCS12|PIN)[ \t]+[^ \t"']*[./%][^ \t"']*)[ \t]+("[^"]*"|'[^']*'|0[sx][^ \t#]+)[ \t]*(?:#.*)?$"#
);

pub(crate) fn ipsec_secret(line: &[u8], out: &mut Vec<Span>) {
    for m in IPSEC_SECRET.captures_iter(line).filter_map(|c| c.get(1)) {
        let (mut start, mut end) = (m.start(), m.end());
        if matches!(line[start], b'"' | b'\'') {
            (start, end) = (start + 1, end - 1);
        } else if line[start..end].starts_with(b"0s") || line[start..end].starts_with(b"0x") {
            start += 2;
        }
        let v = &line[start..end];
        // `%prompt`: the passphrase is asked for.
        if !v.starts_with(b"%") && should_redact(Class::Password, v) {
            out.push(Span { start, end, rule: "ipsec-secret" });
        }
    }
}

pub(crate) fn netrc(line: &[u8], out: &mut Vec<Span>) {
    debconf(line, out);
    snmpd(line, out);
    // A directive's name says what its value is: a password's, or any secret's.
    if let Some(c) = NETRC_LINE.captures(line) {
        let name = c.get(1).unwrap().as_bytes();
        let lower = name.to_ascii_lowercase();
        let class = if lower.ends_with(b"password") || lower.ends_with(b"passwd") {
            Some(Class::Password)
        } else {
            name_class_strict(name, Form::Env)
        };
        let m = c.get(2).unwrap();
        let (s, e) = super::assign::unquote(line, m.start(), m.end());
        if let Some(class) = class {
            directive_value(line, (s, e), class, out);
        }
    }
    for c in QUOTED_AFTER.captures_iter(line) {
        let m = c.get(1).unwrap();
        let (s, e) = super::assign::unquote(line, m.start(), m.end());
        directive_value(line, (s, e), Class::Password, out);
    }
    for c in NETRC.captures_iter(line) {
        let m = c.get(1).unwrap();
        if should_redact(Class::Password, m.as_bytes()) && !anonymous_address(line, m.as_bytes()) {
            out.push(Span { start: m.start(), end: m.end(), rule: "netrc" });
        }
    }
}

lazy_re!(
    PHP_DEFINE,
    r#"(?i)\bdefine\s*\(\s*['"]([A-Za-z0-9_]+)['"]\s*,\s*'([^'\\]*)'|(?i)\bdefine\s*\(\s*['"]([A-Za-z0-9_]+)['"]\s*,\s*"([^"\\$]*)""#
);

pub(crate) fn php_define(line: &[u8], out: &mut Vec<Span>) {
    for c in PHP_DEFINE.captures_iter(line) {
        let (name, value) = match (c.get(1), c.get(2), c.get(3), c.get(4)) {
            (Some(n), Some(v), ..) | (_, _, Some(n), Some(v)) => (n, v),
            _ => continue,
        };
        if let Some(class) = name_class(name.as_bytes(), Form::Env)
            && should_redact(class, value.as_bytes())
        {
            out.push(Span { start: value.start(), end: value.end(), rule: "php-define" });
        }
    }
}

/// A quoted literal as databases and their shells write one: `'…'` (a doubled or a
/// backslash-escaped quote inside), PostgreSQL's `E'…'` and SQL Server's `N'…'`, `"…"`,
/// double quotes escaped for a shell (`\"…\"`, in `mysql -e "…"`), PostgreSQL's `$$…$$`.
macro_rules! db_quoted {
    () => {
        r#"(?:[EeNn]?'(?:[^'\\]|''|\\.)*'|"(?:[^"\\]|""|\\.)*"|\\"(?:[^"\\]|\\[^"])*\\"|\$\$[^$]*\$\$)"#
    };
}

/// [`db_quoted`] or a bare word: a password as Oracle and MySQL take it after `BY`.
macro_rules! db_value {
    () => {
        concat!("(", db_quoted!(), r#"|[^\s;'"()\\]+)"#)
    };
}

/// `IDENTIFIED [WITH plugin] BY`, as MySQL, MariaDB and Oracle write it (the case is the
/// caller's).
macro_rules! identified_by {
    () => {
        r#"IDENTIFIED[ \t]+(?:WITH[ \t]+['"]?[A-Za-z0-9_]+['"]?[ \t]+)?BY"#
    };
}

lazy_re!(
    SQL_ROLE_PASSWORD,
    concat!(r"(?i)\b(?:CREATE|ALTER)[ \t]+(?:USER|ROLE|GROUP)\b[^;]*?\bPASSWORD[ \t]+(", db_quoted!(), ")")
);
lazy_re!(
    SQL_IDENTIFIED,
    concat!(
        r"(?i)(?:\b(?:CREATE|ALTER)[ \t]+(?:USER|ROLE|(?:SHARED[ \t]+)?(?:PUBLIC[ \t]+)?DATABASE[ \t]+LINK)\b|\bGRANT\b)[^;]*?",
        r"\b",
        identified_by!(),
        r"[ \t]+",
        db_value!(),
        r"(?:[ \t]+REPLACE[ \t]+",
        db_value!(),
        ")?"
    )
);
// PostgreSQL's role options (its `CREATE ROLE` synopsis, and the older `CREATEUSER` and
// `IN GROUP`), any of which may come before the password on a line of their own.
macro_rules! pg_role_option {
    () => {
        r"(?:NO)?(?:SUPERUSER|CREATEDB|CREATEROLE|CREATEUSER|INHERIT|LOGIN|REPLICATION|BYPASSRLS)|CONNECTION[ \t]+LIMIT[ \t]+-?[0-9]+|VALID[ \t]+UNTIL[ \t]+'[^']*'|IN[ \t]+(?:ROLE|GROUP)[ \t]+[^\s,;']+(?:[ \t]*,[ \t]*[^\s,;']+)*|(?:ROLE|ADMIN|USER)[ \t]+[^\s,;']+(?:[ \t]*,[ \t]*[^\s,;']+)*|SYSID[ \t]+[0-9]+"
    };
}
// What may come before a statement's line: a diff's sign, psql's prompt (`db=#`, `db-#`,
// `db(#`), mysql's (`    ->`), SQL*Plus's line number; then the quote of a string that
// holds the line in code (`"PASSWORD 'x'"`).
macro_rules! sql_line_start {
    () => {
        r#"^(?:[-+]|[A-Za-z0-9_]*[=\-(*'"][#>]|[ \t]*[-'"]>|[ \t]*[0-9]{1,4}[ \t])?[ \t]*["`]?[ \t]*"#
    };
}
// What may follow the value on such a line: its end, `;`, the string's or the call's
// close, a comment, or the next account (`, '`).
macro_rules! sql_line_end {
    () => {
        r#"[ \t]*(?:[;)"`<#]|,[ \t]*(?:'|\r?$)|--|/\*|\r?$)"#
    };
}
// A statement over several lines puts the password on a line of its own, below the
// `CREATE`/`ALTER` (pgAdmin writes an option a line). Such a line is only options, then
// `[ENCRYPTED] PASSWORD 'x'`, then its end or more options; a Chef resource's `password
// 'x'` is read so too.
lazy_re!(
    SQL_PASSWORD_LINE,
    concat!(
        sql_line_start!(),
        r"(?i:WITH[ \t]+)?(?i:(?:",
        pg_role_option!(),
        r")[ \t]+)*(?i:(?:UN)?ENCRYPTED[ \t]+)?(?i:PASSWORD)[ \t]+(",
        db_quoted!(),
        ")(?:",
        sql_line_end!(),
        r"|[ \t]+(?:(?i:VALID[ \t]+UNTIL|IN[ \t]+(?:ROLE|GROUP)|CONNECTION[ \t]+LIMIT)|(?:NO)?[A-Z]{4,}|ROLE|ADMIN|USER|SYSID)\b)"
    )
);
// `IDENTIFIED [WITH plugin] BY x [REPLACE old]` starting a line, below its `CREATE`/`ALTER
// USER` (MySQL's and Oracle's examples), after a database link's `CONNECT TO u`, a second
// account (`'u'@'h'`) or a second factor (`ADD 2 FACTOR`): quoted, or a bare word after
// the keywords written in capitals as SQL is (wrapped prose says "identified by the team").
macro_rules! sql_identified_head {
    () => {
        r#"(?:(?i:CONNECT[ \t]+TO)[ \t]+[^\s]+[ \t]+|'[^']*'@'[^']*'[ \t]+|(?i:AND|(?:ADD|MODIFY)[ \t]+[23][ \t]+FACTOR)[ \t]+)?"#
    };
}
lazy_re!(
    SQL_IDENTIFIED_LINE,
    concat!(
        sql_line_start!(),
        sql_identified_head!(),
        "(?i:",
        identified_by!(),
        r")[ \t]+(",
        db_quoted!(),
        r")(?:[ \t]+(?i:REPLACE)[ \t]+(",
        db_quoted!(),
        "))?(?:",
        sql_line_end!(),
        r"|[ \t]+[A-Z]{2,}\b)"
    )
);
lazy_re!(
    SQL_IDENTIFIED_LINE_BARE,
    concat!(
        sql_line_start!(),
        sql_identified_head!(),
        identified_by!(),
        r#"[ \t]+([^\s;'"()\\]+)(?:[ \t]+REPLACE[ \t]+([^\s;'"()\\]+))?"#,
        "(?:",
        sql_line_end!(),
        r"|[ \t]+(?:[A-Z]{2,}|(?i:DEFAULT|TEMPORARY|QUOTA|PROFILE|PASSWORD|ACCOUNT|CONTAINER))\b)"
    )
);
// A shared database link's second account: `AUTHENTICATED BY u IDENTIFIED BY x`.
// In capitals as SQL writes it, or after `DATABASE LINK` in any case: prose says
// "authenticated by X, identified by Y".
lazy_re!(
    SQL_AUTHENTICATED,
    concat!(
        r"(?:\bAUTHENTICATED[ \t]+BY[ \t]+[^\s;]+[ \t]+",
        identified_by!(),
        r"|(?i:\bDATABASE[ \t]+LINK\b[^;]*?\bAUTHENTICATED[ \t]+BY[ \t]+[^\s;]+[ \t]+",
        identified_by!(),
        r"))[ \t]+",
        db_value!()
    )
);
lazy_re!(SQL_SET_PASSWORD, concat!(r"(?i)\bSET[ \t]+PASSWORD\b[^=;]*=[ \t]*(", db_quoted!(), ")"));
// MySQL's and MariaDB's `PASSWORD('x')` and `OLD_PASSWORD('x')` (`SET PASSWORD = …`,
// `IDENTIFIED VIA … USING PASSWORD(…)`, `SET authentication_string = …`).
lazy_re!(
    SQL_PASSWORD_FUNCTION,
    concat!(r"(?i)(?:^|[\s=(,])(?:OLD_)?PASSWORD[ \t]*\([ \t]*(", db_quoted!(), r")[ \t]*\)")
);
// A foreign server's or user mapping's `OPTIONS (user 'u', password 'x')`.
lazy_re!(SQL_OPTIONS, concat!(r"(?i)\bOPTIONS[ \t]*\([^)]*?\bpassword[ \t]+(", db_quoted!(), ")"));
// Oracle's tools that take `user/password@db`.
lazy_re!(
    ORACLE_LOGON,
    r#"\b(?:sqlplus|expdp|impdp|exp|imp|sqlldr|dgmgrl|rman[ \t]+(?:target|auxiliary|catalog))(?:[ \t]+-[A-Za-z]+)*[ \t]+["']?[A-Za-z0-9_$#]+/([^@\s/'"]+)"#
);
// Redis: `AUTH [user] pw` at a line's start, after `redis-cli`'s prompt or its options,
// and `requirepass pw` as `redis.conf` or `CONFIG SET` writes it.
lazy_re!(REDIS_AUTH, r#"(?:^[ \t]*|> ?|\bredis-cli\b[^|;&]*?[ \t])AUTH[ \t]+(\S+)(?:[ \t]+(\S+))?[ \t]*$"#);
lazy_re!(
    REDIS_CONFIG,
    concat!(
        r"(?i)(?:^[ \t]*|\bCONFIG[ \t]+SET[ \t]+)(?:requirepass|masterauth)[ \t]+",
        db_value!(),
        r"[ \t]*$"
    )
);
// MongoDB's shell: `db.createUser({user: …, pwd: "x"})`, `db.auth("u", "x")`.
lazy_re!(MONGO_PWD, concat!(r"\bdb\.(?:createUser|updateUser)\(.*?\bpwd[ \t]*:[ \t]*(", db_quoted!(), ")"));
lazy_re!(
    MONGO_AUTH,
    concat!(r"\bdb\.(?:auth|changeUserPassword)\([ \t]*", db_quoted!(), r"[ \t]*,[ \t]*(", db_quoted!(), ")")
);

/// A database's password as its SQL, its shell or its configuration sets it: PostgreSQL's
/// `CREATE|ALTER USER|ROLE … PASSWORD 'x'`, MySQL's and Oracle's `CREATE|ALTER USER|ROLE`
/// or `GRANT … IDENTIFIED [WITH plugin] BY x [REPLACE old]` (not prose's "identified by
/// the token"), MySQL's `SET PASSWORD [FOR u] = 'x'` and `PASSWORD('x')`, a foreign
/// server's `OPTIONS (password 'x')`, Oracle's `sqlplus user/x@db`, Redis's `AUTH x` and
/// `requirepass x`, MongoDB's `pwd: "x"` and `db.auth("u", "x")`; and, below a statement's
/// first line, a line of role options and `PASSWORD 'x'` or one that starts with
/// `IDENTIFIED … BY x`. What is no literal
/// (`PASSWORD NULL`, `BY RANDOM PASSWORD`, a hash after `AS`, a reference) is left.
pub(crate) fn database(line: &[u8], out: &mut Vec<Span>) {
    // `own_line`: a line of a statement over several, read without the `CREATE`/`ALTER`
    // above it, so its value is judged more strictly: no blanks (a label, "Mot de
    // passe"), no name that holds "password" (`app.db.password`), no brackets, and it
    // looks typed: a quoted value mixes letters with digits or symbols or has inner
    // capitals (not "Passwort"), a bare word mixes letters with digits or symbols
    // (`IDENTIFIED BY TraceId` names a column).
    let mut take = |value: Option<regex::bytes::Match>, rule: &'static str, own_line: bool| {
        let Some(value) = value else { return };
        let text = value.as_bytes();
        let (lead, trail) = match text {
            [b'\\', b'"', ..] => (2, 2),
            [b'$', b'$', ..] => (2, 2),
            [b'E' | b'e' | b'N' | b'n', b'\'', ..] => (2, 1),
            [b'\'' | b'"', ..] => (1, 1),
            _ if [&b"RANDOM"[..], b"PASSWORD", b"VALUES"].iter().any(|w| text.eq_ignore_ascii_case(w)) => {
                return;
            }
            // SQL*Plus's substitution variables (`&pw`, `&&PW`, `&1`) and bind variables.
            [b'&' | b':', ..] => return,
            _ => (0, 0),
        };
        if text.len() < lead + trail {
            return;
        }
        let (start, end) = (value.start() + lead, value.end() - trail);
        let inner = &line[start..end];
        // Code that builds the statement: `'" + pw + "'`, `'" || v_pass || "'`, `"#{pw}"`.
        let joined = [&b"\" +"[..], b"+ \"", b"' +", b"+ '", b"||", b"#{", b"{{"];
        if joined.iter().any(|j| memchr::memmem::find(inner, j).is_some()) {
            return;
        }
        if own_line {
            let has = |f: fn(&u8) -> bool| inner.iter().any(f);
            let name_like = inner.iter().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(b))
                && inner.windows(8).any(|w| w.eq_ignore_ascii_case(b"password"));
            let mixed = has(u8::is_ascii_alphabetic) && has(|b| !b.is_ascii_alphabetic());
            // An expression (`"ENV['DB_PASSWORD']"`) or a word (a label, "Passwort").
            let code = has(|b| b"[]()".contains(b));
            let typed = if lead == 0 { mixed } else { looks_typed(inner) };
            if has(u8::is_ascii_whitespace) || name_like || code || !typed {
                return;
            }
        }
        if should_redact(Class::Password, inner) {
            out.push(Span { start, end, rule });
        }
    };
    for c in SQL_ROLE_PASSWORD.captures_iter(line) {
        take(c.get(1), "sql-password", false);
    }
    for c in SQL_PASSWORD_LINE.captures_iter(line) {
        take(c.get(1), "sql-password", true);
    }
    for re in [&*SQL_IDENTIFIED_LINE, &*SQL_IDENTIFIED_LINE_BARE] {
        for c in re.captures_iter(line) {
            take(c.get(1), "sql-identified", true);
            take(c.get(2), "sql-identified", true);
        }
    }
    for re in [
        &*SQL_IDENTIFIED,
        &*SQL_AUTHENTICATED,
        &*SQL_SET_PASSWORD,
        &*SQL_PASSWORD_FUNCTION,
        &*SQL_OPTIONS,
        &*ORACLE_LOGON,
    ] {
        for c in re.captures_iter(line) {
            take(c.get(1), "sql-identified", false);
            take(c.get(2), "sql-identified", false);
        }
    }
    for c in REDIS_AUTH.captures_iter(line) {
        take(c.get(2).or(c.get(1)), "redis-auth", false);
    }
    for c in REDIS_CONFIG.captures_iter(line) {
        take(c.get(1), "redis-auth", false);
    }
    for re in [&*MONGO_PWD, &*MONGO_AUTH] {
        for c in re.captures_iter(line) {
            take(c.get(1), "mongodb-password", false);
        }
    }
}

lazy_re!(REDIS_ACL_USER, r#"(?:(?:^|[\s;:"'(])user|(?i:\bacl[ \t]+setuser))[ \t]+[^ \t]+"#);

/// A word of Redis's ACL grammar (`ACL SETUSER`'s documentation): a switch, or a rule
/// that starts with its operator (`~keys`, `%R~keys`, `&channels`, `+cmd`, `-@cat`,
/// `>password`, `<password`, `#hash`, `!hash`, `(selector)`).
fn is_acl_rule(w: &[u8]) -> bool {
    const SWITCHES: &[&[u8]] = &[
        b"on",
        b"off",
        b"nopass",
        b"resetpass",
        b"reset",
        b"allkeys",
        b"resetkeys",
        b"allchannels",
        b"resetchannels",
        b"allcommands",
        b"nocommands",
        b"clearselectors",
        b"sanitize-payload",
        b"skip-sanitize-payload",
    ];
    SWITCHES.contains(&w) || w.len() > 1 && b"~%&+-><#!(".contains(&w[0])
}

/// A Redis ACL user, as `users.acl` and `ACL SETUSER` write it (each rule quoted or not):
/// each `>password` (and `<password`, which removes one) is a password, each `#` and 64
/// hex digits its SHA-256. Only a line of ACL rules after the user's name is one.
pub(crate) fn redis_acl(line: &[u8], out: &mut Vec<Span>) {
    let Some(user) = REDIS_ACL_USER.find(line) else { return };
    let mut rules = Vec::new();
    let mut at = user.end();
    for word in line[user.end()..].split(|b| matches!(b, b' ' | b'\t')) {
        let start = at;
        at += word.len() + 1;
        if word.is_empty() {
            continue;
        }
        // `'>pw'`, `">pw"` and `\>pw`, as a shell needs them.
        let lead = match word {
            [q @ (b'\'' | b'"'), .., e] if q == e && word.len() > 2 => 1,
            [b'\\', _, ..] => 1,
            _ => 0,
        };
        let trail = usize::from(lead == 1 && word[0] != b'\\');
        let inner = &word[lead..word.len() - trail];
        if !is_acl_rule(inner) {
            return;
        }
        rules.push((start + lead, inner));
    }
    for (start, rule) in rules {
        let secret = match rule {
            [b'>' | b'<', pw @ ..] => should_redact(Class::Password, pw),
            [b'#', hash @ ..] => hash.len() == 64 && hash.iter().all(u8::is_ascii_hexdigit),
            _ => false,
        };
        if secret {
            out.push(Span { start: start + 1, end: start + rule.len(), rule: "redis-acl" });
        }
    }
}

lazy_re!(
    XML_ELEMENT,
    r"<([A-Za-z_][A-Za-z0-9_.:\-]*)((?:\s[^<>]{0,512})?)>([^<>]{1,1024})</([A-Za-z_][A-Za-z0-9_.:\-]*)>"
);
lazy_re!(XML_NAME_ATTR, r#"\s(?:name|key)\s*=\s*["']([^"'<>]{1,128})["']"#);

/// `<password>X</password>`: an element whose name names a secret, on one line.
pub(crate) fn xml(line: &[u8], out: &mut Vec<Span>) {
    for c in XML_ELEMENT.captures_iter(line) {
        let (open, attrs, value, close) =
            (c.get(1).unwrap(), c.get(2).unwrap(), c.get(3).unwrap(), c.get(4).unwrap());
        if open.as_bytes() != close.as_bytes() {
            continue;
        }
        // An element named by its `name` or `key` attribute takes that name (Android's
        // `<string name="api_secret">`, Hibernate's `<property name="…password">`).
        let named = XML_NAME_ATTR.captures(attrs.as_bytes()).and_then(|a| a.get(1)).map(|m| m.as_bytes());
        // A `<Value>` takes the name of the element just around it (`<Password><Value>`).
        let named = named.or_else(|| {
            open.as_bytes()
                .eq_ignore_ascii_case(b"value")
                .then(|| opened_before(&line[..open.start() - 1]))
                .flatten()
        });
        if let Some(class) = name_class(named.unwrap_or(open.as_bytes()), Form::Colon)
            && should_redact(class, value.as_bytes())
        {
            let rule = if named.is_some() { "xml-named" } else { "xml" };
            out.push(Span { start: value.start(), end: value.end(), rule });
        }
    }
}

/// The name of the element whose opening tag `text` ends with: its `name` or `key`
/// attribute (`<property name="password">`), else its tag (`<Password>`).
fn opened_before(text: &[u8]) -> Option<&[u8]> {
    let text = text.trim_ascii_end().strip_suffix(b">")?;
    let lt = memchr::memrchr(b'<', text)?;
    let inner = &text[lt + 1..];
    let tag =
        inner.iter().take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b':')).count();
    if tag == 0 || inner.ends_with(b"/") {
        return None;
    }
    let attr = XML_NAME_ATTR.captures(&inner[tag..]).and_then(|a| a.get(1)).map(|m| m.as_bytes());
    Some(attr.unwrap_or(&inner[..tag]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(line: &str) -> Vec<&str> {
        let mut out = Vec::new();
        netrc(line.as_bytes(), &mut out);
        out.iter().map(|s| &line[s.start..s.end]).collect()
    }

    #[test]
    fn a_debconf_selection_of_type_password_gives_its_value() {
        assert_eq!(found("d-i passwd/user-password-again password -l*OcZ9QFK8+2mbK"), ["-l*OcZ9QFK8+2mbK"]);
        assert_eq!(found("./server.cfg:4:d-i passwd/root-password password #zw2RI+4tk"), ["#zw2RI+4tk"]);
        assert_eq!(
            found(
                "echo 'mysql-server mysql-server/root_password password Wq7a Zb9' | debconf-set-selections"
            ),
            ["Wq7a Zb9"]
        );
        // Another type, no value, a reference, a sentence with a path in it.
        assert!(found("d-i passwd/root-login boolean false").is_empty());
        assert!(found("d-i passwd/root-password password").is_empty());
        assert!(found("d-i passwd/root-password password $ROOT_PW").is_empty());
        assert!(found("see docs/install.md for the root password").is_empty());
    }

    #[test]
    fn an_snmpd_community_is_its_password_but_the_defaults_are_not() {
        assert_eq!(found("rocommunity muSB.z2a5ChQ.z843T 10.0.0.0/8"), ["muSB.z2a5ChQ.z843T"]);
        assert_eq!(found("+rwcommunity6 x00t-Rc6m.OE9VWpp 2001:db8::/32"), ["x00t-Rc6m.OE9VWpp"]);
        assert_eq!(found("com2sec -Cn ctx readonly 10.0.0.0/8 Kq7bsWv_kh"), ["Kq7bsWv_kh"]);
        assert!(found("rocommunity public 10.0.0.0/8").is_empty());
        assert!(found("rwcommunity private").is_empty());
        assert!(found("the rocommunity line sets who may read").is_empty());
    }

    #[test]
    fn an_anonymous_login_gives_an_address_not_a_password() {
        assert!(found("    default login anonymous password user@site").is_empty());
        assert!(found("machine ftp.example.org login anonymous password me@example.org").is_empty());
        // Any other login's, and an anonymous one's that is no address, is a password.
        assert_eq!(found("machine h login deploy password user@site9"), ["user@site9"]);
        assert_eq!(found("default login anonymous password w4Zk9qLm2x"), ["w4Zk9qLm2x"]);
    }
}
