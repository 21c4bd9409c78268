//! `name=value` and `name: value`, the way shell lines, config files and code write a
//! secret's name beside its value: the value is one only when the name says so and the
//! value could be one (not a reference, a placeholder, a call or an expression).

use std::sync::LazyLock;

use regex::bytes::Regex;

use super::shape::{is_code_value, is_sentence, looks_like_code};
use super::span::{Reading, Span, ascii_regex, lazy_re};
use super::value::{Form, name_class, name_class_strict, should_redact};
use super::yaml_syntax::{Tag, yaml_tag};

/// A single-quoted literal: a doubled quote inside is YAML's escape (1.2.2, 7.3.2) and,
/// to Python and shell, two strings read as one (`'ab''cd'`), so it does not end it.
macro_rules! single_quoted {
    () => {
        "'(?:[^']|'')*'"
    };
}

/// A quoted or bare value; bare values stop at shell and URL delimiters.
/// A `\n`, `\r` or `\t` escape ends a bare value: in `printf '…\npassword=x\n'` and
/// `$'…'` the next line starts there.
const VALUE: &str = concat!(
    // Python's triple-quoted strings first: `'''x'''` is not `''` and then more.
    r#"("""[^"]*"""|'''[^']*'''|"(?:[^"\\]|\\.)*"|"#,
    single_quoted!(),
    r#"|(?:[^\s;&|'"<>()=,\\]|\\[^nrt])(?:[^\s;&|'"<>)=,\\]|\\[^nrt])*=*)"#
);

lazy_re!(
    EQUALS,
    &format!(
        r#"(?:^|\\[nrt]|->|[\s\x00-\x08\x0e-\x1f\x80-\xff;&|('"`,{{?:/\[$])(-{{0,2}})([A-Za-z_][A-Za-z0-9_.\-]*)[ \t]*=(?:[ \t]+=)?[ \t]*{VALUE}"#
    )
);

/// The inner span of a captured value: quotes excluded.
pub(crate) fn unquote(line: &[u8], s: usize, e: usize) -> (usize, usize) {
    let v = &line[s..e];
    let triple = v.len() >= 6 && [&b"\"\"\""[..], b"'''"].iter().any(|q| v.starts_with(q) && v.ends_with(q));
    if triple {
        return (s + 3, e - 3);
    }
    if v.len() >= 2 && (v[0] == b'"' || v[0] == b'\'') && v[v.len() - 1] == v[0] {
        (s + 1, e - 1)
    } else {
        (s, e)
    }
}

lazy_re!(
    CODE_ASSIGN,
    concat!(
        r#"[\[(][ \t]*["']([A-Za-z_][A-Za-z0-9_.\-]*)["'][ \t]*(?:\][ \t]*=|,)[ \t]*("(?:[^"\\]|\\.)*"|"#,
        single_quoted!(),
        ")"
    )
);

/// `os.environ["API_KEY"] = "…"`, `SetEnvironmentVariable("API_TOKEN", "…")`. A pair in
/// a list or a tuple (`('AUTH', 'SELECTED')`, `__all__ = ["getpass", "getuser"]`) is data,
/// not a name and its value: only a call's first two arguments count.
pub(crate) fn code_assign(line: &[u8], out: &mut Vec<Span>) {
    for c in CODE_ASSIGN.captures_iter(line) {
        let whole = c.get(0).unwrap();
        let val = c.get(2).unwrap();
        // Group 1 is not optional: every match has the name.
        let name = c.get(1).unwrap().as_bytes();
        let (vs, ve) = unquote(line, val.start(), val.end());
        let pair = line[whole.start()] == b'(' || line[whole.start()..val.start()].contains(&b',');
        let call = line[..whole.start()].last().is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_');
        if pair && (!call || line[whole.start()] != b'(' || line[vs..ve].iter().any(u8::is_ascii_whitespace))
        {
            continue;
        }
        // `exec.Command("sshpass", "-p", pw)`: a command's words, read as one by the shell
        // engine, not a name and its value; nor is `execlp("sshpass", "sshpass", …)`'s
        // program and its name again.
        if option_then_more(line, vs, ve, val.end()) || line[vs..ve] == *name {
            continue;
        }
        // `PageDescriptor("pageToken", "nextPageToken", …)`: field names, not a value; a
        // token of random letters is an identifier too, but not one made of words.
        let v = &line[vs..ve];
        if let Some(class) = name_class_strict(name, Form::Env)
            && !(super::value::is_code_identifier(v) && super::value::is_made_of_words(v))
            && should_redact(class, v)
        {
            out.push(Span { start: vs, end: ve, rule: "assign" });
        }
    }
}

lazy_re!(
    SETTER_CALL,
    concat!(
        r#"(?:^|([.:>])|[^A-Za-z0-9_$.:>])([A-Za-z_][A-Za-z0-9_]*)[ \t]*\([ \t]*("(?:[^"\\]|\\.)*"|"#,
        single_quoted!(),
        r#")[ \t]*\)"#
    )
);

/// A call that gives a secret its one literal argument by what the call is named:
/// a builder's or a setter's (`.password("…")`, `setApiKey("…")`, `withToken('…')`,
/// reqwest's `.bearer_auth("…")`, Redis's `red:auth("…")`). A function that does
/// something with a secret is no setter: `getPassword("db")`, `hashPassword("…")`.
pub(crate) fn setter_call(line: &[u8], out: &mut Vec<Span>) {
    for c in SETTER_CALL.captures_iter(line) {
        let method = c.get(1).is_some();
        let (name, val) = (c.get(2).unwrap().as_bytes(), c.get(3).unwrap());
        let Some(class) = setter_class(name, method) else { continue };
        let (vs, ve) = unquote(line, val.start(), val.end());
        let v = &line[vs..ve];
        if !v.iter().any(u8::is_ascii_whitespace) && should_redact(class, v) {
            out.push(Span { start: vs, end: ve, rule: "assign" });
        }
    }
}

lazy_re!(LISP_FORM, r#"\(([A-Za-z][A-Za-z0-9_*+-]*)[ \t]+"((?:[^"\\]|\\.)*)"[ \t]*\)"#);

/// A Lisp form that gives a secret's name its one string (an Emacs `sql-connection-alist`
/// entry's `(sql-password "…")`): the form's head is the name, as a call's is in a setter.
pub(crate) fn lisp_form(line: &[u8], out: &mut Vec<Span>) {
    // Most lines the name rules wake are no Lisp: a form's string ends before its `)`.
    if memchr::memmem::find(line, b"\")").is_none() {
        return;
    }
    for c in LISP_FORM.captures_iter(line) {
        let (Some(name), Some(val)) = (c.get(1), c.get(2)) else { continue };
        let (name, v) = (name.as_bytes(), val.as_bytes());
        // A function's argument looks like a form's value too (`(get-password "github.com")`
        // asks for one): the value must look like a secret, whatever the name says.
        if name_class_strict(name, Form::Env).is_some()
            && !v.iter().any(u8::is_ascii_whitespace)
            && should_redact(super::value::Class::Secret, v)
        {
            out.push(Span { start: val.start(), end: val.end(), rule: "assign" });
        }
    }
}

/// Whether a call of this name is a setter of a secret ([`setter_call`] reads it);
/// `method` when it is called on a receiver (`x.password(…)`).
pub(crate) fn names_a_setter(name: &[u8], method: bool) -> bool {
    setter_class(name, method).is_some()
}

/// What a setter's argument is, by the setter's name: a setting verb (`set`, `with`,
/// `use`) and a secret's name (`setApiKey`, `with_token`), or, called on a receiver, a
/// secret's name alone (`.password`, `.client_secret`, `.bearer_auth`, `:auth`): words
/// that qualify a secret, the last one naming it.
fn setter_class(name: &[u8], method: bool) -> Option<super::value::Class> {
    use super::value::Class;
    const QUALIFIERS: &[&str] = &[
        "api", "access", "auth", "bearer", "client", "app", "db", "database", "master", "private", "refresh",
        "session", "user", "admin", "root", "basic", "personal", "service", "secret", "signing",
    ];
    let verb = [&b"set"[..], b"with", b"use"].iter().find_map(|verb| {
        let after = name.get(verb.len()..)?;
        let starts = name[..verb.len()].eq_ignore_ascii_case(verb)
            && after.first().is_some_and(|b| b.is_ascii_uppercase() || *b == b'_');
        starts.then_some(after.strip_prefix(b"_").unwrap_or(after))
    });
    let rest = verb.unwrap_or(name);
    let segments = super::value::segments(rest);
    let (last, before) = segments.split_last()?;
    if method && verb.is_none() && matches!(segments.as_slice(), [a] | [_, a] if a == "auth") {
        return Some(Class::Secret);
    }
    // The last word names the secret itself (`password`, `token`; `key` after a
    // qualifier, as in `apiKey`), as the value judge reads names.
    let noun = last == "key" && !before.is_empty() || name_class_strict(last.as_bytes(), Form::Env).is_some();
    let phrase = noun
        && before.len() <= 2
        && (verb.is_some() || method && before.iter().all(|s| QUALIFIERS.contains(&s.as_str())));
    phrase.then(|| name_class_strict(rest, Form::Env)).flatten()
}

/// Whether the value at `vs..ve` is an option word (`-p`, `-storepass`, `--password`)
/// with another argument after it (from `after`, past its closing quote). A token that
/// starts with a dash (`-8fJ2kLmN…`) is no option word: a one-dash word is one letter or
/// lower-case letters, a two-dash one lower-case letters, digits and dashes.
fn option_then_more(line: &[u8], vs: usize, ve: usize, after: usize) -> bool {
    let option = match &line[vs..ve] {
        [b'-', b'-', first, rest @ ..] => {
            first.is_ascii_lowercase()
                && rest.iter().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
        }
        [b'-', letter] => letter.is_ascii_alphabetic(),
        [b'-', rest @ ..] => rest.len() <= 16 && rest.iter().all(u8::is_ascii_lowercase),
        _ => false,
    };
    let rest = line[after..].trim_ascii_start();
    option
        && rest.first() == Some(&b',')
        && !matches!(rest[1..].trim_ascii_start().first(), None | Some(b')'))
}

/// Read as `reading` says: in code or a config file, every name must end with what names
/// a secret, and in a config file a value at a line's start runs to the line's end.
pub(crate) fn equals(line: &[u8], out: &mut Vec<Span>, reading: Reading) {
    let strict = reading != Reading::Any;
    // Looked for once: asked of every assignment, a search of the text before each was
    // quadratic on a long line of them (`ParameterKey=x ParameterKey=x …`).
    let first_query = memchr::memchr(b'?', line);
    // `s/` as a word of its own (`'s/`, `-e s/`, `; s/`): a sed substitution.
    let first_substitution = memchr::memmem::find_iter(line, b"s/")
        .find(|&at| at == 0 || !line[at - 1].is_ascii_alphanumeric() && line[at - 1] != b'_');
    let mut pos = 0;
    while let Some(c) = EQUALS.captures_at(line, pos) {
        let dashes = c.get(1).unwrap();
        let name = c.get(2).unwrap();
        let val = c.get(3).unwrap();
        // `PGPASSWORD= psql -h db`: a shell runs the command with the variable set empty.
        if reading == Reading::Any && dashes.is_empty() && empty_before_command(line, name.end(), val.start())
        {
            pos = val.start();
            continue;
        }
        let (vs, mut ve) = unquote(line, val.start(), val.end());
        let before = line[..dashes.start()].last().copied();
        // A sigiled variable (`$password`) is PHP's, Perl's or PowerShell's: a literal
        // there is quoted, and a bare word is a constant or a command
        // (`$p = ConvertTo-SecureString …`).
        if before == Some(b'$') && vs == val.start() {
            pos = val.end().max(pos + 1);
            continue;
        }
        // `'--password='.$config['password']`: the quote after `=` closes the string the
        // name is in, so what it seems to open is code between two strings.
        if vs > val.start()
            && before == Some(line[val.start()])
            && line[name.end()..val.start()].trim_ascii() == b"="
        {
            pos = val.start() + 1;
            if pos >= line.len() {
                break;
            }
            continue;
        }
        // `s/PASSWORD=.*/PASSWORD=X/` (sed, perl): the pattern is no value, and the
        // replacement's value ends at the expression's delimiter. Only after an `s/`:
        // a path before a name (`dir/creds-3-aws_secret_access_key = …`, grep's context
        // line) cut the value at its first `/`.
        if before == Some(b'/')
            && first_substitution.is_some_and(|at| at + 2 <= name.start())
            && vs == val.start()
            && let Some(slash) = line[vs..ve].iter().position(|&b| b == b'/')
            && slash > 0
        {
            ve = vs + slash;
        }
        let (rule, spaced, class) = classify(line, &c, before, first_query, strict);
        let v = &line[vs..ve];
        let bare = vs == val.start();
        let end = if bare && dashes.is_empty() {
            let sep = Separator::Equals { spaced, name: name.as_bytes(), reading };
            line_value_end(line, dashes.start(), ve, sep)
        } else {
            ve
        };
        // `b"password"`, `r'…'`, `f"{x}"`: a string literal's prefix, not a bare value.
        let prefix = bare && v.len() <= 2 && matches!(line.get(ve), Some(b'"' | b'\''));
        // On a config file's line, the value as the line reads it: punctuation inside it,
        // not a statement's `;` or `,` after it.
        let whole = &line[vs..end];
        let whole = whole.strip_suffix(b";").or_else(|| whole.strip_suffix(b",")).unwrap_or(whole);
        // Words after a blank are read only behind a value that is one on its own: `a && b`
        // is code.
        let as_line = |class| {
            let code = looks_like_code(whole)
                || super::value::is_pattern(whole)
                || spaced && super::value::is_code_identifier(whole);
            let blank = whole.iter().any(u8::is_ascii_whitespace);
            whole.len() > v.len() && !blank && !code && should_redact(class, whole)
        };
        if let Some(class) = class
            && !prefix
            && (!(bare && (looks_like_code(v) || super::value::is_pattern(v)))
                && !is_expression(line, name.as_bytes(), name.end(), val.start(), val.end(), bare)
                && should_redact(class, v)
                || as_line(class))
        {
            out.push(Span { start: vs, end, rule });
            pos = val.end().max(end);
        } else {
            // `--from-literal=password=x`: look again inside the value.
            pos = if val.start() > name.start() { val.start() } else { c.get(0).unwrap().end() };
        }
        if pos >= line.len() {
            break;
        }
    }
}

/// How an assignment reads: its rule (a flag, a query parameter, an assignment), whether
/// blanks part name and value, and what its name makes the value. Code and config files
/// write `name = value`, keyword arguments `f(name=value)` and attributes
/// `self.name = value`; there a name must end with what names a secret.
fn classify(
    line: &[u8],
    c: &regex::bytes::Captures<'_>,
    before: Option<u8>,
    first_query: Option<usize>,
    strict: bool,
) -> (&'static str, bool, Option<super::value::Class>) {
    let (dashes, name, val) = (c.get(1).unwrap(), c.get(2).unwrap(), c.get(3).unwrap());
    let form = if !dashes.is_empty() {
        Form::Flag
    } else if matches!(before, Some(b'?' | b'&')) || first_query.is_some_and(|q| q < name.start()) {
        Form::Query
    } else {
        Form::Env
    };
    let rule = match form {
        Form::Flag => "flag",
        Form::Query => "query",
        _ => "assign",
    };
    let spaced = line[name.end()..val.start()].iter().any(|b| *b == b' ' || *b == b'\t');
    let kwarg = matches!(before, Some(b'(')) || line[..dashes.start()].trim_ascii_end().ends_with(b",");
    let code = dashes.is_empty() && (strict || spaced || kwarg || name.as_bytes().contains(&b'.'));
    let class =
        if code { name_class_strict(name.as_bytes(), form) } else { name_class(name.as_bytes(), form) }
            .filter(|_| {
                !(tracking(name.as_bytes()) || form == Form::Query && public_graph(line, name.start()))
            })
            .or_else(|| {
                (form == Form::Query && names_an_app_key(name.as_bytes()))
                    .then_some(super::value::Class::Generated)
            });
    (rule, spaced, class)
}

/// `appid`, `app_id`: APIs that take their key in a URL under the name of an
/// application's id (OpenWeatherMap, Wolfram|Alpha). Elsewhere the id is public, so only a
/// value a generator made counts (`Class::Generated`): a number, a UUID or a name stays.
pub(crate) fn names_an_app_key(name: &[u8]) -> bool {
    name.eq_ignore_ascii_case(b"appid") || name.eq_ignore_ascii_case(b"app_id")
}

/// What parts a name from its value on a line, which says how a config file reads the
/// value after it.
#[derive(Debug, Clone, Copy)]
enum Separator<'a> {
    /// `NAME=value` (shell, `.env`, Java properties) or `name = value` (INI, TOML).
    Equals { spaced: bool, name: &'a [u8], reading: Reading },
    /// `name: value` (YAML, properties).
    Colon,
}

/// Where a bare value that ends at `ve` ends as a config file reads it, when its name
/// starts the line (`lead` is where the name starts; indentation, `export ` or a YAML
/// list's `- ` may come before it): a `.env`, INI, properties or YAML value runs to the
/// line's end, less an inline comment, where the shell's word stops at `&`, `|`, `;`,
/// `<`, `>`, a quote or `(` (`DB_PASSWORD=Tr0ub4dor&3xyz`, `password: Abc!def12` in
/// YAML). A line of any other shape keeps `ve`.
///
/// In text of unknown kind a `NAME=value` line may be a shell command: the value still
/// stops at a blank (`DB_PASSWORD=x ./run`), at a list operator (`&&`, `||`, or `&`,
/// `|`, `;` before a blank or the end) and before a pair that follows it (`;Database=`,
/// `&user=`), so the command after it stays; any other punctuation is taken, since a
/// value's tail that passes is worse than a command's tail lost on a line that is
/// redacted anyway.
fn line_value_end(line: &[u8], lead: usize, ve: usize, sep: Separator) -> usize {
    let before = line[..lead].trim_ascii();
    if !(before.is_empty()
        || before == b"-"
        || before == b"export" && matches!(sep, Separator::Equals { .. }))
    {
        return ve;
    }
    let end = line.trim_ascii_end().len();
    if ve >= end {
        return ve;
    }
    // An inline comment: `#` after a blank (dotenv, YAML, TOML), `;` after a blank in INI.
    let comment = |semicolon: bool| {
        (ve..end)
            .find(|&i| {
                matches!(line[i], b' ' | b'\t')
                    && line[i..end]
                        .iter()
                        .find(|b| !matches!(b, b' ' | b'\t'))
                        .is_some_and(|&b| b == b'#' || semicolon && b == b';')
            })
            .unwrap_or(end)
    };
    match sep {
        Separator::Colon => comment(false),
        Separator::Equals { spaced, name, reading } => {
            // `name = value` is INI's or TOML's; a name with a dot or a hyphen is no shell
            // variable's (`db.password=…` is Java's properties); a config file is read
            // as one.
            let shell_name = name.iter().all(|b| b.is_ascii_alphanumeric() || *b == b'_');
            if spaced || !shell_name || reading == Reading::Config {
                return comment(spaced);
            }
            shell_word_end(line, ve, end)
        }
    }
}

/// Whether `NAME= …`, with the name's `=` from `eq` to the value at `value`, is a shell's
/// empty assignment before a command (`PGPASSWORD= psql -h db -U app`, `DB_PASSWORD=
/// ./run.sh`), as bash reads it: `=` glued to a shell variable's name, then a blank, then
/// a program and its arguments. An INI or properties line may write `password= x` too, so
/// the words must read as a command line and not as a typed value: the first a path or a
/// lower-case command name (`psql`, `pg_dump`, `python3`), then an argument that is an
/// option, a path, a shell operator, a quoted or expanded word or a lower-case word
/// (`-U app`, `~/.pgpass`, `> app.dump`, `deploy`). `password= Hunter2xyz` and
/// `DB_PASSWORD= Tr0ub4dor&3 xyz` are values, and a name after `.` or `-` is no shell
/// variable's; a lone `PGPASSWORD= psql` cannot be told from `password= hunter` and is
/// read as one. Text of unknown kind only: a config file has no commands.
fn empty_before_command(line: &[u8], eq: usize, value: usize) -> bool {
    let sep = &line[eq..value];
    if !(sep.first() == Some(&b'=') && sep.len() > 1) {
        return false;
    }
    let name_start =
        line[..eq].iter().rposition(|b| !(b.is_ascii_alphanumeric() || *b == b'_')).map_or(0, |i| i + 1);
    if name_start == eq || name_start > 0 && matches!(line[name_start - 1], b'.' | b'-') {
        return false;
    }
    let mut words = line[value..].split(u8::is_ascii_whitespace).filter(|w| !w.is_empty());
    let Some(program) = words.next() else { return false };
    let path = |w: &[u8]| {
        [&b"/"[..], b"./", b"../", b"~/", b"~"].iter().any(|p| w.starts_with(p))
            && w.len() > 1
            && w.iter().all(|b| b.is_ascii_graphic())
    };
    let command_name = |w: &[u8]| {
        w.first().is_some_and(u8::is_ascii_lowercase)
            && w.iter().all(|b| {
                b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'-' | b'_' | b'.' | b'+')
            })
    };
    if !(path(program) || command_name(program)) {
        return false;
    }
    let argument = |w: &[u8]| {
        w.first().is_some_and(|b| matches!(b, b'-' | b'"' | b'\'' | b'$' | b'>' | b'<' | b'|' | b'&' | b';'))
            || path(w)
            || w.first().is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
                && w.iter().all(|b| {
                    b.is_ascii_lowercase()
                        || b.is_ascii_digit()
                        || matches!(b, b'-' | b'_' | b'.' | b'/' | b':' | b'=' | b'@' | b',')
                })
    };
    words.any(argument)
}

/// The end of a `NAME=value` word from `from` as text of unknown kind reads it: see
/// [`line_value_end`].
fn shell_word_end(line: &[u8], from: usize, end: usize) -> usize {
    let mut i = from;
    while i < end {
        let b = line[i];
        if b.is_ascii_whitespace() {
            return i;
        }
        if matches!(b, b'&' | b'|' | b';') {
            let next = line.get(i + 1).copied();
            let pair = {
                let name = line[i + 1..end]
                    .iter()
                    .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-' | b' '))
                    .count();
                name > 0 && line.get(i + 1 + name) == Some(&b'=')
            };
            if next == Some(b) || next.is_none_or(|n| n.is_ascii_whitespace()) || pair {
                return i;
            }
        }
        // `\n` in `printf '…\npassword=x\n'`: the next line starts there.
        if b == b'\\' && matches!(line.get(i + 1), Some(b'n' | b'r' | b't')) {
            return i;
        }
        i += 1;
    }
    end
}

/// Whether the value of `name = value` (the value at `start..end` of `line`) is source
/// code rather than a literal: the start of a call, an index or a string concatenation
/// (`kw['password']`, `headers.get(…)`), a format string (`"…" % args`), the name itself
/// (`session=session`), or an identifier assigned with spaces around `=` as code writes it
/// (`getpass = fallback_getpass`; a shell assignment has no spaces).
fn is_expression(line: &[u8], name: &[u8], name_end: usize, start: usize, end: usize, bare: bool) -> bool {
    let whole = &line[start..end];
    let v = whole.strip_suffix(b",").unwrap_or(whole);
    let last = name.rsplit(|b| *b == b'.').next().unwrap_or(name);
    if v == last {
        return true;
    }
    let after = line.get(end).copied();
    // A quote after the value mostly closes the string the line is in (`'…?key=X'`).
    if bare && (matches!(after, Some(b'(' | b'[')) || v.ends_with(b"[")) {
        return true;
    }
    let rest = line[end..].trim_ascii_start();
    if !bare && (rest.starts_with(b"%") || rest.starts_with(b".format(") || rest.starts_with(b"+ ")) {
        return true;
    }
    let spaced = line[name_end..start].iter().any(|b| *b == b' ' || *b == b'\t');
    // `NL80211_ATTR_SAE_PASSWORD = 277,`: an enum's value; a config file has no comma there.
    // `PASS = 20`: a constant's small number (a PIN has four digits or more).
    let number = !v.is_empty() && v.iter().all(u8::is_ascii_digit);
    let constant = name.iter().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || *b == b'_');
    if bare && spaced && number && (line.get(end) == Some(&b',') || constant && v.len() <= 3) {
        return true;
    }
    // `sig = quote_spanned! {…}`: a macro call, its brackets after the `!`; a password may
    // end with one (`password = 8BYGG6sYILlALc!`).
    if bare
        && spaced
        && v.ends_with(b"!")
        && v.len() > 1
        && v[..v.len() - 1].iter().all(|b| b.is_ascii_alphanumeric() || *b == b'_')
        && rest.first().is_some_and(|b| matches!(b, b'{' | b'(' | b'['))
    {
        return true;
    }
    // `change_passphrase = "ssh-keygen -o -p"`: a command line, options and all.
    if !bare && spaced && v.windows(2).any(|w| w[0] == b' ' && w[1] == b'-') && v.contains(&b' ') {
        return true;
    }
    if bare && spaced && (super::value::is_code_identifier(v) || is_hex_literal(v)) {
        return true;
    }
    // `signature = {$vis:vis …}`, `keys = [a, b]`: a block, a dict or a list as code writes it.
    if bare && spaced && (v.starts_with(b"{") || v.starts_with(b"[")) {
        return true;
    }
    // `tokenize2 = function* (text)`, `x = this.#keys;`, `a = b ?? c`: code.
    if bare && spaced && is_code_value(v, &line[end..]) {
        return true;
    }
    // `exports.GoogleAuth = GoogleAuth6;`: a statement, ended as JavaScript and C end them.
    if bare
        && spaced
        && line.get(end) == Some(&b';')
        && v.iter().all(|b| b.is_ascii_alphanumeric() || *b == b'_' || *b == b'$')
    {
        return true;
    }
    // `PseudoToken = Whitespace + group(…)`: an operand of an expression.
    if bare
        && spaced
        && [&b"+ "[..], b"| ", b"& ", b"* ", b"- ", b"or ", b"and ", b"if "]
            .iter()
            .any(|op| rest.starts_with(op))
    {
        return true;
    }
    // `self._pwd = pwd`, `password = credentials` in an indented block, `a, self.password =
    // creds`: a variable passed along. An INI file's `password = x` starts its line.
    let indented = line.starts_with(b"    ") || line.starts_with(b"\t");
    let attribute = name.contains(&b'.');
    bare && spaced && (indented || attribute) && is_lower_identifier(v)
}

/// `0x08074b50`: a number as code writes it.
fn is_hex_literal(v: &[u8]) -> bool {
    let digits = |p: &[u8], ok: fn(&u8) -> bool| {
        v.len() > 2 && v.starts_with(p) && v[2..].iter().all(|b| ok(b) || *b == b'_')
    };
    digits(b"0x", u8::is_ascii_hexdigit)
        || digits(b"0b", |b| matches!(b, b'0' | b'1'))
        || digits(b"0o", |b| (b'0'..=b'7').contains(b))
}

/// `credentials`, `auth_info`: a lower-case identifier.
fn is_lower_identifier(v: &[u8]) -> bool {
    v.first().is_some_and(|b| b.is_ascii_lowercase() || *b == b'_')
        && v.iter().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'_')
}

/// `password: &[u8]`, `sig: Signature`, `token: Option<String>`, `colon_token: Token![:]`,
/// `password: str`, `log_passwd: __u32`: the type of a field, an argument or a variable in
/// Rust, Python, TypeScript or C bindings, never its value.
fn is_type_annotation(v: &[u8], rest: &[u8]) -> bool {
    const PRIMITIVES: &[&str] = &[
        "u8", "u16", "u32", "u64", "u128", "usize", "i8", "i16", "i32", "i64", "i128", "isize", "f32", "f64",
        "bool", "char", "str", "int", "float", "bytes", "number", "boolean", "any", "unknown", "object",
        "void", "long", "short", "double",
    ];
    let t = std::str::from_utf8(v).unwrap_or("");
    let identifier = !t.is_empty() && t.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    // `Token![:]`, `Option<&str>`, `Tokenizer<'a>`: a type's name with its arguments.
    let name_end = v.iter().position(|b| !(b.is_ascii_alphanumeric() || *b == b'_')).unwrap_or(v.len());
    let next = v.get(name_end).or(rest.first());
    // A macro's `!` is followed by its brackets (`Token![:]`, `vec!(…)`); a password's
    // is not (`Abc!def12`).
    let macro_bang = |at: usize| matches!(v.get(at + 1).or(rest.first()), Some(b'[' | b'(' | b'{'));
    if name_end > 0
        && v[0].is_ascii_alphabetic() | (v[0] == b'_')
        && (matches!(next, Some(b'<' | b'[')) || next == Some(&b'!') && macro_bang(name_end))
    {
        return true;
    }
    // `impl AsRef<[u8]>`, `dyn Fn()`: a trait bound.
    if (t == "impl" || t == "dyn") && rest.starts_with(b" ") {
        return true;
    }
    let code_follows =
        rest.trim_ascii_start().first().is_some_and(|b| matches!(b, b',' | b')' | b'=' | b';' | b'>' | b'{'));
    // `Signature,`, `SecretString`: capitalised words without digits, as types are named;
    // a single word only where code punctuation follows.
    let humps = camel_humps(t);
    let camel = humps >= 2 || (humps == 1 && code_follows);
    v.starts_with(b"&")
        || v.starts_with(b"*")
        // `[u8; 32]`, `<Token![:]>::default()`: an array type or a qualified path.
        || (v.starts_with(b"[") && (v.contains(&b';') || rest.first() == Some(&b';')))
        || v.starts_with(b"<")
        || (identifier && matches!(rest.first(), Some(b'<' | b'!' | b'[')))
        || (identifier && camel)
        // `_bindgen_ty_3`, `__u32`, `__IncompleteArrayField`: generated names.
        || (t.starts_with('_') && {
            let inner = t.trim_start_matches('_');
            is_lower_identifier(inner.as_bytes()) || camel_humps(inner) > 0
        })
        || PRIMITIVES.contains(&t)
        || (identifier && code_follows && super::value::is_code_identifier(v))
}

/// `refresh_token: refreshToken`, `signature: storeSignature`: a variable named after
/// what it holds, passed along.
fn names_itself(v: &[u8], name: &[u8]) -> bool {
    let v = String::from_utf8_lossy(v).to_ascii_lowercase();
    super::value::segments(name).iter().any(|s| s.len() >= 3 && v.contains(s.as_str()))
}

/// `cond ? "password" : "text"`: the two branches of a conditional, not a pair.
fn ternary(line: &[u8], start: usize) -> bool {
    line[..start + 1].trim_ascii_end().ends_with(b"?") || line[..start].trim_ascii_end().ends_with(b"?")
}

/// `progressToken`, `handleDeleteSession`: a name as JavaScript writes it, lower-case
/// first with a capital inside; YAML and INI keys are rarely written so.
fn camel_name(name: &[u8]) -> bool {
    name.first().is_some_and(u8::is_ascii_lowercase)
        && name.iter().any(u8::is_ascii_uppercase)
        && name.iter().all(u8::is_ascii_alphanumeric)
}

/// How many capitalised words `t` is made of (`SecretString` 2), or 0 when it is not
/// only such words.
fn camel_humps(t: &str) -> usize {
    let mut humps = 0;
    let mut chars = t.chars().peekable();
    while let Some(c) = chars.next() {
        if !c.is_ascii_uppercase() {
            return 0;
        }
        // A capital and lower-case letters, or a capital and digits (`NonZeroI32`).
        let mut rest_of_word = 0;
        while chars.peek().is_some_and(char::is_ascii_lowercase) {
            chars.next();
            rest_of_word += 1;
        }
        if rest_of_word == 0 {
            while chars.peek().is_some_and(char::is_ascii_digit) {
                chars.next();
                rest_of_word += 1;
            }
        }
        if rest_of_word == 0 {
            return 0;
        }
        humps += 1;
    }
    humps
}

/// `pass: determine the maximum…`, `- password:  The password for the account.`: a word
/// that goes on as a sentence, in a comment or a docstring, not a config value.
fn is_prose(v: &[u8], rest: &[u8]) -> bool {
    let word =
        |w: &[u8]| !w.is_empty() && w.iter().all(|b| b.is_ascii_alphabetic() || matches!(b, b',' | b'.'));
    word(v)
        && rest.starts_with(b" ")
        && rest.split(|b| *b == b' ').filter(|w| !w.is_empty()).take(2).filter(|w| word(w)).count() == 2
}

/// Tracking and pagination parameters are never secrets, whatever they are called.
pub(crate) fn tracking(name: &[u8]) -> bool {
    let n = String::from_utf8_lossy(name).to_ascii_lowercase();
    n.starts_with("utm_")
        || matches!(n.as_str(), "gclid" | "fbclid" | "ved" | "ei" | "si" | "msclkid" | "dclid")
        || ["page", "next", "continuation", "cursor", "sync", "pagination"]
            .iter()
            .any(|p| n.starts_with(p) && (n.contains("token") || n.contains("key")))
}

/// A Codecov graph or badge URL up to its query name at `name_start`: its `token` is the
/// graphing token, which Codecov documents as read-only and made to be published in a
/// README's badge. Its upload token, and a token in any other URL, stay secrets.
fn public_graph(line: &[u8], name_start: usize) -> bool {
    let before = &line[..name_start];
    let url_start =
        before.iter().rposition(|b| b.is_ascii_whitespace() || b"\"'(<[".contains(b)).map_or(0, |i| i + 1);
    let url = &before[url_start..];
    let Some(rest) = url.strip_prefix(b"https://").or_else(|| url.strip_prefix(b"http://")) else {
        return false;
    };
    let host_end = rest.iter().position(|&b| b == b'/').unwrap_or(rest.len());
    let (host, path) = rest.split_at(host_end);
    let path = &path[..path.iter().position(|&b| b == b'?').unwrap_or(path.len())];
    matches!(host, b"codecov.io" | b"app.codecov.io")
        && path.windows(7).any(|w| w == b"/graph/" || w == b"/graphs")
}

// Groups 1 (a quote, maybe empty), 2 (the name) and 4 (the value) take part in every
// match, so `colon` unwraps them; 3 (a YAML tag) may not. An anchor (`&pw`) may stand
// before the tag or after it, as YAML 1.2.2 (6.9) allows, and is kept with the name.
lazy_re!(
    COLON,
    concat!(
        r#"(?:^|[\s\x00-\x08\x0e-\x1f\x80-\xff{,\[(;])(["']?)([A-Za-z_][A-Za-z0-9_.\-]*)["']?[ \t]*:[ \t]*(?:&[A-Za-z0-9_-]+[ \t]+)?(?:(![!A-Za-z0-9_-]*)[ \t]+)?(?:&[A-Za-z0-9_-]+[ \t]+)?("(?:[^"\\]|\\.)*"|"#,
        single_quoted!(),
        r#"|[^\s,;}\]'":()][^\s,;}\]'"()]*)"#
    )
);

/// Whether `rest`, after `passwd:` or `shadow:` at a line's start, is the list of
/// services `/etc/nsswitch.conf` gives that database (nsswitch.conf(5): `passwd: files
/// systemd`, `shadow: files sss [NOTFOUND=return] ldap`): lower-case service names and
/// `[STATUS=action]` items, less a comment, with at least one service that the manual
/// (`files`, `db`, `nis`, `nisplus`, `dns`, `compat`, `hesiod`, `ldap`, `winbind`,
/// `wins`) or nss-systemd and SSSD (`systemd`, `sss`) document, so `passwd: hunter2`
/// is still a password.
fn nsswitch_sources(name: &[u8], rest: &[u8]) -> bool {
    const DOCUMENTED: &[&[u8]] = &[
        b"files", b"db", b"nis", b"nisplus", b"dns", b"compat", b"hesiod", b"ldap", b"winbind", b"wins",
        b"systemd", b"sss",
    ];
    if !matches!(name, b"passwd" | b"shadow") {
        return false;
    }
    let rest = rest.split(|b| *b == b'#').next().unwrap_or(rest);
    let mut documented = false;
    for word in rest.split(u8::is_ascii_whitespace).filter(|w| !w.is_empty()) {
        let action = word.len() > 2
            && word.starts_with(b"[")
            && word.ends_with(b"]")
            && word[1..word.len() - 1]
                .iter()
                .all(|b| b.is_ascii_alphabetic() || matches!(b, b'=' | b'!' | b' '));
        let service = word.first().is_some_and(u8::is_ascii_lowercase)
            && word.iter().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'_');
        if !(action || service) {
            return false;
        }
        documented |= DOCUMENTED.contains(&word);
    }
    documented
}

fn is_json_number(v: &[u8]) -> bool {
    let v = v.strip_prefix(b"-").unwrap_or(v);
    !v.is_empty()
        && v[0].is_ascii_digit()
        && v.iter().all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'))
}

/// An HTTP header whose value the header reading judges.
fn is_http_header(name: &[u8]) -> bool {
    [&b"authorization"[..], b"proxy-authorization", b"cookie", b"set-cookie"]
        .iter()
        .any(|h| name.eq_ignore_ascii_case(h))
}

/// A pair whose value is no value: a YAML reference tag (`!Ref X`), a core tag with
/// nothing after it (`token: !!null`), a Rust type (`password: &mut String`), or a
/// shell's `${NAME:?message}` (a default after `:-`, `:=` or `:+` is read by
/// `expansion.rs`).
fn no_value_here(line: &[u8], c: &regex::bytes::Captures<'_>, tag: Option<(usize, Tag)>) -> bool {
    let (name_at, val) = (c.get(2).unwrap(), c.get(4).unwrap());
    if let Some((_, Tag::Reference)) = tag {
        return true;
    }
    if let Some((_, Tag::Core | Tag::Literal)) = tag
        && c.get(3).is_none()
    {
        return true;
    }
    let properties = &line[name_at.end()..val.start()];
    if [&b"&mut "[..], b"&dyn ", b"&raw "].iter().any(|k| properties.windows(k.len()).any(|w| w == *k)) {
        return true;
    }
    line[..name_at.start()].ends_with(b"${") && val.as_bytes().first().is_some_and(|b| b"?-=+".contains(b))
}

/// A bare value with the escaped tabs and newlines that part it from its name (and end
/// it) taken off; one inside it stays: it may be part of a secret.
fn within_escaped_separators(line: &[u8], mut vs: usize, mut ve: usize) -> (usize, usize) {
    let separator = |at: usize| line[at] == b'\\' && matches!(line[at + 1], b't' | b'n' | b'r');
    while vs + 2 <= ve && separator(vs) {
        vs += 2;
    }
    while ve >= vs + 2 && separator(ve - 2) && (ve - 2 == vs || line[ve - 3] != b'\\') {
        ve -= 2;
    }
    (vs, ve)
}

/// Whether the words before a name declare it a type (`class LoopPass : public Pass`,
/// `enum class Signature : uint32_t`, `struct Token: Codable`): what follows its colon is
/// what it derives from, never a value.
fn declares_a_type(before: &[u8]) -> bool {
    let word = before.trim_ascii_end();
    let word = &word[word.iter().rposition(|b| !b.is_ascii_alphanumeric()).map_or(0, |i| i + 1)..];
    matches!(
        word,
        b"class" | b"struct" | b"enum" | b"union" | b"interface" | b"protocol" | b"extension" | b"trait"
    )
}

/// A YAML tag before the value (`!Ref X`, `!!str x`), or one with no value after it
/// (`!!null`), where it starts: see [`yaml_tag`].
fn tag_before_value(c: &regex::bytes::Captures<'_>) -> Option<(usize, Tag)> {
    let val = c.get(4)?;
    match c.get(3) {
        Some(t) => Some((t.start(), yaml_tag(t.as_bytes()))),
        None => Some(val.start()).zip(
            Some(val.as_bytes()).filter(|v| v.starts_with(b"!")).map(yaml_tag).filter(|t| *t != Tag::Other),
        ),
    }
}

/// Where the JSON string whose content starts at `from` ends: its closing quote, the
/// first one not escaped.
fn closing_quote(line: &[u8], from: usize) -> usize {
    let mut at = from;
    while at < line.len() {
        match line[at] {
            b'\\' => at += 2,
            b'"' => return at,
            _ => at += 1,
        }
    }
    line.len()
}

pub(crate) fn colon(line: &[u8], out: &mut Vec<Span>) {
    let mut pos = 0;
    while pos < line.len() {
        let Some(c) = COLON.captures_at(line, pos) else {
            break;
        };
        // Groups 2 and 4 take part in every match of COLON (see its comment).
        let name_at = c.get(2).unwrap();
        let name = name_at.as_bytes();
        let val = c.get(4).unwrap();
        let tag = tag_before_value(&c);
        if no_value_here(line, &c, tag) || declares_a_type(&line[..name_at.start()]) {
            pos = val.end();
            continue;
        }
        if c.get(2).unwrap().start() == 0 && nsswitch_sources(name, &line[val.start()..]) {
            break;
        }
        let (mut vs, mut ve) = unquote(line, val.start(), val.end());
        let header = is_http_header(name);
        let bare = vs == val.start();
        // `{sig:0mwidth$x}`: a format string's spec, not a flow mapping (which has a space).
        let format_spec = bare
            && c.get(0).unwrap().as_bytes().first() == Some(&b'{')
            && line.get(vs - 1) == Some(&b':')
            && line.get(ve) == Some(&b'}');
        // `pass:\t{}` in a format string: a tab or newline written as an escape, as code and
        // JSON write them, parts the name from its value; the value is what follows, up
        // to such an escape at its end (one inside it is kept in the value: it may be
        // part of a secret).
        if bare {
            (vs, ve) = within_escaped_separators(line, vs, ve);
        }
        let v = &line[vs..ve];
        // A value between escaped separators is in a string of code, not a config line.
        let untouched = bare && vs == val.start() && ve == val.end();
        let end = if untouched {
            line_value_end(line, c.get(1).unwrap().start(), ve, Separator::Colon)
        } else {
            ve
        };
        // `"pin": 1234` in JSON written into text: a number, which the JSON reading of a
        // record leaves as it is too; a bare marker there would break the JSON.
        let json_key = c.get(1).is_some_and(|q| q.as_bytes() == b"\"");
        let json_number = bare && json_key && is_json_number(v);
        // `"SessionAuth":{"value":true}`: an object or an array under a JSON key is no value
        // (taken for one, its replacement broke the JSON around it).
        let json_collection = bare && json_key && matches!(v.first(), Some(b'{' | b'['));
        // `"config": "{\"password\":\"…\"}"`: a JSON document written into a JSON string
        // is read as JSON, its own members judged; under a name that names a secret
        // (`"SecretString"`, Keycloak's `"secretData"`) it is the secret, the whole string.
        let json_in_json =
            !bare && json_key && [&b"{\\\""[..], b"[{\\\"", b"[\\\""].iter().any(|p| v.starts_with(p));
        if json_in_json && name_class_strict(name, Form::Colon).is_some() {
            let end = closing_quote(line, vs);
            out.push(Span { start: vs, end, rule: "kv" });
            pos = end.max(vs + 1);
            continue;
        }
        // A quoted value under a quoted name is JSON's (or a dict's): judged as the JSON
        // reading judges it, so a `Read` view's numbered copy of a file and its plain copy
        // agree; under a bare name, three capitalised words are a label's.
        // The value as its word (`v`) or, on a config file's line, as the line reads it.
        let judge = |v: &[u8], rest: &[u8], class| {
            !(bare && is_code_value(v, rest))
                && !(bare
                    && super::value::is_code_identifier(v)
                    && (camel_name(name) || names_itself(v, name)))
                && !(bare && rest.first() == Some(&b'('))
                && !(bare && is_type_annotation(v, rest))
                && !v.eq_ignore_ascii_case(name)
                && !super::value::is_schema_word(v)
                && !(bare && is_prose(v, rest))
                && (bare || json_key || !is_sentence(v))
                && should_redact(class, v)
        };
        // Punctuation inside the value, not a statement's `,` or `;` after it.
        let whole = &line[vs..end];
        let whole = whole.strip_suffix(b",").or_else(|| whole.strip_suffix(b";")).unwrap_or(whole);
        if !header
            && !format_spec
            && !json_number
            && !json_collection
            && !json_in_json
            && let Some(class) = name_class_strict(name, Form::Colon)
            && !ternary(line, c.get(0).unwrap().start())
            && !(bare && super::yaml_syntax::is_style(v))
            && (judge(v, &line[ve..], class)
                || whole.len() > v.len()
                    && !whole.iter().any(u8::is_ascii_whitespace)
                    && judge(whole, &line[end..], class))
        {
            // An unknown tag may be the start of a password in text that is no YAML.
            let start = match tag {
                Some((at, Tag::Other)) => at,
                _ => vs,
            };
            out.push(Span { start, end, rule: "kv" });
            pos = val.end().max(end);
        } else {
            // `- cmd:   password: x`: the value may itself start the next pair.
            pos = (val.start() - 1).max(c.get(0).unwrap().start() + 1);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::redact::redact;

    /// A JSON file's line, read as text (a `Read` view numbers it), is judged as the JSON
    /// reading of the same file judges it: a passphrase of capitalised words is no
    /// sentence there, or the numbered copy kept what the plain copy lost.
    #[test]
    fn a_json_line_read_as_text_is_judged_as_json() {
        let secret = "Correct Horse Battery Staple";
        for line in [
            format!("    \"password\": \"{secret}\","),
            format!("     4\u{2192}    \"db_password\": \"{secret}\""),
            format!("{{\"password\": \"{secret}\"}}"),
        ] {
            let out = crate::redact::redact(&line);
            assert!(!out.contains(secret), "{line} -> {out}");
        }
        let record = format!("{{\"password\": \"{secret}\"}}");
        let walked = crate::redact::redact_json_line(&record, &mut crate::redact::Report::default());
        assert!(!walked.contains(secret), "{walked}");
        // A label under a name that does not end with a secret's word stays.
        let label = "  \"password_hint\": \"Use Eight Characters Or More\",";
        assert_eq!(crate::redact::redact(label), label);
    }

    /// A JSON document written into a JSON string (`aws secretsmanager get-secret-value`'s
    /// `SecretString`) keeps its shape: its members are judged, not the whole taken as one
    /// value and replaced around its escaped quotes.
    #[test]
    fn json_inside_a_json_string_is_read_as_json() {
        let line = r#"    "config": "{\"api_key\":\"9f8e7d6c5b4a39281706f5e4d3c2b1a0\",\"user\":\"svc\"}","#;
        assert_eq!(redact(line), r#"    "config": "{\"api_key\":\"[REDACTED]\",\"user\":\"svc\"}","#);
        let clean = r#"  "config": "{\"region\":\"us-east-1\"}","#;
        assert_eq!(redact(clean), clean);
        // Under a secret's name the whole string is the secret, replaced whole: no escaped
        // quotes left behind the marker.
        for name in ["SecretString", "secretData"] {
            let line = format!(
                r#"  "{name}": "{{\"value\":\"wWWQmzYXQItjfAnRfJnLf6zAekOYODfWfE9pTlQz==\",\"salt\":\"U6jvBWmf\"}}","#
            );
            assert_eq!(redact(&line), format!(r#"  "{name}": "[REDACTED]","#));
        }
    }

    /// Secrets a stranger's reading found passing, each in the shape it was written.
    #[test]
    fn secrets_a_strangers_reading_found() {
        for (line, secret) in [
            // Starting with `@` or written as `$'…'`: literals, not references.
            ("export DB_PASSWORD='@Hunter2xyz'", "Hunter2xyz"),
            ("mysql -u root -p@Hunter2xyz db", "Hunter2xyz"),
            ("{\"password\": \"@Hunter2xyz\"}", "Hunter2xyz"),
            ("export DB_PASSWORD=$'Hunter2xyz'", "Hunter2xyz"),
            ("curl -u bob:$'Hunter2xyz' https://x.example.com", "Hunter2xyz"),
            // Placeholder-looking starts that are real passwords.
            ("DB_PASSWORD=Yourstruly#1984", "Yourstruly"),
            ("DB_PASSWORD=my_Dog_Rex_2019!", "Dog_Rex"),
            ("DB_PASSWORD={Hunter2xyz}", "Hunter2xyz"),
            // A base64 password glued to a short flag holds `=`.
            ("mysql -u root -pBsEAfWKxxCmPVnTSQN2Xfw== db", "BsEAfWKxxCmPVnTSQN2Xfw"),
            ("zip -P ab=cdef12ghij -r a.zip dir", "cdef12ghij"),
            // A control byte glued before a name (grep -Z, a NUL-separated listing).
            ("./config/.env\u{0}2-DB_PASSWORD=Tr0ub4dor3xyz", "Tr0ub4dor3xyz"),
            ("x\u{1}DB_PASSWORD=Tr0ub4dor3xyz", "Tr0ub4dor3xyz"),
            // A grep context line whose path has a letter that is not ASCII.
            ("./données/.env-2-DB_PASSWORD=EnvPw_123xyz", "EnvPw_123xyz"),
            ("é-DB_PASSWORD=EnvPw_123xyz", "EnvPw_123xyz"),
            // An Authorization header written as a JSON or Python pair inside text.
            (
                "2024-01-01 DEBUG headers={\"Authorization\": \"Bearer 9f8e7d6c5b4a39281706f5e4d3c2b1a0\"}",
                "9f8e7d6c5b4a",
            ),
            ("headers: {'Authorization': 'Basic Ym9iOkh1bnRlcjJ4eXo='}", "Ym9iOkh1bnRlcjJ4eXo"),
            // An escaped quote inside a double-quoted header value.
            ("curl -H \"Authorization: Bearer abc\\\"defghi12345\" https://x.example.com", "defghi12345"),
        ] {
            let out = redact(line);
            assert!(!out.contains(secret), "{line:?}\n{out:?}");
            assert_eq!(redact(&out), out, "a second pass changes {out:?}");
        }
        // Still placeholders and references.
        for line in [
            "export DB_PASSWORD=$DB_PASSWORD",
            "curl -d @body.json https://x.example.com --password=@/run/secrets/db",
            "DB_PASSWORD=your_password_here",
            "DB_PASSWORD={password}",
            "npm_config_token=@latest",
            "{\"pin\": 1234, \"password\": 87654321}",
        ] {
            assert_eq!(redact(line), line);
        }
    }

    /// A quoted `NAME=` that PHP or Perl joins a variable onto: the quote after `=`
    /// closes the string, and what follows is code, in code and in text alike.
    /// PHP's and Perl's variables carry a sigil (`$password`, `$this->password`), and a
    /// password of words is a literal even where a member chain could stand.
    #[test]
    fn sigiled_names_and_passwords_of_words_are_read() {
        for (line, secret) in [
            ("$password = 'Xq7#pL9!mZ2@';", "Xq7#pL9!mZ2@"),
            ("my $password = 'velvet_tundra_mango_maple11';", "velvet_tundra_mango_maple11"),
            ("$this->db_password = \"Xq7#pL9!mZ2@\";", "Xq7#pL9!mZ2@"),
            ("password = Walrus.Granite3933", "Walrus.Granite3933"),
            ("  password: Walrus.Granite3933", "Walrus.Granite3933"),
            // Base64 of `user:token` under a name that ends as the header's.
            (
                "MATCH_GIT_BASIC_AUTHORIZATION=Y2ktYm90OmdocF9BMkZ5M0xhcXNRb0Rnb3pZYTdmT2JnWjRSWnRDcUQxVzIxUGU=",
                "Y2ktYm90OmdocF9BMkZ5M0xhcXNRb0Rnb3pZYTdmT2JnWjRSWnRDcUQxVzIxUGU=",
            ),
            // A generated password with a dot is no member chain.
            ("FASTLANE_PASSWORD=A9ZhaLAWQZ.RPLf0", "A9ZhaLAWQZ.RPLf0"),
            ("     2\tFASTLANE_PASSWORD=A9ZhaLAWQZ.RPLf0", "A9ZhaLAWQZ.RPLf0"),
        ] {
            let out = redact(line);
            assert!(!out.contains(secret) && out.contains("[REDACTED]"), "{line} -> {out}");
        }
        for line in [
            "password = self.password",
            "my $Token = qr/[\\x21\\x23-\\x27]/;",
            "      $pass = '-anonymous@'",
            "[ \"$password\" = \"$other\" ]",
            "token = hashlib.sha256",
            "password = this.s3Client.config2",
            // Base64 of a word, of JSON, of a URL under names that hold no credential.
            "EXAMPLE_BLOB=aGVsbG8gd29ybGQgZnJvbSBiYXNlNjQ=",
            "JWT_HEADER=eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9",
            "ENDPOINT=aHR0cHM6Ly9leGFtcGxlLm9yZy9hcGkvdjE=",
            "api_key = settings.OPENAI_API_KEY2",
        ] {
            assert_eq!(redact(line), line);
        }
    }

    /// A Lisp form headed by a secret's name gives it its one string; a form headed by
    /// anything else, a string of words or a reference keeps its string.
    #[test]
    fn a_lisp_form_headed_by_a_secret_gives_its_string() {
        for (line, secret) in [
            ("              (sql-password \"Mango^Piston9909\")", "Mango^Piston9909"),
            (
                "(prod (sql-user \"report\") (sql-password \"lotus-cactus-maple-tundra62\"))",
                "lotus-cactus-maple-tundra62",
            ),
        ] {
            let out = crate::redact::redact(line);
            assert!(!out.contains(secret) && out.contains("sql-password"), "{out}");
        }
        for line in [
            "(sql-user \"report\")",
            "(message \"Mango^Piston9909\")",
            "(sql-password \"\")",
            "(read-passwd \"Password: \")",
            "(password-cache-expiry \"3600\")",
            "(get-password \"github.com\")",
            "(set-password \"db-prod\")",
            "(hash-password \"plaintext\")",
        ] {
            assert_eq!(crate::redact::redact(line), line);
        }
    }

    /// A setter or a builder gives a secret its one literal by what it is named; a
    /// function that does something with a secret is no setter.
    #[test]
    fn setters_give_their_literal_a_name() {
        for (line, secret) in [
            ("        .password(\"eE!1rO#5VCoDF7_-yUiFC\")", "eE!1rO#5VCoDF7_-yUiFC"),
            ("    .bearer_auth(\"IzXrlocMrCIIOVhfg9MEj83pfLJuUUMI\")", "IzXrlocMrCIIOVhfg9MEj83pfLJuUUMI"),
            (
                "local res, err = red:auth(\"kestrel-maple-granite-quartz96\")",
                "kestrel-maple-granite-quartz96",
            ),
            (
                "client.setApiKey(\"15DJ6ohyU6hnIAJETnmkbzNF1u7OzghgZEXpksRA\");",
                "15DJ6ohyU6hnIAJETnmkbzNF1u7OzghgZEXpksRA",
            ),
            ("$this->withToken('Zx9Kq2Lm8Np4Rt6Vw1Yb');", "Zx9Kq2Lm8Np4Rt6Vw1Yb"),
        ] {
            let out = redact(line);
            assert!(!out.contains(secret), "{line} -> {out}");
        }
        for line in [
            "user.setPassword(password);",
            "x = getPassword(\"database\")",
            "hashPassword(\"hunter2xyz\")",
            "config.token(\"my_token_name\")",
            "$securePassword = ConvertTo-SecureString $plain -AsPlainText -Force",
        ] {
            assert_eq!(redact(line), line);
        }
    }

    #[test]
    fn a_variable_joined_after_a_quoted_name_is_code() {
        for line in [
            "            'password' => '--password='.$connection['password'],",
            "        $encryptedContent = 'APP_KEY='.$encrypter->encryptString('k').\"\\n\";",
        ] {
            assert_eq!(redact(line), line);
            let mut code = Vec::new();
            crate::redact::filter::run_as(crate::redact::filter::Kind::Code, line.as_bytes(), &mut code)
                .expect("writing to a Vec does not fail");
            assert_eq!(String::from_utf8_lossy(&code).trim_end(), line);
        }
    }

    #[test]
    fn an_escaped_tab_or_newline_before_a_value_is_a_separator() {
        // A format string in code (aead's test harness prints `pass:\t{}\n\`): the value
        // is the format slot after the escaped tab, not the escape's letter.
        for line in ["                            pass:\\t{}\\n\\", "\"token:\\t{:?}\\n\""] {
            assert_eq!(redact(line), line);
        }
        // A value after an escaped tab is still one, and the escape stays.
        assert_eq!(redact("\"password:\\tHunter2xyz\\n\""), "\"password:\\t[REDACTED]\\n\"");
    }

    #[test]
    fn a_codecov_graph_token_is_public_and_other_url_tokens_are_not() {
        // Codecov's graphing token only reads coverage graphs and is meant for README
        // badges; an upload token, or a token in any other URL, is a secret.
        for line in [
            "[![codecov](https://codecov.io/gh/o/r/branch/main/graph/badge.svg?token=AB12CD34EF)](https://codecov.io/gh/o/r)",
            "<img src=\"https://app.codecov.io/gh/o/r/graphs/sunburst.svg?token=AB12CD34EF\">",
        ] {
            assert_eq!(redact(line), line);
        }
        for (line, secret) in [
            (
                "curl https://codecov.io/upload/v2?token=9f8e7d6c-5b4a-3928-1706-f5e4d3c2b1a0&commit=x",
                "9f8e7d6c",
            ),
            (
                "![x](https://raw.githubusercontent.com/o/r/main/graph/a.svg?token=GHSAT0AAAAAACZ4QWERTY)",
                "GHSAT0",
            ),
            ("see https://evil.example/codecov.io/graph?token=AB12CD34EF", "AB12CD34EF"),
        ] {
            let out = redact(line);
            assert!(!out.contains(secret), "{line}\n{out}");
        }
    }
}
