//! Judging names and values: is `DB_PASSWORD` a secret's name, and is `hunter2` a secret
//! value or a reference, a placeholder, a path?
//!
//! Every context rule (assignments, flags, `key: value`, query parameters) asks the same two
//! questions, so the answers live here, once. Names are split into lower-case segments
//! (`GITHUB_TOKEN` → `github`, `token`; `clientSecret` → `client`, `secret`) so that
//! `TOKENIZERS_PARALLELISM` and `SSH_AUTH_SOCK` can be told apart from `HF_TOKEN` by their
//! last segment. Values in a password context are never held to an entropy bar: human
//! passwords are low-entropy (gitleaks #1231, #1331).

/// How strongly a name implies that its value is a credential.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Class {
    /// Passwords, passphrases, PSKs: any literal value is redacted.
    Password,
    /// Tokens, keys, secrets: the value must also look like one.
    Secret,
    /// A name that may name a secret and may not (`jwt_key`, `signingKey`, a `key` nothing
    /// qualifies: a sort key, a cache key, a translation key): only a value made by a
    /// generator, never a word, a path, a hash or an identifier, is one.
    Generated,
    /// A secret's id (`SecretID`, `secret_id`): the secret itself when it is a UUID, as
    /// Consul's ACL tokens and Vault's AppRole secret ids are; a name or an address there
    /// (AWS's `SecretId`, a key vault's URL) names where a secret is kept.
    SecretId,
}

/// Where a name was found; bare `key` is only a secret's name in some places.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Form {
    /// `NAME=value` (shell assignment, `.env`, `-e NAME=value`).
    Env,
    /// `--name value`, `--name=value`, `-storepass value`.
    Flag,
    /// `name: value` (YAML, JSON, HTTP headers).
    Colon,
    /// `?name=value&…`.
    Query,
}

/// Last segments that make a name harmless: the value is an id, a path, a switch.
/// Follows gitleaks' generic allowlist (`key[_.-]?id`, `secret[_.-]?name`).
const BENIGN_LAST: &[&str] = &[
    "id",
    "ids",
    "name",
    "names",
    "file",
    "files",
    "path",
    "paths",
    "dir",
    "directory",
    "url",
    "uri",
    "urls",
    "addr",
    "address",
    "header",
    "ttl",
    "length",
    "len",
    "profile",
    "region",
    "sock",
    "socket",
    "type",
    "types",
    "mode",
    "host",
    "hostname",
    "port",
    "user",
    "username",
    "login",
    "timeout",
    "expiry",
    "expires",
    "expiration",
    "count",
    "size",
    "method",
    "kind",
    "format",
    "endpoint",
    "enabled",
    "enable",
    "disabled",
    "disable",
    "required",
    "parallelism",
    "command",
    "cmd",
    "helper",
    "program",
    "prog",
    "scope",
    "scopes",
    "version",
    "provider",
    "backend",
    "arn",
    "alias",
    "fingerprint",
    "fingerprints",
    "location",
    "prompt",
    "stdin",
    "policy",
    "rotation",
    "email",
    "limit",
    "max",
    "min",
    "duration",
    "level",
    "lifetime",
    "algorithm",
    "algo",
    "bits",
    "hint",
    "store",
    "tty",
    "class",
    "desktop",
    "seat",
    "vt",
    "pid",
    "env",
    "manager",
    "source",
    "mount",
    "engine",
    "role",
    "audience",
    "issuer",
    "generator",
    "policy",
    "lookup",
    "refresh",
    "validity",
    "days",
    "age",
    "strategy",
    "option",
    "options",
];

/// Any of these segments makes the value public by definition.
const PUBLIC: &[&str] = &["public", "pub", "pubkey", "publickey", "publishable", "askpass"];

/// Whole names that look sensitive but never are.
const BENIGN_NAMES: &[&str] = &["pwd", "oldpwd", "gpg_tty", "keymap", "sessionstore"];

const PASSWORD_SEG: &[&str] =
    &["passin", "passout", "password", "passwd", "pwd", "pass", "passphrase", "passcode", "psk", "pw", "pin"];

const SECRET_SEG: &[&str] = &[
    "token",
    "tokens",
    "secret",
    "secrets",
    "apikey",
    "auth",
    "authtoken",
    // SSSD's and PAM's authentication token (`ldap_default_authtok`).
    "authtok",
    "credential",
    "credentials",
    "creds",
    "cred",
    "private",
    "privatekey",
    "signing",
    "session",
    "sessionid",
    "jsessionid",
    "phpsessid",
    "sid",
    "accesskey",
    "secretkey",
    "cookie",
    "sig",
    "signature",
    "bearer",
    "jwt",
    "salt",
    "sas",
    "authkey",
    "dsn",
];

/// Segments that, before `key`, make it an API key rather than a sort key or a key file.
const KEY_QUALIFIER: &[&str] = &[
    // WireGuard's `PresharedKey`.
    "preshared",
    "api",
    "access",
    "secret",
    "private",
    "app",
    "master",
    "license",
    "encryption",
    "account",
    "storage",
    "client",
    "signing",
    "shared",
    "service",
    "auth",
    "admin",
    "write",
    "read",
    "deploy",
    "webhook",
    "server",
    "project",
    "personal",
    "subscription",
    "instance",
    "ingest",
    "x",
    "consumer",
    "dev",
    "prod",
    "live",
    "test",
];

/// Splits a name into lower-case segments at `_ - . / :` and camelCase boundaries.
pub(crate) fn segments(name: &[u8]) -> Vec<String> {
    with_segments(name, |segs| segs.iter().map(|s| s.to_string()).collect())
}

/// Names up to this long are split on the stack; every name is judged many times a
/// line, and allocating each segment cost more than the judging.
const SHORT_NAME: usize = 128;
/// Segments held on the stack; a name of more goes to the heap.
const SEGMENTS: usize = 16;

/// Calls `f` with the lower-case segments of `name` (see [`segments`]).
pub(crate) fn with_segments<R>(name: &[u8], f: impl FnOnce(&[&str]) -> R) -> R {
    let mut stack = [0u8; SHORT_NAME];
    let mut heap = Vec::new();
    let lower: &mut [u8] = if name.len() <= SHORT_NAME {
        &mut stack[..name.len()]
    } else {
        heap.resize(name.len(), 0);
        &mut heap
    };
    lower.copy_from_slice(name);
    lower.make_ascii_lowercase();
    // A segment starts at an alphanumeric after anything else, and at a capital after
    // a lower-case letter or a digit.
    let mut bounds = [(0usize, 0usize); SEGMENTS];
    let mut more = Vec::new();
    let mut count = 0;
    let mut start = None;
    let mut prev_lower = false;
    for (i, &b) in name.iter().enumerate() {
        let alnum = b.is_ascii_alphanumeric();
        let splits = !alnum || (b.is_ascii_uppercase() && prev_lower);
        if splits && let Some(s) = start.take() {
            if count < bounds.len() {
                bounds[count] = (s, i);
            } else {
                more.push((s, i));
            }
            count += 1;
        }
        if alnum && start.is_none() {
            start = Some(i);
        }
        prev_lower = alnum && (b.is_ascii_lowercase() || b.is_ascii_digit());
    }
    if let Some(s) = start {
        if count < bounds.len() {
            bounds[count] = (s, name.len());
        } else {
            more.push((s, name.len()));
        }
        count += 1;
    }
    let lower: &[u8] = lower;
    // Segments are ASCII alphanumerics, so each is a `str`.
    let seg = |(s, e): (usize, usize)| std::str::from_utf8(&lower[s..e]).unwrap_or("");
    let mut strs: [&str; SEGMENTS] = [""; SEGMENTS];
    if count <= strs.len() {
        for (slot, b) in strs.iter_mut().zip(&bounds[..count]) {
            *slot = seg(*b);
        }
        f(&strs[..count])
    } else {
        let all: Vec<&str> = bounds.iter().chain(&more).map(|b| seg(*b)).collect();
        f(&all)
    }
}

/// Every sensitive segment above contains one of these (`pass pwd psk pw pin token secret
/// key auth cred private signing session sid cookie sig bearer jwt salt sas dsn`); most
/// names contain none, and are let go without splitting them into segments.
fn may_name_a_secret(name: &[u8]) -> bool {
    let mut buf = [0u8; 128];
    if name.len() > buf.len() {
        return true;
    }
    let lower = &mut buf[..name.len()];
    lower.copy_from_slice(name);
    lower.make_ascii_lowercase();
    (0..lower.len()).any(|i| fragment_at(&lower[i..]))
}

/// Whether a fragment above starts `s`; one arm per first letter, so each comparison is
/// against a constant and costs a load or two.
fn fragment_at(s: &[u8]) -> bool {
    let has = |f: &[u8]| s.starts_with(f);
    match s[0] {
        b'p' => has(b"pass") || has(b"pw") || has(b"psk") || has(b"pin") || has(b"private"),
        b't' => has(b"token"),
        b's' => {
            has(b"secret") || has(b"session") || has(b"sid") || has(b"sig") || has(b"salt") || has(b"sas")
        }
        b'k' => has(b"key"),
        b'a' => has(b"auth"),
        b'c' => has(b"cred") || has(b"cookie"),
        b'b' => has(b"bearer"),
        b'j' => has(b"jwt"),
        b'd' => has(b"dsn"),
        _ => false,
    }
}

/// Classifies a name, or `None` when its value is not a credential.
pub(crate) fn name_class(name: &[u8], form: Form) -> Option<Class> {
    if !may_name_a_secret(name) {
        return None;
    }
    with_segments(name, |segs| classify(name, segs, form))
}

fn classify(name: &[u8], segs: &[&str], form: Form) -> Option<Class> {
    let last = segs.last()?;
    if let [.., "secret", "id"] = segs {
        return Some(Class::SecretId);
    }
    // A Basic or Bearer credential kept under the header's name (fastlane's
    // `MATCH_GIT_BASIC_AUTHORIZATION`); before another word it names something else
    // (`--cidr-authorization-context`, `authorization_endpoint`).
    if *last == "authorization" && segs.len() > 1 {
        return Some(Class::Secret);
    }
    if BENIGN_NAMES.iter().any(|b| name.eq_ignore_ascii_case(b.as_bytes())) || BENIGN_LAST.contains(last) {
        return None;
    }
    if segs.iter().any(|s| PUBLIC.contains(s)) {
        return None;
    }
    if segs.iter().any(|s| is_password_segment(s)) {
        return Some(Class::Password);
    }
    let secret = segs.iter().enumerate().any(|(i, s)| {
        is_secret_segment(s) || (*s == "key" || *s == "keys") && key_counts(&segs[..i], name, form)
    });
    // `"Sid": "AllowS3Read"` names an IAM statement as often as a session: only a value a
    // generator made is one.
    if secret
        && segs.iter().all(|s| *s == "sid" || !is_secret_segment(s))
        && !segs.iter().any(|s| *s == "key" || *s == "keys")
    {
        return Some(Class::Generated);
    }
    if secret {
        return Some(Class::Secret);
    }
    // `cache_key`, `sort_key`, `partition_key`: a key of a data structure, whose value a
    // program computes (a digest, a column), names no credential.
    let data_key =
        segs.windows(2).any(|w| matches!(w[1], "key" | "keys") && DATA_KEY_QUALIFIER.contains(&w[0]));
    (!data_key && segs.iter().any(|s| *s == "key" || *s == "keys")).then_some(Class::Generated)
}

/// What makes a key one of a data structure rather than a credential.
const DATA_KEY_QUALIFIER: &[&str] = &[
    "cache",
    "sort",
    "partition",
    "primary",
    "foreign",
    "composite",
    "hash",
    "range",
    "object",
    "idempotency",
    "dedup",
    "dedupe",
    "lookup",
    "index",
    "map",
    "dict",
    "row",
    "column",
    "group",
    "cluster",
    "shard",
    "bucket",
    "etag",
    "unique",
    "natural",
    "surrogate",
];

/// One segment that names a password (`password`, `db_pwd`'s `pwd`, keytool's `storepass`).
fn is_password_segment(s: &str) -> bool {
    PASSWORD_SEG.contains(&s)
        || holds(s, b"password")
        || holds(s, b"passwd")
        || (s.ends_with("pwd") && s != "oldpwd")
        || s.ends_with("passphrase")
        // keytool's `-storepass`, `-keypass`, `-srcstorepass`.
        || (s.ends_with("pass") && !s.ends_with("bypass") && !matches!(s, "askpass" | "compass"))
}

/// One segment that names another secret (`token`, `secret`, `apikey`, `credentials`).
fn is_secret_segment(s: &str) -> bool {
    SECRET_SEG.contains(&s)
        || holds(s, b"token")
        || holds(s, b"secret")
        || holds(s, b"apikey")
        || holds(s, b"credential")
}

/// `s.contains(part)` for a short constant `part`: segments are short, and `str::contains`
/// sets up a general searcher on every call.
fn holds<const N: usize>(s: &str, part: &[u8; N]) -> bool {
    s.as_bytes().windows(N).any(|w| w == part)
}

/// Segments that may follow the one naming a secret without changing what the name holds:
/// an encoding, an environment, a generation (`secret_key_base`, `DB_PASSWORD_PROD`,
/// `token_b64`).
const TRAILERS: &[&str] = &[
    "value",
    "val",
    "str",
    "string",
    "b64",
    "base64",
    "hex",
    "raw",
    "enc",
    "plain",
    "plaintext",
    "text",
    "data",
    "bytes",
    "base",
    "prod",
    "production",
    "dev",
    "development",
    "staging",
    "stage",
    "test",
    "testing",
    "live",
    "local",
    "new",
    "old",
    "current",
    "next",
    "prev",
    "previous",
    "primary",
    "secondary",
    "backup",
    "default",
    "main",
    "ro",
    "rw",
    "readonly",
    "admin",
    "root",
    "override",
    "id",
];

/// Whether `name` ends with what names its secret, as a code or config key that holds one
/// does (`apiKey`, `client_secret`, `DB_PASSWORD_PROD`), rather than merely containing such
/// a word before what it really is (`TokenInfo`, `GetPassWarning`, `password_mgr`,
/// `TOKEN_ENDS`, `proxy_auth_hdr`, `sid_et`).
fn ends_with_secret(name: &[u8], segs: &[&str], form: Form) -> bool {
    let last_secret = (0..segs.len()).rev().find(|&i| {
        let s = segs[i];
        is_password_segment(s)
            || is_secret_segment(s)
            || (s == "key" || s == "keys") && key_counts(&segs[..i], name, form)
    });
    let Some(last_secret) = last_secret else { return false };
    segs[last_secret + 1..].iter().all(|s| TRAILERS.contains(s) || s.bytes().all(|b| b.is_ascii_digit()))
}

/// [`name_class`] for a name in code or a config file, where it must end with what names
/// the secret ([`ends_with_secret`]).
pub(crate) fn name_class_strict(name: &[u8], form: Form) -> Option<Class> {
    if !may_name_a_secret(name) {
        return None;
    }
    with_segments(name, |segs| strict_class(name, segs, form))
}

/// A name in code ends with what names its secret; one that ends with a key after a
/// secret's noun may name the key (`jwtKey`) or the field where the secret is kept
/// (`passwordKey = ":_password"`, `tokenKey`): only a generated value tells them apart
/// ([`Class::Generated`]).
fn strict_class(name: &[u8], segs: &[&str], form: Form) -> Option<Class> {
    let class = classify(name, segs, form)?;
    if class == Class::SecretId || ends_with_secret(name, segs, form) {
        return Some(class);
    }
    // A password's hash (RabbitMQ's `password_hash`, Rails' `password_digest`) is cracked
    // offline: a value a hash function made under it is as secret as the password.
    if let [.., password, last] = segs
        && is_password_segment(password)
        && PASSWORD_HASH_LAST.contains(last)
    {
        return Some(Class::Generated);
    }
    segs.last().is_some_and(|l| *l == "key" || *l == "keys").then_some(Class::Generated)
}

/// What ends the name of a password's hash.
const PASSWORD_HASH_LAST: &[&str] = &["hash", "hashed", "digest"];

/// Whether [`name_class`] (or, `strict`, [`name_class_strict`]) has a class for `name`,
/// for a name known to hold one of the fragments above: without screening it again.
pub(crate) fn names_a_secret(name: &[u8], form: Form, strict: bool) -> bool {
    with_segments(name, |segs| {
        if strict { strict_class(name, segs, form).is_some() } else { classify(name, segs, form).is_some() }
    })
}

fn key_counts(before: &[&str], name: &[u8], form: Form) -> bool {
    if before.iter().any(|s| KEY_QUALIFIER.contains(s)) {
        return true;
    }
    match form {
        // `OPENAI_KEY=…`, `DD_APP_KEY=…`: upper-case env names ending in KEY are API keys.
        Form::Env => name.iter().all(|b| !b.is_ascii_lowercase()) && !before.is_empty(),
        // `?key=…` is how many HTTP APIs take their key.
        Form::Query => true,
        Form::Flag | Form::Colon => false,
    }
}

/// A value that stands for a secret without being one: a reference, a placeholder, the marker.
/// `@file` as curl, httpie and many CLIs read a value from a file: `@/run/secrets/db`,
/// `@./body.json`, `@-`, `@creds.txt`; or an npm tag (`@latest`). `@Hunter2xyz` is a
/// password that starts with `@`.
fn names_a_file(l: &str) -> bool {
    let Some(rest) = l.strip_prefix('@') else { return false };
    rest.is_empty()
        || rest.starts_with(['/', '.', '~', '-'])
        || rest.contains('/')
        || rest.rsplit_once('.').is_some_and(|(_, ext)| {
            (1..=5).contains(&ext.len()) && ext.bytes().all(|b| b.is_ascii_lowercase())
        })
}

/// A UUID, in either case: 8-4-4-4-12 hexadecimal digits. (`agent::disk::is_uuid` is the
/// stores' own test, lower case only, and above the redactor.)
fn is_uuid(v: &[u8]) -> bool {
    v.len() == 36
        && v.iter()
            .enumerate()
            .all(|(i, b)| if matches!(i, 8 | 13 | 18 | 23) { *b == b'-' } else { b.is_ascii_hexdigit() })
}

/// A password hash as crypt(3) and the PHC string format write it: `$id$`, then at least
/// two more `$`-separated fields (`$2b$12$…`, `$6$salt$hash`, `$argon2id$v=19$m=…$salt$hash`).
/// The scheme's id is lower case and the hash, last, is long: `$USER$HOST$N` is three
/// variables.
fn is_crypt_hash(v: &[u8]) -> bool {
    let fields: Vec<&[u8]> = v.split(|b| *b == b'$').collect();
    let [first, id, rest @ ..] = fields.as_slice() else { return false };
    first.is_empty()
        && !id.is_empty()
        && id.len() <= 16
        && id.iter().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
        && rest.len() >= 2
        && rest.iter().all(|f| !f.is_empty() && f.iter().all(u8::is_ascii_graphic))
        && rest.last().is_some_and(|hash| hash.len() >= 16)
}

/// What a template's slot or a placeholder names (`password`, `API_KEY`, `your db
/// password`, `0`): words, or only digits. A value with a digit among letters, or a
/// symbol, is typed, not named: `{Hunter2xyz}`, `Yourstruly#1984`.
fn slot_name(v: &[u8]) -> bool {
    let v = v.trim_ascii();
    v.iter().all(u8::is_ascii_digit)
        || v.iter()
            .all(|b| b.is_ascii_alphabetic() || matches!(b, b'_' | b'-' | b' ' | b'.' | b'{' | b'}' | b'$'))
}

/// A value that a server-side template or a deployment tool fills in: `<?php …`,
/// `<%= … %>`, Razor's `@Model.Password` (`@ViewBag.`, `@ViewData[`), argocd-vault-plugin's `<path:…>`, an ARM
/// template's `[parameters('x')]`, Azure DevOps' and Octopus' `#{X}#`, `@@X@@` tokens, and
/// a secret store's address (`secretref:x`, `keyvault:x`, `sm://x`, `file:///run/…`,
/// `projects/p/secrets/x/versions/latest`).
fn is_filled_in(v: &[u8]) -> bool {
    let enclosed = |open: &[u8], close: &[u8]| {
        v.len() > open.len() + close.len() && v.starts_with(open) && v.ends_with(close)
    };
    v.starts_with(b"<?")
        || v.starts_with(b"<%")
        || v.starts_with(b"<path:")
        || enclosed(b"[", b")]")
        || enclosed(b"#{", b"}#")
        || enclosed(b"@@", b"@@")
        || ([&b"@Model."[..], b"@ViewBag.", b"@ViewData["].iter().any(|p| v.starts_with(p)))
        || [&b"secretref:"[..], b"keyvault:", b"sm://", b"file://"].iter().any(|p| v.starts_with(p))
        || (v.starts_with(b"projects/") && memchr::memmem::find(v, b"/secrets/").is_some())
}

pub(crate) fn is_reference_or_placeholder(v: &[u8]) -> bool {
    let t = trim_ascii(v);
    if t.is_empty() {
        return true;
    }
    let lower = String::from_utf8_lossy(t).to_ascii_lowercase();
    let l = lower.as_str();
    // `$'…'` and `$"…"` are quoted literals to bash and zsh, not expansions; nor is a
    // password hash in crypt's or PHC's format (`$argon2id$v=19$…`, `$6$salt$…`).
    if (l.starts_with('$') && !l.starts_with("$'") && !l.starts_with("$\"") && !is_crypt_hash(t))
        || l.starts_with('`')
        || l.starts_with("{{")
        || l.starts_with("op://")
        || l.starts_with("vault:")
        || l.starts_with("arn:")
        || l.starts_with("secretsmanager:")
        || l.starts_with("ref+")
        || l.starts_with("keyring:")
        // sops and ansible-vault ciphertext: encrypted, not secret.
        || l.starts_with("enc[")
        || l.starts_with("!vault")
        || l.starts_with("$ansible_vault")
        || names_a_file(l)
        || (l.starts_with('%') && l.ends_with('%') && l.len() > 2)
        || is_printf_placeholder(l)
        || (l.starts_with('<') && l.ends_with('>') && slot_name(&t[1..t.len() - 1]))
        || (l.starts_with('[') && l.ends_with(']') && slot_name(&t[1..t.len() - 1]))
        // A tool's mark where it removed a value (sysprep's `*SENSITIVE*DATA*DELETED*`).
        || (t.len() > 2 && t.starts_with(b"*") && t.ends_with(b"*")
            && t.iter().all(|b| b.is_ascii_uppercase() || matches!(b, b'*' | b'_')))
        || (l.starts_with('{') && l.ends_with('}') && !l.contains(':') && slot_name(&t[1..t.len() - 1]))
        || ((l.starts_with("your") || l.starts_with("my-") || l.starts_with("my_")) && slot_name(t))
        || l.contains("example")
        || l.contains("placeholder")
        || l.contains("replace_me")
        || l.contains("replace-me")
        || l.contains("changeme")
        || l.contains("change_me")
        || l.contains("change-me")
        || l.contains("redacted")
        || l.contains("${")
        || l.contains("$(")
        || is_filled_in(t)
    {
        return true;
    }
    const WORDS: &[&str] = &[
        "password",
        "passwd",
        "pass",
        "username",
        "user",
        "secret",
        "token",
        "null",
        "none",
        "nil",
        "undefined",
        "todo",
        "fixme",
        "xxx",
        "tbd",
        "empty",
        "prompt",
        "stdin",
        "-",
        "apikey",
        "api_key",
        "key",
        "value",
        "string",
        "hidden",
        "masked",
        "required",
        // Anonymous FTP's convention (`-anonymous@`, `anonymous@`): public, not a secret.
        "anonymous",
        "-anonymous@",
        "anonymous@",
    ];
    if WORDS.contains(&l) || (!t.iter().any(u8::is_ascii_uppercase) && says_what_it_is(l)) {
        return true;
    }
    // `xxxxxxxx`, `********`, `...`, `…`, `-----`: masks and ellipses.
    let masky = t.iter().all(|&b| matches!(b, b'x' | b'X' | b'*' | b'.' | b'-' | b'_' | b'#' | b'?'));
    masky || l == "…"
}

/// Words that mean "password" or "secret", in the languages documentation is written in.
const SECRET_WORDS: &[&str] = &[
    "password",
    "passwd",
    "pass",
    "pwd",
    "secret",
    "passwort",
    "kennwort",
    "geheim",
    "parole",
    "motdepasse",
    "contrasena",
    "senha",
    "segreto",
    "wachtwoord",
    "losenord",
    "haslo",
    "salasana",
];

/// Two or more words that each mean "password" or "secret", in small letters, joined by
/// punctuation (`geheim$parole`, `secret-password`): an example that says what goes
/// there, as documentation writes one. One word alone is judged as before, and a digit or
/// a capital makes the value typed.
fn says_what_it_is(l: &str) -> bool {
    let mut pieces = 0;
    for piece in l.split(|c: char| !c.is_ascii_alphanumeric()).filter(|p| !p.is_empty()) {
        if !SECRET_WORDS.contains(&piece) {
            return false;
        }
        pieces += 1;
    }
    pieces >= 2
}

/// `%s`, `%d`, `%(name)s`, `%-10.3f`: a format string's slot, filled in later.
fn is_printf_placeholder(l: &str) -> bool {
    let Some(rest) = l.strip_prefix('%') else { return false };
    let rest = match rest.strip_prefix('(') {
        Some(r) => match r.split_once(')') {
            Some((key, after)) if key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') => after,
            _ => return false,
        },
        None => rest,
    };
    let spec = rest
        .trim_start_matches(['-', '#', '0', ' ', '+'])
        .trim_start_matches(|c: char| c.is_ascii_digit() || c == '.');
    spec.len() == 1 && "sdrifxaocegu".contains(spec)
}

/// An upper-case name with underscores and no digit (`SELECTED`, `LOG_AUTH`, `SIG_UNBLOCK`):
/// a constant's name in code, not a generated secret.
pub(crate) fn is_constant_name(v: &[u8]) -> bool {
    // `SYNTHETIC_THOUGHT_SIGNATURE2`: at most two digits, at the end, after a word break;
    // `AKIAIOSFODNN7EXAMPLE` mixes digits in and is no constant.
    let letters = v.trim_ascii_end();
    let stem_len = letters.iter().rposition(|b| !b.is_ascii_digit()).map_or(0, |i| i + 1);
    let (stem, digits) = letters.split_at(stem_len);
    v.len() <= 64
        && stem.iter().filter(|b| b.is_ascii_uppercase()).count() >= 2
        && stem.iter().all(|b| b.is_ascii_uppercase() || *b == b'_')
        && (digits.is_empty() || digits.len() <= 2 && stem.contains(&b'_'))
}

/// An HTTP header's name (`Proxy-Authorization`, `X-Api-Key`, `WWW-Authenticate`): the
/// name of where a secret goes.
pub(crate) fn is_header_name(v: &[u8]) -> bool {
    let Ok(t) = std::str::from_utf8(v) else { return false };
    let parts: Vec<&str> = t.split('-').collect();
    parts.len() >= 2
        && parts.iter().all(|p| {
            p.chars().next().is_some_and(|c| c.is_ascii_uppercase())
                && p.chars().all(|c| c.is_ascii_alphabetic())
        })
        && parts.last().is_some_and(|p| {
            [
                "authorization",
                "authenticate",
                "token",
                "key",
                "cookie",
                "signature",
                "secret",
                "session",
                "auth",
            ]
            .contains(&p.to_ascii_lowercase().as_str())
        })
}

pub(crate) fn is_bool(v: &[u8]) -> bool {
    const B: &[&str] = &[
        "true", "false", "yes", "no", "on", "off", "y", "n", "0", "1", "enabled", "disabled", "enable",
        "disable", "auto", "always", "never", "ask", "default",
    ];
    B.contains(&String::from_utf8_lossy(v).to_ascii_lowercase().as_str())
}

pub(crate) fn is_path(v: &[u8]) -> bool {
    // make's `--jobserver-auth=fifo:/tmp/GMfifo1` names a pipe.
    (v.starts_with(b"/") && !base64_with_leading_slash(v))
        || v.starts_with(b"fifo:")
        || v.starts_with(b"~/")
        || v == b"~"
        || v.starts_with(b"./")
        || v.starts_with(b"../")
        || (v.len() > 2 && v[1] == b':' && v[2] == b'\\')
}

/// Base64 can start with `/`: `/SS6Iua+Zcg2…` is a token, `/run/user/1000` a path. Path
/// segments are words, numbers and lower-case hashes; a segment mixing cases and digits
/// over ten characters, or a `+` or `=`, is base64.
fn base64_with_leading_slash(v: &[u8]) -> bool {
    v.contains(&b'+')
        || v.ends_with(b"=")
        || v.split(|&b| b == b'/').any(|seg| {
            seg.len() >= 10
                && seg.iter().any(u8::is_ascii_uppercase)
                && seg.iter().any(u8::is_ascii_lowercase)
                && seg.iter().any(u8::is_ascii_digit)
                && !seg.contains(&b'.')
        })
}

fn is_filename(v: &[u8]) -> bool {
    const EXT: &[&str] = &[
        "pem",
        "key",
        "json",
        "txt",
        "yml",
        "yaml",
        "toml",
        "env",
        "crt",
        "cer",
        "p12",
        "pfx",
        "gpg",
        "asc",
        "conf",
        "cfg",
        "ini",
        "sh",
        "py",
        "jks",
        "keystore",
        "der",
        "pub",
        "csv",
        "age",
        "enc",
        "xml",
        "properties",
    ];
    let Some(dot) = v.iter().rposition(|&b| b == b'.') else {
        return false;
    };
    let ext = String::from_utf8_lossy(&v[dot + 1..]).to_ascii_lowercase();
    EXT.contains(&ext.as_str())
        && v[..dot].iter().all(|&b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b'/'))
}

/// Lower-case words joined by `-`/`_`/`.`, like a hostname, a secret's name or a mode.
fn is_wordy(v: &[u8]) -> bool {
    v.iter().all(|&b| b.is_ascii_lowercase() || matches!(b, b'-' | b'_' | b'.' | b'@' | b'/'))
        || (v.contains(&b'.')
            && v.iter().all(|&b| b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'-' | b'.'))
            && v.rsplit(|&b| b == b'.')
                .next()
                .is_some_and(|tld| tld.len() >= 2 && tld.iter().all(u8::is_ascii_lowercase)))
}

/// A field path with tuple indexes as code writes it (`tuple.0.0`, `self.args.12`):
/// lower-case names and short numbers between dots, a name first. Lower-case dotted
/// names alone are already [`is_wordy`].
fn is_field_path(v: &[u8]) -> bool {
    let mut segments = v.split(|&b| b == b'.');
    let name = |s: &[u8]| !s.is_empty() && s.iter().all(|&b| b.is_ascii_lowercase() || b == b'_');
    v.contains(&b'.')
        && segments.next().is_some_and(name)
        && segments.all(|s| name(s) || (!s.is_empty() && s.len() <= 3 && s.iter().all(u8::is_ascii_digit)))
}

fn is_number(v: &[u8]) -> bool {
    v.iter().all(|&b| b.is_ascii_digit() || matches!(b, b'.' | b'-' | b'+' | b'_'))
        && v.iter().any(u8::is_ascii_digit)
}

const DIGEST_PREFIXES: &[&[u8]] =
    &[b"sha256:", b"sha512:", b"sha1:", b"sha384:", b"md5:", b"h1:", b"sha512-", b"sha384-", b"sha256-"];

/// Code that names something rather than holding a value: a pointer or reference
/// declarator or dereference (`*mdToken`, `&key`), a variable that ends a statement
/// (`Tcl_TimerToken timeEvent;`), a member reached through a pointer (`__it->second`,
/// `$this->password`).
fn is_declarator(v: &[u8]) -> bool {
    // `timeEvent;`, `*fwToken);`, `&peekNext();`, `staticTokens[N];`: a statement's end.
    let ended = v.ends_with(b";") || v.ends_with(b")");
    let v = v.trim_ascii_end();
    let v = &v[..v.len() - v.iter().rev().take_while(|b| matches!(b, b';' | b')' | b'(')).count()];
    let v = v.split(|b| *b == b'[').next().unwrap_or(v);
    let ident = |p: &[u8]| {
        !p.is_empty()
            && p.iter().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'$'))
            && !p[0].is_ascii_digit()
    };
    let bare = &v[v.iter().take_while(|b| matches!(b, b'*' | b'&')).count()..];
    ((bare.len() < v.len() || ended) && ident(bare) && is_made_of_words(bare))
        || (memchr::memmem::find(v, b"->").is_some()
            && v.split(|b| *b == b'-' || *b == b'>').filter(|p| !p.is_empty()).all(ident))
}

/// Should a literal value found in a context of this class be replaced?
pub(crate) fn should_redact(class: Class, v: &[u8]) -> bool {
    let v = trim_ascii(v);
    // A keyword argument in code ends with its separator: `password=None,`.
    let v = v.strip_suffix(b",").unwrap_or(v);
    if is_reference_or_placeholder(v)
        || is_declarator(v)
        || is_bool(v)
        || is_path(v)
        || is_code_literal(v)
        || is_constant_name(v)
        || is_header_name(v)
        || is_version_spec(v)
        || is_template_of_names(v)
    {
        return false;
    }
    match class {
        // No entropy gate: `falcon-nebula-meadow1` and `hunter2` are real passwords.
        Class::Password => true,
        Class::SecretId => is_uuid(v),
        // A hex key (`routing_key`, `validationKey`, `--certificate-key`) is as long as a
        // digest, and a name that says key makes it one.
        Class::Generated => should_redact(Class::Secret, v) && (is_generated(v) || is_hex_key(v)),
        // `fjord.basil.tundra.lantern5`: a password, though it reads like a field's path.
        Class::Secret if is_password_of_words(v) => true,
        Class::Secret => {
            !(v.len() < 8
                || is_number(v)
                // A list, a signature (`(*, a, b)`) or a command line: never one token.
                || v.iter().any(u8::is_ascii_whitespace)
                // `focusUiEnabled`, `React::DevTools::defaultTab`: a name in code, not a token;
                // nor is a word (`"Statistics"`, a dictionary's key).
                || ((is_code_identifier(v) || v.iter().all(u8::is_ascii_alphabetic)) && is_made_of_words(v))
                // `defaultToConfig2`, `!!config.withCredentials`: a variable, not a token.
                || is_code_reference(v)
                || v.windows(2).any(|w| w == b"::")
                || v.windows(3).any(|w| w == b"://")
                || is_wordy(v)
                || is_field_path(v)
                || is_filename(v)
                || DIGEST_PREFIXES.iter().any(|p| v.starts_with(p)))
        }
    }
}

/// A value a generator made rather than a person or a program named: at least 16
/// characters of one token's alphabet, letters and digits mixed without forming words,
/// spread over many characters (over 3.5 bits each), and not hexadecimal alone (a digest,
/// a commit, an id) nor a UUID.
pub(crate) fn is_generated(v: &[u8]) -> bool {
    if v.len() < 16 || v.len() > 512 {
        return false;
    }
    let token_byte = |b: &u8| b.is_ascii_alphanumeric() || b"+/=_-.~!@#$%^&*".contains(b);
    if !v.iter().all(token_byte) || v.iter().all(|b| b.is_ascii_hexdigit() || *b == b'-') {
        return false;
    }
    // `self._lib.NID_pbe_WithSHA1And3_Key`, `config.KEY_2`: a member of something named.
    let first = v.split(|&b| b == b'.').next().unwrap_or_default();
    if first.len() < v.len() && first.len() >= 3 && first.iter().all(|b| b.is_ascii_lowercase() || *b == b'_')
    {
        return false;
    }
    let digits = v.iter().filter(|b| b.is_ascii_digit()).count();
    let (upper, lower) = (v.iter().any(u8::is_ascii_uppercase), v.iter().any(u8::is_ascii_lowercase));
    if digits == 0 || !(upper || lower) || is_made_of_words(v) || is_identifier_of_parts(v) {
        return false;
    }
    // `Stmt1546968495000`, `build20240101120000`: a word and a number, not mixed.
    let runs = 1 + v.windows(2).filter(|w| w[0].is_ascii_digit() != w[1].is_ascii_digit()).count();
    if runs <= 2 {
        return false;
    }
    bits_per_byte(v) > 3.5
}

/// 32 hexadecimal digits or more, both digits and letters, of one case: a key a generator
/// printed in hex. Forty is SHA-1's length, a commit's and an OpenPGP fingerprint's
/// (`gpg --recv-keys …`): those are ids.
pub(crate) fn is_hex_key(v: &[u8]) -> bool {
    v.len() >= 32
        && v.len() != 40
        && v.len() <= 256
        && v.iter().all(u8::is_ascii_hexdigit)
        && v.iter().any(u8::is_ascii_digit)
        && v.iter().any(u8::is_ascii_alphabetic)
        && !(v.iter().any(u8::is_ascii_uppercase) && v.iter().any(u8::is_ascii_lowercase))
}

/// The information in `v`, in bits a byte, from how often each byte occurs in it.
pub(crate) fn bits_per_byte(v: &[u8]) -> f64 {
    let mut counts = [0u32; 256];
    for &b in v {
        counts[b as usize] += 1;
    }
    let n = v.len() as f64;
    counts.iter().filter(|&&c| c > 0).map(|&c| -(c as f64 / n) * (c as f64 / n).log2()).sum()
}

/// Parts joined by `_`, `-` or `.`, each of one case (`GEMMA_4_31B_IT_MODEL`,
/// `en-US-x-2`): a constant's or a tag's name. A generator mixes cases within its parts.
fn is_identifier_of_parts(v: &[u8]) -> bool {
    let parts: Vec<&[u8]> = v.split(|b| matches!(b, b'_' | b'-' | b'.')).collect();
    parts.len() >= 3
        && parts
            .iter()
            .all(|p| !(p.iter().any(u8::is_ascii_uppercase) && p.iter().any(u8::is_ascii_lowercase)))
}

/// A regular expression: a class escape (`\w`, `\d`, `\s`), a negated set, a group, or
/// a wildcard it starts with (`.*`, `.+`: a substitution's `s/KEY=.*/…/`).
pub(crate) fn is_pattern(v: &[u8]) -> bool {
    v.windows(2).any(|w| w[0] == b'\\' && b"wWdDsSbB".contains(&w[1]))
        || memchr::memmem::find(v, b"[^").is_some()
        || memchr::memmem::find(v, b"(?").is_some()
        || v.starts_with(b".*")
        || v.starts_with(b".+")
}

/// A package's version or version range, as manifests and lockfiles write one under the
/// package's name (`"minipass": "^7.1.2"`, `pgpass: 1.0.5`, `>=2.0.0 <3`, `1.x`,
/// `~1.2.3-beta.1`, `npm:string-width@^4.2.0`, `workspace:^`): whatever the name beside it
/// says, a version is not a credential.
pub(crate) fn is_version_spec(v: &[u8]) -> bool {
    let Ok(text) = std::str::from_utf8(v) else { return false };
    if let Some(rest) = text.strip_prefix("workspace:") {
        return matches!(rest, "*" | "^" | "~") || is_version_spec(rest.as_bytes());
    }
    if let Some(rest) = text.strip_prefix("npm:") {
        return rest
            .rsplit_once('@')
            .is_some_and(|(name, range)| !name.is_empty() && is_version_spec(range.as_bytes()));
    }
    let mut any = false;
    for alternative in text.split("||") {
        let words: Vec<&str> = alternative.split_whitespace().filter(|w| *w != "-").collect();
        if words.is_empty() {
            return false;
        }
        for word in words {
            if !is_one_version(word) {
                return false;
            }
            any = true;
        }
    }
    any
}

/// One comparator of a range: an optional operator, then `1`, `1.2`, `1.2.3` (any part may
/// be `x` or `*` after the first), and an optional `-prerelease` or `+build` of dotted
/// alphanumerics.
fn is_one_version(word: &str) -> bool {
    let bare = word.trim_start_matches(['^', '~', '>', '<', '=']);
    let had_operator = bare.len() != word.len();
    let bare = bare.strip_prefix('v').unwrap_or(bare);
    let (core, tail) = match bare.find(['-', '+']) {
        Some(at) => (&bare[..at], Some(&bare[at + 1..])),
        None => (bare, None),
    };
    let parts: Vec<&str> = core.split('.').collect();
    let number = |p: &str| !p.is_empty() && p.len() <= 9 && p.bytes().all(|b| b.is_ascii_digit());
    let wildcard = |p: &str| matches!(p, "x" | "X" | "*");
    (1..=4).contains(&parts.len())
        && number(parts[0])
        && parts[1..].iter().all(|p| number(p) || wildcard(p))
        // A bare number is a PIN as much as a version: a version has a dot or an operator.
        && (parts.len() > 1 || had_operator)
        && tail.is_none_or(|tail| {
            tail.split(['.', '-', '+']).all(|t| !t.is_empty() && t.bytes().all(|b| b.is_ascii_alphanumeric()))
        })
}

/// A variable or a field read in code where a value goes: identifiers joined by `.` of
/// which one is written as code writes names (`_config`, `withCredentials`, `$opts`),
/// perhaps negated (`!!x.y`) or called (`getToken()`); or one camel-case identifier of
/// words with one digit after it (`defaultToConfig2`). A password of words
/// (`nectar.falcon.velvet41`, `lantern_cobalt_raven76`) has none of these shapes.
fn is_code_reference(v: &[u8]) -> bool {
    let v = v.strip_suffix(b";").unwrap_or(v);
    let called = v.ends_with(b"()");
    let v = v.strip_suffix(b"()").unwrap_or(v);
    let bare = &v[v.iter().take_while(|b| **b == b'!').count()..];
    let negated = bare.len() != v.len();
    let code_name = |p: &[u8]| {
        p.first().is_some_and(|b| matches!(b, b'_' | b'$'))
            || (p.iter().skip(1).any(u8::is_ascii_uppercase) && p.iter().any(u8::is_ascii_lowercase))
    };
    let word_part = |p: &[u8]| {
        let (letters, digits) = p.split_at(p.iter().rposition(|b| !b.is_ascii_digit()).map_or(0, |e| e + 1));
        let core: Vec<u8> = letters.iter().copied().filter(|b| !matches!(b, b'_' | b'$')).collect();
        !core.is_empty()
            && letters.iter().all(|b| b.is_ascii_alphabetic() || matches!(b, b'_' | b'$'))
            && (core.len() < 3 || is_made_of_words(&core))
            && digits.len() <= 1
    };
    let parts: Vec<&[u8]> = bare.split(|b| *b == b'.').collect();
    if !parts.iter().all(|p| word_part(p)) {
        return false;
    }
    let joined = parts.len() > 1 && parts.iter().any(|p| code_name(p));
    let numbered = parts.len() == 1
        && bare.last().is_some_and(u8::is_ascii_digit)
        && !bare.contains(&b'_')
        && code_name(bare);
    negated || called || joined || numbered
}

/// A password people make of words (`Walrus.Granite3933`, `fjord.basil.tundra.lantern5`,
/// `velvet_tundra_mango_maple11`): two or more words of three letters or more, joined by
/// one kind of separator, the last ending in a number. Code's chains end in a name
/// (`self.password`, `settings.DB_PASSWORD`) or a technical stem (`hashlib.sha256`,
/// `np.int64`), so such a value is a literal, even unquoted where a chain could stand.
pub(crate) fn is_password_of_words(v: &[u8]) -> bool {
    const STEMS: &[&[u8]] = &[
        b"sha", b"md", b"int", b"uint", b"utf", b"base", b"http", b"ipv", b"float", b"arg", b"line", b"col",
        b"row", b"address", b"item", b"field", b"param", b"value", b"var", b"step", b"stage", b"phase",
        b"level", b"version", b"node", b"page", b"x", b"v",
    ];
    let Some(&sep) = v.iter().find(|b| matches!(b, b'.' | b'_' | b'-')) else { return false };
    let parts: Vec<&[u8]> = v.split(|b| *b == sep).collect();
    let Some((last, words)) = parts.split_last() else { return false };
    let stem_len = last.iter().rposition(|b| !b.is_ascii_digit()).map_or(0, |i| i + 1);
    let (stem, digits) = last.split_at(stem_len);
    let word = |w: &[u8]| w.len() >= 3 && w.iter().all(u8::is_ascii_alphabetic) && is_made_of_words(w);
    !words.is_empty()
        && words.iter().all(|w| word(w))
        && word(stem)
        && (1..=4).contains(&digits.len())
        && !STEMS.contains(&stem.to_ascii_lowercase().as_slice())
}

/// A template that a program fills in (`f"{auth}:{password}"`, `"{registry_id}-auth-token"`,
/// `"Invalid Token: {message}"`): names made of words in braces, and around them only words
/// and punctuation. What a person typed around them (`f"{prefix}Hunter2xyz"`) or inside
/// (`{Hunter2xyz}`) still counts.
pub(crate) fn is_template_of_names(v: &[u8]) -> bool {
    let of_words = |w: &[u8]| {
        w.iter().all(u8::is_ascii_digit)
            || w.iter().all(u8::is_ascii_alphabetic) && (w.len() < 6 || is_made_of_words(w))
    };
    let mut rest = Vec::with_capacity(v.len());
    let mut names = 0;
    let mut i = 0;
    while i < v.len() {
        if v[i] == b'{'
            && let Some(len) = v[i + 1..].iter().position(|&b| b == b'}')
        {
            let inner = &v[i + 1..i + 1 + len];
            if inner.first().is_some_and(|b| b.is_ascii_alphabetic() || *b == b'_')
                && !inner.iter().any(u8::is_ascii_whitespace)
                && inner.split(|b| !b.is_ascii_alphanumeric()).all(of_words)
            {
                names += 1;
                rest.push(b' ');
                i += len + 2;
                continue;
            }
        }
        rest.push(v[i]);
        i += 1;
    }
    names > 0 && rest.split(|b| !b.is_ascii_alphanumeric()).all(of_words)
}

/// `Token.Name.Variable`, `ed25519.Ed25519PrivateKey`, `self.token`: names joined by dots,
/// as code refers to a member, and no password of words.
pub(crate) fn is_member_chain(v: &[u8]) -> bool {
    v.contains(&b'.')
        && v.split(|b| *b == b'.').all(|p| {
            p.first().is_some_and(|b| b.is_ascii_alphabetic() || *b == b'_')
                && p.iter().all(|b| b.is_ascii_alphanumeric() || *b == b'_')
        })
        && !is_password_of_words(v)
}

/// What a framework's schema says of a password field, not a password: a validation rule
/// list (Laravel's `'required|string|min:8|confirmed'`, also as a JavaScript validator's
/// `password: 'required|min:6'`), every piece of it a documented rule, or an Eloquent
/// cast (`'hashed'`, `'encrypted'`, `'encrypted:array'`).
pub(crate) fn is_schema_word(v: &[u8]) -> bool {
    // Laravel's documented rules that a password field takes; validatorjs's are a subset.
    const RULES: &[&[u8]] = &[
        b"required",
        b"nullable",
        b"sometimes",
        b"string",
        b"confirmed",
        b"min",
        b"max",
        b"between",
        b"size",
        b"digits",
        b"digits_between",
        b"regex",
        b"not_regex",
        b"same",
        b"different",
        b"current_password",
        b"password",
        b"alpha",
        b"alpha_num",
        b"alpha_dash",
        b"filled",
        b"present",
        b"bail",
        b"ascii",
        b"mixedcase",
        b"letters",
        b"numbers",
        b"symbols",
        b"uncompromised",
        b"email",
    ];
    const NUMERIC: &[&[u8]] = &[b"min", b"max", b"between", b"size", b"digits", b"digits_between"];
    let lower = v.to_ascii_lowercase();
    if let Some(cast) = lower.strip_prefix(b"encrypted") {
        return cast.is_empty()
            || cast.len() > 1 && cast[0] == b':' && cast[1..].iter().all(u8::is_ascii_lowercase);
    }
    if lower == b"hashed" {
        return true;
    }
    lower.split(|b| *b == b'|').all(|piece| {
        let (word, args) = match piece.iter().position(|b| *b == b':') {
            Some(at) => (&piece[..at], Some(&piece[at + 1..])),
            None => (piece, None),
        };
        RULES.contains(&word)
            && args.is_none_or(|args| {
                !args.is_empty()
                    && if NUMERIC.contains(&word) {
                        args.iter().all(|b| b.is_ascii_digit() || *b == b',')
                    } else {
                        word.ends_with(b"regex")
                            || args.iter().all(|b| b.is_ascii_alphanumeric() || b"_,.".contains(b))
                    }
            })
    })
}

/// What code writes where a value goes but which holds none: `None`, `null`, `nil`,
/// `undefined`, `self`, or nothing but punctuation (`''`, `,`, `()`).
fn is_code_literal(v: &[u8]) -> bool {
    const KEYWORDS: &[&[u8]] = &[b"None", b"null", b"NULL", b"nil", b"undefined", b"self", b"NaN"];
    KEYWORDS.contains(&v) || !v.iter().any(u8::is_ascii_alphanumeric)
}

/// A name as code writes it (`fallback_getpass`, `password_mgr`, `sessionDir`): letters,
/// digits and underscores, starting with a letter or `_`, with an underscore or a capital
/// inside and no digit, so neither a word of prose nor a generated secret.
pub(crate) fn is_code_identifier(v: &[u8]) -> bool {
    let Some(first) = v.first() else { return false };
    (first.is_ascii_alphabetic() || *first == b'_')
        && v.iter().all(|b| b.is_ascii_alphabetic() || *b == b'_')
        && (v[1..].contains(&b'_')
            || v[1..].iter().any(u8::is_ascii_uppercase) && v.iter().any(u8::is_ascii_lowercase))
}

/// Whether an identifier reads as words (`focusUiEnabled`, `total_output_tokens`): most of
/// its parts of three letters or more hold a vowel, where a generated token
/// (`pStnMGdYqLLLyDZUE_kd`) breaks into consonant runs.
pub(crate) fn is_made_of_words(v: &[u8]) -> bool {
    let segs = segments(v);
    let long: Vec<&String> = segs.iter().filter(|s| s.len() >= 3).collect();
    let voiced = long.iter().filter(|s| s.bytes().any(|b| b"aeiouy".contains(&b))).count();
    let singles = segs.iter().filter(|s| s.len() == 1).count();
    let letters = v.iter().filter(|b| b.is_ascii_alphabetic()).count();
    let lower = v.iter().filter(|b| b.is_ascii_lowercase()).count();
    // Words are mostly lower case; a random token is half capitals. A word's consonants
    // come a few at a time (`strncpy`: six); a token's run on (`PHpfcgwt`: eight).
    let runs_on = long.iter().any(|s| {
        s.bytes()
            .fold((0, 0), |(run, most), b| {
                let run = if b.is_ascii_alphabetic() && !b"aeiouy".contains(&b) { run + 1 } else { 0 };
                (run, most.max(run))
            })
            .1
            > 6
    });
    // A digit between two letters (`utf8str`, `sha256sum`) happens in a name once; a
    // token's letters and digits interleave (`q7x8gysam`, `wrm3f` and `wpr3sbeocs`).
    let inner_digits = |s: &String| {
        let b = s.as_bytes();
        (1..b.len().saturating_sub(1))
            .filter(|&i| b[i].is_ascii_digit() && b[i - 1].is_ascii_alphabetic())
            .filter(|&i| b[i..].iter().find(|c| !c.is_ascii_digit()).is_some_and(u8::is_ascii_alphabetic))
            .count()
    };
    let interleaved =
        segs.iter().any(|s| inner_digits(s) >= 2) || segs.iter().filter(|s| inner_digits(s) > 0).count() >= 2;
    !long.is_empty()
        && voiced * 3 >= long.len() * 2
        && singles <= 1
        && lower * 10 >= letters * 7
        && !runs_on
        && !interleaved
}

pub(crate) fn trim_ascii(v: &[u8]) -> &[u8] {
    v.trim_ascii()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A secret's id that is a UUID is the secret (Consul's `SecretID`, Vault's AppRole
    /// `secret_id`); a name or an address under such a name stays, as does an accessor.
    #[test]
    fn a_secret_id_that_is_a_uuid_is_the_secret() {
        for line in [
            "SecretID:         e6e30b29-cf0c-47da-8639-2dcd42a295b7",
            "secret_id         3f3e5a56-8d6a-4f5b-9c2e-1a2b3c4d5e6f",
            "{\"SecretID\": \"e6e30b29-cf0c-47da-8639-2dcd42a295b7\"}",
            "VAULT_SECRET_ID=3f3e5a56-8d6a-4f5b-9c2e-1a2b3c4d5e6f",
        ] {
            let out = crate::redact::redact(line);
            assert!(!out.contains("-8d6a-") && !out.contains("-cf0c-"), "{line} -> {out}");
        }
        for line in [
            "AccessorID:       52ed2305-0a57-4473-a074-fa203411514d",
            "aws secretsmanager get-secret-value --secret-id prod/db/password",
            "{\"SecretId\": \"arn:aws:secretsmanager:us-east-1:123456789012:secret:db-AbCdEf\"}",
            "secret_id = \"https://vault1.vault.azure.net/secrets/db/0123456789abcdef\"",
        ] {
            assert_eq!(crate::redact::redact(line), line);
        }
    }

    /// A password's hash is as secret as the password when a hash function made it; a
    /// scheme's name, a template and an algorithm's field stay.
    #[test]
    fn a_password_hash_a_function_made_is_secret() {
        for (line, secret) in [
            ("      \"password_hash\": \"c12j0ScvsM47lhqPV8zHBfY6Z3MqaStG2OG8HeGBk3HtUXlp\",", "c12j0Scvs"),
            (
                "  password_digest: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
                "9f86d08",
            ),
            (
                "password_hash=$argon2id$v=19$m=65536,t=3,p=4$c29tZXNhbHQ$RdescudvJCsgt3ub+b+dWRWJTmaaJObG",
                "RdescudvJCsgt3ub",
            ),
            ("\"password_hash\": \"$6$rounds=5000$saltsalt$Hx9Qm2LpZ7vKt4WcYb8NdRf3\"", "Hx9Qm2LpZ7vK"),
        ] {
            let out = crate::redact::redact(line);
            assert!(!out.contains(secret), "{out}");
        }
        for line in [
            "      \"password_hash\": \"rabbit_password_hashing_sha256\",",
            "      \"hashing_algorithm\": \"rabbit_password_hashing_sha256\",",
            "  password_hash: argon2id",
            "  password_hash: $PASSWORD_HASH",
            "  password_hash: ${HASH}",
            "  password=$USER$HOST$N",
            "  password=$prefix$suffix$n",
            "  password_digest: <%= BCrypt::Password.create('secret') %>",
            "  t.string \"password_digest\"",
        ] {
            assert_eq!(crate::redact::redact(line), line);
        }
    }

    /// Words that mean "password" joined together say what goes there (a docstring's
    /// `passwd='geheim$parole'`); a digit, a capital or another word make a password.
    #[test]
    fn words_that_mean_password_joined_are_an_example() {
        for v in ["geheim$parole", "secret-password", "password.secret", "kennwort.geheim"] {
            assert!(!should_redact(Class::Password, v.as_bytes()), "{v}");
        }
        for v in ["geheim$parole1", "Geheim$Parole", "secret-sauce", "passwort!", "geheimx$parole", "hunter2"]
        {
            assert!(should_redact(Class::Password, v.as_bytes()), "{v}");
        }
    }

    #[test]
    fn names() {
        let c = |n: &str, f| name_class(n.as_bytes(), f);
        assert_eq!(c("GITHUB_TOKEN", Form::Env), Some(Class::Secret));
        assert_eq!(c("PGPASSWORD", Form::Env), Some(Class::Password));
        assert_eq!(c("DB_PASS", Form::Env), Some(Class::Password));
        assert_eq!(c("clientSecret", Form::Colon), Some(Class::Secret));
        assert_eq!(c("OPENAI_KEY", Form::Env), Some(Class::Secret));
        assert_eq!(c("api-key", Form::Flag), Some(Class::Secret));
        assert_eq!(c("TOKENIZERS_PARALLELISM", Form::Env), None);
        assert_eq!(c("SSH_AUTH_SOCK", Form::Env), None);
        // A credential under the header's name; the word before another names something else.
        assert_eq!(c("MATCH_GIT_BASIC_AUTHORIZATION", Form::Env), Some(Class::Secret));
        assert_eq!(c("cidr-authorization-context", Form::Flag), None);
        assert_eq!(c("authorization_endpoint", Form::Colon), None);
        // AWS's `--secret-id NAME` names where a secret is kept; only a UUID there is one.
        assert_eq!(c("secret-id", Form::Flag), Some(Class::SecretId));
        // A key nothing qualifies holds a secret only when its value was generated.
        assert_eq!(c("key", Form::Flag), Some(Class::Generated));
        assert_eq!(c("key", Form::Colon), Some(Class::Generated));
        // Where a password is kept, or a key: the value tells (`":_password"` is not one).
        assert_eq!(name_class_strict(b"passwordKey", Form::Env), Some(Class::Generated));
        assert_eq!(name_class_strict(b"jwtKey", Form::Env), Some(Class::Generated));
        assert_eq!(c("OLDPWD", Form::Env), None);
        assert_eq!(c("WG_PUBLIC_KEY", Form::Env), None);
        assert_eq!(c("SSH_ASKPASS", Form::Env), None);
        assert_eq!(c("GIT_AUTHOR_EMAIL", Form::Env), None);
        assert_eq!(c("password-stdin", Form::Flag), None);
    }

    #[test]
    fn values() {
        assert!(should_redact(Class::Password, b"hunter2"));
        assert!(should_redact(Class::Password, b"falcon-nebula-meadow1"));
        assert!(!should_redact(Class::Password, b"$DB_PASSWORD"));
        assert!(!should_redact(Class::Password, b"<password>"));
        assert!(!should_redact(Class::Secret, b"false"));
        assert!(!should_redact(Class::Secret, b"prod/db/password"));
        assert!(!should_redact(Class::Secret, b"/run/user/1000/ssh-agent.sock"));
        assert!(!should_redact(Class::Secret, b"vault.internal.example"));
        assert!(should_redact(Class::Secret, b"9f8e7d6c5b4a39281706f5e4d3c2b1a0"));
        assert!(!should_redact(Class::Secret, b"[REDACTED]"));
        // A field path with tuple indexes, as a proc-macro test parses it into `tokens`.
        assert!(!should_redact(Class::Secret, b"tuple.0.0"));
        assert!(!should_redact(Class::Secret, b"self.args.12"));
        assert!(should_redact(Class::Password, b"tuple.0.0"));
        // Dotted secrets keep their shape: SendGrid keys, JWTs, mixed case or long numbers.
        assert!(should_redact(
            Class::Secret,
            b"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"
        ));
        assert!(should_redact(
            Class::Secret,
            b"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
        ));
        assert!(should_redact(Class::Secret, b"abcdefgh.12345678"));
        assert!(should_redact(Class::Secret, b"tUple.0.0.k9"));
        // Letters only, mixed case, one long run of consonants: a token, not a name.
        assert!(should_redact(Class::Secret, b"UdEzgeLbxjePHpfcgwtX"));
        assert!(!should_redact(Class::Secret, b"strncpyWrapper"));
    }

    /// A version under a name that reads like a secret's (`minipass`, `pgpass`) is a
    /// version whatever the class; a number alone is still a PIN.
    #[test]
    fn versions_are_not_secrets() {
        for v in [
            "^7.1.2",
            "1.0.5",
            "~1.2.3-beta.1",
            ">=2.0.0 <3",
            "1.x",
            "^1.2 || ^2",
            "v2.3.4",
            "1.0.0+build.5",
            "npm:string-width@^4.2.0",
            "workspace:^",
            "2.0.0 - 3.1.4",
        ] {
            assert!(!should_redact(Class::Password, v.as_bytes()), "{v}");
            assert!(is_version_spec(v.as_bytes()), "{v}");
        }
        for v in ["1234", "hunter2", "^hunter", "1.2.3.4.5", "1.2.3-", "7.1.2abc", "1.2.3 hunter2"] {
            assert!(!is_version_spec(v.as_bytes()), "{v}");
        }
        assert!(should_redact(Class::Password, b"1234"));
    }

    /// A variable read where a value goes is not a token; a password of words is.
    #[test]
    fn code_references_are_not_tokens_but_passwords_of_words_are() {
        for v in
            ["defaultToConfig2", "!!_config.withCredentials", "config.apiKey", "getToken()", "$opts.secret;"]
        {
            assert!(!should_redact(Class::Secret, v.as_bytes()), "{v}");
        }
        for v in [
            "lantern_cobalt_raven_juniper76",
            "nectar.falcon.velvet.sequoia41",
            "Kestrel.Velvet1120",
            "Zx9Kq2Lm8Np4Rt6Vw1Yb",
            "UdEzgeLbxjePHpfcgwtX.k9",
        ] {
            assert!(should_redact(Class::Secret, v.as_bytes()), "{v}");
        }
    }

    /// Words and a number are a password; a chain that ends in a name or a technical stem
    /// is code.
    #[test]
    fn passwords_of_words_are_told_from_chains() {
        for v in [
            "Walrus.Granite3933",
            "fjord.basil.tundra.lantern5",
            "velvet_tundra_mango_maple11",
            "Ember-Cactus3894",
        ] {
            assert!(is_password_of_words(v.as_bytes()), "{v}");
        }
        for v in [
            "self.password",
            "settings.DB_PASSWORD",
            "hashlib.sha256",
            "np.int64",
            "config.v2",
            "row.col1",
            "a.b1",
            "process.env.API_KEY",
            "Xq7pL9.mZ2abc4",
            "tuple.0",
        ] {
            assert!(!is_password_of_words(v.as_bytes()), "{v}");
        }
    }
}
