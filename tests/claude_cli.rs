//! The real Claude Code CLI resumes a conversation that lokust moved: it runs headless
//! under `env -i` with a private HOME, against a local stand-in of the Messages API on
//! 127.0.0.1 that records what the CLI sends. See docs/claude-code.md.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::util::standin::{self, REPLY, SLOW, StandIn};
use crate::util::{TestEnv, fixtures};

/// The CLI installed by `scripts/test` (npm, into target/claude-cli).
fn claude_bin() -> Option<PathBuf> {
    crate::util::claude::cli_bin()
}

/// The bodies of the message calls the stand-in received (token counts left out: they
/// carry the same prompt).
fn bodies(api: &StandIn) -> Vec<String> {
    api.requests()
        .into_iter()
        .filter(|r| {
            r.method == "POST" && r.path.starts_with("/v1/messages") && !r.path.contains("count_tokens")
        })
        .map(|r| r.body)
        .collect()
}

/// Runs the CLI under `env -i`: only a private HOME, PATH and the stand-in's address.
fn claude(bin: &Path, api: &StandIn, home: &Path, cwd: &Path, args: &[&str]) -> Output {
    crate::util::claude::run_cli(bin, &api.url(), home, cwd, args)
}

use crate::util::output_text as text;

/// Resumes `id` in `cwd` with a new prompt and returns the body of the request that
/// carried it to the stand-in.
fn resume(bin: &Path, api: &StandIn, home: &Path, cwd: &Path, id: &str, prompt: &str) -> String {
    let before = bodies(api).len();
    let out = claude(bin, api, home, cwd, &["-p", "--resume", id, prompt, "--output-format", "json"]);
    assert!(out.status.success(), "{}", text(&out));
    let bodies = bodies(api);
    bodies[before..].iter().find(|b| b.contains(prompt)).cloned().expect("the resumed request")
}

/// The snapshot/restore pair as a user runs it.
fn snapshot_and_wipe(env: &TestEnv, project: &Path, slot_dir: &Path) -> PathBuf {
    let lok = env.root.path().join("moved.lok");
    env.cmd("lokust-shell-snapshot")
        .current_dir(project)
        .env("PWD", project)
        .arg("--bundle")
        .arg("-o")
        .arg(&lok)
        .assert()
        .success();
    std::fs::remove_dir_all(slot_dir).unwrap();
    std::fs::remove_dir_all(project).unwrap();
    lok
}

fn slot_dir(home: &Path, project: &Path) -> PathBuf {
    let real = std::fs::canonicalize(project).unwrap();
    home.join(".claude/projects").join(lokust::capture::claude::slot_name(&real.to_string_lossy()))
}

#[test]
fn a_conversation_resumes_after_a_move_to_a_path_with_a_dot_a_space_and_accents() {
    let Some(bin) = claude_bin() else { return };
    let env = TestEnv::new();
    let api = standin::messages_api();
    let project = env.root.path().join("orig/project");
    std::fs::create_dir_all(&project).unwrap();

    let out = claude(
        &bin,
        &api,
        &env.home,
        &project,
        &["-p", "remember the word ZEBRA-42", "--output-format", "json"],
    );
    assert!(out.status.success(), "{}", text(&out));
    let result: serde_json::Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{}", text(&out)));
    assert_eq!(result["result"], REPLY, "{}", text(&out));
    let id = result["session_id"].as_str().expect("session id").to_string();
    let old_slot = slot_dir(&env.home, &project);
    assert!(old_slot.join(format!("{id}.jsonl")).is_file());

    let lok = snapshot_and_wipe(&env, &project, &old_slot);
    let target = env.root.path().join("new home/my.projects/naïve café");
    std::fs::create_dir_all(target.parent().unwrap()).unwrap();

    // Before the restore the conversation is gone: the control for what follows.
    let out = claude(&bin, &api, &env.home, target.parent().unwrap(), &["-p", "--resume", &id, "hello"]);
    assert!(!out.status.success(), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("No conversation found"), "{}", text(&out));

    let restored = env.cmd("lokust-shell-restore").arg(&lok).arg("--to").arg(&target).assert().success();
    let stdout = String::from_utf8_lossy(&restored.get_output().stdout).into_owned();
    assert!(stdout.contains(&format!("claude --resume {id}")), "{stdout}");

    let sent = resume(&bin, &api, &env.home, &target, &id, "which word?");
    let request: serde_json::Value = serde_json::from_str(&sent).unwrap();
    let messages = request["messages"].to_string();
    assert!(messages.contains("ZEBRA-42") && messages.contains(REPLY), "earlier turns missing: {messages}");

    // The transcript lives in the new slot and speaks of the new path only.
    let new_slot = slot_dir(&env.home, &target);
    let transcript = std::fs::read_to_string(new_slot.join(format!("{id}.jsonl"))).unwrap();
    let real = std::fs::canonicalize(&target).unwrap();
    for line in transcript.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        if let Some(cwd) = v.get("cwd").and_then(|c| c.as_str()) {
            assert_eq!(Path::new(cwd), real, "{line}");
        }
    }
}

/// Every real transcript in fixtures/real, placed at one path, bundled, restored
/// at another: the CLI resumes each one from there and sends its earlier turns.
#[test]
fn real_transcripts_resume_after_a_move() {
    let Some(bin) = claude_bin() else { return };
    let root = fixtures().join("real/claude-code");
    let api = standin::messages_api();
    for file in crate::util::claude::real_transcripts(&root) {
        let env = TestEnv::new();
        let project = env.root.path().join("orig/cli");
        let (id, slot) = crate::util::claude::place_real_transcript(&env, &file, &project);
        let lok = snapshot_and_wipe(&env, &project, &slot);
        let target = env.root.path().join("elsewhere/a.b c/ü");
        env.cmd("lokust-shell-restore").arg(&lok).arg("--to").arg(&target).assert().success();
        let before = bodies(&api).len();
        let out = claude(&bin, &api, &env.home, &target, &["-p", "--resume", &id, "continue please"]);
        assert!(out.status.success(), "{}: {}", file.display(), text(&out));
        let bodies = bodies(&api);
        let sent =
            bodies[before..].iter().find(|b| b.contains("continue please")).expect("the resumed request");
        let request: serde_json::Value = serde_json::from_str(sent).unwrap();
        let n = request["messages"].as_array().map_or(0, Vec::len);
        assert!(n > 1, "{}: the earlier turns were not sent ({n} messages)", file.display());
    }
}

/// Runs `claude -p PROMPT` in `cwd` and returns the new session's id.
fn new_conversation(bin: &Path, api: &StandIn, home: &Path, cwd: &Path, prompt: &str) -> String {
    let out = claude(bin, api, home, cwd, &["-p", prompt, "--output-format", "json"]);
    assert!(out.status.success(), "{}", text(&out));
    let result: serde_json::Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{}", text(&out)));
    result["session_id"].as_str().expect("session id").to_string()
}

/// Issue 10, item 1, with the real CLI: a sender's project entry plants an MCP server.
/// After a default restore, resuming there must not start it; after `--trust-config` it
/// does (the control that shows the planted server is real).
#[test]
fn r10_1_a_planted_mcp_server_starts_only_after_trust_config() {
    let Some(bin) = claude_bin() else { return };
    let env = TestEnv::new();
    let api = standin::messages_api();
    let project = env.root.path().join("orig/project");
    std::fs::create_dir_all(&project).unwrap();
    let id = new_conversation(&bin, &api, &env.home, &project, "remember the word ZEBRA-42");

    let marker = env.root.path().join("mcp-started");
    let global_path = env.home.join(".claude.json");
    let mut global: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&global_path).unwrap()).unwrap();
    let real = std::fs::canonicalize(&project).unwrap();
    let entry = &mut global["projects"][real.to_str().unwrap()];
    entry["hasTrustDialogAccepted"] = true.into();
    entry["mcpServers"] = serde_json::json!({
        "planted": {"type": "stdio", "command": "/bin/sh", "args": ["-c", format!("touch {}", marker.display())]}
    });
    std::fs::write(&global_path, serde_json::to_vec_pretty(&global).unwrap()).unwrap();
    // The control: at the sender's own path the server starts.
    let out = claude(&bin, &api, &env.home, &project, &["-p", "--resume", &id, "hello"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(marker.exists(), "the planted server did not start even at home: {}", text(&out));
    std::fs::remove_file(&marker).unwrap();

    let old_slot = slot_dir(&env.home, &project);
    let lok = snapshot_and_wipe(&env, &project, &old_slot);

    let target = env.root.path().join("new place/safe");
    env.cmd("lokust-shell-restore").arg(&lok).arg("--to").arg(&target).assert().success();
    let out = claude(&bin, &api, &env.home, &target, &["-p", "--resume", &id, "which word?"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(!marker.exists(), "a default restore let the sender's MCP server start");

    let trusted = env.root.path().join("new place/trusted");
    env.cmd("lokust-shell-restore")
        .arg(&lok)
        .arg("--to")
        .arg(&trusted)
        .arg("--trust-config")
        .assert()
        .success();
    let out = claude(&bin, &api, &env.home, &trusted, &["-p", "--resume", &id, "which word?"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(marker.exists(), "--trust-config did not install the MCP server: {}", text(&out));
}

/// Issue 10, item 5, with the real CLI: two conversations 40 days apart both resume
/// after a restore (Claude Code deletes transcripts older than cleanupPeriodDays).
#[test]
fn r10_5_conversations_40_days_apart_both_resume() {
    let Some(bin) = claude_bin() else { return };
    let env = TestEnv::new();
    let api = standin::messages_api();
    let project = env.root.path().join("orig/project");
    std::fs::create_dir_all(&project).unwrap();
    let old_id = new_conversation(&bin, &api, &env.home, &project, "the old word is OKAPI-7");
    let new_id = new_conversation(&bin, &api, &env.home, &project, "the new word is LYNX-9");
    let old_slot = slot_dir(&env.home, &project);
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64;
    let day = 86_400;
    for (id, age) in [(&old_id, 41 * day), (&new_id, day)] {
        let t = filetime::FileTime::from_unix_time(now - age, 0);
        filetime::set_file_mtime(old_slot.join(format!("{id}.jsonl")), t).unwrap();
    }
    let lok = snapshot_and_wipe(&env, &project, &old_slot);
    let target = env.root.path().join("moved.d/é");
    env.cmd("lokust-shell-restore").arg(&lok).arg("--to").arg(&target).assert().success();
    // A first session there lives long enough for the CLI's retention cleanup to run.
    let out = claude(&bin, &api, &env.home, &target, &["-p", &format!("{SLOW} start")]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(env.home.join(".claude/.last-cleanup").exists(), "the cleanup did not run: {}", text(&out));
    for (id, word) in [(&new_id, "LYNX-9"), (&old_id, "OKAPI-7")] {
        let before = bodies(&api).len();
        let out = claude(&bin, &api, &env.home, &target, &["-p", "--resume", id, "which word?"]);
        assert!(out.status.success(), "{id}: {}", text(&out));
        let bodies = bodies(&api);
        let sent = bodies[before..].iter().find(|b| b.contains("which word?")).expect("the resumed request");
        assert!(sent.contains(word), "{id}: the earlier turn was not sent");
    }
}

/// Issue 15 with the real CLI: the conversation travels sealed to an SSH key
/// (`snapshot --bundle --encrypt-to … | restore -`), the receiver's usual key opens it,
/// and the CLI resumes it with its earlier turns.
#[test]
fn a_conversation_resumes_after_travelling_sealed_to_an_ssh_key() {
    let Some(bin) = claude_bin() else { return };
    if !crate::util::have("ssh-keygen") {
        return;
    }
    let env = TestEnv::new();
    let api = standin::messages_api();
    let project = env.root.path().join("orig/project");
    std::fs::create_dir_all(&project).unwrap();
    let id = new_conversation(&bin, &api, &env.home, &project, "remember the word ZEBRA-42");
    let old_slot = slot_dir(&env.home, &project);

    // The receiver's key, where lokust looks without -i.
    std::fs::create_dir_all(env.home.join(".ssh")).unwrap();
    let key = env.home.join(".ssh/id_ed25519");
    crate::util::run_ok(
        Command::new("ssh-keygen").args(["-q", "-t", "ed25519", "-N", ""]).arg("-f").arg(&key),
    );
    let public = std::fs::read_to_string(key.with_extension("pub")).unwrap();
    let sealed = env
        .cmd("lokust-shell-snapshot")
        .current_dir(&project)
        .env("PWD", &project)
        .args(["--bundle", "-q", "--encrypt-to", public.trim()])
        .output()
        .unwrap();
    assert!(sealed.status.success(), "{}", String::from_utf8_lossy(&sealed.stderr));
    assert!(sealed.stdout.starts_with(b"age-encryption.org/v1\n"));
    assert!(!String::from_utf8_lossy(&sealed.stdout).contains("ZEBRA-42"));
    std::fs::remove_dir_all(&old_slot).unwrap();
    std::fs::remove_dir_all(&project).unwrap();

    let target = env.root.path().join("other machine/pro.ject");
    env.cmd("lokust-shell-restore")
        .args(["-", "--to"])
        .arg(&target)
        .write_stdin(sealed.stdout)
        .assert()
        .success();
    let before = bodies(&api).len();
    let out = claude(&bin, &api, &env.home, &target, &["-p", "--resume", &id, "which word?"]);
    assert!(out.status.success(), "{}", text(&out));
    let bodies = bodies(&api);
    let sent = bodies[before..].iter().find(|b| b.contains("which word?")).expect("the resumed request");
    assert!(sent.contains("ZEBRA-42"), "the earlier turns were not sent: {sent}");
}

/// Issue 14 with the real CLI: a conversation held in a checkout with unpushed work moves
/// with that work; restored into a fresh clone elsewhere, the CLI resumes there, sends
/// the earlier turns, and the checkout holds the work the conversation speaks of.
#[test]
fn a_conversation_resumes_in_a_fresh_clone_that_has_the_unpushed_work() {
    use crate::util::work::{git, scenario, state};
    let Some(bin) = claude_bin() else { return };
    let env = TestEnv::new();
    let api = standin::messages_api();
    let (origin, work) = scenario(env.root.path());
    let _ = std::fs::remove_file(work.join("deploy.env"));
    let id = new_conversation(&bin, &api, &env.home, &work, "remember the word HERON-9");
    let (lok, _) = crate::util::claude::snapshot(&env, &work, &[]);
    std::fs::remove_dir_all(slot_dir(&env.home, &work)).unwrap();
    let want = state(&work);

    let target = env.root.path().join("laptop/äpp clone");
    std::fs::create_dir_all(target.parent().unwrap()).unwrap();
    git(env.root.path(), &["clone", "-q", origin.to_str().unwrap(), target.to_str().unwrap()]);
    let restored = env.cmd("lokust-shell-restore").arg(&lok).arg("--to").arg(&target).assert().success();
    let said = String::from_utf8_lossy(&restored.get_output().stdout).into_owned();
    assert!(said.contains("git work laid on") && said.contains(&format!("claude --resume {id}")), "{said}");
    assert_eq!(state(&target), want, "the checkout does not hold the carried work");

    let sent = resume(&bin, &api, &env.home, &target, &id, "which bird?");
    assert!(sent.contains("HERON-9"), "earlier turns missing: {sent}");
}
