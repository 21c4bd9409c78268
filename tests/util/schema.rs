//! The committed JSON Schema of the `.lok` format, and files the tests regenerate.

use std::fs;
use std::path::Path;

/// Regenerates committed files when `LOKUST_BLESS=1`; otherwise compares and fails with
/// the way to regenerate.
pub fn check_generated(path: &Path, expected: &str) {
    if std::env::var_os("LOKUST_BLESS").is_some() {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, expected).unwrap();
        return;
    }
    let actual = fs::read_to_string(path).unwrap_or_default();
    assert!(
        actual == expected,
        "{} is stale: run `LOKUST_BLESS=1 cargo test` and commit the result",
        path.display()
    );
}

pub fn schema() -> serde_json::Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("schema/lok.schema.json");
    serde_json::from_str(&fs::read_to_string(path).expect("schema file")).expect("schema is JSON")
}

/// Validates `doc` against the committed schema, listing every violation on failure.
pub fn assert_valid(doc: &serde_json::Value, what: &str) {
    let validator = jsonschema::validator_for(&schema()).expect("schema compiles");
    let errors: Vec<String> =
        validator.iter_errors(doc).map(|e| format!("{e} at {}", e.instance_path())).collect();
    assert!(errors.is_empty(), "{what} does not validate:\n{}", errors.join("\n"));
}
