//! The bundle's data as a stream of checked tar entries: base64 → gunzip → untar, with
//! every hostile shape refused (paths outside the root, links, devices, FIFOs, a stream
//! that inflates past its budget, bad base64, gzip or tar) before a visitor sees it.

use std::ffi::OsString;
use std::io::{self, Read};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use anyhow::anyhow;

pub use super::codec::UnpackError;
use super::codec::{self, Limit, is_classified};
use super::scan::SyntaxError;

/// A checked entry: its path below the root, as components.
pub struct Entry<'a> {
    /// Path below the slot root; empty for the root itself.
    pub rel: PathBuf,
    pub is_dir: bool,
    pub size: u64,
    pub mtime: u64,
    pub reader: &'a mut dyn Read,
}

/// What `unpack` learned.
#[derive(Debug, Default)]
pub struct Unpacked {
    /// The top-level name in the tar (the slot on the writing machine).
    pub root: String,
    /// Bytes of the tar stream.
    pub tar_bytes: u64,
}

/// Limits on the decompressed stream.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    /// `bundle.uncompressed_bytes`, when known before the data.
    pub declared: Option<u64>,
    /// `--max-size`.
    pub ceiling: u64,
}

impl Budget {
    /// The declared size is a budget with a margin for another writer's tar overhead.
    fn limit(&self) -> (u64, String) {
        match self.declared {
            Some(d) => {
                let allowed = d.saturating_add(d / 4).saturating_add(1 << 20);
                if allowed < self.ceiling {
                    return (
                        allowed,
                        format!(
                            "the bundle inflates past its declared uncompressed_bytes ({d}); refusing a decompression bomb"
                        ),
                    );
                }
                (
                    self.ceiling,
                    format!("the bundle inflates past the --max-size ceiling of {} bytes", self.ceiling),
                )
            }
            None => (
                self.ceiling,
                format!("the bundle inflates past the --max-size ceiling of {} bytes", self.ceiling),
            ),
        }
    }
}

/// Decodes `data` (the base64 text) and hands every entry to `visit`, in order. Any
/// problem is an error naming the layer; `visit` errors pass through.
pub fn unpack(
    data: &mut dyn Read,
    budget: Budget,
    visit: &mut dyn FnMut(Entry<'_>) -> anyhow::Result<()>,
) -> anyhow::Result<Unpacked> {
    let (limit, why) = budget.limit();
    let mut counted = codec::reader(data, limit, why);
    let mut out = Unpacked::default();
    let result = entries(&mut counted, &mut out, visit).and_then(|()| {
        // Past the tar's end only padding may follow; reading to the end also checks
        // the gzip trailer and that the base64 text ends with the gzip stream.
        io::copy(&mut counted, &mut io::sink()).map(|_| ()).map_err(anyhow::Error::from)
    });
    out.tar_bytes = counted.count();
    result.map(|()| out).map_err(reason)
}

/// Takes the reason back out of the io::Error layers, so the message is the reason's own.
pub fn reason(e: anyhow::Error) -> anyhow::Error {
    for cause in e.chain() {
        let inner = cause.downcast_ref::<io::Error>().and_then(|i| i.get_ref());
        if cause.is::<crate::interrupt::Interrupted>()
            || inner.is_some_and(|i| i.is::<crate::interrupt::Interrupted>())
        {
            return anyhow!(crate::interrupt::Interrupted);
        }
        if let Some(u) = cause
            .downcast_ref::<UnpackError>()
            .or_else(|| inner.and_then(|i| i.downcast_ref::<UnpackError>()))
        {
            return anyhow!(u.clone());
        }
        if let Some(s) = cause
            .downcast_ref::<SyntaxError>()
            .or_else(|| inner.and_then(|i| i.downcast_ref::<SyntaxError>()))
        {
            return anyhow!(UnpackError::Json(format!("not valid JSON: {s}")));
        }
    }
    e
}

fn refuse(msg: String) -> anyhow::Error {
    anyhow!(UnpackError::Refused(msg))
}

fn entries<R: Read>(
    stream: &mut Limit<R>,
    out: &mut Unpacked,
    visit: &mut dyn FnMut(Entry<'_>) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let mut archive = tar::Archive::new(&mut *stream);
    let mut seen = std::collections::HashSet::new();
    let mut root: Option<OsString> = None;
    let iter = archive.entries().map_err(|e| anyhow!("the bundle is not a valid tar: {e}"))?;
    for entry in iter {
        let mut entry = entry.map_err(tar_error)?;
        let header = entry.header();
        let kind = header.entry_type();
        let raw_path = entry.path_bytes().into_owned();
        let shown = String::from_utf8_lossy(&raw_path).into_owned();
        let shown = crate::sanitize::for_terminal(&shown).into_owned();
        let is_dir = match kind {
            tar::EntryType::Regular => false,
            tar::EntryType::Directory => true,
            tar::EntryType::XGlobalHeader => continue,
            tar::EntryType::Symlink => {
                return Err(refuse(format!("the bundle holds a symbolic link ({shown})")));
            }
            tar::EntryType::Link => return Err(refuse(format!("the bundle holds a hard link ({shown})"))),
            tar::EntryType::Char | tar::EntryType::Block => {
                return Err(refuse(format!("the bundle holds a device file ({shown})")));
            }
            tar::EntryType::Fifo => return Err(refuse(format!("the bundle holds a FIFO ({shown})"))),
            other => {
                return Err(refuse(format!(
                    "the bundle holds an entry of unsupported type {:?} ({shown})",
                    other.as_byte() as char
                )));
            }
        };
        let path = Path::new(std::ffi::OsStr::from_bytes(&raw_path));
        let mut parts = Vec::new();
        for c in path.components() {
            match c {
                Component::Normal(p) => parts.push(p.to_os_string()),
                Component::CurDir if parts.is_empty() => {}
                _ => return Err(refuse(format!("the bundle holds an entry outside its root ({shown})"))),
            }
        }
        if path.is_absolute() || raw_path.contains(&0) {
            return Err(refuse(format!("the bundle holds an entry outside its root ({shown})")));
        }
        let Some(first) = parts.first().cloned() else {
            return Err(refuse(format!("the bundle holds an entry outside its root ({shown})")));
        };
        match &root {
            None => {
                out.root = first.to_string_lossy().into_owned();
                root = Some(first);
            }
            Some(r) if *r != first => {
                return Err(refuse(format!(
                    "the bundle holds an entry outside its root {} ({shown})",
                    crate::sanitize::for_terminal(&out.root)
                )));
            }
            Some(_) => {}
        }
        let rel: PathBuf = parts[1..].iter().collect();
        if rel.as_os_str().is_empty() && !is_dir {
            return Err(refuse(format!("the bundle's root {shown} is not a directory")));
        }
        if !seen.insert(rel.clone()) && !is_dir {
            return Err(refuse(format!("the bundle holds {shown} twice")));
        }
        let size = header.size().map_err(tar_error)?;
        let mtime = header.mtime().unwrap_or(0);
        if is_dir && size != 0 {
            return Err(refuse(format!("the bundle's directory {shown} has content")));
        }
        visit(Entry { rel, is_dir, size, mtime, reader: &mut entry })?;
        // Whatever the visitor left unread is read here, so sizes are always checked.
        io::copy(&mut entry, &mut io::sink()).map_err(tar_error)?;
    }
    if root.is_none() {
        return Err(refuse("the bundle is empty".into()));
    }
    out.tar_bytes = stream.count();
    Ok(())
}

fn tar_error(e: io::Error) -> anyhow::Error {
    if is_classified(&e) {
        return anyhow::Error::from(e);
    }
    anyhow!(UnpackError::Tar(e.to_string()))
}
