//! `key => value`: a key and its value joined by `=>`, as PHP's arrays (a Laravel
//! `config/database.php`), Ruby's hashes (`:password => 'x'`), Perl's lists
//! (`password => 'x'`, `-password => 'x'`) and Puppet's attributes write them.
//!
//! Only a literal is read: a quoted string (one left open at the line's end too, as a
//! cut-off scrollback shows it), Perl's `q{…}`/`qq{…}` and Ruby's `%q(…)`, or the literal
//! a documented wrapper of a password holds (Puppet's `Sensitive('x')` and
//! `mysql::password('x')`, `postgresql_password('u', 'x')`, Laravel's `bcrypt('x')` and
//! `Hash::make('x')`). A bare value there is code (`$pw`, `env('DB_PASSWORD', '')`,
//! `params[:password]`, `undef`).

use std::sync::LazyLock;

use regex::bytes::Regex;

use super::span::{Span, ascii_regex, lazy_re};
use super::value::{Class, Form, name_class_strict, should_redact};

/// A quoted literal with its escapes: PHP's, Ruby's and Perl's single quotes take `\'`
/// and `\\` too.
macro_rules! quoted {
    () => {
        r#"(?:"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')"#
    };
}

lazy_re!(
    ARROW,
    concat!(
        // The key: quoted, a Ruby symbol (`:password`, `:"password"`) or a bare word
        // (Perl and Puppet; `-password` as CGI.pm's named arguments).
        r#"(?:^|[^A-Za-z0-9_$])[-:]?["']?(?P<name>[A-Za-z_][A-Za-z0-9_.\-]*)["']?[ \t]*=>[ \t]*(?:"#,
        r#""(?P<double>(?:[^"\\]|\\.)*)""#,
        // Inside a JSON string read as text: `\"x\"`.
        r#"|\\"(?P<escaped>(?:[^"\\]|\\[^"])*)\\""#,
        // Mojolicious's `secrets => ['x', …]`: a list's first literal under a plural key.
        r#"|\[[ \t]*(?:"(?P<listed_double>(?:[^"\\]|\\.)*)"|'(?P<listed>(?:[^'\\]|\\.)*)')"#,
        r#"|'(?P<single>(?:[^'\\]|\\.)*)'"#,
        r#"|'(?P<open>(?:[^'\\\s]|\\\S)+)[ \t\r\n]*$"#,
        // Perl's `q{…}`, `qq(…)`, `q/…/` and Ruby's `%q(…)`, `%Q[…]`, `%(…)`; not
        // Elixir's `%{…}`, a map.
        r#"|(?:qq?|%[qQ])(?:\{(?P<brace>[^{}]*)\}|\((?P<paren>[^()]*)\)|\[(?P<bracket>[^\[\]]*)\]|<(?P<angle>[^<>]*)>|/(?P<slash>[^/]*)/)"#,
        r#"|%(?:\((?P<rparen>[^()]*)\)|\[(?P<rbracket>[^\[\]]*)\])"#,
        r#"|(?:Sensitive|bcrypt|Hash::make|mysql::password|(?:mysql::)?mysql_password|(?:postgresql::)?postgresql_password)\([ \t]*(?:"#,
        quoted!(),
        r#"[ \t]*,[ \t]*)?(?P<call>"#,
        quoted!(),
        r#")[ \t]*[,)]"#,
        ")"
    )
);

/// The groups that hold a value's text, and whether double quotes enclose it.
const INNER: [(&str, bool); 11] = [
    ("double", true),
    ("escaped", true),
    ("single", false),
    ("open", false),
    ("brace", false),
    ("paren", false),
    ("bracket", false),
    ("angle", false),
    ("slash", false),
    ("rparen", true),
    ("rbracket", true),
];

pub(crate) fn spans(line: &[u8], out: &mut Vec<Span>) {
    if memchr::memmem::find(line, b"=>").is_none() {
        return;
    }
    let mut pos = 0;
    while let Some(c) = ARROW.captures_at(line, pos) {
        let whole = c.get(0).map_or(line.len(), |m| m.end());
        pos = whole;
        let Some(name) = c.name("name") else { continue };
        // Not the last part of a longer name: a path's (Rails's `put "/disk/:encoded_token"
        // => "disk#update"`) or a package's (`'Test2::Event::Pass' => '1.302103'`).
        let mut from = name.start();
        if from > 0 && b"\"'".contains(&line[from - 1]) {
            from -= 1;
        }
        if from > 0 && b"-:".contains(&line[from - 1]) {
            from -= 1;
        }
        if from > 0 && (line[from - 1].is_ascii_alphanumeric() || b"/_:".contains(&line[from - 1])) {
            continue;
        }
        let listed = ["listed", "listed_double"].iter().find_map(|g| c.name(g));
        if let Some(m) = listed {
            // The list's entries may be pairs of their own (`['Authorization' => …]`):
            // read on from its bracket.
            pos = memchr::memrchr(b'[', &line[..m.start()]).unwrap_or(m.start());
            // A plural key's list holds its secrets; `'passwords' => 'users'` names a broker.
            if plural(name.as_bytes()) && should_redact(Class::Secret, m.as_bytes()) {
                out.push(Span { start: m.start(), end: m.end(), rule: "kv" });
            }
            continue;
        }
        let (value, double, wrapped) = match c.name("call") {
            // The wrapper says the literal is a password, whatever the key's name.
            Some(call) => {
                let double = call.as_bytes().first() == Some(&b'"');
                (call.start() + 1..call.end() - 1, double, true)
            }
            None => match INNER.iter().find_map(|&(group, double)| Some((c.name(group)?, double))) {
                Some((m, double)) => (m.start()..m.end(), double, false),
                None => continue,
            },
        };
        // Guzzle's and Laravel's `'headers' => ['Authorization' => 'Bearer …']`: read as
        // the header's line it stands for, so the scheme stays as it does there.
        if name.as_bytes().eq_ignore_ascii_case(b"authorization")
            || name.as_bytes().eq_ignore_ascii_case(b"proxy-authorization")
        {
            if interpolates(&line[value.clone()], double) {
                continue;
            }
            const AS_HEADER: &[u8] = b"Authorization: ";
            let header_line = [AS_HEADER, &line[value.clone()]].concat();
            let mut found = Vec::new();
            super::web::header(&header_line, &mut found);
            out.extend(found.into_iter().map(|s| Span {
                start: value.start + s.start - AS_HEADER.len(),
                end: value.start + s.end - AS_HEADER.len(),
                rule: s.rule,
            }));
            continue;
        }
        let class = if wrapped { Some(Class::Password) } else { key_class(name.as_bytes()) };
        let after = if wrapped || c.name("open").is_some() { &[][..] } else { &line[whole..] };
        if let Some(class) = class
            && is_literal_secret(class, name.as_bytes(), &line[value.clone()], double, after)
        {
            out.push(Span { start: value.start, end: value.end, rule: "kv" });
        }
    }
}

/// What a key says of its value. A plural names a collection (Laravel's `config/auth.php`
/// has `'passwords' => 'users'`, its broker); `PWD` is ODBC's and SQL Server's password
/// (`array("UID" => "sa", "PWD" => "…")` in Microsoft's PHP driver).
fn key_class(name: &[u8]) -> Option<Class> {
    if name.eq_ignore_ascii_case(b"pwd") {
        return Some(Class::Password);
    }
    if plural(name) {
        return None;
    }
    name_class_strict(name, Form::Colon)
}

fn plural(name: &[u8]) -> bool {
    let lower = name.to_ascii_lowercase();
    [&b"passwords"[..], b"secrets", b"tokens", b"keys"].iter().any(|p| lower.ends_with(p))
}

/// Whether a literal under a secret's key is one: not a reference, not interpolated or
/// joined with code (`after` is what follows its close), and not what a framework writes
/// there in its place (a rule list, a cast, a label, a field's name or a class).
fn is_literal_secret(class: Class, name: &[u8], v: &[u8], double: bool, after: &[u8]) -> bool {
    // `'pw_' . $suffix`, `"a" + b`: a piece of a value made at run time; `'x'.freeze` is
    // a method of the literal itself.
    let after = after.trim_ascii_start();
    let joined = match after {
        [b'+', ..] => true,
        [b'.', rest @ ..] => !rest.first().is_some_and(u8::is_ascii_alphabetic),
        _ => false,
    };
    // A single-quoted `$` is a literal dollar (`'$2y$10$…'`, a bcrypt hash; Puppet's
    // `'$6$…'`), not a variable: judged without it, so `'$DB_PASSWORD'` is still a name.
    let judged = match v {
        [b'$', rest @ ..] if !double && !rest.is_empty() => rest,
        _ => v,
    };
    !(interpolates(v, double)
        || joined
        || super::value::is_schema_word(v)
        || super::shape::is_sentence(v)
        || v.eq_ignore_ascii_case(name)
        || is_bind_variable(v)
        || is_option_word(v)
        || is_label(v)
        || names_a_field(v)
        || is_class_name(v))
        && should_redact(class, judged)
}

/// Whether a literal is a template filled in at run time: double quotes interpolate
/// (`"$pw"`, `"{$pw}"`, `"#{pw}"`); Hiera's and Puppet's `%{…}` in either quote.
fn interpolates(v: &[u8], double: bool) -> bool {
    memchr::memmem::find(v, b"%{").is_some()
        || double
            && (memchr::memmem::find(v, b"#{").is_some()
                || v.windows(2)
                    .any(|w| w[0] == b'$' && (w[1].is_ascii_alphabetic() || b"_{".contains(&w[1]))))
}

/// PDO's and Ruby's named placeholders: `':password'`.
fn is_bind_variable(v: &[u8]) -> bool {
    matches!(v, [b':', first, rest @ ..]
        if (first.is_ascii_alphabetic() || *first == b'_')
            && rest.iter().all(|b| b.is_ascii_alphanumeric() || *b == b'_'))
}

/// `'--password='` built into a command (`'--password='.$config['password']`).
fn is_option_word(v: &[u8]) -> bool {
    v.starts_with(b"-")
        && v.len() > 1
        && v.iter().all(|b| b.is_ascii_alphanumeric() || b"-_=".contains(b))
        && (v.ends_with(b"=") || v.starts_with(b"--"))
}

/// One capitalised word, maybe with a colon: a form's label or its translation
/// (`'Passwort'`, `'Contraseña'`, `'Password:'`), as a language file maps a field.
fn is_label(v: &[u8]) -> bool {
    let v = v.strip_suffix(b":").unwrap_or(v);
    let Some(text) = std::str::from_utf8(v).ok() else { return false };
    let mut chars = text.chars();
    chars.next().is_some_and(char::is_uppercase) && text.chars().count() > 2 && chars.all(char::is_lowercase)
}

/// A config key or a column named after the secret (`'db_password'`,
/// `'database.connections.mysql.password'`, `'mysql_native_password'`): the word stands
/// as a part of its own, after `_`, `.`, `-` or `:`.
fn names_a_field(v: &[u8]) -> bool {
    const WORDS: [&[u8]; 4] = [b"password", b"passwd", b"secret", b"token"];
    v.iter().all(|b| b.is_ascii_alphanumeric() || b"_.-:".contains(b))
        && v.split(|b| b"_.-:".contains(b)).count() > 1
        && v.split(|b| b"_.-:".contains(b)).any(|part| WORDS.iter().any(|w| part.eq_ignore_ascii_case(w)))
}

/// A PHP class by its namespace (`'App\Rules\StrongPassword'`), as Laravel's rules and
/// casts name one.
fn is_class_name(v: &[u8]) -> bool {
    let parts: Vec<&[u8]> = v.split(|b| *b == b'\\').filter(|p| !p.is_empty()).collect();
    parts.len() >= 2
        && parts
            .iter()
            .all(|p| p[0].is_ascii_uppercase() && p.iter().all(|b| b.is_ascii_alphanumeric() || *b == b'_'))
}

#[cfg(test)]
mod tests {
    use crate::redact::redact;

    /// `key => value`: PHP's arrays (a Laravel `config/database.php`), Ruby's hash
    /// rockets, Perl's fat comma and Puppet's attributes. A literal under a secret's name
    /// is one; code (a call, a variable, an interpolated or joined string), a validation
    /// rule list, a cast's type and a sentence are not.
    #[test]
    fn a_key_joined_to_its_value_by_a_fat_arrow_is_read() {
        for (line, kept) in [
            ("        'password' => 'Zq9!xLmw2',", "        'password' => '"),
            ("$config = ['db_password' => \"Zq9!xLmw2\"];", "$config = ['db_password' => \""),
            ("$db = array('username' => 'app', 'password' => 'Zq9!xLmw2');", "'username' => 'app'"),
            ("  :password => 'Zq9!xLmw2',", "  :password => '"),
            ("{ \"password\" => \"Zq9!xLmw2\" }", "{ \"password\" => \""),
            (
                "establish_connection(:adapter => \"mysql2\", :password => \"Zq9!xLmw2\")",
                ":adapter => \"mysql2\"",
            ),
            ("  :password => 'Zq9!xLmw2'.freeze,", "  :password => '"),
            ("my %db = (user => 'app', password => 'Zq9!xLmw2');", "user => 'app'"),
            ("    -password => 'Zq9!xLmw2',", "    -password => '"),
            ("  password => 'Zq9!xLmw2',", "  password => '"),
            ("  'secret_key'=>'Zq9xLmw2Kp8vRt5y',", "  'secret_key'=>'"),
            ("    12\u{2192}        'password' => 'Zq9!xLmw2',", "        'password' => '"),
            ("    'auth' => ['user' => 'mawa', 'password' => 'awam'],", "'user' => 'mawa'"),
            // Cases a stranger's reading found passing, each in the shape it was written.
            ("Set it with `'password' => 'Zq9!xLmw2'` in config", "Set it with `'password' => '"),
            ("'password' => 'it\\'sZq9!xLmw2',", "'password' => '[REDACTED]"),
            (":password => %q(Zq9!xLmw2)", ":password => %q("),
            ("password => q{Zq9!xLmw2},", "password => q{"),
            ("password => qq{Zq9!xLmw2},", "password => qq{"),
            ("password => q/Zq9!xLmw2/,", "password => q/"),
            ("        'password' => 'Zq9!xLmw2", "        'password' => '"),
            ("'password' => '$2y$10$Zq9xLmw2abcdefghijklmuO',", "'password' => '"),
            ("  password => '$6$rounds=5000$Zq9xLmw2$abcdef',", "  password => '"),
            ("'password' => 'min:Zq9xLmw2',", "'password' => '"),
            ("  password_hash => mysql::password('Zq9!xLmw2'),", "mysql::password('"),
            (
                "  password => postgresql::postgresql_password('app', 'Zq9!xLmw2'),",
                "postgresql_password('app', '",
            ),
            ("  password => Sensitive('Zq9!xLmw2'),", "Sensitive('"),
            ("$conn = array(\"UID\" => \"sa\", \"PWD\" => \"Zq9!xLmw2\");", "\"UID\" => \"sa\""),
            ("{\"new_string\":\"'password' => 'Zq9!xLmw2'\"}", "'password' => '"),
            ("{\"content\":\"$db = ['password' => \\\"Zq9!xLmw2\\\"];\"}", "'password' => \\\""),
            (
                "$c->request('GET', '/', ['headers' => ['Authorization' => 'Bearer Zq9xLmw2Kp8vRt5y']]);",
                "'Bearer ",
            ),
            ("  secrets => ['Zq9xLmw2Kp8vRt5y'],", "  secrets => ['"),
        ] {
            let out = redact(line);
            assert!(!out.contains("Zq9") && !out.contains("awam"), "{line}\n{out}");
            assert!(out.contains(kept), "{line}\n{out}");
            assert_eq!(redact(&out), out, "a second pass changes {out:?}");
        }
        for line in [
            "        'password' => env('DB_PASSWORD', ''),",
            "            'password' => $request->password,",
            "            'password' => Hash::make($data['password']),",
            "            'password' => 'required|string|min:8|confirmed',",
            "            'password' => 'nullable|min:6',",
            "            'password' => ['required', 'string', 'min:8'],",
            "            'password' => 'hashed',",
            "            'password' => 'encrypted',",
            "    'password' => 'The provided password is incorrect.',",
            "    'password' => __('The provided password is incorrect.'),",
            "        'password' => '',",
            "        'password' => 'pw_' . $suffix,",
            "        \"password\" => \"$password\",",
            "        'password' => \"{$this->password}\",",
            "  :password => params[:password],",
            "  :password => \"#{ENV['DB_PASSWORD']}\",",
            "    password => $self->{password},",
            "    pass => 1,",
            "    passwd  => '$',         # pwent[1]",
            "    'access_token' => 'foobar token',",
            "  password => $db_password,",
            "const strength = password => password.length;",
            "            'password' => 'current_password',",
            "            'password' => 'Confirmed',",
            "            'password' => 'sometimes|present|filled',",
            "            'secret' => 'encrypted:array',",
            "        'defaults' => ['guard' => 'web', 'passwords' => 'users'],",
            "    'password' => 'Passwort',",
            "    'password' => 'Contraseña',",
            "    'password' => 'Password:',",
            "    $stmt->execute(['password' => ':password']);",
            "    password => '%{hiera(\"mysql_password\")}',",
            "    'password' => 'db_password',",
            "    'password' => 'database.connections.mysql.password',",
            "    'auth_plugin' => 'mysql_native_password',",
            "    'password' => 'App\\Rules\\StrongPassword',",
            "            'password' => '--password='.$connection['password'],",
            "    'password' => '$DB_PASSWORD',",
            "          \"Authorization\" => \"Basic #{Base64.strict_encode64(username + \":\" + password)}\"",
            "            'Test2::Event::Pass'    => '1.302103',",
            "    put  \"/disk/:encoded_token\" => \"active_storage/disk#update\", as: :update",
            // validatorjs's rules, as its README writes them.
            "let rules = { email: 'required|email', password: 'required|min:6' };",
        ] {
            assert_eq!(redact(line), line);
        }
    }
}
