//! Writing files that hold session data: private (0600) and atomic (a temp file beside
//! the target, fsync, rename), so a reader never sees half a `.lok`.

use std::fs::{self, DirBuilder, File};
use std::io::{self, Write};
use std::os::unix::fs::DirBuilderExt;
use std::path::Path;

/// Writes `path` through `fill`, atomically and with mode 0600. On error nothing is left
/// behind and an existing file at `path` is untouched.
pub fn write_private_atomic(path: &Path, fill: impl FnOnce(&mut File) -> io::Result<()>) -> io::Result<()> {
    write_private_atomic_checked(path, fill, || true)
}

/// [`write_private_atomic`], asking `still_current` right before the rename whether the
/// file is still as it was read; when it says no, the new content is dropped and `path`
/// left to whoever changed it (the caller reads again and retries).
pub fn write_private_atomic_checked(
    path: &Path,
    fill: impl FnOnce(&mut File) -> io::Result<()>,
    still_current: impl FnOnce() -> bool,
) -> io::Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    // tempfile creates the file 0600, so no other user can read it even for a moment.
    let mut tmp = tempfile::Builder::new().prefix(".lokust-").suffix(".tmp").tempfile_in(dir)?;
    fill(tmp.as_file_mut())?;
    tmp.as_file_mut().flush()?;
    tmp.as_file().sync_all()?;
    if !still_current() {
        return Ok(());
    }
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Creates `dir` and its parents; the ones created here get mode 0700.
pub fn create_private_dir(dir: &Path) -> io::Result<()> {
    DirBuilder::new().recursive(true).mode(0o700).create(dir)
}

/// Reads the mode bits of a path, for tests and `doctor`.
pub fn mode(path: &Path) -> io::Result<u32> {
    use std::os::unix::fs::PermissionsExt;
    Ok(fs::metadata(path)?.permissions().mode() & 0o7777)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_are_private_and_failures_leave_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("s.lok");
        write_private_atomic(&target, |f| f.write_all(b"{}")).unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"{}");
        assert_eq!(mode(&target).unwrap(), 0o600);
        let err = write_private_atomic(&target, |f| {
            f.write_all(b"half")?;
            Err(io::Error::other("boom"))
        });
        assert!(err.is_err());
        assert_eq!(fs::read(&target).unwrap(), b"{}");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
