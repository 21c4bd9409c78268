//! Cases written from the Droid research note (0.225.2) before the code: the slot rule,
//! what selects a session, what a move rewrites, and what a hostile element may not do.

use super::*;
use crate::agent::PlaceOptions;
use std::time::SystemTime;

const ID: &str = "de9533e0-92a6-4294-86e1-8c7b4a936ac6";

/// A transcript as 0.225.2 writes it, trimmed: session_start, the environment reminder
/// with `% pwd`, one user and one assistant message, a turn outcome.
fn transcript(cwd: &str) -> Vec<u8> {
    let lines = [
        serde_json::json!({"type":"session_start","id":ID,"title":"remember KIWI-11","owner":"u","version":2,"cwd":cwd,"hostId":"h","isSessionTitleManuallySet":false}),
        serde_json::json!({"type":"message","id":format!("context-{ID}"),"timestamp":"2026-11-24T06:46:58.676Z","message":{"role":"user","content":[{"type":"text","text":format!("<system-reminder>\n% pwd\n{cwd}\n\n</system-reminder>")}]}}),
        serde_json::json!({"type":"message","id":"m1","timestamp":"2026-11-24T06:46:58.678Z","message":{"role":"user","content":[{"type":"text","text":"remember KIWI-11"}]}}),
        serde_json::json!({"type":"message","id":"m2","parentId":"m1","timestamp":"2026-11-24T06:46:58.770Z","message":{"role":"assistant","content":[{"type":"text","text":format!("ok, see {cwd}/notes")}]}}),
        serde_json::json!({"type":"agent_turn_outcome","turnId":"m1","reason":"completed"}),
    ];
    lines.iter().map(|l| format!("{l}\n")).collect::<String>().into_bytes()
}

const SETTINGS_SEEN: &str = r#"{"model":"custom:Mock-0","reasoningEffort":"none","interactionMode":"auto",
  "autonomyLevel":"low","autonomyMode":"auto-low","toolExecutionMode":"direct_only",
  "allowSubagentsInScripts":false,"tokenUsage":{"inputTokens":10},"providerLock":"x"}"#;

#[test]
fn the_slot_is_the_path_with_slashes_turned_into_dashes_and_nothing_else() {
    assert_eq!(slot("/tmp/x/re.named dir/ünïcödé 日本 😀"), "-tmp-x-re.named dir-ünïcödé 日本 😀");
}

#[test]
fn a_transcript_is_read_without_the_environment_reminder() {
    let t = parse_transcript(&transcript("/p/proj")).unwrap();
    assert_eq!((t.id.as_str(), t.cwd.as_str()), (ID, "/p/proj"));
    assert_eq!(t.first_prompt.as_deref(), Some("remember KIWI-11"));
    assert_eq!(t.turns, 2);
    assert_eq!(t.last_time.as_deref(), Some("2026-11-24T06:46:58.770Z"));
    assert!(parse_transcript(b"{\"type\":\"message\"}\n").is_none());
}

#[test]
fn settings_travel_without_what_grants() {
    let kept: Value = serde_json::from_slice(&harmless_settings(SETTINGS_SEEN.as_bytes()).unwrap()).unwrap();
    let keys: Vec<&str> = kept.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, ["model", "reasoningEffort", "tokenUsage"]);
    assert!(harmless_settings(b"[1]").is_none());
}

#[test]
fn a_move_sets_the_cwd_and_the_pwd_output_and_keeps_the_rest() {
    let before = transcript("/p/proj/sub");
    let after = relocate(&before, "/p/proj", "/n/é x.y").unwrap();
    let t = parse_transcript(&after).unwrap();
    assert_eq!(t.cwd, "/n/é x.y/sub");
    let text = String::from_utf8(after).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[1].contains("% pwd\\n/n/é x.y/sub\\n"), "{}", lines[1]);
    let b = std::str::from_utf8(&before).unwrap().lines().collect::<Vec<_>>();
    assert_eq!(&lines[2..], &b[2..], "history is kept as it was said");
    let err = relocate(&transcript("/elsewhere"), "/p/proj", "/n").unwrap_err();
    assert!(err.to_string().contains("not in the project's directory"), "{err}");
}

#[test]
fn an_element_is_refused_whole_for_any_bad_file() {
    let good = File { rel: format!("{ID}.jsonl"), data: transcript("/p") };
    let settings = File { rel: format!("{ID}.settings.json"), data: b"{}".to_vec() };
    validate(&[good.clone(), settings.clone()]).unwrap();
    let cases = [
        vec![good.clone(), good.clone()],
        vec![File { rel: format!("../{ID}.jsonl"), ..good.clone() }],
        vec![File { rel: format!("-p/{ID}.jsonl"), ..good.clone() }],
        vec![File { rel: "..jsonl".into(), ..good.clone() }],
        vec![File { rel: "-x.jsonl".into(), ..good.clone() }],
        vec![File { rel: "settings.json".into(), data: b"{}".to_vec() }],
        vec![File { rel: "mcp.json".into(), data: b"{}".to_vec() }],
        vec![settings.clone()],
        vec![good.clone(), File { data: b"[]".to_vec(), ..settings.clone() }],
        vec![File { rel: "de9533e0-92a6-4294-86e1-000000000000.jsonl".into(), ..good.clone() }],
        vec![File { data: transcript("relative/path"), ..good.clone() }],
        vec![File { data: transcript("/p/../../etc"), ..good.clone() }],
    ];
    for files in cases {
        assert!(validate(&files).is_err(), "{:?}", files.iter().map(|f| &f.rel).collect::<Vec<_>>());
    }
}

#[test]
fn collect_takes_this_projects_sessions_from_every_slot_never_through_links() {
    let home = tempfile::tempdir().unwrap();
    let sessions = home.path().join("sessions");
    let mine = sessions.join(slot("/p/proj/sub"));
    fs::create_dir_all(&mine).unwrap();
    fs::write(mine.join(format!("{ID}.jsonl")), transcript("/p/proj/sub")).unwrap();
    fs::write(mine.join(format!("{ID}.settings.json")), SETTINGS_SEEN).unwrap();
    fs::write(mine.join(format!("{ID}.settings.json.bak")), SETTINGS_SEEN).unwrap();
    let other_id = "de9533e0-92a6-4294-86e1-000000000001";
    let theirs = sessions.join(slot("/p/project"));
    fs::create_dir_all(&theirs).unwrap();
    let other = String::from_utf8(transcript("/p/project")).unwrap().replace(ID, other_id);
    fs::write(theirs.join(format!("{other_id}.jsonl")), other).unwrap();
    fs::write(home.path().join("settings.json"), r#"{"customModels":[{"apiKey":"CANARY"}]}"#).unwrap();
    let outside = tempfile::tempdir().unwrap();
    let linked_id = "de9533e0-92a6-4294-86e1-000000000002";
    let target = outside.path().join("x.jsonl");
    fs::write(&target, String::from_utf8(transcript("/p/proj")).unwrap().replace(ID, linked_id)).unwrap();
    std::os::unix::fs::symlink(&target, mine.join(format!("{linked_id}.jsonl"))).unwrap();

    let files = carried_files(home.path(), "/p/proj").unwrap().unwrap();
    let names: Vec<&str> = files.iter().map(|f| f.rel.as_str()).collect();
    assert_eq!(names, [format!("{ID}.jsonl"), format!("{ID}.settings.json")]);
    // Carried as they are: a restore decides what of them is laid.
    assert_eq!(files[1].data, fs::read(mine.join(format!("{ID}.settings.json"))).unwrap());
    assert!(carried_files(home.path(), "/q").unwrap().is_none());
}

fn place_options(old_root: Option<&str>, force: bool, trust_config: bool, now: SystemTime) -> PlaceOptions {
    PlaceOptions { old_root: old_root.map(str::to_string), force, trust_config, now }
}

fn plan_at(home: &Path, root: &str, old: Option<&str>, files: &[File], force: bool, now: SystemTime) -> Plan {
    plan(home, root, files, &place_options(old, force, false, now)).unwrap()
}

#[test]
fn a_restore_puts_both_in_the_new_slot_and_keeps_what_differs_unless_forced() {
    let home = tempfile::tempdir().unwrap();
    let files = vec![
        File { rel: format!("{ID}.jsonl"), data: transcript("/old/p/sub") },
        File { rel: format!("{ID}.settings.json"), data: SETTINGS_SEEN.as_bytes().to_vec() },
    ];
    let now = SystemTime::now();
    let p = plan_at(home.path(), "/new/é p", Some("/old/p"), &files, false, now);
    assert_eq!(p.items[0].step, Step::Write);
    let placed = crate::place::apply(&p, now).unwrap();
    assert_eq!(placed.written, [ID]);
    let folder = home.path().join("sessions/-new-é p-sub");
    let t = parse_transcript(&fs::read(folder.join(format!("{ID}.jsonl"))).unwrap()).unwrap();
    assert_eq!(t.cwd, "/new/é p/sub");
    let settings = fs::read_to_string(folder.join(format!("{ID}.settings.json"))).unwrap();
    assert!(!settings.contains("autonomy") && !settings.contains("toolExecutionMode"), "{settings}");
    assert_eq!(crate::fsutil::mode(&folder.join(format!("{ID}.jsonl"))).unwrap(), 0o600);

    let again = plan_at(home.path(), "/new/é p", Some("/old/p"), &files, false, now);
    assert_eq!(again.items[0].step, Step::Same);
    // The receiver went on with the session elsewhere: kept unless --force.
    fs::write(
        folder.join(format!("{ID}.jsonl")),
        [transcript("/new/é p/sub"), b"{\"more\":1}\n".to_vec()].concat(),
    )
    .unwrap();
    let kept = plan_at(home.path(), "/new/é p", Some("/old/p"), &files, false, now);
    assert_eq!(crate::place::apply(&kept, now).unwrap().kept, [ID]);
    let forced = plan_at(home.path(), "/new/é p", Some("/old/p"), &files, true, now);
    let placed = crate::place::apply(&forced, now).unwrap();
    assert_eq!(placed.written, [ID]);
    assert_eq!(placed.backups.len(), 2);
    assert!(!fs::read_to_string(folder.join(format!("{ID}.jsonl"))).unwrap().contains("more"));
    // Without the old path an element cannot be placed.
    assert!(plan(home.path(), "/new", &files, &place_options(None, false, false, now)).is_err());
}

/// A session's grants are laid only when the receiver trusts them (`--trust-config`, or a
/// move of the user's own sessions).
#[test]
fn trusted_settings_are_laid_whole() {
    let home = tempfile::tempdir().unwrap();
    let files = vec![
        File { rel: format!("{ID}.jsonl"), data: transcript("/old/p") },
        File { rel: format!("{ID}.settings.json"), data: SETTINGS_SEEN.as_bytes().to_vec() },
    ];
    let now = SystemTime::now();
    let left =
        plan(home.path(), "/new/p", &files, &place_options(Some("/old/p"), false, false, now)).unwrap();
    assert!(
        left.notes.iter().any(|n| n.starts_with("left out") && n.contains("autonomyLevel")),
        "{:?}",
        left.notes
    );
    let p = plan(home.path(), "/new/p", &files, &place_options(Some("/old/p"), false, true, now)).unwrap();
    assert!(
        p.notes.iter().any(|n| n.contains("installed whole") && n.contains("autonomyLevel")),
        "{:?}",
        p.notes
    );
    crate::place::apply(&p, now).unwrap();
    let laid = fs::read(home.path().join(format!("sessions/-new-p/{ID}.settings.json"))).unwrap();
    assert_eq!(laid, SETTINGS_SEEN.as_bytes());
}

/// The hand-made files a session viewer tests with (PROVENANCE.md): older `version`
/// strings, ids that are not UUIDs, a reminder before the prompt in the same text.
#[test]
fn published_hand_made_sessions_read_and_move() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/real/droid/handmade/jazzyalex-agent-sessions/droid");
    let entries = fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let mut read = 0;
    for e in entries.flatten() {
        let data = fs::read(e.path()).unwrap();
        let t = parse_transcript(&data).unwrap_or_else(|| panic!("{}", e.path().display()));
        assert!(t.turns > 0 && t.first_prompt.is_some(), "{}: {t:?}", e.path().display());
        assert!(!t.first_prompt.as_deref().unwrap().contains("system-reminder"), "{t:?}");
        let moved = relocate(&data, &t.cwd, "/n/é x").unwrap();
        assert_eq!(parse_transcript(&moved).unwrap().cwd, "/n/é x");
        let file = File { rel: format!("{}.jsonl", t.id), data };
        validate(std::slice::from_ref(&file)).unwrap();
        read += 1;
    }
    assert_eq!(read, 3);
    let drift = parse_transcript(&fs::read(dir.join("session_store_schema_drift.jsonl")).unwrap()).unwrap();
    assert_eq!(drift.first_prompt.as_deref(), Some("Do the thing"));
}
