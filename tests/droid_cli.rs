//! The real Factory Droid resumes a session that lokust moved: its platform binary runs
//! under `env -i` with a private home, its model a custom one served by a local stand-in
//! of an OpenAI-compatible API on 127.0.0.1, and the Factory API pointed at the same
//! stand-in (resume first asks it about the session; a 404 lets it go on). Droid exits 0
//! even when it resumes nothing, so every check is on what reached the stand-in.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use lokust::agent::droid;

use crate::util::standin::StandIn;
use crate::util::{TestEnv, stdout};

/// The binary `scripts/agent-clis` installs (npm, into target/agent-clis/droid).
fn droid_bin() -> Option<PathBuf> {
    let bin = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("target/agent-clis/droid/node_modules/@factory/cli-linux-x64/bin/droid");
    if bin.exists() {
        return Some(bin);
    }
    assert!(std::env::var_os("CI").is_none(), "Factory Droid is required in CI: run ./scripts/agent-clis");
    eprintln!("skipped: {} is not installed (./scripts/agent-clis installs it)", bin.display());
    None
}

const REPLY: &str = crate::util::standin::REPLY;

fn chat_api() -> StandIn {
    crate::util::standin::chat_completions()
}

/// `~/.factory/settings.json`: the stand-in as a custom model, with a key that must never
/// travel, and no cloud sync.
fn write_settings(home: &Path, api: &StandIn) {
    let dir = home.join(".factory");
    std::fs::create_dir_all(&dir).unwrap();
    let settings = serde_json::json!({"customModels": [{"model": "mock-model", "displayName": "Mock",
        "baseUrl": format!("{}/v1", api.url()), "apiKey": "DROID-KEY-CANARY-5521",
        "provider": "generic-chat-completion-api", "maxOutputTokens": 1024}], "cloudSessionSync": false});
    std::fs::write(dir.join("settings.json"), settings.to_string()).unwrap();
}

use crate::util::output_text as text;

/// `droid exec -m custom:Mock-0 -o json ARGS` in `cwd`, under `env -i`.
fn droid(bin: &Path, api: &StandIn, home: &Path, cwd: &Path, args: &[&str]) -> Output {
    let mut cmd = Command::new("timeout");
    cmd.arg("120")
        .arg("env")
        .arg("-i")
        .arg(format!("HOME={}", home.display()))
        .arg("PATH=/usr/local/bin:/usr/bin:/bin")
        .arg(format!("FACTORY_API_BASE_URL={}", api.url()))
        .arg(format!("FACTORY_TELEMETRY_INGEST_BASE_URL={}", api.url()))
        .arg(bin)
        .args(["exec", "-m", "custom:Mock-0", "-o", "json"])
        .args(args)
        .current_dir(cwd)
        .stdin(std::process::Stdio::null());
    cmd.output().expect("run droid")
}

fn new_session(bin: &Path, api: &StandIn, home: &Path, cwd: &Path, prompt: &str) -> String {
    let out = droid(bin, api, home, cwd, &[prompt]);
    assert!(out.status.success(), "{}", text(&out));
    let result: serde_json::Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{}", text(&out)));
    assert_eq!(result["result"], REPLY, "{}", text(&out));
    result["session_id"].as_str().expect("session id").to_string()
}

/// Resumes `id` in `cwd` and returns the body of the chat request that carried `prompt`.
fn resume(bin: &Path, api: &StandIn, home: &Path, cwd: &Path, id: &str, prompt: &str) -> String {
    let before = api.bodies("/chat/completions").len();
    let out = droid(bin, api, home, cwd, &["-s", id, prompt]);
    let bodies = api.bodies("/chat/completions");
    bodies[before..]
        .iter()
        .find(|b| b.contains(prompt))
        .cloned()
        .unwrap_or_else(|| panic!("no request carried the prompt: {}", text(&out)))
}

#[test]
fn a_session_resumes_at_a_path_with_a_dot_a_space_and_non_ascii_letters() {
    let Some(bin) = droid_bin() else { return };
    let env = TestEnv::new();
    let api = chat_api();
    write_settings(&env.home, &api);
    let project = env.root.path().join("orig/proj");
    std::fs::create_dir_all(project.join("sub")).unwrap();
    let id = new_session(&bin, &api, &env.home, &project, "remember the word KIWI-11");
    let sub_id = new_session(&bin, &api, &env.home, &project.join("sub"), "in the subfolder: MOLE-4");
    let elsewhere = env.root.path().join("orig/project-b");
    std::fs::create_dir_all(&elsewhere).unwrap();
    new_session(&bin, &api, &env.home, &elsewhere, "another project: EMU-6");

    let lok = env.root.path().join("moved.lok");
    let out = env
        .cmd("lokust-shell-snapshot")
        .current_dir(&project)
        .env("PWD", &project)
        .args(["--bundle", "--agents", "droid", "-o"])
        .arg(&lok)
        .assert()
        .success();
    let summary = crate::util::stderr(&out);
    assert!(
        summary.contains("droid:       2 sessions") || summary.contains("droid:       2 conversations"),
        "{summary}"
    );
    let raw = std::fs::read_to_string(&lok).unwrap();
    assert!(!raw.contains("DROID-KEY-CANARY-5521"), "a Factory key travelled");
    let listing = crate::util::stdout(&env.cmd("lokust-shell").arg("inspect").arg(&lok).assert().success());
    assert!(
        listing.contains("Factory Droid") && listing.contains(&id) && listing.contains(&sub_id),
        "{listing}"
    );
    assert!(listing.contains("remember the word KIWI-11") && !listing.contains("EMU-6"), "{listing}");

    // A machine that never saw the sessions.
    std::fs::remove_dir_all(env.home.join(".factory/sessions")).unwrap();
    let _ = std::fs::remove_dir_all(env.home.join(".factory/cache"));
    std::fs::remove_dir_all(&project).unwrap();
    let target = env.root.path().join("new home/re.named dir/ünïcödé 日本");
    std::fs::create_dir_all(target.join("sub")).unwrap();
    // The control: Droid exits 0 for an id it does not have, and sends nothing old.
    let sent = resume(&bin, &api, &env.home, &target, &id, "anything before?");
    assert!(!sent.contains("KIWI-11"), "the control resumed a session that is not there");
    let _ = std::fs::remove_dir_all(env.home.join(".factory/sessions"));

    let dry = env
        .cmd("lokust-shell-restore")
        .arg(&lok)
        .arg("--to")
        .arg(&target)
        .arg("--dry-run")
        .assert()
        .success();
    assert!(crate::util::stdout(&dry).contains("Factory Droid: 2 sessions would go to"));
    assert!(!env.home.join(".factory/sessions").exists(), "a dry run wrote");
    let said = crate::util::stdout(
        &env.cmd("lokust-shell-restore").arg(&lok).arg("--to").arg(&target).assert().success(),
    );
    assert!(said.contains("droid --resume "), "{said}");

    let real = std::fs::canonicalize(&target).unwrap();
    let folder = env.home.join(".factory/sessions").join(droid::slot(real.to_str().unwrap()));
    let settings = std::fs::read_to_string(folder.join(format!("{id}.settings.json"))).unwrap();
    assert!(!settings.contains("autonomy"), "a grant travelled: {settings}");
    let sent = resume(&bin, &api, &env.home, &target, &id, "which word?");
    assert!(sent.contains("KIWI-11") && sent.contains(REPLY), "the earlier turn was not sent: {sent}");
    // Droid appended to the moved file, in the new slot: the resume went through whole.
    let after = std::fs::read_to_string(folder.join(format!("{id}.jsonl"))).unwrap();
    assert!(after.contains("which word?"), "the resumed turn was not recorded in the new slot");
    let sent = resume(&bin, &api, &env.home, &target.join("sub"), &sub_id, "and there?");
    assert!(sent.contains("MOLE-4"), "{sent}");
}

fn element_of(files: &[(&str, Vec<u8>)], project_dir: &str) -> serde_json::Value {
    use crate::util::archive::{raw, raw_tar};
    use base64::Engine;
    let entries: Vec<_> = files.iter().map(|(name, data)| raw(name.as_bytes(), b'0', data)).collect();
    let tar = raw_tar(&entries);
    let data = base64::engine::general_purpose::STANDARD.encode(crate::util::archive::gzip(&tar));
    serde_json::json!({"kind": droid::KIND, "format": "tar.gz+base64", "uncompressed_bytes": tar.len(),
        "base64_bytes": data.len(), "data": data, "project_dir": project_dir})
}

/// What a stranger's file may hold: a session whose settings grant full autonomy lands
/// without the grant; a path out of the sessions tree, the user's settings, or a session
/// recorded outside the project refuse the element whole, with nothing written.
#[test]
fn a_strangers_droid_element_grants_nothing_and_bad_ones_are_refused_whole() {
    let env = TestEnv::new();
    let project = env.root.path().join("p");
    std::fs::create_dir_all(&project).unwrap();
    crate::util::claude::make_project(&env, &project);
    let (base, _) = crate::util::claude::snapshot(&env, &project, &["--agents", "claude"]);
    let id = "de9533e0-92a6-4294-86e1-8c7b4a936ac6";
    let start = |cwd: &str| {
        let s = serde_json::json!({"type": "session_start", "id": id, "cwd": cwd});
        let m = serde_json::json!({"type": "message", "id": "m1", "timestamp": "2026-11-24T06:46:58.678Z",
            "message": {"role": "user", "content": [{"type": "text", "text": "hi"}]}});
        format!("{s}\n{m}\n").into_bytes()
    };
    let grant =
        br#"{"model":"gpt-5","autonomyLevel":"high","autonomyMode":"auto-high","toolExecutionMode":"all"}"#;
    let with = |element: serde_json::Value, name: &str| {
        let mut doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&base).unwrap()).unwrap();
        doc["bundles"] = serde_json::json!([element]);
        let out = env.root.path().join(name);
        std::fs::write(&out, serde_json::to_vec(&doc).unwrap()).unwrap();
        out
    };

    let lok = with(
        element_of(
            &[(&format!("{id}.jsonl"), start("/old/p")), (&format!("{id}.settings.json"), grant.to_vec())],
            "/old/p",
        ),
        "grant.lok",
    );
    let target = env.root.path().join("t");
    env.cmd("lokust-shell-restore").arg(&lok).arg("--to").arg(&target).assert().success();
    let real = std::fs::canonicalize(&target).unwrap();
    let folder = env.home.join(".factory/sessions").join(droid::slot(real.to_str().unwrap()));
    let settings = std::fs::read_to_string(folder.join(format!("{id}.settings.json"))).unwrap();
    assert!(!settings.contains("autonomy") && !settings.contains("toolExecutionMode"), "{settings}");
    std::fs::remove_dir_all(env.home.join(".factory")).unwrap();

    let cases: Vec<(&str, serde_json::Value)> = vec![
        ("a path out of the tree", element_of(&[(&format!("../{id}.jsonl"), start("/old/p"))], "/old/p")),
        (
            "the user's settings",
            element_of(&[("settings.json", br#"{"customModels":[]}"#.to_vec())], "/old/p"),
        ),
        ("MCP servers", element_of(&[("mcp.json", br#"{"mcpServers":{}}"#.to_vec())], "/old/p")),
        (
            "a session from outside the project",
            element_of(&[(&format!("{id}.jsonl"), start("/etc"))], "/old/p"),
        ),
        ("no project path", element_of(&[(&format!("{id}.jsonl"), start("/old/p"))], "")),
    ];
    for (i, (what, element)) in cases.into_iter().enumerate() {
        let lok = with(element, &format!("bad{i}.lok"));
        let out = env
            .cmd("lokust-shell-restore")
            .arg(&lok)
            .arg("--to")
            .arg(env.root.path().join(format!("t{i}")))
            .assert()
            .failure();
        let err = crate::util::stderr(&out);
        assert!(
            err.contains("Factory Droid conversations refused, nothing of them written"),
            "{what}: {err}"
        );
        assert!(!env.home.join(".factory").exists(), "{what}: written");
    }
}

/// `lokust-shell move P/a P/b --move-dir` on this machine: the session's transcript and
/// settings leave the old project's folder, `droid exec -s ID` in `P/b` sends the earlier
/// turn, and `find` names `P/b`.
#[test]
fn a_session_moves_on_this_machine_and_resumes_there() {
    let Some(bin) = droid_bin() else { return };
    let env = TestEnv::new();
    let api = chat_api();
    write_settings(&env.home, &api);
    let base = std::fs::canonicalize(env.root.path()).unwrap().join("P");
    let (a, b) = (base.join("a"), base.join("b"));
    std::fs::create_dir_all(&a).unwrap();
    let id = new_session(&bin, &api, &env.home, &a, "remember the word EGRET-8");
    let before: Vec<PathBuf> = crate::util::files_below(&env.home.join(".factory/sessions"))
        .into_iter()
        .filter(|p| p.to_string_lossy().contains(&id))
        // Droid's own `.bak` of the settings neither travels nor moves: it stays behind.
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl" || x == "json"))
        .collect();
    assert_eq!(before.len(), 2, "{before:?}");

    let out = env.cmd("lokust-shell").args(["move", "--move-dir"]).arg(&a).arg(&b).assert().success();
    assert!(stdout(&out).contains("Droid: 1 conversation"), "{}", stdout(&out));
    assert!(before.iter().all(|p| !p.exists()), "an old copy is left: {before:?}");
    let left: Vec<PathBuf> = crate::util::files_below(&env.home.join(".factory"))
        .into_iter()
        .filter(|p| p.to_string_lossy().contains(".lokust-moving-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    let found = stdout(&env.cmd("lokust-shell").arg("find").arg(&id).assert().success());
    assert!(found.contains(&format!("{} (exists)", b.display())), "{found}");
    let sent = resume(&bin, &api, &env.home, &b, &id, "which word?");
    assert!(sent.contains("EGRET-8"), "the earlier turn was not sent");
}
