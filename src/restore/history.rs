//! The carried prompt history (`history.jsonl`, the prompts `claude` offers with the up
//! arrow): only the restored project's lines are appended, each once.
//!
//! A `.lok` from someone else may carry lines of any project; appending them would plant
//! prompts in the receiver's other projects. So a line is taken only when its `project`
//! is the restored project's new path (the path map has already rewritten it); the rest
//! are refused and counted.

use std::collections::HashSet;
use std::fs::{File, OpenOptions};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use anyhow::Context;
use serde_json::Value;

/// The lines whose `project` is `project` (each ending in a newline), and how many
/// other lines there were.
pub fn own_project_lines(text: &[u8], project: &str) -> (Vec<u8>, u64) {
    let mut own = Vec::new();
    let mut refused = 0;
    for line in text.split(|&b| b == b'\n').filter(|l| !l.iter().all(u8::is_ascii_whitespace)) {
        let ok = serde_json::from_slice::<Value>(line)
            .ok()
            .is_some_and(|v| v.get("project").and_then(Value::as_str) == Some(project));
        if ok {
            own.extend_from_slice(line);
            own.push(b'\n');
        } else {
            refused += 1;
        }
    }
    (own, refused)
}

fn hash(line: &[u8]) -> u64 {
    let mut h = DefaultHasher::new();
    line.hash(&mut h);
    h.finish()
}

/// Appends the lines of `incoming` that `path` does not hold yet, in one write, and
/// returns how many (with `dry_run`, how many it would). The existing file is only
/// hashed line by line, so its size does not matter.
pub fn append(path: &Path, incoming: &[u8], dry_run: bool) -> anyhow::Result<u64> {
    let mut existing = HashSet::new();
    let mut ends_in_newline = true;
    if let Ok(f) = File::open(path) {
        let mut reader = BufReader::new(f);
        let mut line = Vec::new();
        loop {
            line.clear();
            if reader.read_until(b'\n', &mut line)? == 0 {
                break;
            }
            ends_in_newline = line.ends_with(b"\n");
            existing.insert(hash(line.strip_suffix(b"\n").unwrap_or(&line)));
        }
    }
    let mut add = Vec::new();
    let mut n = 0;
    for line in incoming.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        if serde_json::from_slice::<Value>(line).is_ok() && existing.insert(hash(line)) {
            add.extend_from_slice(line);
            add.push(b'\n');
            n += 1;
        }
    }
    if n == 0 || dry_run {
        return Ok(n);
    }
    if !ends_in_newline {
        add.insert(0, b'\n');
    }
    let mut f = OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("could not open {}", path.display()))?;
    f.write_all(&add).with_context(|| format!("could not append to {}", path.display()))?;
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_projects_own_lines_are_taken() {
        let text = b"{\"display\":\"a\",\"project\":\"/new\"}\n{\"display\":\"b\",\"project\":\"/else\"}\nnot json\n\
{\"display\":\"c\",\"project\":\"/new/sub\"}\n";
        let (own, refused) = own_project_lines(text, "/new");
        assert_eq!(own, b"{\"display\":\"a\",\"project\":\"/new\"}\n");
        assert_eq!(refused, 3);
    }

    #[test]
    fn lines_are_appended_once_and_a_dry_run_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history.jsonl");
        std::fs::write(&path, "{\"a\":1}").unwrap();
        let incoming = b"{\"a\":1}\n{\"b\":2}\n";
        assert_eq!(append(&path, incoming, true).unwrap(), 1);
        assert_eq!(std::fs::read(&path).unwrap(), b"{\"a\":1}");
        assert_eq!(append(&path, incoming, false).unwrap(), 1);
        assert_eq!(append(&path, incoming, false).unwrap(), 0);
        assert_eq!(std::fs::read(&path).unwrap(), b"{\"a\":1}\n{\"b\":2}\n");
    }
}
