//! Every rule's examples, alone and embedded in other text, plus the API's promises
//! (borrowed when unchanged, structure kept, reports without secrets).

use std::borrow::Cow;

use super::scan::{find_spans, merge};
use super::*;

/// A small deterministic generator, so examples are random but reproducible: the one the
/// benchmarks use.
#[path = "../../benches/common/rng.rs"]
mod rng;
pub(crate) use rng::Rng;

fn alphabet(c: char) -> &'static [u8] {
    match c {
        'a' => b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
        'h' => b"0123456789abcdef",
        'A' => b"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
        'B' => b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567",
        'd' => b"0123456789",
        'l' => b"abcdefghijklmnopqrstuvwxyz",
        'L' => b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
        'u' => b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-",
        'b' => b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",
        'Z' => b"QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L",
        'z' => b"qpzry9x8gf2tvdw0s3jn54khce6mua7l",
        other => panic!("unknown template class {other}"),
    }
}

/// Expands `‹a36›` generators; returns the text and the `⟦…⟧`-marked secrets.
pub(crate) fn expand(template: &str, rng: &mut Rng) -> (String, Vec<String>) {
    let mut out = String::new();
    let mut secrets = Vec::new();
    let mut open: Option<usize> = None;
    let mut chars = template.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '‹' => {
                let class = chars.next().unwrap();
                let mut n = String::new();
                for d in chars.by_ref() {
                    if d == '›' {
                        break;
                    }
                    n.push(d);
                }
                let abc = alphabet(class);
                for _ in 0..n.parse::<usize>().unwrap() {
                    out.push(abc[(rng.next() % abc.len() as u64) as usize] as char);
                }
            }
            '⟦' => open = Some(out.len()),
            '⟧' => secrets.push(out[open.take().unwrap()..].to_string()),
            c => out.push(c),
        }
    }
    let secrets = if secrets.is_empty() && !template.contains('⟦') { vec![out.clone()] } else { secrets };
    (out, secrets)
}

fn embeddings(line: &str) -> Vec<String> {
    vec![
        line.to_string(),
        format!(": 1700000000:0;{line}"),
        format!("ls -la\n{line}\ngit status"),
        format!("- cmd: {line}"),
    ]
}

#[test]
fn every_rule_has_examples_and_a_unique_id() {
    let mut ids: Vec<&str> = RULES.iter().map(|r| r.id).collect();
    ids.sort();
    let n = ids.len();
    ids.dedup();
    assert_eq!(n, ids.len(), "duplicate rule ids");
    for r in RULES {
        assert!(!r.positives.is_empty(), "{} has no positive example", r.id);
        assert!(!r.negatives.is_empty(), "{} has no negative example", r.id);
        assert!(!r.keywords.is_empty(), "{} has no keyword", r.id);
    }
}

#[test]
fn token_patterns_compile() {
    for i in 0..RULES.len() {
        let _ = scan::rule_regex(i);
    }
}

#[test]
fn positives_are_redacted_by_their_rule_alone_and_embedded() {
    let mut failures = Vec::new();
    // Several draws per template: random content must not decide whether a rule fires.
    for seed in 1..=32u64 {
        let mut rng = Rng(0x1ee7_5eed * seed);
        for r in RULES {
            for t in r.positives {
                let (line, secrets) = expand(t, &mut rng);
                // The rule itself finds it (not merely another rule).
                let spans = find_spans(line.as_bytes());
                for s in &secrets {
                    let at = line.find(s.as_str()).unwrap();
                    let covered =
                        spans.iter().any(|sp| sp.rule == r.id && sp.start <= at && sp.end >= at + s.len());
                    if !covered && !line.contains('\n') && !line.contains("\\n") {
                        failures.push(format!("{}: rule does not cover {s:?} in {line:?}: {spans:?}", r.id));
                    }
                }
                let tokenish = matches!(r.matcher, Matcher::Token(_));
                let mut texts = embeddings(&line);
                // A command's output follows its prompt in a terminal: a history file, which
                // holds no output, puts no prompt at the line's start.
                if r.gate == crate::redact::Gate::Prompted {
                    texts.retain(|t| !t.starts_with(": ") && !t.starts_with("- cmd: "));
                }
                if tokenish {
                    texts.push(format!("curl -d \"note={line}&x=1\" https://api.example.com"));
                    texts.push(format!("{{\"text\": \"got {line}, ok\"}}"));
                }
                for text in texts {
                    let out = redact(&text);
                    for s in &secrets {
                        if out.contains(s.as_str()) || !out.contains(REDACTED) {
                            failures.push(format!("{}: {text:?} -> {out:?}", r.id));
                        }
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn negatives_are_untouched_alone_and_embedded() {
    let mut rng = Rng(0xbe_11a9);
    let mut failures = Vec::new();
    for r in RULES {
        for t in r.negatives {
            let (line, _) = expand(t, &mut rng);
            for text in embeddings(&line) {
                let out = redact(&text);
                if !matches!(out, Cow::Borrowed(_)) {
                    failures.push(format!("{}: {text:?} -> {out:?}", r.id));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn structure_is_kept() {
    let tok = format!("ghp_{}", "a1B2c3D4e5".repeat(4).get(..36).unwrap());
    assert_eq!(redact(&format!("export GITHUB_TOKEN={tok}")), "export GITHUB_TOKEN=[REDACTED]");
    assert_eq!(
        redact("curl -H 'Authorization: Bearer abc123DEF456ghi789JKL' https://x"),
        "curl -H 'Authorization: Bearer [REDACTED]' https://x"
    );
    assert_eq!(redact("psql postgres://app:s3cr3t@db/x"), "psql postgres://app:[REDACTED]@db/x");
    assert_eq!(redact("mysql -u root -phunter2"), "mysql -u root -p[REDACTED]");
    assert_eq!(redact("export PASSWORD=\"correct horse battery\""), "export PASSWORD=\"[REDACTED]\"");
}

#[test]
fn unchanged_text_is_borrowed() {
    for t in [
        "git log --oneline 3f2a1b9c0d4e5f60718293a4b5c6d7e8f9012345",
        "cargo test --lib redact",
        "export TOKENIZERS_PARALLELISM=false",
        "",
        "caf\u{e9} \u{2615}",
    ] {
        assert!(matches!(redact(t), Cow::Borrowed(_)), "{t:?}");
    }
}

#[test]
fn redaction_is_idempotent() {
    let once = redact("export DB_PASSWORD=hunter2; mysql -phunter2").into_owned();
    let mut r = Report::default();
    assert!(matches!(redact_report(&once, &mut r), Cow::Borrowed(_)), "{once}");
    assert_eq!(r.values, 0);
}

#[test]
fn multi_line_pem_body_is_replaced_header_kept() {
    let text = "cat key.pem\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\nQyNTUxOQAAACDLkR4yWhvG1cZ4fK0VEvNwWn4nq9hSgAAAJh2uX7Udrl+1A==\n-----END OPENSSH PRIVATE KEY-----\nls\n";
    let mut r = Report::default();
    let out = redact_report(text, &mut r);
    assert_eq!(
        out,
        "cat key.pem\n-----BEGIN OPENSSH PRIVATE KEY-----\n[REDACTED]\n[REDACTED]\n-----END OPENSSH PRIVATE KEY-----\nls\n"
    );
    assert_eq!((r.lines, r.values), (2, 1));
    assert_eq!(r.by_rule.get("private-key"), Some(&1));
}

#[test]
fn report_counts_and_explain_has_no_secret() {
    let mut r = Report::default();
    let text = "export DB_PASSWORD=hunter2\nls\nmysql -uroot -pfalcon9 -h db\n";
    let out = redact_report(text, &mut r);
    assert!(!out.contains("hunter2") && !out.contains("falcon9"));
    assert_eq!((r.lines, r.values), (2, 2));
    let mut buf = Vec::new();
    r.write_explain(&mut buf).unwrap();
    let s = String::from_utf8(buf).unwrap();
    assert!(s.contains("assign") && s.contains("short-flag"), "{s}");
    assert!(!s.contains("hunter2") && !s.contains("falcon9"));
    let mut total = Report::default();
    total.merge(&r);
    total.merge(&r);
    assert_eq!((total.lines, total.values), (4, 4));
}

#[test]
fn json_lines() {
    let mut r = Report::default();
    let clean = r#"{"type":"user","message":{"content":"run the tests"}}"#;
    assert!(matches!(redact_json_line(clean, &mut r), Cow::Borrowed(_)));
    let keyish = r#"{"password_hint":"x","n":1}"#;
    assert!(matches!(redact_json_line(keyish, &mut r), Cow::Borrowed(_)));
    let thinking = r#"{"type":"thinking","thinking":"check the session token","signature":"EqQBCkYIBxgCKkB3vR9mQ2xLp8sT4uWz0aYcN6dF1gH5jK7lM9nP3qS2tV4wX8yZ"}"#;
    assert!(matches!(redact_json_line(thinking, &mut r), Cow::Borrowed(_)));
    // A thinking block's signature and a redacted block's data are the API's, not read:
    // what would be a token anywhere else stays there byte for byte.
    let token = "ghp_Zq8xWv3Lr5Tn7Mk2Hj4Gf6Dd9Ss1Aa0Pp3Oo";
    for block in [
        format!(r#"{{"type":"thinking","thinking":"ok","signature":"{token}"}}"#),
        format!(r#"{{"type":"redacted_thinking","data":"{token}"}}"#),
    ] {
        assert!(matches!(redact_json_line(&block, &mut Report::default()), Cow::Borrowed(_)), "{block}");
    }
    // Anywhere else, the same values are read.
    for block in [
        format!(r#"{{"type":"text","text":"ok","signature":"{token}"}}"#),
        format!(r#"{{"signature":"{token}","type":"thinking"}}"#),
        format!(r#"{{"type":"thinking","data":"{token}"}}"#),
    ] {
        assert!(!redact_json_line(&block, &mut Report::default()).contains(token), "{block}");
    }
    let dirty = r#"{"type":"tool_use","input":{"command":"export GITHUB_TOKEN=abcdEFGH1234ijkl5678"},"password":"not-a-key-name-test"}"#;
    let out = redact_json_line(dirty, &mut r);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["input"]["command"], "export GITHUB_TOKEN=[REDACTED]");
    // Keys are left alone, but they are context for their value.
    assert_eq!(v["password"], "[REDACTED]");
    assert_eq!(r.values, 2);
}

#[test]
fn merge_keeps_utf8_boundaries() {
    let line = "x=\u{e9}\u{e9}".as_bytes();
    let spans = merge(line, vec![super::span::Span { start: 3, end: 5, rule: "t" }]);
    assert_eq!((spans[0].start, spans[0].end), (2, 6));
}

/// A record with a byte that is not UTF-8 is not JSON to the letter, but every other
/// string in it is still a JSON string: an escaped secret there must not pass because of
/// one bad byte elsewhere. The bytes stay as they are when there is nothing to redact.
#[test]
fn a_record_with_a_bad_byte_is_still_read_as_json() {
    let token = "ghp_aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5";
    let mut input = Vec::new();
    input.extend_from_slice(b"{\"a\":\"caf\xe9\",\"b\":\"ghp_\\u0061");
    input.extend_from_slice(&token.as_bytes()[5..]);
    input.extend_from_slice(
        b"\"}\n{\"a\":\"\xff\",\"b\":\"\\u0070assword=hunter2xyz\"}\n{\"clean\":\"\xfe\"}\n",
    );
    let mut out = Vec::new();
    let r = filter::run_as(filter::Kind::Transcript, &input[..], &mut out).unwrap();
    let text = String::from_utf8_lossy(&out);
    assert!(!text.contains(&token[5..]) && !text.contains("hunter2xyz"), "{text}");
    assert_eq!(r.values, 2, "{text}");
    assert!(out.ends_with(b"{\"clean\":\"\xfe\"}\n"), "{text}");
}

#[test]
fn filter_streams_and_preserves_bytes() {
    let mut input = Vec::new();
    input.extend_from_slice(b"ls\n\xff\xfe raw bytes\nexport API_TOKEN=abcDEF123456ghiJKL\n");
    input.extend(std::iter::repeat_n(b'a', 100_000));
    input.extend_from_slice(b" --password hunter2\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7bq9vQ3x9yZ\n-----END RSA PRIVATE KEY-----\nno newline at end");
    let reader = std::io::BufReader::with_capacity(64, &input[..]);
    let mut out = Vec::new();
    let r = filter::run(reader, &mut out).unwrap();
    let s = String::from_utf8_lossy(&out);
    assert!(out.starts_with(b"ls\n\xff\xfe raw bytes\nexport API_TOKEN=[REDACTED]\n"));
    assert!(s.contains(" --password [REDACTED]\n-----BEGIN RSA PRIVATE KEY-----\n[REDACTED]\n-----END"));
    assert!(out.ends_with(b"no newline at end"));
    assert_eq!(r.values, 3);
    assert_eq!(r.lines, 3);
}

#[test]
fn env_values_use_their_name() {
    let mut r = Report::default();
    assert_eq!(redact_env("DB_PASSWORD", "hunter2", &mut r), REDACTED);
    assert_eq!(redact_env("TOKENIZERS_PARALLELISM", "false", &mut r), "false");
    assert_eq!(redact_env("SSH_AUTH_SOCK", "/run/user/1000/ssh", &mut r), "/run/user/1000/ssh");
    assert_eq!(
        redact_env("DATABASE_URL", "postgres://app:s3cret@db/app", &mut r),
        "postgres://app:[REDACTED]@db/app"
    );
    assert_eq!((r.lines, r.values), (2, 2));
}

#[test]
fn json_escapes_do_not_hide_secrets() {
    let mut r = Report::default();
    let line = r#"{"text":"export DB_\u0050ASSWORD=hunter2"}"#;
    let out = redact_json_line(line, &mut r);
    assert!(!out.contains("hunter2"), "{out}");
    let line = r#"{"url":"https:\/\/deploy:hunter2@git.example.com\/x.git"}"#;
    let out = redact_json_line(line, &mut r);
    assert!(!out.contains("hunter2"), "{out}");
}

#[test]
fn continuation_lines_keep_their_command() {
    let text = "mysql -u root \\\n  -phunter2 app\ndocker login \\\n  --username bob \\\n  --password \\\n  s3cretPw registry.example.com\nls -p\n";
    let out = redact(text);
    assert_eq!(
        out,
        "mysql -u root \\\n  -p[REDACTED] app\ndocker login \\\n  --username bob \\\n  --password \\\n  [REDACTED] registry.example.com\nls -p\n"
    );
    // The same through the streaming filter, where the continuation line has no keyword.
    let mut o = Vec::new();
    filter::run(text.as_bytes(), &mut o).unwrap();
    assert_eq!(String::from_utf8(o).unwrap(), out);
}

/// `text` as `cat -n` shows it: each line numbered in six columns and a tab.
fn cat_n(text: &str) -> String {
    text.lines().enumerate().map(|(i, l)| format!("{:>6}\t{l}\n", i + 1)).collect()
}

/// `text` redacted, after checking that a second pass changes nothing and that the
/// streaming filter writes the same.
fn redacted_everywhere(text: &str) -> String {
    let once = redact(text).into_owned();
    assert!(matches!(redact(&once), Cow::Borrowed(_)), "{once:?} -> {:?}", redact(&once));
    let mut o = Vec::new();
    filter::run(text.as_bytes(), &mut o).expect("writing to a Vec does not fail");
    assert_eq!(String::from_utf8(o).expect("the filter keeps UTF-8"), once);
    once
}

/// A quote left open at a continued line's end (pasted scrollback, a cut command) does
/// not run on through the lines after it: they were read as inside that one quoted word,
/// and an option there went unseen until the first redaction ate the quote's line end.
/// Found by the property test with another seed.
#[test]
fn an_open_quote_ends_the_continuation() {
    let text = "set -gx DB_PASSWORD GwkV8UVBKkfSobEMPm' \\\n  -d @body.json \\\n  skopeo copy --dest-creds alice:velvet39 docker://a docker://b\n";
    let once = redacted_everywhere(text);
    assert!(!once.contains("velvet39") && !once.contains("GwkV8UVBKkfSobEMPm"), "{once}");
    assert!(once.contains("  -d @body.json \\\n"), "{once}");
}

/// Only a line with a keyword is carried into the next, so a continuation was read as
/// part of the line before only when that line held a secret's keyword: behind a token,
/// `htpasswd -b … pw` on the next line (a new command in pasted scrollback) read as an
/// argument of `python` and its password passed; behind harmless text it was redacted.
/// Found by the property test with another seed.
#[test]
fn a_continuation_is_also_read_on_its_own() {
    for first in [
        "python -c 'print(\"xoxp-734392692664-101578959874-7380810065270-0771dc572950f4ab548289854897e5ae\")'\\",
        "python -c 'print(\"hello\")'\\",
    ] {
        let text = format!("{first}\n  htpasswd -b /etc/nginx/.htpasswd deploy 'Cobalt2028*'\n");
        let once = redacted_everywhere(&text);
        assert!(!once.contains("Cobalt2028") && !once.contains("xoxp-7343"), "{once}");
        assert!(once.contains("htpasswd -b /etc/nginx/.htpasswd deploy '[REDACTED]'"), "{once}");
    }
}

/// YAML's single-quoted scalar escapes a quote by doubling it (1.2.2, 7.3.2: `'it''s'`),
/// and Python and shell read `'ab''cd'` as one string too: the whole of it is the value.
/// The value ended at the first `''`, and its tail passed. Found by an attack.
#[test]
fn a_doubled_single_quote_does_not_end_a_value() {
    for text in [
        "password: 'ab''S3cr3tVal9'\n",
        "  db_password: 'x''y''S3cr3tVal9'  # old\n",
        "- token: 'S3cr3t''Val9'\n",
    ] {
        for (view, shown) in views_of(text) {
            let once = redacted_in_pieces(&shown);
            assert!(!once.contains("S3cr3t") && !once.contains("Val9"), "{view}: {once}");
            assert!(once.contains(": '[REDACTED]'"), "{view}: {once}");
        }
    }
    // The same literal after `=` (shell, Python) and as a call's value: one mechanism.
    for text in [
        "DB_PASSWORD='ab''S3cr3tVal9'\n",
        "password = 'ab''S3cr3tVal9'\n",
        "os.environ['API_TOKEN'] = 'ab''S3cr3tVal9'\n",
    ] {
        let once = redacted_everywhere(text);
        assert!(!once.contains("S3cr3t") && !once.contains("Val9"), "{once}");
    }
    // Two values on a line, each quoted once, stay two values.
    let two = "{user: 'bob', password: 'S3cr3tVal9'}\n";
    assert_eq!(redacted_in_pieces(two), "{user: 'bob', password: '[REDACTED]'}\n");
}

/// A diff that changes a continued command's last line: the removed line ends the
/// command on the old side, and the added lines after it go on with the same command on
/// the new side. Read alone, `+  -pNEW` was no command, and the new password passed.
/// Found by an attack on the hunk reading, on real diffs (`git diff`, `diff -u`).
#[test]
fn a_diff_that_changes_a_continued_commands_last_line_loses_both_passwords() {
    for text in [
        " mysql -u root \\\n-  -pOldSecret99\n+  -pNewSecret42\n echo done\n",
        "@@ -1,5 +1,6 @@\n mysql -u root \\\n-  -h old.example \\\n-  -pOldSecret99\n+  -h new.example \\\n+  -pNewSecret42\n+  --verbose\n echo done\n",
        " sshpass \\\n-  -p OldSecret99 ssh a@b\n+  -p NewSecret42 ssh a@b\n",
    ] {
        let once = redacted_everywhere(text);
        assert!(!once.contains("OldSecret99") && !once.contains("NewSecret42"), "{once}");
        // Only the values go: every line keeps its diff mark and its options.
        assert_eq!(once.lines().count(), text.lines().count(), "{once}");
        assert!(once.contains("+  -p") && once.contains("-  -p"), "{once}");
    }
    // The same hunk as Claude Code's `structuredPatch`, a line a JSON string.
    let record = r#"{"toolUseResult":{"structuredPatch":[{"lines":[" mysql -u root \\","-  -pOldSecret99","+  -pNewSecret42"," echo done"]}]}}"#;
    let out = redact_json_line(record, &mut Report::default()).into_owned();
    assert!(!out.contains("OldSecret99") && !out.contains("NewSecret42"), "{out}");
    serde_json::from_str::<serde_json::Value>(&out).expect(&out);
    // An added line after a removed one that ended nothing is read alone, as before.
    let plain = " echo hi\n-  ls -p\n+  ls -pa\n";
    assert_eq!(redacted_everywhere(plain), plain);
    // A command the removed lines started is the old side's alone: the added command
    // after it is not its value (found by an attack: `+docker` was taken for `-p`'s).
    for (text, command) in [
        (
            "-docker login -u me -p \\\n-  OLDs3cr3tAAA\n+docker login -u me -p \\\n+  NEWs3cr3tBBB\n",
            "+docker login",
        ),
        ("-sshpass -p \\\n-  OLDs3cr3tAAA ssh h\n+sshpass -p \\\n+  NEWs3cr3tBBB ssh h\n", "+sshpass -p"),
    ] {
        let once = redacted_everywhere(text);
        assert!(once.contains(command) && !once.contains("NEWs3cr3tBBB"), "{once}");
    }
}

/// A Dockerfile's `RUN` and `CMD` (shell form) run their line as a shell command: the
/// command is the word after them and its options (BuildKit's `--mount=…`), as after
/// `sudo`. Read as the command, `RUN mysql -pX` kept its password, in a diff or not.
#[test]
fn a_dockerfiles_run_line_is_the_command_it_runs() {
    for (text, secret) in [
        ("RUN mysql -u root -pOLDs3cr3tAAA -e 'select 1'\n", "OLDs3cr3tAAA"),
        (
            "RUN --mount=type=cache,target=/root/.cache sshpass -p Hn6TzP2kRw9YdQa3 scp a b:\n",
            "Hn6TzP2kRw9YdQa3",
        ),
        ("CMD mysql -h db -pWm3Xc8NvB5Lq\n", "Wm3Xc8NvB5Lq"),
        // Found by an attack: Docker reads instructions in any case, `ONBUILD` and
        // `HEALTHCHECK` take one after them, and `ENTRYPOINT` has a shell form too.
        ("ONBUILD RUN mysql -u root -pWm3Xc8NvB5Lq -e x\n", "Wm3Xc8NvB5Lq"),
        ("run mysql -u root -pWm3Xc8NvB5Lq -e x\n", "Wm3Xc8NvB5Lq"),
        (
            "HEALTHCHECK --interval=5m --timeout=3s CMD mysqladmin ping -h localhost -u root -pWm3Xc8NvB5Lq || exit 1\n",
            "Wm3Xc8NvB5Lq",
        ),
        ("ENTRYPOINT mysql -u root -pWm3Xc8NvB5Lq\n", "Wm3Xc8NvB5Lq"),
        // A shell's reserved words come before a command as a wrapper does.
        ("RUN if true; then sshpass -p Hn6TzP2kRw9YdQa3 ssh h; fi\n", "Hn6TzP2kRw9YdQa3"),
        ("for i in 1 2; do mysql -pWm3Xc8NvB5Lq -e x; done\n", "Wm3Xc8NvB5Lq"),
        ("while true; do sshpass -p Hn6TzP2kRw9YdQa3 ssh h; done\n", "Hn6TzP2kRw9YdQa3"),
        ("! mysql -pWm3Xc8NvB5Lq -e x\n", "Wm3Xc8NvB5Lq"),
        ("{ mysql -pWm3Xc8NvB5Lq -e x; }\n", "Wm3Xc8NvB5Lq"),
        ("if false; then :; else sshpass -p Hn6TzP2kRw9YdQa3 ssh h; fi\n", "Hn6TzP2kRw9YdQa3"),
        (" RUN mysql -u root \\\n-  -pOLDs3cr3tAAA\n+  -pNEWs3cr3tBBB\n", "s3cr3t"),
        (" RUN mysql -u root \\\n-  -pOLDs3cr3tAAA \\\n+  -pNEWs3cr3tBBB \\\n   -e \"select 1\"\n", "s3cr3t"),
    ] {
        let once = redacted_everywhere(text);
        assert!(!once.contains(secret), "{text}\n=> {once}");
    }
    // The word after is what runs: a path or a harmless command stays.
    for text in ["RUN make -j4 install\n", "RUN pip install -r requirements.txt -p /opt\n"] {
        assert_eq!(redacted_everywhere(text), text);
    }
}

/// A command given as a list of its words: a Dockerfile's exec form (a JSON array),
/// Python's `subprocess.run([...])`, Kubernetes' and compose's `command: [...]`. The
/// words are read as the command line they make, each element one word, and only a
/// secret element's text goes; the list keeps its quotes and commas.
#[test]
fn a_command_given_as_a_list_of_words_loses_its_password() {
    for (text, secret, kept) in [
        (
            "CMD [\"sshpass\",\"-p\",\"Hn6TzP2kRw9YdQa3\",\"ssh\",\"h\"]\n",
            "Hn6TzP2kRw9YdQa3",
            "CMD [\"sshpass\",\"-p\",\"[REDACTED]\",\"ssh\",\"h\"]\n",
        ),
        (
            "RUN [\"mysql\", \"-u\", \"root\", \"-pWm3Xc8NvB5Lq\", \"-e\", \"select 1\"]\n",
            "Wm3Xc8NvB5Lq",
            "\"-p[REDACTED]\", \"-e\", \"select 1\"]",
        ),
        (
            "subprocess.run(['sshpass', '-p', 'Hn6TzP2kRw9YdQa3', 'ssh', 'h'], check=True)\n",
            "Hn6TzP2kRw9YdQa3",
            "'-p', '[REDACTED]', 'ssh', 'h'], check=True)",
        ),
        (
            "    command: [\"redis-server\", \"--requirepass\", \"Hn6TzP2kRw9YdQa3\"]\n",
            "Hn6TzP2kRw9YdQa3",
            "[\"redis-server\", \"--requirepass\", \"[REDACTED]\"]",
        ),
    ] {
        let once = redacted_everywhere(text);
        assert!(!once.contains(secret) && once.contains(kept), "{text}\n=> {once}");
    }
    // Options that take no secret, as lists, stay as they are.
    for text in [
        "CMD [\"docker\", \"run\", \"-p\", \"8080:80\", \"nginx\"]\n",
        "RUN [\"mkdir\", \"-p\", \"/opt/app\"]\n",
        "subprocess.run(['psql', '-p', '5432', '-h', 'db'])\n",
        "args = ['--password-file', '/run/secrets/db', '--user', 'app']\n",
    ] {
        assert_eq!(redacted_everywhere(text), text);
    }
    // After a one-dash word named like a secret, PowerShell's next parameter is no value
    // (`-PassThru -ArgumentList`, in real Dockerfiles); a value that starts with a dash
    // still is (found by an attack: `keytool -storepass -Xk9pass2` passed).
    for text in [
        "Start-Process setup.exe -Wait -PassThru -ArgumentList '--version'\n",
        "RUN (Start-Process x.exe -PassThru -NoNewWindow).ExitCode\n",
    ] {
        assert_eq!(redacted_everywhere(text), text);
    }
    for (text, secret) in [
        ("keytool -importkeystore -storepass -Xk9pass2 -keystore k.jks\n", "Xk9pass2"),
        ("New-LocalUser -Name bob -Password -Xk9pass2\n", "Xk9pass2"),
        ("foo -token -Xk9pass2Qz7\n", "Xk9pass2Qz7"),
    ] {
        assert!(!redacted_everywhere(text).contains(secret), "{text}");
    }
    // Found by the same attack: an element with a single quote in it, and a long list
    // (each span was matched to its element by a walk over all of them).
    let once = redacted_everywhere("CMD [\"sshpass\",\"-p\",\"it's2Hunter\",\"ssh\",\"h\"]\n");
    assert!(!once.contains("it's2Hunter"), "{once}");
    let mut long = String::from("CMD [\"sshpass\"");
    for _ in 0..2_000 {
        long.push_str(",\"-p\",\"Hunter2xyz\"");
    }
    long.push_str("]\n");
    assert!(!redact(&long).contains("Hunter2xyz"));
}

/// A command given as a call's arguments, as each language's documentation writes the
/// call: Go's `exec.Command(name, arg...)` and `exec.CommandContext(ctx, name, arg...)`,
/// Node's `spawn(command, args)` and `execFileSync(file, args)`, Java's `new
/// ProcessBuilder(command...)` and `exec(new String[]{…})`, Rust's `Command::new(program)`
/// with `.arg(…)` and `.args([…])` on the same line. The words are read as the command
/// line they make; only a secret element's text goes. Tried as a new user would: before,
/// the password of each passed, and `("sshpass", "-p", …)` read as a name and its value
/// lost its `-p` instead.
#[test]
fn a_command_given_as_a_calls_arguments_loses_its_password() {
    for (text, secret, kept) in [
        (
            "cmd := exec.Command(\"mysql\", \"-u\", \"root\", \"-pS3cr3tPassw0rd\", \"mydb\")\n",
            "S3cr3tPassw0rd",
            "\"-p[REDACTED]\", \"mydb\")",
        ),
        (
            "cmd := exec.Command(\"sshpass\", \"-p\", \"Tr0ub4dor&3x\", \"ssh\", \"host\")\n",
            "Tr0ub4dor&3x",
            "exec.Command(\"sshpass\", \"-p\", \"[REDACTED]\", \"ssh\", \"host\")",
        ),
        (
            "cmd := exec.CommandContext(ctx, \"sshpass\", \"-p\", \"Tr0ub4dor&3v\", \"ssh\", \"h\")\n",
            "Tr0ub4dor&3v",
            "(ctx, \"sshpass\", \"-p\", \"[REDACTED]\", \"ssh\", \"h\")",
        ),
        (
            "const child = spawn('sshpass', ['-p', 'Tr0ub4dor&3z', 'ssh', 'host']);\n",
            "Tr0ub4dor&3z",
            "spawn('sshpass', ['-p', '[REDACTED]', 'ssh', 'host']);",
        ),
        (
            "execFileSync(\"mysql\", [\"-u\", \"root\", \"-pZq9vLm2Kx7\"], { stdio: \"inherit\" });\n",
            "Zq9vLm2Kx7",
            "[\"-u\", \"root\", \"-p[REDACTED]\"], { stdio: \"inherit\" });",
        ),
        (
            "ProcessBuilder pb = new ProcessBuilder(\"sshpass\", \"-p\", \"Hn6TzP2kRw9YdQa3\", \"ssh\", \"h\");\n",
            "Hn6TzP2kRw9YdQa3",
            "(\"sshpass\", \"-p\", \"[REDACTED]\", \"ssh\", \"h\");",
        ),
        (
            "Runtime.getRuntime().exec(new String[]{\"mysql\", \"-u\", \"root\", \"-pWm3Xc8NvB5Lq\"});\n",
            "Wm3Xc8NvB5Lq",
            "{\"mysql\", \"-u\", \"root\", \"-p[REDACTED]\"});",
        ),
        (
            "let out = Command::new(\"sshpass\").args([\"-p\", \"Tr0ub4dor&3y\", \"ssh\", \"host\"]).output()?;\n",
            "Tr0ub4dor&3y",
            "Command::new(\"sshpass\").args([\"-p\", \"[REDACTED]\", \"ssh\", \"host\"]).output()?;",
        ),
        (
            "Command::new(\"mysql\").arg(\"-u\").arg(\"root\").arg(\"-pWm3Xc8NvB5Lq\").status()?;\n",
            "Wm3Xc8NvB5Lq",
            ".arg(\"root\").arg(\"-p[REDACTED]\").status()?;",
        ),
        (
            "let st = Command::new(\"sshpass\").args(&[\"-p\", \"Tr0ub4dor&3w\"]).arg(\"ssh\").status();\n",
            "Tr0ub4dor&3w",
            ".args(&[\"-p\", \"[REDACTED]\"]).arg(\"ssh\").status();",
        ),
    ] {
        let once = redacted_everywhere(text);
        assert!(!once.contains(secret) && once.contains(kept), "{text}\n=> {once}");
        for kind in [filter::Kind::Code, filter::Kind::Config] {
            let mut o = Vec::new();
            filter::run_as(kind, text.as_bytes(), &mut o).expect("writing to a Vec does not fail");
            assert_eq!(String::from_utf8_lossy(&o), once, "{kind:?}: {text}");
        }
    }
    // Found by an attack on the reading above: a name among the words (the host is
    // nearly always a variable), a comma after the last word, an escape in another
    // word, a C array ending in `NULL`, C#'s arguments as one string.
    for (text, secret, kept) in [
        (
            "exec.Command(\"mysql\", \"-h\", host, \"-u\", \"root\", \"-pS3cretPw9x\")\n",
            "S3cretPw9x",
            "\"-p[REDACTED]\")",
        ),
        (
            "subprocess.run(['sshpass', '-p', 'S3cretPw9x', 'ssh', host])\n",
            "S3cretPw9x",
            "'-p', '[REDACTED]', 'ssh', host])",
        ),
        (
            "spawn('sshpass', ['-p', 'S3cretPw9x', 'ssh', host])\n",
            "S3cretPw9x",
            "['-p', '[REDACTED]', 'ssh', host])",
        ),
        (
            "Command::new(\"sshpass\").args([\"-p\", \"S3cretPw9x\", \"ssh\", &host])\n",
            "S3cretPw9x",
            "\"[REDACTED]\", \"ssh\", &host])",
        ),
        (
            "subprocess.run([\"sshpass\", \"-p\", \"S3cretPw9x\", \"ssh\", \"h\",])\n",
            "S3cretPw9x",
            "\"[REDACTED]\", \"ssh\", \"h\",])",
        ),
        (
            "exec.Command(\"mysql\", \"-e\", \"SELECT \\\"x\\\"\", \"-u\", \"root\", \"-pS3cretPw9x\")\n",
            "S3cretPw9x",
            "\"-p[REDACTED]\")",
        ),
        (
            "char *argv[] = {\"sshpass\", \"-p\", \"S3cretPw9x\", \"ssh\", \"h\", NULL};\n",
            "S3cretPw9x",
            "\"[REDACTED]\", \"ssh\", \"h\", NULL};",
        ),
        (
            "Command::new(\"sshpass\").env(\"LANG\", \"C\").current_dir(&dir).args([\"-p\", \"S3cretPw9x\"]).status()\n",
            "S3cretPw9x",
            ".args([\"-p\", \"[REDACTED]\"]).status()",
        ),
        (
            "Command::new(\"mysql\").stdin(Stdio::null()).arg(\"-pS3cretPw9x\").output()\n",
            "S3cretPw9x",
            ".arg(\"-p[REDACTED]\").output()",
        ),
        (
            "Process.Start(\"mysql\", \"-u root -pS3cretPw9x mydb\");\n",
            "S3cretPw9x",
            "\"-u root -p[REDACTED] mydb\");",
        ),
    ] {
        let once = redacted_everywhere(text);
        assert!(!once.contains(secret) && once.contains(kept), "{text}\n=> {once}");
    }
    // Also found: a password given as a variable lost the `-p` before it, and execlp's
    // program its name again, each read as a name and its value; a token that starts
    // with a dash is still a value.
    for text in [
        "exec.Command(\"sshpass\", \"-p\", pw, \"ssh\", host)\n",
        "pb = new ProcessBuilder(\"sshpass\", \"-f\", passfile, \"ssh\", host);\n",
        "os.execlp(\"sshpass\", \"sshpass\", \"-e\", \"ssh\", \"host\")\n",
    ] {
        assert_eq!(redacted_everywhere(text), text);
    }
    let text = "settings.add(\"API_TOKEN\", \"-8fJ2kLmN0pQrS7tUvWxYz12AbCd\", \"prod\")\n";
    assert!(!redacted_everywhere(text).contains("8fJ2kLmN0pQrS7tUvWxYz12AbCd"), "{text}");
    // Calls whose strings are no command line that takes a secret stay as they are, and
    // a name and its value given to a call still lose the value.
    for text in [
        "cmd := exec.Command(\"docker\", \"run\", \"-p\", \"8080:80\", \"nginx\")\n",
        "spawn('psql', ['-p', '5432', '-h', 'db'])\n",
        "Command::new(\"mkdir\").arg(\"-p\").arg(\"/opt/app\").status()?;\n",
        "fmt.Printf(\"%s -p %s\\n\", \"sshpass\", \"host\")\n",
        "t.Run(\"password\", func(t *testing.T) {\n",
        "exec.Command(\"sshpass\", \"-f\", \"/run/secrets/pw\", \"ssh\", \"h\")\n",
    ] {
        assert_eq!(redacted_everywhere(text), text);
    }
    for (text, secret) in [
        ("os.Setenv(\"SSHPASS\", \"Tr0ub4dor&3q\")\n", "Tr0ub4dor&3q"),
        ("SetEnvironmentVariable(\"API_TOKEN\", \"Zq9vLm2Kx7Pw\")\n", "Zq9vLm2Kx7Pw"),
    ] {
        assert!(!redacted_everywhere(text).contains(secret), "{text}");
    }
}

/// YAML's flow sequence of plain scalars, as a Kubernetes manifest or a compose file
/// writes a command (the YAML 1.2 spec, 7.4.1: plain scalars in flow context, separated
/// by `,`, with quoted ones among them): `command: [redis-server, --requirepass, X]`.
/// Only a key's value is read so: an array in code (`[sshpass, -p, pw]`) holds names.
#[test]
fn a_yaml_flow_sequence_of_plain_words_loses_its_password() {
    for (text, secret, kept) in [
        (
            "        command: [redis-server, --requirepass, Zq9vLm2Kx7Pw]\n",
            "Zq9vLm2Kx7Pw",
            "        command: [redis-server, --requirepass, [REDACTED]]\n",
        ),
        (
            "    command: [sshpass, -p, Tr0ub4dor3w, ssh, h]\n",
            "Tr0ub4dor3w",
            "[sshpass, -p, [REDACTED], ssh, h]",
        ),
        (
            "        args: [--requirepass, Zq9vLm2Kx7Pw]  # from the vault\n",
            "Zq9vLm2Kx7Pw",
            "[REDACTED]]  # from",
        ),
        (
            "  - command: [mysql, -uroot, \"-pWm3Xc8NvB5Lq\"]\n",
            "Wm3Xc8NvB5Lq",
            "[mysql, -uroot, \"-p[REDACTED]\"]",
        ),
        (
            "      test: [CMD, mysqladmin, ping, -uroot, -pWm3Xc8NvB5Lq]\n",
            "Wm3Xc8NvB5Lq",
            "-uroot, -p[REDACTED]]",
        ),
    ] {
        let once = redacted_everywhere(text);
        assert!(!once.contains(secret) && once.contains(kept), "{text}\n=> {once}");
        let mut o = Vec::new();
        filter::run_as(filter::Kind::Config, text.as_bytes(), &mut o)
            .expect("writing to a Vec does not fail");
        assert_eq!(String::from_utf8_lossy(&o), once, "{text}");
    }
    for text in [
        "    command: [docker, run, -p, 8080:80, nginx]\n",
        "    ports: [-p, 5432]\n",
        "args = [sshpass, -p, password_var, ssh, host]\n",
        "x = cmd([mysql, -p, pw])\n",
        "    command: [mkdir, -p, /opt/app]\n",
    ] {
        assert_eq!(redacted_everywhere(text), text);
    }
}

/// A password set in SQL, in each database's documented syntax: PostgreSQL's `CREATE
/// ROLE`/`CREATE USER`/`ALTER ROLE … [WITH] [ENCRYPTED] PASSWORD 'x'`, MySQL's
/// `IDENTIFIED [WITH plugin] BY 'x'` and `SET PASSWORD [FOR user] = 'x'`, Oracle's
/// `IDENTIFIED BY x [REPLACE old]` (a bare word or "quoted"), SQL*Plus's `sqlplus
/// user/password@db`; as typed, inside `psql -c "…"` or `mysql -e "…"`, in a script.
/// Tried as a new user would: every one passed.
#[test]
fn a_password_set_in_sql_is_redacted() {
    for (text, secret, kept) in [
        (
            "CREATE USER app WITH PASSWORD 'S3cretPw9x';\n",
            "S3cretPw9x",
            "CREATE USER app WITH PASSWORD '[REDACTED]';",
        ),
        (
            "psql -c \"ALTER USER app WITH ENCRYPTED PASSWORD 'S3cretPw9x'\"\n",
            "S3cretPw9x",
            "PASSWORD '[REDACTED]'\"",
        ),
        (
            "CREATE ROLE app LOGIN PASSWORD 'S3cretPw9x' VALID UNTIL 'infinity';\n",
            "S3cretPw9x",
            "'[REDACTED]' VALID UNTIL",
        ),
        // A quote in the password is kept after the marker, as in any quoted value.
        ("alter role app with password 'it''s S3cretPw9x';\n", "S3cretPw9x", "password '[REDACTED]"),
        (
            "mysql -e \"CREATE USER 'app'@'%' IDENTIFIED BY 'S3cretPw9x'\"\n",
            "S3cretPw9x",
            "IDENTIFIED BY '[REDACTED]'\"",
        ),
        (
            "ALTER USER 'root'@'localhost' IDENTIFIED WITH mysql_native_password BY 'S3cretPw9x';\n",
            "S3cretPw9x",
            "mysql_native_password BY '[REDACTED]';",
        ),
        (
            "GRANT ALL ON db.* TO 'app'@'%' IDENTIFIED BY \"S3cretPw9x\";\n",
            "S3cretPw9x",
            "BY \"[REDACTED]\";",
        ),
        ("SET PASSWORD FOR 'app'@'%' = 'S3cretPw9x';\n", "S3cretPw9x", "= '[REDACTED]';"),
        ("SET PASSWORD = PASSWORD('S3cretPw9x');\n", "S3cretPw9x", "PASSWORD('[REDACTED]');"),
        ("CREATE USER scott IDENTIFIED BY S3cretPw9x;\n", "S3cretPw9x", "IDENTIFIED BY [REDACTED];"),
        (
            "ALTER USER scott IDENTIFIED BY N3wPw9xyz REPLACE S3cretPw9x;\n",
            "S3cretPw9x",
            "BY [REDACTED] REPLACE [REDACTED];",
        ),
        (
            "sqlplus system/S3cretPw9x@//db:1521/orcl as sysdba\n",
            "S3cretPw9x",
            "sqlplus system/[REDACTED]@//db",
        ),
        ("sqlplus -s scott/S3cretPw9x\n", "S3cretPw9x", "sqlplus -s scott/[REDACTED]\n"),
        // Found by an attack on the rule: MariaDB's `IDENTIFIED VIA … USING PASSWORD('x')`,
        // MySQL's `PASSWORD('x')` function, a quoted plugin name, a backslash-escaped
        // quote, double quotes escaped for the shell, PostgreSQL's `E'…'` and `$$…$$`,
        // a foreign server's `OPTIONS (… password 'x')`, Oracle's other tools.
        (
            "CREATE USER 'app'@'%' IDENTIFIED VIA mysql_native_password USING PASSWORD('S3cretPw9x');\n",
            "S3cretPw9x",
            "USING PASSWORD('[REDACTED]');",
        ),
        (
            "UPDATE mysql.user SET authentication_string=PASSWORD('S3cretPw9x') WHERE User='root';\n",
            "S3cretPw9x",
            "=PASSWORD('[REDACTED]') WHERE",
        ),
        (
            "CREATE USER 'app'@'%' IDENTIFIED WITH 'mysql_native_password' BY 'S3cretPw9x';\n",
            "S3cretPw9x",
            "BY '[REDACTED]';",
        ),
        ("ALTER USER app IDENTIFIED BY 'S3cret\\'Pw9x';\n", "Pw9x", "BY '[REDACTED]"),
        (
            "mysql -uroot -e \"ALTER USER 'root'@'localhost' IDENTIFIED BY \\\"S3cretPw9x\\\";\"\n",
            "S3cretPw9x",
            "IDENTIFIED BY \\\"[REDACTED]\\\";\"",
        ),
        ("ALTER ROLE app PASSWORD E'S3cretPw9x';\n", "S3cretPw9x", "PASSWORD E'[REDACTED]';"),
        ("CREATE USER app PASSWORD $$S3cretPw9x$$;\n", "S3cretPw9x", "PASSWORD $$[REDACTED]$$;"),
        (
            "CREATE USER MAPPING FOR app SERVER s OPTIONS (user 'remote', password 'S3cretPw9x');\n",
            "S3cretPw9x",
            "password '[REDACTED]');",
        ),
        (
            "expdp system/S3cretPw9x@orcl schemas=hr directory=dp\n",
            "S3cretPw9x",
            "expdp system/[REDACTED]@orcl",
        ),
        ("rman target sys/S3cretPw9x@orcl\n", "S3cretPw9x", "rman target sys/[REDACTED]@orcl"),
        // Oracle's database links (the `CREATE DATABASE LINK` synopsis).
        (
            "CREATE DATABASE LINK sales CONNECT TO scott IDENTIFIED BY S3cretPw9x USING 'sales_db';\n",
            "S3cretPw9x",
            "IDENTIFIED BY [REDACTED] USING 'sales_db';",
        ),
        (
            "create shared public database link hq connect to hr identified by \"S3cretPw9x\" authenticated by ops identified by Auth2Pw9x using 'hq';\n",
            "S3cretPw9x",
            "identified by \"[REDACTED]\" authenticated by ops identified by [REDACTED] using",
        ),
        (
            "sqlplus \"sys/S3cretPw9x@orcl as sysdba\"\n",
            "S3cretPw9x",
            "sqlplus \"sys/[REDACTED]@orcl as sysdba\"",
        ),
    ] {
        let once = redacted_everywhere(text);
        assert!(!once.contains(secret) && once.contains(kept), "{text}\n=> {once}");
    }
    // No literal, or a hash: nothing to take. Prose about passwords stays.
    for text in [
        "ALTER USER app WITH PASSWORD NULL;\n",
        "ALTER USER app IDENTIFIED BY RANDOM PASSWORD;\n",
        "CREATE USER 'u'@'%' IDENTIFIED WITH caching_sha2_password AS '$A$005$hash';\n",
        "CREATE USER ops IDENTIFIED EXTERNALLY;\n",
        "ALTER USER app WITH PASSWORD '${DB_PASSWORD}';\n",
        "The user is identified by the token in the header.\n",
        "A user created by the installer is identified by its key.\n",
        "Set the password to something long.\n",
        "sqlplus /nolog\n",
        "Each user is identified by a unique name.\n",
        "hashed = hash_password('S3cretPw9x')\n",
        "sqlplus / as sysdba\n",
    ] {
        assert_eq!(redacted_everywhere(text), text);
    }
}

/// A statement over several lines, as the databases' own documentation and tools write
/// one: the password is on a line of its own, below the `CREATE`/`ALTER` that the
/// one-line reading needs. PostgreSQL's `CREATE ROLE` synopsis and pgAdmin's script (an
/// option a line, `ENCRYPTED PASSWORD 'x'` last), MySQL's `CREATE USER` example
/// (`IDENTIFIED WITH plugin BY 'x'` then `PASSWORD EXPIRE …`), Oracle's (`IDENTIFIED BY
/// x` then `DEFAULT TABLESPACE …`), and a Chef resource's `password 'x'`. Each passed.
#[test]
fn a_password_set_in_sql_over_several_lines_is_redacted() {
    for (text, secret, kept) in [
        (
            "CREATE ROLE app WITH\n  LOGIN\n  NOSUPERUSER\n  INHERIT\n  ENCRYPTED PASSWORD 'S3cretPw9x';\n",
            "S3cretPw9x",
            "  ENCRYPTED PASSWORD '[REDACTED]';\n",
        ),
        ("CREATE USER bob\n  WITH PASSWORD 'S3cretPw9x';\n", "S3cretPw9x", "  WITH PASSWORD '[REDACTED]';\n"),
        (
            "CREATE ROLE app\n    WITH LOGIN CONNECTION LIMIT 5 PASSWORD 'S3cretPw9x'\n    VALID UNTIL '2027-01-01';\n",
            "S3cretPw9x",
            "PASSWORD '[REDACTED]'\n    VALID UNTIL '2027-01-01';",
        ),
        (
            "ALTER ROLE app\n\tLOGIN PASSWORD 'S3cretPw9x' VALID UNTIL 'infinity';\n",
            "S3cretPw9x",
            "\tLOGIN PASSWORD '[REDACTED]' VALID UNTIL 'infinity';",
        ),
        (
            "CREATE USER 'jeffrey'@'localhost'\n  IDENTIFIED WITH caching_sha2_password BY 'S3cretPw9x'\n  PASSWORD EXPIRE INTERVAL 180 DAY\n  FAILED_LOGIN_ATTEMPTS 3 PASSWORD_LOCK_TIME 2;\n",
            "S3cretPw9x",
            "BY '[REDACTED]'\n  PASSWORD EXPIRE INTERVAL 180 DAY\n",
        ),
        (
            "ALTER USER alice\n    identified by \"S3cretPw9x\";\n",
            "S3cretPw9x",
            "    identified by \"[REDACTED]\";\n",
        ),
        (
            "CREATE USER sidney\n    IDENTIFIED BY S3cretPw9x\n    DEFAULT TABLESPACE example\n    QUOTA 10M ON example\n    PASSWORD EXPIRE;\n",
            "S3cretPw9x",
            "    IDENTIFIED BY [REDACTED]\n    DEFAULT TABLESPACE example\n",
        ),
        (
            "ALTER USER sidney\n    IDENTIFIED BY S3cretPw9x DEFAULT TABLESPACE example;\n",
            "S3cretPw9x",
            "IDENTIFIED BY [REDACTED] DEFAULT TABLESPACE",
        ),
        ("IDENTIFIED BY Zq9xLmw2\n", "Zq9xLmw2", "IDENTIFIED BY [REDACTED]\n"),
        (
            "mysql_database_user 'app' do\n  password 'S3cretPw9x'\n  action :create\nend\n",
            "S3cretPw9x",
            "  password '[REDACTED]'\n",
        ),
        (
            "cur.execute(\"\"\"\n    CREATE ROLE app WITH LOGIN\n    PASSWORD 'S3cretPw9x'\n\"\"\")\n",
            "S3cretPw9x",
            "    PASSWORD '[REDACTED]'\n",
        ),
        // Found by an attack on the reading: a diff's removed line (the old password of a
        // rotation), the databases' prompts, a comment or the string's end after the
        // value, a string per line, options with their arguments, `REPLACE`, a database
        // link's `CONNECT TO`, MySQL's second account and second factor.
        (
            "@@ -1,3 +1,3 @@\n CREATE ROLE app WITH\n-  PASSWORD 'S3cretPw9x';\n+  PASSWORD 'Newer1Pw9x';\n",
            "S3cretPw9x",
            "-  PASSWORD '[REDACTED]';\n+  PASSWORD '[REDACTED]';\n",
        ),
        ("-    IDENTIFIED BY S3cretPw9x\n", "S3cretPw9x", "-    IDENTIFIED BY [REDACTED]\n"),
        (
            "app=# CREATE ROLE app WITH LOGIN\napp-#   PASSWORD 'S3cretPw9x';\n",
            "S3cretPw9x",
            "app-#   PASSWORD '[REDACTED]';",
        ),
        (
            "mysql> CREATE USER 'app'@'%'\n    -> IDENTIFIED BY 'S3cretPw9x';\n",
            "S3cretPw9x",
            "    -> IDENTIFIED BY '[REDACTED]';",
        ),
        (
            "SQL> CREATE USER app\n  2  IDENTIFIED BY S3cretPw9x\n  3  DEFAULT TABLESPACE users;\n",
            "S3cretPw9x",
            "  2  IDENTIFIED BY [REDACTED]\n",
        ),
        ("  PASSWORD 'S3cretPw9x' -- rotate quarterly\n", "S3cretPw9x", "'[REDACTED]' -- rotate"),
        ("  PASSWORD 'S3cretPw9x' /* app */;\n", "S3cretPw9x", "'[REDACTED]' /* app */;"),
        ("  IDENTIFIED BY S3cretPw9x -- temp\n", "S3cretPw9x", "BY [REDACTED] -- temp"),
        ("  password 'S3cretPw9x' # from vault later\n", "S3cretPw9x", "'[REDACTED]' # from"),
        ("    PASSWORD 'S3cretPw9x'\"\"\")\n", "S3cretPw9x", "'[REDACTED]'\"\"\")"),
        ("\tPASSWORD 'S3cretPw9x'`)\n", "S3cretPw9x", "'[REDACTED]'`)"),
        ("  PASSWORD 'S3cretPw9x'</sql>\n", "S3cretPw9x", "'[REDACTED]'</sql>"),
        ("    \"PASSWORD 'S3cretPw9x'\"\n", "S3cretPw9x", "\"PASSWORD '[REDACTED]'\""),
        ("    \"PASSWORD 'S3cretPw9x' \" +\n", "S3cretPw9x", "'[REDACTED]' \" +"),
        ("    \"IDENTIFIED BY 'S3cretPw9x'\"\n", "S3cretPw9x", "BY '[REDACTED]'\""),
        ("  PASSWORD 'S3cretPw9x' IN GROUP staff;\n", "S3cretPw9x", "'[REDACTED]' IN GROUP"),
        (
            "  VALID UNTIL '2027-01-01' PASSWORD 'S3cretPw9x'\n",
            "S3cretPw9x",
            "'2027-01-01' PASSWORD '[REDACTED]'",
        ),
        ("  IN ROLE readers PASSWORD 'S3cretPw9x'\n", "S3cretPw9x", "readers PASSWORD '[REDACTED]'"),
        ("  SYSID 100 PASSWORD 'S3cretPw9x'\n", "S3cretPw9x", "100 PASSWORD '[REDACTED]'"),
        (
            "  IDENTIFIED BY 'Newer1Pw9x' REPLACE 'S3cretPw9x';\n",
            "S3cretPw9x",
            "BY '[REDACTED]' REPLACE '[REDACTED]';",
        ),
        ("  IDENTIFIED BY Newer1Pw9x REPLACE S3cretPw9x;\n", "S3cretPw9x", "REPLACE [REDACTED];"),
        (
            "CREATE DATABASE LINK remote\n  CONNECT TO scott IDENTIFIED BY S3cretPw9x\n  USING 'remote';\n",
            "S3cretPw9x",
            "  CONNECT TO scott IDENTIFIED BY [REDACTED]\n",
        ),
        ("  'app'@'%' IDENTIFIED BY 'S3cretPw9x';\n", "S3cretPw9x", "'app'@'%' IDENTIFIED BY '[REDACTED]';"),
        (
            "  ADD 2 FACTOR IDENTIFIED WITH authentication_ldap_sasl BY 'S3cretPw9x';\n",
            "S3cretPw9x",
            "BY '[REDACTED]';",
        ),
        (
            "  IDENTIFIED BY S3cretPw9x default tablespace users;\n",
            "S3cretPw9x",
            "BY [REDACTED] default tablespace",
        ),
    ] {
        let once = redacted_everywhere(text);
        assert!(!once.contains(secret) && once.contains(kept), "{text}\n=> {once}");
        let numbered = cat_n(text);
        let once = redacted_everywhere(&numbered);
        assert!(!once.contains(secret), "{numbered}\n=> {once}");
    }
    // No literal, a hash, a reference, or prose that wraps at "identified by".
    for text in [
        "CREATE ROLE app WITH\n  LOGIN\n  PASSWORD NULL;\n",
        "CREATE USER 'u'@'%'\n  IDENTIFIED BY RANDOM PASSWORD\n  PASSWORD EXPIRE;\n",
        "CREATE USER 'u'@'%'\n  IDENTIFIED WITH caching_sha2_password AS '$A$005$hash';\n",
        "CREATE USER ops\n  IDENTIFIED EXTERNALLY;\n",
        "CREATE USER ops\n  IDENTIFIED GLOBALLY AS 'CN=ops,O=example';\n",
        "ALTER ROLE app WITH\n  PASSWORD '%s';\n",
        "ALTER ROLE app WITH\n  PASSWORD '{password}';\n",
        "The change was reviewed and\nidentified by the team lead.\n",
        "Each caller is\nidentified by name;\n",
        "password 'changeme' is the default\n",
        "  PASSWORD EXPIRE INTERVAL 90 DAY;\n",
        // Found by the attack: prose, labels, names, references and code joined in.
        "identified by 'X-Request-Id', which the proxy sets.\n",
        "    identified by \"projects/my-project/locations/us\", and the\n",
        "Users authenticated by SAML identified by NameID are mapped.\n",
        "Tokens authenticated by the gateway are identified by clientId42 in logs.\n",
        "  PASSWORD \"Enter your password:\"\n",
        "  password 'Mot de passe'\n",
        "  PASSWORD \"password-input\",\n",
        "  password \"app.db.password\"\n",
        "    IDENTIFIED BY TraceId\n",
        "  IDENTIFIED BY RoleId OR UserId\n",
        "CREATE USER app IDENTIFIED BY &app_password;\n",
        "  IDENTIFIED BY &&APP_PW\n",
        "  IDENTIFIED BY :new_password;\n",
        "  PASSWORD '\" + password + \"'\n",
        "  password \"#{node['app']['db_password']}\"\n",
        "  password \"Passwort\";\n",
        "  password \"ENV['DB_PASSWORD']\"\n",
    ] {
        assert_eq!(redacted_everywhere(text), text);
    }
}

/// Redis and MongoDB as their documentation writes them and as their shells show them:
/// `AUTH [user] pw`, `CONFIG SET requirepass pw`, a `redis.conf`'s `requirepass pw`,
/// `db.createUser({user: …, pwd: "pw"})`, `db.auth("u", "pw")`. Found by an attack:
/// every one passed (`pwd` is also the shell's working directory, so it was no name).
#[test]
fn redis_and_mongodb_passwords_are_redacted() {
    for (text, secret, kept) in [
        ("127.0.0.1:6379> AUTH S3cretPw9x\n", "S3cretPw9x", "127.0.0.1:6379> AUTH [REDACTED]\n"),
        ("redis-cli -h db AUTH default S3cretPw9x\n", "S3cretPw9x", "AUTH default [REDACTED]\n"),
        ("127.0.0.1:6379> CONFIG SET requirepass S3cretPw9x\n", "S3cretPw9x", "requirepass [REDACTED]\n"),
        ("requirepass S3cretPw9x\n", "S3cretPw9x", "requirepass [REDACTED]\n"),
        ("masterauth \"S3cretPw9x\"\n", "S3cretPw9x", "masterauth \"[REDACTED]\"\n"),
        (
            "db.createUser({user: \"app\", pwd: \"S3cretPw9x\", roles: [\"readWrite\"]})\n",
            "S3cretPw9x",
            "pwd: \"[REDACTED]\", roles",
        ),
        ("db.auth(\"app\", \"S3cretPw9x\")\n", "S3cretPw9x", "db.auth(\"app\", \"[REDACTED]\")"),
        ("db.changeUserPassword(\"app\", \"S3cretPw9x\")\n", "S3cretPw9x", "(\"app\", \"[REDACTED]\")"),
    ] {
        let once = redacted_everywhere(text);
        assert!(!once.contains(secret) && once.contains(kept), "{text}\n=> {once}");
    }
    for text in [
        "# requirepass foobared\n",
        "# requirepass is unset: anyone can connect\n",
        "AUTH failed: WRONGPASS invalid username-password pair\n",
        "pwd: /home/user/project\n",
        "db.createUser({user: \"app\", pwd: passwordPrompt(), roles: []})\n",
        "OAUTH token refreshed\n",
    ] {
        assert_eq!(redacted_everywhere(text), text);
    }
}

/// The diff shapes of a changed continued command that the last reading still missed,
/// written from `diff -u`'s and git's output: the value alone on its line after the flag
/// on a context line (a removed line `-  X` is no lone `-` argument), the marker git
/// writes after a file's last line when it has no newline, more removed lines than
/// added, and a changed line that the command goes on after.
#[test]
fn every_side_of_a_changed_continued_command_loses_its_password() {
    for (text, kept) in [
        (" sshpass -p \\\n-  OLDs3cr3tAAA ssh h\n+  NEWs3cr3tBBB ssh h\n", &["-  ", "+  ", " ssh h"][..]),
        (
            " mysql -u root \\\n-  -pOLDs3cr3tAAA\n\\ No newline at end of file\n+  -pNEWs3cr3tBBB\n\\ No newline at end of file\n",
            &["-  -p", "+  -p", "\\ No newline at end of file\n+"][..],
        ),
        (
            " mysql -u root \\\n-  -pOLDs3cr3tAAA \\\n-  -h old.example\n+  -pNEWs3cr3tBBB\n echo done\n",
            &["-  -h old.example", "+  -p", " echo done"][..],
        ),
        (
            "@@ -1,3 +1,3 @@\n sshpass -p \\\n-  OLDs3cr3tAAA \\\n+  NEWs3cr3tBBB \\\n   ssh h\n",
            &["-  ", "+  ", "   ssh h"][..],
        ),
        (
            " mysql -u root \\\n-  -pOLDs3cr3tAAA \\\n-  -h old \\\n+  -pNEWs3cr3tBBB \\\n+  -h new \\\n   --verbose\n",
            &["-  -h old", "+  -h new", "   --verbose"][..],
        ),
        // Found by an attack: more removed lines than added, the extra ones other
        // commands of the old side, and the marker after a continued removed line.
        (" sshpass -p \\\n-  OLDs3cr3tAAA ssh h\n-echo done\n+  NEWs3cr3tBBB ssh h\n", &["-echo done"][..]),
        (
            " mysql -u root \\\n-  -pOLDs3cr3tAAA -e x\n-rm -f /tmp/a\n-\n-# old\n-echo done\n+  -pNEWs3cr3tBBB -e x\n+echo ok\n",
            &["-rm -f /tmp/a", "+echo ok"][..],
        ),
        (
            " sshpass -p \\\n-  OLDs3cr3tAAA \\\n\\ No newline at end of file\n+  NEWs3cr3tBBB ssh h\n",
            &["\\ No newline at end of file\n"][..],
        ),
    ] {
        let once = redacted_everywhere(text);
        assert!(!once.contains("OLDs3cr3tAAA") && !once.contains("NEWs3cr3tBBB"), "{text}\n=> {once}");
        assert_eq!(once.lines().count(), text.lines().count(), "{once}");
        for k in kept {
            assert!(once.contains(k), "{k:?} lost: {once}");
        }
    }
    // The same as Claude Code's `structuredPatch`, a line a JSON string.
    let record = r#"{"toolUseResult":{"structuredPatch":[{"lines":[" sshpass -p \\","-  OLDs3cr3tAAA \\","+  NEWs3cr3tBBB \\","   ssh h"]}]}}"#;
    let out = redact_json_line(record, &mut Report::default()).into_owned();
    assert!(!out.contains("OLDs3cr3tAAA") && !out.contains("NEWs3cr3tBBB"), "{out}");
    serde_json::from_str::<serde_json::Value>(&out).expect(&out);
    // A continuation line that starts with an option is still the command's option.
    let plain = "mysql -u root \\\n-pWm3Xc8NvB5Lq\n";
    assert!(!redacted_everywhere(plain).contains("Wm3Xc8NvB5Lq"));
    // An option after a flag whose name holds "auth" is the next option, not its value,
    // in a diff as on one line (nginx's build, found by an attack on real Dockerfiles).
    for text in [
        " ./configure \\\n-  --with-http_auth_request_module \\\n-  --with-mail_ssl_module=dynamic \\\n+  --with-stream=dynamic\n",
        "./configure --with-http_auth_request_module --with-mail_ssl_module=dynamic\n",
        "x --password --log-level=debug\n",
    ] {
        assert_eq!(redacted_everywhere(text), text);
    }
}

/// Commands continued over lines as a terminal and zsh's history file show them, tried
/// as a stranger would: bash's `> ` continuation prompt in pasted scrollback (it read as
/// a redirection, and the option after it as a file name), and zsh's history, which
/// writes a continued line's `\` before its own `\` at the line's end (the next line's
/// first blank read as escaped).
#[test]
fn continuations_as_scrollback_and_zsh_history_show_them() {
    let cases = [
        (
            "alice@box:~/proj$ mysql -h db \\\n> -u root \\\n> -pWm3Xc8NvB5Lq\n",
            "Wm3Xc8NvB5Lq",
            "> -p[REDACTED]\n",
        ),
        (
            "alice@box:~/proj$ sshpass -p \\\n> Hn6TzP2kRw9YdQa3 ssh host\n",
            "Hn6TzP2kRw9YdQa3",
            "> [REDACTED] ssh host\n",
        ),
        (
            "alice@box:~/proj$ curl https://h \\\n>   -u bob:Vn4kTq8RzLp2WsQe\n",
            "Vn4kTq8RzLp2WsQe",
            ">   -u bob:[REDACTED]\n",
        ),
        // The shells' default prompts, as a real zsh and bash in tmux show them.
        ("box# sshpass \\\n> -p Qz7RkLm2Vx9Tb ssh host\n", "Qz7RkLm2Vx9Tb", "> -p [REDACTED] ssh host\n"),
        (
            "bash-5.2$ sshpass -p \\\n>   Hn6TzP2kRw9YdQa3 ssh host\n",
            "Hn6TzP2kRw9YdQa3",
            ">   [REDACTED] ssh host\n",
        ),
        (
            ": 1700000000:0;sshpass \\\\\n-p Qz7RkLm2Vx9Tb ssh host\n",
            "Qz7RkLm2Vx9Tb",
            "-p [REDACTED] ssh host\n",
        ),
        (
            ": 1700000000:0;ngrok authtoken \\\\\n  2Kq8pLmN3vR7tKx2WbY9cHd4FzT5s\n",
            "2Kq8pLmN3vR7tK",
            "  [REDACTED]\n",
        ),
    ];
    for (text, secret, want) in cases {
        let once = redacted_everywhere(text);
        assert!(!once.contains(secret) && once.ends_with(want), "{text:?} -> {once:?}");
    }
    // An unquoted URL's `&page_token=…` is a word of its own to a shell, and still
    // only a pagination parameter.
    let url = "curl https://h/search?q=rust&page_token=CiAKGjBpNDd2Nmp2Zml2cXRwYjBpOXA1\n";
    assert_eq!(redact(url), url);
    // A `>` that starts a line of its own is still a redirection.
    assert_eq!(redact("> -p Hn6TzP2kRw9YdQa3\n"), "> -p Hn6TzP2kRw9YdQa3\n");
}

/// [`redacted_everywhere`], and the streaming filter fed a few bytes at a time, so that a
/// here-document or a continued command is also followed across the reader's buffers.
fn redacted_in_pieces(text: &str) -> String {
    let once = redacted_everywhere(text);
    for capacity in [5, 16, 64] {
        let mut o = Vec::new();
        filter::run(std::io::BufReader::with_capacity(capacity, text.as_bytes()), &mut o).unwrap();
        assert_eq!(String::from_utf8(o).unwrap(), once, "read {capacity} bytes at a time");
    }
    once
}

/// Here-documents (bash manual, "Here Documents"; POSIX `sh`, 2.7.4) fed to a command
/// that reads a secret on standard input, or to one whose output goes into a key or
/// credential file: every body line is the secret, and everything else stays as it was.
/// Tried as a new user would: the delimiter quoted or not, `<<-` with tabs, no space
/// before it, CRLF line ends, in a numbered `Read` view, as bash and zsh write them to
/// their history files and show them in a terminal.
#[test]
fn here_documents_fed_to_a_reader_or_into_a_key_file_lose_their_body() {
    let cases: &[(&str, &str)] = &[
        (
            "docker login --username u --password-stdin <<EOF\ns3cr3tP4ss\nEOF\necho after\n",
            "docker login --username u --password-stdin <<EOF\n[REDACTED]\nEOF\necho after\n",
        ),
        (
            "cat > ~/.pgpass <<'EOF'\ndb.example.com:5432:app:alice:Hunter2xyz\n*:*:*:bob:An0ther\\:pw\nEOF\n",
            "cat > ~/.pgpass <<'EOF'\ndb.example.com:5432:app:alice:[REDACTED]\n*:*:*:bob:[REDACTED]\nEOF\n",
        ),
        (
            "sudo -S apt-get update <<-EOF\n\tHunter2xyz\n\tEOF\nls\n",
            "sudo -S apt-get update <<-EOF\n\t[REDACTED]\n\tEOF\nls\n",
        ),
        (
            "gh auth login --with-token <<\"END\"\nQk7mW2xR9pLs4TnB8vYc\nEND\n",
            "gh auth login --with-token <<\"END\"\n[REDACTED]\nEND\n",
        ),
        (
            "tee ~/.vault-token <<EOF\nhvs.Qk7mW2xR9pLs4TnB8vYc\nEOF\n",
            "tee ~/.vault-token <<EOF\n[REDACTED]\nEOF\n",
        ),
        (
            "cat <<EOF > ~/.netrc\nmachine api.example.com\n  login bob\n  password Qk7mW2xR9p\nEOF\n",
            "cat <<EOF > ~/.netrc\nmachine api.example.com\n  login bob\n  password [REDACTED]\nEOF\n",
        ),
        (
            "sudo chpasswd <<EOF\nalice:N3wPass!\nbob:0th3rPass\nEOF\n",
            "sudo chpasswd <<EOF\nalice:[REDACTED]\nbob:[REDACTED]\nEOF\n",
        ),
        (
            "cat <<EOF | docker login -u bob --password-stdin registry.example.com\nPa55word!\nEOF\n",
            "cat <<EOF | docker login -u bob --password-stdin registry.example.com\n[REDACTED]\nEOF\n",
        ),
        // No space before the delimiter, an escaped one, CRLF line ends.
        ("kinit alice<<EOF\nkrbPass1\nEOF\n", "kinit alice<<EOF\n[REDACTED]\nEOF\n"),
        ("kinit alice <<\\EOF\nkrbPass1\nEOF\n", "kinit alice <<\\EOF\n[REDACTED]\nEOF\n"),
        (
            "docker login --password-stdin <<EOF\r\ns3cr3tP4ss\r\nEOF\r\necho after\r\n",
            "docker login --password-stdin <<EOF\r\n[REDACTED]\r\nEOF\r\necho after\r\n",
        ),
        // Two on one line: the first body is harmless, and comes first.
        (
            "cat <<A; docker login --password-stdin <<B\nkeep me\nA\ns3cr3tP4ss\nB\n",
            "cat <<A; docker login --password-stdin <<B\nkeep me\nA\n[REDACTED]\nB\n",
        ),
        // A file of `name = value` lines loses the values.
        (
            "cat > ~/.aws/credentials <<EOF\n[default]\nregion = eu-west-1\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ9Lm2Xv8Tk1\nEOF\n",
            "cat > ~/.aws/credentials <<EOF\n[default]\nregion = [REDACTED]\naws_secret_access_key = [REDACTED]\nEOF\n",
        ),
        // A private key written into its file: the PEM rule keeps the armour.
        (
            "cat > ~/.ssh/id_ed25519 <<'EOF'\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n-----END OPENSSH PRIVATE KEY-----\nEOF\n",
            "cat > ~/.ssh/id_ed25519 <<'EOF'\n-----BEGIN OPENSSH PRIVATE KEY-----\n[REDACTED]\n-----END OPENSSH PRIVATE KEY-----\nEOF\n",
        ),
        // Claude Code's `Read` view of a script.
        (
            "     3\u{2192}docker login --password-stdin <<EOF\n     4\u{2192}s3cr3tP4ss\n     5\u{2192}EOF\n     6\u{2192}echo after\n",
            "     3\u{2192}docker login --password-stdin <<EOF\n     4\u{2192}[REDACTED]\n     5\u{2192}EOF\n     6\u{2192}echo after\n",
        ),
        // A unified diff of a script: the new password, the old one, the context.
        (
            "@@ -1,4 +1,4 @@\n docker login --password-stdin <<EOF\n-0ldPassw0rd\n+N3wPassw0rd\n EOF\n echo done\n",
            "@@ -1,4 +1,4 @@\n docker login --password-stdin <<EOF\n-[REDACTED]\n+[REDACTED]\n EOF\n echo done\n",
        ),
        // bash's history file: the body on lines of its own, a blank line after.
        (
            "docker login --username u --password-stdin <<EOF\ns3cr3tP4ss\nEOF\n\nls\n",
            "docker login --username u --password-stdin <<EOF\n[REDACTED]\nEOF\n\nls\n",
        ),
        // zsh's history file ends each line of a command but its last with `\`.
        (
            ": 1700000000:0;docker login --username u --password-stdin <<EOF\\\ns3cr3tP4ss\\\nEOF\n: 1700000001:0;ls\n",
            ": 1700000000:0;docker login --username u --password-stdin <<EOF\\\n[REDACTED]\\\nEOF\n: 1700000001:0;ls\n",
        ),
        (
            ": 1700000000:0;\tsudo -S true <<-END\\\n\tHunter2xyz\\\n\tEND\n",
            ": 1700000000:0;\tsudo -S true <<-END\\\n\t[REDACTED]\\\n\tEND\n",
        ),
        // The terminal: bash's `> ` and zsh's `heredoc> ` before each body line.
        (
            "bash-5.2$ docker login --username u --password-stdin <<EOF\n> s3cr3tP4ss\n> EOF\nbash-5.2$ ls\n",
            "bash-5.2$ docker login --username u --password-stdin <<EOF\n> [REDACTED]\n> EOF\nbash-5.2$ ls\n",
        ),
        (
            "box% cat > ~/.pgpass <<'EOF'\nheredoc> db.example.com:5432:app:alice:Hunter2xyz\nheredoc> EOF\nbox% ls\n",
            "box% cat > ~/.pgpass <<'EOF'\nheredoc> db.example.com:5432:app:alice:[REDACTED]\nheredoc> EOF\nbox% ls\n",
        ),
    ];
    for (text, want) in cases {
        assert_eq!(redacted_in_pieces(text), *want, "{text:?}");
    }
    // Inside a transcript record's string, where the agent's `Bash` call holds it.
    let line = r#"{"type":"tool_use","input":{"command":"docker login -u bob --password-stdin <<'EOF'\ns3cr3tP4ss\nEOF\necho ok"}}"#;
    let out = redact_json_line(line, &mut Report::default());
    assert_eq!(
        out,
        r#"{"type":"tool_use","input":{"command":"docker login -u bob --password-stdin <<'EOF'\n[REDACTED]\nEOF\necho ok"}}"#
    );
}

/// Real scripts are full of here-documents that hold no secret: fed to `cat`, `python`,
/// `git commit`, a reader of a secret named only in them. Each stays byte for byte, and a
/// body that reads a variable (`$PASSWORD`) holds no secret either.
#[test]
fn harmless_here_documents_are_left_alone() {
    for text in [
        "cat <<EOF > README.md\n# Setup\nRun the installer, then log in.\nEOF\n",
        "python - <<'PY'\nimport getpass\nif not password:\n    print('no password given')\nPY\n",
        "git commit -F - <<EOF\nfix: read the token from the keyring\n\nThe password prompt no longer shows.\nEOF\n",
        "docker login --username u --password-stdin <<EOF\n$REGISTRY_PASSWORD\nEOF\n",
        "kubectl create secret generic app --from-file=./password.txt <<EOF\nnot read\nEOF\n",
        "cat <<EOF\nsudo -S is how the script logs in\nEOF\nprintf 'done\\n'\n",
        // `<<` in code is a shift, not a here-document.
        "    mask = token << 2\n    value\n",
    ] {
        assert_eq!(redacted_in_pieces(text), text);
    }
}

/// A here-document whose delimiter never comes (a cut file, prose that names one) ends
/// after a bound, so the rest of the file is read as before; a delimiter line with
/// trailing blanks is no delimiter to bash, so the body goes on past it.
#[test]
fn a_here_document_ends_at_its_delimiter_or_after_a_bound() {
    let text = "docker login --password-stdin <<EOF\ns3cr3tP4ss\nEOF \nMore9Secret\nEOF\nls\n";
    assert_eq!(
        redacted_in_pieces(text),
        "docker login --password-stdin <<EOF\n[REDACTED]\nEOF \n[REDACTED]\nEOF\nls\n"
    );
    // In a terminal, a body cut short (Ctrl-C) is followed by a prompt, not by `> `.
    let text = "bash-5.2$ docker login --password-stdin <<EOF\n> s3cr3tP4ss\n> ^C\nbash-5.2$ cat notes.txt\nrelease notes for 2.0\n";
    assert_eq!(
        redacted_in_pieces(text),
        "bash-5.2$ docker login --password-stdin <<EOF\n> [REDACTED]\n> [REDACTED]\nbash-5.2$ cat notes.txt\nrelease notes for 2.0\n"
    );
    let tail: String = (0..300).map(|i| format!("line {i} of the file\n")).collect();
    let text = format!("docker login --password-stdin <<EOF\n{tail}");
    let once = redacted_in_pieces(&text);
    let kept = once.lines().filter(|l| l.starts_with("line ")).count();
    assert!(kept > 200 && once.ends_with("line 299 of the file\n"), "{once}");
}

/// What a body line is read as depends on the lines before it (a PEM armour, a line
/// continued with `\`); reading it after the rules have redacted some of it must find
/// nothing more. Found by feeding random shell tokens to the here-document paths.
#[test]
fn here_document_bodies_are_redacted_in_one_pass() {
    for text in [
        "EOF\\ << heredoc> ~/.pgpass \n+ -----BEGIN RSA PRIVATE KEY-----\na:b:c:d:pw\\:x \n",
        ") chpasswd<<- #\nmachine h password p-----BEGIN RSA PRIVATE KEY----- a:b:c:d:pw\\:x# \n",
        "<<machine h password ptee : heredoc> id_rsa \n|cat > -----BEGIN RSA PRIVATE KEY-----lsdocker login --password-stdin -----BEGIN RSA PRIVATE KEY----- \n: 'EOF' ) &&\n",
        "heredoc>  id_rsa\t~/.netrc \\\\\n \r<< \r ls <<<\nchpasswd + # cat > -----BEGIN RSA PRIVATE KEY----- -----BEGIN RSA PRIVATE KEY-----\n  cat > \t \\\\ printf %s \n",
    ] {
        redacted_in_pieces(text);
    }
}

/// `tee` writes its standard input into each file it is given, as `>` does: what is
/// piped into it is the file's content (`echo X | tee ~/.vault-token`).
#[test]
fn text_piped_into_tee_writing_a_key_file_is_redacted() {
    for (text, want) in [
        ("echo 'VaultTok3n' | tee ~/.vault-token\n", "echo '[REDACTED]' | tee ~/.vault-token\n"),
        (
            "printf '%s' PgPass99 | sudo tee /root/.pgpass >/dev/null\n",
            "printf '%s' [REDACTED] | sudo tee /root/.pgpass >/dev/null\n",
        ),
        (
            "echo 'machine h login me password Qk7mW2xR' | tee -a ~/.netrc\n",
            "echo '[REDACTED]' | tee -a ~/.netrc\n",
        ),
        (
            "echo hunter2xyz | sudo tee -a /etc/app/api_key\n",
            "echo [REDACTED] | sudo tee -a /etc/app/api_key\n",
        ),
    ] {
        assert_eq!(redacted_in_pieces(text), want, "{text:?}");
    }
    for text in ["echo hello | sudo tee /etc/x\n", "echo 'ok' | tee -a build.log ~/notes.txt\n"] {
        assert_eq!(redacted_in_pieces(text), text);
    }
}

/// A continued command is carried into its next line whatever its first line holds:
/// `echo X | \` has no keyword, and `sudo -S` on the next line reads X.
#[test]
fn a_secret_piped_from_a_line_without_a_keyword_into_a_continued_reader_is_redacted() {
    for (text, want) in [
        (
            "echo 'Hunter2xyz' | \\\n  sudo -S apt-get update\n",
            "echo '[REDACTED]' | \\\n  sudo -S apt-get update\n",
        ),
        (
            "ls\necho 'Hunter2xyz' | \\\r\n  sudo -S apt-get update\r\nls\n",
            "ls\necho '[REDACTED]' | \\\r\n  sudo -S apt-get update\r\nls\n",
        ),
        (
            "printf '%s\\n' krbPass1 \\\n  | kinit alice@EXAMPLE.COM\n",
            "printf '%s\\n' [REDACTED] \\\n  | kinit alice@EXAMPLE.COM\n",
        ),
        // zsh's history file and bash's continuation prompt.
        (
            ": 1700000000:0;echo 'Hunter2xyz' | \\\\\n  sudo -S apt-get update\n",
            ": 1700000000:0;echo '[REDACTED]' | \\\\\n  sudo -S apt-get update\n",
        ),
        (
            "bash-5.2$ echo 'Hunter2xyz' | \\\n>   sudo -S apt-get update\n",
            "bash-5.2$ echo '[REDACTED]' | \\\n>   sudo -S apt-get update\n",
        ),
        (
            "box% echo 'Hunter2xyz' | \\\npipe>   sudo -S apt-get update\n",
            "box% echo '[REDACTED]' | \\\npipe>   sudo -S apt-get update\n",
        ),
    ] {
        assert_eq!(redacted_in_pieces(text), want, "{text:?}");
    }
    // Inside a key file's body, a line continued with `\` and the one after it.
    let text = "cat > ~/.netrc <<EOF\nmachine h \\\nlogin u password Qk7mW2xR9p\nEOF\n";
    assert_eq!(
        redacted_in_pieces(text),
        "cat > ~/.netrc <<EOF\nmachine h \\\nlogin u password [REDACTED]\nEOF\n"
    );
    // A line of nothing but a backslash carries no command: the lines stay in order.
    let text = "\\\nchpasswd \\ )\nls\n";
    assert_eq!(redacted_in_pieces(text), text);
    let harmless = "./configure \\\n  --prefix=/usr \\\n  --with-ssl\nmake\n";
    assert_eq!(redacted_in_pieces(harmless), harmless);
}

/// JSON written inside a double-quoted shell word has its quotes escaped
/// (`curl -d "{\"password\":\"…\"}"`, common in an agent's `Bash` calls); its pairs were
/// only seen in the single-quoted form.
#[test]
fn json_in_a_double_quoted_word_is_read_as_json() {
    for (text, secret) in [
        (r#"curl -d "{\"username\":\"bob\",\"password\":\"Hn6TzP2kRw9YdQa3\"}" https://h/login"#, "Hn6TzP2k"),
        (r#"curl -d "{\"api_key\":\"Kq8pLmN3vR7tKx2WbY9cH\"}" https://h"#, "Kq8pLmN3"),
        (r#"wget --post-data="{\"password\":\"Hn6TzP2kRw9YdQa3\"}" https://h"#, "Hn6TzP2k"),
    ] {
        let once = redact(text).into_owned();
        assert!(!once.contains(secret), "{text:?} -> {once:?}");
        assert!(once.contains(r#":\"[REDACTED]\""#), "{once}");
        assert!(matches!(redact(&once), Cow::Borrowed(_)), "{once:?}");
    }
    let harmless = r#"echo "{\"name\":\"bob\",\"count\":3,\"token_count\":\"12\"}""#;
    assert_eq!(redact(harmless), harmless);
}

/// A token after an escape that stands for a separator (`\n` in serialised JSON or a
/// log line, `%20` in a URL) has a letter or a digit before it, and the patterns' `\b`
/// did not hold there: found by a stranger's reading of nested tool output.
#[test]
fn a_token_after_an_escaped_separator_is_found() {
    for (text, secret) in [
        (r#"log: "resp\nghp_Kq8pLmN3vR7tKx2WbY9cHd4FzT5sQw1Xe0uV""#, "ghp_Kq8p"),
        (r#"print("line\tAKIAQ3ZR7VXN2KLM4TPB")"#, "AKIAQ3ZR"),
        ("https://h/cb?msg=token%20ghp_Kq8pLmN3vR7tKx2WbY9cHd4FzT5sQw1Xe0uV", "ghp_Kq8p"),
        ("Authorization%3A%20Bearer%20ghp_Kq8pLmN3vR7tKx2WbY9cHd4FzT5sQw1Xe0uV", "ghp_Kq8p"),
    ] {
        let once = redact(text).into_owned();
        assert!(!once.contains(secret), "{text:?} -> {once:?}");
        assert!(matches!(redact(&once), Cow::Borrowed(_)), "{once:?}");
    }
    let line = r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"x","content":"{\"stdout\": \"ok\\nAKIAQ3ZR7VXN2KLM4TPB\\nghp_Kq8pLmN3vR7tKx2WbY9cHd4FzT5sQw1Xe0uV\"}"}]}}"#;
    let out = redact_json_line(line, &mut Report::default()).into_owned();
    assert!(!out.contains("AKIAQ3ZR") && !out.contains("ghp_Kq8p"), "{out}");
    assert!(out.contains(r#"\"ok\\n[REDACTED]\\n[REDACTED]\"}"#), "{out}");
    serde_json::from_str::<serde_json::Value>(&out).unwrap();
    // Inside a word the escape is no separator: `%20ghp_` needs the token's own shape.
    assert_eq!(redact("sha=deadbeef\\nghp_short"), "sha=deadbeef\\nghp_short");
}

/// A redaction that changes how the rest of its line reads (here a token cut short
/// leaves a URL's password where the URL rule can see it) is followed by another
/// reading of the line, so the first pass leaves nothing for a second one. Found by
/// the property test with another seed.
#[test]
fn a_redacted_line_is_read_again_until_it_stands() {
    let text = "set -gx TFE_TOKEN j313ig2VM0UI5i.atlasv1.4Q97D5MMYYktXtvxFGVkj9kShxcjxmuQFJnGkV4ijvM1bpD71-SAgpuYXkhArPYzrC_stgres://postgres:violetWalnut69@pg.example.com:5432/a";
    let mut report = Report::default();
    let once = redact_report(text, &mut report).into_owned();
    assert!(!once.contains("violetWalnut69") && !once.contains("4Q97D5MMYY"), "{once}");
    assert_eq!(report.lines, 1, "{report:?}");
    assert!(report.values >= 2, "{report:?}");
    assert!(matches!(redact(&once), Cow::Borrowed(_)), "{once:?} -> {:?}", redact(&once));
}

/// The tree-building reading of a record that the in-place walk replaced: parse the line,
/// redact every key and string as text and a string value also by its key, count.
fn redact_json_tree(line: &str) -> Option<(serde_json::Value, u64)> {
    use serde_json::Value;
    fn walk(v: &mut Value, r: &mut Report) {
        match v {
            Value::String(s) => {
                if let Cow::Owned(new) = redact_report(s, r) {
                    *s = new;
                }
            }
            Value::Array(a) => a.iter_mut().for_each(|x| walk(x, r)),
            Value::Object(o) => {
                for (k, mut x) in std::mem::take(o) {
                    let class = value::name_class(k.as_bytes(), value::Form::Colon);
                    match (&mut x, class) {
                        (Value::String(s), Some(c))
                            if !["signature", "sig"].contains(&k.as_str())
                                && value::should_redact(c, s.as_bytes()) =>
                        {
                            *s = REDACTED.to_string();
                            r.count("kv");
                        }
                        _ => walk(&mut x, r),
                    }
                    o.insert(redact_report(&k, r).into_owned(), x);
                }
            }
            _ => {}
        }
    }
    let mut v = serde_json::from_str(line).ok()?;
    let mut r = Report::default();
    walk(&mut v, &mut r);
    Some((v, r.values))
}

/// Records of the shapes transcripts have, around every corpus line: plain and escaped
/// strings, nesting, arrays, the line as a key and as the value of a secret's name.
fn corpus_records() -> Vec<String> {
    let lines: Vec<String> = include_str!("../../fixtures/redaction/corpus.jsonl")
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["line"].as_str().unwrap().to_string())
        .collect();
    let mut out = Vec::new();
    for (i, c) in lines.iter().enumerate() {
        let next = &lines[(i + 1) % lines.len()];
        let records = [
            serde_json::json!({"type": "user", "sessionId": "0b6c", "message": {"role": "user", "content": c}}),
            serde_json::json!({"toolUseResult": {"stdout": format!("{c}\n{next}\n"), "stderr": "", "interrupted": false}}),
            serde_json::json!({"input": {"command": c}, "a": [c, 1.5e3, null, true, {"k": [c]}]}),
            serde_json::json!({c.clone(): "x", "password": c, "signature": c}),
        ];
        out.extend(records.iter().map(|r| r.to_string()));
        // The same record with its letters hidden behind `\u` escapes and `/` as `\/`.
        let hidden = records[0].to_string().replace('a', "\\u0061").replace('/', "\\/");
        out.push(hidden);
    }
    out
}

#[test]
fn json_walk_reads_records_as_the_tree_did() {
    let mut changed = 0;
    for rec in corpus_records() {
        let mut r = Report::default();
        let out = redact_json_line(&rec, &mut r);
        let got: serde_json::Value =
            serde_json::from_str(&out).unwrap_or_else(|e| panic!("{rec} -> {out}: not JSON: {e}"));
        let (want, values) = redact_json_tree(&rec).expect("records are JSON");
        assert_eq!(got, want, "{rec}");
        assert_eq!(r.values, values, "{rec}");
        changed += usize::from(matches!(out, Cow::Owned(_)));
    }
    // The comparison means something only if many records hold secrets.
    assert!(changed > 1000, "{changed}");
}

#[test]
fn json_walk_keeps_every_byte_it_does_not_redact() {
    let mut r = Report::default();
    let line = r#"{"a" : "caf\u00e9 \/x\n", "cmd":"export GITHUB_TOKEN=ghp_R7c2Qm9XvLp4Tn8Ws1Yd6Hb3Kf5Jg0Ae2Zx9", "n":[-1.5E+3, 0, true, null, {}], "e":""}"#;
    let out = redact_json_line(line, &mut r);
    assert_eq!(
        out,
        r#"{"a" : "caf\u00e9 \/x\n", "cmd":"export GITHUB_TOKEN=[REDACTED]", "n":[-1.5E+3, 0, true, null, {}], "e":""}"#
    );
    assert_eq!((r.lines, r.values), (1, 1));
    // An escaped string that changes is written back with the escapes JSON needs.
    let line = r#"{"out":"line one\nexport DB_PASSWORD=hunter2\n\"done\""}"#;
    let out = redact_json_line(line, &mut r);
    assert_eq!(out, r#"{"out":"line one\nexport DB_PASSWORD=[REDACTED]\n\"done\""}"#);
}

#[test]
fn json_walk_reads_what_is_not_json_as_text() {
    let token = "ghp_R7c2Qm9XvLp4Tn8Ws1Yd6Hb3Kf5Jg0Ae2Zx9";
    let deep = format!("{}\"{token}\"{}", "[".repeat(200), "]".repeat(200));
    for line in [
        format!(r#"{{"cmd":"export TOKEN={token}""#),
        format!(r#"{{"cmd":"x"}} trailing {token}"#),
        format!(r#"{{"cmd":"x", {token}: 1}}"#),
        format!(r#"{{"cmd":"bad \q escape {token}"}}"#),
        format!(r#"{{"n": 01, "t": "{token}"}}"#),
        deep,
    ] {
        let mut r = Report::default();
        let out = redact_json_line(&line, &mut r);
        assert!(!out.contains(token), "{line} -> {out}");
        assert_eq!(r.values, 1, "{line}");
    }
}

/// Broken UTF-16 in a record (a lone surrogate, as a tool output cut in the middle of an
/// emoji holds once serialised) is still JSON to every reader but serde_json. The
/// record used to be read as plain text then, and a secret spelled with escapes in any
/// other string of it passed.
#[test]
fn a_lone_surrogate_does_not_turn_escapes_off() {
    let token = "ghp_aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5";
    let escaped_token = token.replacen('a', "\\u0061", 1);
    for line in [
        format!(r#"["\ud800","{escaped_token}"]"#),
        format!(r#"{{"cut":"\ud83d","out":"\u0070assword={token}"}}"#),
        format!(r#"{{"a":"\udc00\ud800","b":"line\nexport API_TOKEN={token}\n"}}"#),
        format!(r#"{{"out":"x \ud800 y\nexport API_TOKEN={token}"}}"#),
    ] {
        let mut r = Report::default();
        let out = redact_json_line(&line, &mut r);
        assert!(!out.contains(token) && !out.contains(&escaped_token), "{line} -> {out}");
        assert_eq!(r.values, 1, "{line} -> {out}");
        // Still JSON to a reader that takes lone surrogates (JavaScript's, Python's): the
        // walk's own grammar check, and the surrogate kept where nothing was redacted.
        assert!(super::json::redact_strings(&out, &mut Report::default()).is_ok(), "{out}");
    }
    let line = format!(r#"["\ud800","{escaped_token}"]"#);
    let out = redact_json_line(&line, &mut Report::default());
    assert!(out.starts_with(r#"["\ud800","#), "{out}");
    // A private key in an escaped string, beside a lone surrogate.
    let key = "-----BEGIN OPENSSH PRIVATE KEY-----\\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\\nQyNTUxOQAAACCx1Mq7w0N4vZyQ3Xr6TtQ9q1k2W1m0Zl4vC1b9YzZ0YwAAAJh4oPqCeKD6\\n-----END OPENSSH PRIVATE KEY-----";
    let line = format!(r#"{{"s":"\udfff","content":"{key}"}}"#);
    let out = redact_json_line(&line, &mut Report::default());
    assert!(!out.contains("b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ"), "{out}");
}

#[test]
fn json_walk_redacts_a_repeated_long_string_every_time() {
    let long = format!("{} export API_TOKEN=abcDEF123456ghiJKL {}", "word ".repeat(60), "more ".repeat(60));
    let line =
        serde_json::json!({"message": {"content": long}, "toolUseResult": {"stdout": long}}).to_string();
    let mut r = Report::default();
    for _ in 0..3 {
        let out = redact_json_line(&line, &mut r);
        assert!(!out.contains("abcDEF123456ghiJKL") && out.contains("API_TOKEN=[REDACTED]"), "{out}");
    }
    assert_eq!((r.lines, r.values), (3, 6));
    // A different string of the same length is read afresh, not taken for the one before.
    let other = long.replace("word", "ward");
    let line = serde_json::json!({"stdout": other}).to_string();
    let out = redact_json_line(&line, &mut r);
    assert!(out.contains("ward") && out.contains("API_TOKEN=[REDACTED]") && !out.contains("word"), "{out}");
    let clean = long.replace("abcDEF123456ghiJKL", "$API_TOKEN_FROM_EN");
    let line = serde_json::json!({"stdout": clean}).to_string();
    assert!(matches!(redact_json_line(&line, &mut r), Cow::Borrowed(_)));
}

/// Lines of real code nobody here wrote that the redactor used to change, one family
/// each: from this Python's standard library, crates in the cargo registry and the
/// bundled JavaScript of an agent's CLI. Each must come out byte for byte.
#[test]
fn real_code_is_left_alone() {
    let lines = [
        // Python: a list or a tuple of names is data, not a name and its value.
        "            'APPEND':       ('AUTH', 'SELECTED'),",
        "__all__ = [\"getpass\",\"getuser\",\"GetPassWarning\"]",
        "class TokenInfo(collections.namedtuple('TokenInfo', 'type string start end line')):",
        "            lambda name: name in ('SIG_BLOCK', 'SIG_UNBLOCK', 'SIG_SETMASK'))",
        // Python: names that merely contain a secret's word.
        "TOKEN_ENDS = TSPECIALS | WSP",
        "      GetPassWarning: When we were unable to turn echo off on the input.",
        "        # First pass: determine maximum length of long option names",
        "    'sid_et':                               'sid_ET.UTF-8',",
        "    UNKNOWN_PSK_IDENTITY = 115",
        "            proxy_auth_hdr = \"Proxy-Authorization\"",
        "                urllib.request.HTTPBasicAuthHandler(password_mgr=auth)",
        // Python: a variable, an index, a call, a format slot, a constant.
        "        self._pwd = pwd",
        "                password = auth[2]",
        "        self.username, self.password = credentials",
        "            itoken = grammar.opmap[value] # Fails if unknown token",
        "                        token = line[start:pos]",
        "    password:%s",
        "            \"auth\":         LOG_AUTH,",
        "        self._config = {'authkey': AuthenticationString(os.urandom(32)),",
        "            c = Client(address, authkey=process.current_process().authkey)",
        "            if user or passwd: self.auth_cache[key] = (user, passwd)",
        "    _DD_SIGNATURE = 0x08074b50",
        "    PseudoToken = Whitespace + group(PseudoExtras, Number, Funny, ContStr, Name)",
        "                - password:     The password for the authentication.",
        "        * signature : Signature",
        " 'pass': 'The \"pass\" statement\\n'",
        "   'Set-Cookie: fig=newton\\r\\nSet-Cookie: sugar=wafer'",
        // Rust: types of fields and arguments, enum values, macros, byte strings.
        "    pub colon_token: Token![:],",
        "    pub target_session: Option<Cow<'a, str>>,",
        "    pub pw_passwd: *mut c_char,",
        "    password: &[u8],",
        "    passphrase: SecretString,",
        "    let sig: Signature = input.parse()?;",
        "pub const fn from_named_raw_nonzero(sig: NonZeroI32) -> Option<Self> {",
        "    pub salt: [c_uchar; TLS_CIPHER_AES_GCM_128_SALT_SIZE],",
        "    pub const DEVCONF_STABLE_SECRET: _bindgen_ty_3 = _bindgen_ty_3::DEVCONF_STABLE_SECRET;",
        "    NL80211_ATTR_SAE_PASSWORD = 277,",
        "    IFLA_VXLAN_LOCALBYPASS = 31,",
        "    Private = 0b11000000,",
        "        let sig = quote_spanned! { span =>",
        "            colon_token: <Token![:]>::default(),",
        "    password: impl AsRef<[u8]>,",
        "//! let password = b\"password\";",
        "    change_passphrase = \"ssh-keygen -o -p\",",
        "            .map_or_else(|_| ffi::SQLITE_ERROR, Authorization::into_raw)",
        "        write!(f, \"0x{leading}{sig:0mwidth$x}p{exponent:+}\")",
        "        \"--jobserver-auth=auth-a --jobserver-auth=auth-b\",",
        // JavaScript: object literals, optional chaining, operators, keywords.
        "    maxOutputTokens: config2?.maxOutputTokens,",
        "      client_secret: this.#clientAuthentication.clientSecret || \"\"",
        "      Authorization: thisCreds.token_type + \" \" + thisCreds.access_token",
        "    isFirstToken: insertIndex === 0,",
        "    progressToken: messageId",
        "      refresh_token: refreshToken",
        "  const { store, signature: actualSignature } = rawStore;",
        "var Minipass = class extends EventEmitter4 {",
        "  findPassword: function (service) {",
        "  tokenize2 = function* (text) {",
        "    exports2.GoogleAuth = GoogleAuth6;",
        "    opts.headers.Authorization = requestHeaders.Authorization;",
        "    listViews: new this._gaxModule.PageDescriptor(\"pageToken\", \"nextPageToken\", \"views\"),",
        "  jwt: /^[A-Za-z0-9-_]+\\.[A-Za-z0-9-_]+\\.[A-Za-z0-9-_]*$/",
        "var FOCUS_UI_ENABLED_STATE_KEY = \"focusUiEnabled\";",
        "var ReactPropTypesSecret = \"SECRET_DO_NOT_PASS_THIS_OR_YOU_WILL_BE_FIRED\";",
        "      thoughtSignature: SYNTHETIC_THOUGHT_SIGNATURE2",
        "    type: setting.sensitive ? \"password\" : \"text\",",
        "const BARE_KEY = /[A-Za-z0-9_-]+/;",
    ];
    let changed: Vec<String> = lines
        .iter()
        .filter_map(|l| {
            let out = redact(l);
            (out != *l).then(|| format!("{l}\n  → {out}"))
        })
        .collect();
    assert!(changed.is_empty(), "{} lines of code changed:\n{}", changed.len(), changed.join("\n"));
}

/// A Google refresh token is known by its shape alone: `firebase login:ci` prints it on a
/// line of its own, with no name beside it; a path or URL with `1//0` in it is no token.
#[test]
fn a_google_refresh_token_is_caught_by_its_shape_and_paths_are_not() {
    let token = "1//0gLq3xZ8mN2vB7cK1pR9sT4wY6uE0aH5jD3fG8kL2zX7cV1bN4mQ9rT6yU3iO0pA5sD8fG2hJ7kL";
    for line in [token.to_string(), format!("firebase deploy --token {token}")] {
        let out = redact(&line);
        assert!(!out.contains(&token[4..]), "{line}\n  → {out}");
    }
    for kept in ["see a/1//0/b.txt", "curl http://host:8080/1//0/status", "x = 1//0 // integer division"] {
        assert_eq!(redact(kept), kept);
    }
}

/// What the code rules must not let go of: the same shapes holding a secret.
#[test]
fn secrets_in_code_and_config_shapes_are_still_caught() {
    let cases = [
        ("password: hunter2", "hunter2"),
        ("db_password = \"s3cr3t-Value!\"", "s3cr3t-Value!"),
        ("    self.password = \"Tr0ub4dor&3\"", "Tr0ub4dor&3"),
        ("client = Client(api_key=\"sk_live_4eC39HqLyjWDarjtT1zdp7dc\")", "sk_live_4eC39HqLyjWDarjtT1zdp7dc"),
        ("  clientSecret: \"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\",", "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"),
        ("DB_PASSWORD_PROD=Qx9!mP2#vL", "Qx9!mP2#vL"),
        (
            "os.environ[\"API_TOKEN\"] = \"f3a9c1d2e4b5a6978812aabbccddeeff\"",
            "f3a9c1d2e4b5a6978812aabbccddeeff",
        ),
        (
            "SetEnvironmentVariable(\"GITHUB_TOKEN\", \"ghp_R8cXq2Lm4Nv6Bt8Zp1Ys3Wa5Ke7Jh9Df0Gu\")",
            "ghp_R8cXq2Lm4Nv6Bt8Zp1Ys3Wa5Ke7Jh9Df0Gu",
        ),
        (
            "secret_key_base: 9f8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c",
            "9f8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c",
        ),
        ("{\"password\": \"correct horse battery staple\"}", "correct horse battery staple"),
        ("PRIVATE_TOKEN: pStnMGdYqLLLyDZUE_kd", "pStnMGdYqLLLyDZUE_kd"),
        (
            "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ9Lm2Xv8Tk1",
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ9Lm2Xv8Tk1",
        ),
    ];
    for (line, secret) in cases {
        let out = redact(line);
        assert!(!out.contains(secret), "{line}\n  → {out}");
    }
}

/// What `grep -n` and `rg -n` print with `-C`, `-A` or `-B` (GNU grep 3.8 and ripgrep 13,
/// tried as a new user would): a context line is `path-11-text` over several files and
/// `11-text` over one, a match `path:12:text` or `12:text`, and `--` between groups. A
/// secret on a context line passed: `DB_PASSWORD` read as the end of a name that began
/// with the path, `aws_secret_access_key` not at the start of its line, a key's body
/// behind its line number.
#[test]
fn grep_context_lines_are_read_as_the_file() {
    let key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ9Lm2Xv8Tk1";
    let body = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW";
    let cases = [
        "config/.env-11-DB_PASSWORD=Hunter2xyz\nconfig/.env:12:DEBUG=1\n--\n".to_string(),
        format!("11-aws_secret_access_key = {key}\n12:region = eu-west-1\n"),
        format!(".aws/credentials-3-aws_secret_access_key = {key}\n"),
        "./home/.netrc-2-  password Hunter2xyz\n".to_string(),
        "2-password Hunter2xyz\n3:machine api.example.com\n".to_string(),
        format!("C:\\Users\\me\\.aws\\credentials-3-aws_secret_access_key = {key}\r\n"),
        format!("C:\\Users\\me\\.aws\\credentials:3:aws_secret_access_key = {key}\r\n"),
        "src/settings.py-40-SECRET_KEY = 'Hunter2xyz-django-insecure'\r\n".to_string(),
        format!("keys/id_ed25519:1:-----BEGIN OPENSSH PRIVATE KEY-----\nkeys/id_ed25519-2-{body}\n"),
        format!("1:-----BEGIN OPENSSH PRIVATE KEY-----\n2-{body}\n3-{body}\n--\n"),
        // A path with a space or a colon is no prefix: the line is read whole, and a
        // name after a `/` was read as a `sed` replacement's, its value cut at the next `/`.
        format!("my dir/creds-3-aws_secret_access_key = {key}\n"),
        "my dir/a:b.env-3-DB_PASSWORD=Hunter2xyz\n".to_string(),
    ];
    for text in &cases {
        let once = redacted_everywhere(text);
        for secret in ["Hunter2xyz", key, body] {
            let (head, tail) = (&secret[..8], &secret[secret.len() - 8..]);
            assert!(!once.contains(head) && !once.contains(tail), "{text:?} -> {once:?}");
        }
        // The prefixes, the `--` lines and the line ends are kept as they were.
        let kept =
            |t: &str| t.lines().map(|l| l.split("[REDACTED]").next().unwrap_or("").len()).sum::<usize>();
        assert!(kept(&once) > 0 && once.matches('\n').count() == text.matches('\n').count(), "{once:?}");
        assert_eq!(once.matches("\r\n").count(), text.matches("\r\n").count(), "{once:?}");
    }
    assert_eq!(
        redact("config/.env-11-DB_PASSWORD=Hunter2xyz\n--\n"),
        "config/.env-11-DB_PASSWORD=[REDACTED]\n--\n"
    );
    assert_eq!(redact(&format!("11-aws_secret_access_key = {key}")), "11-aws_secret_access_key = [REDACTED]");
    // Grep's output inside a transcript: a tool result's `\n`-joined lines.
    let line = serde_json::json!({"content": cases[0], "toolUseResult": {"stdout": cases[1]}}).to_string();
    let out = redact_json_line(&line, &mut Report::default()).into_owned();
    assert!(!out.contains("Hunter2xyz") && !out.contains(&key[..20]), "{out}");
    serde_json::from_str::<serde_json::Value>(&out).unwrap();
}

/// Ordinary text shaped like grep's prefixes is read whole, as before: hyphenated words,
/// dates, versions, and a token whose segments hold `-12-` or that starts with a number
/// and a colon (a Telegram bot's, whose start `12:` was taken for a line number).
#[test]
fn text_shaped_like_a_grep_prefix_is_left_alone() {
    for text in [
        "well-known-thing password reset\n",
        "2024-01-15 12:00 password rotated by ops\n",
        "a-1-b\n",
        "foo-1.2.3-4-gabcdef\n",
        "--\n",
        "3-way merge of the password docs\n",
        "see notes.txt-3-password policy\n",
    ] {
        assert_eq!(redacted_everywhere(text), text);
    }
    // A line that is a token must not lose its start to a prefix.
    let jwt = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIn0.Sfl-12-KxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c";
    let bot = "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawq";
    for line in [jwt, bot] {
        let out = redacted_everywhere(line);
        assert!(!out.contains(&line[..12]) && !out.contains(&line[line.len() - 12..]), "{line} -> {out}");
    }
}

/// A `.netrc` written over several lines, in a unified diff as `git diff` shows it (tried
/// as a new user would): the password of an indented removed line passed, as a `-` before
/// a space is a list's dash to the view and the line then did not start with `password`;
/// so did a `default` entry's.
#[test]
fn a_netrc_in_a_diff_loses_its_passwords() {
    let diff = "diff --git a/.netrc b/.netrc\n--- a/.netrc\n+++ b/.netrc\n@@ -1,8 +1,8 @@\n machine api.example.com\n   login bob\n-  password Hunter2xyz\n+  password Zq9vTk3mWp\n machine b.example.com\n login alice\n-password Qz7RkLm2Vx\n+\tpassword Wm3Xc8NvB5\n   password Hn6TzP2kRw\n-default login anonymous password Kq8pLmN3vR\n";
    let want = "diff --git a/.netrc b/.netrc\n--- a/.netrc\n+++ b/.netrc\n@@ -1,8 +1,8 @@\n machine api.example.com\n   login bob\n-  password [REDACTED]\n+  password [REDACTED]\n machine b.example.com\n login alice\n-password [REDACTED]\n+\tpassword [REDACTED]\n   password [REDACTED]\n-default login anonymous password [REDACTED]\n";
    assert_eq!(redacted_everywhere(diff), want);
    assert_eq!(redacted_everywhere(&diff.replace('\n', "\r\n")), want.replace('\n', "\r\n"));
    // Behind `Read`'s numbers, and in a transcript's tool result.
    let numbered: String =
        diff.lines().enumerate().map(|(i, l)| format!("{:>6}\u{2192}{l}\n", i + 1)).collect();
    let once = redacted_everywhere(&numbered);
    assert_eq!(once.matches("password [REDACTED]").count(), 6, "{once}");
    let line = serde_json::json!({"type": "tool_result", "content": diff}).to_string();
    let out = redact_json_line(&line, &mut Report::default()).into_owned();
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["content"], want);
}

/// Diff lines of ordinary files that speak of passwords keep every byte.
#[test]
fn diff_lines_of_ordinary_files_are_left_alone() {
    for text in [
        "-  password reset instructions are mailed\n",
        "- password: ${DB_PASSWORD}\n",
        "-  password\n",
        "-password reset\n",
        "+  password = $PW\n",
        "- password policy\n",
        "-default login anonymous\n",
        " default password length\n",
    ] {
        assert_eq!(redacted_everywhere(text), text);
    }
}

/// A tool result whose text is itself JSON holding a file as `Read` numbers it (tried as a
/// new user would): the text `{"content":"     1→[default]\n     2→aws_secret_access_key
/// = …"}` is one line whose `\n` are escapes, so the numbers were not at a line's start,
/// the key's name was read as part of `2→aws_secret_access_key` and the key passed.
#[test]
fn json_inside_a_json_string_is_read_as_json() {
    use serde_json::json;
    let key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ9Lm2Xv8Tk1";
    let inner =
        json!({"content": format!("     1\u{2192}[default]\n     2\u{2192}aws_secret_access_key = {key}\n")})
            .to_string();
    let text = json!([{"type": "text", "text": "     1\u{2192}x\n     2\u{2192}DB_PASSWORD=Hunter2xyz\n"}]);
    let netrc = json!({"content": "     3\u{2192}  password Hunter2xyz\n"}).to_string();
    let records = [
        json!({"type": "user", "message": {"content": [{"type": "tool_result", "content": inner}]}}),
        json!({"toolUseResult": text.to_string()}),
        // Two levels deeper, and after a line end.
        json!({"c": json!({"stdout": netrc}).to_string()}),
        json!({"c": format!("\n  {inner}")}),
        // JSON Lines: `cat` of a log or a transcript, one record a line.
        json!({"stdout": format!("{{\"n\":1}}\r\n{inner}\n[2]\nnot json\n{netrc}")}),
    ];
    for record in records {
        let line = record.to_string();
        let mut r = Report::default();
        let out = redact_json_line(&line, &mut r).into_owned();
        // Only the secret changed: the nested texts keep their layout and escapes.
        assert_eq!(out, line.replace(key, REDACTED).replace("Hunter2xyz", REDACTED), "{line}");
        let secrets = line.matches(key).count() + line.matches("Hunter2xyz").count();
        assert_eq!((r.lines, r.values as usize), (1, secrets), "{out}");
        assert!(matches!(redact_json_line(&out, &mut Report::default()), Cow::Borrowed(_)), "{out}");
        let mut o = Vec::new();
        filter::run_as(filter::Kind::Transcript, format!("{line}\n").as_bytes(), &mut o).unwrap();
        assert_eq!(String::from_utf8(o).unwrap(), format!("{out}\n"));
    }
}

/// Strings that start like JSON but are not, or are JSON with nothing to redact, are read
/// as before: unchanged when clean, as text when not JSON.
#[test]
fn strings_that_start_like_json_are_read_as_before() {
    for line in [
        r#"{"msg":"{placeholder} password reset"}"#,
        r#"{"msg":"[WARN] 2 tests failed\n     3→ok"}"#,
        r#"{"msg":"{\"unterminated"}"#,
        r#"{"msg":"[1, 2, oops]"}"#,
        r#"{"msg":"{\"a\":\"caf\\u00e9 \\/x\\n\",\"n\":[1,{}]}"}"#,
        r#"{"msg":"{}"}"#,
        r#"{"msg":"[]"}"#,
        r#"{"msg":"{"}"#,
    ] {
        assert!(matches!(redact_json_line(line, &mut Report::default()), Cow::Borrowed(_)), "{line}");
    }
    // Not JSON, and a secret in it: read as text.
    let line = r#"{"msg":"{oops\nexport DB_PASSWORD=Hunter2xyz\n"}"#;
    let out = redact_json_line(line, &mut Report::default());
    assert_eq!(out, r#"{"msg":"{oops\nexport DB_PASSWORD=[REDACTED]\n"}"#);
    // Nested deeper than a few levels is read as text: no stack runs out.
    let mut deep = "export DB_PASSWORD=Hunter2xyz".to_string();
    for _ in 0..12 {
        deep = serde_json::json!({ "d": deep }).to_string();
    }
    let out = redact_json_line(&deep, &mut Report::default());
    assert!(!out.contains("Hunter2xyz"), "{out}");
}

/// What `--as text` did to the structure around a value (no leak): a value's span ran
/// through its word's closing quote and the punctuation after it, so `"DB_PASSWORD=X",`
/// lost its comma and a JSON object in a text line the comma between two members; the
/// quotes kept after the marker lost the backslash that escaped one of them, so
/// `-p'a'\''b'` and `"ab\"cd"` were left with a quote open, and JSON text its closing quote.
#[test]
fn quoting_around_a_redacted_value_stays_whole() {
    for (text, want) in [
        (r#""DB_PASSWORD=Hunter2xyz","#, r#""DB_PASSWORD=[REDACTED]","#),
        (r#"  'DB_PASSWORD=Hunter2xyz', 'X=1'"#, r#"  'DB_PASSWORD=[REDACTED]', 'X=1'"#),
        (r#"f("--password=Hunter2xyz");"#, r#"f("--password=[REDACTED]");"#),
        (r"mysql -u root -p'a'\''b' db", r"mysql -u root -p'[REDACTED]'\''' db"),
        (r"export DB_PASSWORD='Hunter2'\''xyz'", r"export DB_PASSWORD='[REDACTED]'\'''"),
        // A string's whole content, its quotes all escaped, goes whole: none pairs outside.
        (r#"export PASSWORD="ab\"cd""#, r#"export PASSWORD="[REDACTED]""#),
        (r#"export PASSWORD="ab\"cd" X=1"#, r#"export PASSWORD="[REDACTED]" X=1"#),
    ] {
        let once = redacted_everywhere(text);
        assert_eq!(once, want, "{text}");
        assert!(!super::lex::lex(once.as_bytes()).open_quote, "{once}");
    }
    for json in [
        r#"{"env": "DB_PASSWORD=Hunter2xyz", "x": 1}"#,
        r#"{"env": ["DB_PASSWORD=Hunter2xyz", "API_TOKEN=Kq8pLmN3vR7tKx2WbY9cH"]}"#,
        r#"{"cmd": "mysql -p\"Hunter2xyz\" db", "x": 1}"#,
        r#"{"cmd": "export DB_PASSWORD=\"Hunter2xyz\"", "x": 1}"#,
        r#"{"cmd": "export DB_PASSWORD='Hunter2xyz'", "x": 1}"#,
    ] {
        let once = redacted_everywhere(json);
        assert!(!once.contains("Hunter2xyz") && !once.contains("Kq8pLmN3"), "{once}");
        let v: serde_json::Value =
            serde_json::from_str(&once).unwrap_or_else(|e| panic!("{json} -> {once}: not JSON: {e}"));
        let keys = |v: &serde_json::Value| v.as_object().map(|o| o.keys().cloned().collect::<Vec<_>>());
        assert_eq!(keys(&v), keys(&serde_json::from_str(json).unwrap()), "{once}");
    }
}

/// A config file's unquoted value runs to the end of its line (less an inline comment
/// where the format has one), so punctuation a shell would stop at is no end: the value
/// of `password: Abc!def12` passed whole, and `DB_PASSWORD=Tr0ub4dor&3xyz` kept `&3xyz`.
/// A shell's list operators and a pair's separator still end it.
#[test]
fn a_config_value_runs_to_the_end_of_its_line() {
    for (text, want) in [
        ("password: Abc!def12\n", "password: [REDACTED]\n"),
        ("  password: Abc!def12 # the db's\n", "  password: [REDACTED] # the db's\n"),
        ("- password: Tr0ub4dor&3xyz\n", "- password: [REDACTED]\n"),
        ("password: Abc;def12\r\n", "password: [REDACTED]\r\n"),
        ("password: Abc,def12\n", "password: [REDACTED]\n"),
        ("DB_PASSWORD=Tr0ub4dor&3xyz\n", "DB_PASSWORD=[REDACTED]\n"),
        ("DB_PASSWORD=Tr0ub4dor&3xyz\r\n", "DB_PASSWORD=[REDACTED]\r\n"),
        ("export DB_PASSWORD=Tr0ub4dor&3xyz", "export DB_PASSWORD=[REDACTED]"),
        ("DB_PASSWORD=Tr0ub4dor|3x>y<z)w(v", "DB_PASSWORD=[REDACTED]"),
        ("DB_PASSWORD=Abc=def12\n", "DB_PASSWORD=[REDACTED]\n"),
        ("DB_PASSWORD=Abc;def12\n", "DB_PASSWORD=[REDACTED]\n"),
        ("DB_PASSWORD=Tr0ub4dor&3xyz # prod\n", "DB_PASSWORD=[REDACTED] # prod\n"),
        ("\tDB_PASSWORD=Tr0ub4dor&3xyz\n", "\tDB_PASSWORD=[REDACTED]\n"),
        ("password = Abc;def12\n", "password = [REDACTED]\n"),
        ("password = Abc&def12 ; old one\n", "password = [REDACTED] ; old one\n"),
        ("password = Hunter2xyz\t# noqa\n", "password = [REDACTED]\t# noqa\n"),
        ("db.password=Abc!def12 and more\n", "db.password=[REDACTED]\n"),
        ("spring.datasource.password: Abc&def12\n", "spring.datasource.password: [REDACTED]\n"),
        ("     3\u{2192}DB_PASSWORD=Tr0ub4dor&3xyz\n", "     3\u{2192}DB_PASSWORD=[REDACTED]\n"),
        ("+password: Abc!def12\n", "+password: [REDACTED]\n"),
        ("config/.env:3:DB_PASSWORD=Tr0ub4dor&3xyz\n", "config/.env:3:DB_PASSWORD=[REDACTED]\n"),
        // A shell's list operators, a blank and a pair's separator end a value.
        ("DB_PASSWORD=Hunter2xyz ./run\n", "DB_PASSWORD=[REDACTED] ./run\n"),
        ("DB_PASSWORD=Hunter2xyz & ./run\n", "DB_PASSWORD=[REDACTED] & ./run\n"),
        ("DB_PASSWORD=Hunter2xyz&& ./run\n", "DB_PASSWORD=[REDACTED]&& ./run\n"),
        ("DB_PASSWORD=Hunter2xyz&&b=2\n", "DB_PASSWORD=[REDACTED]&&b=2\n"),
        ("DB_PASSWORD=Hunter2xyz||true\n", "DB_PASSWORD=[REDACTED]||true\n"),
        ("DB_PASSWORD=Hunter2xyz; ./run\n", "DB_PASSWORD=[REDACTED]; ./run\n"),
        ("password=Hunter2xyz&user=bob\n", "password=[REDACTED]&user=bob\n"),
        ("Password=P@ssw0rd!;Database=app\n", "Password=[REDACTED];Database=app\n"),
        (
            "Server=db;Database=app;User Id=sa;Password=P@ssw0rd!;Encrypt=true\n",
            "Server=db;Database=app;User Id=sa;Password=[REDACTED];Encrypt=true\n",
        ),
        // Not at a line's start: a shell word, which `&` ends.
        ("docker run -e DB_PASSWORD=Hunter2xyz&& ls\n", "docker run -e DB_PASSWORD=[REDACTED]&& ls\n"),
    ] {
        assert_eq!(redacted_everywhere(text), want, "{text:?}");
    }
    // Shell lines whose `&` is a shell's, and values that are not secrets.
    for text in [
        "make && FOO=bar ./x\n",
        "a=1&&b=2\n",
        "FOO=bar&\n",
        "password: ${DB_PASSWORD} # from the vault\n",
        "password: changeme\n",
        "DB_PASSWORD=$(cat /run/secrets/db) ./run\n",
        "  token: Option<String>,\n",
        "colon_token: Token![:],\n",
    ] {
        assert_eq!(redacted_everywhere(text), text);
    }
}

/// A text in every view the redactor reads, each line numbered or signed as the tool
/// shows it: plain, `Read`, `cat -n`, `grep -n -A` over one file, the added, removed and
/// context lines of a unified diff.
fn views_of(text: &str) -> Vec<(&'static str, String)> {
    let each = |f: &dyn Fn(usize, &str) -> String| -> String {
        text.split_inclusive('\n').enumerate().map(|(i, l)| f(i + 1, l)).collect()
    };
    vec![
        ("plain", text.to_string()),
        ("read", each(&|n, l| format!("{n:>6}\u{2192}{l}"))),
        ("cat -n", each(&|n, l| format!("{n:>6}\t{l}"))),
        (
            "grep -n",
            each(&|n, l| if n == 1 { format!("app.yml:{n}:{l}") } else { format!("app.yml-{n}-{l}") }),
        ),
        ("diff +", each(&|_, l| format!("+{l}"))),
        ("diff -", each(&|_, l| format!("-{l}"))),
        ("diff context", each(&|_, l| format!(" {l}"))),
    ]
}

/// YAML's block scalars (YAML 1.2.2, 8.1.1): a `|` (literal) or `>` (folded) header, an
/// optional indentation indicator (1-9) and chomping indicator (`-`, `+`) in either
/// order, an optional comment; the content is every line below indented more than the
/// key (or by the indicator), empty lines included, up to the first non-empty line
/// indented less. Under a secret's name each content line is the secret; the header,
/// a PEM armour and the lines after the block stay.
#[test]
fn a_yaml_block_scalar_under_a_secrets_name_loses_its_lines() {
    for (text, want) in [
        ("password: |\n  Hunter2xyz\nuser: bob\n", "password: |\n  [REDACTED]\nuser: bob\n"),
        (
            "password: >\n  correct horse\n  battery staple\nhost: db\n",
            "password: >\n  [REDACTED]\n  [REDACTED]\nhost: db\n",
        ),
        (
            "db:\n  password: |-\n    Tr0ub4dor&3xyz\n  port: 5432\n",
            "db:\n  password: |-\n    [REDACTED]\n  port: 5432\n",
        ),
        ("password: >+\n  Hunter2xyz\n\nnext: x\n", "password: >+\n  [REDACTED]\n\nnext: x\n"),
        ("password: |2\n   Hunter2xyz\nnext: x\n", "password: |2\n   [REDACTED]\nnext: x\n"),
        ("password: |-2 # the db's\n  Hunter2xyz\n", "password: |-2 # the db's\n  [REDACTED]\n"),
        ("password: >2-\n  Hunter2xyz\n", "password: >2-\n  [REDACTED]\n"),
        ("api_token: !!str |\n  Kq8pLmN3vR7tKx2WbY9cH\n", "api_token: !!str |\n  [REDACTED]\n"),
        ("\"password\": |\n  Hunter2xyz\n", "\"password\": |\n  [REDACTED]\n"),
        // Empty lines before the content, and a `#`, which is content there.
        ("password: |\n\n  Hunter2xyz\nx: y\n", "password: |\n\n  [REDACTED]\nx: y\n"),
        ("password: |\n  #Hunter2xyz\n", "password: |\n  [REDACTED]\n"),
        // Ended by a less indented line; the lines after it are not the block's.
        (
            "a:\n  password: |\n      Hunter2xyz\n    user: bob\n      kept-as-is\n",
            "a:\n  password: |\n      [REDACTED]\n    user: bob\n      kept-as-is\n",
        ),
        ("password: |\n  Hunter2xyz\n---\nx: y\n", "password: |\n  [REDACTED]\n---\nx: y\n"),
        ("- password: |\n    Hunter2xyz\n- name: x\n", "- password: |\n    [REDACTED]\n- name: x\n"),
        // At the end of the text, with CRLF, with a tab.
        ("password: |\n  Hunter2xyz", "password: |\n  [REDACTED]"),
        ("password: |\r\n  Hunter2xyz\r\nuser: bob\r\n", "password: |\r\n  [REDACTED]\r\nuser: bob\r\n"),
        ("password: |\n\tHunter2xyz\n", "password: |\n\t[REDACTED]\n"),
        // An empty block: the next line is not its content.
        ("password: |\nuser: bob\n", "password: |\nuser: bob\n"),
        // A private key: the PEM rule keeps its armour.
        (
            "private_key: |\n  -----BEGIN PRIVATE KEY-----\n  MIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n  -----END PRIVATE KEY-----\nx: y\n",
            "private_key: |\n  -----BEGIN PRIVATE KEY-----\n  [REDACTED]\n  -----END PRIVATE KEY-----\nx: y\n",
        ),
    ] {
        for ((view, shown), (_, wanted)) in views_of(text).into_iter().zip(views_of(want)) {
            assert_eq!(redacted_in_pieces(&shown), wanted, "{view}: {shown:?}");
        }
    }
    // Blocks under other names, and references, stay.
    for text in [
        "description: |\n  the password is in the vault\n",
        "script: |\n  echo $DB_PASSWORD\n",
        "password: |\n  ${DB_PASSWORD}\n",
        "password_file: |\n  /run/secrets/db.txt\n",
        "grep password: | sort\n  kept\n",
    ] {
        for (view, shown) in views_of(text) {
            assert_eq!(redacted_in_pieces(&shown), shown, "{view}");
        }
    }
    // Inside a transcript's tool result, as `Read` numbers it.
    let shown = views_of("db:\n  password: >-\n    Hunter2xyz\n  port: 5432\n").remove(1).1;
    let line = serde_json::json!({"type": "tool_result", "content": shown}).to_string();
    let out = redact_json_line(&line, &mut Report::default()).into_owned();
    assert!(!out.contains("Hunter2xyz") && out.contains("port: 5432"), "{out}");
}

/// A plain or quoted scalar may start on the line below its key, more indented, and go on
/// over lines, folded with a space (YAML 1.2.2, 7.3.3 and 6.5; Kubernetes' `env`,
/// docker-compose's `environment`, Ansible's and Helm's values write it so): under a
/// secret's name the value below is judged as the key's own line would judge it were it
/// there (`password: hunter2xyz`), in every view and on each side of a diff. An anchor or
/// a tag on the key's line, a comment line or blank lines between, a byte order mark and
/// CRLF change nothing.
#[test]
fn a_scalar_below_a_secrets_name_is_judged_as_on_its_line() {
    for (text, want) in [
        (
            "db:\n  password:\n    hunter2xyz\n  port: 5432\n",
            "db:\n  password:\n    [REDACTED]\n  port: 5432\n",
        ),
        ("password:\n  Hunter2xyz\nuser: bob\n", "password:\n  [REDACTED]\nuser: bob\n"),
        // Kubernetes' env entry: the name, then `value:` and the value indented.
        (
            "env:\n- name: DB_PASSWORD\n  value:\n    s3cretValue\n- name: DB_HOST\n  value:\n    db.local\n",
            "env:\n- name: DB_PASSWORD\n  value:\n    [REDACTED]\n- name: DB_HOST\n  value:\n    db.local\n",
        ),
        // docker-compose's environment, Ansible's vars (a comment after the value), Helm's
        // values (quoted: the quotes stay).
        (
            "services:\n  db:\n    environment:\n      POSTGRES_PASSWORD:\n        Tr0ub4dor3xyz\n    image: postgres\n",
            "services:\n  db:\n    environment:\n      POSTGRES_PASSWORD:\n        [REDACTED]\n    image: postgres\n",
        ),
        (
            "ansible_become_password:\n  Hunter2xyz  # set by hand\nansible_user: bob\n",
            "ansible_become_password:\n  [REDACTED]  # set by hand\nansible_user: bob\n",
        ),
        ("auth:\n  rootPassword:\n    \"Kq8pLmN3vR7t\"\n", "auth:\n  rootPassword:\n    \"[REDACTED]\"\n"),
        ("api_token:\n  'Kq8pLmN3vR7tKx2WbY9cH'\n", "api_token:\n  '[REDACTED]'\n"),
        // Node properties on the key's line: an anchor goes, a tag is read as on one line.
        ("password: &pw\n  Hunter2xyz\n", "password: &pw\n  [REDACTED]\n"),
        ("password: !!str\n  Hunter2xyz\n", "password: !!str\n  [REDACTED]\n"),
        (
            "password: &pw !!str  # the db's\n  Hunter2xyz\n",
            "password: &pw !!str  # the db's\n  [REDACTED]\n",
        ),
        ("password:\n  !!str Hunter2xyz\n", "password:\n  !!str [REDACTED]\n"),
        // A comment line, blank lines between; a comment on the key's line.
        ("password:\n  # rotated monthly\n  Hunter2xyz\n", "password:\n  # rotated monthly\n  [REDACTED]\n"),
        ("password:\n\n  Hunter2xyz\n\nuser: bob\n", "password:\n\n  [REDACTED]\n\nuser: bob\n"),
        ("password:  # below\n  Hunter2xyz\n", "password:  # below\n  [REDACTED]\n"),
        // A byte order mark, CRLF, the end of the text, a list's item.
        ("\u{feff}password:\n  Hunter2xyz\n", "\u{feff}password:\n  [REDACTED]\n"),
        ("password:\r\n  Hunter2xyz\r\nuser: bob\r\n", "password:\r\n  [REDACTED]\r\nuser: bob\r\n"),
        ("password:\n  Hunter2xyz", "password:\n  [REDACTED]"),
        ("- password:\n    Hunter2xyz\n- name: x\n", "- password:\n    [REDACTED]\n- name: x\n"),
        // Over lines, folded: judged as `password: Hunter2xyz more words` is.
        ("password:\n  Hunter2xyz\n  more words\nx: y\n", "password:\n  [REDACTED]\n  [REDACTED]\nx: y\n"),
        ("password:\n  \"Hunter2\n  xyz\"\nx: y\n", "password:\n  \"[REDACTED]\n  [REDACTED]\"\nx: y\n"),
        // A number is a password, as on the key's line.
        ("password:\n  12345678\n", "password:\n  [REDACTED]\n"),
    ] {
        for ((view, shown), (_, wanted)) in views_of(text).into_iter().zip(views_of(want)) {
            assert_eq!(redacted_in_pieces(&shown), wanted, "{view}: {shown:?}");
        }
    }
    // What the key's line keeps, kept below it too; and what is no scalar below its key.
    for text in [
        // No value, or a collection, an alias: not a scalar.
        "password:\nuser: bob\n",
        "password:\n  file: /run/secrets/db\n",
        "password:\n  - Hunter2xyz\n",
        "password:\n  [Hunter2xyz]\n",
        "password:\n  {a: Hunter2xyz}\n",
        "password:\n  *db_password\n",
        "password:\n  |\n  Hunter2xyz\n",
        // Not more indented than the key, or indented with a tab (no YAML either).
        "- password:\n  Hunter2xyz\n",
        "password:\nHunter2xyz\n",
        "password:\n\tHunter2xyz\n",
        // Not a secret's name.
        "description:\n  Hunter2xyz\n",
        "password_file:\n  /run/secrets/db\n",
        // References, templates, placeholders.
        "password:\n  \"{{ vault_db_password }}\"\n",
        "password:\n  $DB_PASSWORD\n",
        "password:\n  ${DB_PASSWORD}\n",
        "password:\n  <password>\n",
        "password:\n  changeme\n",
        // Code and types.
        "token:\n  getToken()\n",
        "token:\n  process.env.API_TOKEN\n",
        "password:\n  str\n",
        "apiKey:\n  Record<string, string>\n",
        // What a YAML parser reads as no string.
        "password:\n  null\n",
        "password:\n  ~\n",
        "password:\n  true\n",
        // Words: a description, a passphrase with blanks (as `password: my dog rex`).
        "password:\n  The password for the account, used when\n  connecting to the server.\n",
        "password:\n  correct horse\n  battery staple\n",
        // C++ access specifiers and the members below them (shapes from ncurses', libstdc++'s
        // and LLVM's headers: YAML would read each as a plain scalar, folded), a docstring's
        // fields (cryptography's ssh.py).
        "class A {\n private:\n    Token token_;\n};\n",
        "class A {\n  private:\n  NCursesWindow* sub;   // the subwindow object\n  bool b_framed;\n};\n",
        "    private:\n      _GLIBCXX20_CONSTEXPR\n      vector(vector&& __x, const allocator_type& __a) noexcept\n",
        "    private:\n      explicit\n      __numpunct_cache(const __numpunct_cache&);\n",
        "    private:\n      element_type*\n      _M_get() const noexcept\n      { return this->get(); }\n",
        "  private:\n    LLVMContext &getContext() const { return SE.getContext(); }\n",
        "  private:\n    /// The context.\n    LLVMContext &Context;\n",
        "  Private:\n    UVector* fMatches;  // vector of MatchEntry\n",
        "    Public:\n        mpint e, n\n    Private:\n        mpint n, e, d, iqmp, p, q\n    \"\"\"\n",
        "    Private:\n        str curve\n        bytes point\n        mpint secret\n",
        // Members aligned with tabs (libstdc++'s streambuf_iterator.h and
        // locale_facets_nonio.h): no blank, yet no one word.
        "    private:\n      streambuf_type*\t_M_sbuf;\n      bool\t\t_M_failed;\n",
        "    private:\n      __cache_type*\t\t\t_M_data;\n",
    ] {
        for (view, shown) in views_of(text) {
            assert_eq!(redacted_in_pieces(&shown), shown, "{view}");
        }
    }
}

/// The value below its key is judged by the key's own line: for each value, `name:` and
/// the value indented below lose it exactly when `name: value` does.
#[test]
fn a_value_below_its_key_and_on_its_line_are_judged_alike() {
    let values = [
        "Hunter2xyz",
        "hunter2",
        "'Hunter2xyz'",
        "\"Kq8pLmN3vR7tKx2WbY9cH\"",
        "!!str Tr0ub4dor3",
        "12345678",
        "connecting.",
        "{{ vault_pw }}",
        "\"{{ vault_pw }}\"",
        "$DB_PASSWORD",
        "<password>",
        "getToken()",
        "process.env.DB_PASSWORD",
        "str",
        "Record<string, string>",
        "null",
        "~",
        "true",
        "false",
        "my dog rex",
        "The password for the account.",
        "mpint n, e, d, iqmp, p, q",
        "Hunter2xyz # a comment",
        "op://vault/db/password",
        "/run/secrets/db_password",
        "!Ref DbPassword",
        "Kq8pLmN3vR7tKx2WbY9cH",
        // One word that ends or holds what code writes (found by an attack: a value
        // alone on its line was dropped as code's), and quoted ones.
        "Hunter2xyz;",
        "Hunter2xyz)",
        "Hunter2xyz,",
        "Summer2024*",
        "Xk9#mQ2!pL&",
        "Secret123\\",
        "p@ss{w0rd}",
        "abc/*xyz9Q",
        "\"Pa55/*word\"",
        "\"Hunter2 //xyz\"",
        "'Hunter2x*/y'",
        "foo();",
        "return;",
    ];
    for name in ["password", "api_token", "DB_PASSWORD", "secretKey"] {
        for v in values {
            let on_line = redact(&format!("{name}: {v}\n")).into_owned();
            let below = redact(&format!("{name}:\n  {v}\n")).into_owned();
            let kept = on_line == format!("{name}: {v}\n");
            assert_eq!(below == format!("{name}:\n  {v}\n"), kept, "{name}: {v:?}\n{on_line:?}\n{below:?}");
            if !kept {
                assert_eq!(below, format!("{name}:\n  {}", &on_line[name.len() + 2..]), "{name}: {v:?}");
            }
        }
    }
    // An entry's value key, judged by its name: the same.
    for v in values {
        let entry = |value: &str| format!("- name: DB_PASSWORD\n  value:{value}\n");
        let on_line = redact(&entry(&format!(" {v}"))).into_owned();
        let below = redact(&entry(&format!("\n    {v}"))).into_owned();
        assert_eq!(
            below == entry(&format!("\n    {v}")),
            on_line == entry(&format!(" {v}")),
            "{v:?}\n{below}"
        );
    }
}

/// A value below its key as Claude Code's records hold it: a `Read` result's numbered
/// lines, and an edit's `structuredPatch` (a line a string, the added side).
#[test]
fn a_scalar_below_its_key_is_found_in_a_transcripts_records() {
    let shown = views_of("db:\n  password:\n    Hunter2xyz\n  port: 5432\n").remove(1).1;
    let line = serde_json::json!({"type": "tool_result", "content": shown}).to_string();
    let out = redact_json_line(&line, &mut Report::default()).into_owned();
    assert!(!out.contains("Hunter2xyz") && out.contains("port: 5432"), "{out}");
    let record = r#"{"toolUseResult":{"structuredPatch":[{"lines":["         - name: DB_PASSWORD","-          value: Old5ecretXyz","+          value:","+            N3wSecretXyz","         - name: DB_HOST"]}]}}"#;
    let out = redact_json_line(record, &mut Report::default()).into_owned();
    assert!(!out.contains("Old5ecretXyz") && !out.contains("N3wSecretXyz"), "{out}");
    assert!(out.contains(r#""+            [REDACTED]""#), "{out}");
}

/// A `.pgpass` (`hostname:port:database:username:password`, `\:` and `\\` escaped) shown
/// by `cat` or read by an agent's `Read`: the lines hold no keyword, so only the file's
/// name says what they are. Each line the file's syntax reads loses its password field;
/// the first line that is not one ends the file.
#[test]
fn a_pgpass_shown_by_cat_or_read_loses_its_passwords() {
    let file = "# prod\ndb.example.com:5432:app:alice:Hunter2xyz\n*:*:*:bob:An0ther\\:pw\n";
    let red = "# prod\ndb.example.com:5432:app:alice:[REDACTED]\n*:*:*:bob:[REDACTED]\n";
    for (cmd, after) in [
        ("cat ~/.pgpass\n", "box% ls\n"),
        ("box% cat ~/.pgpass\n", "box% ls\n"),
        ("$ sudo cat /var/lib/postgresql/.pgpass\n", "$ \n"),
        (": 1700000000:0;cat $HOME/.pgpass\n", ""),
        ("tail -n 3 .pgpass\n", "done: a:1:b:c:d\n"),
        // Only errors redirected, or sent on to the terminal: the file still shows.
        ("$ cat ~/.pgpass 2>/dev/null\n", "$ \n"),
        ("$ cat ~/.pgpass 2>&1\n", "$ \n"),
        ("$ cat ~/.pgpass >&2\n", "$ \n"),
        // Shown first, with more commands after it on the line.
        ("$ cat ~/.pgpass; echo\n", "\n$ \n"),
        ("$ cat ~/.pgpass && psql -h db\n", "psql (16.2)\n"),
    ] {
        let text = format!("{cmd}{file}{after}");
        assert_eq!(redacted_in_pieces(&text), format!("{cmd}{red}{after}"), "{text:?}");
        let crlf = text.replace('\n', "\r\n");
        assert_eq!(redacted_in_pieces(&crlf), format!("{cmd}{red}{after}").replace('\n', "\r\n"));
    }
    // `cat -n` numbers the lines.
    let numbered = cat_n(file);
    let out = redacted_in_pieces(&format!("cat -n ~/.pgpass\n{numbered}"));
    assert_eq!(out.matches(REDACTED).count(), 2, "{out}");
    // What is not the file's output: piped on, written elsewhere, not shown, or a line
    // after it that the file's syntax does not read.
    for text in [
        "cat ~/.pgpass | wc -l\n3\na:1:b:c:Hunter2xyz\n",
        "cat ~/.pgpass > backup\na:1:b:c:Hunter2xyz\n",
        "cat ~/.pgpass 1> backup\na:1:b:c:Hunter2xyz\n",
        "cat ~/.pgpass &> backup\na:1:b:c:Hunter2xyz\n",
        "echo hi; cat ~/.pgpass | wc -l\nhi\na:1:b:c:Hunter2xyz\n",
        "ls -l ~/.pgpass\na:1:b:c:Hunter2xyz\n",
        "cat ~/.pgpass\nsrc/main.rs:12:use std::io;\n",
        "cat ~/.pgpass\n\nx.rs:1:a:b:c\n",
    ] {
        assert_eq!(redacted_in_pieces(text), text);
    }
    // Claude Code's `Read` record: the path is in the same record as the numbered view
    // and the plain content.
    let numbered: String =
        file.lines().enumerate().map(|(i, l)| format!("{:>6}\u{2192}{l}\n", i + 1)).collect();
    let record = serde_json::json!({
        "type": "user",
        "message": {"role": "user", "content": [
            {"tool_use_id": "toolu_01", "type": "tool_result", "content": numbered}]},
        "toolUseResult": {"type": "text", "file": {
            "filePath": "/home/me/.pgpass", "content": file, "numLines": 3}},
    })
    .to_string();
    let mut r = Report::default();
    let out = redact_json_line(&record, &mut r).into_owned();
    assert!(!out.contains("Hunter2xyz") && !out.contains("An0ther"), "{out}");
    assert_eq!(r.values, 4, "{out}");
    assert!(out.contains("db.example.com:5432:app:alice:[REDACTED]"), "{out}");
    assert!(matches!(redact_json_line(&out, &mut Report::default()), Cow::Borrowed(_)), "{out}");
    // Claude Code's `Edit` result: a sentence, then the numbered snippet.
    let edited = serde_json::json!({
        "type": "user",
        "message": {"role": "user", "content": [{"tool_use_id": "toolu_02", "type": "tool_result",
            "content": format!("The file /home/me/.pgpass has been updated. Here's the result of running `cat -n` on a snippet of the edited file:\n{numbered}")}]},
        "toolUseResult": {"filePath": "/home/me/.pgpass", "oldString": "x", "newString": "y"},
    })
    .to_string();
    let out = redact_json_line(&edited, &mut Report::default()).into_owned();
    assert!(
        !out.contains("Hunter2xyz") && !out.contains("An0ther") && out.contains("has been updated"),
        "{out}"
    );
    // The same record for another file is left alone.
    let other = record.replace(".pgpass", "notes.txt");
    assert!(matches!(redact_json_line(&other, &mut Report::default()), Cow::Borrowed(_)));
}

/// `text` read as `--as config` reads it.
fn redacted_as_config(text: &str) -> String {
    let mut o = Vec::new();
    filter::run_as(filter::Kind::Config, text.as_bytes(), &mut o).expect("writing to a Vec does not fail");
    String::from_utf8(o).expect("the filter keeps UTF-8")
}

/// `NAME= cmd args` is how a shell runs a command with the variable set empty: nothing on
/// the line is a secret, and the command was taken for an INI value and lost to the
/// marker (`PGPASSWORD= psql -h db -U app`). In text of unknown kind the value after the
/// blank is a command when it is a program followed by what a command line holds; a
/// config file's `password= Hunter2xyz` is still a value. See: #16 (F1, F7).
#[test]
fn r16_an_empty_assignment_before_a_command_is_no_value() {
    for text in [
        "PGPASSWORD= psql -h db -U app\n",
        "PGPASSWORD= cat ~/.pgpass\n",
        "DB_PASSWORD= ./run.sh --migrate\n",
        "DB_PASSWORD= make deploy\n",
        "API_TOKEN= make deploy\n",
        "$ PGPASSWORD= psql -h db -U app\n",
        "env PGPASSWORD= pg_dump -Fc app > app.dump\n",
        "cd db && PGPASSWORD= psql -U app app\n",
        "GITHUB_TOKEN= /usr/local/bin/gh auth status\n",
        "PGPASSWORD= psql -c \"SELECT 1\" app\n",
    ] {
        assert_eq!(redacted_everywhere(text), text);
    }
    // A config file's value after `= `, a typed value, and a value in text whose words
    // are no command line.
    for (text, want) in [
        ("password= Hunter2xyz\n", "password= [REDACTED]\n"),
        ("DB_PASSWORD= Hunter2xyz\n", "DB_PASSWORD= [REDACTED]\n"),
        ("DB_PASSWORD= Tr0ub4dor&3 xyz\n", "DB_PASSWORD= [REDACTED]\n"),
        ("DB_PASSWORD= hunter2 Xyz!9\n", "DB_PASSWORD= [REDACTED]\n"),
        ("password = Abc;def12\n", "password = [REDACTED]\n"),
    ] {
        assert_eq!(redacted_everywhere(text), want, "{text:?}");
        assert_eq!(redacted_as_config(text), want, "{text:?}");
    }
    // A command's own secret is still found.
    let out = redacted_everywhere("PGPASSWORD= mysql -u root -pHunter2xyz db\n");
    assert!(!out.contains("Hunter2xyz"), "{out}");
}

/// A YAML tag is no value. CloudFormation's intrinsic functions in short form (`!Ref`,
/// `!GetAtt`, `!ImportValue`, …) name other nodes, and Home Assistant's and ESPHome's
/// `!secret`, `!env_var` and `!include` name where the value is: each was taken for a
/// password, to the line's end, and `!Sub '{{resolve:…}}'` lost its quote (`[REDACTED]''`).
/// A core tag (`!!str`, `!!binary`) stays and the value after it is judged: the tag was
/// taken for the value and the value passed. See: #16 (F2, F4).
#[test]
fn r16_a_yaml_tag_is_no_value() {
    for text in [
        "      MasterUserPassword: !Ref DBPassword\n",
        "      MasterUserPassword: !Sub '{{resolve:secretsmanager:${DBSecret}:SecretString:password}}'\n",
        "      AuthToken: !GetAtt Token.Value\n",
        "      Password: !ImportValue shared-db-password\n",
        "      SecretString: !Join [\"\", [!Ref Prefix, \"x\"]]\n",
        "      Password: !If [UseSecret, !Ref SecretPw, !Ref AWS::NoValue]\n",
        "      Password: !FindInMap [Env, !Ref Stage, DbPassword]\n",
        "      Password: !Select [0, !Split [\",\", !Ref Passwords]]\n",
        "      Password: !Sub \"${DbPassword}\"\n",
        "  password: !secret tuya_password\n",
        "  api_key: !env_var OPENAI_API_KEY\n",
        "  credentials: !include creds.yaml\n",
        "token: !!null\n",
        "password: !!str\n",
        "api_key: !!binary |\n",
        "password: !vault |\n",
    ] {
        assert_eq!(redacted_everywhere(text), text);
        assert_eq!(redacted_as_config(text), text);
    }
    for (text, want) in [
        ("password: !!str Hunter2xyz\n", "password: !!str [REDACTED]\n"),
        ("password: !!str 'Hunter2xyz'\n", "password: !!str '[REDACTED]'\n"),
        ("api_key: !!binary c2VjcmV0LWtleS0xMjM0NTY3ODk=\n", "api_key: !!binary [REDACTED]\n"),
        ("  password: !unsafe Hunter{2}xyz\n", "  password: !unsafe [REDACTED]\n"),
        ("  password: !Base64 Hunter2xyz\n", "  password: !Base64 [REDACTED]\n"),
        ("  password: !Sub Hunter2xyz\n", "  password: !Sub [REDACTED]\n"),
        // An unknown tag may be the password's own start in text that is no YAML.
        ("password: !Hunter2 xyz\n", "password: [REDACTED]\n"),
        ("password: !Hunter2xyz\n", "password: [REDACTED]\n"),
        // Not at a line's start, the value after the tag passed.
        ("{password: !!str Hunter2xyz}\n", "{password: !!str [REDACTED]}\n"),
    ] {
        assert_eq!(redacted_everywhere(text), want, "{text:?}");
    }
    // A block under a core tag loses its lines and keeps its header.
    let out = redacted_everywhere("api_key: !!binary |\n  c2VjcmV0LWtleS0xMjM0NTY3ODk=\nnext: 1\n");
    assert_eq!(out, "api_key: !!binary |\n  [REDACTED]\nnext: 1\n");
}

/// An anchor before a value is a node property, as a tag is (YAML 1.2.2, 6.9: `&pw`,
/// `&pw !!str` or `!!str &pw` before the content): compose files name a password once
/// and refer to it with `*pw`, and `password: &pw hunter2` kept its password, taken for
/// the anchor's value. Rust's `&mut`, `&'a` and a reference with no blank after it
/// (`&str`) are code, and an alias (`*pw`) names the node, so they stay.
#[test]
fn r16_an_anchor_before_a_value_is_no_value() {
    for (text, want) in [
        ("password: &pw hunter2xyz\n", "password: &pw [REDACTED]\n"),
        ("  password: &db_pw \"S3cr3t!pass\"\n", "  password: &db_pw \"[REDACTED]\"\n"),
        ("- api_key: &key Kq8pLmN3vR7tKx2WbY9cH\n", "- api_key: &key [REDACTED]\n"),
        ("password: &a !!str Hunter2xyz\n", "password: &a !!str [REDACTED]\n"),
        ("password: !!str &a Hunter2xyz\n", "password: !!str &a [REDACTED]\n"),
        ("x-db: {password: &pw Hunter2xyz}\n", "x-db: {password: &pw [REDACTED]}\n"),
    ] {
        assert_eq!(redacted_everywhere(text), want, "{text:?}");
        assert_eq!(redacted_as_config(text), want, "{text:?}");
    }
    for text in [
        "password: *pw\n",
        "password: &pw !Ref DbPassword\n",
        "password: &pw ${DB_PASSWORD}\n",
        "    password: &mut String,\n",
        "    password: &'a str,\n",
        "fn login(password: &str, token: &mut Token) {}\n",
        "let token: &Token = &session.token;\n",
    ] {
        assert_eq!(redacted_everywhere(text), text);
        assert_eq!(redacted_as_config(text), text);
    }
}

/// A shell parameter expansion is a reference: in `${DB_PASSWORD:?must be set}` the `:`
/// is the expansion's operator and what follows its message, which was taken for a
/// `name: value` pair's value (`${DB_PASSWORD:[REDACTED] be set}`). See: #16 (F6).
#[test]
fn r16_a_parameter_expansion_is_a_reference() {
    for text in [
        "DB_PASSWORD=${DB_PASSWORD:?must be set}\n",
        "  password: ${DB_PASSWORD:?DB_PASSWORD is required}\n",
        "export API_TOKEN=\"${API_TOKEN:?}\"\n",
    ] {
        assert_eq!(redacted_everywhere(text), text);
        assert_eq!(redacted_as_config(text), text);
    }
}

/// A default inside a parameter expansion is the secret's value whenever the variable is
/// unset (POSIX, 2.6.2: `${parameter:-word}`, `-`, `:=`, `=`, `:+`, `+`; Docker Compose
/// interpolates the same forms), so a literal there is judged as the name's own value
/// would be: `${POSTGRES_PASSWORD:-Hunter2xyz}` kept its password, the whole taken for a
/// reference. The expansion stays; an empty word, another expansion, a path, a word with
/// blanks or quotes, and `:?`'s message are not values.
#[test]
fn r16_a_default_in_a_parameter_expansion_is_a_value() {
    for (text, want) in [
        (
            "      POSTGRES_PASSWORD: ${POSTGRES_PASSWORD:-Hunter2xyz}\n",
            "      POSTGRES_PASSWORD: ${POSTGRES_PASSWORD:-[REDACTED]}\n",
        ),
        (
            "      - DB_PASSWORD=${DB_PASSWORD:-S3cr3tPass!}\n",
            "      - DB_PASSWORD=${DB_PASSWORD:-[REDACTED]}\n",
        ),
        ("password: \"${DB_PASS:=Tr0ub4dor3}\"\n", "password: \"${DB_PASS:=[REDACTED]}\"\n"),
        ("PASSWORD=${PASSWORD-hunter2xyz9}\n", "PASSWORD=${PASSWORD-[REDACTED]}\n"),
        ("export API_KEY=${API_KEY:-Kq8pLmN3vR7tKx2WbY9cH}\n", "export API_KEY=${API_KEY:-[REDACTED]}\n"),
        ("password: ${DB_PASSWORD:-postgres}\n", "password: ${DB_PASSWORD:-[REDACTED]}\n"),
        (
            "mysql -u root -p\"${MYSQL_ROOT_PASSWORD:-Hunter2xyz}\" app\n",
            "mysql -u root -p\"${MYSQL_ROOT_PASSWORD:-[REDACTED]}\" app\n",
        ),
    ] {
        assert_eq!(redacted_everywhere(text), want, "{text:?}");
        assert_eq!(redacted_as_config(text), want, "{text:?}");
    }
    for text in [
        "DB_PASSWORD=${DB_PASSWORD:-}\n",
        "DB_PASSWORD=${DB_PASSWORD:-$DEFAULT_PW}\n",
        "TOKEN=${TOKEN:-${OTHER_TOKEN}}\n",
        "SESSION_DIR=${SESSION_DIR:-/tmp/sessions}\n",
        "PASSWORD_FILE=${PASSWORD_FILE:-/run/secrets/db_password}\n",
        "TOKEN_LIMIT=${TOKEN_LIMIT:-4096}\n",
        "AUTH_MODE=${AUTH_MODE:-none}\n",
        "args=\"${PASSWORD:+--password=$PASSWORD}\"\n",
        "password: ${DB_PASSWORD:-not set yet}\n",
        "password: ${DB_PASSWORD:-\"\"}\n",
        "echo \"${#PASSWORD} characters\"\n",
        "password: ${DB_PASSWORD:?must be set}\n",
    ] {
        assert_eq!(redacted_everywhere(text), text);
        assert_eq!(redacted_as_config(text), text);
    }
}

/// `/etc/nsswitch.conf` names, for each database, the services that answer it
/// (nsswitch.conf(5)): `passwd:         files systemd` is a list of sources, which the
/// `name: value` reading took for a password. A line that starts with the database's name
/// and lists services (each a lower-case name, one of them a service the manual or
/// nss-systemd documents) and `[STATUS=action]` items is left alone; a typed value under
/// `passwd:` is still one. See: #16 (F3).
#[test]
fn r16_nsswitch_sources_are_no_password() {
    for text in [
        "passwd:         files systemd\n",
        "shadow:         files\n",
        "passwd: compat\n",
        "passwd:     files sss [NOTFOUND=return] ldap # users\n",
        "passwd: files altfiles sss\n",
    ] {
        assert_eq!(redacted_everywhere(text), text);
        assert_eq!(redacted_as_config(text), text);
    }
    for (text, secret) in [
        ("passwd: Hunter2xyz\n", "Hunter2xyz"),
        ("passwd: hunter2\n", "hunter2"),
        ("passwd: files Hunter2xyz\n", "Hunter2xyz"),
        ("  passwd: files\n", "files"),
        ("password: files\n", "files"),
    ] {
        assert!(!redacted_everywhere(text).contains(secret), "{text:?}");
    }
}

/// What a template or a deployment tool fills in is no value, under any rule: found taken
/// for a password by an attack on the entry reading, and by the `name: value` rule alike.
#[test]
fn values_filled_in_by_tools_are_kept() {
    for v in [
        "secretref:db-password",
        "keyvault:db-password",
        "sm://db-password",
        "file:///run/secrets/db_password",
        "projects/my-proj/secrets/db-password/versions/latest",
        "'#{DbPassword}#'",
        "'@@DB_PASSWORD@@'",
        "\"[parameters('sqlAdminPassword')]\"",
        "'@Model.Password'",
        "\"<%= ENV['DB_PASSWORD'] %>\"",
        "<path:secret/data/db#password>",
    ] {
        for text in [format!("password: {v}\n"), format!("- name: DB_PASSWORD\n  value: {v}\n")] {
            assert_eq!(redacted_everywhere(&text), text);
        }
    }
    // A password that starts like one of them is still one.
    assert_eq!(redacted_everywhere("password: @dm1n.Hunter2\n"), "password: [REDACTED]\n");
}

/// What code writes beside a secret's name is no value when the value is code itself: a
/// member (`Name.Variable`, `self.key_password`), a call up to its first quote, a
/// constant's small number. Found on the Python standard library read as code.
#[test]
fn code_beside_a_secrets_name_is_kept() {
    for text in [
        "if token is Name.Variable:\n",
        "    key_password=self.key_password,\n",
        "        client_token=self._get_param(\"clientToken\"),\n",
        "PASS = 20\n",
        "sig = quote_spanned! {span=> x}\n",
        "auth = f\"{auth}:{password}\"\n",
        "password = f\"{registry_id}-auth-token\"\n",
    ] {
        assert_eq!(redacted_everywhere(text), text);
        assert_eq!(redacted_as_code(text), text);
    }
    for (text, secret) in [
        ("password = 8BYGG6sYILlALc!\n", "8BYGG6sYILlALc"),
        ("the token is Walrus.Granite3933\n", "Walrus.Granite3933"),
        ("DB_PASSWORD = 4821\n", "4821"),
        ("    key_password=Kx9mQ2vLp7zT,\n", "Kx9mQ2vLp7zT"),
        ("password = f\"{prefix}Hunter2xyz\"\n", "Hunter2xyz"),
    ] {
        assert!(!redacted_everywhere(text).contains(secret), "{text:?}");
    }
}

fn redacted_as_code(text: &str) -> String {
    let mut o = Vec::new();
    filter::run_as(filter::Kind::Code, text.as_bytes(), &mut o).expect("writing to a Vec does not fail");
    String::from_utf8(o).expect("the filter keeps UTF-8")
}

/// A key a generator printed in hex, under a name that says key without saying whose
/// (`routing_key`, `validationKey`, `--certificate-key`): as long as a digest, and the
/// name makes it a key; a key of a data structure (`cache_key`, `sort_key`) stays, and
/// so does a digest under a name that says digest. Found by the unlisted corpus.
#[test]
fn a_hex_key_under_a_keys_name_is_redacted_and_a_data_structures_is_not() {
    let hex32 = "dfc5f924d590f9005a6682669566be04";
    let hex64 = "3445c47daf4fd13bfb6eb0c316eba2ac4649cfc4d7b7bdc8bf3276417af61752";
    for text in [
        format!("routing_key = \"{hex32}\"\n"),
        format!("      - routing_key: {hex32}\n"),
        format!("<machineKey validationKey=\"{}\" validation=\"HMACSHA256\" />\n", hex64.to_uppercase()),
        format!("kubeadm join 10.0.0.10:6443 --control-plane --certificate-key {hex64}\n"),
    ] {
        let out = redacted_everywhere(&text);
        assert!(
            !out.to_lowercase().contains(&hex32[..16]) && !out.to_lowercase().contains(&hex64[..16]),
            "{text:?} -> {out:?}"
        );
    }
    for text in [
        format!("cache_key = \"{hex32}\"\n"),
        format!("sort_key: {hex32}\n"),
        format!("checksum = \"{hex64}\"\n"),
        format!("git show {}\n", &hex64[..40]),
        format!("gpg --recv-keys {}\n", hex64[..40].to_uppercase()),
    ] {
        assert_eq!(redacted_everywhere(&text), text);
    }
}

/// A token whose letters and digits interleave is no name made of words, however many
/// vowels it has: one of the catalogue's random examples passed as words.
#[test]
fn interleaved_letters_and_digits_are_no_words() {
    let text = "session.auth = HTTPBasicAuth('deploy', 'Q7x8gysamCacrdtQBrWrm3fWpr3sbeocsPba')\n";
    assert!(!redacted_everywhere(text).contains("Q7x8gysam"));
    for name in ["utf8ToUtf16", "sha256sum", "base64url", "ipv4Address"] {
        assert!(super::value::is_made_of_words(name.as_bytes()), "{name}");
    }
}

/// Found by the unlisted corpus: a value that starts with the separator's own `=`
/// (`password = =!q7h…`), SSSD's `authtok`, a password of words under a token's name,
/// kickstart's `rootpw`.
#[test]
fn config_forms_nobody_listed() {
    for (text, secret) in [
        ("password = =!q7hRoqiOa2O2\n", "q7hRoqiOa2O2"),
        ("+passwd = =59D%qrxT#2qyATtDf#z7p\n", "qrxT#2qy"),
        ("ldap_default_authtok = fjord.basil.tundra.lantern5\n", "fjord.basil"),
        ("rootpw --plaintext HFbETH5P33!7Xpp=-fKcf\n", "HFbETH5P33"),
    ] {
        assert!(!redacted_everywhere(text).contains(secret), "{text:?} -> {:?}", redacted_everywhere(text));
    }
    for text in [
        "ldap_default_authtok_type = password\n",
        "rootpw --lock\n",
        "if a == b:\n",
        "x = ==y\n",
        "session.token = config.auth.token\n",
    ] {
        assert_eq!(redacted_everywhere(text), text);
    }
}

/// An IAM policy's statement ids (`"Sid": "S3Access"`) are names, not session ids: a
/// `sid` holds a secret only when a generator made the value. A word and a number
/// (`Stmt1546968495000`) is not made by one. Found in AWS SDKs' and moto's sources.
#[test]
fn statement_ids_are_names() {
    for text in [
        "{\"Sid\":\"S3Access\",\"Effect\":\"Allow\"}\n",
        "{\"Sid\": \"AllowCloudTrailLogs2023\", \"Effect\": \"Allow\"}\n",
        "            \"Sid\": \"Stmt1546968495000\",\n",
    ] {
        assert_eq!(redacted_everywhere(text), text);
    }
    for (text, secret) in [
        ("Cookie: sid=Kx9mQ2vLp7zTq8Wn4Rb6\n", "Kx9mQ2vLp7zTq8Wn4Rb6"),
        ("PHPSESSID=h8f3k2m9q1w7e5r4t6y0u2i3o\n", "h8f3k2m9q1w7e5r4t6y0u2i3o"),
    ] {
        assert!(!redacted_everywhere(text).contains(secret), "{text:?}");
    }
}

/// An object or block keyed by a secret's own name gives its value in a key of its own:
/// `terraform output -json`, HCL's `output` and `variable` blocks.
#[test]
fn the_value_of_an_object_keyed_by_a_secrets_name_is_judged_by_that_name() {
    for (text, want) in [
        (
            "{\n  \"db_password\": {\n    \"sensitive\": true,\n    \"type\": \"string\",\n    \"value\": \"Kestrel.Velvet1120\"\n  }\n}\n",
            "{\n  \"db_password\": {\n    \"sensitive\": true,\n    \"type\": \"string\",\n    \"value\": \"[REDACTED]\"\n  }\n}\n",
        ),
        (
            "output \"db_password\" {\n  value     = \"Sequoia+Fjord3176\"\n  sensitive = true\n}\n",
            "output \"db_password\" {\n  value     = \"[REDACTED]\"\n  sensitive = true\n}\n",
        ),
        (
            "variable \"api_token\" {\n  type    = string\n  default = \"q8Zt3mWk29LxPvR7nB4c\"\n}\n",
            "variable \"api_token\" {\n  type    = string\n  default = \"[REDACTED]\"\n}\n",
        ),
        (
            "db_password = {\n  value = \"nectar.falcon.velvet.sequoia41\"\n}\n",
            "db_password = {\n  value = \"[REDACTED]\"\n}\n",
        ),
    ] {
        for ((view, shown), (_, wanted)) in views_of(text).into_iter().zip(views_of(want)) {
            assert_eq!(redacted_in_pieces(&shown), wanted, "{view}: {shown:?}");
        }
    }
    for text in [
        // Past the object's closing brace, a `value` is another thing's.
        "{\n  \"db_password\": {\n    \"sensitive\": true\n  },\n  \"value\": \"Kestrel.Velvet1120\"\n}\n",
        "output \"db_password\" {\n  sensitive = true\n}\nvalue = \"Sequoia+Fjord3176\"\n",
        // Keys that are not the value; a name that is no secret's; a reference, a word.
        "output \"db_password\" {\n  description = \"Kestrel.Velvet1120\"\n}\n",
        "output \"db_host\" {\n  value = \"Kestrel.Velvet1120\"\n}\n",
        "variable \"db_password\" {\n  default = var.fallback_password\n}\n",
        "\"password_policy\": {\n  \"value\": \"strict\"\n}\n",
        // Something after the brace: not an object opened on its own line.
        "\"db_password\": { \"sensitive\": true }\n  \"value\": \"Kestrel.Velvet1120\"\n",
    ] {
        for (view, shown) in views_of(text) {
            assert_eq!(redacted_in_pieces(&shown), shown, "{view}: {shown:?}");
        }
    }
}

/// Files that give a credential by position, no name beside it (PgBouncer's userlist,
/// Postfix's sasl_passwd, rsyncd's secrets, pppd's CHAP secrets), shown by `cat`, `cat -n`
/// or an agent's `Read`: only their path says what the lines are. The secret field goes,
/// the rest of the line stays, and a later mention of the secret goes too.
#[test]
fn files_that_give_a_secret_by_position_lose_it_when_shown() {
    for (path, file, red) in [
        (
            "/etc/pgbouncer/userlist.txt",
            "\"app\" \"Velvet#Fjord3620\"\n\"report\" \"ember_mango_cactus63\"\n",
            "\"app\" \"[REDACTED]\"\n\"report\" \"[REDACTED]\"\n",
        ),
        (
            "/etc/postfix/sasl_passwd",
            "[smtp.gmail.com]:587 alerts@acme.test:rmvpzkdjvjddlfwi\n",
            "[smtp.gmail.com]:587 alerts@acme.test:[REDACTED]\n",
        ),
        (
            "/etc/ppp/chap-secrets",
            "# client server secret IP\nalice * \"Kq8pLmN3vR7t\" *\n",
            "# client server secret IP\nalice * \"[REDACTED]\" *\n",
        ),
    ] {
        let cmd = format!("$ cat {path}\n");
        assert_eq!(redacted_in_pieces(&format!("{cmd}{file}$ \n")), format!("{cmd}{red}$ \n"), "{path}");
        // `cat -n`'s line numbers are no field.
        let out = redacted_in_pieces(&format!("$ cat -n {path}\n{}", cat_n(file)));
        assert_eq!(out, format!("$ cat -n {path}\n{}", cat_n(red)), "{path}");
        let record = serde_json::json!({
            "type": "user",
            "message": {"role": "user", "content": [
                {"tool_use_id": "toolu_01", "type": "tool_result", "content": file}]},
            "toolUseResult": {"type": "text", "file": {"filePath": path, "content": file}},
        })
        .to_string();
        let out = redact_json_line(&record, &mut Report::default()).into_owned();
        let want =
            record.replace(&serde_json::to_string(file).unwrap(), &serde_json::to_string(red).unwrap());
        assert_eq!(out, want, "{path}");
    }
    // A file named for secrets is shown as one whole secret a line, by `cat`; read by
    // position when an agent's `Read` names it.
    let shown = "$ cat /etc/rsyncd.secrets\nbackup:Qn4vTz8rWx2p\n$ \n";
    assert_eq!(redacted_in_pieces(shown), "$ cat /etc/rsyncd.secrets\n[REDACTED]\n$ \n");
    let record = serde_json::json!({"type": "user", "toolUseResult": {"type": "text",
        "file": {"filePath": "/etc/rsyncd.secrets", "content": "backup:Qn4vTz8rWx2p\n"}}})
    .to_string();
    let out = redact_json_line(&record, &mut Report::default()).into_owned();
    assert!(out.contains("backup:[REDACTED]"), "{out}");
    // The secret quoted later in the conversation goes with it, whatever it looks like.
    let shown = "$ cat /etc/postfix/sasl_passwd\n[smtp.gmail.com]:587 a@b.test:rmvpzkdjvjddlfwi\n$ \nThe relay password rmvpzkdjvjddlfwi is set.\n";
    assert!(!redacted_in_pieces(shown).contains("rmvpzkdjvjddlfwi"));
    // Another file of that name, a listing, a pipe: the lines are not read by position.
    for text in [
        "$ cat notes/userlist.txt\n\"alice\" \"Kx8vQ2mZp4\"\n",
        "$ ls -l /etc/postfix/sasl_passwd\n-rw------- 1 root root 61 Jan 1 10:00 /etc/postfix/sasl_passwd\n",
        "$ cat /etc/postfix/sasl_passwd | wc -l\n1\n",
        // Prose after the file's output has more fields than an entry.
        "$ cat /etc/ppp/chap-secrets\nThe quick brown fox jumps\nmake: Nothing to be done\n",
    ] {
        assert_eq!(redacted_in_pieces(text), text);
    }
}

/// A default given to a reference to a secret's name is that name's value whenever the
/// reference is unset: Ruby's `ENV.fetch` block, Spring's `${name:default}`, code's `||`,
/// `??` and `or`. The reference stays, and so do defaults that are no secret.
#[test]
fn a_default_given_to_a_secrets_reference_is_judged_as_its_value() {
    for (text, want) in [
        (
            "password: <%= ENV.fetch(\"DB_PASSWORD\") { \"Tundra.Kestrel324\" } %>\n",
            "password: <%= ENV.fetch(\"DB_PASSWORD\") { \"[REDACTED]\" } %>\n",
        ),
        ("password: ${DB_PASSWORD:Tundra.Kestrel324}\n", "password: ${DB_PASSWORD:[REDACTED]}\n"),
        (
            "spring.datasource.password=${spring.datasource.password:Walrus.Granite3933}\n",
            "spring.datasource.password=${spring.datasource.password:[REDACTED]}\n",
        ),
        (
            "const password = process.env.DB_PASSWORD || \"Tundra.Kestrel324\";\n",
            "const password = process.env.DB_PASSWORD || \"[REDACTED]\";\n",
        ),
        (
            "return process.env.API_KEY ?? 'q8Zt3mWk29LxPvR7nB4c'\n",
            "return process.env.API_KEY ?? '[REDACTED]'\n",
        ),
        (
            "token = os.environ.get(\"GITHUB_TOKEN\") or \"Qx8vTz2rWp4mNb6c\"\n",
            "token = os.environ.get(\"GITHUB_TOKEN\") or \"[REDACTED]\"\n",
        ),
    ] {
        for ((view, shown), (_, wanted)) in views_of(text).into_iter().zip(views_of(want)) {
            assert_eq!(redacted_in_pieces(&shown), wanted, "{view}: {shown:?}");
        }
    }
    for text in [
        "const t = token || \"\";\n",
        "password: process.env.DB_PASSWORD || \"changeme\",\n",
        "const mode = process.env.NODE_ENV || \"development\";\n",
        "if (token) { \"x\" }\n",
        "name: ${app.name:demo}\n",
        "port: ${server.port:8080}\n",
        "url: ${DB_URL:jdbc:postgresql://localhost/app}\n",
        "const label = user.name || \"Kx8vQ2mZp4Lw\";\n",
    ] {
        for (view, shown) in views_of(text) {
            assert_eq!(redacted_in_pieces(&shown), shown, "{view}: {shown:?}");
        }
    }
}

/// A Markdown table whose column names a key gives each cell that name, through the
/// whole redactor: the header's line reaches the table's reading though no `=` or `:`
/// follows the name, a delimiter row of single hyphens counts, and a code span's
/// backticks stay.
#[test]
fn a_markdown_tables_key_column_loses_its_keys() {
    for (text, want) in [
        (
            "| Service | API key |\n| --- | --- |\n| Stripe | q8Zt3mWk29LxPvR7nB4cq8Zt |\n",
            "| Service | API key |\n| --- | --- |\n| Stripe | [REDACTED] |\n",
        ),
        (
            "| Service | Key |\n|:--|:--|\n| Algolia | `922a30cf94fb24b17e333c00702c878f` |\n| Docs | `see the wiki` |\n",
            "| Service | Key |\n|:--|:--|\n| Algolia | `[REDACTED]` |\n| Docs | `see the wiki` |\n",
        ),
    ] {
        for ((view, shown), (_, wanted)) in views_of(text).into_iter().zip(views_of(want)) {
            assert_eq!(redacted_in_pieces(&shown), wanted, "{view}: {shown:?}");
        }
    }
    // A key of a keyboard, a column of words; a column whose name ends in `pass` holding
    // sentences (undici's documentation).
    for text in [
        "| Key | Action |\n|---|---|\n| Ctrl+C | copy |\n| F5 | reload the page |\n",
        "| Matcher type | Condition to pass          |\n|:------------:| -------------------------- |\n| `string`     | Exact match against string |\n| `RegExp`     | Regex must pass            |\n",
    ] {
        assert_eq!(redacted_in_pieces(text), text);
    }
}

/// An object or an array under a JSON key named like a secret is no value: botocore's
/// service models (`"DisableS3ExpressSessionAuth":{"value":true}`) came out as
/// `[REDACTED]""`, broken JSON. Found by an attack on real files of this machine.
#[test]
fn a_collection_under_a_secrets_json_key_is_no_value() {
    for text in [
        "\"DisableS3ExpressSessionAuth\":{\"value\":true}\n",
        "        \"TokenValue\":{\"type\":\"long\"},\n",
        "\"token\":[\"a\",\"b\"]\n",
    ] {
        for (view, shown) in views_of(text) {
            assert_eq!(redacted_in_pieces(&shown), shown, "{view}: {shown:?}");
        }
    }
    assert_eq!(redact("\"api_token\":\"Kx8vQ2mZp4Lw9Rt5\"\n"), "\"api_token\":\"[REDACTED]\"\n");
}
