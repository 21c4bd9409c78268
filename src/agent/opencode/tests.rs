//! Cases written from the export format `opencode export` prints (1.18.33) and the
//! research note, before the code: what a stranger's export may not do on import.

use super::*;

const SES: &str = "ses_df3a7aac4ffet0qRZdjIWm5G5h";

fn export_doc() -> Value {
    serde_json::json!({
        "info": {"id": SES, "slug": "tidy-moon", "projectID": "197a6ca8", "directory": "/old/p", "path": "",
            "title": "t", "version": "1.18.33",
            "permission": [{"permission": "question", "pattern": "*", "action": "deny"},
                           {"permission": "bash", "pattern": "*", "action": "allow"},
                           {"permission": "edit", "pattern": "*", "action": "ask"}],
            "revert": {"messageID": "msg_1", "snapshot": "abc"},
            "share": {"url": "https://opncd.ai/s/x"},
            "time": {"created": 1795503445307_u64, "updated": 1795503448616_u64}},
        "messages": [
            {"info": {"role": "user", "id": "msg_1", "sessionID": SES},
             "parts": [{"type": "text", "text": "\"remember TAPIR-9\"", "id": "prt_1", "sessionID": SES, "messageID": "msg_1"}]},
            {"info": {"role": "assistant", "id": "msg_2", "sessionID": SES},
             "parts": [{"type": "text", "text": "ok", "id": "prt_2", "sessionID": SES, "messageID": "msg_2"}]}
        ]
    })
}

fn file(doc: &Value) -> File {
    File { rel: format!("{SES}.json"), data: serde_json::to_vec(doc).unwrap() }
}

#[test]
fn an_import_grants_nothing() {
    let clean = without_grants(export_doc());
    let info = &clean["info"];
    assert!(info.get("revert").is_none() && info.get("share").is_none());
    let actions: Vec<&str> =
        info["permission"].as_array().unwrap().iter().map(|r| r["action"].as_str().unwrap()).collect();
    assert_eq!(actions, ["deny", "ask"]);
    let odd = without_grants(serde_json::json!({"info": {"permission": {"bash": "allow"}}}));
    assert!(odd["info"].get("permission").is_none(), "a permission that is not a rule list is dropped");
}

#[test]
fn the_summary_reads_the_first_prompt_without_the_clis_quotes() {
    let s = summarize(&[file(&export_doc())]);
    assert_eq!(s[0].id, SES);
    assert_eq!(s[0].first_prompt.as_deref(), Some("remember TAPIR-9"));
    assert_eq!(s[0].turns, 2);
    assert_eq!(s[0].last_updated.as_deref(), Some("2026-11-24T06:57:28.616Z"));
}

#[test]
fn an_element_is_refused_whole_for_any_bad_file() {
    validate(&[file(&export_doc())]).unwrap();
    let mut other_session = export_doc();
    other_session["messages"][1]["info"]["sessionID"] = "ses_victim".into();
    let mut other_message = export_doc();
    other_message["messages"][0]["parts"][0]["messageID"] = "msg_2".into();
    let mut foreign_parent = export_doc();
    foreign_parent["info"]["parentID"] = "ses_receiversown".into();
    let mut bad_id = export_doc();
    bad_id["messages"][0]["info"]["id"] = "msg_../../x".into();
    let mut renamed = export_doc();
    renamed["info"]["id"] = "ses_other".into();
    for (what, files) in [
        ("a message of another session", vec![file(&other_session)]),
        ("a part of another message", vec![file(&other_message)]),
        ("a parent outside the element", vec![file(&foreign_parent)]),
        ("a message id that is a path", vec![file(&bad_id)]),
        ("info.id not its name", vec![file(&renamed)]),
        ("twice", vec![file(&export_doc()), file(&export_doc())]),
        ("the configuration", vec![File { rel: "opencode.json".into(), data: b"{}".to_vec() }]),
        ("credentials", vec![File { rel: "auth.json".into(), data: b"{}".to_vec() }]),
        ("a path", vec![File { rel: format!("../{SES}.json"), ..file(&export_doc()) }]),
    ] {
        assert!(validate(&files).is_err(), "{what}");
    }
}

#[test]
fn ids_are_a_prefix_and_letters_and_digits() {
    assert!(is_id(SES, "ses_") && is_id("msg_20c5855b3001b1OHssz4fIIAKZ", "msg_"));
    for bad in ["ses_", "ses_a/b", "msg_x", "ses_a.b", "ses_..", "SES_a"] {
        assert!(!is_id(bad, "ses_"), "{bad}");
    }
}

/// Every folder column is repointed for the folder and below it, nothing that only shares
/// a prefix, all in one transaction; repointing back restores every row.
#[test]
fn a_repoint_moves_a_folder_and_below_and_back() {
    let data = tempfile::tempdir().unwrap();
    let conn = rusqlite::Connection::open(data.path().join("opencode.db")).unwrap();
    conn.execute_batch(
        "PRAGMA journal_mode=WAL;
         CREATE TABLE session (id TEXT PRIMARY KEY, directory TEXT);
         CREATE TABLE project (id TEXT PRIMARY KEY, worktree TEXT);
         CREATE TABLE project_directory (project_id TEXT, directory TEXT, PRIMARY KEY (project_id, directory));
         INSERT INTO session VALUES ('ses_a', '/p/a'), ('ses_b', '/p/a/sub'), ('ses_c', '/p/a-b'), ('ses_d', '/p/añ');
         INSERT INTO project VALUES ('r1', '/p/a'), ('global', '/');
         INSERT INTO project_directory VALUES ('r1', '/p/a'), ('r1', '/p/a/sub');",
    )
    .unwrap();
    let rows = |conn: &rusqlite::Connection| -> Vec<String> {
        let mut out = Vec::new();
        for sql in [
            "SELECT id || '=' || directory FROM session ORDER BY id",
            "SELECT id || '=' || worktree FROM project ORDER BY id",
            "SELECT project_id || '=' || directory FROM project_directory ORDER BY directory",
        ] {
            let mut st = conn.prepare(sql).unwrap();
            out.extend(st.query_map([], |r| r.get::<_, String>(0)).unwrap().map(Result::unwrap));
        }
        out
    };
    let before = rows(&conn);
    assert_eq!(repoint(data.path(), "/p/a", "/q/ü b").unwrap(), 2);
    assert_eq!(
        rows(&conn),
        [
            "ses_a=/q/ü b",
            "ses_b=/q/ü b/sub",
            "ses_c=/p/a-b",
            "ses_d=/p/añ",
            "global=/",
            "r1=/q/ü b",
            "r1=/q/ü b",
            "r1=/q/ü b/sub"
        ]
    );
    assert_eq!(repoint(data.path(), "/q/ü b", "/p/a").unwrap(), 2);
    assert_eq!(rows(&conn), before);
    let mode: String = conn.query_row("PRAGMA journal_mode", [], |r| r.get(0)).unwrap();
    assert_eq!(mode, "wal");
}

/// A folder any row names, an archived session's too, is one a move must not lay another
/// project into; a folder that only shares a prefix is not named.
#[test]
fn a_folder_is_named_by_any_row_below_it() {
    let data = tempfile::tempdir().unwrap();
    let conn = rusqlite::Connection::open(data.path().join("opencode.db")).unwrap();
    conn.execute_batch(
        "CREATE TABLE session (id TEXT PRIMARY KEY, directory TEXT, time_archived INTEGER);
         CREATE TABLE project (id TEXT PRIMARY KEY, worktree TEXT);
         INSERT INTO session VALUES ('ses_old', '/p/other/sub', 1700000000000);
         INSERT INTO project VALUES ('r2', '/p/repo');",
    )
    .unwrap();
    assert!(names_folder(data.path(), "/p/other").unwrap(), "an archived session's folder");
    assert!(names_folder(data.path(), "/p/repo").unwrap(), "a project's worktree");
    assert!(!names_folder(data.path(), "/p/oth").unwrap());
    assert!(!names_folder(data.path(), "/p/new").unwrap());
    assert!(!names_folder(tempfile::tempdir().unwrap().path(), "/p/new").unwrap(), "no database at all");
}
