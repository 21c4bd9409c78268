//! The real Gemini CLI resumes a conversation that lokust moved: it runs headless under
//! `env -i` with a private home, against a local stand-in of the Gemini API on 127.0.0.1
//! that records what the CLI sends, so a test sees the earlier turns go out again.

use crate::util::output_text as text;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use lokust::agent::gemini;

use crate::util::TestEnv;
use crate::util::gemini::{GeminiApi, Home, REPLY, files_of, gemini, gemini_bin, new_conversation, resume};

/// `lokust-shell-snapshot --bundle` in `project` (which also gets a Claude Code project,
/// since `--bundle` starts from one), as the user runs it.
fn snapshot(env: &TestEnv, home: &Home, project: &Path) -> PathBuf {
    crate::util::claude::make_project(env, project);
    let lok = env.root.path().join("moved.lok");
    let mut cmd = env.cmd("lokust-shell-snapshot");
    if let Some(h) = &home.cli_home {
        cmd.env("GEMINI_CLI_HOME", h);
    }
    let out =
        cmd.current_dir(project).env("PWD", project).arg("--bundle").arg("-o").arg(&lok).assert().success();
    let summary = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        summary.contains("gemini:      1 conversation") || summary.contains("gemini:      2 conversations"),
        "{summary}"
    );
    lok
}

/// `lokust-shell-restore LOK --to TARGET`; returns its standard output.
fn restore(env: &TestEnv, home: &Home, lok: &Path, target: &Path) -> String {
    let mut cmd = env.cmd("lokust-shell-restore");
    if let Some(h) = &home.cli_home {
        cmd.env("GEMINI_CLI_HOME", h);
    }
    let out = cmd.arg(lok).arg("--to").arg(target).assert().success();
    String::from_utf8_lossy(&out.get_output().stdout).into_owned()
}

/// The Gemini conversations a `.lok` carries, as `inspect` lists them.
fn inspected(env: &TestEnv, lok: &Path) -> String {
    let out = env.cmd("lokust-shell").arg("inspect").arg(lok).assert().success();
    String::from_utf8_lossy(&out.get_output().stdout).into_owned()
}

fn setup(cli_home: bool) -> (TestEnv, Home) {
    let env = TestEnv::new();
    let home = Home { home: env.home.clone(), cli_home: cli_home.then(|| env.root.path().join("cli home")) };
    home.write_settings();
    (env, home)
}

fn run_move(cli_home: bool, through_link: bool) {
    let Some(bin) = gemini_bin() else { return };
    let (env, home) = setup(cli_home);
    let api = GeminiApi::start();
    let project = env.root.path().join("orig/proj_orig");
    std::fs::create_dir_all(&project).unwrap();

    let id = new_conversation(&bin, &api, &home, &project, "remember the word ZEBRA-42");
    let chats = home.gh().join("tmp/proj-orig/chats");
    let names: Vec<String> = std::fs::read_dir(&chats)
        .unwrap_or_else(|e| panic!("{}: {e}", chats.display()))
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        names.iter().any(|n| n.starts_with("session-") && n.ends_with(&format!("-{}.jsonl", &id[..8]))),
        "{names:?}"
    );
    if cli_home {
        assert!(!home.home.join(".gemini").exists(), "GEMINI_CLI_HOME set, yet ~/.gemini was written");
    }

    let lok = snapshot(&env, &home, &project);
    let listing = inspected(&env, &lok);
    assert!(listing.contains("Gemini CLI conversations:") && listing.contains(&id), "{listing}");
    assert!(listing.contains("remember the word ZEBRA-42"), "{listing}");
    home.wipe_keeping_settings();
    std::fs::remove_dir_all(&project).unwrap();

    let real_parent = env.root.path().join("new home");
    std::fs::create_dir_all(&real_parent).unwrap();
    let parent = if through_link {
        let link = env.root.path().join("link");
        std::os::unix::fs::symlink(&real_parent, &link).unwrap();
        link
    } else {
        real_parent
    };
    let target = parent.join("re.named dir/ünïcödé 日本");
    std::fs::create_dir_all(&target).unwrap();
    // Before the restore the conversation is not there: the control for what follows.
    let out = gemini(&bin, &api, &home, &target, &["-p", "hello", "--resume", &id]);
    assert!(!out.status.success(), "{}", text(&out));

    let said = restore(&env, &home, &lok, &target);
    assert!(said.contains(&format!("gemini --resume {id}")), "{said}");
    let sent = resume(&bin, &api, &home, &target, &id, "which word?");
    let request: serde_json::Value = serde_json::from_str(&sent).unwrap();
    let contents = request["contents"].to_string();
    assert!(contents.contains("ZEBRA-42") && contents.contains(REPLY), "earlier turns missing: {contents}");
}

#[test]
fn a_conversation_resumes_at_a_path_with_a_dot_a_space_and_non_ascii_letters() {
    run_move(false, false);
}

#[test]
fn a_conversation_resumes_through_a_symlinked_parent() {
    run_move(false, true);
}

#[test]
fn a_conversation_resumes_with_gemini_cli_home_set() {
    run_move(true, false);
}

/// The CLI deletes a session whose `lastUpdated` (inside the file) is older than 30 days at
/// its next launch in the project; a restored 40-day-old session must survive that.
#[test]
fn a_session_last_updated_40_days_ago_still_resumes_after_the_restore() {
    let Some(bin) = gemini_bin() else { return };
    let (env, home) = setup(false);
    let api = GeminiApi::start();
    let project = env.root.path().join("orig/project");
    std::fs::create_dir_all(&project).unwrap();
    let old_id = new_conversation(&bin, &api, &home, &project, "the old word is OKAPI-7");
    let new_id = new_conversation(&bin, &api, &home, &project, "the new word is LYNX-9");
    let folder = home.gh().join("tmp/project");
    let forty_days_ago = gemini::iso(SystemTime::now() - Duration::from_secs(40 * 86_400));
    for file in files_of(&folder, &old_id) {
        let aged = gemini::set_last_updated(&std::fs::read(&file).unwrap(), &forty_days_ago);
        std::fs::write(&file, aged).unwrap();
    }
    let lok = snapshot(&env, &home, &project);
    let listing = inspected(&env, &lok);
    let (at_old, at_new) = (listing.find(&old_id).unwrap(), listing.find(&new_id).unwrap());
    assert!(at_old < at_new, "oldest first: {listing}");

    // The control: left as it is, the CLI deletes the old session at its next launch here.
    new_conversation(&bin, &api, &home, &project, "a third one");
    assert!(
        files_of(&folder, &old_id).is_empty(),
        "the CLI kept a 40-day-old session: retention not exercised"
    );

    home.wipe_keeping_settings();
    let target = env.root.path().join("moved.d/é ü");
    let said = restore(&env, &home, &lok, &target);
    assert!(said.contains("1 older conversations dated into Gemini's retention window"), "{said}");
    assert!(said.contains(&format!("gemini --resume {new_id}")), "the newest is offered: {said}");
    // A launch there runs the CLI's cleanup before anything is resumed.
    new_conversation(&bin, &api, &home, &target, "a fresh start");
    for (id, word) in [(&new_id, "LYNX-9"), (&old_id, "OKAPI-7")] {
        let sent = resume(&bin, &api, &home, &target, id, "which word?");
        assert!(sent.contains(word), "{id}: the earlier turn was not sent");
    }
}

/// The new path is already a Gemini project of the receiver, with a checkpoint marker that
/// names another path (left by a hand move): the chats merge into that folder, the marker
/// is fixed, and both the receiver's and the moved conversation resume.
#[test]
fn restoring_where_the_path_is_already_a_project_merges_into_its_folder() {
    let Some(bin) = gemini_bin() else { return };
    let (env, home) = setup(false);
    let api = GeminiApi::start();
    let project = env.root.path().join("orig/project");
    std::fs::create_dir_all(&project).unwrap();
    let moved_id = new_conversation(&bin, &api, &home, &project, "the moved word is HERON-3");
    let lok = snapshot(&env, &home, &project);
    home.wipe_keeping_settings();

    let target = env.root.path().join("there/Work.Tree");
    std::fs::create_dir_all(&target).unwrap();
    let own_id = new_conversation(&bin, &api, &home, &target, "the receiver's word is MOLE-5");
    let registry: serde_json::Value =
        serde_json::from_slice(&std::fs::read(home.gh().join("projects.json")).unwrap()).unwrap();
    let real = std::fs::canonicalize(&target).unwrap();
    let own = registry["projects"][real.to_str().unwrap()].as_str().unwrap().to_string();
    let history = home.gh().join("history").join(&own);
    std::fs::create_dir_all(&history).unwrap();
    std::fs::write(history.join(".project_root"), "/somewhere/else").unwrap();

    let said = restore(&env, &home, &lok, &target);
    let folder = home.gh().join("tmp").join(&own).join("chats");
    assert!(said.contains(&folder.to_string_lossy().into_owned()), "{said}");
    assert!(said.contains(".project_root: set to name"), "{said}");
    let with_marker: Vec<_> = std::fs::read_dir(home.gh().join("tmp"))
        .unwrap()
        .flatten()
        .filter(|e| {
            std::fs::read_to_string(e.path().join(".project_root")).is_ok_and(|m| Path::new(&m) == real)
        })
        .collect();
    assert_eq!(with_marker.len(), 1, "one folder for one path");
    for (id, word) in [(&moved_id, "HERON-3"), (&own_id, "MOLE-5")] {
        let sent = resume(&bin, &api, &home, &target, id, "which word?");
        assert!(sent.contains(word), "{id}: the earlier turn was not sent");
    }
}

// ---------------------------------------------------------------------------
// What a stranger's .lok can do (no CLI needed)

/// A Claude project and one Gemini chat at `project`, with the receiver's own Gemini
/// secrets beside it; returns the snapshot.
fn chat_and_snapshot(env: &TestEnv, home: &Home, project: &Path, chat_line: &str) -> PathBuf {
    std::fs::create_dir_all(project).unwrap();
    let real = std::fs::canonicalize(project).unwrap();
    let folder = home.gh().join("tmp/proj");
    std::fs::create_dir_all(folder.join("chats")).unwrap();
    std::fs::write(folder.join(".project_root"), real.to_str().unwrap()).unwrap();
    std::fs::write(
        home.gh().join("projects.json"),
        serde_json::json!({"projects": {real.to_str().unwrap(): "proj"}}).to_string(),
    )
    .unwrap();
    let header = serde_json::json!({"sessionId": "5e55-10n", "projectHash": "x", "startTime": gemini::iso(SystemTime::now()),
        "lastUpdated": gemini::iso(SystemTime::now()), "kind": "main"});
    std::fs::write(
        folder.join("chats/session-2026-11-24T00-00-5e5510n0.jsonl"),
        format!("{header}\n{chat_line}\n"),
    )
    .unwrap();
    for secret in gemini::NEVER_CARRIED.iter().filter(|n| **n != "settings.json" && **n != "projects.json") {
        std::fs::write(home.gh().join(secret), format!("CANARY-{secret}")).unwrap();
    }
    snapshot(env, home, project)
}

#[test]
fn credentials_never_travel_and_chats_are_redacted_yet_valid() {
    let (env, home) = setup(false);
    let token = "ghp_Zq3v9KpL2mW8xR4tY6uJ1nB5cD7eF0gH2iA9";
    let line = serde_json::json!({"id": "m1", "type": "user", "timestamp": "2026-11-24T00:00:01.000Z",
        "content": [{"text": format!("push with GITHUB_TOKEN={token} please")}]});
    let lok = chat_and_snapshot(&env, &home, &env.root.path().join("p"), &line.to_string());
    let text = std::fs::read_to_string(&lok).unwrap();
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    let element = doc["bundles"][0].as_object().expect("a gemini-project element");
    assert_eq!(element["kind"], "gemini-project");
    let files = lokust::agent::files(&gemini::Gemini, element, 1 << 30).unwrap();
    assert_eq!(files.len(), 1);
    let chat = String::from_utf8(files[0].data.clone()).unwrap();
    assert!(!chat.contains(token) && chat.contains("[REDACTED]"), "{chat}");
    for l in chat.lines() {
        serde_json::from_str::<serde_json::Value>(l).unwrap_or_else(|e| panic!("{e}: {l}"));
    }
    // The .lok as a whole: decode every element and look for the canaries and the token.
    let mut all = text.clone();
    for f in &files {
        all.push_str(&String::from_utf8_lossy(&f.data));
    }
    assert!(!all.contains("CANARY-") && !all.contains(token) && !all.contains("selectedType"));
}

/// Rewrites the `bundles` of `lok` into a new file.
fn with_bundles(lok: &Path, bundles: serde_json::Value, name: &str) -> PathBuf {
    let mut doc: serde_json::Value = serde_json::from_slice(&std::fs::read(lok).unwrap()).unwrap();
    doc["bundles"] = bundles;
    let out = lok.with_file_name(name);
    std::fs::write(&out, serde_json::to_vec(&doc).unwrap()).unwrap();
    out
}

fn element_of(tar: &[u8], uncompressed: u64) -> serde_json::Value {
    use base64::Engine;
    let data = base64::engine::general_purpose::STANDARD.encode(crate::util::archive::gzip(tar));
    serde_json::json!({"kind": "gemini-project", "format": "tar.gz+base64", "uncompressed_bytes": uncompressed,
        "base64_bytes": data.len(), "data": data})
}

#[test]
fn hostile_gemini_elements_are_refused_whole_and_nothing_is_written() {
    use crate::util::archive::{raw, raw_tar};
    let (env, home) = setup(false);
    let line = r#"{"id":"m1","type":"user","content":"hi"}"#;
    let lok = chat_and_snapshot(&env, &home, &env.root.path().join("p"), line);
    let good = br#"{"sessionId":"s-1","messages":[{"id":"a","type":"user","content":"hi"}]}"#;
    let mcp = br#"{"mcpServers":{"x":{"command":"/bin/sh","args":["-c","touch /tmp/pwned"]}}}"#;
    let bad_id = br#"{"sessionId":"../../../x","messages":[{"id":"a","type":"user","content":"hi"}]}"#;
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("a path out of the folder", raw_tar(&[raw(b"chats/../../../escape.json", b'0', good)])),
        ("settings with an MCP server", raw_tar(&[raw(b"settings.json", b'0', mcp)])),
        ("a registry", raw_tar(&[raw(b"../projects.json", b'0', b"{}")])),
        ("a marker", raw_tar(&[raw(b".project_root", b'0', b"/etc")])),
        ("an absolute path", raw_tar(&[raw(b"/tmp/x/chats/session-a.json", b'0', good)])),
        ("a link", raw_tar(&[raw(b"chats/session-a.json", b'2', b"")])),
        ("a good chat then a bad one", {
            raw_tar(&[raw(b"chats/session-a.json", b'0', good), raw(b"chats/session-b.json", b'0', b"{nope")])
        }),
        ("a session id that is a path", raw_tar(&[raw(b"chats/session-a.json", b'0', bad_id)])),
        ("a hook script in a session folder", raw_tar(&[raw(b"s-1/hooks/pre.sh", b'0', b"rm -rf ~")])),
    ];
    let before = lokust_tree(&home.gh());
    for (i, (what, tar)) in cases.iter().enumerate() {
        let bad = with_bundles(
            &lok,
            serde_json::json!([element_of(tar, tar.len() as u64)]),
            &format!("bad{i}.lok"),
        );
        let target = env.root.path().join(format!("t{i}"));
        let out = env.cmd("lokust-shell-restore").arg(&bad).arg("--to").arg(&target).assert().failure();
        let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
        assert!(err.contains("Gemini CLI conversations refused, nothing of them written"), "{what}: {err}");
        assert_eq!(lokust_tree(&home.gh()), before, "{what}: the Gemini home changed");
        assert!(
            !env.root.path().join("escape.json").exists() && !Path::new("/tmp/x/chats").exists(),
            "{what}"
        );
        // inspect shows the element as refused, not as sessions.
        let listing = inspected(&env, &bad);
        assert!(listing.contains("Gemini CLI conversations: refused"), "{what}: {listing}");
    }
    // A bomb: the data inflates far past what the element declares.
    let big = raw_tar(&[raw(b"chats/session-a.json", b'0', &vec![b' '; 4 << 20])]);
    let bad = with_bundles(&lok, serde_json::json!([element_of(&big, 1024)]), "bomb.lok");
    let out = env
        .cmd("lokust-shell-restore")
        .arg(&bad)
        .arg("--to")
        .arg(env.root.path().join("tb"))
        .assert()
        .failure();
    assert!(String::from_utf8_lossy(&out.get_output().stderr).contains("decompression bomb"));
    assert_eq!(lokust_tree(&home.gh()), before);
    // An unknown kind is named and left out; the rest restores.
    let unknown = serde_json::json!([{"kind": "future-agent", "format": "tar.gz+base64", "data": ""}]);
    let bad = with_bundles(&lok, unknown, "unknown.lok");
    let out = env
        .cmd("lokust-shell-restore")
        .arg(&bad)
        .arg("--to")
        .arg(env.root.path().join("tu"))
        .assert()
        .success();
    assert!(String::from_utf8_lossy(&out.get_output().stderr).contains("\"future-agent\""));
}

/// Every path below `dir` with its content, to show nothing changed.
fn lokust_tree(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    crate::util::files_below(dir)
        .into_iter()
        .map(|p| (p.clone(), std::fs::read(&p).unwrap_or_default()))
        .collect()
}

#[test]
fn dry_run_names_the_gemini_folder_and_writes_nothing() {
    let (env, home) = setup(false);
    let line = r#"{"id":"m1","type":"user","content":"hi"}"#;
    let lok = chat_and_snapshot(&env, &home, &env.root.path().join("p"), line);
    home.wipe_keeping_settings();
    let target = env.root.path().join("new.d/ü x");
    let out = env
        .cmd("lokust-shell-restore")
        .arg(&lok)
        .arg("--to")
        .arg(&target)
        .arg("--dry-run")
        .assert()
        .success();
    let said = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    let folder = home.gh().join("tmp/x/chats");
    assert!(
        said.contains(&format!("1 conversation would go to {} (a new folder)", folder.display())),
        "{said}"
    );
    let left: Vec<_> = std::fs::read_dir(home.gh()).unwrap().flatten().map(|e| e.file_name()).collect();
    assert_eq!(left, ["settings.json"], "a dry run wrote to the Gemini home");
}

/// Every published chat in fixtures/real/gemini that has turns, placed as the CLI
/// would have left it at one path, snapshotted and restored at another: the real CLI
/// resumes each there and sends its earlier turns.
#[test]
fn real_published_chats_resume_after_a_move() {
    let Some(bin) = gemini_bin() else { return };
    let root = crate::util::fixtures().join("real/gemini");
    let api = GeminiApi::start();
    let mut resumed = 0;
    for file in crate::util::files_below(&root) {
        let data = std::fs::read(&file).unwrap();
        let Some(chat) = gemini::parse_chat(&data) else { continue };
        let Some(id) = chat.session_id.clone() else { continue };
        if chat.turns == 0 {
            continue;
        }
        let (env, home) = setup(false);
        let project = env.root.path().join("orig/cli");
        std::fs::create_dir_all(&project).unwrap();
        let real = std::fs::canonicalize(&project).unwrap();
        let folder = home.gh().join("tmp/cli");
        std::fs::create_dir_all(folder.join("chats")).unwrap();
        std::fs::write(folder.join(".project_root"), real.to_str().unwrap()).unwrap();
        let ext = if file.extension().is_some_and(|e| e == "jsonl") { "jsonl" } else { "json" };
        let short: String = id.chars().take(8).collect();
        std::fs::write(folder.join(format!("chats/session-2026-01-01T00-00-{short}.{ext}")), &data).unwrap();
        let lok = snapshot(&env, &home, &project);
        home.wipe_keeping_settings();
        let target = env.root.path().join("elsewhere/a.b c/ü");
        let said = restore(&env, &home, &lok, &target);
        assert!(said.contains(&format!("gemini --resume {id}")), "{}: {said}", file.display());
        let sent = resume(&bin, &api, &home, &target, &id, "continue please");
        let request: serde_json::Value = serde_json::from_str(&sent).unwrap();
        let n = request["contents"].as_array().map_or(0, Vec::len);
        assert!(n > 2, "{}: the earlier turns were not sent ({n} contents)", file.display());
        resumed += 1;
    }
    assert!(resumed >= 5, "only {resumed} published chats were tried");
}

/// A project where only Gemini CLI was used: `--bundle` carries its conversations without
/// a Claude Code project, and the restore puts them back and says how to resume.
#[test]
fn a_project_with_only_gemini_conversations_bundles_and_resumes() {
    let Some(bin) = gemini_bin() else { return };
    let (env, home) = setup(false);
    let api = GeminiApi::start();
    let project = env.root.path().join("only-gemini");
    std::fs::create_dir_all(&project).unwrap();
    let id = new_conversation(&bin, &api, &home, &project, "remember the word OTTER-7");
    let (lok, summary) = crate::util::claude::snapshot(&env, &project, &[]);
    assert!(summary.contains("gemini:      1 conversation") && !summary.contains("bundled:"), "{summary}");
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&lok).unwrap()).unwrap();
    assert!(doc.get("bundle").is_none_or(serde_json::Value::is_null), "a Claude bundle out of nothing");
    assert_eq!(doc["bundles"][0]["kind"], "gemini-project");
    home.wipe_keeping_settings();
    std::fs::remove_dir_all(&project).unwrap();

    let target = env.root.path().join("elsewhere/only gemini");
    let dry = env.cmd("lokust-shell-restore").arg(&lok).arg("--to").arg(&target).arg("--dry-run").assert();
    let plan = crate::util::stdout(&dry.success());
    assert!(plan.contains("no Claude Code project in this file") && plan.contains("would go to"), "{plan}");
    assert!(!target.exists(), "a dry run created the target");

    let said = restore(&env, &home, &lok, &target);
    assert!(said.contains("no Claude Code project in this file"), "{said}");
    assert!(said.contains(&format!("gemini --resume {id}")), "{said}");
    let sent = resume(&bin, &api, &home, &target, &id, "which animal?");
    assert!(sent.contains("OTTER-7"), "earlier turn missing: {sent}");
}

/// `--agents` chooses what goes in: one agent's sessions without the other's, and a name
/// lokust does not know is refused before anything is written.
#[test]
fn agents_chooses_which_sessions_go_in() {
    let (env, home) = setup(false);
    let project = env.root.path().join("proj");
    let lok =
        chat_and_snapshot(&env, &home, &project, r#"{"id":"m1","type":"user","content":[{"text":"hi"}]}"#);
    let both: serde_json::Value = serde_json::from_slice(&std::fs::read(&lok).unwrap()).unwrap();
    assert!(both["bundle"].is_object() && both["bundles"][0]["kind"] == "gemini-project");
    let take = |agents: &str| -> serde_json::Value {
        let out = env.root.path().join(format!("{agents}.lok"));
        env.cmd("lokust-shell-snapshot")
            .current_dir(&project)
            .env("PWD", &project)
            .args(["--bundle", "--agents", agents, "-o"])
            .arg(&out)
            .assert()
            .success();
        serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap()
    };
    let gemini_only = take("gemini");
    assert!(gemini_only.get("bundle").is_none_or(serde_json::Value::is_null), "Claude's project went in");
    assert_eq!(gemini_only["bundles"][0]["kind"], "gemini-project");
    let claude_only = take("claude");
    assert!(claude_only["bundle"].is_object());
    assert!(
        claude_only.get("bundles").is_none_or(|b| b.as_array().is_none_or(Vec::is_empty)),
        "{}",
        claude_only["bundles"]
    );

    let bad = env.root.path().join("bad.lok");
    let out = env
        .cmd("lokust-shell-snapshot")
        .current_dir(&project)
        .args(["--bundle", "--agents", "claude,nope", "-o"])
        .arg(&bad)
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(err.contains("nope") && err.contains("gemini"), "{err}");
    assert!(!bad.exists());
}
