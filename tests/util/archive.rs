//! Hand-built tar archives and .lok documents around them, for what a snapshot would
//! never write: hostile entries, bad base64, gzip or tar.

use std::io::Write;

use base64::Engine;

/// A tar entry written byte by byte, so names a careful writer refuses can be made.
pub struct Raw<'a> {
    pub name: &'a [u8],
    pub kind: u8,
    pub data: &'a [u8],
    pub link: &'a [u8],
}

pub fn raw<'a>(name: &'a [u8], kind: u8, data: &'a [u8]) -> Raw<'a> {
    Raw { name, kind, data, link: b"" }
}

pub fn raw_tar(entries: &[Raw<'_>]) -> Vec<u8> {
    let mut out = Vec::new();
    for e in entries {
        let mut h = tar::Header::new_ustar();
        h.as_old_mut().name[..e.name.len()].copy_from_slice(e.name);
        h.as_old_mut().linkname[..e.link.len()].copy_from_slice(e.link);
        h.set_mode(0o600);
        h.set_size(e.data.len() as u64);
        h.set_mtime(1_700_000_000);
        h.set_entry_type(tar::EntryType::new(e.kind));
        h.set_cksum();
        out.extend_from_slice(h.as_bytes());
        out.extend_from_slice(e.data);
        out.resize(out.len().div_ceil(512) * 512, 0);
    }
    out.resize(out.len() + 1024, 0);
    out
}

pub fn gzip(data: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(data).unwrap();
    enc.finish().unwrap()
}

/// A shell .lok around `data` (base64 text), with the sizes given.
pub fn lok_doc(data: &str, uncompressed: u64) -> serde_json::Value {
    serde_json::json!({
        "format_version": 1,
        "session": {"id": "shell-x", "status": "snapshot", "kind": "shell", "created_at_ms": 1},
        "shell": {"cwd": "/old/proj"},
        "bundle": {"kind": "claude-code-project", "format": "tar.gz+base64",
                   "uncompressed_bytes": uncompressed, "base64_bytes": data.len(), "data": data},
        "created_by": "x", "captured_via": "test",
    })
}

pub fn lok_of_tar(tar: &[u8]) -> serde_json::Value {
    let data = base64::engine::general_purpose::STANDARD.encode(gzip(tar));
    lok_doc(&data, tar.len() as u64)
}

/// A `bundles` element of `kind` around `tar`, naming the project folder it came from
/// when `project_dir` is given.
pub fn element_of(kind: &str, tar: &[u8], project_dir: Option<&str>) -> serde_json::Value {
    let data = base64::engine::general_purpose::STANDARD.encode(gzip(tar));
    let mut e = serde_json::json!({"kind": kind, "format": "tar.gz+base64", "uncompressed_bytes": tar.len(),
        "base64_bytes": data.len(), "data": data});
    if let Some(dir) = project_dir {
        e["project_dir"] = dir.into();
    }
    e
}

/// A copy of the `.lok` at `lok`, named `name` beside it, whose `bundles` are `elements`.
pub fn with_bundles(
    lok: &std::path::Path,
    elements: Vec<serde_json::Value>,
    name: &str,
) -> std::path::PathBuf {
    let mut doc: serde_json::Value = serde_json::from_slice(&std::fs::read(lok).unwrap()).unwrap();
    doc["bundles"] = serde_json::Value::Array(elements);
    let out = lok.with_file_name(name);
    std::fs::write(&out, serde_json::to_vec(&doc).unwrap()).unwrap();
    out
}
