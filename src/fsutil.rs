//! Writing files that hold session data: private (0600) and atomic (a temp file beside
//! the target, fsync, rename), so a reader never sees half a `.lok`.

use std::fs::{self, DirBuilder, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use anyhow::Context;

/// Where a finished `.lok` goes: standard output, or a file written atomically, 0600.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Destination {
    Stdout,
    File(PathBuf),
}

impl Destination {
    /// `-` is standard output.
    pub fn from_arg(path: &Path) -> Destination {
        if path == Path::new("-") { Destination::Stdout } else { Destination::File(path.to_path_buf()) }
    }

    /// The name messages use.
    pub fn name(&self) -> String {
        match self {
            Destination::Stdout => "standard output".into(),
            Destination::File(p) => p.display().to_string(),
        }
    }

    /// Writes what `fill` produces, buffered, and returns the number of bytes that
    /// landed. A file appears whole or not at all, in a directory that must exist; on
    /// standard output a closed pipe stays an io error of its kind, for the caller.
    pub fn write(&self, fill: impl FnOnce(&mut dyn Write) -> anyhow::Result<()>) -> anyhow::Result<u64> {
        match self {
            Destination::Stdout => {
                let mut out = Counted {
                    inner: io::BufWriter::with_capacity(256 * 1024, io::stdout().lock()),
                    count: 0,
                };
                fill(&mut out)?;
                out.flush()?;
                Ok(out.count)
            }
            Destination::File(path) => {
                if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty())
                    && !dir.is_dir()
                {
                    anyhow::bail!(
                        "cannot write {}: the directory {} does not exist",
                        path.display(),
                        dir.display()
                    );
                }
                let mut failed = None;
                let written = write_private_atomic(path, |f| {
                    let mut out = io::BufWriter::with_capacity(256 * 1024, f);
                    if let Err(e) = fill(&mut out) {
                        let message = format!("{e:#}");
                        failed = Some(e);
                        return Err(io::Error::other(message));
                    }
                    out.flush()
                });
                match (written, failed) {
                    (Ok(()), _) => Ok(fs::metadata(path).map(|m| m.len()).unwrap_or(0)),
                    (Err(_), Some(e)) => Err(e.context(format!("could not write {}", path.display()))),
                    (Err(e), None) => Err(e).with_context(|| format!("could not write {}", path.display())),
                }
            }
        }
    }
}

/// Counts the bytes that pass through.
pub struct Counted<W> {
    pub inner: W,
    pub count: u64,
}

impl<W: Write> Write for Counted<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.count += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

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
    // Named with the writer's pid, so one left by a killed writer can be told and swept.
    let prefix = format!("{TEMP_PREFIX}{}-", std::process::id());
    let mut tmp = tempfile::Builder::new().prefix(&prefix).suffix(".tmp").tempfile_in(dir)?;
    fill(tmp.as_file_mut())?;
    tmp.as_file_mut().flush()?;
    tmp.as_file().sync_all()?;
    if !still_current() {
        return Ok(());
    }
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// How [`write_private_atomic`]'s temp files start, before the writer's pid.
pub const TEMP_PREFIX: &str = ".lokust-";

/// Whether process `pid` exists (signal 0 only asks).
pub fn process_alive(pid: i32) -> bool {
    // SAFETY: kill with signal 0 sends nothing; it only checks that the process exists.
    pid > 0 && unsafe { libc::kill(pid, 0) } == 0
}

/// Removes from `dir` the temp files of [`write_private_atomic`] whose writer is gone (a
/// SIGKILL leaves them); how many.
pub fn sweep_dead_temps(dir: &Path) -> usize {
    let mut swept = 0;
    for e in fs::read_dir(dir).into_iter().flatten().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(rest) = name.strip_prefix(TEMP_PREFIX).filter(|_| name.ends_with(".tmp")) else { continue };
        let Some(pid) = rest.split('-').next().and_then(|p| p.parse::<i32>().ok()) else { continue };
        if !process_alive(pid)
            && e.file_type().is_ok_and(|t| t.is_file())
            && fs::remove_file(e.path()).is_ok()
        {
            swept += 1;
        }
    }
    swept
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

/// An exclusive advisory lock on `path` (made 0600 when missing), held until the file is
/// dropped: lokust's own processes take turns.
pub fn lock_file(path: &Path) -> io::Result<File> {
    lock_with(path, libc::LOCK_EX)
}

/// [`lock_file`] when no one holds it; an error (`WouldBlock`) at once when someone does.
pub fn try_lock_file(path: &Path) -> io::Result<File> {
    lock_with(path, libc::LOCK_EX | libc::LOCK_NB)
}

fn lock_with(path: &Path, how: libc::c_int) -> io::Result<File> {
    use std::os::unix::fs::MetadataExt;
    // A holder may delete the lock file when it is done: a lock taken on the file it
    // deleted (or on one it replaced) is no one's turn, so it is taken again on the file
    // the path names now.
    for _ in 0..1000 {
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(path)?;
        flock(&file, how)?;
        let held = file.metadata()?;
        match fs::symlink_metadata(path) {
            Ok(now) if now.dev() == held.dev() && now.ino() == held.ino() => return Ok(file),
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::other(format!("{} keeps being replaced; no lock taken", path.display())))
}

/// An exclusive advisory lock on the folder `dir` itself, held until the file is dropped;
/// `WouldBlock` at once when another process holds it. A folder cannot be deleted from
/// under its holder as a lock file can, and it is the very thing the holder changes.
pub fn try_lock_dir(dir: &Path) -> io::Result<File> {
    let file = OpenOptions::new().read(true).custom_flags(libc::O_DIRECTORY).open(dir)?;
    flock(&file, libc::LOCK_EX | libc::LOCK_NB)?;
    Ok(file)
}

fn flock(file: &File, how: libc::c_int) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    // SAFETY: flock only reads the descriptor, which `file` keeps open.
    if unsafe { libc::flock(file.as_raw_fd(), how) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Whether two open regular files hold the same bytes, read in pieces (a transcript may
/// be large); a non-file or another length is not the same.
pub fn same_bytes(a: &mut File, b: &mut File) -> io::Result<bool> {
    use std::io::Read;
    let (ma, mb) = (a.metadata()?, b.metadata()?);
    if !ma.is_file() || !mb.is_file() || ma.len() != mb.len() {
        return Ok(false);
    }
    let (mut x, mut y) = (vec![0u8; 64 * 1024], vec![0u8; 64 * 1024]);
    loop {
        let n = a.read(&mut x)?;
        if n == 0 {
            return Ok(true);
        }
        b.read_exact(&mut y[..n])?;
        if x[..n] != y[..n] {
            return Ok(false);
        }
    }
}

/// A settings file an agent reads, following links as the agent does, but never blocking
/// on a FIFO or a device and never larger than `max` bytes; `None` when it is not a
/// regular file that can be read.
pub fn read_regular(path: &Path, max: u64) -> Option<Vec<u8>> {
    use std::io::Read;
    let file = OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(path).ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut buf = Vec::new();
    file.take(max + 1).read_to_end(&mut buf).ok()?;
    (buf.len() as u64 <= max).then_some(buf)
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_lock_file_deleted_by_its_holder_is_taken_again_where_the_path_names_it() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("move.lock");
        for _ in 0..20 {
            let held = lock_file(&path).unwrap();
            let waiter = {
                let path = path.clone();
                std::thread::spawn(move || {
                    let got = lock_file(&path).unwrap();
                    let named = fs::metadata(&path).map(|m| m.ino()).ok();
                    let ino = got.metadata().unwrap().ino();
                    drop(got);
                    (named, ino)
                })
            };
            std::thread::sleep(std::time::Duration::from_millis(5));
            fs::remove_file(&path).unwrap();
            drop(held);
            let (named, ino) = waiter.join().unwrap();
            assert_eq!(named, Some(ino), "the waiter holds a lock on a file no one else can find");
        }
    }

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
