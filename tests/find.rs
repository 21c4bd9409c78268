//! `lokust-shell find ID`: a conversation found by its id in each agent's store of a
//! private HOME, with the directory it records and the line that resumes it.

use std::fs;

use crate::util::{TestEnv, stdout};

const CODEX: &str = "01a20c41-21e5-7a13-9fc0-01834a64b0db";
const COPILOT: &str = "0b5e1f3c-2a4d-4e6f-8a9b-1c2d3e4f5a6b";

/// A store per agent, each holding one conversation made in `project` (which exists) or
/// in a folder that is gone.
fn stores(env: &TestEnv) -> std::path::PathBuf {
    let project = env.root.path().join("my project");
    fs::create_dir_all(&project).unwrap();
    let real = fs::canonicalize(&project).unwrap();
    let dir = real.to_str().unwrap();
    crate::util::claude::make_project(env, &project);
    let codex = env.home.join(".codex/archived_sessions");
    fs::create_dir_all(&codex).unwrap();
    let meta = serde_json::json!({"timestamp": "2026-11-24T06:32:04.935Z", "type": "session_meta",
        "payload": {"id": CODEX, "cwd": "/gone/away"}});
    fs::write(codex.join(format!("rollout-2026-11-24T06-32-04-{CODEX}.jsonl")), format!("{meta}\n")).unwrap();
    crate::util::gemini::make_chat(&env.home.join(".gemini"), &project, "9e11-ab", "hello");
    let droid = env.home.join(".factory/sessions/x");
    fs::create_dir_all(&droid).unwrap();
    let start = serde_json::json!({"type": "session_start", "id": "d701d-1", "cwd": dir});
    fs::write(droid.join("d701d-1.jsonl"), format!("{start}\n")).unwrap();
    let logs = env.home.join(".local/share/codeloops/sessions");
    fs::create_dir_all(&logs).unwrap();
    let log = serde_json::json!({"type": "session_start", "timestamp": "2025-01-27T15:30:45Z", "prompt": "x",
        "working_dir": dir, "actor_agent": "Claude Code", "critic_agent": "Claude Code"});
    fs::write(logs.join("2025-01-27T15-30-45Z_a1b2c3.jsonl"), format!("{log}\n")).unwrap();
    let copilot = env.home.join(format!(".copilot/session-state/{COPILOT}"));
    fs::create_dir_all(&copilot).unwrap();
    let ev = serde_json::json!({"type": "session.start", "id": "1d4c0a52-5b2e-4c55-9d0e-0a1b2c3d4e5f",
        "timestamp": "2026-11-24T06:32:04.935Z", "data": {"sessionId": COPILOT, "context": {"cwd": "/elsewhere"}}});
    fs::write(copilot.join("events.jsonl"), format!("{ev}\n")).unwrap();
    fs::write(
        copilot.join("workspace.yaml"),
        format!("id: {COPILOT}\ncwd: {}\n", serde_json::to_string(dir).unwrap()),
    )
    .unwrap();
    real
}

#[test]
fn each_agents_conversation_is_found_with_its_directory_and_resume_line() {
    let env = TestEnv::new();
    let real = stores(&env);
    let quoted = format!("'{}'", real.display());
    for (id, agent, resume) in [
        (crate::util::claude::SESSION, "Claude Code", "claude --resume"),
        ("9e11-ab", "Gemini CLI", "gemini --resume"),
        ("d701d-1", "Factory Droid", "droid --resume"),
        (COPILOT, "GitHub Copilot CLI", "copilot --resume="),
    ] {
        let out = stdout(&env.cmd("lokust-shell").args(["find", id]).assert().success());
        assert!(out.starts_with(&format!("{agent}: {id}")), "{out}");
        assert!(out.contains(&format!("{} (exists)", real.display())), "{id}: {out}");
        assert!(out.contains(&format!("resume:    cd {quoted} && {resume}")), "{id}: {out}");
    }
    // Archived, in a folder that is gone.
    let out = stdout(&env.cmd("lokust-shell").args(["find", CODEX]).assert().success());
    assert!(out.contains("archived_sessions") && out.contains("/gone/away (not on this machine)"), "{out}");
    assert!(out.contains(&format!("cd /gone/away && codex resume {CODEX}")), "{out}");
    // codeloops has no resume: where the log is, and the directory.
    let out =
        stdout(&env.cmd("lokust-shell").args(["find", "2025-01-27T15-30-45Z_a1b2c3"]).assert().success());
    assert!(out.starts_with("codeloops:") && !out.contains("resume:"), "{out}");
    let json = stdout(&env.cmd("lokust-shell").args(["find", "--json", COPILOT]).assert().success());
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v[0]["project_dir"], real.to_str().unwrap());
    assert_eq!(v[0]["project_dir_exists"], true);
}

#[test]
fn an_unknown_id_exits_1_and_a_path_is_no_id() {
    let env = TestEnv::new();
    stores(&env);
    let a = env.cmd("lokust-shell").args(["find", "00000000-0000-0000-0000-000000000000"]).assert().code(1);
    assert!(crate::util::stderr(&a).contains("no agent on this machine has a conversation"));
    env.cmd("lokust-shell").args(["find", "../../etc/passwd"]).assert().code(2);
}
