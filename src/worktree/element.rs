//! The payload as an element of the `.lok`'s `bundles` array (spec: lok-extensions.md),
//! streamed both ways: tar → gzip → base64 straight into the JSON on writing, and base64 →
//! gunzip → tar straight from the string on reading, bounded before anything is inflated.

use std::io::Write;

use anyhow::{Context, Result, bail};
use serde_json::{Map, Value};

use super::{Capture, Carried, KIND, read_tar};

pub use crate::bundle::codec::FORMAT;

/// Sizes written into the element.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ElementStats {
    pub uncompressed_bytes: u64,
    pub base64_bytes: u64,
}

/// Writes the element as one JSON object to `out`; `data` is streamed and its sizes follow
/// it (JSON key order is free), so the payload is never held in memory.
pub fn write_element<W: Write>(capture: &Capture, mut out: W) -> Result<ElementStats> {
    let m = &capture.meta;
    let beside = |v: &Option<String>| serde_json::to_string(v).expect("a string serialises");
    write!(
        out,
        "{{\"kind\": \"{KIND}\", \"format\": \"{FORMAT}\", \"base\": {}, \"head\": {}, \"branch\": {}, \"remote\": {}, \"data\": \"",
        beside(&m.base),
        serde_json::to_string(&m.head)?,
        beside(&m.branch),
        beside(&m.remote)
    )?;
    let (base64_bytes, uncompressed_bytes) = {
        let gz = crate::bundle::codec::Writer::new(&mut out, 1, crate::bundle::Level::Kept);
        let (_, sizes) = capture.write_tar(gz)?.finish()?;
        (sizes.base64, sizes.uncompressed)
    };
    write!(out, "\", \"uncompressed_bytes\": {uncompressed_bytes}, \"base64_bytes\": {base64_bytes}}}")?;
    Ok(ElementStats { uncompressed_bytes, base64_bytes })
}

/// Reads a `git-worktree` element: the format checked, the data decoded as a stream and
/// cut off past `max_bytes` of tar, every entry checked by [`read_tar`].
pub fn read_element(element: &Map<String, Value>, max_bytes: u64) -> Result<Carried> {
    if element.get("kind").and_then(Value::as_str) != Some(KIND) {
        bail!("not a {KIND} element");
    }
    let data = crate::bundle::codec::element_data(element, KIND)?;
    // Tar headers and padding come on top of the content `read_tar` counts.
    let limit = max_bytes.saturating_add(max_bytes / 8).saturating_add(1 << 20);
    let why = format!("the {KIND} element inflates past {limit} bytes; refusing a decompression bomb");
    let mut text = data.as_bytes();
    let mut tar = crate::bundle::codec::reader(&mut text, limit, why);
    let carried = read_tar(&mut tar, max_bytes)
        .map_err(crate::bundle::unpack::reason)
        .with_context(|| format!("the {KIND} element"))?;
    Ok(carried)
}

impl crate::bundle::StreamedElement for Capture {
    fn write_to(&self, out: &mut dyn Write) -> Result<()> {
        write_element(self, out).map(|_| ())
    }
}

/// A capture, with what stayed behind and why.
type Captured = (Option<Capture>, Vec<String>);

/// The git work being captured on another thread while the bundle's data is written (the
/// capture is mostly waiting on git); the element waits for it, and says what stayed
/// behind, when its turn comes.
pub struct Pending {
    thread: std::sync::Mutex<Option<std::thread::JoinHandle<Captured>>>,
    done: std::sync::OnceLock<Option<Capture>>,
}

impl Pending {
    /// Starts capturing the work of the checkout around `cwd` (see [`super::carry`]).
    pub fn start(cwd: std::path::PathBuf, max_bytes: u64) -> Pending {
        let thread = std::thread::spawn(move || {
            let mut warnings = Vec::new();
            let work = super::carry(&cwd, max_bytes, &mut warnings);
            (work, warnings)
        });
        Pending { thread: std::sync::Mutex::new(Some(thread)), done: std::sync::OnceLock::new() }
    }

    /// The capture, waited for; what stayed behind is said on standard error once.
    pub fn get(&self) -> Option<&Capture> {
        self.done
            .get_or_init(|| {
                let handle = self.thread.lock().ok().and_then(|mut t| t.take());
                let (work, warnings) = handle.and_then(|h| h.join().ok()).unwrap_or_default();
                warnings.iter().for_each(|w| crate::exit::warn(w));
                work
            })
            .as_ref()
    }
}

impl Drop for Pending {
    /// An interrupted snapshot still waits for the capture, so that its private temp
    /// folder (patches of the working tree) is removed rather than left behind.
    fn drop(&mut self) {
        if let Some(thread) = self.thread.lock().ok().and_then(|mut t| t.take()) {
            let _ = thread.join();
        }
    }
}

impl crate::bundle::StreamedElement for std::sync::Arc<Pending> {
    fn present(&self) -> bool {
        self.get().is_some()
    }

    fn write_to(&self, out: &mut dyn Write) -> Result<()> {
        match self.get() {
            Some(capture) => write_element(capture, out).map(|_| ()),
            None => Ok(()),
        }
    }
}
