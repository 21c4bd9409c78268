//! The bundle's data as a stream of checked tar entries: base64 → gunzip → untar, with
//! every hostile shape refused (paths outside the root, links, devices, FIFOs, a stream
//! that inflates past its budget, bad base64, gzip or tar) before a visitor sees it.

use std::ffi::OsString;
use std::io::{self, BufRead, Read};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use anyhow::anyhow;

use super::scan::SyntaxError;

/// Which layer of the bundle failed, for the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layer {
    Json,
    Base64,
    Gzip,
}

/// Why a bundle's data was refused. Raised inside readers, it travels wrapped in an
/// `io::Error` through the gzip and tar layers; [`classify`] takes it back out.
#[derive(Debug, Clone, thiserror::Error)]
pub enum UnpackError {
    #[error("bundle.data is not valid base64: {0}")]
    Base64(String),
    #[error("the bundle is not valid gzip: {0}")]
    Gzip(String),
    /// The JSON string around the data (an escape where none may be, a cut file).
    #[error("{0}")]
    Json(String),
    /// The stream inflates past its declared size or the ceiling.
    #[error("{0}")]
    TooLarge(String),
    #[error("the bundle is not a valid tar: {0}")]
    Tar(String),
    /// A hostile or malformed entry: a link, a device, a path outside the root.
    #[error("{0}")]
    Refused(String),
}

/// Whether an io::Error already carries its reason (so an outer layer must not relabel it).
fn is_classified(e: &io::Error) -> bool {
    e.get_ref().is_some_and(|i| {
        i.is::<UnpackError>() || i.is::<SyntaxError>() || i.is::<crate::interrupt::Interrupted>()
    })
}

fn tag(layer: Layer, e: io::Error) -> io::Error {
    if is_classified(&e) {
        return e;
    }
    let message = e.to_string();
    let reason = match layer {
        Layer::Json => UnpackError::Json(message),
        Layer::Base64 => UnpackError::Base64(message),
        Layer::Gzip => UnpackError::Gzip(message),
    };
    io::Error::new(io::ErrorKind::InvalidData, reason)
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
        if crate::interrupt::interrupted() {
            return Err(io::Error::other(crate::interrupt::Interrupted));
        }
        let n = self.inner.read(buf)?;
        self.count += n as u64;
        if self.count > self.limit {
            return Err(io::Error::new(io::ErrorKind::InvalidData, UnpackError::TooLarge(self.why.clone())));
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
    let gz = Tag { inner: Gunzip::new(io::BufReader::with_capacity(64 * 1024, b64)), layer: Layer::Gzip };
    let (limit, why) = budget.limit();
    let mut counted = Limit { inner: gz, count: 0, limit, why };
    let mut out = Unpacked::default();
    let result = entries(&mut counted, &mut out, visit).and_then(|()| {
        // Past the tar's end only padding may follow; reading to the end also checks
        // the gzip trailer and that the base64 text ends with the gzip stream.
        io::copy(&mut counted, &mut io::sink()).map(|_| ()).map_err(anyhow::Error::from)
    });
    out.tar_bytes = counted.count;
    result.map(|()| out).map_err(classify)
}

/// gzip (RFC 1952, one member or several) over raw inflate, with the CRC computed by
/// crc32fast, whose SIMD path is several times faster than the inflater's own.
struct Gunzip<R> {
    r: R,
    inflate: flate2::Decompress,
    in_member: bool,
    members: u32,
    crc: crc32fast::Hasher,
    size: u32,
    done: bool,
}

fn gz_error(message: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message.to_string())
}

impl<R: BufRead> Gunzip<R> {
    fn new(r: R) -> Gunzip<R> {
        Gunzip {
            r,
            inflate: flate2::Decompress::new(false),
            in_member: false,
            members: 0,
            crc: crc32fast::Hasher::new(),
            size: 0,
            done: false,
        }
    }

    fn byte(&mut self) -> io::Result<u8> {
        let mut b = [0u8; 1];
        self.r.read_exact(&mut b).map_err(|e| eof_as(e, "the gzip header is cut short"))?;
        Ok(b[0])
    }

    /// Reads a member header; false at the end of the input.
    fn header(&mut self) -> io::Result<bool> {
        if self.r.fill_buf()?.is_empty() {
            if self.members == 0 {
                return Err(gz_error("the stream is empty"));
            }
            return Ok(false);
        }
        let first = self.r.fill_buf()?;
        let magic = first[0] == 0x1f && first.get(1).is_none_or(|&b| b == 0x8b);
        if !magic {
            return Err(gz_error(if self.members == 0 {
                "no gzip header"
            } else {
                "data follows the end of the gzip stream"
            }));
        }
        let mut h = [0u8; 10];
        self.r.read_exact(&mut h).map_err(|e| eof_as(e, "the gzip header is cut short"))?;
        if h[1] != 0x8b {
            return Err(gz_error("no gzip header"));
        }
        let flags = h[3];
        if h[2] != 8 || flags & 0xe0 != 0 {
            return Err(gz_error("unsupported gzip method or flags"));
        }
        if flags & 4 != 0 {
            let len = u16::from_le_bytes([self.byte()?, self.byte()?]);
            for _ in 0..len {
                self.byte()?;
            }
        }
        for bit in [8u8, 16] {
            if flags & bit != 0 {
                while self.byte()? != 0 {}
            }
        }
        if flags & 2 != 0 {
            self.byte()?;
            self.byte()?;
        }
        self.inflate.reset(false);
        self.crc = crc32fast::Hasher::new();
        self.size = 0;
        self.in_member = true;
        Ok(true)
    }

    fn trailer(&mut self) -> io::Result<()> {
        let mut t = [0u8; 8];
        self.r.read_exact(&mut t).map_err(|e| eof_as(e, "the gzip trailer is cut short"))?;
        let crc = std::mem::replace(&mut self.crc, crc32fast::Hasher::new()).finalize();
        if u32::from_le_bytes([t[0], t[1], t[2], t[3]]) != crc {
            return Err(gz_error("the CRC does not match: the data is corrupt"));
        }
        if u32::from_le_bytes([t[4], t[5], t[6], t[7]]) != self.size {
            return Err(gz_error("the length does not match: the data is corrupt"));
        }
        self.in_member = false;
        self.members += 1;
        Ok(())
    }
}

fn eof_as(e: io::Error, message: &str) -> io::Error {
    if e.kind() == io::ErrorKind::UnexpectedEof { gz_error(message) } else { e }
}

impl<R: BufRead> Read for Gunzip<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if out.is_empty() {
            return Ok(0);
        }
        loop {
            if self.done {
                return Ok(0);
            }
            if !self.in_member && !self.header()? {
                self.done = true;
                return Ok(0);
            }
            let input = self.r.fill_buf()?;
            let at_end = input.is_empty();
            let (in0, out0) = (self.inflate.total_in(), self.inflate.total_out());
            let status = self
                .inflate
                .decompress(input, out, flate2::FlushDecompress::None)
                .map_err(|e| gz_error(&format!("corrupt deflate data ({e})")))?;
            let consumed = (self.inflate.total_in() - in0) as usize;
            let produced = (self.inflate.total_out() - out0) as usize;
            self.r.consume(consumed);
            self.crc.update(&out[..produced]);
            self.size = self.size.wrapping_add(produced as u32);
            if status == flate2::Status::StreamEnd {
                self.trailer()?;
            } else if produced == 0 && (at_end || consumed == 0) {
                return Err(gz_error("unexpected end of file"));
            }
            if produced > 0 {
                return Ok(produced);
            }
        }
    }
}

/// Takes the reason back out of the io::Error layers, so the message is the reason's own.
fn classify(e: anyhow::Error) -> anyhow::Error {
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
    out.tar_bytes = stream.count;
    Ok(())
}

fn tar_error(e: io::Error) -> anyhow::Error {
    if is_classified(&e) {
        return anyhow::Error::from(e);
    }
    anyhow!(UnpackError::Tar(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn gz(data: &[u8], name: Option<&str>) -> Vec<u8> {
        let mut b = flate2::GzBuilder::new();
        if let Some(n) = name {
            b = b.filename(n).comment("c").extra(vec![1, 2, 3]);
        }
        let mut enc = b.write(Vec::new(), flate2::Compression::default());
        enc.write_all(data).unwrap();
        enc.finish().unwrap()
    }

    fn gunzip(bytes: &[u8]) -> io::Result<Vec<u8>> {
        let mut out = Vec::new();
        Gunzip::new(io::BufReader::with_capacity(7, bytes)).read_to_end(&mut out)?;
        Ok(out)
    }

    #[test]
    fn gzip_members_headers_and_trailers() {
        let text = b"hello, hello, hello world\n".repeat(500);
        assert_eq!(gunzip(&gz(&text, None)).unwrap(), text);
        assert_eq!(gunzip(&gz(&text, Some("x.tar"))).unwrap(), text);
        let mut two = gz(b"one ", None);
        two.extend(gz(b"two", Some("n")));
        assert_eq!(gunzip(&two).unwrap(), b"one two");

        let mut bad_crc = gz(&text, None);
        let n = bad_crc.len();
        bad_crc[n - 8] ^= 1;
        assert!(gunzip(&bad_crc).unwrap_err().to_string().contains("CRC"));
        let mut trailing = gz(&text, None);
        trailing.extend_from_slice(b"junk");
        assert!(gunzip(&trailing).unwrap_err().to_string().contains("data follows"));
        let cut = gz(&text, None);
        assert!(gunzip(&cut[..cut.len() - 20]).is_err());
        assert!(gunzip(b"").unwrap_err().to_string().contains("empty"));
        assert!(gunzip(b"not gzip at all").unwrap_err().to_string().contains("no gzip header"));
    }
}
