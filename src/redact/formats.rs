//! Files with a syntax of their own: the AWS CLI's prompt, `.netrc`, PHP `define()`,
//! XML elements.

use std::sync::LazyLock;

use regex::bytes::Regex;

use super::prose::looks_typed;
use super::scan::{Span, ascii_regex, lazy_re};
use super::value::{Class, Form, name_class, should_redact};

lazy_re!(AWS_PROMPT, r"Secret Access Key(?: \[[^\]]*\])?:[ \t]*([A-Za-z0-9/+=]{40})");

pub(crate) fn aws_prompt(line: &[u8], out: &mut Vec<Span>) {
    for c in AWS_PROMPT.captures_iter(line) {
        let m = c.get(1).unwrap();
        out.push(Span { start: m.start(), end: m.end(), rule: "aws-secret" });
    }
}

lazy_re!(NETRC, r"\bmachine[ \t]+\S+.*?\bpassword[ \t]+([^\s'\x22]+)");

// `.netrc` allows an entry over several lines, so a line can be only `password X`, or
// `login me password X`, or the `default` entry's: the whole line, so that prose
// ("password reset") is left alone. A diff's sign may start the line: the view keeps a
// `-` before an indented line (it reads as a list's dash), and a diff shown by `Read`
// keeps its sign after the number.
lazy_re!(
    NETRC_LINE,
    r"(?:^[-+]?|[;:])[ \t]*(?:default[ \t]+)?(?:login[ \t]+\S+[ \t]+)?password[ \t]+([^\s'\x22=:]+)[ \t]*$"
);

pub(crate) fn netrc(line: &[u8], out: &mut Vec<Span>) {
    if let Some(c) = NETRC_LINE.captures(line) {
        let m = c.get(1).unwrap();
        // A lone word is prose ("password reset"); a netrc password in a file of its own
        // shape has a digit, a symbol or mixed case.
        if should_redact(Class::Password, m.as_bytes()) && looks_typed(m.as_bytes()) {
            out.push(Span { start: m.start(), end: m.end(), rule: "netrc-line" });
        }
    }
    for c in NETRC.captures_iter(line) {
        let m = c.get(1).unwrap();
        if should_redact(Class::Password, m.as_bytes()) {
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

lazy_re!(
    SQL_ROLE_PASSWORD,
    concat!(r"(?i)\b(?:CREATE|ALTER)[ \t]+(?:USER|ROLE|GROUP)\b[^;]*?\bPASSWORD[ \t]+(", db_quoted!(), ")")
);
lazy_re!(
    SQL_IDENTIFIED,
    concat!(
        r"(?i)(?:\b(?:CREATE|ALTER)[ \t]+(?:USER|ROLE|(?:SHARED[ \t]+)?(?:PUBLIC[ \t]+)?DATABASE[ \t]+LINK)\b|\bGRANT\b)[^;]*?",
        r#"\bIDENTIFIED[ \t]+(?:WITH[ \t]+['"]?[A-Za-z0-9_]+['"]?[ \t]+)?BY[ \t]+"#,
        db_value!(),
        r"(?:[ \t]+REPLACE[ \t]+",
        db_value!(),
        ")?"
    )
);
// PostgreSQL's role options (its `CREATE ROLE` synopsis), any of which may come before
// the password on a line of their own.
macro_rules! pg_role_option {
    () => {
        r"(?:NO)?(?:SUPERUSER|CREATEDB|CREATEROLE|INHERIT|LOGIN|REPLICATION|BYPASSRLS)|CONNECTION[ \t]+LIMIT[ \t]+-?[0-9]+|VALID[ \t]+UNTIL|IN[ \t]+ROLE|ROLE|ADMIN|SYSID"
    };
}
// A statement over several lines puts the password on a line of its own, below the
// `CREATE`/`ALTER` (pgAdmin writes an option a line). Such a line is only options, then
// `[ENCRYPTED] PASSWORD 'x'`, then its end or more options; a Chef resource's `password
// 'x'` is read so too.
lazy_re!(
    SQL_PASSWORD_LINE,
    concat!(
        r"(?i)^[ \t]*(?:WITH[ \t]+)?(?:(?:",
        pg_role_option!(),
        r")[ \t]+)*(?:(?:UN)?ENCRYPTED[ \t]+)?PASSWORD[ \t]+(",
        db_quoted!(),
        r")[ \t]*(?:[;,)]|\r?$|(?:",
        pg_role_option!(),
        r")\b)"
    )
);
// `IDENTIFIED [WITH plugin] BY x` starting a line, below its `CREATE`/`ALTER USER`
// (MySQL's and Oracle's examples): quoted, or a bare word after the keywords written in
// capitals as SQL is (wrapped prose says "identified by the team").
lazy_re!(
    SQL_IDENTIFIED_LINE,
    concat!(
        r#"(?i)^[ \t]*IDENTIFIED[ \t]+(?:WITH[ \t]+['"]?[A-Za-z0-9_]+['"]?[ \t]+)?BY[ \t]+("#,
        db_quoted!(),
        ")"
    )
);
lazy_re!(
    SQL_IDENTIFIED_LINE_BARE,
    r#"^[ \t]*IDENTIFIED[ \t]+(?:WITH[ \t]+['"]?[A-Za-z0-9_]+['"]?[ \t]+)?BY[ \t]+([^\s;'"()\\]+)(?:[ \t]*;?[ \t\r]*$|[ \t]+[A-Z]{2,}\b)"#
);
// A shared database link's second account: `AUTHENTICATED BY u IDENTIFIED BY x`.
lazy_re!(
    SQL_AUTHENTICATED,
    concat!(r"(?i)\bAUTHENTICATED[ \t]+BY[ \t]+[^\s;]+[ \t]+IDENTIFIED[ \t]+BY[ \t]+", db_value!())
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
    let mut take = |value: Option<regex::bytes::Match>, rule: &'static str| {
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
            _ => (0, 0),
        };
        if text.len() < lead + trail {
            return;
        }
        let (start, end) = (value.start() + lead, value.end() - trail);
        if should_redact(Class::Password, &line[start..end]) {
            out.push(Span { start, end, rule });
        }
    };
    for c in SQL_ROLE_PASSWORD.captures_iter(line) {
        take(c.get(1), "sql-password");
    }
    for c in SQL_PASSWORD_LINE.captures_iter(line) {
        take(c.get(1), "sql-password");
    }
    for re in [
        &*SQL_IDENTIFIED,
        &*SQL_IDENTIFIED_LINE,
        &*SQL_AUTHENTICATED,
        &*SQL_IDENTIFIED_LINE_BARE,
        &*SQL_SET_PASSWORD,
        &*SQL_PASSWORD_FUNCTION,
        &*SQL_OPTIONS,
        &*ORACLE_LOGON,
    ] {
        for c in re.captures_iter(line) {
            take(c.get(1), "sql-identified");
            take(c.get(2), "sql-identified");
        }
    }
    for c in REDIS_AUTH.captures_iter(line) {
        take(c.get(2).or(c.get(1)), "redis-auth");
    }
    for c in REDIS_CONFIG.captures_iter(line) {
        take(c.get(1), "redis-auth");
    }
    for re in [&*MONGO_PWD, &*MONGO_AUTH] {
        for c in re.captures_iter(line) {
            take(c.get(1), "mongodb-password");
        }
    }
}

lazy_re!(XML_ELEMENT, r"<([A-Za-z_][A-Za-z0-9_.:\-]*)>([^<>]{1,1024})</([A-Za-z_][A-Za-z0-9_.:\-]*)>");

/// `<password>X</password>`: an element whose name names a secret, on one line.
pub(crate) fn xml(line: &[u8], out: &mut Vec<Span>) {
    for c in XML_ELEMENT.captures_iter(line) {
        let (open, value, close) = (c.get(1).unwrap(), c.get(2).unwrap(), c.get(3).unwrap());
        if open.as_bytes() != close.as_bytes() {
            continue;
        }
        if let Some(class) = name_class(open.as_bytes(), Form::Colon)
            && should_redact(class, value.as_bytes())
        {
            out.push(Span { start: value.start(), end: value.end(), rule: "xml" });
        }
    }
}
