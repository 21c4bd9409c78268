//! Rewriting one element of a real `.lok`'s `bundles`, as someone crafting a hostile file
//! would: decode its tar, change entries, encode it back.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use base64::Engine;

/// One entry of an element's tar.
#[derive(Debug, Clone)]
pub struct Entry {
    pub name: String,
    pub data: Vec<u8>,
    /// A symlink's target; `None` for a file.
    pub link: Option<String>,
    pub mode: u32,
}

impl Entry {
    pub fn file(name: &str, data: &[u8]) -> Entry {
        Entry { name: name.to_string(), data: data.to_vec(), link: None, mode: 0o644 }
    }
}

/// The entries of an element's `tar.gz+base64` data.
pub fn entries(element: &serde_json::Value) -> Vec<Entry> {
    let gz = base64::engine::general_purpose::STANDARD.decode(element["data"].as_str().unwrap()).unwrap();
    let mut tar = Vec::new();
    flate2::read::MultiGzDecoder::new(&gz[..]).read_to_end(&mut tar).unwrap();
    let mut archive = tar::Archive::new(&tar[..]);
    archive
        .entries()
        .unwrap()
        .map(|e| {
            let mut e = e.unwrap();
            let name = e.path().unwrap().to_string_lossy().into_owned();
            let link = e.link_name().unwrap().map(|l| l.to_string_lossy().into_owned());
            let mode = e.header().mode().unwrap();
            let mut data = Vec::new();
            e.read_to_end(&mut data).unwrap();
            Entry { name, data, link, mode }
        })
        .collect()
}

/// Sets an element's data to `entries`, with sizes that agree.
pub fn set_entries(element: &mut serde_json::Value, entries: &[Entry]) {
    let mut b = tar::Builder::new(Vec::new());
    for e in entries {
        let mut h = tar::Header::new_gnu();
        h.set_mode(e.mode);
        h.set_mtime(1_700_000_000);
        match &e.link {
            Some(to) => {
                h.set_entry_type(tar::EntryType::Symlink);
                h.set_size(0);
                b.append_link(&mut h, &e.name, to).unwrap();
            }
            None => {
                h.set_size(e.data.len() as u64);
                b.append_data(&mut h, &e.name, &e.data[..]).unwrap();
            }
        }
    }
    let tar = b.into_inner().unwrap();
    let data = base64::engine::general_purpose::STANDARD.encode(super::archive::gzip(&tar));
    element["uncompressed_bytes"] = tar.len().into();
    element["base64_bytes"] = data.len().into();
    element["data"] = data.into();
}

/// A copy of `lok` named `name` whose element of `kind` went through `edit`.
pub fn rewrite(lok: &Path, kind: &str, name: &str, edit: impl FnOnce(&mut Vec<Entry>)) -> PathBuf {
    let mut doc: serde_json::Value = serde_json::from_slice(&fs::read(lok).unwrap()).unwrap();
    let element = doc["bundles"]
        .as_array_mut()
        .expect("a bundles array")
        .iter_mut()
        .find(|e| e["kind"] == kind)
        .unwrap_or_else(|| panic!("no {kind} element"));
    let mut list = entries(element);
    edit(&mut list);
    set_entries(element, &list);
    let out = lok.with_file_name(name);
    fs::write(&out, serde_json::to_vec(&doc).unwrap()).unwrap();
    out
}
