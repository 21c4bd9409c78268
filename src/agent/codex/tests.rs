//! Cases written from the rollout format in the Codex research note (0.169.0), before the
//! code: names, what selects a rollout, what a move rewrites and what it must leave alone.

use super::*;

const ID: &str = "01a20c41-21e5-7a13-9fc0-01834a64b0db";

fn name() -> String {
    format!("rollout-2026-11-24T06-32-04-{ID}.jsonl")
}

/// A rollout as 0.169.0 writes it, trimmed: meta, environment context, turn context,
/// thread settings, world state, one user and one assistant message.
fn rollout(cwd: &str) -> Vec<u8> {
    let lines = [
        serde_json::json!({"timestamp":"2026-11-24T06:32:04.935Z","ordinal":0,"type":"session_meta","payload":{"id":ID,"session_id":ID,"cwd":cwd,"runtime_workspace_roots":[cwd],"base_instructions":{"text":"You are Codex."}}}),
        serde_json::json!({"timestamp":"2026-11-24T06:32:05.020Z","ordinal":1,"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":format!("<environment_context>\n  <cwd>{cwd}</cwd>\n  <filesystem><workspace_roots><root>{cwd}</root></workspace_roots></filesystem>\n</environment_context>")}]}}),
        serde_json::json!({"timestamp":"2026-11-24T06:32:05.023Z","ordinal":2,"type":"world_state","payload":{"state":{"environments":{"environments":{"local":{"cwd":cwd}},"filesystem":format!("<filesystem><workspace_roots><root>{cwd}</root></workspace_roots></filesystem>")}}}}),
        serde_json::json!({"timestamp":"2026-11-24T06:32:05.033Z","ordinal":3,"type":"turn_context","payload":{"cwd":cwd,"approval_policy":"never"}}),
        serde_json::json!({"timestamp":"2026-11-24T06:32:05.033Z","ordinal":4,"type":"event_msg","payload":{"type":"thread_settings_applied","thread_settings":{"cwd":cwd,"runtime_workspace_roots":[cwd]}}}),
        serde_json::json!({"timestamp":"2026-11-24T06:32:05.059Z","ordinal":5,"type":"event_msg","payload":{"type":"item_completed","item":{"type":"UserMessage","content":[{"type":"text","text":"remember ZEBRA-42"}]}}}),
        serde_json::json!({"timestamp":"2026-11-24T06:32:05.100Z","ordinal":6,"type":"response_item","payload":{"type":"function_call_output","output":format!("cat {cwd}/notes.txt\n{cwd}-other is not below it")}}),
        serde_json::json!({"timestamp":"2026-11-24T06:32:05.155Z","ordinal":7,"type":"event_msg","payload":{"type":"item_completed","item":{"type":"AgentMessage","content":[{"type":"Text","text":"ok"}]}}}),
    ];
    lines.iter().map(|l| format!("{l}\n")).collect::<String>().into_bytes()
}

#[test]
fn only_canonical_names_are_rollouts() {
    let n = parse_name(&name()).unwrap();
    assert_eq!((n.year.as_str(), n.month.as_str(), n.day.as_str(), n.id.as_str()), ("2026", "11", "24", ID));
    for bad in [
        format!("rollout-2026-11-24T06-32-04-{ID}.json"),
        "rollout-2026-11-24T06-32-04-other.jsonl".to_string(),
        format!("{ID}.jsonl"),
        format!("rollout-2026-11-24 06-32-04-{ID}.jsonl"),
        format!("rollout-2026-11-24T06-32-04-{}.jsonl", ID.to_uppercase()),
        format!("rollout-2026-11-24T06-32-04-{ID}/x.jsonl"),
        "rollout-.jsonl".to_string(),
    ] {
        assert!(parse_name(&bad).is_none(), "{bad}");
    }
    assert_eq!(rel_of(&name()).unwrap(), format!("sessions/2026/11/24/{}", name()));
}

#[test]
fn an_element_path_is_the_dated_folder_of_its_own_name() {
    check_rel(&format!("sessions/2026/11/24/{}", name())).unwrap();
    for bad in [
        format!("sessions/2026/11/25/{}", name()),
        format!("sessions/{}", name()),
        format!("sessions/2026/11/24/../24/{}", name()),
        format!("archived_sessions/2026/11/24/{}", name()),
        format!("/sessions/2026/11/24/{}", name()),
        "auth.json".to_string(),
        "config.toml".to_string(),
        "state_5.sqlite".to_string(),
    ] {
        assert!(check_rel(&bad).is_err(), "{bad}");
    }
}

#[test]
fn a_rollout_is_read_for_its_cwds_prompt_and_turns() {
    let r = parse_rollout(&rollout("/home/u/proj/sub")).unwrap();
    assert_eq!(r.id, ID);
    assert_eq!(r.cwds.iter().collect::<Vec<_>>(), ["/home/u/proj/sub"]);
    assert_eq!(r.first_prompt.as_deref(), Some("remember ZEBRA-42"));
    assert_eq!(r.turns, 2);
    assert_eq!(r.last_time.as_deref(), Some("2026-11-24T06:32:05.155Z"));
    assert!(
        parse_rollout(b"{\"type\":\"event_msg\",\"payload\":{}}\n").is_none(),
        "line 1 is not session_meta"
    );
    assert!(parse_rollout(b"not json\n").is_none());
}

#[test]
fn a_project_is_its_directory_and_below_on_component_boundaries() {
    assert!(is_under("/p/proj", "/p/proj"));
    assert!(is_under("/p/proj/sub", "/p/proj"));
    assert!(!is_under("/p/project", "/p/proj"));
    assert!(!is_under("/p", "/p/proj"));
}

#[test]
fn a_rollout_being_written_is_cut_at_its_last_complete_line() {
    let mut data = rollout("/p");
    let whole = data.len();
    data.extend_from_slice(b"{\"timestamp\":\"2026-11-24T06:3");
    assert_eq!(complete_lines(data).len(), whole);
    assert!(complete_lines(b"no newline at all".to_vec()).is_empty());
}

#[test]
fn a_move_rewrites_every_path_codex_and_the_model_read_and_nothing_else() {
    let old = "/home/u/proj";
    let new = "/srv/re.named dir/ünïcödé 日本";
    let before = rollout(&format!("{old}/sub"));
    let after = relocate(&before, old, new);
    let text = String::from_utf8(after.clone()).unwrap();
    let lines: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let moved = format!("{new}/sub");
    assert_eq!(lines[0]["payload"]["cwd"], moved.as_str());
    assert_eq!(lines[0]["payload"]["runtime_workspace_roots"][0], moved.as_str());
    let env = lines[1]["payload"]["content"][0]["text"].as_str().unwrap();
    assert!(
        env.contains(&format!("<cwd>{moved}</cwd>")) && env.contains(&format!("<root>{moved}</root>")),
        "{env}"
    );
    assert_eq!(lines[2]["payload"]["state"]["environments"]["environments"]["local"]["cwd"], moved.as_str());
    assert!(lines[2]["payload"]["state"]["environments"]["filesystem"].as_str().unwrap().contains(&moved));
    assert_eq!(lines[3]["payload"]["cwd"], moved.as_str());
    assert_eq!(lines[4]["payload"]["thread_settings"]["cwd"], moved.as_str());
    // Tool output is history: what happened at the old path stays as it was said.
    assert!(lines[6]["payload"]["output"].as_str().unwrap().contains(&format!("cat {old}/sub/notes.txt")));
    // Lines without the old path keep their bytes.
    let (b, a): (Vec<&str>, Vec<&str>) =
        (std::str::from_utf8(&before).unwrap().lines().collect(), text.lines().collect());
    assert_eq!(a[5], b[5]);
    assert_eq!(a[7], b[7]);
    assert_eq!(relocate(&before, old, old), before);
    // A sibling that only starts with the same letters is not moved.
    let sibling = rollout("/home/u/project");
    assert_eq!(relocate(&sibling, old, new), sibling);
}

#[test]
fn an_element_is_refused_whole_for_any_bad_file() {
    let good = File { rel: format!("sessions/2026/11/24/{}", name()), data: rollout("/p") };
    validate(std::slice::from_ref(&good)).unwrap();
    let cases = [
        vec![good.clone(), good.clone()],
        vec![File { rel: "sessions/2026/11/24/../../../../auth.json".into(), ..good.clone() }],
        vec![File { data: b"{}\n".to_vec(), ..good.clone() }],
        vec![File {
            rel: format!(
                "sessions/2026/11/24/rollout-2026-11-24T06-32-04-{}.jsonl",
                "0".repeat(8) + "-0000-0000-0000-000000000000"
            ),
            ..good.clone()
        }],
    ];
    for files in cases {
        assert!(validate(&files).is_err(), "{:?}", files.iter().map(|f| &f.rel).collect::<Vec<_>>());
    }
}

#[test]
fn collect_takes_this_projects_rollouts_only_never_through_links() {
    let home = tempfile::tempdir().unwrap();
    let day = home.path().join("sessions/2026/11/24");
    fs::create_dir_all(&day).unwrap();
    fs::write(day.join(name()), rollout("/p/proj/sub")).unwrap();
    let other_id = "01a20c41-21e5-7a13-9fc0-000000000001";
    let other = rollout("/p/project");
    let other = String::from_utf8(other).unwrap().replace(ID, other_id);
    fs::write(day.join(format!("rollout-2026-11-24T06-32-04-{other_id}.jsonl")), other).unwrap();
    fs::write(home.path().join("auth.json"), "CANARY").unwrap();
    let outside = tempfile::tempdir().unwrap();
    let linked_id = "01a20c41-21e5-7a13-9fc0-000000000002";
    let linked = outside.path().join("x.jsonl");
    fs::write(&linked, String::from_utf8(rollout("/p/proj")).unwrap().replace(ID, linked_id)).unwrap();
    std::os::unix::fs::symlink(&linked, day.join(format!("rollout-2026-11-24T06-32-04-{linked_id}.jsonl")))
        .unwrap();

    let files = carried_files(home.path(), "/p/proj").unwrap().unwrap();
    assert_eq!(
        files.iter().map(|f| f.rel.as_str()).collect::<Vec<_>>(),
        [format!("sessions/2026/11/24/{}", name())]
    );
    assert!(carried_files(home.path(), "/q").unwrap().is_none());
}

/// A rollout over the bound stops only its own project's carry: another project's giant
/// conversation is passed over without being read.
#[test]
fn a_giant_rollout_stops_only_its_own_projects_carry() {
    let home = tempfile::tempdir().unwrap();
    let day = home.path().join("sessions/2026/11/24");
    fs::create_dir_all(&day).unwrap();
    fs::write(day.join(name()), rollout("/p/proj")).unwrap();
    let giant_id = "01a20c41-21e5-7a13-9fc0-000000000009";
    let giant = day.join(format!("rollout-2026-11-24T06-32-04-{giant_id}.jsonl"));
    fs::write(&giant, String::from_utf8(rollout("/p/elsewhere")).unwrap().replace(ID, giant_id)).unwrap();
    // Sparse: over the bound without taking the disk.
    fs::OpenOptions::new().write(true).open(&giant).unwrap().set_len(MAX_FILE + 1).unwrap();
    let files = carried_files(home.path(), "/p/proj").unwrap().unwrap();
    assert_eq!(files.len(), 1);
    let err = carried_files(home.path(), "/p/elsewhere").unwrap_err();
    assert!(format!("{err:#}").contains("larger than"), "{err:#}");
    // A first record longer than the head read: its cwd is found where it stands.
    let long = serde_json::json!({"type": "session_meta", "payload": {"id": giant_id,
        "cwd": "/p/\"long\" one", "base_instructions": {"text": "x".repeat(2 << 20)}}});
    fs::write(&giant, format!("{long}\n")).unwrap();
    fs::OpenOptions::new().write(true).open(&giant).unwrap().set_len(MAX_FILE + 1).unwrap();
    assert_eq!(carried_files(home.path(), "/p/proj").unwrap().unwrap().len(), 1);
    assert!(carried_files(home.path(), "/p/\"long\" one").is_err(), "left out quietly");
    assert_eq!(first_cwd(br#"{"a":1, "cwd" : "/x\"y\\"}"#).as_deref(), Some("/x\"y\\"));
    assert_eq!(first_cwd(br#"{"cwd": 3}"#), None);
}

#[test]
fn a_restore_keeps_what_differs_unless_forced_and_repoints_a_stale_index_row() {
    let home = tempfile::tempdir().unwrap();
    let files = vec![File { rel: format!("sessions/2026/11/24/{}", name()), data: rollout("/old/p") }];
    let now = SystemTime::now();

    // The receiver's index names a file that is gone.
    let db = home.path().join("state_5.sqlite");
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch(
        "CREATE TABLE threads (id TEXT PRIMARY KEY, rollout_path TEXT NOT NULL, cwd TEXT NOT NULL)",
    )
    .unwrap();
    conn.execute("INSERT INTO threads VALUES (?1, '/gone/rollout.jsonl', '/old/p')", [ID]).unwrap();
    drop(conn);

    let plan1 = plan(home.path(), "/new/p", Some("/old/p"), &files, false, now).unwrap();
    assert_eq!(plan1.items[0].step, Step::Write);
    assert_eq!(plan1.items.iter().filter(|p| p.kind == crate::place::Kind::Index).count(), 1);
    let placed = crate::place::apply(&plan1, now).unwrap();
    assert_eq!(placed.written, [ID]);
    assert_eq!(plan1.newest.as_deref(), Some(ID));
    let dest = home.path().join(&files[0].rel);
    assert_eq!(crate::fsutil::mode(&dest).unwrap(), 0o600);
    assert!(String::from_utf8(fs::read(&dest).unwrap()).unwrap().contains("\"cwd\":\"/new/p\""));
    let conn = rusqlite::Connection::open(&db).unwrap();
    let named: String =
        conn.query_row("SELECT rollout_path FROM threads WHERE id = ?1", [ID], |r| r.get(0)).unwrap();
    assert_eq!(Path::new(&named), dest);
    let rows: i64 = conn.query_row("SELECT count(*) FROM threads", [], |r| r.get(0)).unwrap();
    assert_eq!(rows, 1, "no row is ever added");
    let mtime = fs::metadata(&dest).unwrap().modified().unwrap();
    assert_eq!(humantime::format_rfc3339_millis(mtime).to_string(), "2026-11-24T06:32:05.155Z");

    // Again: the same bytes are there.
    let again = plan(home.path(), "/new/p", Some("/old/p"), &files, false, now).unwrap();
    assert_eq!(again.items[0].step, Step::Same);
    assert_eq!(again.items.len(), 1, "no index row to repoint");

    // The receiver continued the conversation: its file is kept unless --force.
    fs::write(&dest, [rollout("/new/p"), b"{\"more\":1}\n".to_vec()].concat()).unwrap();
    let kept = plan(home.path(), "/new/p", Some("/old/p"), &files, false, now).unwrap();
    assert!(matches!(kept.items[0].step, Step::Keep(_)));
    let placed = crate::place::apply(&kept, now).unwrap();
    assert_eq!(placed.kept, [ID]);
    assert!(fs::read_to_string(&dest).unwrap().contains("\"more\""));
    let forced = plan(home.path(), "/new/p", Some("/old/p"), &files, true, now).unwrap();
    let placed = crate::place::apply(&forced, now).unwrap();
    assert_eq!(placed.written, [ID]);
    assert_eq!(placed.backups.len(), 1);
    assert!(fs::read_to_string(&placed.backups[0]).unwrap().contains("\"more\""));
    assert!(!fs::read_to_string(&dest).unwrap().contains("\"more\""));
    assert!(
        parse_name(&placed.backups[0].file_name().unwrap().to_string_lossy()).is_none(),
        "Codex must not read a backup"
    );
}

/// JSON may spell a path with escapes (`\u002f`, `\/`); a rollout written so moves as one
/// written plainly (the move checks every conversation reached NEW, and was undone).
#[test]
fn a_cwd_spelled_with_json_escapes_moves_too() {
    let (old, new) = ("/home/u/proj", "/home/u/moved");
    for spelled in [r"\/home\/u\/proj", r"\u002fhome\u002fu\u002fproj", r"/home/u/pr\u006fj"] {
        let line = format!(r#"{{"type":"turn_context","payload":{{"cwd":"{spelled}"}}}}"#);
        let after = relocate(format!("{line}\n").as_bytes(), old, new);
        let moved: Value = serde_json::from_slice(after.strip_suffix(b"\n").unwrap()).unwrap();
        assert_eq!(moved["payload"]["cwd"], new, "{spelled}");
    }
    // A line with an escape and no path of OLD keeps its bytes.
    let other = "{\"text\":\"caf\\u00e9\"}\n".as_bytes();
    assert_eq!(relocate(other, old, new), other);
}
