//! Written from the research note and checked against real chat files published by other
//! projects (fixtures/real/gemini), before and beside the code.

use super::*;
use std::os::unix::fs::PermissionsExt;

/// A restore through the placement layer, and where it put the chats.
#[derive(Debug)]
struct Restored {
    folder: PathBuf,
    written: Vec<String>,
    kept: Vec<String>,
    newest: Option<String>,
    notes: Vec<String>,
}

fn restore(gh: &Path, root: &str, files: &[File], now: SystemTime) -> anyhow::Result<Restored> {
    let plan = plan(gh, root, files, false, now)?;
    let done = crate::place::apply(&plan, now)?;
    let folder = gh.join("tmp").join(find_project(gh, root).unwrap_or_default());
    Ok(Restored { folder, written: done.written, kept: done.kept, newest: plan.newest, notes: plan.notes })
}

fn real(rel: &str) -> Option<Vec<u8>> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/real/gemini").join(rel);
    Some(fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())))
}

const ENTIRE_A: &str = "entireio-cli/12/cbfeaa512b/0/full.jsonl";
const ENTIRE_WARNING: &str = "entireio-cli/ec/38b74f08e3/2/full.jsonl";
const JSONL: &str = "handmade/jazzyalex-agent-sessions/gemini/jsonl_v040.jsonl";
const PARTS: &str = "kvsankar-agent-history/real_sessions/gemini/session-01.json";

#[test]
fn slugs_are_the_ones_the_cli_claimed() {
    assert_eq!(slugify("proj_orig"), "proj-orig");
    assert_eq!(slugify("My.Repo"), "my-repo");
    assert_eq!(slugify("ünïcödé 日本 😀"), "n-c-d");
    assert_eq!(slugify("日本"), "project");
    assert_eq!(slugify(""), "project");
}

#[test]
fn the_legacy_folder_is_the_hash_a_published_chat_recorded() {
    // PROVENANCE: projectHash of the entireio chats = sha256 of this path.
    assert_eq!(
        legacy_hash("/Users/peytonmontei/Documents/entire/devenv/entireio/cli"),
        "7e8989f71805c3147f6be9b7a71de2a156f8face69f9380beeeb8a777414f21c"
    );
}

#[test]
fn real_chat_files_parse() {
    let Some(a) = real(ENTIRE_A) else { return };
    let chat = parse_chat(&a).unwrap();
    assert_eq!(chat.session_id.as_deref(), Some("faff42ab-6ea5-4f78-b8c4-f7dd6272af08"));
    assert_eq!(chat.turns, 6);
    assert!(chat.first_prompt.is_some());

    let warning = parse_chat(&real(ENTIRE_WARNING).unwrap()).unwrap();
    assert_eq!(warning.turns, 0, "a warning alone is nothing to resume");

    let jsonl = parse_chat(&real(JSONL).unwrap()).unwrap();
    assert_eq!(jsonl.session_id.as_deref(), Some("gemini_stage0_jsonl"));
    assert_eq!(jsonl.turns, 3);
    assert_eq!(jsonl.last_updated.as_deref(), Some("2026-04-29T21:39:33.156Z"), "$set wins over the header");
    assert_eq!(jsonl.first_prompt.as_deref(), Some("Say hello and list files."));

    let parts = parse_chat(&real(PARTS).unwrap()).unwrap();
    assert_eq!(parts.first_prompt.as_deref(), Some("[REDACTED_PROMPT]"), "content as an array of parts");
}

#[test]
fn set_messages_and_rewind_replace_the_list() {
    let text = concat!(
        r#"{"sessionId":"s1","lastUpdated":"2026-01-01T00:00:00.000Z","kind":"main"}"#,
        "\n",
        r#"{"id":"a","type":"user","content":"one"}"#,
        "\n",
        r#"{"id":"b","type":"gemini","content":"two"}"#,
        "\n",
        r#"{"$rewindTo":"b"}"#,
        "\n"
    );
    assert_eq!(parse_chat(text.as_bytes()).unwrap().turns, 1);
    let set = format!("{text}{}\n", r#"{"$set":{"messages":[]}}"#);
    assert_eq!(parse_chat(set.as_bytes()).unwrap().turns, 0);
    assert!(parse_chat(b"{\"sessionId\":\"x\"}\nnot json\n").is_none());
}

/// A `<gh>` as 0.61.0 leaves it, plus credentials that must never be read.
fn home_with(root: &str, id: &str) -> tempfile::TempDir {
    let gh = tempfile::tempdir().unwrap();
    let dir = gh.path().join("tmp").join(id);
    fs::create_dir_all(dir.join("chats")).unwrap();
    fs::write(dir.join(MARKER), root).unwrap();
    fs::create_dir_all(gh.path().join("history").join(id)).unwrap();
    fs::write(gh.path().join("history").join(id).join(MARKER), root).unwrap();
    for secret in NEVER_CARRIED {
        fs::write(gh.path().join(secret), "CANARY-SECRET").unwrap();
    }
    fs::write(gh.path().join("projects.json"), serde_json::json!({"projects": {root: id}}).to_string())
        .unwrap();
    gh
}

#[test]
fn the_project_is_found_as_the_cli_finds_it() {
    let gh = home_with("/p/one", "one");
    assert_eq!(find_project(gh.path(), "/p/one").as_deref(), Some("one"));
    assert_eq!(find_project(gh.path(), "/p/two"), None);
    // A history marker naming another path: the CLI drops the entry; a scan finds tmp/.
    fs::write(gh.path().join("history/one").join(MARKER), "/p/other").unwrap();
    fs::create_dir_all(gh.path().join("tmp/renamed")).unwrap();
    fs::write(gh.path().join("tmp/renamed").join(MARKER), "/p/one").unwrap();
    assert_eq!(find_project(gh.path(), "/p/one").as_deref(), Some("one"), "tmp/one still names it");
    fs::write(gh.path().join("tmp/one").join(MARKER), "/p/other").unwrap();
    assert_eq!(find_project(gh.path(), "/p/one").as_deref(), Some("renamed"));
    // A registry value that is not a plain folder name is never followed.
    fs::write(gh.path().join("projects.json"), r#"{"projects":{"/p/x":"../../etc"}}"#).unwrap();
    assert_eq!(find_project(gh.path(), "/p/x"), None);
}

#[test]
fn collect_groups_by_the_session_id_inside_and_carries_nothing_else() {
    let Some(a) = real(ENTIRE_A) else { return };
    let root = "/home/u/proj";
    let gh = home_with(root, "proj");
    let chats = gh.path().join("tmp/proj/chats");
    fs::write(chats.join("session-2026-01-01T10-00-faff42ab.json"), &a).unwrap();
    // A second file of the same session, under another minute's name (a resume).
    let header = r#"{"sessionId":"faff42ab-6ea5-4f78-b8c4-f7dd6272af08","lastUpdated":"2026-03-01T00:00:00.000Z","kind":"main"}"#;
    fs::write(chats.join("session-2026-03-01T00-00-faff42ab.jsonl"), format!("{header}\n")).unwrap();
    // A file named after one session that holds another.
    fs::write(chats.join("session-2026-02-01T00-00-faff42ab.jsonl"), real(JSONL).unwrap()).unwrap();
    fs::write(chats.join("session-2026-02-02T00-00-29eb990e.json"), real(ENTIRE_WARNING).unwrap()).unwrap();
    fs::create_dir_all(chats.join("faff42ab-6ea5-4f78-b8c4-f7dd6272af08")).unwrap();
    fs::write(chats.join("faff42ab-6ea5-4f78-b8c4-f7dd6272af08/sub-1.jsonl"), header).unwrap();
    let plans = gh.path().join("tmp/proj/faff42ab-6ea5-4f78-b8c4-f7dd6272af08/plans");
    fs::create_dir_all(&plans).unwrap();
    fs::write(plans.join("plan.md"), "step one").unwrap();
    std::os::unix::fs::symlink(
        gh.path().join("oauth_creds.json"),
        chats.join("session-2026-04-01T00-00-linklink.json"),
    )
    .unwrap();
    fs::write(gh.path().join("tmp/proj/logs.json"), "[]").unwrap();
    // The legacy folder holds an older session of the same path.
    let legacy = gh.path().join("tmp").join(legacy_hash(root)).join("chats");
    fs::create_dir_all(&legacy).unwrap();
    fs::write(legacy.join("session-2025-12-01T00-00-dcbe78d3.json"), real(PARTS).unwrap()).unwrap();

    let got = collect(gh.path(), root);
    let ids: Vec<&str> = got.sessions.iter().map(|s| s.id.as_str()).collect();
    // Last updated 2026-03-01 (by its later file), 2026-04-29 and 2026-06-05.
    assert_eq!(
        ids,
        [
            "faff42ab-6ea5-4f78-b8c4-f7dd6272af08",
            "gemini_stage0_jsonl",
            "dcbe78d3-ea75-4786-929e-d6cff0fc00ed"
        ],
        "oldest first, grouped by the id inside, the warning-only session left out"
    );
    let faff = &got.sessions[0];
    assert_eq!(
        faff.files,
        [
            "chats/faff42ab-6ea5-4f78-b8c4-f7dd6272af08/sub-1.jsonl",
            "chats/session-2026-01-01T10-00-faff42ab.json",
            "chats/session-2026-03-01T00-00-faff42ab.jsonl",
            "faff42ab-6ea5-4f78-b8c4-f7dd6272af08/plans/plan.md",
        ]
    );
    for c in &got.files {
        let data = read_carried(c).unwrap();
        assert!(!String::from_utf8_lossy(&data).contains("CANARY-SECRET"), "{} carried a secret", c.rel);
        check_rel(&c.rel).unwrap();
    }
    assert!(got.files.iter().all(|c| !c.rel.contains("linklink") && !c.rel.contains("logs.json")));
}

#[test]
fn hostile_paths_and_files_are_refused() {
    let ok = br#"{"sessionId":"s1","messages":[]}"#.to_vec();
    for rel in [
        "../x",
        "chats/../../x",
        "/etc/passwd",
        "settings.json",
        ".project_root",
        "chats/x.txt",
        "chats/.hidden.json",
        "chats/a/b/c.jsonl",
        "s1/hooks/run.sh/../x",
        "s1/bin/x",
        "chats//session-x.json",
        "",
    ] {
        assert!(validate(&[File { rel: rel.into(), data: ok.clone() }]).is_err(), "{rel:?} accepted");
    }
    let twice = File { rel: "chats/session-a.json".into(), data: ok.clone() };
    assert!(validate(&[twice.clone(), twice]).is_err());
    for data in [&b"not json"[..], br#"{"sessionId":"../../x"}"#, br#"{"messages":[]}"#] {
        assert!(validate(&[File { rel: "chats/session-a.json".into(), data: data.to_vec() }]).is_err());
    }
    assert!(validate(&[File { rel: "s1/plans/p.md".into(), data: b"plan".to_vec() }]).is_ok());
}

#[test]
fn periods_and_windows_follow_the_cli() {
    use crate::agent::retention::Period;
    let parse_period = |t: &str| match crate::agent::retention::parse_period(t) {
        Some(Period::Of(d)) => Some(d),
        _ => None,
    };
    assert_eq!(parse_period("30d"), Some(Duration::from_secs(30 * 86_400)));
    assert_eq!(parse_period("24h"), Some(Duration::from_secs(86_400)));
    assert_eq!(parse_period("1w"), Some(Duration::from_secs(7 * 86_400)));
    assert_eq!(parse_period("2m"), Some(Duration::from_secs(60 * 86_400)));
    assert_eq!(parse_period("0d"), None);
    assert_eq!(parse_period("d"), None);
    assert_eq!(parse_period("+3d"), None);
    let gh = tempfile::tempdir().unwrap();
    let retention = |gh: &Path| retention(gh, "/nowhere/project");
    assert_eq!(retention(gh.path()), Some(Duration::from_secs(30 * 86_400)));
    fs::write(gh.path().join("settings.json"), r#"{"general":{"sessionRetention":{"maxAge":"7d"}}}"#)
        .unwrap();
    assert_eq!(retention(gh.path()), Some(Duration::from_secs(7 * 86_400)));
    fs::write(gh.path().join("settings.json"), r#"{"general":{"sessionRetention":{"enabled":false}}}"#)
        .unwrap();
    assert_eq!(retention(gh.path()), None);
}

#[test]
fn old_sessions_move_into_the_window_in_their_order() {
    let now = humantime::parse_rfc3339("2026-11-24T00:00:00Z").unwrap();
    let day = Duration::from_secs(86_400);
    let list = vec![
        ("b".to_string(), Some(iso(now - day * 41))),
        ("a".to_string(), Some(iso(now - day * 40))),
        ("c".to_string(), Some(iso(now - day * 20))),
        ("d".to_string(), Some(iso(now - day))),
        ("e".to_string(), None),
    ];
    let moved = keep_in_window(&list, now, day * 30);
    let at = |id: &str| {
        let t =
            moved.get(id).cloned().or_else(|| list.iter().find(|(i, _)| i == id).unwrap().1.clone()).unwrap();
        humantime::parse_rfc3339_weak(&t).unwrap()
    };
    assert!(!moved.contains_key("d"), "a recent session is left alone");
    let order: Vec<SystemTime> = ["e", "b", "a", "c", "d"].iter().map(|id| at(id)).collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{moved:?}");
    assert!(order.iter().all(|t| *t >= now - day * 15), "{moved:?}");
}

#[test]
fn last_updated_is_set_and_files_stay_valid() {
    let Some(jsonl) = real(JSONL) else { return };
    let out = set_last_updated(&jsonl, "2026-11-24T00:00:00.000Z");
    for line in String::from_utf8(out.clone()).unwrap().lines() {
        serde_json::from_str::<Value>(line).unwrap();
    }
    assert_eq!(parse_chat(&out).unwrap().last_updated.as_deref(), Some("2026-11-24T00:00:00.000Z"));
    let json = set_last_updated(&real(ENTIRE_A).unwrap(), "2026-11-24T00:00:00.000Z");
    let doc: Value = serde_json::from_slice(&json).unwrap();
    assert_eq!(doc["lastUpdated"], "2026-11-24T00:00:00.000Z");
    assert_eq!(parse_chat(&json).unwrap().turns, 6);
}

fn chat(id: &str, last: &str) -> Vec<u8> {
    format!(
        "{}\n{}\n",
        serde_json::json!({"sessionId": id, "lastUpdated": last, "kind": "main"}),
        serde_json::json!({"id": "m1", "type": "user", "content": "hi"})
    )
    .into_bytes()
}

#[test]
fn a_fresh_home_gets_a_folder_markers_and_registry_that_agree() {
    let gh = tempfile::tempdir().unwrap();
    let gh = gh.path().join(".gemini");
    let root = "/x/re.named dir/ünïcödé 日本 😀";
    let now = SystemTime::now();
    let files = vec![
        File {
            rel: "chats/session-2026-01-01T00-00-aaaaaaaa.jsonl".into(),
            data: chat("aaaaaaaa-1", &iso(now)),
        },
        File { rel: "aaaaaaaa-1/plans/p.md".into(), data: b"plan".to_vec() },
    ];
    let placed = restore(&gh, root, &files, now).unwrap();
    assert_eq!(placed.folder, gh.join("tmp/n-c-d"));
    assert_eq!(find_project(&gh, root).as_deref(), Some("n-c-d"));
    assert_eq!(placed.newest.as_deref(), Some("aaaaaaaa-1"));
    assert_eq!(fs::read_to_string(gh.join("tmp/n-c-d").join(MARKER)).unwrap(), root);
    let chat_file = gh.join("tmp/n-c-d/chats/session-2026-01-01T00-00-aaaaaaaa.jsonl");
    assert_eq!(fs::metadata(&chat_file).unwrap().permissions().mode() & 0o777, 0o600);
    for dir in [gh.join("tmp/n-c-d"), gh.join("tmp/n-c-d/chats"), gh.join("tmp/n-c-d/aaaaaaaa-1/plans")] {
        assert_eq!(fs::metadata(&dir).unwrap().permissions().mode() & 0o777, 0o700, "{}", dir.display());
    }
    assert!(!gh.join("projects.json.lock").exists());
    // Again: nothing new, nothing overwritten, still one folder for the path.
    let again = restore(&gh, root, &files, now).unwrap();
    assert!(again.written.is_empty() && again.kept.is_empty(), "{again:?}");
}

#[test]
fn an_existing_project_is_merged_into_and_a_disagreeing_marker_fixed() {
    let root = "/home/u/proj";
    let gh = home_with(root, "proj");
    let mut projects = serde_json::json!({"projects": {root: "proj", "/elsewhere": "elsewhere"}});
    fs::write(gh.path().join("projects.json"), projects.to_string()).unwrap();
    fs::write(gh.path().join("history/proj").join(MARKER), "/home/u/old-name").unwrap();
    let mine = gh.path().join("tmp/proj/chats/session-2026-01-01T00-00-same0000.jsonl");
    fs::write(&mine, "receiver's own").unwrap();
    let now = SystemTime::now();
    let files = vec![
        File {
            rel: "chats/session-2026-01-01T00-00-same0000.jsonl".into(),
            data: chat("same0000-x", &iso(now)),
        },
        File {
            rel: "chats/session-2026-01-02T00-00-new00000.jsonl".into(),
            data: chat("new00000-x", &iso(now)),
        },
    ];
    let placed = restore(gh.path(), root, &files, now).unwrap();
    assert_eq!(placed.folder, gh.path().join("tmp/proj"));
    assert_eq!(placed.kept, ["same0000-x"]);
    assert_eq!(fs::read_to_string(&mine).unwrap(), "receiver's own");
    assert_eq!(fs::read_to_string(gh.path().join("history/proj").join(MARKER)).unwrap(), root);
    assert_eq!(find_project(gh.path(), root).as_deref(), Some("proj"));
    let tmp_dirs = fs::read_dir(gh.path().join("tmp")).unwrap().count();
    assert_eq!(tmp_dirs, 1, "never a second folder for one path");
    projects = serde_json::from_slice(&fs::read(gh.path().join("projects.json")).unwrap()).unwrap();
    assert_eq!(projects["projects"]["/elsewhere"], "elsewhere", "other entries kept");
}

#[test]
fn a_folder_another_registered_project_owns_is_not_taken() {
    let gh = home_with("/a/proj", "proj");
    // The registry also (wrongly) maps the new path to that folder.
    fs::write(gh.path().join("projects.json"), r#"{"projects":{"/a/proj":"proj","/b/proj":"proj"}}"#)
        .unwrap();
    let now = SystemTime::now();
    let files = vec![File { rel: "chats/session-x.jsonl".into(), data: chat("s-1", &iso(now)) }];
    let placed = restore(gh.path(), "/b/proj", &files, now).unwrap();
    assert_eq!(placed.folder, gh.path().join("tmp/proj-1"));
    assert_eq!(fs::read_to_string(gh.path().join("tmp/proj").join(MARKER)).unwrap(), "/a/proj");
    assert_eq!(find_project(gh.path(), "/b/proj").as_deref(), Some("proj-1"));
    assert_eq!(find_project(gh.path(), "/a/proj").as_deref(), Some("proj"));
}

#[test]
fn restored_sessions_are_refreshed_only_when_the_window_needs_it() {
    let gh = tempfile::tempdir().unwrap();
    let now = SystemTime::now();
    let day = Duration::from_secs(86_400);
    let files = vec![
        File { rel: "chats/session-old.jsonl".into(), data: chat("old-1", &iso(now - day * 40)) },
        File { rel: "chats/session-new.jsonl".into(), data: chat("new-1", &iso(now - day)) },
    ];
    let placed = restore(gh.path(), "/p", &files, now).unwrap();
    assert!(placed.notes[0].contains("1 older conversations dated"), "{:?}", placed.notes);
    assert_eq!(placed.newest.as_deref(), Some("new-1"));
    let old = parse_chat(&fs::read(placed.folder.join("chats/session-old.jsonl")).unwrap()).unwrap();
    let old_t = humantime::parse_rfc3339_weak(old.last_updated.as_deref().unwrap()).unwrap();
    assert!(old_t + Duration::from_secs(1) >= now - day * 15 && old_t < now - day, "{old:?}");
}

#[test]
fn a_planted_link_in_the_target_folder_stops_the_restore() {
    let gh = home_with("/p", "p");
    let outside = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path(), gh.path().join("tmp/p/s-1")).unwrap();
    let files = vec![File { rel: "s-1/plans/x.md".into(), data: b"x".to_vec() }];
    assert!(restore(gh.path(), "/p", &files, SystemTime::now()).is_err());
    assert_eq!(fs::read_dir(outside.path()).unwrap().count(), 0);
}

#[test]
fn concurrent_restores_lose_no_registry_entry() {
    let gh = tempfile::tempdir().unwrap();
    let now = SystemTime::now();
    let handles: Vec<_> = (0..8)
        .map(|i| {
            let gh = gh.path().to_path_buf();
            std::thread::spawn(move || {
                let files = vec![File { rel: "chats/session-a.jsonl".into(), data: chat("s-1", &iso(now)) }];
                restore(&gh, &format!("/p/n{i}"), &files, now).unwrap();
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    for i in 0..8 {
        assert!(find_project(gh.path(), &format!("/p/n{i}")).is_some(), "entry {i} lost");
    }
}

#[test]
fn a_registry_that_is_not_json_is_left_alone_and_nothing_is_written() {
    let gh = tempfile::tempdir().unwrap();
    fs::write(gh.path().join("projects.json"), "{ half written").unwrap();
    let now = SystemTime::now();
    let files = vec![File { rel: "chats/session-a.jsonl".into(), data: chat("s-1", &iso(now)) }];
    let err = restore(gh.path(), "/p", &files, now).unwrap_err();
    assert!(format!("{err:#}").contains("not valid JSON; left as it is"), "{err:#}");
    assert_eq!(fs::read_to_string(gh.path().join("projects.json")).unwrap(), "{ half written");
    assert!(!gh.path().join("tmp").exists() && !gh.path().join("projects.json.lock").exists());
}

#[test]
fn a_stale_lock_of_a_dead_process_is_taken_over() {
    let gh = tempfile::tempdir().unwrap();
    let lock = gh.path().join("projects.json.lock");
    fs::create_dir(&lock).unwrap();
    let old = filetime::FileTime::from_unix_time(1_700_000_000, 0);
    filetime::set_file_mtime(&lock, old).unwrap();
    let now = SystemTime::now();
    let files = vec![File { rel: "chats/session-a.jsonl".into(), data: chat("s-1", &iso(now)) }];
    restore(gh.path(), "/p", &files, now).unwrap();
    assert!(!lock.exists());
    assert_eq!(find_project(gh.path(), "/p").as_deref(), Some("p"));
}

/// A conversation's files are those of the project asked about: the same session id in
/// another project's folder (a restore from an archive leaves one) is not named.
#[test]
fn stored_names_only_the_projects_own_copy() {
    let gh = tempfile::tempdir().unwrap();
    let chat = r#"{"sessionId":"s-1","projectHash":"h","startTime":"2026-01-01T00:00:00.000Z","lastUpdated":"2026-01-01T00:00:00.000Z"}
{"id":"m1","type":"user","content":[{"text":"hi"}]}
"#;
    for (folder, root) in [("a", "/p/a"), ("b", "/p/b")] {
        let dir = gh.path().join("tmp").join(folder);
        fs::create_dir_all(dir.join("chats/s-1")).unwrap();
        fs::create_dir_all(dir.join("s-1/plans")).unwrap();
        fs::write(dir.join(".project_root"), root).unwrap();
        fs::write(dir.join("chats/session-2026-01-01T00-00-s1.jsonl"), chat).unwrap();
        fs::write(dir.join("chats/s-1/sub.jsonl"), "{}\n").unwrap();
        fs::write(dir.join("s-1/plans/p.md"), "plan").unwrap();
    }
    let mut a = stored(gh.path(), "/p/a", "s-1");
    a.sort();
    let base = gh.path().join("tmp/a");
    assert_eq!(
        a,
        [
            base.join("chats/s-1/sub.jsonl"),
            base.join("chats/session-2026-01-01T00-00-s1.jsonl"),
            base.join("s-1/plans/p.md")
        ]
    );
    assert!(stored(gh.path(), "/p/c", "s-1").is_empty());
}

/// What a restore registered is taken back only while nothing came of it: a folder with a
/// chat in it stays, and its entry with it.
#[test]
fn forget_takes_back_only_an_empty_registration() {
    let gh = tempfile::tempdir().unwrap();
    let g = gh.path();
    for (id, root) in [("a", "/p/a"), ("b", "/p/b")] {
        fs::create_dir_all(g.join("tmp").join(id).join("chats")).unwrap();
        fs::write(g.join("tmp").join(id).join(MARKER), root).unwrap();
    }
    fs::write(g.join("tmp/b/chats/session-x.jsonl"), "{}\n").unwrap();
    fs::write(
        g.join("projects.json"),
        r#"{"projects": {"/p/a": "a", "/p/b": "b", "/p/c": "c"}, "other": 1}"#,
    )
    .unwrap();
    forget(g, "/p/a").unwrap();
    forget(g, "/p/b").unwrap();
    let doc: Value = serde_json::from_slice(&fs::read(g.join("projects.json")).unwrap()).unwrap();
    assert_eq!(doc["projects"], serde_json::json!({"/p/b": "b", "/p/c": "c"}));
    assert_eq!(doc["other"], 1, "another key of the file was lost");
    assert!(!g.join("tmp/a").exists() && g.join("tmp/b/chats/session-x.jsonl").is_file());
}
