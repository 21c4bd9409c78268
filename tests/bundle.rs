//! `lokust-shell-snapshot --bundle`: the Claude Code project travels inside the .lok as
//! tar.gz+base64 that a spec-only reader can unpack, redacted line by line with every
//! transcript line still JSON, with what a move needs from outside the slot.

use std::fs;

use crate::util::claude::{OLDER, SESSION, entries, make_project, secrets, snapshot, tar_of};
use crate::util::{TestEnv, have, run_ok};

#[test]
fn the_bundle_is_a_valid_lok_rooted_at_the_slot() {
    let env = TestEnv::new();
    let project = env.root.path().join("work/my.app");
    let slot = make_project(&env, &project);
    let slot_name = slot.file_name().unwrap().to_str().unwrap().to_string();
    let (lok, stderr) = snapshot(&env, &project, &[]);
    let doc: serde_json::Value = serde_json::from_slice(&fs::read(&lok).unwrap()).unwrap();
    crate::util::schema::assert_valid(&doc, "a bundled snapshot");
    lokust::lok::Lok::read_path(&lok).unwrap();
    assert_eq!(doc["bundle"]["kind"], "claude-code-project");
    assert_eq!(doc["bundle"]["format"], "tar.gz+base64");
    assert_eq!(lokust::fsutil::mode(&lok).unwrap(), 0o600);
    assert!(stderr.contains("bundle:      claude-code-project"), "{stderr}");
    assert!(stderr.contains("left out") && stderr.contains("memory/link"), "{stderr}");

    let files = entries(&tar_of(&lok));
    for (path, _) in &files {
        assert!(path == &slot_name || path.starts_with(&format!("{slot_name}/")), "{path} outside the slot");
    }
    let names: Vec<&str> = files.iter().map(|(p, _)| p.strip_prefix(&slot_name).unwrap()).collect();
    for want in [
        format!("/{SESSION}.jsonl"),
        format!("/{OLDER}.jsonl"),
        format!("/{SESSION}/subagents/agent-a1.jsonl"),
        "/memory/notes.md".into(),
        "/.lokust/manifest.json".into(),
        format!("/.lokust/file-history/{SESSION}/abc@v1"),
        format!("/.lokust/todos/{SESSION}-agent-{SESSION}.json"),
        format!("/.lokust/tasks/{SESSION}/1.json"),
        "/.lokust/history.jsonl".into(),
        "/.lokust/claude-project.json".into(),
    ] {
        assert!(names.contains(&want.as_str()), "missing {want} in {names:?}");
    }
    assert!(!names.iter().any(|n| n.contains("someone-else") || n.ends_with("/link")), "{names:?}");
    let get = |suffix: &str| files.iter().find(|(p, _)| p.ends_with(suffix)).unwrap().1.clone();
    let history = String::from_utf8(get(".lokust/history.jsonl")).unwrap();
    assert!(history.contains("fix the build") && !history.contains("other project"), "{history}");
}

#[test]
fn transcripts_are_redacted_inside_their_json_strings() {
    let env = TestEnv::new();
    let project = env.root.path().join("p");
    make_project(&env, &project);
    let (lok, stderr) = snapshot(&env, &project, &[]);
    let (aws, gh) = secrets();
    let text = fs::read_to_string(&lok).unwrap();
    let files = entries(&tar_of(&lok));
    for (path, data) in &files {
        let body = String::from_utf8_lossy(data);
        assert!(!body.contains(&aws) && !body.contains(&gh), "{path} leaks a secret");
        if path.ends_with(".jsonl") {
            for line in body.lines() {
                serde_json::from_str::<serde_json::Value>(line)
                    .unwrap_or_else(|e| panic!("{path}: a line is no longer JSON ({e}): {line}"));
            }
        }
    }
    let main = &files.iter().find(|(p, _)| p.ends_with(&format!("{SESSION}.jsonl"))).unwrap().1;
    assert!(String::from_utf8_lossy(main).contains("AWS_ACCESS_KEY_ID=[REDACTED]"));
    // Clean lines are byte-identical, non-ASCII and escapes included.
    let original = fs::read_to_string(
        env.home
            .join(".claude/projects")
            .join(lokust::capture::claude::slot_name(fs::canonicalize(&project).unwrap().to_str().unwrap()))
            .join(format!("{SESSION}.jsonl")),
    )
    .unwrap();
    let bundled = String::from_utf8_lossy(main);
    assert_eq!(original.lines().next(), bundled.lines().next());
    assert_eq!(original.lines().nth(2), bundled.lines().nth(2));
    let mcp =
        String::from_utf8_lossy(&files.iter().find(|(p, _)| p.ends_with("claude-project.json")).unwrap().1)
            .into_owned();
    assert!(mcp.contains("GITHUB_TOKEN") && mcp.contains("[REDACTED]"), "{mcp}");
    assert!(stderr.contains("Redacted:") && stderr.contains("bundle 4 values"), "{stderr}");
    assert!(!text.contains(&gh));
}

/// A secret found once in a transcript is replaced wherever it comes again in that file,
/// before and after: the agent quoting back what it read has nothing around it that says
/// what it is. The JSON stays valid, and another conversation keeps its own text.
#[test]
fn a_secrets_echoes_before_and_after_it_are_redacted_too() {
    let env = TestEnv::new();
    let project = env.root.path().join("p");
    let slot = make_project(&env, &project);
    let secret = "Kx9#mQ2vLp7zT";
    let record = |n: usize, text: &str| {
        serde_json::json!({"type": "user", "uuid": format!("e-{n}"), "sessionId": OLDER,
            "message": {"role": "user", "content": text}})
        .to_string()
    };
    let talk = [
        record(0, &format!("is `{secret}` still the staging one?")),
        record(1, &format!("cat .env\nDB_PASSWORD={secret}\nDEBUG=1")),
        record(2, &format!("Found it: {secret} is hard-coded there.")),
    ]
    .join("\n");
    fs::write(slot.join(format!("{OLDER}.jsonl")), format!("{talk}\n")).unwrap();
    let (lok, _) = snapshot(&env, &project, &[]);
    let files = entries(&tar_of(&lok));
    let older = &files.iter().find(|(p, _)| p.ends_with(&format!("{OLDER}.jsonl"))).unwrap().1;
    let text = String::from_utf8_lossy(older);
    assert!(!text.contains(secret), "{text}");
    assert_eq!(text.matches("[REDACTED]").count(), 3, "{text}");
    for line in text.lines() {
        serde_json::from_str::<serde_json::Value>(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
    }
    assert!(text.contains("is `[REDACTED]` still the staging one?"), "{text}");
}

/// A subagent's transcript is read before the main one, and a secret found there is
/// replaced where the main conversation quotes the subagent's report.
#[test]
fn a_secret_a_subagent_found_is_redacted_where_the_main_conversation_quotes_it() {
    let env = TestEnv::new();
    let project = env.root.path().join("p");
    let slot = make_project(&env, &project);
    let secret = "Kx9#mQ2vLp7zT";
    let record = |text: &str| {
        serde_json::json!({"type": "user", "message": {"role": "user", "content": text}}).to_string()
    };
    fs::write(
        slot.join(SESSION).join("subagents/agent-a1.jsonl"),
        format!("{}\n", record(&format!("     2\tDB_PASSWORD={secret}"))),
    )
    .unwrap();
    let main = slot.join(format!("{SESSION}.jsonl"));
    let mut text = fs::read_to_string(&main).unwrap();
    text.push_str(&record(&format!("The database credential is hard-coded: `{secret}`")));
    text.push('\n');
    fs::write(&main, text).unwrap();
    let (lok, _) = snapshot(&env, &project, &[]);
    for (path, data) in entries(&tar_of(&lok)) {
        let body = String::from_utf8_lossy(&data);
        assert!(!body.contains(secret), "{path}: {body}");
    }
}

/// A record with a lone surrogate escape (a string cut in the middle of an emoji, as
/// JavaScript serialises it) or a byte that is not UTF-8 is still read as JSON: either
/// used to send the record to the plain-text reading, where a token spelled with an
/// escape in another of its strings went into the bundle.
#[test]
fn a_flawed_record_still_has_its_escaped_secrets_redacted() {
    let env = TestEnv::new();
    let project = env.root.path().join("p");
    let slot = make_project(&env, &project);
    let (_, gh) = secrets();
    let escaped = gh.replacen('R', "\\u0052", 1);
    let tail = &gh[5..];
    let mut records = fs::read(slot.join(format!("{SESSION}.jsonl"))).unwrap();
    records.extend_from_slice(
        format!(r#"{{"type":"user","message":{{"content":"cut \ud83d"}},"toolUseResult":{{"stdout":"push with {escaped}"}}}}"#)
            .as_bytes(),
    );
    records.extend_from_slice(b"\n{\"type\":\"user\",\"message\":{\"content\":\"caf\xe9\"},\"cmd\":\"");
    records.extend_from_slice(format!("export TOKEN={escaped}\"}}\n").as_bytes());
    fs::write(slot.join(format!("{SESSION}.jsonl")), &records).unwrap();
    let (lok, stderr) = snapshot(&env, &project, &[]);
    let files = entries(&tar_of(&lok));
    let main = &files.iter().find(|(p, _)| p.ends_with(&format!("{SESSION}.jsonl"))).unwrap().1;
    let bundled = String::from_utf8_lossy(main);
    assert!(!bundled.contains(tail), "{bundled}");
    assert_eq!(bundled.matches("[REDACTED]").count(), 4, "{bundled}");
    // The records before them, and the surrogate where nothing was redacted, as they were.
    let original = String::from_utf8_lossy(&records);
    assert_eq!(original.lines().nth(2), bundled.lines().nth(2));
    assert!(bundled.contains(r#""content":"cut \ud83d""#), "{bundled}");
    assert!(stderr.contains("bundle 6 values"), "{stderr}");
}

#[test]
fn no_redact_bundle_keeps_secrets_and_says_so() {
    let env = TestEnv::new();
    let project = env.root.path().join("p");
    make_project(&env, &project);
    let (lok, stderr) = snapshot(&env, &project, &["--no-redact-bundle"]);
    assert!(
        stderr.contains("lokust: warning: --no-redact-bundle") && stderr.contains("UNREDACTED"),
        "{stderr}"
    );
    let (aws, _) = secrets();
    let files = entries(&tar_of(&lok));
    assert!(files.iter().any(|(_, d)| String::from_utf8_lossy(d).contains(&aws)));
}

#[test]
fn a_transcript_being_written_is_cut_at_its_last_complete_line() {
    let env = TestEnv::new();
    let project = env.root.path().join("p");
    let slot = make_project(&env, &project);
    let path = slot.join(format!("{SESSION}.jsonl"));
    let whole = fs::read_to_string(&path).unwrap();
    fs::write(&path, format!("{whole}{{\"type\":\"user\",\"cwd\":\"half")).unwrap();
    // A complete last line without its newline is kept.
    let older = slot.join(format!("{OLDER}.jsonl"));
    let text = fs::read_to_string(&older).unwrap();
    fs::write(&older, text.trim_end()).unwrap();
    let (lok, _) = snapshot(&env, &project, &["--no-redact-bundle"]);
    let files = entries(&tar_of(&lok));
    let get = |id: &str| files.iter().find(|(p, _)| p.ends_with(&format!("/{id}.jsonl"))).unwrap().1.clone();
    assert_eq!(String::from_utf8(get(SESSION)).unwrap(), whole);
    assert_eq!(String::from_utf8(get(OLDER)).unwrap(), text.trim_end());
}

#[test]
fn standard_tools_unpack_the_bundle() {
    if !have("tar") || !have("base64") {
        return;
    }
    let env = TestEnv::new();
    let project = env.root.path().join("p");
    let slot = make_project(&env, &project);
    // To standard output, as `lokust-shell-snapshot --bundle > s.lok`.
    let out = env
        .cmd("lokust-shell-snapshot")
        .current_dir(&project)
        .env("PWD", &project)
        .arg("--bundle")
        .assert()
        .success();
    let doc = crate::util::json(&out.get_output().stdout);
    crate::util::schema::assert_valid(&doc, "bundle on stdout");
    env.write("data.b64", doc["bundle"]["data"].as_str().unwrap());
    fs::create_dir_all(env.root.path().join("x")).unwrap();
    run_ok(
        std::process::Command::new("sh")
            .current_dir(env.root.path())
            .args(["-c", "base64 -d data.b64 | tar xzf - -C x"]),
    );
    let name = slot.file_name().unwrap();
    assert!(env.root.path().join("x").join(name).join(format!("{SESSION}.jsonl")).is_file());
    // Nothing is printed about progress when stderr is not a terminal.
    assert!(!String::from_utf8_lossy(&out.get_output().stderr).contains("bundling"));
}

/// A bundle larger than one compressed block is a series of gzip members (RFC 1952's
/// "series of members"): GNU tar with gzip and Python's `tarfile` must read all of them,
/// byte for byte, not stop after the first. The real transcripts of fixtures/real,
/// six copies of each, make a bundle of several members.
#[test]
fn standard_tools_read_every_member_of_a_large_bundle() {
    if !have("tar") || !have("base64") || !have("python3") {
        return;
    }
    let real = crate::util::fixtures().join("real/claude-code");
    let env = TestEnv::new();
    let project = env.root.path().join("p");
    let slot = make_project(&env, &project);
    let mut copied = Vec::new();
    for (n, path) in crate::util::files_below(&real)
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .enumerate()
    {
        let data = fs::read(path).unwrap();
        for copy in 0..6 {
            let name = format!("9{n:03}{copy}000-0000-4000-8000-000000000000.jsonl");
            fs::write(slot.join(&name), &data).unwrap();
            copied.push((name, data.clone()));
        }
    }
    let total: usize = copied.iter().map(|(_, d)| d.len()).sum();
    assert!(total > 3 << 20, "{total} bytes: too few for several members");
    let (lok, _) = snapshot(&env, &project, &["--no-redact-bundle"]);
    let doc: serde_json::Value = serde_json::from_slice(&fs::read(&lok).unwrap()).unwrap();
    env.write("data.b64", doc["bundle"]["data"].as_str().unwrap());
    let gz = env.root.path().join("data.tar.gz");
    run_ok(
        std::process::Command::new("sh")
            .current_dir(env.root.path())
            .args(["-c", "base64 -d data.b64 > data.tar.gz"]),
    );
    // More than one member: each starts with gzip's magic and method at a block's end.
    let bytes = fs::read(&gz).unwrap();
    let members = bytes.windows(4).filter(|w| w == &[0x1f, 0x8b, 8, 0]).count();
    assert!(members >= 3, "{members} gzip headers in {} bytes", bytes.len());
    let slot_name = slot.file_name().unwrap().to_str().unwrap();
    for (tool, script) in [
        ("tar", "mkdir -p by-tar && tar xzf data.tar.gz -C by-tar".to_string()),
        (
            "python",
            "python3 -c 'import tarfile,sys; tarfile.open(sys.argv[1], \"r:gz\").extractall(sys.argv[2], filter=\"data\")' data.tar.gz by-python".to_string(),
        ),
    ] {
        run_ok(std::process::Command::new("sh").current_dir(env.root.path()).args(["-c", &script]));
        let out = env.root.path().join(format!("by-{tool}")).join(slot_name);
        for (name, data) in &copied {
            let got = fs::read(out.join(name)).unwrap_or_else(|e| panic!("{tool}: {name}: {e}"));
            assert!(&got == data, "{tool}: {name} differs");
        }
    }
}

/// Issue 10, item 12: `--bundle` was asked for, so finding nothing to bundle is an
/// error (it was a warning and exit 0, with no bundle in the file).
#[test]
fn no_project_means_an_error_and_no_file() {
    let env = TestEnv::new();
    let lok = env.root.path().join("s.lok");
    let out = env.cmd("lokust-shell-snapshot").arg("--bundle").arg("-o").arg(&lok).assert().code(2);
    assert!(!lok.exists());
    let stderr = String::from_utf8_lossy(&out.get_output().stderr);
    assert!(stderr.contains("--bundle: Claude Code has no project for"), "{stderr}");
    assert!(stderr.contains("nothing to bundle"), "{stderr}");
}

/// Issue 10, item 12: run in a subdirectory of the project, `--bundle` takes the
/// project Claude Code was started in, says so, and the restore puts the subdirectory
/// below the new path.
#[test]
fn r10_12_bundle_in_a_subdirectory_takes_the_parents_project() {
    let env = TestEnv::new();
    let project = env.root.path().join("p");
    make_project(&env, &project);
    let sub = project.join("src/deep");
    fs::create_dir_all(&sub).unwrap();
    let (lok, err) = snapshot(&env, &sub, &[]);
    let real = fs::canonicalize(&project).unwrap();
    assert!(err.contains(&format!("bundling the one of {}", real.display())), "{err}");
    let target = env.root.path().join("q");
    env.cmd("lokust-shell-restore").arg(&lok).arg("--to").arg(&target).assert().success();
    let new = fs::canonicalize(&target).unwrap();
    let slot =
        env.home.join(".claude/projects").join(lokust::capture::claude::slot_name(new.to_str().unwrap()));
    let main = fs::read_to_string(slot.join(format!("{SESSION}.jsonl"))).unwrap();
    let first: serde_json::Value = serde_json::from_str(main.lines().next().unwrap()).unwrap();
    assert_eq!(first["cwd"], new.to_str().unwrap());
}

#[test]
fn inspect_lists_the_bundled_conversations() {
    let env = TestEnv::new();
    let project = env.root.path().join("p");
    make_project(&env, &project);
    let (lok, _) = snapshot(&env, &project, &[]);
    let out = env.cmd("lokust-shell").arg("inspect").arg(&lok).assert().success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(text.contains("Conversations in the bundle:"), "{text}");
    let line = text.lines().find(|l| l.contains(SESSION)).expect(&text);
    assert!(line.contains("3 events") && line.contains("last 2026-01-03T10:00:00.000Z"), "{line}");
    assert!(text.contains("please fix the build in src/main.rs"), "{text}");
    assert!(text.contains(OLDER) && text.contains("an older talk"), "{text}");
    assert!(!text.contains('\u{1b}'));
}

#[test]
fn ctrl_c_during_a_bundle_leaves_no_file_behind() {
    let env = TestEnv::new();
    let project = env.root.path().join("p");
    let slot = make_project(&env, &project);
    let line = format!(
        "{{\"type\":\"user\",\"message\":{{\"content\":\"{}\"}}}}\n",
        "lorem ipsum dolor ".repeat(12)
    );
    for i in 0..60 {
        fs::write(slot.join(format!("{i:08}-0000-4000-8000-000000000000.jsonl")), line.repeat(2000)).unwrap();
    }
    let out_dir = env.root.path().join("out");
    fs::create_dir_all(&out_dir).unwrap();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("lokust-shell-snapshot"))
        .env_clear()
        .env("HOME", &env.home)
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("PWD", &project)
        .current_dir(&project)
        .args(["--bundle", "-q", "-o"])
        .arg(out_dir.join("s.lok"))
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while fs::read_dir(&out_dir).unwrap().count() == 0 && std::time::Instant::now() < deadline {
        assert!(child.try_wait().unwrap().is_none(), "the snapshot finished before it could be interrupted");
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        assert!(std::time::Instant::now() < deadline, "the snapshot did not stop");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("interrupted; no snapshot was written"));
    assert_eq!(fs::read_dir(&out_dir).unwrap().count(), 0, "a temp file was left behind");
}
