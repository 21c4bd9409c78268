//! The bundle's data as a stream of checked tar entries: base64 → gunzip → untar, with
//! every hostile shape refused (paths outside the root, links, devices, FIFOs, a stream
//! that inflates past its budget, bad base64, gzip or tar) before a visitor sees it.

use std::ffi::OsString;
use std::io::{self, BufRead, Read};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use anyhow::anyhow;

use super::interrupted;
use super::scan::SyntaxError;

/// Which layer of the bundle failed, for the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layer {
    Json,
    Base64,
    Gzip,
    Size,
}

#[derive(Debug)]
struct Tagged {
    layer: Layer,
    message: String,
}

impl std::fmt::Display for Tagged {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Tagged {}

fn tag(layer: Layer, e: io::Error) -> io::Error {
    if e.get_ref().is_some_and(|i| i.is::<Tagged>() || i.is::<SyntaxError>() || i.is::<super::Interrupted>())
    {
        return e;
    }
    io::Error::new(io::ErrorKind::InvalidData, Tagged { layer, message: e.to_string() })
}

/// Wraps a reader so its errors are labelled with `layer`.
struct Tag<R> {
    inner: R,
    layer: Layer,
}

impl<R: Read> Read for Tag<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.inner.read(buf).map_err(|e| tag(self.layer, e))
    }
}

/// Counts decompressed bytes and refuses the stream past `limit`.
struct Limit<R> {
    inner: R,
    count: u64,
    limit: u64,
    why: String,
}

impl<R: Read> Read for Limit<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if interrupted() {
            return Err(io::Error::other(super::Interrupted));
        }
        let n = self.inner.read(buf)?;
        self.count += n as u64;
        if self.count > self.limit {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                Tagged { layer: Layer::Size, message: self.why.clone() },
            ));
        }
        Ok(n)
    }
}

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
    let b64 = Tag {
        inner: base64::read::DecoderReader::new(
            Tag { inner: data, layer: Layer::Json },
            &base64::engine::general_purpose::STANDARD,
        ),
        layer: Layer::Base64,
    };
    let gz = Tag {
        inner: flate2::bufread::GzDecoder::new(io::BufReader::with_capacity(64 * 1024, b64)),
        layer: Layer::Gzip,
    };
    let (limit, why) = budget.limit();
    let mut counted = Limit { inner: gz, count: 0, limit, why };
    let mut out = Unpacked::default();
    let result = entries(&mut counted, &mut out, visit).and_then(|()| {
        // Past the tar's end only padding may follow.
        io::copy(&mut counted, &mut io::sink()).map(|_| ()).map_err(anyhow::Error::from)
    });
    out.tar_bytes = counted.count;
    let result = result.and_then(|()| {
        // Then the gzip stream and the base64 text must end together.
        let mut b64 = counted.inner.inner.into_inner();
        if !b64.fill_buf().map_err(|e| anyhow::Error::from(tag(Layer::Base64, e)))?.is_empty() {
            return Err(anyhow!(Tagged {
                layer: Layer::Gzip,
                message: "data follows the end of the gzip stream".into()
            }));
        }
        Ok(())
    });
    result.map(|()| out).map_err(classify)
}

/// Turns a low-level error into the message the user sees.
fn classify(e: anyhow::Error) -> anyhow::Error {
    for cause in e.chain() {
        let io = cause.downcast_ref::<io::Error>();
        let inner = io.and_then(|i| i.get_ref());
        if inner.is_some_and(|i| i.is::<super::Interrupted>()) {
            return anyhow!(super::Interrupted);
        }
        if let Some(t) =
            cause.downcast_ref::<Tagged>().or_else(|| inner.and_then(|i| i.downcast_ref::<Tagged>()))
        {
            return match t.layer {
                Layer::Base64 => anyhow!("bundle.data is not valid base64: {}", t.message),
                Layer::Gzip => anyhow!("the bundle is not valid gzip: {}", t.message),
                Layer::Size => anyhow!("{}", t.message),
                Layer::Json => anyhow!("{}", t.message),
            };
        }
        if let Some(s) = cause
            .downcast_ref::<SyntaxError>()
            .or_else(|| inner.and_then(|i| i.downcast_ref::<SyntaxError>()))
        {
            return anyhow!("not valid JSON: {s}");
        }
        if cause.downcast_ref::<super::Interrupted>().is_some() {
            return anyhow!(super::Interrupted);
        }
        if cause.downcast_ref::<Refused>().is_some() {
            return e;
        }
    }
    e
}

/// A hostile or malformed entry.
#[derive(Debug)]
pub struct Refused(pub String);

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Refused {}

fn refuse(msg: String) -> anyhow::Error {
    anyhow!(Refused(msg))
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
    out.tar_bytes = stream.count;
    Ok(())
}

fn tar_error(e: io::Error) -> anyhow::Error {
    if e.get_ref().is_some_and(|i| i.is::<Tagged>() || i.is::<SyntaxError>() || i.is::<super::Interrupted>())
    {
        return anyhow::Error::from(e);
    }
    anyhow!("the bundle is not a valid tar: {e}")
}
