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

    #[test]
    fn a_slow_pipe_gets_each_line_as_it_comes() {
        use std::io::{BufRead, BufReader, Write};
        use std::process::{Command, Stdio};
        use std::sync::mpsc;
        use std::time::Duration;
        let mut child = Command::new(assert_cmd::cargo::cargo_bin("lokust-shell"))
            .arg("redact")
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
            // In pieces, as a slow writer sends them: the line is only whole at the newline.
            for piece in ["token=", TOKEN, &format!(" {i}"), "\n"] {
                stdin.write_all(piece.as_bytes()).unwrap();
                stdin.flush().unwrap();
                std::thread::sleep(Duration::from_millis(20));
            }
            // Answered while stdin is still open: the filter does not wait for the end.
            let got = rx.recv_timeout(Duration::from_secs(10));
            if got.is_err() {
                let _ = child.kill();
            }
            assert_eq!(got.expect("no line within 10 s"), format!("token=[REDACTED] {i}"));
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
