//! The redaction corpus: recall and false-positive rate of `lokust::redact` over realistic
//! shell history, with the original tool's 11 patterns measured on the same lines for
//! comparison. Regenerate the corpus with `fixtures/redaction/generate.py`.

use std::borrow::Cow;

use lokust::redact::{self, REDACTED, Report};
use regex::Regex;

const CORPUS: &str = include_str!("../fixtures/redaction/corpus.jsonl");

struct Case {
    line: String,
    secrets: Vec<String>,
}

fn corpus() -> Vec<Case> {
    CORPUS
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("corpus line is JSON");
            Case {
                line: v["line"].as_str().unwrap().to_string(),
                secrets: v["secrets"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|s| s.as_str().unwrap().to_string())
                    .collect(),
            }
        })
        .collect()
}

/// The original tool's patterns, as its documentation describes them.
fn original(text: &str) -> String {
    let patterns = [
        r"gh[pousr]_[A-Za-z0-9_]{36,}",
        r"ghr_[A-Za-z0-9_]{36,}",
        r"sk-ant-api[A-Za-z0-9_\-]+",
        r"sk-[A-Za-z0-9_\-]{20,}",
        r"(?:AKIA|ASIA)[A-Z0-9]{16}",
        r"dop_v1_[a-f0-9]{64}",
        r"DO00[A-Z0-9]{16}",
        r"(?:SK|AC)[0-9a-f]{32}",
        r"[A-Za-z0-9+/=_\-]{40,}",
        r"eyJ[A-Za-z0-9_\-]+\.eyJ[A-Za-z0-9_\-]+\.[A-Za-z0-9_\-]+",
        r"-----BEGIN [A-Z ]*PRIVATE KEY-----",
    ];
    let mut out = text.to_string();
    for p in patterns {
        out = Regex::new(p).unwrap().replace_all(&out, REDACTED).into_owned();
    }
    out
}

struct Score {
    recall: f64,
    fp_rate: f64,
    misses: Vec<String>,
    false_positives: Vec<String>,
}

fn score(cases: &[Case], f: impl Fn(&str) -> String) -> Score {
    let (mut pos, mut caught, mut neg, mut fp) = (0, 0, 0, 0);
    let mut misses = Vec::new();
    let mut false_positives = Vec::new();
    for c in cases {
        let out = f(&c.line);
        if c.secrets.is_empty() {
            neg += 1;
            if out != c.line {
                fp += 1;
                false_positives.push(format!("{:?}\n  -> {:?}", c.line, out));
            }
        } else {
            pos += 1;
            if out.contains(REDACTED) && c.secrets.iter().all(|s| !out.contains(s.as_str())) {
                caught += 1;
            } else {
                misses.push(format!("{:?}\n  -> {:?}", c.line, out));
            }
        }
    }
    Score { recall: caught as f64 / pos as f64, fp_rate: fp as f64 / neg as f64, misses, false_positives }
}

#[test]
fn corpus_recall_and_false_positive_rate() {
    let cases = corpus();
    let secret = cases.iter().filter(|c| !c.secrets.is_empty()).count();
    assert!(cases.len() >= 1000, "the corpus needs at least 1,000 lines");
    let ours = score(&cases, |l| redact::redact(l).into_owned());
    let old = score(&cases, original);
    println!("corpus: {} lines ({} with secrets, {} harmless)", cases.len(), secret, cases.len() - secret);
    println!("lokust:            recall {:.4}  false-positive rate {:.4}", ours.recall, ours.fp_rate);
    println!("original patterns: recall {:.4}  false-positive rate {:.4}", old.recall, old.fp_rate);
    if std::env::var_os("LOKUST_CORPUS_VERBOSE").is_some() {
        println!("misses:\n{}", ours.misses.join("\n"));
        println!("false positives:\n{}", ours.false_positives.join("\n"));
    }
    assert!(
        ours.recall >= 0.99 && ours.fp_rate <= 0.01,
        "recall {:.4}, false-positive rate {:.4}\nmisses:\n{}\nfalse positives:\n{}",
        ours.recall,
        ours.fp_rate,
        ours.misses.join("\n"),
        ours.false_positives.join("\n")
    );
}

#[test]
fn corpus_lines_through_the_filter_match_redact() {
    // The streaming filter and the one-shot API must agree, line for line.
    let cases = corpus();
    let mut input = String::new();
    let mut expected = String::new();
    let mut want = Report::default();
    for c in &cases {
        input.push_str(&c.line);
        input.push('\n');
        expected.push_str(&redact::redact_report(&c.line, &mut want));
        expected.push('\n');
    }
    // Tiny buffers split lines and PEM blocks across reads; the default one does not.
    for cap in [1, 13, 256, 64 * 1024] {
        let mut out = Vec::new();
        let reader = std::io::BufReader::with_capacity(cap, input.as_bytes());
        let got = redact::filter::run(reader, &mut out).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), expected, "buffer of {cap} bytes");
        assert_eq!((got.lines, got.values), (want.lines, want.values));
    }
}

#[test]
fn corpus_lines_inside_json_strings() {
    for c in corpus().iter().filter(|c| !c.secrets.is_empty()).take(200) {
        let rec = serde_json::json!({"type": "tool_use", "input": {"command": c.line}}).to_string();
        let mut r = Report::default();
        let out = redact::redact_json_line(&rec, &mut r);
        assert!(matches!(out, Cow::Owned(_)), "{rec}");
        serde_json::from_str::<serde_json::Value>(&out).expect("still JSON");
        for s in &c.secrets {
            let escaped = serde_json::to_string(s).unwrap();
            assert!(!out.contains(escaped.trim_matches('"')), "{rec} -> {out}");
        }
    }
}

#[test]
fn redacting_twice_changes_nothing() {
    for c in corpus() {
        let once = redact::redact(&c.line).into_owned();
        let mut r = Report::default();
        let twice = redact::redact_report(&once, &mut r);
        assert!(matches!(twice, Cow::Borrowed(_)), "{:?} -> {once:?} -> {twice:?}", c.line);
        assert_eq!(r.values, 0);
    }
}

/// `lokust-shell redact` as users run it: a filter over stdin or files, with --explain.
mod cli {
    use crate::util::TestEnv;

    const TOKEN: &str = "ghp_R7c2Qm9XvLp4Tn8Ws1Yd6Hb3Kf5Jg0Ae2Zx9";

    #[test]
    fn filters_stdin_and_files_and_explains_without_the_secret() {
        let env = TestEnv::new();
        let mut input = format!(
            "export GITHUB_TOKEN={TOKEN}\ngit log 3f2a1b9c0d4e5f60718293a4b5c6d7e8f9012345\nplain \u{e9}"
        )
        .into_bytes();
        input.push(0xff);
        let out = env
            .cmd("lokust-shell")
            .args(["redact", "--explain"])
            .write_stdin(input.clone())
            .assert()
            .success();
        let stdout = out.get_output().stdout.clone();
        let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
        let mut expected =
            b"export GITHUB_TOKEN=[REDACTED]\ngit log 3f2a1b9c0d4e5f60718293a4b5c6d7e8f9012345\n".to_vec();
        expected.extend_from_slice(&input[input.len() - 9..]);
        assert!(expected.ends_with(b"plain \xc3\xa9\xff"));
        assert_eq!(String::from_utf8_lossy(&stdout), String::from_utf8_lossy(&expected));
        assert_eq!(stdout, expected, "harmless bytes, invalid UTF-8 included, pass unchanged");
        assert!(
            stderr.starts_with("redacted 1 value on 1 line") && stderr.contains("github-token"),
            "{stderr}"
        );
        assert!(!stderr.contains(TOKEN));

        let file = env.write("h.txt", format!("curl -u admin:{TOKEN} https://x\n"));
        let out =
            env.cmd("lokust-shell").arg("redact").arg(&file).arg("-").write_stdin("ls\n").assert().success();
        assert_eq!(
            String::from_utf8_lossy(&out.get_output().stdout),
            "curl -u admin:[REDACTED] https://x\nls\n"
        );
        assert!(out.get_output().stderr.is_empty());

        let out = env.cmd("lokust-shell").args(["redact", "missing.txt"]).assert().code(2);
        let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
        assert!(stderr.starts_with("lokust: could not read missing.txt"), "{stderr}");
    }

    /// The echo of a secret found once, in text and in a transcript, with nothing around
    /// it that says what it is; and a value found in one input is not chased in the next.
    #[test]
    fn a_secret_found_once_is_replaced_where_it_comes_again() {
        let env = TestEnv::new();
        let text = "password = Kx9#mQ2vLp7zT\nsaid: Kx9#mQ2vLp7zT works\nplain Kx9#mQ2 stays\n";
        let out = env.cmd("lokust-shell").args(["redact", "--explain"]).write_stdin(text).assert().success();
        assert_eq!(
            String::from_utf8_lossy(&out.get_output().stdout),
            "password = [REDACTED]\nsaid: [REDACTED] works\nplain Kx9#mQ2 stays\n"
        );
        let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
        assert!(stderr.starts_with("redacted 2 values on 2 lines") && stderr.contains("echo"), "{stderr}");

        let records = [
            serde_json::json!({"content": "export API_TOKEN=tq7Rk2Wn9Xc4Lp8Hv3Bd6Fm1"}),
            serde_json::json!({"content": "the token tq7Rk2Wn9Xc4Lp8Hv3Bd6Fm1 is set"}),
        ];
        let input = records.iter().map(|r| format!("{r}\n")).collect::<String>();
        let out = env
            .cmd("lokust-shell")
            .args(["redact", "--as", "transcript"])
            .write_stdin(input)
            .assert()
            .success();
        let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
        assert!(!stdout.contains("tq7Rk2Wn9Xc4Lp8Hv3Bd6Fm1"), "{stdout}");
        for line in stdout.lines() {
            serde_json::from_str::<serde_json::Value>(line).unwrap();
        }

        let first = env.write("a.txt", "password = Kx9#mQ2vLp7zT\n");
        let second = env.write("b.txt", "said: Kx9#mQ2vLp7zT\n");
        let out = env.cmd("lokust-shell").arg("redact").arg(&first).arg(&second).assert().success();
        assert_eq!(
            String::from_utf8_lossy(&out.get_output().stdout),
            "password = [REDACTED]\nsaid: Kx9#mQ2vLp7zT\n"
        );
    }

    #[test]
    fn a_slow_pipe_gets_each_line_as_it_comes() {
        slow_pipe(&["redact"], |i| {
            (
                vec!["token=".into(), TOKEN.into(), format!(" {i}"), "\n".into()],
                format!("token=[REDACTED] {i}"),
            )
        });
    }

    #[test]
    fn a_slow_pipe_gets_each_record_as_it_comes() {
        slow_pipe(&["redact", "--as", "transcript"], |i| {
            (
                vec![r#"{"cmd":"token="#.into(), TOKEN.into(), format!(r#"","i":{i}}}"#), "\n".into()],
                format!(r#"{{"cmd":"token=[REDACTED]","i":{i}}}"#),
            )
        });
    }

    /// Three lines written to `lokust-shell ARGS` in pieces, with pauses, each answered
    /// while standard input is still open. `line(i)` gives the pieces and the answer.
    fn slow_pipe(args: &[&str], line: impl Fn(usize) -> (Vec<String>, String)) {
        use std::io::{BufRead, BufReader, Write};
        use std::process::{Command, Stdio};
        use std::sync::mpsc;
        use std::time::Duration;
        let mut child = Command::new(assert_cmd::cargo::cargo_bin("lokust-shell"))
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let _ = tx.send(line.unwrap());
            }
        });
        for i in 0..3 {
            let (pieces, want) = line(i);
            // In pieces, as a slow writer sends them: the line is only whole at the newline.
            for piece in pieces {
                stdin.write_all(piece.as_bytes()).unwrap();
                stdin.flush().unwrap();
                std::thread::sleep(Duration::from_millis(20));
            }
            // Answered while stdin is still open: the filter does not wait for the end.
            let got = rx.recv_timeout(Duration::from_secs(10));
            if got.is_err() {
                let _ = child.kill();
            }
            assert_eq!(got.expect("no line within 10 s"), want);
        }
        drop(stdin);
        assert!(child.wait().unwrap().success());
    }
}

/// Issue 10, item 13: a substitution that writes a secret (`sed -i`, `perl -pi`) had its
/// pattern redacted and its secret kept. The secret goes; the pattern, the delimiters and
/// the flags stay.
#[test]
fn r10_13_a_secret_written_by_a_substitution_is_redacted() {
    let env = crate::util::TestEnv::new();
    let cases = [
        (
            "sed -i 's/PASSWORD=.*/PASSWORD=hunter2secret/' .env",
            "sed -i 's/PASSWORD=.*/PASSWORD=[REDACTED]/' .env",
        ),
        (
            "sed -i 's/API_KEY=[^ ]*/API_KEY=sk-live-9f8e7d6c5b4a/g' app.env",
            "sed -i 's/API_KEY=[^ ]*/API_KEY=[REDACTED]/g' app.env",
        ),
        (
            "perl -pi -e 's/PASSWORD=.*/PASSWORD=s3cr3tPass/' .env",
            "perl -pi -e 's/PASSWORD=.*/PASSWORD=[REDACTED]/' .env",
        ),
        (
            "sed -i 's/^DB_PASSWORD=.*/DB_PASSWORD=Zx9#kLm2/' config.env",
            "sed -i 's/^DB_PASSWORD=.*/DB_PASSWORD=[REDACTED]/' config.env",
        ),
    ];
    for (line, want) in cases {
        let out = env.cmd("lokust-shell").arg("redact").write_stdin(format!("{line}\n")).assert().success();
        assert_eq!(String::from_utf8_lossy(&out.get_output().stdout), format!("{want}\n"), "{line}");
    }
}

/// Real file formats and prompts, in the syntax their documentation gives, with secrets
/// planted, read the ways an agent reads them: plain, numbered by Claude Code's `Read`
/// (`     3→`), by `cat -n` and `nl` (`     3\t`), by `grep -n` (`path:3:`), as the added
/// side of a unified diff, and each of those inside the JSON string of a `tool_result`.
/// The values are made up here, away from the rules' own examples.
mod forms {
    use lokust::redact::{self, Report};

    /// An OpenSSH private key block: the format's magic, then made-up base64.
    fn openssh_key() -> (String, Vec<String>) {
        let mut s = 0x9e37_79b9_7f4a_7c15u64;
        let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let mut body =
            vec!["b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW".to_string()];
        for _ in 0..5 {
            let line: String = (0..70)
                .map(|_| {
                    s ^= s << 13;
                    s ^= s >> 7;
                    s ^= s << 17;
                    alphabet[(s % 64) as usize] as char
                })
                .collect();
            body.push(line);
        }
        body.push("Qm9iQGxhcHRvcAECAwQFBgc=".to_string());
        let text = format!(
            "-----BEGIN OPENSSH PRIVATE KEY-----\n{}\n-----END OPENSSH PRIVATE KEY-----\n",
            body.join("\n")
        );
        (text, body)
    }

    fn gcp_service_account() -> (String, Vec<String>) {
        let (pem, body) = openssh_key();
        let pem = pem.replace("OPENSSH PRIVATE KEY", "PRIVATE KEY");
        let doc = serde_json::json!({
            "type": "service_account",
            "project_id": "acme-prod-4821",
            "private_key_id": "5e1f0c9a7b3d2e8f6a4c1b9d7e3f5a2c8b6d4e1f",
            "private_key": pem,
            "client_email": "deployer@acme-prod-4821.iam.gserviceaccount.com",
            "client_id": "104857263918475620193",
            "token_uri": "https://oauth2.googleapis.com/token"
        });
        // `private_key_id` names the key, as an access key id does; it is not asked for.
        (serde_json::to_string_pretty(&doc).unwrap(), body)
    }

    /// (path, content, secrets)
    fn files() -> Vec<(&'static str, String, Vec<String>)> {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let (key, key_body) = openssh_key();
        let (sa, sa_secrets) = gcp_service_account();
        vec![
            (
                ".aws/credentials",
                "[default]\naws_access_key_id = AKIAQ7XMPLV3KD2RTW5N\naws_secret_access_key = 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\n\n[prod]\naws_access_key_id=AKIAR3HNV5QW2KXZTY4M\naws_secret_access_key=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\n".into(),
                s(&["AKIAQ7XMPLV3KD2RTW5N", "9fKq2Lw8Zr1Tn5Vb7Xc3Md6Pj0Hs4Gy2Ue8Ia1Ob", "AKIAR3HNV5QW2KXZTY4M", "Tz5Rm8Kp1Wq4Ln7Xb2Vc9Hd3Js6Fg0Ya5Ue8Io2P"]),
            ),
            (
                ".netrc",
                "machine api.example.org\n  login deploy\n  password Vq7Lm2Nx9Rt4\nmachine ftp.example.net login anon password Hp3Ws8Kd1Zq6\n".into(),
                s(&["Vq7Lm2Nx9Rt4", "Hp3Ws8Kd1Zq6"]),
            ),
            (".my.cnf", "[client]\nuser = app\npassword = \"Rk4mQ9zTw2x\"\nhost = db.internal\n".into(), s(&["Rk4mQ9zTw2x"])),
            (
                "wg0.conf",
                "[Interface]\nAddress = 10.0.0.2/24\nPrivateKey = cK9mW2xQ7vR4tL8nB3zH6jF1dS5aG0pY+eU2iO7wXkM=\nListenPort = 51820\n\n[Peer]\nPublicKey = Hq1Zx8Lm3Vn6Rt9Wk2Pd5Fs7Jb0Gc4Ya8Ue1Io3Nw5A=\nPresharedKey = Pn4Xk7Lq2Vz9Rw1Tm6Hd3Fs8Jb5Gc0Ya2Ue7Io4Nw1E=\nEndpoint = vpn.example.org:51820\nAllowedIPs = 0.0.0.0/0\n".into(),
                s(&["cK9mW2xQ7vR4tL8nB3zH6jF1dS5aG0pY+eU2iO7wXkM=", "Pn4Xk7Lq2Vz9Rw1Tm6Hd3Fs8Jb5Gc0Ya2Ue7Io4Nw1E="]),
            ),
            (
                "mysite/settings.py",
                "DEBUG = False\nSECRET_KEY = 'x7#k@q2m!v9z$w4p&r8t*n3b^h6j(l1d)f5g'\nDATABASES = {\n    'default': {\n        'ENGINE': 'django.db.backends.postgresql',\n        'NAME': 'shop',\n        'PASSWORD': 'Pg7Wn2Qx5Lr8',\n    }\n}\n".into(),
                s(&["x7#k@q2m!v9z$w4p&r8t*n3b^h6j(l1d)f5g", "Pg7Wn2Qx5Lr8"]),
            ),
            (
                "src/main/resources/application.properties",
                "spring.datasource.url=jdbc:postgresql://db:5432/app\nspring.datasource.username=app\nspring.datasource.password=Jd4Kw9Vn2Hx7\n".into(),
                s(&["Jd4Kw9Vn2Hx7"]),
            ),
            ("terraform.tfvars", "region      = \"eu-west-1\"\ndb_password = \"Tf6Rq3Wz8Mn1\"\n".into(), s(&["Tf6Rq3Wz8Mn1"])),
            (
                "wp-config.php",
                "define( 'DB_NAME', 'wordpress' );\ndefine( 'DB_PASSWORD', 'Wp5Ln8Qr2Xt6' );\ndefine( 'AUTH_KEY',         'Gq3#Vm8@Zk1!Rw6$Tp9%Lx4^' );\n".into(),
                s(&["Wp5Ln8Qr2Xt6", "Gq3#Vm8@Zk1!Rw6$Tp9%Lx4^"]),
            ),
            ("datadog.yaml", "site: datadoghq.eu\napi_key: 4f9c2e7a1b8d3f6e0a5c9b2d7e1f4a8c\n".into(), s(&["4f9c2e7a1b8d3f6e0a5c9b2d7e1f4a8c"])),
            ("service-account.json", sa, sa_secrets),
            (".ssh/id_ed25519", key, key_body),
        ]
    }

    /// Secrets given in words, as typed in a prompt.
    fn prose() -> Vec<(&'static str, String, Vec<String>)> {
        vec![
            (
                "prompt",
                "the staging db password is Xk9mQ2vR7tLw, use it for the migration".into(),
                vec!["Xk9mQ2vR7tLw".into()],
            ),
            ("prompt", "my password is Lr5Tz8Wq3Nm6".into(), vec!["Lr5Tz8Wq3Nm6".into()]),
        ]
    }

    fn views(path: &str, text: &str) -> Vec<(&'static str, String)> {
        let numbered = |f: &dyn Fn(usize, &str) -> String| -> String {
            text.lines().enumerate().map(|(i, l)| f(i + 1, l)).collect::<Vec<_>>().join("\n")
        };
        vec![
            ("plain", text.to_string()),
            ("read", numbered(&|n, l| format!("{n:>6}\u{2192}{l}"))),
            ("cat -n", numbered(&|n, l| format!("{n:>6}\t{l}"))),
            ("grep -n", numbered(&|n, l| format!("{path}:{n}:{l}"))),
            (
                "diff",
                format!("--- /dev/null\n+++ b/{path}\n@@ -0,0 +1 @@\n{}", numbered(&|_, l| format!("+{l}"))),
            ),
        ]
    }

    /// Every (case, view, form) whose secret survives.
    fn misses(cases: &[(&'static str, String, Vec<String>)]) -> Vec<String> {
        let mut out = Vec::new();
        for (path, text, secrets) in cases {
            for (view, shown) in views(path, text) {
                let plain = redact::redact(&shown).into_owned();
                let line = serde_json::json!({"type": "user", "message": {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_01", "content": shown}]}})
                .to_string();
                let json = redact::redact_json_line(&line, &mut Report::default()).into_owned();
                let decoded: serde_json::Value = serde_json::from_str(&json)
                    .unwrap_or_else(|e| panic!("{path} {view}: not JSON after redaction ({e}): {json}"));
                let decoded = decoded["message"]["content"][0]["content"].as_str().unwrap().to_string();
                for secret in secrets {
                    for (form, got) in [("text", &plain), ("json", &decoded)] {
                        if got.contains(secret.as_str()) {
                            out.push(format!("{path} | {view} | {form} | {secret}"));
                        }
                    }
                }
            }
        }
        out
    }

    #[test]
    fn no_planted_secret_survives_in_any_view() {
        let mut cases = files();
        cases.extend(prose());
        let misses = misses(&cases);
        assert!(misses.is_empty(), "{} secrets survived:\n{}", misses.len(), misses.join("\n"));
    }
}

/// Types `lines` into pane `t`, each when the shell prompts for it. A line typed before
/// the shell prompts for it is echoed twice, by the terminal and again after the prompt,
/// so each waits for its prompt (`box#`, `bash-5.2$`, `heredoc>`, `>`).
fn type_at_prompts(tmux: &crate::util::Tmux, t: &str, lines: &[&str]) {
    use std::time::{Duration, Instant};

    let lines_at_prompt = || {
        let screen = tmux.run(&["capture-pane", "-p", "-t", t]);
        let lines: Vec<&str> = screen.lines().map(str::trim_end).filter(|l| !l.is_empty()).collect();
        let at_prompt = lines.last().is_some_and(|l| l.ends_with(['#', '%', '$', '>']));
        (lines.len(), at_prompt)
    };
    let mut seen = 0;
    for line in lines {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let (lines, at_prompt) = lines_at_prompt();
            if lines > seen && at_prompt || Instant::now() > deadline {
                seen = lines;
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        tmux.run(&["send-keys", "-t", t, "-l", "--", line]);
        tmux.run(&["send-keys", "-t", t, "Enter"]);
    }
}

/// What `lokust-shell redact --as shell` makes of `text`.
fn redacted_as_shell(env: &crate::util::TestEnv, text: &str) -> String {
    let out = env
        .cmd("lokust-shell")
        .args(["redact", "--as", "shell"])
        .write_stdin(text.to_string())
        .assert()
        .success();
    String::from_utf8_lossy(&out.get_output().stdout).into_owned()
}

/// The pane `t` once its shell has printed `done-42`, the typed commands' last output;
/// fails the test after 20 seconds without it.
fn screen_when_done(tmux: &crate::util::Tmux, t: &str, name: &str) -> String {
    use std::time::{Duration, Instant};

    let deadline = Instant::now() + Duration::from_secs(20);
    let screen = loop {
        let screen = tmux.run(&["capture-pane", "-p", "-t", t]);
        if screen.lines().any(|l| l.trim() == "done-42") || Instant::now() > deadline {
            break screen;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(screen.lines().any(|l| l.trim() == "done-42"), "{name} did not finish:\n{screen}");
    screen
}

/// Here-documents fed to a reader of secrets or into a credential file, text piped into
/// `tee` writing one, and a secret piped from one line into a reader on the next, typed
/// into a real zsh and a real bash in tmux: each shell's history file (bash's written by
/// `history -a`) and each pane's scrollback (bash's `> `, zsh's `heredoc> ` and `pipe> `
/// before the lines after the first). Every secret goes; a harmless here-document and
/// every command word stay.
#[test]
fn here_documents_and_pipes_as_real_shells_record_them() {
    use crate::util::{TestEnv, Tmux, have};

    if !have("tmux") || !have("zsh") || !have("bash") {
        assert!(std::env::var_os("CI").is_none(), "scripts/test installs tmux, zsh and bash");
        return;
    }
    let secrets = ["Rk7Tq2VmX9pLs4", "Wn3Xc8NvB5Lq", "Hz6TzP2kRw9YdQ", "Pq4LmN8vR2sXk"];
    let typed = [
        // Stand-ins, so that nothing runs, waits on a network or prints what it reads.
        "docker() { cat >/dev/null; }; sudo() { cat >/dev/null; }; tee() { cat >/dev/null; }",
        "docker login --username u --password-stdin <<EOF",
        "Rk7Tq2VmX9pLs4",
        "EOF",
        "cat > ./.pgpass <<'EOF'",
        "db.example.com:5432:app:alice:Wn3Xc8NvB5Lq",
        "EOF",
        "echo 'Hz6TzP2kRw9YdQ' | tee ./.vault-token",
        "echo 'Pq4LmN8vR2sXk' | \\",
        "  sudo -S apt-get update",
        "cat <<EOF > notes.md",
        "harmless body",
        "EOF",
        "[ -z \"$BASH_VERSION\" ] || history -a; echo done-$((40 + 2))",
    ];
    let env = TestEnv::new();
    for name in ["zsh", "bash"] {
        let hist = env.root.path().join(format!("{name}_history"));
        let shell = match name {
            "zsh" => format!(
                "env HISTFILE='{}' SAVEHIST=100 HISTSIZE=100 zsh -f -o INC_APPEND_HISTORY -o EXTENDED_HISTORY",
                hist.display()
            ),
            _ => format!("env HISTFILE='{}' bash --norc --noprofile", hist.display()),
        };
        let tmux = Tmux::start(name, &env.cwd, &env.home, &shell);
        let t = format!("={name}:");
        type_at_prompts(&tmux, &t, &typed);
        let screen = screen_when_done(&tmux, &t, name);
        let written = std::fs::read_to_string(&hist).unwrap_or_default();
        assert!(written.contains("\nRk7Tq2VmX9pLs4"), "{name} wrote its history otherwise:\n{written}");
        for (what, text) in [(format!("{name} scrollback"), screen), (format!("{name} history"), written)] {
            let out = redacted_as_shell(&env, &text);
            for s in secrets {
                assert!(!out.contains(s), "{what}: {s} survived:\n{out}");
            }
            for kept in [
                "docker login --username u --password-stdin <<EOF",
                "db.example.com:5432:app:alice:",
                "| tee ./.vault-token",
                "sudo -S apt-get update",
                "harmless body",
            ] {
                assert!(out.contains(kept), "{what}: {kept:?} was lost:\n{out}");
            }
            assert_eq!(out.matches(REDACTED).count(), 4, "{what}:\n{text}\n->\n{out}");
        }
    }
}

/// Continued commands as real shells record them, typed into a real zsh and a real bash
/// in tmux: zsh's history file (which ends a continued line with two backslashes) and
/// each pane's scrollback (bash and zsh show `> ` before each continued line). Every
/// password goes; every command word stays.
#[test]
fn continued_commands_as_real_shells_record_them() {
    use crate::util::{TestEnv, Tmux, have};

    if !have("tmux") || !have("zsh") || !have("bash") {
        assert!(std::env::var_os("CI").is_none(), "scripts/test installs tmux, zsh and bash");
        return;
    }
    let secrets = ["Qz7RkLm2Vx9Tb", "Wm3Xc8NvB5Lq", "Hn6TzP2kRw9YdQa3"];
    let typed = [
        // Stand-ins, so that nothing runs or waits on a network.
        "sshpass() { :; }; mysql() { :; }",
        "sshpass \\",
        "-p Qz7RkLm2Vx9Tb ssh host",
        "mysql -h db \\",
        "  -u root \\",
        "  -pWm3Xc8NvB5Lq",
        "sshpass -p \\",
        "  Hn6TzP2kRw9YdQa3 ssh host",
        "echo done-$((40 + 2))",
    ];
    let env = TestEnv::new();
    let hist = env.root.path().join("zsh_history");
    for (name, shell) in [
        (
            "zsh",
            format!(
                "env HISTFILE='{}' SAVEHIST=100 HISTSIZE=100 zsh -f -o INC_APPEND_HISTORY -o EXTENDED_HISTORY",
                hist.display()
            ),
        ),
        // Each shell's own default prompt: `box% ` or `box# `, `bash-5.2$ `.
        ("bash", "bash --norc --noprofile".to_string()),
    ] {
        let tmux = Tmux::start(name, &env.cwd, &env.home, &shell);
        let t = format!("={name}:");
        type_at_prompts(&tmux, &t, &typed);
        let screen = screen_when_done(&tmux, &t, name);
        assert!(screen.contains("\n> "), "{name} showed no continuation prompt:\n{screen}");

        let mut texts = vec![(format!("{name} scrollback"), screen)];
        if name == "zsh" {
            let written = std::fs::read_to_string(&hist).unwrap_or_default();
            assert!(written.contains("sshpass \\\\\n"), "zsh wrote its history otherwise:\n{written}");
            texts.push(("zsh history".to_string(), written));
        }
        for (what, text) in texts {
            let out = redacted_as_shell(&env, &text);
            for s in secrets {
                assert!(!out.contains(s), "{what}: {s} survived:\n{out}");
            }
            for kept in ["sshpass", "ssh host", "mysql -h db", "-u root"] {
                assert!(out.contains(kept), "{what}: {kept:?} was lost:\n{out}");
            }
            assert_eq!(out.matches(REDACTED).count(), 3, "{what}:\n{text}\n->\n{out}");
        }
    }
}
