//! A Gemini CLI conversation on a test machine, laid out as the CLI 0.61 writes it:
//! `<gh>/projects.json` maps the project's realpath to a folder whose `.project_root`
//! marker names it, and the chat is a JSONL file in its `chats/`.

use std::fs;
use std::path::Path;
use std::time::SystemTime;

/// One conversation with `session_id` for `project` (which must exist) under `gh`
/// (`~/.gemini`), with one user turn saying `prompt`.
pub fn make_chat(gh: &Path, project: &Path, session_id: &str, prompt: &str) {
    let real = fs::canonicalize(project).unwrap();
    let folder = gh.join("tmp/proj");
    fs::create_dir_all(folder.join("chats")).unwrap();
    fs::write(folder.join(".project_root"), real.to_str().unwrap()).unwrap();
    fs::write(
        gh.join("projects.json"),
        serde_json::json!({"projects": {real.to_str().unwrap(): "proj"}}).to_string(),
    )
    .unwrap();
    let now = lokust::agent::gemini::iso(SystemTime::now());
    let header = serde_json::json!({"sessionId": session_id, "projectHash": "x", "startTime": now,
        "lastUpdated": now, "kind": "main"});
    let turn = serde_json::json!({"id": "m1", "type": "user", "content": [{"text": prompt}]});
    fs::write(
        folder.join(format!("chats/session-2026-11-24T00-00-{session_id}.jsonl")),
        format!("{header}\n{turn}\n"),
    )
    .unwrap();
}
