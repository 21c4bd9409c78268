//! The redactor on a corpus its rules were not written from (fixtures/redaction/unlisted,
//! written from the formats' documentation by someone who had not read src/redact), as
//! its own scorer measures it. A third of its formats is held out: only counts are read
//! here, never which secrets were missed.

use std::process::Command;

use crate::util::{fixtures, have};

/// Where the corpus stands today: a fall below these is a regression. Raise them as the
/// judge improves; never lower them to pass.
const RECALL_FLOOR: f64 = 0.90;
const CLEAN_LINES_PER_MIB_CEILING: f64 = 0.3;

#[test]
fn the_unlisted_corpus_is_caught_and_clean_text_is_left_alone() {
    if !have("python3") {
        return;
    }
    let dir = fixtures().join("redaction/unlisted");
    let out = Command::new("python3")
        .arg(dir.join("score.py"))
        .arg("--json")
        .env("LOKUST", assert_cmd::cargo::cargo_bin("lokust-shell"))
        .current_dir(&dir)
        .output()
        .expect("python3 runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("the scorer's JSON");
    let lokust = &doc["lokust"];
    assert_eq!(lokust["errors"].as_array().map(Vec::len), Some(0), "the redactor failed on a case: {lokust}");
    let recall = |split: &str| lokust["recall"][split]["recall"].as_f64().unwrap();
    println!(
        "unlisted corpus: recall tune {:.3}, holdout {:.3}, all {:.3}",
        recall("tune"),
        recall("holdout"),
        recall("all")
    );
    for mode in ["natural", "text", "transcript"] {
        let clean = &lokust["clean"][mode];
        let (all, manifests) =
            (clean["per_mib_all"].as_f64().unwrap(), clean["per_mib_manifests"].as_f64().unwrap());
        println!(
            "  clean lines changed per MiB ({mode}): {all:.2} all, {manifests:.2} in manifests and lockfiles"
        );
        assert!(all <= CLEAN_LINES_PER_MIB_CEILING, "{mode}: {all} changed lines per MiB of real code");
        assert_eq!(manifests, 0.0, "{mode}: a package manifest or lockfile was changed");
    }
    assert!(recall("all") >= RECALL_FLOOR, "recall {:.3} fell below {RECALL_FLOOR}", recall("all"));
}
