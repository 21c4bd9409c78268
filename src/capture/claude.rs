//! The Claude Code section: which project directory ("slot") holds this cwd's
//! conversations, computed exactly as Claude Code names it.
//!
//! See: docs/claude-code.md ("The slot name").

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::lok::ClaudeCode;
use crate::probe::Probe;

/// Slot names longer than this are cut and given a hash suffix.
const MAX_SLOT_LEN: usize = 200;

/// `$CLAUDE_CONFIG_DIR`, else `~/.claude`.
pub fn config_dir(probe: &Probe) -> Option<PathBuf> {
    probe.var_os("CLAUDE_CONFIG_DIR").map(PathBuf::from).or_else(|| probe.home().map(|h| h.join(".claude")))
}

/// The slot name of an (already canonical) project path: every UTF-16 unit outside
/// `[A-Za-z0-9]` becomes `-`; past 200 units, the first 200 plus `-` and a base-36 hash.
pub fn slot_name(path: &str) -> String {
    let units: Vec<u16> = path.encode_utf16().collect();
    let safe: String = units
        .iter()
        .map(|&u| match u {
            0x30..=0x39 | 0x41..=0x5a | 0x61..=0x7a => u as u8 as char,
            _ => '-',
        })
        .collect();
    if safe.len() <= MAX_SLOT_LEN {
        return safe;
    }
    format!("{}-{}", &safe[..MAX_SLOT_LEN], base36(java_hash(&units).unsigned_abs() as u64))
}

/// Java's `String.hashCode` over UTF-16 units, wrapping at 32 bits.
fn java_hash(units: &[u16]) -> i32 {
    units.iter().fold(0i32, |h, &u| h.wrapping_shl(5).wrapping_sub(h).wrapping_add(u as i32))
}

fn base36(mut n: u64) -> String {
    const DIGITS: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut out = Vec::new();
    loop {
        out.push(DIGITS[(n % 36) as usize]);
        n /= 36;
        if n == 0 {
            break;
        }
    }
    out.reverse();
    String::from_utf8(out).expect("ASCII digits")
}

/// The existing slot directory for `slot` under `projects`: the exact name, or for a long
/// name any directory with the same 200-character prefix (older builds hashed differently).
pub fn find_slot_dir(projects: &Path, slot: &str) -> Option<PathBuf> {
    let exact = projects.join(slot);
    if exact.is_dir() {
        return Some(exact);
    }
    if slot.len() <= MAX_SLOT_LEN {
        return None;
    }
    let prefix = format!("{}-", &slot[..MAX_SLOT_LEN]);
    let mut matches: Vec<PathBuf> = fs::read_dir(projects)
        .ok()?
        .flatten()
        .filter(|e| e.file_name().to_str().is_some_and(|n| n.starts_with(&prefix)))
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    matches.sort();
    matches.into_iter().next()
}

/// `Ok(None)` when Claude Code has no project directory for `cwd`.
pub fn capture(probe: &Probe, cwd: &Path) -> io::Result<Option<ClaudeCode>> {
    let Some(config) = config_dir(probe) else {
        return Ok(None);
    };
    let real = fs::canonicalize(cwd)?;
    let slot = slot_name(&real.to_string_lossy());
    let Some(dir) = find_slot_dir(&config.join("projects"), &slot) else {
        return Ok(None);
    };
    let sessions_logged = fs::read_dir(&dir)?
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .filter(|e| e.path().extension().is_some_and(|x| x == "jsonl"))
        .count() as u64;
    let memory_files = count_files(&dir.join("memory"));
    let project_slot = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or(slot);
    Ok(Some(ClaudeCode {
        project_slot,
        sessions_logged,
        memory_files,
        project_path: dir.to_string_lossy().into_owned(),
        ..ClaudeCode::default()
    }))
}

/// Regular files below `dir`, links not followed; 0 when it does not exist.
fn count_files(dir: &Path) -> u64 {
    let Ok(entries) = fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => count_files(&e.path()),
            Ok(t) if t.is_file() => 1,
            _ => 0,
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slot_names_as_claude_code_writes_them() {
        assert_eq!(slot_name("/Users/ivan/.0spec/worktrees/x"), "-Users-ivan--0spec-worktrees-x");
        assert_eq!(slot_name("/tmp/h2/renamed.dir/with space"), "-tmp-h2-renamed-dir-with-space");
        assert_eq!(slot_name("/tmp/h3/naïve café/日本/😀.x_y-Z~9"), "-tmp-h3-na-ve-caf--------x-y-Z-9");
    }

    #[test]
    fn long_paths_get_a_hash_suffix() {
        let long = format!("/{}", "a".repeat(264));
        let slot = slot_name(&long);
        assert_eq!(slot[..200], format!("-{}", "a".repeat(199)));
        assert!(slot[200..].starts_with('-'));
        assert!(slot[201..].chars().all(|c| c.is_ascii_alphanumeric()));
        // Java's hash of "ab" is 97*31+98 = 3105.
        assert_eq!(java_hash(&"ab".encode_utf16().collect::<Vec<_>>()), 3105);
        assert_eq!(base36(3105), "2e9");
        assert_eq!(base36(0), "0");
    }

    #[test]
    fn a_long_slot_is_found_by_its_prefix_whatever_the_suffix() {
        let projects = tempfile::tempdir().unwrap();
        let long = format!("/{}", "b".repeat(300));
        let slot = slot_name(&long);
        let older = format!("{}-zzzz", &slot[..MAX_SLOT_LEN]);
        fs::create_dir(projects.path().join(&older)).unwrap();
        assert_eq!(find_slot_dir(projects.path(), &slot), Some(projects.path().join(&older)));
        // A short name must match exactly.
        fs::create_dir(projects.path().join("-tmp-ab")).unwrap();
        assert_eq!(find_slot_dir(projects.path(), "-tmp-a"), None);
        assert_eq!(find_slot_dir(projects.path(), "-tmp-ab"), Some(projects.path().join("-tmp-ab")));
    }
}
