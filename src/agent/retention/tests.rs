use super::*;

fn aged(path: &Path, days: u64) {
    let when = SystemTime::now() - Duration::from_secs(days * 86_400);
    filetime::set_file_mtime(path, filetime::FileTime::from_system_time(when)).unwrap();
}

#[test]
fn the_first_layer_that_sets_cleanup_period_days_decides() {
    let config = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let (c, p) = (config.path(), project.path());
    assert_eq!(claude_cleanup(c, Some(p)), Cleanup::After { days: 30.0, from: None });
    fs::write(c.join("settings.json"), r#"{"cleanupPeriodDays": 60}"#).unwrap();
    assert_eq!(claude_cleanup(c, Some(p)).days(), 60);
    fs::create_dir_all(p.join(".claude")).unwrap();
    fs::write(p.join(".claude/settings.json"), r#"{"cleanupPeriodDays": 14, "x": 1}"#).unwrap();
    assert_eq!(claude_cleanup(c, Some(p)).days(), 14);
    // The user-level view does not see the project's layers.
    assert_eq!(claude_cleanup(c, None).days(), 60);
    fs::write(p.join(".claude/settings.local.json"), r#"{"cleanupPeriodDays": 0}"#).unwrap();
    assert_eq!(claude_cleanup(c, Some(p)), Cleanup::Skipped { from: p.join(".claude/settings.local.json") });
    // Re-timing still uses the default, so a later fix does not find restored files old.
    assert_eq!(claude_cleanup(c, Some(p)).days(), 30);
}

#[test]
fn claude_transcripts_near_the_cutoff_are_due() {
    let config = tempfile::tempdir().unwrap();
    let slot = config.path().join("projects/-p");
    fs::create_dir_all(&slot).unwrap();
    fs::write(config.path().join("settings.json"), r#"{"cleanupPeriodDays": 30}"#).unwrap();
    for (name, days) in [("a", 10), ("b", 26), ("c", 40)] {
        let f = slot.join(format!("{name}.jsonl"));
        fs::write(&f, "{}\n").unwrap();
        aged(&f, days);
    }
    fs::write(slot.join("notes.txt"), "not a transcript").unwrap();
    let due = claude_due(config.path(), None, std::slice::from_ref(&slot), SystemTime::now()).unwrap();
    assert_eq!((due.due, due.total), (2, 3));
    assert_eq!(due.ids.iter().collect::<std::collections::BTreeSet<_>>().len(), 2);
    assert!(!due.ids.contains(&"a".to_string()));
    assert!(due.warning().starts_with(
        "Claude Code deletes 2 conversations of this project in five days or less (cleanupPeriodDays 30)"
    ));
    fs::write(config.path().join("settings.json"), r#"{"cleanupPeriodDays": 3650}"#).unwrap();
    let due = claude_due(config.path(), None, std::slice::from_ref(&slot), SystemTime::now()).unwrap();
    assert_eq!(due.due, 0);
    assert!(claude_due(config.path(), None, &[config.path().join("none")], SystemTime::now()).is_none());
}

fn layers_of(gh: &Path, project: Option<&Path>) -> GeminiLayers {
    let mut l = GeminiLayers::new(None, gh, project);
    // Nothing of this machine's /etc.
    l.files.retain(|f| f.starts_with(gh) || project.is_some_and(|p| f.starts_with(p)));
    l
}

#[test]
fn gemini_retention_merges_its_layers_and_refuses_what_the_cli_refuses() {
    let gh = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let (g, p) = (gh.path(), project.path());
    let r = |p: Option<&Path>| gemini_retention(&layers_of(g, p));
    // On by default, 30 days.
    assert_eq!(r(Some(p)).unwrap().max_age, Some(Duration::from_secs(30 * 86_400)));
    assert_eq!(r(Some(p)).unwrap().rule, "sessionRetention maxAge 30d, its default");
    fs::write(g.join("settings.json"), "{\n // comments as the CLI allows\n \"general\": {\"sessionRetention\": {\"maxAge\": \"2w\", /* two weeks */ \"maxCount\": 5}}}").unwrap();
    let user = r(Some(p)).unwrap();
    assert_eq!((user.max_age, user.max_count), (Some(Duration::from_secs(14 * 86_400)), Some(5.0)));
    assert_eq!(user.set_in, g.join("settings.json"));
    assert_eq!(user.rule, "sessionRetention maxAge 2w, maxCount 5");
    // The workspace overrides the user field by field.
    fs::create_dir_all(p.join(".gemini")).unwrap();
    fs::write(p.join(".gemini/settings.json"), r#"{"general":{"sessionRetention":{"maxAge":"7d"}}}"#)
        .unwrap();
    let merged = r(Some(p)).unwrap();
    assert_eq!((merged.max_age, merged.max_count), (Some(Duration::from_secs(7 * 86_400)), Some(5.0)));
    // The fix goes where maxAge is set, not in a file it overrides.
    assert_eq!(merged.set_in, p.join(".gemini/settings.json"));
    // What the CLI's validation refuses turns its cleanup off.
    for bad in [
        r#""maxAge":"0d""#,
        r#""maxAge":"30 days""#,
        r#""maxAge":30"#,
        r#""maxCount":0"#,
        r#""maxCount":null"#,
        r#""maxAge":"12h""#,
        r#""enabled":false"#,
        r#""enabled":0"#,
        r#""maxAge":"","maxCount":null"#,
    ] {
        fs::write(
            p.join(".gemini/settings.json"),
            format!(r#"{{"general":{{"sessionRetention":{{{bad}}}}}}}"#),
        )
        .unwrap();
        assert_eq!(r(Some(p)), None, "{bad}");
    }
    // Unless minRetention allows a shorter maxAge.
    fs::write(
        p.join(".gemini/settings.json"),
        r#"{"general":{"sessionRetention":{"maxAge":"12h","minRetention":"1h"}}}"#,
    )
    .unwrap();
    assert_eq!(r(Some(p)).unwrap().max_age, Some(Duration::from_secs(12 * 3600)));
    // As JavaScript compares: a fractional or string count, an empty maxAge beside a
    // count, a period longer than time (nothing goes by age, the count still applies).
    let with = |body: &str| {
        fs::write(
            p.join(".gemini/settings.json"),
            format!(r#"{{"general":{{"sessionRetention":{{{body}}}}}}}"#),
        )
        .unwrap();
        r(Some(p)).unwrap_or_else(|| panic!("{body}: taken as off"))
    };
    assert_eq!(with(r#""maxCount":2.5"#).max_count, Some(2.5));
    assert_eq!(with(r#""maxCount":"3""#).max_count, Some(3.0));
    assert!(with(r#""maxCount":"many""#).max_count.unwrap().is_nan());
    let empty = with(r#""maxAge":"","maxCount":2"#);
    assert_eq!((empty.max_age, empty.max_count), (None, Some(2.0)));
    assert_eq!(with(r#""maxAge":"99999999999999999999d","maxCount":2"#).max_age, None);
    assert!(with(r#""enabled":"false""#).max_age.is_some(), "a non-empty string is true");
}

fn chat(dir: &Path, name: &str, id: &str, updated: SystemTime) {
    let header = serde_json::json!({"sessionId": id, "projectHash": "h", "startTime": "2026-01-01T00:00:00.000Z", "lastUpdated": "2026-01-01T00:00:00.000Z"});
    let set =
        serde_json::json!({"$set": {"lastUpdated": humantime::format_rfc3339_millis(updated).to_string()}});
    fs::write(dir.join(name), format!("{header}\n{set}\n")).unwrap();
}

#[test]
fn gemini_chats_are_judged_by_last_updated_inside_and_by_count() {
    let gh = tempfile::tempdir().unwrap();
    let project = gh.path().join("tmp/app");
    let chats = project.join("chats");
    fs::create_dir_all(&chats).unwrap();
    let now = SystemTime::now();
    let day = Duration::from_secs(86_400);
    chat(&chats, "session-2026-11-27T10-00-aaaaaaaa.jsonl", "aaaaaaaa-1", now - day);
    chat(&chats, "session-2026-11-20T10-00-bbbbbbbb.jsonl", "bbbbbbbb-2", now - day * 8);
    chat(&chats, "session-2026-10-01T10-00-cccccccc.jsonl", "cccccccc-3", now - day * 12);
    // A fresh mtime does not save a chat whose lastUpdated is old (the CLI reads the field).
    let rule = Retention { max_age: Some(day * 10), max_count: None, rule: "r".into(), set_in: "u".into() };
    let due = gemini_due(&rule, std::slice::from_ref(&project), now).unwrap();
    assert_eq!((due.due, due.total), (2, 3));
    assert_eq!(due.ids, ["bbbbbbbb-2", "cccccccc-3"]);
    let rule =
        Retention { max_age: Some(day * 100), max_count: Some(1.0), rule: "r".into(), set_in: "u".into() };
    let due = gemini_due(&rule, std::slice::from_ref(&project), now).unwrap();
    assert_eq!(due.ids, ["bbbbbbbb-2", "cccccccc-3"], "the newest is kept, the rest go");
    let rule =
        Retention { max_age: Some(day * 100), max_count: Some(1.5), rule: "r".into(), set_in: "u".into() };
    assert_eq!(gemini_due(&rule, std::slice::from_ref(&project), now).unwrap().ids, ["cccccccc-3"]);
    // A torn last line is passed over, not the chat; a chat without lastUpdated is read as
    // updated now, as the CLI reads it.
    let torn = chats.join("session-2026-09-01T10-00-dddddddd.jsonl");
    chat(&chats, "session-2026-09-01T10-00-dddddddd.jsonl", "dddddddd-4", now - day * 40);
    let mut bytes = fs::read(&torn).unwrap();
    bytes.extend_from_slice(b"{\"id\":\"m9\",\"type\":\"us");
    fs::write(&torn, bytes).unwrap();
    fs::write(chats.join("session-2026-11-28T10-00-eeeeeeee.jsonl"), "{\"sessionId\":\"eeeeeeee-5\"}\n")
        .unwrap();
    let rule = Retention { max_age: Some(day * 10), max_count: None, rule: "r".into(), set_in: "u".into() };
    let due = gemini_due(&rule, std::slice::from_ref(&project), now).unwrap();
    assert_eq!((due.total, due.ids.len()), (5, 3), "{:?}", due.ids);
    assert!(due.ids.contains(&"dddddddd-4".to_string()) && !due.ids.contains(&"eeeeeeee-5".to_string()));
}

#[test]
fn comments_are_taken_out_but_not_from_strings() {
    let text = "{\"a\": \"http://x/*y*/\", // c\n \"b\": 1 /* d */}";
    let v: Value = serde_json::from_str(&without_comments(text)).unwrap();
    assert_eq!(v["a"], "http://x/*y*/");
    assert_eq!(v["b"], 1);
}

#[test]
fn a_period_beyond_the_clock_deletes_nothing_and_does_not_panic() {
    let config = tempfile::tempdir().unwrap();
    let slot = config.path().join("projects/-p");
    fs::create_dir_all(&slot).unwrap();
    let f = slot.join("a.jsonl");
    fs::write(&f, "{}\n").unwrap();
    aged(&f, 400);
    for big in ["1e300", "2.2e14", "1.5e14", "1e18"] {
        fs::write(config.path().join("settings.json"), format!(r#"{{"cleanupPeriodDays": {big}}}"#)).unwrap();
        let due = claude_due(config.path(), None, std::slice::from_ref(&slot), SystemTime::now());
        assert_eq!(due.map(|d| (d.due, d.total)), Some((0, 1)), "{big}");
    }
}

#[test]
fn settings_are_read_through_links_but_never_from_a_fifo() {
    let config = tempfile::tempdir().unwrap();
    let dotfiles = tempfile::tempdir().unwrap();
    fs::write(dotfiles.path().join("settings.json"), r#"{"cleanupPeriodDays": 12}"#).unwrap();
    std::os::unix::fs::symlink(dotfiles.path().join("settings.json"), config.path().join("settings.json"))
        .unwrap();
    assert_eq!(claude_cleanup(config.path(), None).days(), 12);
    let project = tempfile::tempdir().unwrap();
    fs::create_dir_all(project.path().join(".claude")).unwrap();
    let fifo = project.path().join(".claude/settings.local.json");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    // Returns at once, past the FIFO, to the next layer.
    assert_eq!(claude_cleanup(config.path(), Some(project.path())).days(), 12);
    // A stray byte in a comment does not lose the file.
    fs::write(dotfiles.path().join("settings.json"), b"{\n// r\xe9glages\n\"cleanupPeriodDays\": 9}")
        .unwrap();
    assert_eq!(claude_cleanup(config.path(), None).days(), 9);
}
