//! `lokust-shell inspect FILE --transcript ID | --transcripts`: every agent's conversation
//! read from a `.lok` without restoring it, from files shaped as the published sessions in
//! fixtures/real, as a stranger could send them (unredacted, with escape sequences).

use std::fs;
use std::path::{Path, PathBuf};

use lokust::agent::File;
use lokust::bundle::elements::encode;

use crate::util::{TestEnv, fixtures, stdout};

/// A secret left in a stranger's file, and escape sequences a transcript could carry: a
/// clipboard write (OSC 52), a title, a screen clear.
const TOKEN: &str = "ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5";
const ESCAPES: &str = "\u{1b}]52;c;cHduZWQ=\u{7}\u{1b}]0;pwned\u{7}\u{1b}[2J\u{9b}2J\u{202e}";

fn real(rel: &str) -> Vec<u8> {
    fs::read(fixtures().join("real").join(rel)).unwrap()
}

/// One element per agent, each from a fixture of its format with the hostile text put in
/// its first user turn.
fn elements() -> Vec<(&'static str, serde_json::Value)> {
    let hostile = format!("push with GITHUB_TOKEN={TOKEN} {ESCAPES}");
    let esc = serde_json::to_string(&hostile).unwrap();
    let esc = esc.trim_matches('"');
    let mut out = Vec::new();
    let element = |kind: &str, files: Vec<File>| {
        let fields = serde_json::Map::from_iter([("project_dir".to_string(), serde_json::json!("/old/p"))]);
        encode(kind, &files, fields).unwrap()
    };

    let codex = String::from_utf8(real("codex/kvsankar-agent-history/real_sessions/codex/session-01.jsonl"))
        .unwrap()
        .replacen("[REDACTED_PROMPT]", esc, 1);
    let rel = "sessions/2026/06/05/rollout-2026-06-05T04-58-20-019e9625-802f-7e91-840a-cfe88d14117a.jsonl";
    out.push((
        "codex-sessions",
        element("codex-sessions", vec![File { rel: rel.into(), data: codex.into_bytes() }]),
    ));

    let gemini = String::from_utf8(real("gemini/handmade/jazzyalex-agent-sessions/gemini/jsonl_v040.jsonl"))
        .unwrap()
        .replacen("Say hello and list files.", esc, 1);
    let rel = "chats/session-2026-04-29T21-39-gemini_stage0_jsonl.jsonl";
    out.push((
        "gemini-project",
        element("gemini-project", vec![File { rel: rel.into(), data: gemini.into_bytes() }]),
    ));

    let droid =
        String::from_utf8(real("droid/handmade/jazzyalex-agent-sessions/droid/session_store_small.jsonl"))
            .unwrap();
    let mut lines: Vec<String> = droid.lines().map(str::to_string).collect();
    let mut first: serde_json::Value = serde_json::from_str(&lines[1]).unwrap();
    first["message"]["content"][0]["text"] = hostile.clone().into();
    lines[1] = first.to_string();
    out.push((
        "droid-sessions",
        element(
            "droid-sessions",
            vec![File { rel: "droid_s1.jsonl".into(), data: (lines.join("\n") + "\n").into_bytes() }],
        ),
    ));

    let codeloops = String::from_utf8(real("codeloops/doc-excerpt/session-format_complete-example.jsonl"))
        .unwrap()
        .replacen("Fix the typo in greeting.rs", esc, 1);
    out.push((
        "codeloops-sessions",
        element(
            "codeloops-sessions",
            vec![File { rel: "2025-01-27T15-30-45Z_a1b2c3.jsonl".into(), data: codeloops.into_bytes() }],
        ),
    ));

    let ses = "ses_0a0b0c0d0e0fTranscriptView";
    let export = serde_json::json!({
        "info": {"id": ses, "slug": "view", "projectID": "global", "directory": "/old/p", "path": "", "title": "hello",
            "version": "1.18.33", "time": {"created": 1795503445307_u64, "updated": 1795503448616_u64}},
        "messages": [
            {"info": {"role": "user", "time": {"created": 1795503445427_u64}, "id": "msg_0001", "sessionID": ses},
             "parts": [{"type": "text", "text": hostile, "id": "prt_0001", "sessionID": ses, "messageID": "msg_0001"}]},
            {"info": {"role": "assistant", "time": {"created": 1795503446427_u64}, "id": "msg_0002", "sessionID": ses,
                "parentID": "msg_0001", "modelID": "mock-model"},
             "parts": [{"type": "tool", "tool": "bash", "callID": "c1", "id": "prt_0002", "sessionID": ses, "messageID": "msg_0002",
                "state": {"status": "completed", "input": {"command": "ls"}, "output": "README\n"}},
                {"type": "text", "text": "done", "id": "prt_0003", "sessionID": ses, "messageID": "msg_0002"}]}]
    });
    out.push((
        "opencode-sessions",
        element(
            "opencode-sessions",
            vec![File { rel: format!("{ses}.json"), data: serde_json::to_vec(&export).unwrap() }],
        ),
    ));

    let id = "0b5e1f3c-2a4d-4e6f-8a9b-1c2d3e4f5a6b";
    let events = [
        serde_json::json!({"type": "session.start", "id": "1d4c0a52-5b2e-4c55-9d0e-0a1b2c3d4e5f", "timestamp": "2026-11-24T06:32:04.935Z",
            "data": {"sessionId": id, "context": {"cwd": "/old/p"}}}),
        serde_json::json!({"type": "user.message", "id": "2d4c0a52-5b2e-4c55-9d0e-0a1b2c3d4e5f", "timestamp": "2026-11-24T06:32:05.000Z",
            "data": {"content": hostile}}),
        serde_json::json!({"type": "tool.execution_start", "id": "3d4c0a52-5b2e-4c55-9d0e-0a1b2c3d4e5f", "timestamp": "2026-11-24T06:32:06.000Z",
            "data": {"toolName": "bash", "toolCallId": "t1", "arguments": {"command": "ls"}}}),
        serde_json::json!({"type": "tool.execution_complete", "id": "4d4c0a52-5b2e-4c55-9d0e-0a1b2c3d4e5f", "timestamp": "2026-11-24T06:32:07.000Z",
            "data": {"toolCallId": "t1", "success": true, "result": {"content": "README"}}}),
        serde_json::json!({"type": "assistant.message", "id": "5d4c0a52-5b2e-4c55-9d0e-0a1b2c3d4e5f", "timestamp": "2026-11-24T06:32:08.000Z",
            "data": {"content": "done"}}),
    ];
    let data = events.iter().map(|e| format!("{e}\n")).collect::<String>().into_bytes();
    out.push((
        "copilot-sessions",
        element("copilot-sessions", vec![File { rel: format!("{id}/events.jsonl"), data }]),
    ));
    out
}

/// A real Claude Code project bundled by the snapshot, with every agent's element beside
/// it, the hostile text also in a Claude turn.
fn stranger_file(env: &TestEnv) -> PathBuf {
    let project = env.root.path().join("p");
    fs::create_dir_all(&project).unwrap();
    crate::util::claude::make_project(env, &project);
    let (lok, _) =
        crate::util::claude::snapshot(env, &project, &["--agents", "claude", "--no-redact-bundle"]);
    let mut doc: serde_json::Value = serde_json::from_slice(&fs::read(&lok).unwrap()).unwrap();
    doc["bundles"] = elements().into_iter().map(|(_, e)| e).collect();
    let out = env.root.path().join("stranger.lok");
    fs::write(&out, serde_json::to_vec(&doc).unwrap()).unwrap();
    out
}

fn schema() -> serde_json::Value {
    serde_json::from_slice(
        &fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("schema/session-event.schema.json")).unwrap(),
    )
    .unwrap()
}

#[test]
fn every_agents_conversation_reads_as_normalized_events_that_validate() {
    let env = TestEnv::new();
    let lok = stranger_file(&env);
    let out = stdout(
        &env.cmd("lokust-shell").args(["inspect", "--transcripts", "--json"]).arg(&lok).assert().success(),
    );
    let validator = jsonschema::validator_for(&schema()).expect("the schema compiles");
    let mut agents = std::collections::BTreeMap::<String, usize>::new();
    for line in out.lines() {
        let event: serde_json::Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        let errors: Vec<String> = validator.iter_errors(&event).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{line}: {errors:?}");
        *agents.entry(event["agent"].as_str().unwrap().to_string()).or_default() += 1;
    }
    for name in [
        "Claude Code",
        "Codex CLI",
        "Gemini CLI",
        "Factory Droid",
        "codeloops",
        "OpenCode",
        "GitHub Copilot CLI",
    ] {
        assert!(agents.get(name).is_some_and(|n| *n >= 2), "{name}: {agents:?}");
    }
    let kinds: std::collections::BTreeSet<String> = out
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["kind"].as_str().unwrap().to_string())
        .collect();
    for kind in ["user", "assistant", "tool_call", "tool_result"] {
        assert!(kinds.contains(kind), "no {kind} event: {kinds:?}");
    }
    assert!(!out.contains(TOKEN), "a secret in a stranger's transcript was printed");
    assert!(
        !out.chars().any(|c| c.is_control() && c != '\n' || c == '\u{202e}'),
        "a raw control or direction character was printed"
    );
}

#[test]
fn the_terminal_view_has_one_block_per_event_and_escapes_what_would_act() {
    let env = TestEnv::new();
    let lok = stranger_file(&env);
    let id = "0b5e1f3c-2a4d-4e6f-8a9b-1c2d3e4f5a6b";
    let json = stdout(
        &env.cmd("lokust-shell").args(["inspect", "--json", "--transcript", id]).arg(&lok).assert().success(),
    );
    let view =
        stdout(&env.cmd("lokust-shell").args(["inspect", "--transcript", id]).arg(&lok).assert().success());
    assert!(view.starts_with(&format!("GitHub Copilot CLI conversation {id} (4 events)")), "{view}");
    let blocks = view.trim_end().split("\n\n").count() - 1;
    assert_eq!(blocks, json.lines().count(), "{view}");
    for label in ["\nuser  ", "\ntool call bash  ", "\ntool result  ", "\nassistant  "] {
        assert!(view.contains(label), "{label:?} missing:\n{view}");
    }
    assert!(!view.contains(TOKEN) && !view.contains('\u{1b}') && !view.contains('\u{7}'), "{view}");
    assert!(view.contains("\\u{1b}]52;c;") && view.contains("\\u{1b}]0;pwned"), "{view}");

    // Every agent's conversation, each in the view.
    let all =
        stdout(&env.cmd("lokust-shell").args(["inspect", "--transcripts"]).arg(&lok).assert().success());
    for name in [
        "Claude Code",
        "Codex CLI",
        "Gemini CLI",
        "Factory Droid",
        "codeloops",
        "OpenCode",
        "GitHub Copilot CLI",
    ] {
        assert!(all.contains(&format!("{name} conversation ")), "{name} missing:\n{all}");
    }
    assert!(!all.contains(TOKEN) && !all.contains('\u{1b}'));
}

#[test]
fn an_unknown_conversation_is_an_error_that_names_those_there() {
    let env = TestEnv::new();
    let lok = stranger_file(&env);
    let a = env.cmd("lokust-shell").args(["inspect", "--transcript", "nope"]).arg(&lok).assert().code(2);
    let err = crate::util::stderr(&a);
    assert!(
        err.contains("holds no conversation nope") && err.contains("0b5e1f3c-2a4d-4e6f-8a9b-1c2d3e4f5a6b"),
        "{err}"
    );
}

/// Every field is redacted, ids and names too, and a refused element leaves the others
/// readable.
#[test]
fn a_secret_in_any_field_is_redacted_and_a_refused_element_hides_nothing_else() {
    let env = TestEnv::new();
    let lok = stranger_file(&env);
    let mut doc: serde_json::Value = serde_json::from_slice(&fs::read(&lok).unwrap()).unwrap();
    let id = "0b5e1f3c-2a4d-4e6f-8a9b-1c2d3e4f5a6b";
    let events = [
        serde_json::json!({"type": "session.start", "id": TOKEN, "timestamp": TOKEN,
            "data": {"sessionId": id, "context": {"cwd": "/old/p"}}}),
        serde_json::json!({"type": "tool.execution_start", "id": "2d4c0a52-5b2e-4c55-9d0e-0a1b2c3d4e5f",
            "parentId": TOKEN, "data": {"toolName": format!("GITHUB_TOKEN={TOKEN}"), "toolCallId": TOKEN, "arguments": {}}}),
        serde_json::json!({"type": "user.message", "id": "3d4c0a52-5b2e-4c55-9d0e-0a1b2c3d4e5f", "data": {"content": "hi"}}),
    ];
    let data = events.iter().map(|e| format!("{e}\n")).collect::<String>().into_bytes();
    let fields = serde_json::Map::from_iter([("project_dir".to_string(), serde_json::json!("/old/p"))]);
    let copilot =
        encode("copilot-sessions", &[File { rel: format!("{id}/events.jsonl"), data }], fields).unwrap();
    let mut refused = copilot.clone();
    refused["kind"] = "droid-sessions".into();
    doc["bundles"] = serde_json::json!([copilot, refused]);
    let path = env.root.path().join("fields.lok");
    fs::write(&path, serde_json::to_vec(&doc).unwrap()).unwrap();
    for args in [&["--json"][..], &[][..]] {
        let a = env
            .cmd("lokust-shell")
            .args(["inspect", "--transcript", id])
            .args(args)
            .arg(&path)
            .assert()
            .success();
        let out = stdout(&a);
        assert!(!out.contains(TOKEN) && out.contains("hi"), "{out}");
        assert!(
            crate::util::stderr(&a).contains("Factory Droid conversations are refused"),
            "{}",
            crate::util::stderr(&a)
        );
    }
    // The Claude conversation is still there to read.
    let json = stdout(
        &env.cmd("lokust-shell").args(["inspect", "--transcripts", "--json"]).arg(&path).assert().success(),
    );
    assert!(json.contains("\"agent\":\"Claude Code\""));
}
