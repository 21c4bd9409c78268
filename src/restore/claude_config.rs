//! The project's entry in the receiver's `.claude.json`: a merge that loses nothing
//! written meanwhile. Which carried keys may be installed is decided in
//! [`crate::agent::claude`].
//!
//! The file is rewritten by Claude Code itself, often, and possibly by other restores:
//! the merge holds an exclusive lock on the file's directory (for lokust runs), reads,
//! edits, and re-reads just before the rename, starting over when the file changed
//! (for any writer); then it reads the result back, so it never reports an entry that
//! did not stick. A symlinked `.claude.json` (dotfiles) is written through: its target
//! is replaced atomically, the link stays.

use std::fs::{self, File};
use std::io;
use std::os::unix::fs::MetadataExt;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use serde_json::{Map, Value};

/// What became of the entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Merged {
    /// Added under the new path, with this many keys.
    Added { keys: usize },
    /// The receiver already had an entry for the path; it was kept as it is.
    KeptExisting,
}

/// Where a `.claude.json` really is: a symlink is followed to its target (which may not
/// exist yet), so the link itself is never replaced by a regular file.
pub fn resolve(global: &Path) -> anyhow::Result<PathBuf> {
    let mut path = global.to_path_buf();
    for _ in 0..40 {
        match fs::symlink_metadata(&path) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let target = fs::read_link(&path)
                    .with_context(|| format!("could not read the link {}", path.display()))?;
                path = match path.parent() {
                    Some(dir) if target.is_relative() => dir.join(target),
                    _ => target,
                };
            }
            Ok(meta) if !meta.is_file() => bail!("{} is not a regular file", path.display()),
            _ => return Ok(path),
        }
    }
    bail!("{}: too many levels of symbolic links", global.display())
}

/// An exclusive `flock` on a directory, held until dropped: lokust's own writers of one
/// file take turns.
struct DirLock {
    _held: File,
}

impl DirLock {
    fn take(dir: &Path) -> anyhow::Result<DirLock> {
        let file = File::open(dir).with_context(|| format!("could not open {} to lock it", dir.display()))?;
        // SAFETY: flock on a descriptor this struct owns.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } != 0 {
            return Err(io::Error::last_os_error())
                .with_context(|| format!("could not lock {}", dir.display()));
        }
        Ok(DirLock { _held: file })
    }
}

/// The identity of a file's content as last seen: a rewrite by anyone changes it.
fn version(path: &Path) -> Option<(u64, u64, i64, i64)> {
    fs::metadata(path).ok().map(|m| (m.ino(), m.len(), m.mtime(), m.mtime_nsec()))
}

/// Adds `entry` under `projects[new_dir]` of the `.claude.json` at `global` unless the
/// receiver has an entry for that path already; every other key of the file is kept.
pub fn merge(global: &Path, new_dir: &str, entry: Map<String, Value>) -> anyhow::Result<Merged> {
    let target = resolve(global)?;
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let _lock = DirLock::take(&dir)?;
    let keys = entry.len();
    for _ in 0..20 {
        let seen = version(&target);
        let mut doc: Value = match fs::read(&target) {
            Ok(text) => serde_json::from_slice(&text).with_context(|| {
                format!("{} is not valid JSON; its project entry was not added", target.display())
            })?,
            Err(e) if e.kind() == io::ErrorKind::NotFound => Value::Object(Map::new()),
            Err(e) => return Err(e).with_context(|| format!("could not read {}", target.display())),
        };
        let Some(top) = doc.as_object_mut() else { bail!("{} is not a JSON object", target.display()) };
        let projects = top.entry("projects").or_insert_with(|| Value::Object(Map::new()));
        let Some(projects) = projects.as_object_mut() else {
            bail!("{}: projects is not an object", target.display())
        };
        if projects.contains_key(new_dir) {
            return Ok(Merged::KeptExisting);
        }
        projects.insert(new_dir.to_string(), Value::Object(entry.clone()));
        let mode = crate::fsutil::mode(&target).unwrap_or(0o600);
        let mut changed_meanwhile = false;
        crate::fsutil::write_private_atomic_checked(
            &target,
            |f| {
                serde_json::to_writer_pretty(&mut *f, &doc)?;
                use std::os::unix::fs::PermissionsExt;
                f.set_permissions(fs::Permissions::from_mode(mode))
            },
            || {
                changed_meanwhile = version(&target) != seen;
                !changed_meanwhile
            },
        )
        .with_context(|| format!("could not write {}", target.display()))?;
        if changed_meanwhile {
            continue;
        }
        // Read back: another writer may have replaced the file right after the rename.
        let stuck = fs::read(&target)
            .ok()
            .and_then(|t| serde_json::from_slice::<Value>(&t).ok())
            .is_some_and(|d| d.get("projects").and_then(|p| p.get(new_dir)).is_some());
        if stuck {
            return Ok(Merged::Added { keys });
        }
    }
    bail!("{} kept changing while the project entry was added; it was not added", target.display())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn merge_keeps_other_keys_and_an_existing_entry() {
        let dir = tempfile::tempdir().unwrap();
        let global = dir.path().join(".claude.json");
        fs::write(&global, r#"{"userID":"u","projects":{"/a":{"x":1}}}"#).unwrap();
        assert_eq!(
            merge(&global, "/b", obj(json!({"lastSessionId": "s"}))).unwrap(),
            Merged::Added { keys: 1 }
        );
        assert_eq!(merge(&global, "/a", obj(json!({"lastSessionId": "s"}))).unwrap(), Merged::KeptExisting);
        let doc: Value = serde_json::from_slice(&fs::read(&global).unwrap()).unwrap();
        assert_eq!(doc["userID"], "u");
        assert_eq!(doc["projects"]["/a"]["x"], 1);
        assert_eq!(doc["projects"]["/b"]["lastSessionId"], "s");
    }

    #[test]
    fn a_symlinked_config_is_written_through_the_link() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("dotfiles").join("claude.json");
        fs::create_dir(dir.path().join("dotfiles")).unwrap();
        fs::write(&real, r#"{"projects":{}}"#).unwrap();
        let link = dir.path().join(".claude.json");
        std::os::unix::fs::symlink("dotfiles/claude.json", &link).unwrap();
        merge(&link, "/p", obj(json!({"lastSessionId": "s"}))).unwrap();
        assert!(fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        let doc: Value = serde_json::from_slice(&fs::read(&real).unwrap()).unwrap();
        assert_eq!(doc["projects"]["/p"]["lastSessionId"], "s");
    }
}
