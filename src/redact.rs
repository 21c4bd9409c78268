//! The one entry point every captured text goes through before it reaches a `.lok`.
//!
//! This first version holds the original tool's provider rules (minus its "40+ base64
//! characters" rule, which destroyed git hashes and paths); the full engine replaces it.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::LazyLock;

use regex::Regex;

use crate::lok::REDACTED;

static RULES: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"gh[pousr]_[A-Za-z0-9]{36,255}",
        r"|sk-ant-api[0-9A-Za-z_-]{20,}",
        r"|sk-[A-Za-z0-9_-]{20,}",
        r"|\b(?:AKIA|ASIA)[A-Z2-7]{16}\b",
        r"|dop_v1_[a-f0-9]{64}|\bDO00[A-Z0-9]{16}\b",
        r"|\b(?:SK|AC)[0-9a-f]{32}\b",
        r"|eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
        r"|-----BEGIN [A-Z ]*PRIVATE KEY-----",
    ))
    .expect("redaction rules compile")
});

/// What a redaction pass changed: never the secrets themselves, only counts.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Report {
    /// Lines of text that changed.
    pub lines: u64,
    /// Secret values replaced.
    pub values: u64,
    /// Values replaced, per rule id.
    pub by_rule: BTreeMap<&'static str, u64>,
}

impl Report {
    pub fn merge(&mut self, other: &Report) {
        self.lines += other.lines;
        self.values += other.values;
        for (rule, n) in &other.by_rule {
            *self.by_rule.entry(rule).or_default() += n;
        }
    }
}

/// Returns `text` with every secret replaced by `[REDACTED]`; unchanged text is borrowed.
pub fn redact(text: &str) -> Cow<'_, str> {
    redact_report(text, &mut Report::default())
}

/// Like [`redact`], counting what changed into `report`.
pub fn redact_report<'a>(text: &'a str, report: &mut Report) -> Cow<'a, str> {
    let mut values = 0;
    let out = RULES.replace_all(text, |_: &regex::Captures| {
        values += 1;
        REDACTED
    });
    if values > 0 {
        report.values += values;
        *report.by_rule.entry("original-rules").or_default() += values;
        report.lines += text.lines().zip(out.lines()).filter(|(a, b)| a != b).count() as u64;
    }
    out
}

/// The rules without their word-boundary anchors: a cheap superset test on raw JSON text,
/// where an escape such as `\n` can sit right before a secret and hide the boundary.
static CANDIDATES: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(&RULES.as_str().replace(r"\b", "")).expect("candidate rules compile"));

/// Redacts one JSONL line: every string value inside the JSON is redacted on its own, so
/// the line stays valid JSON. A line with nothing to redact comes back borrowed and
/// byte-identical; a changed one is re-serialised (keys keep their order). A line that is
/// not JSON is redacted as plain text. Counts one changed line per JSONL line.
pub fn redact_json_line<'a>(line: &'a str, report: &mut Report) -> Cow<'a, str> {
    if !CANDIDATES.is_match(line) {
        return Cow::Borrowed(line);
    }
    let Ok(mut value) = serde_json::from_str::<serde_json::Value>(line) else {
        return redact_report(line, report);
    };
    let mut inner = Report::default();
    redact_value(&mut value, &mut inner);
    if inner.values == 0 {
        return Cow::Borrowed(line);
    }
    report.values += inner.values;
    report.lines += 1;
    for (rule, n) in inner.by_rule {
        *report.by_rule.entry(rule).or_default() += n;
    }
    Cow::Owned(serde_json::to_string(&value).unwrap_or_else(|_| line.to_string()))
}

fn redact_value(value: &mut serde_json::Value, report: &mut Report) {
    use serde_json::Value;
    match value {
        Value::String(s) => {
            if let Cow::Owned(new) = redact_report(s, report) {
                *s = new;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| redact_value(v, report)),
        Value::Object(map) => map.values_mut().for_each(|v| redact_value(v, report)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn provider_token_is_replaced_and_plain_text_kept() {
        let tok = format!("ghp_{}", "a1B2".repeat(9));
        assert_eq!(redact(&format!("git push https://{tok}@h/x")), "git push https://[REDACTED]@h/x");
        assert!(matches!(redact("git log 3f2a1b9c0d"), Cow::Borrowed(_)));
    }

    #[test]
    fn json_lines_stay_json_and_clean_lines_stay_identical() {
        let tok = format!("ghp_{}", "a1B2".repeat(9));
        let clean = r#"{"b":1.50,"a":"git log 3f2a1b9c0d"}"#;
        let mut report = Report::default();
        assert!(matches!(redact_json_line(clean, &mut report), Cow::Borrowed(_)));
        let line = format!(r#"{{"z":1,"m":{{"content":"push\nAKIAABCDEFGHIJKLMNOP and https://{tok}@h"}}}}"#);
        let out = redact_json_line(&line, &mut report);
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["m"]["content"], "push\n[REDACTED] and https://[REDACTED]@h");
        assert!(out.starts_with(r#"{"z":1,"#), "{out}");
        assert_eq!((report.values, report.lines), (2, 1));
    }
}
