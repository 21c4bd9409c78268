//! A Claude Code project on a test machine: its conversations and extras, the snapshot
//! that bundles it, and the real transcripts of fixtures/real placed as a project.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use base64::Engine;

use super::TestEnv;

pub const SESSION: &str = "0b5e7c4a-3f8d-4a51-9e2c-7d1f0a6b8c93";

pub const OLDER: &str = "1c6f8d5b-4a9e-4b62-8f3d-8e2a1b7c9d04";

/// An AWS key id and a GitHub token, both caught by every version of the redactor.
pub fn secrets() -> (String, String) {
    // Real-looking: the redactor takes a token of few distinct characters for a placeholder.
    ("AKIAQWERTYUIOPASDFGH".to_string(), "ghp_R7c2Qm9XvLp4Tn8Ws1Yd6Hb3Kf5Jg0Ae2Zx9".to_string())
}

/// A project at `project` with two conversations, memory, a subagent, file history,
/// todos, tasks, prompt history and a `.claude.json` entry; returns the slot dir.
pub fn make_project(env: &TestEnv, project: &Path) -> PathBuf {
    fs::create_dir_all(project).unwrap();
    let real = fs::canonicalize(project).unwrap();
    let p = real.to_str().unwrap();
    let config = env.home.join(".claude");
    let slot = config.join("projects").join(lokust::capture::claude::slot_name(p));
    fs::create_dir_all(slot.join("memory")).unwrap();
    fs::create_dir_all(slot.join(SESSION).join("subagents")).unwrap();
    let (aws, gh) = secrets();
    let line = |id: &str, n: usize, text: &str| {
        serde_json::json!({
            "type": if n.is_multiple_of(2) { "user" } else { "assistant" },
            "uuid": format!("u-{n}"), "sessionId": id, "cwd": p,
            "timestamp": format!("2026-01-0{}T10:00:00.000Z", 1 + n % 9),
            "message": {"role": "user", "content": text},
            "toolUseResult": {"persistedOutputPath": format!("{p}/.out/{n}.txt"), "other": format!("{p}-2/x")},
        })
        .to_string()
    };
    let mut main = String::new();
    main.push_str(&line(SESSION, 0, "please fix the build in src/main.rs"));
    main.push('\n');
    main.push_str(&line(SESSION, 1, &format!("export AWS_ACCESS_KEY_ID={aws} and push with {gh}")));
    main.push('\n');
    main.push_str(&line(SESSION, 2, "naïve café 日本 😀 \u{1b}[31m"));
    main.push('\n');
    fs::write(slot.join(format!("{SESSION}.jsonl")), &main).unwrap();
    fs::write(slot.join(format!("{OLDER}.jsonl")), format!("{}\n", line(OLDER, 0, "an older talk"))).unwrap();
    let old = filetime::FileTime::from_unix_time(1_700_000_000, 0);
    filetime::set_file_mtime(slot.join(format!("{OLDER}.jsonl")), old).unwrap();
    let new = filetime::FileTime::from_unix_time(1_700_003_600, 0);
    filetime::set_file_mtime(slot.join(format!("{SESSION}.jsonl")), new).unwrap();
    fs::write(slot.join(SESSION).join("subagents/agent-a1.jsonl"), format!("{}\n", line(SESSION, 4, "sub")))
        .unwrap();
    fs::write(slot.join("memory/notes.md"), format!("# notes\ntoken {gh}\n")).unwrap();
    std::os::unix::fs::symlink("/etc/passwd", slot.join("memory/link")).unwrap();
    // Outside the slot, keyed by session id.
    fs::create_dir_all(config.join("file-history").join(SESSION)).unwrap();
    fs::write(config.join("file-history").join(SESSION).join("abc@v1"), "fn main() {}\n").unwrap();
    fs::create_dir_all(config.join("todos")).unwrap();
    fs::write(config.join("todos").join(format!("{SESSION}-agent-{SESSION}.json")), "[]").unwrap();
    fs::write(config.join("todos/someone-else.json"), "[]").unwrap();
    fs::create_dir_all(config.join("tasks").join(SESSION)).unwrap();
    fs::write(config.join("tasks").join(SESSION).join("1.json"), r#"{"id":"1"}"#).unwrap();
    let history = format!(
        "{}\n{}\n",
        serde_json::json!({"display": "fix the build", "timestamp": 1, "project": p}),
        serde_json::json!({"display": "other project", "timestamp": 2, "project": "/somewhere/else"}),
    );
    fs::write(config.join("history.jsonl"), history).unwrap();
    let global = serde_json::json!({
        "userID": "u",
        "projects": {
            p: {"lastSessionId": SESSION, "hasTrustDialogAccepted": true, "allowedTools": ["Bash"],
                "mcpServers": {"gh": {"command": "gh-mcp", "env": {"GITHUB_TOKEN": gh}}}},
            "/somewhere/else": {"hasTrustDialogAccepted": false},
        }
    });
    fs::write(env.home.join(".claude.json"), serde_json::to_string_pretty(&global).unwrap()).unwrap();
    slot
}

/// `lokust-shell-snapshot --bundle -o FILE` in `project`.
pub fn snapshot(env: &TestEnv, project: &Path, extra: &[&str]) -> (PathBuf, String) {
    let lok = env.root.path().join("s.lok");
    let out = env
        .cmd("lokust-shell-snapshot")
        .current_dir(project)
        .env("PWD", project)
        .arg("--bundle")
        .args(extra)
        .arg("-o")
        .arg(&lok)
        .assert()
        .success();
    (lok, String::from_utf8_lossy(&out.get_output().stderr).into_owned())
}

/// The bundle's tar, decoded the way a reader that knows only the spec would.
pub fn tar_of(lok: &Path) -> Vec<u8> {
    let doc: serde_json::Value = serde_json::from_slice(&fs::read(lok).unwrap()).unwrap();
    let data = doc["bundle"]["data"].as_str().unwrap();
    assert_eq!(doc["bundle"]["base64_bytes"].as_u64(), Some(data.len() as u64));
    let gz = base64::engine::general_purpose::STANDARD.decode(data).unwrap();
    let mut tar = Vec::new();
    flate2::read::MultiGzDecoder::new(&gz[..]).read_to_end(&mut tar).unwrap();
    assert_eq!(doc["bundle"]["uncompressed_bytes"].as_u64(), Some(tar.len() as u64));
    tar
}

pub fn entries(tar: &[u8]) -> Vec<(String, Vec<u8>)> {
    let mut archive = tar::Archive::new(tar);
    archive
        .entries()
        .unwrap()
        .map(|e| {
            let mut e = e.unwrap();
            let path = e.path().unwrap().to_string_lossy().into_owned();
            let mut data = Vec::new();
            e.read_to_end(&mut data).unwrap();
            (path, data)
        })
        .collect()
}

pub fn new_slot(env: &TestEnv, target: &Path) -> PathBuf {
    let real = fs::canonicalize(target).unwrap();
    env.home.join(".claude/projects").join(lokust::capture::claude::slot_name(real.to_str().unwrap()))
}

/// Bundles the standard project and wipes it, as on a machine that never had it.
pub fn moved(env: &TestEnv) -> (PathBuf, PathBuf) {
    let project = env.root.path().join("old/proj");
    let slot = make_project(env, &project);
    let (lok, _) = snapshot(env, &project, &[]);
    for kind in ["projects", "file-history", "todos", "tasks"] {
        let _ = fs::remove_dir_all(env.home.join(".claude").join(kind));
    }
    fs::remove_file(env.home.join(".claude/history.jsonl")).unwrap();
    fs::write(env.home.join(".claude.json"), r#"{"userID":"u","projects":{}}"#).unwrap();
    fs::create_dir_all(env.home.join(".claude/projects")).unwrap();
    let _ = slot;
    (lok, project)
}

/// The captured Claude Code transcripts in fixtures/real (not the hand-made ones).
pub fn real_transcripts(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                if e.file_name() != "handmade" {
                    walk(&p, out);
                }
            } else if p.extension().is_some_and(|x| x == "jsonl") {
                out.push(p);
            }
        }
    }
    walk(root, &mut out);
    out.sort();
    out
}

/// Puts a real transcript in the slot of `project` as if it had been recorded there
/// (its recorded cwd replaced by `project`); returns its session id and the slot.
pub fn place_real_transcript(env: &TestEnv, file: &Path, project: &Path) -> (String, PathBuf) {
    fs::create_dir_all(project).unwrap();
    let real = fs::canonicalize(project).unwrap();
    let text = fs::read_to_string(file).unwrap();
    let events: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let id = events.iter().find_map(|e| e["sessionId"].as_str()).unwrap().to_string();
    let cwd = events.iter().find_map(|e| e["cwd"].as_str()).unwrap().to_string();
    let text = text.replace(&format!("\"{cwd}\""), &format!("\"{}\"", real.display()));
    let slot =
        env.home.join(".claude/projects").join(lokust::capture::claude::slot_name(real.to_str().unwrap()));
    fs::create_dir_all(&slot).unwrap();
    fs::write(slot.join(format!("{id}.jsonl")), text).unwrap();
    (id, slot)
}

/// The Claude Code CLI installed by `scripts/test` (npm, into target/claude-cli); `None`
/// (the test skips) only outside CI.
pub fn cli_bin() -> Option<PathBuf> {
    let bin = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/claude-cli/node_modules/.bin/claude");
    if bin.exists() {
        return Some(bin);
    }
    assert!(std::env::var_os("CI").is_none(), "the Claude Code CLI is required in CI: run ./scripts/test");
    eprintln!("skipped: {} is not installed (./scripts/test installs it)", bin.display());
    None
}

/// The CLI headless under `env -i`: only a private HOME, PATH and the stand-in's address.
pub fn run_cli(bin: &Path, api_url: &str, home: &Path, cwd: &Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new("timeout")
        .arg("120")
        .arg("env")
        .arg("-i")
        .arg(format!("HOME={}", home.display()))
        .arg("PATH=/usr/local/bin:/usr/bin:/bin")
        .arg(format!("ANTHROPIC_BASE_URL={api_url}"))
        .arg("ANTHROPIC_API_KEY=dummy")
        .arg("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1")
        .arg("DISABLE_TELEMETRY=1")
        .arg("DISABLE_AUTOUPDATER=1")
        .arg("DISABLE_ERROR_REPORTING=1")
        .arg(bin)
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("run claude")
}

/// A new conversation with one prompt; its session id.
pub fn cli_conversation(bin: &Path, api_url: &str, home: &Path, cwd: &Path, prompt: &str) -> String {
    let out = run_cli(bin, api_url, home, cwd, &["-p", prompt, "--output-format", "json"]);
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("claude -p --output-format json");
    v["session_id"].as_str().expect("a session id").to_string()
}
