//! The bundle's data as a stream of checked tar entries: base64 → gunzip → untar, with
//! every hostile shape refused (paths outside the root, links, devices, FIFOs, a stream
//! that inflates past its budget, bad base64, gzip or tar) before a visitor sees it.

use std::ffi::OsString;
use std::io::{self, Read};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use anyhow::anyhow;

pub use super::codec::UnpackError;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};

use super::codec::{self, is_classified};
use super::scan::SyntaxError;

/// A checked entry: its path below the root, as components.
pub struct Entry<'a> {
    /// Path below the slot root; empty for the root itself.
    pub rel: PathBuf,
    pub is_dir: bool,
    pub size: u64,
    pub mtime: u64,
    pub reader: &'a mut dyn Read,
    /// The file on this machine `reader` reads from its start, when it is one: such an
    /// entry can be laid on another thread.
    pub local: Option<&'a std::fs::File>,
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

/// The base64 text of a bundle's data: one that can be read on another thread is
/// decoded there ([`unpack_parallel`]).
pub enum Data<'a> {
    Here(&'a mut dyn Read),
    Sendable(&'a mut (dyn Read + Send)),
}

impl Data<'_> {
    pub fn unpack(
        self,
        budget: Budget,
        visit: &mut dyn FnMut(Entry<'_>) -> anyhow::Result<()>,
    ) -> anyhow::Result<Unpacked> {
        match self {
            Data::Here(r) => unpack(r, budget, visit),
            Data::Sendable(r) => unpack_parallel(r, budget, visit),
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
    let result = entries(&mut counted, &mut out, visit).and_then(|()| to_the_end(&mut counted));
    out.tar_bytes = counted.count();
    result.map(|()| out).map_err(reason)
}

/// The same, with the base64 and gzip layers decoded on a thread of their own while this
/// one checks and hands on the entries: inflating was half of a restore's time, on one
/// core of two.
pub fn unpack_parallel(
    data: &mut (dyn Read + Send),
    budget: Budget,
    visit: &mut dyn FnMut(Entry<'_>) -> anyhow::Result<()>,
) -> anyhow::Result<Unpacked> {
    let (limit, why) = budget.limit();
    std::thread::scope(|s| {
        let (full_tx, full_rx) = sync_channel::<io::Result<Vec<u8>>>(DECODED_AHEAD);
        let (empty_tx, empty_rx) = sync_channel::<Vec<u8>>(DECODED_AHEAD + 2);
        for _ in 0..DECODED_AHEAD + 2 {
            let _ = empty_tx.send(vec![0u8; DECODED_CHUNK]);
        }
        let decoder = s.spawn(move || {
            let mut counted = codec::reader(data, limit, why);
            // Stops at the end, at an error (handed on), or when the reader is gone.
            while let Ok(mut buf) = empty_rx.recv() {
                buf.resize(DECODED_CHUNK, 0);
                // Filled whole: inflate hands out a little at a time.
                match super::source::read_full(&mut counted, &mut buf) {
                    Ok(0) => break,
                    Ok(n) => {
                        buf.truncate(n);
                        if full_tx.send(Ok(buf)).is_err() {
                            break;
                        }
                    }
                    Err(e) => {
                        let _ = full_tx.send(Err(e));
                        break;
                    }
                }
            }
            counted.count()
        });
        let mut decoded = Decoded { full: full_rx, empty: empty_tx, chunk: Vec::new(), at: 0 };
        let mut out = Unpacked::default();
        let result = entries(&mut decoded, &mut out, visit).and_then(|()| to_the_end(&mut decoded));
        // The decoder ends at its next send once nobody reads.
        drop(decoded);
        out.tar_bytes = decoder.join().map_err(|_| anyhow!("the decoding thread stopped"))?;
        result.map(|()| out).map_err(reason)
    })
}

/// Decoded chunks the decoder thread may hold ready, and their size.
const DECODED_AHEAD: usize = 4;
const DECODED_CHUNK: usize = 256 * 1024;

/// The decoder thread's chunks as one stream; each one read is handed back to be filled.
struct Decoded {
    full: Receiver<io::Result<Vec<u8>>>,
    empty: SyncSender<Vec<u8>>,
    chunk: Vec<u8>,
    at: usize,
}

impl Read for Decoded {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if self.at == self.chunk.len() {
            match self.full.recv() {
                Ok(next) => {
                    let done = std::mem::replace(&mut self.chunk, next?);
                    let _ = self.empty.send(done);
                    self.at = 0;
                }
                // The decoder finished: the end of the stream.
                Err(_) => return Ok(0),
            }
        }
        let n = out.len().min(self.chunk.len() - self.at);
        out[..n].copy_from_slice(&self.chunk[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

/// Past the tar's end only padding may follow; reading to the end also checks the gzip
/// trailer and that the base64 text ends with the gzip stream.
fn to_the_end(r: &mut dyn Read) -> anyhow::Result<()> {
    io::copy(r, &mut io::sink()).map(|_| ()).map_err(anyhow::Error::from)
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

fn entries(
    stream: &mut dyn Read,
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
        visit(Entry { rel, is_dir, size, mtime, reader: &mut entry, local: None })?;
        // Whatever the visitor left unread is read here, so sizes are always checked.
        io::copy(&mut entry, &mut io::sink()).map_err(tar_error)?;
    }
    if root.is_none() {
        return Err(refuse("the bundle is empty".into()));
    }
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
    use base64::Engine as _;

    fn bundle_text(files: &[(&str, Vec<u8>)]) -> Vec<u8> {
        let mut tar = tar::Builder::new(Vec::new());
        let mut dir = tar::Header::new_gnu();
        dir.set_entry_type(tar::EntryType::Directory);
        dir.set_size(0);
        tar.append_data(&mut dir, "slot", io::empty()).unwrap();
        for (name, data) in files {
            let mut h = tar::Header::new_gnu();
            h.set_size(data.len() as u64);
            h.set_mode(0o600);
            tar.append_data(&mut h, format!("slot/{name}"), &data[..]).unwrap();
        }
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        io::Write::write_all(&mut gz, &tar.into_inner().unwrap()).unwrap();
        base64::engine::general_purpose::STANDARD.encode(gz.finish().unwrap()).into_bytes()
    }

    fn budget() -> Budget {
        Budget { declared: None, ceiling: 1 << 30 }
    }

    /// Every entry's path and bytes, and the tar's length; or the error.
    type Seen = Result<(Vec<(PathBuf, Vec<u8>)>, u64), String>;

    /// What each way of unpacking hands on.
    fn both(text: &[u8], budget: Budget) -> [Seen; 2] {
        let run = |parallel: bool| {
            let mut seen = Vec::new();
            let mut visit = |e: Entry<'_>| {
                let mut data = Vec::new();
                e.reader.read_to_end(&mut data)?;
                seen.push((e.rel, data));
                Ok(())
            };
            let mut r = text;
            let done = if parallel {
                unpack_parallel(&mut r, budget, &mut visit)
            } else {
                unpack(&mut r, budget, &mut visit)
            };
            done.map(|u| (seen, u.tar_bytes)).map_err(|e| e.to_string())
        };
        [run(false), run(true)]
    }

    #[test]
    fn decoding_on_a_thread_hands_on_the_same_entries_and_errors() {
        // Larger than the decoder's chunks, so that several go through the channel.
        let big: Vec<u8> = (0..3_000_000u32).map(|i| (i * 7 % 251) as u8).collect();
        let text = bundle_text(&[("a.jsonl", b"{}\n".to_vec()), ("b.bin", big.clone())]);
        let [here, there] = both(&text, budget());
        let here = here.unwrap();
        assert_eq!(here.0.len(), 3);
        assert_eq!(here.0[2].1, big);
        assert_eq!(Ok(here), there);

        let cut = &text[..text.len() / 2];
        let [here, there] = both(cut, budget());
        assert!(here.is_err());
        assert_eq!(here, there);
        let mut bad = text.clone();
        bad[200] = b'!';
        let [here, there] = both(&bad, budget());
        assert!(here.as_ref().unwrap_err().contains("base64"), "{here:?}");
        assert_eq!(here, there);
        let small = Budget { declared: Some(1000), ceiling: 1 << 30 };
        let [here, there] = both(&text, small);
        assert!(here.as_ref().unwrap_err().contains("decompression bomb"), "{here:?}");
        assert_eq!(here, there);
    }

    #[test]
    fn a_visitor_that_stops_stops_the_decoder() {
        let big: Vec<u8> = (0..5_000_000u32).map(|i| (i % 253) as u8).collect();
        let text = bundle_text(&[("a", big.clone()), ("b", big)]);
        let mut r = &text[..];
        let e = unpack_parallel(&mut r, budget(), &mut |_| Err(anyhow!("enough"))).unwrap_err();
        assert_eq!(e.to_string(), "enough");
    }
}
