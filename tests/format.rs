//! The .lok format: the committed JSON Schema matches the types, every valid fixture
//! validates and reads, broken ones are refused with a message naming the file.

use std::fs;
use std::path::Path;

use crate::util::schema::{assert_valid, check_generated, schema};
use crate::util::{TestEnv, fixtures};

#[test]
fn schema_file_matches_the_types() {
    let mut text = serde_json::to_string_pretty(&lokust::lok::json_schema()).unwrap();
    text.push('\n');
    check_generated(&Path::new(env!("CARGO_MANIFEST_DIR")).join("schema/lok.schema.json"), &text);
}

#[test]
fn valid_fixtures_validate_and_read() {
    for name in ["coordination.lok", "shell.lok", "shell-newer-fields.lok"] {
        let path = fixtures().join("lok").join(name);
        let doc: serde_json::Value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
        assert_valid(&doc, name);
        lokust::lok::Lok::read_path(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

#[test]
fn a_shell_session_does_not_pass_as_coordination_and_back() {
    let validator = jsonschema::validator_for(&schema()).unwrap();
    // Missing the required parts of both variants.
    assert!(!validator.is_valid(&serde_json::json!({"session": {"id": "x"}})));
    assert!(!validator.is_valid(&serde_json::json!({"session": {"id": "x", "kind": "editor"}, "shell": {}})));
}

#[test]
fn unknown_fields_survive_inspect_json() {
    let env = TestEnv::new();
    let out = env
        .cmd("lokust-shell")
        .arg("inspect")
        .arg("--json")
        .arg(fixtures().join("lok/shell-newer-fields.lok"))
        .assert()
        .success();
    let doc = crate::util::json(&out.get_output().stdout);
    assert_eq!(doc["signature"]["alg"], "ed25519");
    assert_eq!(doc["session"]["resumed_from"], "shell-0");
    assert_eq!(doc["shell"]["editor_state"]["open"][0], "a.rs");
    assert_eq!(doc["bundle"]["compression"], "none");
    assert_eq!(doc["format_version"], 1);
}

#[test]
fn broken_files_are_refused_by_name() {
    let env = TestEnv::new();
    let cases = [
        ("future-version.lok", "future-version.lok uses format_version 2; this lokust reads 1"),
        ("unknown-kind.lok", "unknown-kind.lok has session.kind \"editor\""),
        ("truncated.lok", "truncated.lok is not valid JSON: EOF while parsing"),
        (
            "wrong-shape.lok",
            "wrong-shape.lok is not a valid .lok: at shell.history_tail: invalid type: string",
        ),
        ("missing.lok", "could not read"),
    ];
    for (name, message) in cases {
        let path = fixtures().join("lok").join(name);
        let out = env.cmd("lokust-shell").arg("inspect").arg(&path).assert().code(2);
        let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
        assert!(stderr.starts_with("lokust: ") && stderr.contains(message), "{name}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
        assert!(out.get_output().stdout.is_empty());
    }
}

#[test]
fn inspect_reads_standard_input() {
    let env = TestEnv::new();
    let lok = fs::read(fixtures().join("lok/coordination.lok")).unwrap();
    env.cmd("lokust-shell")
        .args(["inspect", "-"])
        .write_stdin(lok)
        .assert()
        .success()
        .stdout(predicates::str::contains("iPad Streaming Portal"));
}
