//! `lokust-shell inspect` on both variants, and every real session file in
//! fixtures/real round-tripped through a .lok and inspect where it applies.

use std::fs;

use crate::util::{TestEnv, fixtures};

fn inspect(env: &TestEnv, path: &std::path::Path) -> String {
    let out = env.cmd("lokust-shell").arg("inspect").arg(path).assert().success();
    String::from_utf8(out.get_output().stdout.clone()).unwrap()
}

#[test]
fn coordination_shows_phases_with_status_duration_and_tokens() {
    let env = TestEnv::new();
    let text = inspect(&env, &fixtures().join("lok/coordination.lok"));
    assert!(
        text.starts_with(
            "Coordination session a3f8b2c1-6d4e-4086-b936-233f5b97e959 (completed): iPad Streaming Portal"
        ),
        "{text}"
    );
    assert!(text.contains("phases:   2/3 completed, current 2"), "{text}");
    assert!(text.contains("total:    6m 05s, 49,793 tokens"), "{text}");
    let architect = text.lines().find(|l| l.contains("Architect Agent")).expect(&text);
    assert!(
        architect.contains("completed") && architect.contains("30.1s") && architect.contains("1,754 tokens"),
        "{architect}"
    );
    let reviewer = text.lines().find(|l| l.contains("Reviewer Agent")).expect(&text);
    assert!(reviewer.contains("failed") && reviewer.contains("17,929 tokens"), "{reviewer}");
}

#[test]
fn shell_shows_every_section() {
    let env = TestEnv::new();
    let text = inspect(&env, &fixtures().join("lok/shell.lok"));
    for needle in [
        "Shell session shell-5b0e7c4a-3f8d-4a51-9e2c-7d1f0a6b8c93, captured 2026-04-13T01:12:54Z by user via lokust-tmux",
        "cwd:         /Users/user/lokust-platform",
        "terminal:    ghostty 1.3.1 (xterm-256color)",
        "multiplexer: tmux session myshell",
        "git:         main @ abc123d (0 dirty), git@github.com:user/lokust-platform.git",
        "claude code: -Users-user-lokust-platform (4 sessions, 10 memory files)",
        "scrollback:  12 B",
        "export GITHUB_TOKEN=[REDACTED]",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in:\n{text}");
    }
}

#[test]
fn hostile_text_cannot_drive_the_terminal() {
    let env = TestEnv::new();
    let lok = serde_json::json!({
        "session": {"id": "shell-x\u{1b}]0;pwned\u{7}", "kind": "shell"},
        "shell": {"cwd": "/tmp/\u{202e}gpj.exe", "history_tail": ["echo \u{1b}[2J"]}
    });
    let path = env.write("hostile.lok", lok.to_string());
    let text = inspect(&env, &path);
    assert!(!text.contains('\u{1b}') && !text.contains('\u{202e}') && !text.contains('\u{7}'), "{text:?}");
    assert!(text.contains("\\u{1b}]0;pwned") && text.contains("/tmp/\\u{202e}gpj.exe"), "{text}");
}

/// Every real agent transcript in fixtures/real becomes the history and the
/// unknown-field payload of a .lok; inspect reads it, and the JSON comes back unchanged.
#[test]
fn real_session_files_round_trip_through_inspect() {
    let root = fixtures().join("real");
    let env = TestEnv::new();
    let files = crate::util::files_below(&root);
    let sessions: Vec<_> =
        files.iter().filter(|p| p.extension().is_some_and(|e| e == "jsonl" || e == "json")).collect();
    assert!(sessions.len() >= 40, "expected the real fixtures, found {}", sessions.len());
    for path in sessions {
        let text = fs::read_to_string(path).unwrap();
        // Some ".jsonl" files hold one pretty-printed object (Gemini's chat files).
        let lines: Vec<serde_json::Value> = match serde_json::from_str(&text) {
            Ok(whole) => vec![whole],
            Err(_) => text
                .lines()
                .filter(|l| !l.trim().is_empty())
                .map(|l| serde_json::from_str(l).unwrap())
                .collect(),
        };
        let cwd =
            lines.iter().find_map(|e| e["cwd"].as_str().map(str::to_string)).unwrap_or_else(|| "/".into());
        let lok = serde_json::json!({
            "session": {"id": "shell-fixture", "status": "snapshot", "kind": "shell", "created_at_ms": 0},
            "shell": {"cwd": cwd, "history_tail": text.lines().take(5).collect::<Vec<_>>()},
            "created_by": "fixture",
            "captured_via": "test",
            "agent_session": {"source": path.strip_prefix(&root).unwrap().to_string_lossy(), "events": lines},
        });
        let file = env.write("real.lok", serde_json::to_vec_pretty(&lok).unwrap());
        let summary = inspect(&env, &file);
        assert!(
            summary.contains(&format!("cwd:         {}", lokust::sanitize::for_terminal(&cwd))),
            "{}: {summary}",
            path.display()
        );
        let out = env.cmd("lokust-shell").args(["inspect", "--json"]).arg(&file).assert().success();
        let back = crate::util::json(&out.get_output().stdout);
        assert_eq!(back["agent_session"], lok["agent_session"], "{}", path.display());
        crate::util::schema::assert_valid(&back, &path.display().to_string());
    }
}
