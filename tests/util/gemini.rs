//! A Gemini CLI conversation on a test machine, laid out as the CLI 0.61 writes it:
//! `<gh>/projects.json` maps the project's realpath to a folder whose `.project_root`
//! marker names it, and the chat is a JSONL file in its `chats/`. And the real CLI,
//! run headless under `env -i` with a private home against a stand-in of the Gemini API.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::SystemTime;

use super::output_text as text;
use super::standin::{Reply, StandIn};

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

/// The CLI installed by `scripts/agent-clis` (npm, into target/agent-clis/gemini).
pub fn gemini_bin() -> Option<PathBuf> {
    let bin = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/agent-clis/gemini/node_modules/.bin/gemini");
    if bin.exists() {
        return Some(bin);
    }
    assert!(std::env::var_os("CI").is_none(), "the Gemini CLI is required in CI: run ./scripts/agent-clis");
    eprintln!("skipped: {} is not installed (./scripts/agent-clis installs it)", bin.display());
    None
}

pub const REPLY: &str = "STAND-IN-REPLY";

/// A stand-in of the Gemini API: the router's JSON call gets a fixed score, every
/// streamed call a short answer.
pub struct GeminiApi(pub StandIn);

impl GeminiApi {
    pub fn start() -> GeminiApi {
        GeminiApi(StandIn::start(|request| {
            if request.path.contains(":streamGenerateContent") {
                let event = serde_json::json!({
                    "candidates": [{"content": {"role": "model", "parts": [{"text": REPLY}]}, "finishReason": "STOP"}],
                    "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 2, "totalTokenCount": 12}
                });
                Reply::events(format!("data: {event}\r\n\r\n"))
            } else if request.path.contains(":generateContent") {
                // The model router asks for a complexity score in JSON.
                let score =
                    serde_json::json!({"complexity_reasoning": "simple", "complexity_score": 10}).to_string();
                let reply = serde_json::json!({
                    "candidates": [{"content": {"role": "model", "parts": [{"text": score}]}, "finishReason": "STOP"}]
                });
                Reply::json(reply.to_string())
            } else {
                Reply::json("{}".into())
            }
        }))
    }

    pub fn url(&self) -> String {
        self.0.url()
    }

    /// The body of every streamed call, in order.
    pub fn bodies(&self) -> Vec<String> {
        self.0.bodies(":streamGenerateContent")
    }
}

/// Where the CLI keeps its state, and how it is told so.
pub struct Home {
    /// `HOME` for the CLI.
    pub home: PathBuf,
    /// `GEMINI_CLI_HOME`, when the test sets it.
    pub cli_home: Option<PathBuf>,
}

impl Home {
    pub fn gh(&self) -> PathBuf {
        self.cli_home.as_ref().unwrap_or(&self.home).join(".gemini")
    }

    /// The receiver's own settings: offline, API-key auth, no trust prompt, no telemetry.
    pub fn write_settings(&self) {
        let settings = serde_json::json!({
            "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": false}},
            "general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
            "privacy": {"usageStatisticsEnabled": false},
            "telemetry": {"enabled": false}
        });
        std::fs::create_dir_all(self.gh()).unwrap();
        std::fs::write(self.gh().join("settings.json"), settings.to_string()).unwrap();
    }

    /// Everything the CLI wrote except the settings: a machine that never saw the chat.
    pub fn wipe_keeping_settings(&self) {
        for entry in std::fs::read_dir(self.gh()).unwrap().flatten() {
            if entry.file_name() == "settings.json" {
                continue;
            }
            let path = entry.path();
            if path.is_dir() {
                std::fs::remove_dir_all(&path).unwrap();
            } else {
                std::fs::remove_file(&path).unwrap();
            }
        }
    }
}

/// Runs the CLI under `env -i`: only a private home, PATH and the stand-in's address.
pub fn gemini(bin: &Path, api: &GeminiApi, home: &Home, cwd: &Path, args: &[&str]) -> Output {
    let mut cmd = Command::new("timeout");
    cmd.arg("120")
        .arg("env")
        .arg("-i")
        .arg(format!("HOME={}", home.home.display()))
        .arg("PATH=/usr/local/bin:/usr/bin:/bin")
        .arg("GEMINI_API_KEY=dummy")
        .arg(format!("GOOGLE_GEMINI_BASE_URL={}", api.url()))
        // No relaunched child node process, so `timeout` kills the one that runs.
        .arg("GEMINI_CLI_NO_RELAUNCH=true");
    if let Some(h) = &home.cli_home {
        cmd.arg(format!("GEMINI_CLI_HOME={}", h.display()));
    }
    cmd.arg(bin).args(args).current_dir(cwd);
    cmd.output().expect("run gemini")
}

/// Runs `gemini -p PROMPT -o json` in `cwd` and returns the session id.
pub fn new_conversation(bin: &Path, api: &GeminiApi, home: &Home, cwd: &Path, prompt: &str) -> String {
    let out = gemini(bin, api, home, cwd, &["-p", prompt, "-o", "json"]);
    assert!(out.status.success(), "{}", text(&out));
    let result: serde_json::Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{}", text(&out)));
    assert_eq!(result["response"], REPLY, "{}", text(&out));
    result["session_id"].as_str().expect("session id").to_string()
}

/// Resumes `id` in `cwd` with a new prompt and returns the body of the request that
/// carried it.
pub fn resume(bin: &Path, api: &GeminiApi, home: &Home, cwd: &Path, id: &str, prompt: &str) -> String {
    let before = api.bodies().len();
    let out = gemini(bin, api, home, cwd, &["-p", prompt, "--resume", id, "-o", "json"]);
    assert!(out.status.success(), "{}", text(&out));
    let bodies = api.bodies();
    bodies[before..]
        .iter()
        .find(|b| b.contains(prompt))
        .cloned()
        .unwrap_or_else(|| panic!("no request: {}", text(&out)))
}

/// The chat files of session `id` in the project folder `dir`.
pub fn files_of(dir: &Path, id: &str) -> Vec<PathBuf> {
    std::fs::read_dir(dir.join("chats"))
        .map(|d| d.flatten().map(|e| e.path()).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .filter(|p| {
            std::fs::read(p).is_ok_and(|b| {
                lokust::agent::gemini::parse_chat(&b).and_then(|c| c.session_id).as_deref() == Some(id)
            })
        })
        .collect()
}
