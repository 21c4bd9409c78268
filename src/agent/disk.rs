//! What every agent adapter reads on disk, written once: reads that never follow a link
//! and stop at a size, what the receiver holds of a session, and paths moved on component
//! boundaries. Writing is [`crate::place`]'s alone.

use std::fs::{self, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// A UUID as the agents write them: 8-4-4-4-12 lowercase hex digits.
pub fn is_uuid(s: &str) -> bool {
    let groups: Vec<&str> = s.split('-').collect();
    groups.len() == 5
        && groups
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(g, n)| g.len() == n && g.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)))
}

/// Reads a file, never through a link, refusing one larger than `max` bytes.
pub fn read_bounded(path: &Path, max: u64) -> io::Result<Vec<u8>> {
    // Never through a link, and never waiting on a FIFO or a device: open does not block,
    // and anything but a regular file is refused.
    let mut f = OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK).open(path)?;
    if !f.metadata()?.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} is not a regular file", path.display()),
        ));
    }
    let mut buf = Vec::new();
    (&mut f).take(max + 1).read_to_end(&mut buf)?;
    if buf.len() as u64 > max {
        return Err(io::Error::other(format!("{} is larger than {max} bytes", path.display())));
    }
    Ok(buf)
}

/// The bytes up to the end of the last complete line: a log an agent is appending to may
/// end in half a record.
pub fn complete_lines(mut data: Vec<u8>) -> Vec<u8> {
    let end = memchr::memrchr(b'\n', &data).map_or(0, |i| i + 1);
    data.truncate(end);
    data
}

/// `path` is `root` or below it, on a component boundary.
pub fn is_under(path: &str, root: &str) -> bool {
    root == "/" || path == root || path.strip_prefix(root).is_some_and(|rest| rest.starts_with('/'))
}

/// An absolute path without `.` or `..` components or doubled slashes: one a session may
/// record as where it ran.
pub fn is_plain_absolute(path: &str) -> bool {
    path.starts_with('/')
        && (path == "/" || path[1..].split('/').all(|c| !c.is_empty() && c != "." && c != ".."))
}

/// `path` with `old` replaced by `new` when it is `old` or below it.
pub fn moved(path: &str, old: &str, new: &str) -> Option<String> {
    if path == old {
        Some(new.to_string())
    } else {
        path.strip_prefix(old).filter(|rest| rest.starts_with('/')).map(|rest| format!("{new}{rest}"))
    }
}

/// Whether a JSON line may hold `old` in one of its strings: its bytes as a JSON writer
/// spells them, or an escape (`\u002f`, `\/`) that spells any path another way. Only
/// lines that may are parsed and moved; the rest keep their bytes.
pub fn json_line_may_hold(line: &[u8], old_as_json: &[u8]) -> bool {
    memchr::memmem::find(line, old_as_json).is_some()
        || memchr::memmem::find(line, b"\\u").is_some()
        || memchr::memmem::find(line, b"\\/").is_some()
}

/// `old` as it stands inside a JSON string written by a common writer.
pub fn json_inner(old: &str) -> Vec<u8> {
    let quoted = serde_json::to_string(old).unwrap_or_default();
    quoted.as_bytes().get(1..quoted.len().saturating_sub(1)).unwrap_or_default().to_vec()
}

pub use crate::place::Step;

/// The step for writing `data` at `dest` when the receiver holds `theirs` for the same
/// session (anywhere the agent would find it).
pub fn step_for(theirs: &[PathBuf], dest: &Path, data: &[u8], force: bool) -> Step {
    let differing: Vec<PathBuf> = theirs
        .iter()
        .filter(|p| !(p.as_path() == dest && fs::read(p).is_ok_and(|b| b == data)))
        .cloned()
        .collect();
    if theirs.is_empty() {
        Step::Write
    } else if differing.is_empty() {
        Step::Same
    } else if force {
        Step::Replace(differing)
    } else {
        Step::Keep(differing)
    }
}

/// An RFC 3339 time, never later than `now`, for a restored file's mtime.
pub fn time_of(rfc3339: &str, now: SystemTime) -> Option<SystemTime> {
    humantime::parse_rfc3339_weak(rfc3339.trim_end_matches('Z')).ok().map(|t| t.min(now))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_move_on_component_boundaries_only() {
        assert!(is_under("/p/proj", "/p/proj") && is_under("/p/proj/sub", "/p/proj"));
        assert!(!is_under("/p/project", "/p/proj") && !is_under("/p", "/p/proj"));
        assert_eq!(moved("/p/proj/sub", "/p/proj", "/n").as_deref(), Some("/n/sub"));
        assert_eq!(moved("/p/proj", "/p/proj", "/n").as_deref(), Some("/n"));
        assert_eq!(moved("/p/project", "/p/proj", "/n"), None);
        assert!(is_plain_absolute("/p/é x.y") && is_plain_absolute("/"));
        for bad in ["/p/../etc", "/p/./x", "p/x", "/p//x", "/p/", ""] {
            assert!(!is_plain_absolute(bad), "{bad}");
        }
    }

    #[test]
    fn only_lowercase_8_4_4_4_12_is_a_uuid() {
        assert!(is_uuid("de9533e0-92a6-4294-86e1-8c7b4a936ac6"));
        for bad in [
            "DE9533E0-92A6-4294-86E1-8C7B4A936AC6",
            "de9533e0-92a6-4294-86e1",
            "../x",
            "",
            "de9533e0-92a6-4294-86e1-8c7b4a936ac6/",
        ] {
            assert!(!is_uuid(bad), "{bad}");
        }
    }
}
