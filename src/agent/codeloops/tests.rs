//! Cases written from the codeloops session format document before the code: the file
//! name, the three line types, append-only logs, and `working_dir` as the only path a move
//! changes.

use super::*;

/// The document's complete example, as it prints it.
const EXAMPLE: &str = concat!(
    r#"{"type":"session_start","timestamp":"2025-01-27T15:30:45Z","prompt":"Fix the typo in greeting.rs","working_dir":"/home/user/myapp","actor_agent":"Claude Code","critic_agent":"Claude Code","actor_model":null,"critic_model":null,"max_iterations":null}"#,
    "\n",
    r#"{"type":"iteration","iteration_number":1,"actor_output":"I found and fixed the typo. 'Helo' is now 'Hello'.","actor_stderr":"","actor_exit_code":0,"actor_duration_secs":23.4,"git_diff":"diff --git a/src/greeting.rs b/src/greeting.rs\n--- a/src/greeting.rs\n+++ b/src/greeting.rs\n@@ -1 +1 @@\n-println!(\"Helo, World!\");\n+println!(\"Hello, World!\");","git_files_changed":1,"critic_decision":"DONE","feedback":null,"timestamp":"2025-01-27T15:31:08Z"}"#,
    "\n",
    r#"{"type":"session_end","outcome":"success","iterations":1,"summary":"Fixed the typo in greeting.rs. Changed 'Helo' to 'Hello'.","confidence":1.0,"duration_secs":23.4,"timestamp":"2025-01-27T15:31:08Z"}"#,
    "\n"
);
const NAME: &str = "2025-01-27T15-30-45Z_a3f2c1.jsonl";

#[test]
fn names_are_the_start_time_and_six_hex_of_the_prompt_hash() {
    assert!(is_log_name(NAME));
    assert!(is_log_name("2025-01-27T15-30-45.123Z_a3f2c1.jsonl"));
    for bad in [
        "2025-01-27T15:30:45Z_a3f2c1.jsonl",
        "2025-01-27T15-30-45Z_a3f2c.jsonl",
        "2025-01-27T15-30-45Z_A3F2C1.jsonl",
        "2025-01-27T15-30-45_a3f2c1.jsonl",
        "../2025-01-27T15-30-45Z_a3f2c1.jsonl",
        "2025-01-27T15-30-45Z_a3f2c1.json",
        "config.toml",
        "codeloops.db",
    ] {
        assert!(!is_log_name(bad), "{bad}");
    }
}

#[test]
fn the_documents_example_reads_as_one_successful_iteration() {
    let log = parse_log(EXAMPLE.as_bytes()).unwrap();
    assert_eq!(log.working_dir, "/home/user/myapp");
    assert_eq!(log.prompt.as_deref(), Some("Fix the typo in greeting.rs"));
    assert_eq!((log.iterations, log.outcome.as_deref()), (1, Some("success")));
    assert_eq!(log.last_time.as_deref(), Some("2025-01-27T15:31:08Z"));
    // A run that crashed has no session_end; a half-written last line is not read.
    let crashed = EXAMPLE.lines().take(2).collect::<Vec<_>>().join("\n") + "\n{\"type\":\"iter";
    let log = parse_log(&complete_lines(crashed.into_bytes())).unwrap();
    assert_eq!((log.iterations, log.outcome), (1, None));
    assert!(parse_log(b"{\"type\":\"iteration\"}\n").is_none(), "line 1 is not session_start");
    assert!(parse_log(br#"{"type":"session_start","working_dir":"relative"}"#).is_none());
}

#[test]
fn a_move_changes_working_dir_on_line_1_and_no_other_byte() {
    let moved = relocate(EXAMPLE.as_bytes(), "/home/user/myapp", "/srv/é x.y/app").unwrap();
    let text = String::from_utf8(moved).unwrap();
    let (first, rest) = text.split_once('\n').unwrap();
    let start: Value = serde_json::from_str(first).unwrap();
    assert_eq!(start["working_dir"], "/srv/é x.y/app");
    let keys: Vec<&str> = start.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys[..4], ["type", "timestamp", "prompt", "working_dir"], "key order kept");
    assert_eq!(rest, EXAMPLE.split_once('\n').unwrap().1, "every later byte kept");
    assert_eq!(
        relocate(EXAMPLE.as_bytes(), "/home/user/myapp", "/home/user/myapp").unwrap(),
        EXAMPLE.as_bytes()
    );
    assert!(relocate(EXAMPLE.as_bytes(), "/home/user/other", "/n").is_err());
}

#[test]
fn collect_takes_this_projects_logs_from_the_flat_folder() {
    let dir = tempfile::tempdir().unwrap();
    let sessions = dir.path().join("sessions");
    fs::create_dir_all(&sessions).unwrap();
    fs::write(sessions.join(NAME), EXAMPLE.replace("/home/user/myapp", "/p/proj/sub")).unwrap();
    fs::write(
        sessions.join("2025-01-28T00-00-00Z_000000.jsonl"),
        EXAMPLE.replace("/home/user/myapp", "/p/project"),
    )
    .unwrap();
    fs::write(sessions.join("notes.jsonl"), EXAMPLE.replace("/home/user/myapp", "/p/proj")).unwrap();
    fs::write(dir.path().join("config.toml"), "api_key = \"CANARY\"").unwrap();
    let outside = tempfile::tempdir().unwrap();
    fs::write(outside.path().join("x"), EXAMPLE.replace("/home/user/myapp", "/p/proj")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("x"), sessions.join("2025-01-29T00-00-00Z_111111.jsonl"))
        .unwrap();
    let files = carried_files(dir.path(), "/p/proj").unwrap().unwrap();
    assert_eq!(files.iter().map(|f| f.rel.as_str()).collect::<Vec<_>>(), [NAME]);
    let sessions = summarize(&files);
    assert_eq!(sessions[0].outcome.as_deref(), Some("success"));
    assert!(carried_files(dir.path(), "/q").unwrap().is_none());
}

#[test]
fn a_restore_never_overwrites_unless_forced_and_refuses_bad_elements() {
    let dir = tempfile::tempdir().unwrap();
    let files = vec![File { rel: NAME.into(), data: EXAMPLE.as_bytes().to_vec() }];
    let now = SystemTime::now();
    let p = plan(dir.path(), "/n/app", Some("/home/user/myapp"), &files, false, now).unwrap();
    assert_eq!(p.items[0].step, Step::Write);
    assert_eq!(crate::place::apply(&p, now).unwrap().written.len(), 1);
    let dest = dir.path().join("sessions").join(NAME);
    assert_eq!(parse_log(&fs::read(&dest).unwrap()).unwrap().working_dir, "/n/app");
    assert_eq!(crate::fsutil::mode(&dest).unwrap(), 0o600);
    let again = plan(dir.path(), "/n/app", Some("/home/user/myapp"), &files, false, now).unwrap();
    assert_eq!(again.items[0].step, Step::Same);
    fs::write(&dest, "theirs\n").unwrap();
    let kept = plan(dir.path(), "/n/app", Some("/home/user/myapp"), &files, false, now).unwrap();
    assert_eq!(crate::place::apply(&kept, now).unwrap().kept, [NAME.trim_end_matches(".jsonl")]);
    assert_eq!(fs::read_to_string(&dest).unwrap(), "theirs\n");
    let forced = plan(dir.path(), "/n/app", Some("/home/user/myapp"), &files, true, now).unwrap();
    let placed = crate::place::apply(&forced, now).unwrap();
    assert_eq!(fs::read_to_string(&placed.backups[0]).unwrap(), "theirs\n");

    for bad in [
        vec![File { rel: "../x.jsonl".into(), ..files[0].clone() }],
        vec![File { rel: "config.toml".into(), ..files[0].clone() }],
        vec![File { data: b"{}\n".to_vec(), ..files[0].clone() }],
        vec![files[0].clone(), files[0].clone()],
        vec![File {
            data: EXAMPLE.replace("/home/user/myapp", "/home/user/myapp/../../../etc").into_bytes(),
            ..files[0].clone()
        }],
    ] {
        assert!(validate(&bad).is_err());
    }
    assert!(
        plan(dir.path(), "/n", Some("/elsewhere"), &files, false, now).is_err(),
        "a log of another directory"
    );
}
