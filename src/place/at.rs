//! The writes themselves, through folder descriptors: every folder below a root is opened
//! with `O_NOFOLLOW`, so a link planted on the way stops the write instead of sending it
//! elsewhere. A placement is staged whole under a temp name first; only then is the
//! receiver's copy set aside (with `--force`), and the staged one renamed in with
//! no-replace. When that rename fails, the receiver's copy is put back.

use std::ffi::OsStr;
use std::fs;
use std::io::{self, Write};
use std::os::fd::OwnedFd;
use std::path::{Component, Path, PathBuf};
use std::time::SystemTime;

use anyhow::{Context, bail};
use rustix::fs::{AtFlags, Mode, OFlags, RenameFlags};
use rustix::io::Errno;

use super::{Content, Entry, Placement, Step};

/// What became of one placement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placed {
    Written,
    /// The receiver had these bytes already.
    Same,
    /// The receiver has something else there: kept as it is.
    Kept,
}

const DIR: OFlags = OFlags::DIRECTORY.union(OFlags::RDONLY).union(OFlags::NOFOLLOW).union(OFlags::CLOEXEC);

/// Writes one placement; the receiver's copies it replaces are added to `backups`.
pub(super) fn place(p: &Placement, now: SystemTime, backups: &mut Vec<PathBuf>) -> anyhow::Result<Placed> {
    match &p.step {
        Step::Same => return Ok(Placed::Same),
        Step::Keep(_) => return Ok(Placed::Kept),
        Step::Write | Step::Replace(_) => {}
    }
    let at = p.path();
    let parent_rel = p.rel.parent().unwrap_or(Path::new(""));
    let name = p.rel.file_name().context("a placement without a name")?;
    let dir = open_below_as(&p.root, parent_rel, p.kind.folder_mode())?;
    if let Content::Edit(edit) = &p.content {
        // A link swapped in at the edited file's name is not written through.
        if rustix::fs::statat(&dir, name, AtFlags::SYMLINK_NOFOLLOW).is_ok_and(|st| {
            rustix::fs::FileType::from_raw_mode(st.st_mode) != rustix::fs::FileType::RegularFile
        }) {
            bail!("{} is not a regular file; left as it is", at.display());
        }
        edit.apply(&at)?;
        return Ok(Placed::Written);
    }
    if let Content::Staged(from) = &p.content {
        return place_staged(p, &dir, name, from, now, backups);
    }
    let staged = stage(&dir, &p.root.join(parent_rel), &p.content)
        .with_context(|| format!("could not write {}", at.display()))?;
    let aside = set_aside_all(p, now).inspect_err(|_| staged.discard(&dir))?;
    let is_dir = matches!(p.content, Content::Folder(_));
    match rename_no_replace(&dir, &staged.name, name, is_dir) {
        Ok(true) => {
            backups.extend(aside.into_iter().map(|a| a.backup));
            Ok(Placed::Written)
        }
        outcome => {
            put_back(&aside);
            staged.discard(&dir);
            outcome.with_context(|| format!("could not place {}", at.display()))?;
            // Something appeared there meanwhile: the same bytes, or the receiver's, kept.
            let same =
                matches!(&p.content, Content::File(e) if read_at(&dir, name).is_ok_and(|b| b == e.data));
            Ok(if same { Placed::Same } else { Placed::Kept })
        }
    }
}

/// Moves lokust's own staged file or folder `from` in as `name` of `dir`, setting the
/// receiver's copies aside first when the step says so (put back when the move fails). A
/// file is first brought beside its place (copied, when the store is on another disk), so
/// that the receiver's copy is set aside only for the moment of the swap.
fn place_staged(
    p: &Placement,
    dir: &OwnedFd,
    name: &OsStr,
    from: &Path,
    now: SystemTime,
    backups: &mut Vec<PathBuf>,
) -> anyhow::Result<Placed> {
    let folder = p.root.join(p.rel.parent().unwrap_or(Path::new("")));
    let is_dir = fs::symlink_metadata(from).is_ok_and(|m| m.is_dir());
    let near = (!is_dir)
        .then(|| bring_beside(dir, &folder, from))
        .transpose()
        .with_context(|| format!("could not write {}", p.path().display()))?;
    let aside = set_aside_all(p, now).inspect_err(|_| {
        if let Some(near) = &near {
            near.discard(dir);
        }
    })?;
    let moved = match &near {
        Some(near) => rename_no_replace(dir, &near.name, name, false)
            .map_err(|e| e.raw_os_error().map_or(Errno::IO, Errno::from_raw_os_error)),
        None => move_in(dir, name, from),
    };
    match moved {
        Ok(true) => {
            backups.extend(aside.into_iter().map(|a| a.backup));
            Ok(Placed::Written)
        }
        outcome => {
            put_back(&aside);
            let same = near.as_ref().map_or(from, |n| n.path.as_path());
            let same = same_bytes(dir, name, same).unwrap_or(false);
            if let Some(near) = &near {
                near.discard(dir);
            }
            outcome
                .map_err(io::Error::from)
                .with_context(|| format!("could not place {}", p.path().display()))?;
            // Something appeared there meanwhile: the same bytes, or the receiver's, kept.
            Ok(if same { Placed::Same } else { Placed::Kept })
        }
    }
}

/// Lokust's staged file `from` under a temp name in `dir` (the folder `folder`): renamed
/// there, or copied when it is on another disk.
fn bring_beside(dir: &OwnedFd, folder: &Path, from: &Path) -> io::Result<Staged> {
    let name = temp_name();
    let staged = Staged { path: folder.join(&name), name };
    match rustix::fs::renameat(rustix::fs::CWD, from, dir, &staged.name) {
        Ok(()) => Ok(staged),
        Err(Errno::XDEV) => match write_copy(dir, &staged.name, from, 0o600) {
            Ok(()) => Ok(staged),
            Err(e) => {
                staged.discard(dir);
                Err(e)
            }
        },
        Err(e) => Err(e.into()),
    }
}

/// Whether the regular file `name` of `dir` (no link followed) holds the bytes of `from`.
fn same_bytes(dir: &OwnedFd, name: &OsStr, from: &Path) -> io::Result<bool> {
    let fd =
        rustix::fs::openat(dir, name, OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC, Mode::empty())?;
    crate::fsutil::same_bytes(&mut fs::File::from(fd), &mut fs::File::open(from)?)
}

/// Sets aside the receiver's copies the step replaces, all or none: when one cannot be,
/// those set aside already are put back.
fn set_aside_all(p: &Placement, now: SystemTime) -> anyhow::Result<Vec<Aside>> {
    let mut aside = Vec::new();
    if let Step::Replace(theirs) = &p.step {
        for path in theirs {
            match set_aside(&p.root, path, now) {
                Ok(moved) => aside.push(moved),
                Err(e) => {
                    put_back(&aside);
                    return Err(e);
                }
            }
        }
    }
    Ok(aside)
}

/// A placement made whole under a temp name in its folder.
struct Staged {
    name: String,
    /// Its path, for removing a staged folder.
    path: PathBuf,
}

impl Staged {
    fn discard(&self, dir: &OwnedFd) {
        if rustix::fs::unlinkat(dir, &self.name, AtFlags::empty()).is_err() {
            let _ = fs::remove_dir_all(&self.path);
        }
    }
}

/// A temp file's name, with the writer's pid: one a killed writer left is swept
/// ([`crate::fsutil::sweep_dead_temps`]).
fn temp_name() -> String {
    format!("{}{}-{}.tmp", crate::fsutil::TEMP_PREFIX, std::process::id(), uuid::Uuid::new_v4().simple())
}

fn stage(dir: &OwnedFd, dir_path: &Path, content: &Content) -> io::Result<Staged> {
    let name = temp_name();
    let staged = Staged { path: dir_path.join(&name), name };
    let made = match content {
        Content::File(entry) => write_file(dir, &staged.name, entry),
        Content::Folder(entries) => write_folder(dir, &staged.name, entries),
        Content::Copy { from, mode } => write_copy(dir, &staged.name, from, *mode),
        Content::Link(to) => rustix::fs::symlinkat(to, dir, &staged.name).map_err(io::Error::from),
        Content::Edit(_) | Content::Staged(_) => Ok(()),
    };
    if let Err(e) = made {
        staged.discard(dir);
        return Err(e);
    }
    Ok(staged)
}

/// A new file `name` in `dir`, mode 0600, synced, dated as the entry says.
fn write_file(dir: &OwnedFd, name: &str, entry: &Entry) -> io::Result<()> {
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let mut f = fs::File::from(rustix::fs::openat(dir, name, flags, Mode::from_raw_mode(0o600))?);
    f.write_all(&entry.data)?;
    f.sync_all()?;
    if let Some(t) = entry.mtime {
        f.set_modified(t)?;
    }
    Ok(())
}

/// A new file `name` in `dir` with the bytes of lokust's own staged `from`, then `mode`.
fn write_copy(dir: &OwnedFd, name: &str, from: &Path, mode: u32) -> io::Result<()> {
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let fd = rustix::fs::openat(dir, name, flags, Mode::from_raw_mode(0o600))?;
    let mut f = fs::File::from(fd);
    let mut source = fs::File::open(from)?;
    io::copy(&mut source, &mut f)?;
    f.sync_all()?;
    // The staged file's time is the one it was given (a conversation's last write).
    f.set_modified(source.metadata()?.modified()?)?;
    rustix::fs::fchmod(&f, Mode::from_raw_mode(mode & 0o777))?;
    Ok(())
}

/// A new folder `name` in `dir`, mode 0700, holding `entries`.
fn write_folder(dir: &OwnedFd, name: &str, entries: &[Entry]) -> io::Result<()> {
    rustix::fs::mkdirat(dir, name, Mode::from_raw_mode(0o700))?;
    let folder = rustix::fs::openat(dir, name, DIR, Mode::empty())?;
    for e in entries {
        let (sub, file) = e.rel.rsplit_once('/').unwrap_or(("", &e.rel));
        let mut at = folder.try_clone()?;
        for part in sub.split('/').filter(|s| !s.is_empty()) {
            at = open_or_make_dir(&at, OsStr::new(part))?;
        }
        write_file(&at, file, e)?;
    }
    Ok(())
}

/// The folder `root/rel`, created 0700 where missing, opened with no link followed below
/// `root` (the root itself is the receiver's own choice, and may be a link).
pub fn open_below(root: &Path, rel: &Path) -> anyhow::Result<OwnedFd> {
    open_below_as(root, rel, 0o700)
}

fn open_below_as(root: &Path, rel: &Path, mode: u32) -> anyhow::Result<OwnedFd> {
    crate::fsutil::create_private_dir(root)
        .with_context(|| format!("could not create {}", root.display()))?;
    walk_as(root, rel, Some(mode))
}

/// `root/rel` opened folder by folder with no link followed, made where missing when
/// `create`.
pub(super) fn walk(root: &Path, rel: &Path, create: bool) -> anyhow::Result<OwnedFd> {
    walk_as(root, rel, create.then_some(0o700))
}

/// [`walk`], making missing folders with `mode` (before umask) when given.
fn walk_as(root: &Path, rel: &Path, create: Option<u32>) -> anyhow::Result<OwnedFd> {
    let mut fd = rustix::fs::open(root, OFlags::DIRECTORY | OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty())
        .map_err(io::Error::from)
        .with_context(|| format!("could not open {}", root.display()))?;
    let mut at = root.to_path_buf();
    for part in rel.components() {
        let Component::Normal(name) = part else {
            bail!("{} is not a plain path below {}", rel.display(), root.display())
        };
        at.push(name);
        let opened = match create {
            Some(mode) => open_or_make_dir_as(&fd, name, mode),
            None => rustix::fs::openat(&fd, name, DIR, Mode::empty()),
        };
        fd = opened.map_err(|e| match e {
            Errno::LOOP | Errno::NOTDIR => {
                anyhow::anyhow!("{} is a link or not a folder; nothing is written through it", at.display())
            }
            e => anyhow::Error::from(io::Error::from(e)).context(format!("could not open {}", at.display())),
        })?;
    }
    Ok(fd)
}

fn open_or_make_dir(parent: &OwnedFd, name: &OsStr) -> Result<OwnedFd, Errno> {
    open_or_make_dir_as(parent, name, 0o700)
}

fn open_or_make_dir_as(parent: &OwnedFd, name: &OsStr, mode: u32) -> Result<OwnedFd, Errno> {
    match rustix::fs::openat(parent, name, DIR, Mode::empty()) {
        Err(Errno::NOENT) => match rustix::fs::mkdirat(parent, name, Mode::from_raw_mode(mode)) {
            Ok(()) | Err(Errno::EXIST) => rustix::fs::openat(parent, name, DIR, Mode::empty()),
            Err(e) => Err(e),
        },
        found => found,
    }
}

/// Renames `from` to `to` in `dir` unless `to` exists: false then.
fn rename_no_replace(dir: &OwnedFd, from: &str, to: &OsStr, is_dir: bool) -> io::Result<bool> {
    match rustix::fs::renameat_with(dir, from, dir, to, RenameFlags::NOREPLACE) {
        Ok(()) => Ok(true),
        Err(Errno::EXIST | Errno::NOTEMPTY) => Ok(false),
        // A file system without no-replace renames: a hard link fails on an existing name.
        Err(Errno::INVAL | Errno::NOSYS | Errno::OPNOTSUPP) if !is_dir => {
            match rustix::fs::linkat(dir, from, dir, to, AtFlags::empty()) {
                Ok(()) => {
                    let _ = rustix::fs::unlinkat(dir, from, AtFlags::empty());
                    Ok(true)
                }
                Err(Errno::EXIST) => Ok(false),
                Err(e) => Err(e.into()),
            }
        }
        Err(e) => Err(e.into()),
    }
}

fn read_at(dir: &OwnedFd, name: &OsStr) -> io::Result<Vec<u8>> {
    let fd =
        rustix::fs::openat(dir, name, OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC, Mode::empty())?;
    let mut buf = Vec::new();
    io::Read::read_to_end(&mut fs::File::from(fd), &mut buf)?;
    Ok(buf)
}

/// A receiver's file set aside, and where it went.
struct Aside {
    dir: OwnedFd,
    name: std::ffi::OsString,
    backup_name: std::ffi::OsString,
    backup: PathBuf,
}

/// Sets the receiver's `path` (below `root`, reached with no link followed) aside beside
/// where it was, under a name no agent reads (`<name>.lokust-backup-<time>`), never over
/// an earlier backup.
fn set_aside(root: &Path, path: &Path, now: SystemTime) -> anyhow::Result<Aside> {
    let rel = path
        .strip_prefix(root)
        .ok()
        .filter(|r| r.components().all(|c| matches!(c, Component::Normal(_))))
        .with_context(|| format!("{} is not below {}; not set aside", path.display(), root.display()))?;
    let name = rel.file_name().context("nothing to set aside")?.to_os_string();
    let dir = walk(root, rel.parent().unwrap_or(Path::new("")), false)?;
    let stamp = humantime::format_rfc3339_seconds(now).to_string().replace([':', '-'], "");
    let backup_name = rename_beside(&dir, &name, &format!(".lokust-backup-{stamp}"))
        .with_context(|| format!("could not back up {}", path.display()))?;
    Ok(Aside { backup: path.with_file_name(&backup_name), dir, name, backup_name })
}

/// Renames `name` in `dir` to `<name><suffix>`, or `<name><suffix>-2`, `-3`… when that is
/// taken: never over an earlier copy. Returns the name it took.
fn rename_beside(dir: &OwnedFd, name: &OsStr, suffix: &str) -> anyhow::Result<std::ffi::OsString> {
    for n in 1..1000 {
        let mut to = name.to_os_string();
        to.push(suffix);
        if n > 1 {
            to.push(format!("-{n}"));
        }
        match rustix::fs::renameat_with(dir, name, dir, &to, RenameFlags::NOREPLACE) {
            Ok(()) => return Ok(to),
            Err(Errno::EXIST | Errno::NOTEMPTY) => continue,
            Err(e) => return Err(io::Error::from(e).into()),
        }
    }
    bail!("too many copies of it already")
}

/// Puts set-aside copies back where they were, the last first.
fn put_back(aside: &[Aside]) {
    for a in aside.iter().rev() {
        let _ = rustix::fs::renameat_with(&a.dir, &a.backup_name, &a.dir, &a.name, RenameFlags::NOREPLACE);
    }
}

/// What is at `root/rel` now, reached with no link followed: `None` when it or a folder on
/// the way is absent. A link or a non-folder on the way is an error.
pub(super) fn existing(root: &Path, rel: &Path) -> anyhow::Result<Option<rustix::fs::FileType>> {
    let Some(name) = rel.file_name() else { return Ok(Some(rustix::fs::FileType::Directory)) };
    if fs::symlink_metadata(root).is_err() {
        return Ok(None);
    }
    let mut fd = rustix::fs::open(root, OFlags::DIRECTORY | OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty())
        .map_err(io::Error::from)
        .with_context(|| format!("could not open {}", root.display()))?;
    let mut at = root.to_path_buf();
    for part in rel.parent().unwrap_or(Path::new("")).components() {
        at.push(part);
        fd = match rustix::fs::openat(&fd, part.as_os_str(), DIR, Mode::empty()) {
            Ok(fd) => fd,
            Err(Errno::NOENT) => return Ok(None),
            Err(Errno::LOOP | Errno::NOTDIR) => {
                bail!("{} is a link or not a folder; nothing is written through it", at.display())
            }
            Err(e) => {
                return Err(io::Error::from(e)).with_context(|| format!("could not open {}", at.display()));
            }
        };
    }
    match rustix::fs::statat(&fd, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) => Ok(Some(rustix::fs::FileType::from_raw_mode(st.st_mode))),
        Err(Errno::NOENT) => Ok(None),
        Err(e) => {
            Err(io::Error::from(e)).with_context(|| format!("could not read {}", root.join(rel).display()))
        }
    }
}

/// The bytes of the regular file at `root/rel`, reached with no link followed.
pub(super) fn read_below(root: &Path, rel: &Path) -> Option<Vec<u8>> {
    let dir = walk(root, rel.parent()?, false).ok()?;
    read_at(&dir, rel.file_name()?).ok()
}

/// Renames lokust's own staged file `from` to `root/rel`, the folders on the way opened
/// (made 0700 where missing) with no link followed below `root`: false when something is
/// already there, which is left as it is.
pub fn rename_in(root: &Path, rel: &Path, from: &Path) -> anyhow::Result<bool> {
    let name = rel.file_name().context("nothing to place")?;
    let dir = open_below(root, rel.parent().unwrap_or(Path::new("")))?;
    move_in(&dir, name, from)
        .map_err(io::Error::from)
        .with_context(|| format!("could not place {}", root.join(rel).display()))
}

/// Moves `from` (any path) to `name` in `dir` unless something is there: false then.
fn move_in(dir: &OwnedFd, name: &OsStr, from: &Path) -> Result<bool, Errno> {
    match rustix::fs::renameat_with(rustix::fs::CWD, from, dir, name, RenameFlags::NOREPLACE) {
        Ok(()) => Ok(true),
        Err(Errno::EXIST | Errno::NOTEMPTY) => Ok(false),
        Err(Errno::INVAL | Errno::NOSYS | Errno::OPNOTSUPP) => {
            match rustix::fs::linkat(rustix::fs::CWD, from, dir, name, AtFlags::empty()) {
                Ok(()) => {
                    let _ = fs::remove_file(from);
                    Ok(true)
                }
                Err(Errno::EXIST) => Ok(false),
                Err(e) => Err(e),
            }
        }
        // The folder is on another disk (the user's link to it): a file is copied there
        // under a temp name, then renamed in with no-replace.
        Err(Errno::XDEV) if fs::symlink_metadata(from).is_ok_and(|m| m.is_file()) => {
            let tmp = temp_name();
            let copied = write_copy(dir, &tmp, from, 0o600)
                .map_err(|e| e.raw_os_error().map_or(Errno::IO, Errno::from_raw_os_error))
                .and_then(|()| rename_no_replace(dir, &tmp, name, false).map_err(|_| Errno::IO));
            if !matches!(copied, Ok(true)) {
                let _ = rustix::fs::unlinkat(dir, &tmp, AtFlags::empty());
            }
            if matches!(copied, Ok(true)) {
                let _ = fs::remove_file(from);
            }
            copied
        }
        Err(e) => Err(e),
    }
}

/// Renames the receiver's `root/rel` to `<name><suffix>` beside it (`-2`, `-3`… after it
/// when that is taken: never over an earlier one), within its folder reached with no link
/// followed; returns the new path.
pub fn move_aside(root: &Path, rel: &Path, suffix: &str) -> anyhow::Result<PathBuf> {
    let name = rel.file_name().context("nothing to move aside")?;
    let dir = walk(root, rel.parent().unwrap_or(Path::new("")), false)?;
    let to = rename_beside(&dir, name, suffix)
        .with_context(|| format!("could not move {} aside", root.join(rel).display()))?;
    Ok(root.join(rel).with_file_name(to))
}

/// Refuses the folder `root/rel` unless it is absent (it will be made) or a folder
/// reached with no link followed below `root`.
pub fn check_folder(root: &Path, rel: &Path) -> anyhow::Result<()> {
    match existing(root, rel)? {
        Some(kind) if kind != rustix::fs::FileType::Directory => {
            bail!("{} is a link or not a folder; nothing is written through it", root.join(rel).display())
        }
        _ => Ok(()),
    }
}
