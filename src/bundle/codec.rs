//! The container every payload of a `.lok` uses, `tar.gz+base64`: the Claude Code
//! bundle, each agent's element and the git work are written by one [`Writer`] and read
//! by one [`reader`], whose bound refuses a decompression bomb before it is inflated, and
//! an element's header is checked by one [`element_data`].

use std::io::{self, BufRead, Read, Write};

use anyhow::{Context, bail};
use serde_json::{Map, Value};

use super::gz::{Level, ParallelGz};
use super::scan::SyntaxError;

pub const FORMAT: &str = "tar.gz+base64";

/// What a container held once written.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Sizes {
    /// The tar's bytes.
    pub uncompressed: u64,
    /// The base64 text's bytes.
    pub base64: u64,
}

type Base64Out<W> =
    base64::write::EncoderWriter<'static, base64::engine::GeneralPurpose, crate::fsutil::Counted<W>>;

/// Writes a tar stream as gzip (deflated on worker threads) in base64, straight into
/// `out`: the payload is never held whole.
pub struct Writer<W: Write> {
    gz: ParallelGz<Base64Out<W>>,
}

impl<W: Write> Writer<W> {
    pub fn new(out: W, threads: usize, level: Level) -> Writer<W> {
        let counted = crate::fsutil::Counted { inner: out, count: 0 };
        let b64 = base64::write::EncoderWriter::new(counted, &base64::engine::general_purpose::STANDARD);
        Writer { gz: ParallelGz::new(b64, threads, level) }
    }

    /// Ends the stream: the inner writer and the sizes.
    pub fn finish(self) -> io::Result<(W, Sizes)> {
        let (mut b64, uncompressed) = self.gz.finish()?;
        let counted = b64.finish()?;
        Ok((counted.inner, Sizes { uncompressed, base64: counted.count }))
    }
}

impl<W: Write> Write for Writer<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.gz.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.gz.flush()
    }
}

/// The tar stream inside base64 `data`, inflated no further than `limit` bytes: past it
/// the read fails with `why` ([`UnpackError::TooLarge`]); every other failure names its
/// layer (JSON around the text, base64, gzip).
pub fn reader<'a>(data: &'a mut dyn Read, limit: u64, why: String) -> Decoded<'a> {
    let b64 = Tag {
        inner: base64::read::DecoderReader::new(
            Tag { inner: data, layer: Layer::Json },
            &base64::engine::general_purpose::STANDARD,
        ),
        layer: Layer::Base64,
    };
    let gz = Tag { inner: Gunzip::new(io::BufReader::with_capacity(64 * 1024, b64)), layer: Layer::Gzip };
    Limit { inner: gz, count: 0, limit, why }
}

/// What [`reader`] returns: the tar's bytes, counted.
pub type Decoded<'a> = Limit<
    Tag<
        Gunzip<
            io::BufReader<
                Tag<
                    base64::read::DecoderReader<
                        'static,
                        base64::engine::GeneralPurpose,
                        Tag<&'a mut dyn Read>,
                    >,
                >,
            >,
        >,
    >,
>;

/// An element's base64 text, its header checked: the container's format, and a `data` of
/// exactly `base64_bytes` (a cut file does not pass for a whole one).
pub fn element_data<'a>(element: &'a Map<String, Value>, kind: &str) -> anyhow::Result<&'a str> {
    if element.get("format").and_then(Value::as_str) != Some(FORMAT) {
        bail!("the {kind} element's format is not {FORMAT}");
    }
    let data = element
        .get("data")
        .and_then(Value::as_str)
        .with_context(|| format!("the {kind} element has no data"))?;
    if element.get("base64_bytes").and_then(Value::as_u64) != Some(data.len() as u64) {
        bail!("the {kind} element's data is not base64_bytes long (truncated?)");
    }
    Ok(data)
}

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
    #[error("the data is not valid base64: {0}")]
    Base64(String),
    #[error("the data is not valid gzip: {0}")]
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
pub(crate) fn is_classified(e: &io::Error) -> bool {
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
pub struct Tag<R> {
    inner: R,
    layer: Layer,
}

impl<R: Read> Read for Tag<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.inner.read(buf).map_err(|e| tag(self.layer, e))
    }
}

/// Counts decompressed bytes and refuses the stream past `limit`.
pub struct Limit<R> {
    inner: R,
    count: u64,
    limit: u64,
    why: String,
}

impl<R> Limit<R> {
    /// The bytes read so far.
    pub fn count(&self) -> u64 {
        self.count
    }
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

/// gzip (RFC 1952, one member or several) over raw inflate, with the CRC computed by
/// crc32fast, whose SIMD path is several times faster than the inflater's own.
pub struct Gunzip<R> {
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

#[cfg(test)]
mod tests {
    use super::*;

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
