//! `lokust-shell doctor`: one line per check with a fix under each problem, exit 0 unless
//! a check failed (or warned, with --strict), and JSON that names no key.

use std::fs;

use crate::util::{TestEnv, stdout};

fn doctor(env: &TestEnv, args: &[&str]) -> assert_cmd::assert::Assert {
    doctor_with(env, args, &[])
}

fn doctor_with(env: &TestEnv, args: &[&str], vars: &[(&str, &str)]) -> assert_cmd::assert::Assert {
    let mut cmd = env.cmd("lokust-shell");
    // Installed: the four binaries on PATH, as `cargo install` puts them.
    let bins = assert_cmd::cargo::cargo_bin("lokust-shell").parent().unwrap().to_path_buf();
    let path = std::env::join_paths(
        std::iter::once(bins).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())),
    )
    .unwrap();
    cmd.env("PATH", path);
    for (k, v) in vars {
        cmd.env(k, v);
    }
    cmd.arg("doctor").args(args).assert()
}

#[test]
fn a_fresh_home_warns_that_the_hook_is_missing_and_strict_fails_on_it() {
    let env = TestEnv::new();
    let out = stdout(&doctor(&env, &[]).success());
    let hook = out.lines().find(|l| l.contains("prompt hook")).unwrap_or_else(|| panic!("{out}"));
    assert!(hook.starts_with("! ") && hook.contains("bash: not installed"), "{out}");
    assert!(out.contains("fix: echo 'eval \"$(lokust-shell init bash)\"' >> ~/.bashrc"), "{out}");
    assert!(out.lines().last().unwrap().contains("checks: 0 failed"), "{out}");
    doctor(&env, &["--strict"]).code(2);
}

#[test]
fn sealing_to_a_key_you_do_not_hold_fails_and_json_names_no_key() {
    let env = TestEnv::new();
    // Someone else's age key: its secret is nowhere in this HOME.
    let theirs = "age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p";
    let out = stdout(&doctor_with(&env, &[], &[("LOKUST_ENCRYPT_TO", theirs)]).code(2));
    let line = out.lines().find(|l| l.contains("sealing")).unwrap();
    assert!(line.starts_with("✗ ") && line.contains("none of which you hold"), "{out}");
    let json = stdout(&doctor_with(&env, &["--json"], &[("LOKUST_ENCRYPT_TO", theirs)]).code(2));
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(doc["failed"], 1, "{json}");
    assert!(
        doc["checks"].as_array().unwrap().iter().all(|c| c["name"].is_string() && c["status"].is_string())
    );
    assert!(!json.contains("age1") && !json.contains("AGE-SECRET"), "{json}");

    // With the matching identity in place, the check passes.
    let key = std::process::Command::new("age-keygen").output();
    if let Ok(key) = key
        && key.status.success()
    {
        let text = String::from_utf8_lossy(&key.stdout).into_owned();
        let public = text.lines().find_map(|l| l.strip_prefix("# public key: ")).unwrap().to_string();
        let dir = env.home.join(".config/lokust");
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("identities"), &text).unwrap();
        let out = stdout(
            &doctor_with(&env, &[], &[("LOKUST_ENCRYPT_TO", &format!("{theirs},{public}"))]).success(),
        );
        assert!(out.lines().any(|l| l.starts_with("✓ sealing")), "{out}");
    }
}

#[test]
fn a_stale_claude_registry_entry_is_named_with_its_fix() {
    let env = TestEnv::new();
    let sessions = env.home.join(".claude/sessions");
    fs::create_dir_all(&sessions).unwrap();
    // A pid no process has: the entry of a Claude Code that was killed.
    fs::write(sessions.join("4194000.json"), r#"{"pid":4194000,"sessionId":"x"}"#).unwrap();
    let out = stdout(&doctor(&env, &[]).success());
    let line = out.lines().find(|l| l.contains("claude registry")).unwrap_or_else(|| panic!("{out}"));
    assert!(line.starts_with("! ") && line.contains("4194000.json"), "{out}");
    assert!(out.contains(&format!("fix: rm {}", sessions.join("4194000.json").display())), "{out}");
}

/// A move killed between setting the old copies aside and finishing leaves them where no
/// agent looks: doctor names them with the line that puts each back.
#[test]
fn copies_an_interrupted_move_set_aside_are_named_with_their_fix() {
    let env = TestEnv::new();
    let projects = env.home.join(".claude/projects");
    let aside = projects.join(".lokust-moving-20261127T201718Z--src-app");
    fs::create_dir_all(&aside).unwrap();
    fs::write(aside.join("a.jsonl"), "{}\n").unwrap();
    let out = stdout(&doctor(&env, &[]).success());
    let line = out.lines().find(|l| l.contains("interrupted move")).unwrap_or_else(|| panic!("{out}"));
    assert!(line.starts_with("! ") && line.contains("1 copy"), "{out}");
    assert!(
        out.contains(&format!("mv {} {}", aside.display(), projects.join("-src-app").display())),
        "{out}"
    );
}

#[test]
fn conversations_close_to_claude_codes_cleanup_are_counted() {
    let env = TestEnv::new();
    let slot = env.home.join(".claude/projects/-p");
    fs::create_dir_all(&slot).unwrap();
    fs::write(env.home.join(".claude/settings.json"), r#"{"cleanupPeriodDays": 30}"#).unwrap();
    let day = std::time::Duration::from_secs(86_400);
    for (name, days) in [("a", 10), ("b", 26), ("c", 40)] {
        let path = slot.join(format!("{name}.jsonl"));
        fs::write(&path, "{}\n").unwrap();
        let f = fs::File::options().write(true).open(&path).unwrap();
        f.set_modified(std::time::SystemTime::now() - day * days).unwrap();
    }
    let out = stdout(&doctor(&env, &[]).success());
    let line = out.lines().find(|l| l.contains("claude retention")).unwrap();
    assert!(line.starts_with("! ") && line.contains("2 conversations within five days"), "{out}");
}
