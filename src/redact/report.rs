//! What a redaction pass did, in counts, never in text.

use std::collections::BTreeMap;
use std::io;

/// What a redaction pass did, by rule. Holds counts only, never secret text, so it can be
/// printed, logged and stored in a snapshot summary.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Report {
    /// Lines that changed.
    pub lines: u64,
    /// Secret values replaced.
    pub values: u64,
    /// Values replaced, by rule id.
    pub by_rule: BTreeMap<&'static str, u64>,
}

impl Report {
    /// Adds `other`'s counts to this report.
    pub fn merge(&mut self, other: &Report) {
        // Most texts redact nothing; their empty reports are merged by the thousand.
        if other.values == 0 && other.lines == 0 && other.by_rule.is_empty() {
            return;
        }
        self.lines += other.lines;
        self.values += other.values;
        for (k, v) in &other.by_rule {
            *self.by_rule.entry(k).or_default() += v;
        }
    }

    pub(crate) fn count(&mut self, rule: &'static str) {
        self.values += 1;
        *self.by_rule.entry(rule).or_default() += 1;
    }

    /// Writes the counts, one rule per line, for `lokust-shell redact --explain`.
    /// Only rule ids and numbers: never the text that was redacted.
    pub fn write_explain<W: io::Write>(&self, mut w: W) -> io::Result<()> {
        writeln!(
            w,
            "redacted {} value{} on {} line{}",
            self.values,
            if self.values == 1 { "" } else { "s" },
            self.lines,
            if self.lines == 1 { "" } else { "s" }
        )?;
        let width = self.by_rule.keys().map(|k| k.len()).max().unwrap_or(0);
        for (rule, n) in &self.by_rule {
            writeln!(w, "  {rule:<width$}  {n}")?;
        }
        Ok(())
    }
}
