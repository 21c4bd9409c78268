//! A literal bound to a name in code, found by the shape of a declaration rather than by
//! one form per language: whatever stands between the name and `=` (a type annotation
//! `HMAC_KEY: &[u8]`, `char *api_key`, an array's `[]`, a subscript `["API_KEY"]`) and
//! whatever wraps the literal (a prefix `b"…"`, `r'…'`, `@"…"`; a conversion
//! `[]byte("…")`, `String::from("…")`; a borrow `&"…"`) is stepped over, and C's
//! `#define NAME "…"` is one too. A byte array (`{ 0x0c, 0x63, … }`) under a secret's
//! name is its value whole.
//!
//! The name is judged as any code's name is ([`name_class_strict`]); a literal reached
//! through a call is judged by its shape alone ([`Class::Generated`]): the call may look
//! it up or transform it (`getpass("Password:")`).

use std::sync::LazyLock;

use regex::bytes::Regex;

use super::span::{Span, ascii_regex, lazy_re};
use super::value::{Class, Form, is_pattern, name_class_strict, should_redact};

lazy_re!(
    ASSIGNED,
    concat!(
        // `=` or `:=`, not `==`, `!=`, `<=`, `>=`, `=>`, then what may wrap the literal.
        r#"(?:^|[^=!<>:+\-*/%&|^])(:?=)[ \t]*(\[\][a-z0-9]+\(|[A-Za-z_][A-Za-z0-9_.:]*\([ \t]*|&[ \t]*)?"#,
        r#"([bBrRuUfF]{1,2}|@)?("""[^"]*"""|'''[^']*'''|`[^`]*`|"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|\{[ \t]*0[xX][0-9a-fA-F]{1,2}(?:[ \t]*,[ \t]*0[xX][0-9a-fA-F]{1,2}){7,}[ \t]*,?[ \t]*\})"#
    )
);

lazy_re!(DEFINE, r#"#[ \t]*define[ \t]+([A-Za-z_][A-Za-z0-9_]*)[ \t]+([bBrRuUfFL]{0,2})("(?:[^"\\]|\\.)*")"#);

/// Every literal of `line` that a declaration binds to a secret's name.
pub(crate) fn declarations(line: &[u8], out: &mut Vec<Span>) {
    for c in ASSIGNED.captures_iter(line) {
        // Groups 1 (`=`) and 4 (the literal) take part in every match.
        let (eq, wrap, val) = (c.get(1).unwrap(), c.get(2), c.get(4).unwrap());
        let Some(name) = name_before(&line[..eq.start()]) else { continue };
        let Some(class) = name_class_strict(name, Form::Env) else { continue };
        if !ends_a_value(&line[val.end()..]) {
            continue; // `user_pass = '%s:%s' % (user, pw)`: an expression, not a literal
        }
        let called = wrap.is_some_and(|w| w.as_bytes().contains(&b'('));
        judge(line, name, val.start(), val.end(), if called { Class::Generated } else { class }, out);
    }
    if memchr::memmem::find(line, b"define").is_some() {
        for c in DEFINE.captures_iter(line) {
            // The name and the literal take part in every match of DEFINE.
            let (name, val) = (c.get(1).unwrap(), c.get(3).unwrap());
            if let Some(class) = name_class_strict(name.as_bytes(), Form::Env) {
                judge(line, name.as_bytes(), val.start(), val.end(), class, out);
            }
        }
    }
}

/// The class of the name a declaration binds when its line ends before the value
/// (`const API_KEY =`, `jwtKey :=`): the literal is on the next line.
pub(crate) fn left_open(text: &[u8]) -> Option<Class> {
    let t = text.trim_ascii_end();
    let lhs = t.strip_suffix(b"=")?;
    let lhs = lhs.strip_suffix(b":").unwrap_or(lhs);
    if lhs.last().is_some_and(|b| b"=!<>+-*/%&|^".contains(b)) {
        return None; // `==`, `<=`, `+=`: not a binding
    }
    name_class_strict(name_before(lhs)?, Form::Env)
}

/// The inside of the one quoted literal a line holds (after a declaration left open
/// above it), when its value and `class` say it is a secret.
pub(crate) fn literal_line(text: &[u8], class: Class) -> Option<(usize, usize)> {
    let start = text.iter().position(|b| !b.is_ascii_whitespace())?;
    let mut end = text.len() - text.iter().rev().position(|b| !b.is_ascii_whitespace()).unwrap_or(0);
    while end > start && matches!(text[end - 1], b';' | b',' | b')') {
        end -= 1;
    }
    let q = text[start];
    if end - start < 2 || !matches!(q, b'"' | b'\'' | b'`') || text[end - 1] != q {
        return None;
    }
    let v = &text[start + 1..end - 1];
    let secret = !v.contains(&q)
        && !v.iter().any(u8::is_ascii_whitespace)
        && !is_pattern(v)
        && should_redact(class, v);
    secret.then_some((start + 1, end - 1))
}

/// Whether what follows a literal ends it as a value: the line's or the statement's end, a
/// closing bracket, the next argument, a comment; not an operator that makes it part of
/// an expression (`%`, `+`, `.format(…)`, `[0]`).
fn ends_a_value(mut rest: &[u8]) -> bool {
    // A method that takes nothing leaves the literal what it was (`"…".encode()`).
    while let Some(call) = rest.strip_prefix(b".") {
        let name = call.iter().take_while(|b| b.is_ascii_alphanumeric() || **b == b'_').count();
        match call[name..].strip_prefix(b"()") {
            Some(after) if name > 0 => rest = after,
            _ => return false,
        }
    }
    let rest = rest.trim_ascii_start();
    let rest = rest.strip_prefix(b")").map_or(rest, <[u8]>::trim_ascii_start);
    rest.is_empty()
        || matches!(rest[0], b';' | b',' | b')' | b'}' | b'#')
        || rest.starts_with(b"//")
        || rest.starts_with(b"/*")
        || rest.starts_with(b"\\n")
}

/// Whether `v` is made of the name's own letters in order (`"kPSK"` for `SSL_TXT_kPSK`,
/// `"PCT_Signature"` for `TYPE_PCT_SIGNATURE`): what the name is called, not a secret.
fn is_label_of(v: &[u8], name: &[u8]) -> bool {
    let letters = |t: &[u8]| -> Vec<u8> {
        t.iter().filter(|b| b.is_ascii_alphanumeric()).map(u8::to_ascii_lowercase).collect()
    };
    let (v, name) = (letters(v), letters(name));
    v.len() >= 3 && memchr::memmem::find(&name, &v).is_some()
}

/// Pushes the literal's inside when `class` and its value say it is a secret; a byte
/// array is one when it is named as one.
fn judge(line: &[u8], name: &[u8], start: usize, end: usize, class: Class, out: &mut Vec<Span>) {
    // Python's triple quotes, else one quote (or a backtick: Go's and JavaScript's raw strings).
    let triple = [&b"\"\"\""[..], b"'''"].iter().any(|q| line[start..end].starts_with(q));
    let quote = if triple { 3 } else { 1 };
    let (vs, ve) = (start + quote, end - quote);
    let v = &line[vs..ve];
    if is_label_of(v, name) {
        return; // `#define SSL_TXT_kPSK "kPSK"`: the name spelled again, a label
    }
    let secret = if line[start] == b'{' {
        class != Class::Generated
    } else {
        !v.iter().any(u8::is_ascii_whitespace) && !is_pattern(v) && should_redact(class, v)
    };
    if secret && vs < ve {
        out.push(Span { start: vs, end: ve, rule: "declaration" });
    }
}

/// The name a declaration's left side binds: the subscript's quoted key
/// (`config["API_KEY"]`), else the last name before a type annotation's `:` (`apiKey:
/// string`, `HMAC_KEY: &[u8]`) or before an array's brackets (`API_KEY[]`), past
/// pointers and qualifiers (`static const char *api_key`).
fn name_before(lhs: &[u8]) -> Option<&[u8]> {
    // The statement: from the last `;`, `{`, `(` or `,`.
    let start = lhs.iter().rposition(|b| matches!(b, b';' | b'{' | b'(' | b',')).map_or(0, |i| i + 1);
    let mut lhs = lhs[start..].trim_ascii();
    if let Some(colon) = annotation_colon(lhs) {
        lhs = lhs[..colon].trim_ascii_end();
    }
    if lhs.ends_with(b"]") {
        let open = lhs.iter().rposition(|&b| b == b'[')?;
        let inside = lhs[open + 1..lhs.len() - 1].trim_ascii();
        if inside.len() >= 2 && matches!(inside[0], b'"' | b'\'') && inside.last() == Some(&inside[0]) {
            return Some(&inside[1..inside.len() - 1]);
        }
        if !inside.iter().all(u8::is_ascii_digit) {
            return None; // `table[i] = …`: an element, not a name
        }
        lhs = lhs[..open].trim_ascii_end();
    }
    let begin = lhs
        .iter()
        .rposition(|b| !(b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'$')))
        .map_or(0, |i| i + 1);
    let name = &lhs[begin..];
    name.first().is_some_and(|b| b.is_ascii_alphabetic() || matches!(b, b'_' | b'$')).then_some(name)
}

/// Where a type annotation's `:` is: the first one outside brackets and quotes that is
/// not half of a path's `::`.
fn annotation_colon(lhs: &[u8]) -> Option<usize> {
    let (mut depth, mut quote) = (0i32, None);
    let mut i = 0;
    while i < lhs.len() {
        let b = lhs[i];
        match (quote, b) {
            (Some(q), _) if b == q => quote = None,
            (Some(_), _) => {}
            (None, b'"' | b'\'') => quote = Some(b),
            (None, b'[' | b'<') => depth += 1,
            (None, b']' | b'>') => depth -= 1,
            (None, b':') if lhs.get(i + 1) == Some(&b':') => i += 1,
            (None, b':') if depth == 0 => return Some(i),
            _ => {}
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(line: &str) -> Vec<&str> {
        let mut out = Vec::new();
        declarations(line.as_bytes(), &mut out);
        out.iter().map(|s| &line[s.start..s.end]).collect()
    }

    #[test]
    fn a_literal_is_found_through_what_stands_around_it() {
        let key = "zHhXXBx1tsMd2bPYfQDriEDYKq7N3cos";
        for line in [
            format!(r#"const HMAC_KEY: &[u8] = b"{key}";"#),
            format!(r#"const HMAC_KEY: &str = "{key}";"#),
            format!(r#"var jwtKey = []byte("{key}")"#),
            format!(r#"jwtKey := []byte("{key}")"#),
            format!(r#"let secret = String::from("{key}");"#),
            format!(r#"app.secret_key = b'{key}'"#),
            format!(r#"app.config["WTF_CSRF_SECRET_KEY"] = b"{key}""#),
            format!(r#"static const char *api_key = "{key}";"#),
            format!(r#"static const char API_TOKEN[] = "{key}";"#),
            format!(r#"private const string ApiKey = @"{key}";"#),
            format!(r#"#define MQTT_PASSWORD "{key}""#),
            format!(r#"val apiSecret: String = "{key}""#),
            format!(r#"SECRET_KEY = "{key}".encode()  # signing"#),
            format!("const hmacKey = `{key}`"),
            format!(r#"API_TOKEN = """{key}""""#),
        ] {
            assert_eq!(found(&line), [key], "{line}");
        }
        let bytes = "{ 0x0c, 0x63, 0xc2, 0xf2, 0x2c, 0xf8, 0x93, 0x47, 0xb7, 0x9f }";
        let line = format!("static const uint8_t AES_KEY[16] = {bytes};");
        assert_eq!(found(&line), [&bytes[1..bytes.len() - 1]]);
    }

    #[test]
    fn a_declaration_left_open_takes_the_literal_below() {
        assert_eq!(left_open(b"const API_KEY ="), Some(Class::Secret));
        assert_eq!(left_open(b"    jwtKey :="), Some(Class::Generated));
        assert_eq!(left_open(b"if api_key =="), None);
        assert_eq!(left_open(b"total +="), None);
        let line = b"  \"Xk9mP2qR7vL4nT8wZ3bY6cJ1\";";
        assert_eq!(literal_line(line, Class::Secret), Some((3, 27)));
        assert_eq!(literal_line(b"  compute(key);", Class::Secret), None);
        assert_eq!(literal_line(b"  \"a sentence, not a key\",", Class::Secret), None);
    }

    #[test]
    fn what_is_not_a_secret_bound_to_a_name_stays() {
        for line in [
            // A call's literal is judged by its shape: a prompt, a lookup, a file.
            r#"password = getpass("Password:")"#,
            r#"api_key = os.getenv("OPENAI_API_KEY")"#,
            r#"token = read_token("/run/secrets/token")"#,
            // Names that are not a secret's, and comparisons.
            r#"const char *name = "zHhXXBx1tsMd2bPYfQDriEDYKq7N3cos";"#,
            r#"if (api_key == "zHhXXBx1tsMd2bPYfQDriEDYKq7N3cos") {"#,
            r#"sort_key: &str = "created_at_desc_index";"#,
            r#"cache_key = b"d41d8cd98f00b204e9800998ecf8427e""#,
            r#"tokens[i] = "zHhXXBx1tsMd2bPYfQDriEDYKq7N3cos";"#,
            r#"#define PASSWORD_PROMPT_MAX 64"#,
            r#"user_pass = '%s:%s' % (unquote(user), unquote(passwd))"#,
            r#"jsonnet_token = r'[^\W\d]\w*'"#,
            r#"api_token = "{}zHhXXBx1tsMd2bPYfQDriEDYKq7N3cos".format(x)"#,
            "static const uint8_t TABLE[16] = { 0x0c, 0x63, 0xc2, 0xf2, 0x2c, 0xf8, 0x93, 0x47 };",
            r#"#define SSL_TXT_kPSK "kPSK""#,
            r#"#define OSSL_SELF_TEST_TYPE_PCT_SIGNATURE "PCT_Signature""#,
        ] {
            assert!(found(line).is_empty(), "{line}: {:?}", found(line));
        }
    }
}
