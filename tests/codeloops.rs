//! codeloops session logs move with the project. codeloops is in no registry reachable
//! here, so there is no binary to resume with: the tests use the format document's own
//! example (fixtures/real/codeloops, copied from the document) and logs built from
//! that document, and check what the format promises — same file names, `working_dir`
//! moved, every other byte kept, nothing overwritten.

use std::path::{Path, PathBuf};

use lokust::agent::codeloops;

use crate::util::TestEnv;

/// The document's complete example, from the shared fixtures.
fn example() -> Option<Vec<u8>> {
    let path =
        crate::util::fixtures().join("real/codeloops/doc-excerpt/session-format_complete-example.jsonl");
    Some(std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())))
}

fn sessions_dir(data_home: &Path) -> PathBuf {
    data_home.join("codeloops/sessions")
}

#[test]
fn logs_of_the_project_travel_and_land_with_the_new_working_dir_and_every_other_byte() {
    let Some(example) = example() else { return };
    let env = TestEnv::new();
    let data_home = env.root.path().join("data home");
    let project = env.root.path().join("orig/myapp");
    std::fs::create_dir_all(project.join("sub")).unwrap();
    let real = std::fs::canonicalize(&project).unwrap();
    let real = real.to_str().unwrap();
    let text = String::from_utf8(example).unwrap();
    // Three runs from the document's example: here, in a subfolder, and one that crashed
    // while writing its second iteration; a fourth belongs to another project.
    let sessions = sessions_dir(&data_home);
    std::fs::create_dir_all(&sessions).unwrap();
    let here = text.replace("/home/user/myapp", real);
    let sub = text.replace("/home/user/myapp", &format!("{real}/sub"));
    let crashed = format!(
        "{}\n{{\"type\":\"iteration\",\"iteration_n",
        here.lines().take(2).collect::<Vec<_>>().join("\n")
    );
    let other = text.replace("/home/user/myapp", &format!("{real}-other"));
    let logs = [
        ("2025-01-27T15-30-45Z_a3f2c1.jsonl", &here),
        ("2025-01-27T16-00-00Z_b00000.jsonl", &sub),
        ("2025-01-27T17-00-00Z_c00000.jsonl", &crashed),
        ("2025-01-27T18-00-00Z_d00000.jsonl", &other),
    ];
    for (name, body) in logs {
        std::fs::write(sessions.join(name), body).unwrap();
    }
    std::fs::write(data_home.join("codeloops/config.toml"), "[agents]\napi_key = \"CODELOOPS-CANARY\"\n")
        .unwrap();

    let lok = env.root.path().join("s.lok");
    let out = env
        .cmd("lokust-shell-snapshot")
        .env("XDG_DATA_HOME", &data_home)
        .current_dir(&project)
        .env("PWD", &project)
        .args(["--bundle", "-o"])
        .arg(&lok)
        .assert()
        .success();
    let summary = crate::util::stderr(&out);
    assert!(summary.contains("codeloops:   3 conversations"), "{summary}");
    assert!(
        !std::fs::read_to_string(&lok).unwrap().contains("CODELOOPS-CANARY"),
        "its configuration travelled"
    );
    let listing = crate::util::stdout(&env.cmd("lokust-shell").arg("inspect").arg(&lok).assert().success());
    assert!(listing.contains("codeloops conversations:"), "{listing}");
    assert!(
        listing.contains("1 iterations") && listing.contains("success") && listing.contains("not ended"),
        "{listing}"
    );
    assert!(listing.contains("Fix the typo in greeting.rs"), "{listing}");

    std::fs::remove_dir_all(data_home.join("codeloops")).unwrap();
    let target = env.root.path().join("new/re.named dir/ünï 日本");
    let cmd = |extra: &[&str]| {
        let mut c = env.cmd("lokust-shell-restore");
        c.env("XDG_DATA_HOME", &data_home).arg(&lok).arg("--to").arg(&target).args(extra);
        c
    };
    let plan = crate::util::stdout(&cmd(&["--dry-run"]).assert().success());
    assert!(plan.contains("codeloops: 3 session logs would go to"), "{plan}");
    assert!(!sessions.exists(), "a dry run wrote");
    let said = crate::util::stdout(&cmd(&[]).assert().success());
    assert!(said.contains("codeloops: 3 session logs in"), "{said}");
    let new = std::fs::canonicalize(&target).unwrap();
    let new = new.to_str().unwrap();
    for (name, body) in &logs[..3] {
        let restored = std::fs::read_to_string(sessions.join(name)).unwrap();
        let (first, rest) = restored.split_once('\n').unwrap();
        let start: serde_json::Value = serde_json::from_str(first).unwrap();
        let wd = start["working_dir"].as_str().unwrap();
        assert!(wd == new || wd == format!("{new}/sub"), "{name}: {wd}");
        let expected_rest = body.split_once('\n').unwrap().1;
        // The crashed one lost its half-written line, nothing else.
        let expected_rest = &expected_rest[..expected_rest.rfind('\n').map_or(0, |i| i + 1)];
        assert_eq!(rest, expected_rest, "{name}: a byte after line 1 changed");
        assert_eq!(lokust::fsutil::mode(&sessions.join(name)).unwrap(), 0o600);
    }
    assert!(!sessions.join(logs[3].0).exists(), "another project's log was carried");

    // The receiver's own log under the same name is kept.
    std::fs::write(sessions.join(logs[0].0), "theirs\n").unwrap();
    let said = crate::util::stdout(&cmd(&[]).assert().success());
    assert!(said.contains("1 kept as they were"), "{said}");
    assert_eq!(std::fs::read_to_string(sessions.join(logs[0].0)).unwrap(), "theirs\n");
}

/// The document's example as published, byte for byte, carried from the directory it
/// records (by the library, since that directory is not on this machine) and restored.
#[test]
fn the_documents_own_example_moves_whole() {
    let Some(example) = example() else { return };
    let env = TestEnv::new();
    let data_home = env.root.path().join("data");
    let sender = env.root.path().join("sender");
    std::fs::create_dir_all(sender.join("sessions")).unwrap();
    let name = "2025-01-27T15-30-45Z_a3f2c1.jsonl";
    std::fs::write(sender.join("sessions").join(name), &example).unwrap();
    let mut report = lokust::redact::Report::default();
    let (element, sessions) =
        lokust::agent::element(&codeloops::Codeloops, &sender, "/home/user/myapp", true, &mut report)
            .unwrap()
            .unwrap();
    assert_eq!((sessions.len(), sessions[0].turns, sessions[0].outcome.as_deref()), (1, 1, Some("success")));
    let project = env.root.path().join("p");
    std::fs::create_dir_all(&project).unwrap();
    crate::util::claude::make_project(&env, &project);
    let (base, _) = crate::util::claude::snapshot(&env, &project, &["--agents", "claude"]);
    let mut doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&base).unwrap()).unwrap();
    doc["bundles"] = serde_json::json!([element]);
    let lok = env.root.path().join("doc.lok");
    std::fs::write(&lok, serde_json::to_vec(&doc).unwrap()).unwrap();
    let target = env.root.path().join("myapp moved");
    env.cmd("lokust-shell-restore")
        .env("XDG_DATA_HOME", &data_home)
        .arg(&lok)
        .arg("--to")
        .arg(&target)
        .assert()
        .success();
    let restored = std::fs::read(sessions_dir(&data_home).join(name)).unwrap();
    let split = |b: &[u8]| b.iter().position(|c| *c == b'\n').unwrap();
    assert_eq!(&restored[split(&restored)..], &example[split(&example)..], "a byte after line 1 changed");
    let log = codeloops::parse_log(&restored).unwrap();
    assert_eq!(log.working_dir, std::fs::canonicalize(&target).unwrap().to_str().unwrap());
}

/// `lokust-shell move` on this machine: the project's logs (the folder's and a subfolder's)
/// keep their names and name the new folder; another project's log, sharing a prefix, is
/// left as it was; nothing set aside stays.
#[test]
fn logs_move_with_the_project_on_this_machine() {
    let Some(example) = example() else { return };
    let env = TestEnv::new();
    let data_home = env.root.path().join("data home");
    let base = std::fs::canonicalize(env.root.path()).unwrap().join("P");
    let (a, b) = (base.join("a"), base.join("b"));
    std::fs::create_dir_all(a.join("sub")).unwrap();
    let text = String::from_utf8(example).unwrap();
    let sessions = sessions_dir(&data_home);
    std::fs::create_dir_all(&sessions).unwrap();
    let a_str = a.to_str().unwrap();
    let logs = [
        ("2025-01-27T15-30-45Z_a3f2c1.jsonl", text.replace("/home/user/myapp", a_str)),
        ("2025-01-27T16-00-00Z_b00000.jsonl", text.replace("/home/user/myapp", &format!("{a_str}/sub"))),
        ("2025-01-27T18-00-00Z_d00000.jsonl", text.replace("/home/user/myapp", &format!("{a_str}-other"))),
    ];
    for (name, body) in &logs {
        std::fs::write(sessions.join(name), body).unwrap();
    }
    let out = env
        .cmd("lokust-shell")
        .env("XDG_DATA_HOME", &data_home)
        .args(["move", "--move-dir"])
        .arg(&a)
        .arg(&b)
        .assert()
        .success();
    assert!(
        crate::util::stdout(&out).contains("codeloops: 2 conversations"),
        "{}",
        crate::util::stdout(&out)
    );
    let b_str = b.to_str().unwrap();
    for (name, body) in &logs[..2] {
        let now = std::fs::read_to_string(sessions.join(name)).unwrap();
        assert_eq!(now, body.replace(a_str, b_str), "{name}");
    }
    assert_eq!(std::fs::read_to_string(sessions.join(logs[2].0)).unwrap(), logs[2].1);
    let names: Vec<String> = std::fs::read_dir(&sessions)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 3, "{names:?}");
}
