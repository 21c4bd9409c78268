//! `lokust-shell redact` on transcripts, as SECURITY.md tells users to check a file: real
//! Claude Code transcripts from fixtures/real with secrets planted inside their
//! JSON strings. Read as a transcript (the default for JSON Lines), every line stays
//! valid JSON, only the planted strings change, escapes stay, signatures stay.

use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::util::{TestEnv, fixtures, stdout};

const PLANTED: &[&str] =
    &["ghp_R7c2Qm9XvLp4Tn8Ws1Yd6Hb3Kf5Jg0Ae2Zx9", "Tz5Rm8Kp1Wq4Ln7Xb2Vc9Hd3Js6Fg0Ya5Ue8Io2P", "Hx4kq9Wz2Lm7"];

/// Appends a secret to the first long string of a record: a shell line, a config line,
/// or serialised JSON one level of escapes deeper, each after a newline.
fn plant(v: &mut Value, what: &str) -> bool {
    match v {
        Value::String(s) if s.len() > 40 => {
            s.push_str(what);
            true
        }
        Value::Array(a) => a.iter_mut().any(|x| plant(x, what)),
        Value::Object(o) => o.iter_mut().filter(|(k, _)| *k != "signature").any(|(_, x)| plant(x, what)),
        _ => false,
    }
}

/// Where two records differ: (path, before, after) of each string that changed.
fn diff(a: &Value, b: &Value, path: &str, out: &mut Vec<(String, String, String)>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            assert_eq!(x.keys().collect::<Vec<_>>(), y.keys().collect::<Vec<_>>(), "keys changed at {path}");
            for (k, v) in x {
                diff(v, &y[k], &format!("{path}/{k}"), out);
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            assert_eq!(x.len(), y.len(), "array length changed at {path}");
            for (i, (v, w)) in x.iter().zip(y).enumerate() {
                diff(v, w, &format!("{path}/{i}"), out);
            }
        }
        (Value::String(x), Value::String(y)) if x != y => out.push((path.into(), x.clone(), y.clone())),
        _ => assert_eq!(a, b, "changed at {path}"),
    }
}

#[test]
fn a_real_transcript_stays_valid_json_and_loses_only_the_planted_secrets() {
    let env = TestEnv::new();
    let src = fixtures().join("real/claude-code/entireio-cli/37/995ebed6e4/0/full.jsonl");
    let text = fs::read_to_string(&src).unwrap_or_else(|e| panic!("{}: {e}", src.display()));
    let plants = [
        format!("\nexport GITHUB_TOKEN={}\nnext line", PLANTED[0]),
        format!("\n[default]\naws_secret_access_key = {}\n", PLANTED[1]),
        format!("\n{}", serde_json::json!({"user": "app", "password": PLANTED[2]})),
    ];
    let mut records: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let mut planted = 0;
    for (i, r) in records.iter_mut().enumerate() {
        if plant(r, &plants[i % plants.len()]) {
            planted += 1;
        }
    }
    assert!(planted >= 6, "only {planted} records had a string to plant in");
    let input: String = records.iter().map(|r| format!("{r}\n")).collect();
    let file = env.cwd.join("session.jsonl");
    fs::write(&file, &input).unwrap();

    for args in [&[][..], &["--as", "transcript"][..]] {
        let out = stdout(&env.cmd("lokust-shell").arg("redact").args(args).arg(&file).assert().success());
        for secret in PLANTED {
            assert!(!out.contains(secret), "{args:?}: {secret} survived");
        }
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), records.len(), "{args:?}: records added or lost");
        for (line, before) in lines.iter().zip(&records) {
            let after: Value =
                serde_json::from_str(line).unwrap_or_else(|e| panic!("{args:?}: not JSON ({e}): {line}"));
            let mut changed = Vec::new();
            diff(before, &after, "", &mut changed);
            for (path, was, now) in changed {
                assert!(
                    now.contains("[REDACTED]"),
                    "{path}: changed without a redaction: {was:?} -> {now:?}"
                );
                assert!(!path.ends_with("/signature"), "a thinking block's signature was changed");
                // What was kept of the text, escapes and lines included, is all there.
                let kept = now.split("[REDACTED]").next().unwrap();
                assert!(was.starts_with(kept), "{path}: text before the redaction altered");
            }
        }
    }
    // A signature is an integrity tag the API checks on resume: it is never rewritten.
    assert!(input.contains("\"signature\""), "the fixture has no thinking block");
}

#[test]
fn plain_text_is_still_read_as_text_and_a_transcript_streams_record_by_record() {
    let env = TestEnv::new();
    let mut cmd = env.cmd("lokust-shell");
    let text = stdout(
        &cmd.arg("redact").write_stdin(format!("export GITHUB_TOKEN={}\n", PLANTED[0])).assert().success(),
    );
    assert_eq!(text, "export GITHUB_TOKEN=[REDACTED]\n");

    let bin = assert_cmd::cargo::cargo_bin("lokust-shell");
    let mut child = Command::new(bin)
        .args(["redact", "--as", "transcript"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    for i in 0..3 {
        writeln!(stdin, "{}", serde_json::json!({"n": i, "content": format!("token={}", PLANTED[0])}))
            .unwrap();
        stdin.flush().unwrap();
        // Read back before the next record is written: nothing waits for the end.
        let got: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
        assert_eq!(got, serde_json::json!({"n": i, "content": "token=[REDACTED]"}));
    }
    drop(stdin);
    assert!(child.wait().unwrap().success());

    // A first line of two records glued together (`{…}{…}`, two writes that met) is still
    // a transcript: its strings are read decoded (here an escape spells the name) and
    // both records still parse.
    let glued = concat!(
        r#"{"type":"user","message":{"content":"hi"}}"#,
        r#"{"type":"assistant","message":{"content":"a\nexport pass\u0077ord=Hunter2xyz\nb"}}"#,
        "\n",
        r#"{"type":"user","message":{"content":"ok"}}"#,
        "\n"
    );
    let out = stdout(&env.cmd("lokust-shell").arg("redact").write_stdin(glued).assert().success());
    assert!(!out.contains("Hunter2xyz"), "{out}");
    let records: Vec<Value> =
        serde_json::Deserializer::from_str(&out).into_iter().map(Result::unwrap).collect();
    assert_eq!(records.len(), 3, "{out}");
    assert_eq!(records[1]["message"]["content"], "a\nexport password=[REDACTED]\nb");
}

/// An MCP server's entry (in `.claude.json`, carried in a bundle, or read by the agent)
/// holds its credential as an HTTP header in JSON: the credential goes, the scheme and a
/// `${VAR}` reference stay.
#[test]
fn an_authorization_header_inside_json_loses_its_credential_only() {
    let env = TestEnv::new();
    let cases = [
        (
            r#"{"mcpServers":{"x":{"type":"http","url":"https://mcp.example.com","headers":{"Authorization":"Bearer mcp_9fKq2Lw8Zr1Tn5Vb7Xc3Md6Pj0Hs4Gy2"}}}}"#,
            r#"{"mcpServers":{"x":{"type":"http","url":"https://mcp.example.com","headers":{"Authorization":"Bearer [REDACTED]"}}}}"#,
        ),
        (
            r#"{"headers":{"proxy-authorization":"Basic YWRtaW46aHVudGVyMjAyNA=="}}"#,
            r#"{"headers":{"proxy-authorization":"Basic [REDACTED]"}}"#,
        ),
        (
            r#"{"headers":{"Authorization":"Bearer ${GITHUB_TOKEN}"}}"#,
            r#"{"headers":{"Authorization":"Bearer ${GITHUB_TOKEN}"}}"#,
        ),
        (r#"{"Authorization":"see the docs"}"#, r#"{"Authorization":"see the docs"}"#),
    ];
    let input: String = cases.iter().map(|(i, _)| format!("{i}\n")).collect();
    let want: String = cases.iter().map(|(_, o)| format!("{o}\n")).collect();
    let mut cmd = env.cmd("lokust-shell");
    assert_eq!(stdout(&cmd.arg("redact").write_stdin(input).assert().success()), want);
}

/// Source code as this Python's standard library writes it: names of secrets beside
/// identifiers, calls, subscripts, keywords and format strings are not secrets, and a
/// literal beside them still is. Lines taken from the library (Lib/ftplib.py, smtplib.py,
/// urllib/request.py, multiprocessing, nntplib.py, getpass.py, tokenize.py, inspect.py).
#[test]
fn code_keeps_its_identifiers_and_loses_its_literals() {
    let env = TestEnv::new();
    let untouched = [
        "            self.password = kw['password']",
        "    def __init__(self, host='', user='', passwd='', acct='',",
        "    def login(self, user=None, password=None, usenetrc=True):",
        "        authorization = request.headers.get(\"authorization\")",
        "            authkey=authkey, exposed=exposed",
        "        getpass = fallback_getpass",
        "        sig = \"(*, a, b)\" % (atleast,)",
        "            proxy = ProxyType(token, serializer, manager=manager, authkey=authkey)",
        "                    owner=self, session=session)",
        "            urllib.request.HTTPBasicAuthHandler(password_mgr=password_mgr)",
    ];
    let redacted = [
        ("    password = \"Xk9mQ2vR7tLw\"", "    password = \"[REDACTED]\""),
        (
            "client.login(user='app', password='Lr5Tz8Wq3Nm6')",
            "client.login(user='app', password='[REDACTED]')",
        ),
        (
            "aws_secret_access_key = Tz5Rm8Kp1Wq4Ln7Xb2Vc9Hd3Js6Fg0Ya5Ue8Io2P",
            "aws_secret_access_key = [REDACTED]",
        ),
        ("export DB_PASSWORD=hunter2", "export DB_PASSWORD=[REDACTED]"),
    ];
    let input: String = untouched
        .iter()
        .map(|l| format!("{l}\n"))
        .chain(redacted.iter().map(|(l, _)| format!("{l}\n")))
        .collect();
    let want: String = untouched
        .iter()
        .map(|l| format!("{l}\n"))
        .chain(redacted.iter().map(|(_, o)| format!("{o}\n")))
        .collect();
    let mut cmd = env.cmd("lokust-shell");
    let got = stdout(&cmd.args(["redact", "--as", "text"]).write_stdin(input).assert().success());
    let diff: Vec<String> = got
        .lines()
        .zip(want.lines())
        .filter(|(g, w)| g != w)
        .map(|(g, w)| format!("got  {g}\nwant {w}"))
        .collect();
    assert!(diff.is_empty(), "\n{}", diff.join("\n"));
}

/// Families of the issue, in the forms their documentation gives: any reader of a
/// password on standard input fed a literal, `openssl passwd`, and XML elements named
/// like a secret (Maven's settings.xml, a .NET web.config).
#[test]
fn stdin_readers_openssl_passwd_and_xml_elements_lose_their_secrets() {
    let env = TestEnv::new();
    let cases = [
        (
            "echo 'Granite9!nebula' | mytool login --passwd-on-stdin",
            "echo '[REDACTED]' | mytool login --passwd-on-stdin",
        ),
        (
            "printf '%s' 'Tz5Rm8Kp1Wq4' | acme-cli auth --api-key-stdin",
            "printf '%s' '[REDACTED]' | acme-cli auth --api-key-stdin",
        ),
        ("cat token.txt | acme-cli auth --token-stdin", "cat token.txt | acme-cli auth --token-stdin"),
        ("openssl passwd -6 -salt Qx7s 'Hunter2wasTaken'", "openssl passwd -6 -salt Qx7s '[REDACTED]'"),
        ("openssl passwd -apr1 -stdin", "openssl passwd -apr1 -stdin"),
        ("      <password>Jd4Kw9Vn2Hx7</password>", "      <password>[REDACTED]</password>"),
        (
            "<server><id>central</id><username>deploy</username><password>Mv8#qL2wZt</password></server>",
            "<server><id>central</id><username>deploy</username><password>[REDACTED]</password></server>",
        ),
        (
            "<add key=\"ApiToken\" value=\"x\"/><apiKey>9f8e7d6c5b4a39281706f5e4d3c2b1a0</apiKey>",
            "<add key=\"ApiToken\" value=\"x\"/><apiKey>[REDACTED]</apiKey>",
        ),
        ("<password>${env.MAVEN_PASSWORD}</password>", "<password>${env.MAVEN_PASSWORD}</password>"),
        ("<token-type>bearer</token-type>", "<token-type>bearer</token-type>"),
    ];
    let input: String = cases.iter().map(|(i, _)| format!("{i}\n")).collect();
    let mut cmd = env.cmd("lokust-shell");
    let got = stdout(&cmd.args(["redact", "--as", "text"]).write_stdin(input).assert().success());
    let diff: Vec<String> = got
        .lines()
        .zip(cases.iter().map(|(_, w)| *w))
        .filter(|(g, w)| g != w)
        .map(|(g, w)| format!("got  {g}\nwant {w}"))
        .collect();
    assert!(diff.is_empty(), "\n{}", diff.join("\n"));
}

/// Every file below `root` whose name ends with one of `exts`, sorted; test folders and
/// installed packages of a Python left out.
fn source_files(root: &Path, exts: &[&str]) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = fs::read_dir(&dir) else { continue };
        for e in entries.flatten() {
            let p = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            let Ok(meta) = fs::symlink_metadata(&p) else { continue };
            if meta.is_dir() && !matches!(name.as_str(), "test" | "tests" | "site-packages" | "dist-packages")
            {
                stack.push(p);
            } else if meta.is_file() && exts.iter().any(|x| name.ends_with(x)) {
                files.push(p);
            }
        }
    }
    files.sort();
    files
}

/// A line of key material: a PEM or OpenSSH block's header or body, or an `age` secret
/// key, as test vectors hold them. Redacting those is right, wherever they are.
fn is_key_material(line: &str) -> bool {
    let line = line.split_once('\u{2192}').map_or(line, |(_, text)| text);
    let t = line.trim().trim_matches(|c| matches!(c, '"' | ',' | '\''));
    (t.len() >= 8 && t.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=')))
        || ["PRIVATE KEY", "AGE-SECRET-KEY", "DEK-Info", "Proc-Type"].iter().any(|m| line.contains(m))
}

/// Changed lines per MiB of `files`, read plain and as Claude Code's `Read` numbers them,
/// key material left out of the count; with the first changes, for the failure message.
fn code_changes(files: &[PathBuf]) -> (f64, f64, f64, Vec<String>) {
    let (mut bytes, mut plain, mut read) = (0usize, 0usize, 0usize);
    let mut seen = Vec::new();
    for f in files {
        let Ok(text) = fs::read_to_string(f) else { continue };
        bytes += text.len();
        let out = lokust::redact::redact(&text);
        for (a, b) in text.lines().zip(out.lines()).filter(|(a, b)| a != b && !is_key_material(a)) {
            plain += 1;
            if seen.len() < 20 {
                seen.push(format!("{}: {a}\n  → {b}", f.display()));
            }
        }
        let numbered: String =
            text.lines().enumerate().map(|(i, l)| format!("{:>6}\u{2192}{l}\n", i + 1)).collect();
        let out = lokust::redact::redact(&numbered);
        read += numbered.lines().zip(out.lines()).filter(|(a, b)| a != b && !is_key_material(a)).count();
    }
    let mib = bytes as f64 / (1 << 20) as f64;
    (mib, plain as f64 / mib, read as f64 / mib, seen)
}

/// The clean side from material nobody here wrote: this machine's Python standard library
/// (tests excluded), read as an agent reads it, plain and numbered by Claude Code's
/// `Read`. Nothing in it is a secret, so every changed line is a false positive; issue
/// 16's target is fewer than 0.5 per MiB.
#[test]
fn the_python_standard_library_is_left_nearly_untouched() {
    let root = fs::read_dir("/usr/lib")
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("python3.")))
        .filter(|p| p.join("os.py").is_file())
        .max()
        .expect("python3 is installed by scripts/test");
    let (mib, plain, read, seen) = code_changes(&source_files(&root, &[".py"]));
    println!(
        "{}: {mib:.1} MiB; changed lines per MiB: {plain:.2} plain, {read:.2} as Read shows them",
        root.display()
    );
    assert!(mib > 5.0, "too little of the library was read: {mib:.1} MiB");
    assert!(
        plain < 0.5 && read < 0.5,
        "{plain:.2} and {read:.2} changed lines per MiB:\n{}",
        seen.join("\n")
    );
}

/// The crates of this project's `Cargo.lock` as the build unpacked them: fixed input,
/// whatever else a machine's registry holds. `cargo test --locked` needs every one built
/// on this platform, so they are all there.
fn locked_crates(registry: &Path) -> Vec<PathBuf> {
    let lock = fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.lock")).unwrap();
    let mut wanted = std::collections::BTreeSet::new();
    for package in lock.split("[[package]]").skip(1) {
        let field = |key: &str| {
            package.lines().find_map(|l| l.strip_prefix(key)?.strip_prefix(" = \"")?.strip_suffix('"'))
        };
        if let (Some(name), Some(version), Some(source)) = (field("name"), field("version"), field("source"))
            && source.starts_with("registry+")
        {
            wanted.insert(format!("{name}-{version}"));
        }
    }
    let mut dirs = Vec::new();
    for index in fs::read_dir(registry).expect("the build unpacked the registry").flatten() {
        for name in &wanted {
            let dir = index.path().join(name);
            if dir.is_dir() {
                dirs.push(dir);
            }
        }
    }
    dirs.sort();
    dirs.dedup_by(|a, b| a.file_name() == b.file_name());
    dirs
}

/// The Rust crates this project builds with, as `Cargo.lock` pins them (private-key test
/// vectors of the crypto crates, which are rightly redacted, not counted).
#[test]
fn crates_this_project_builds_with_are_left_nearly_untouched() {
    let registry = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
        .unwrap()
        .join("registry/src");
    let files: Vec<PathBuf> =
        locked_crates(&registry).iter().flat_map(|dir| source_files(dir, &[".rs"])).collect();
    let (mib, plain, read, seen) = code_changes(&files);
    println!(
        "{}: {mib:.1} MiB; changed lines per MiB: {plain:.2} plain, {read:.2} as Read shows them",
        registry.display()
    );
    assert!(mib > 10.0, "too little of the registry was read: {mib:.1} MiB");
    assert!(
        plain < 0.5 && read < 0.5,
        "{plain:.2} and {read:.2} changed lines per MiB:\n{}",
        seen.join("\n")
    );
}

/// The bundled JavaScript of the Gemini CLI that `scripts/agent-clis` installs.
#[test]
fn node_packages_are_left_nearly_untouched() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/agent-clis/gemini/node_modules");
    if !root.is_dir() {
        assert!(std::env::var_os("CI").is_none(), "run ./scripts/agent-clis");
        return;
    }
    let (mib, plain, read, seen) = code_changes(&source_files(&root, &[".js", ".mjs", ".ts"]));
    println!(
        "{}: {mib:.1} MiB; changed lines per MiB: {plain:.2} plain, {read:.2} as Read shows them",
        root.display()
    );
    assert!(mib > 10.0, "too little JavaScript was read: {mib:.1} MiB");
    assert!(
        plain < 0.5 && read < 0.5,
        "{plain:.2} and {read:.2} changed lines per MiB:\n{}",
        seen.join("\n")
    );
}

/// `--as code` and `--as config` read a name the way code and config files write one: it
/// counts only when it ends with what names a secret. The same secrets are caught; a
/// name that only contains such a word is let go. `--as shell` reads as `--as text`.
#[test]
fn code_and_config_readings_are_strict_about_names_and_catch_the_same_secrets() {
    let env = TestEnv::new();
    let input = "TOKEN_LIMIT_FACTOR=q9W8e7R6t5\n\
                 AUTH_DB_ALIAS=replica_zx9q8w\n\
                 export API_KEY=sk_live_4eC39HqLyjWDarjtT1zdp7dc\n\
                 db_password=Tr0ub4dor\n\
                 os.system(\"mysql -u root -pS3cretPw db\")\n\
                 spring.datasource.password=Zq8rT5wLp\n";
    let read = |kind: &str| {
        stdout(&env.cmd("lokust-shell").args(["redact", "--as", kind]).write_stdin(input).assert().success())
    };
    let text = read("text");
    assert!(text.contains("TOKEN_LIMIT_FACTOR=[REDACTED]"), "text reads names leniently:\n{text}");
    assert_eq!(read("shell"), text);
    for kind in ["code", "config"] {
        let out = read(kind);
        assert!(
            out.contains("TOKEN_LIMIT_FACTOR=q9W8e7R6t5") && out.contains("AUTH_DB_ALIAS=replica_zx9q8w"),
            "{kind}:\n{out}"
        );
        for secret in ["sk_live_4eC39HqLyjWDarjtT1zdp7dc", "Tr0ub4dor", "S3cretPw", "Zq8rT5wLp"] {
            assert!(!out.contains(secret), "{kind}: {secret} survived:\n{out}");
        }
    }
}
