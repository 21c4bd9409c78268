//! The `bundles` array of a `.lok` (spec/lok-extensions.md): one element per further
//! payload, each shaped like `bundle` — `kind`, `format` `tar.gz+base64`, `data`,
//! `uncompressed_bytes`, `base64_bytes` — plus fields of its own kind beside them.
//!
//! Agent payloads are small (chats of one project), so an element is built and read in
//! memory; what the reader accepts is bounded before anything is inflated.

use std::borrow::Cow;
use std::io::{Read, Write};

use anyhow::{Context, bail};
use serde_json::{Map, Value};

use crate::redact::{self, Report};

pub use super::codec::FORMAT;

/// One file of an element: its path inside the element and its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct File {
    pub rel: String,
    pub data: Vec<u8>,
}

/// Redacts one file by its form: every JSONL line stays one valid JSON value, a single
/// JSON document stays valid JSON, anything else is redacted as text.
pub fn redact_file(rel: &str, data: &[u8], report: &mut Report) -> Vec<u8> {
    if rel.ends_with(".json") {
        // A bad byte reads as U+FFFD, so that it does not turn the reading of the
        // document's strings off; it comes back so only if something was redacted.
        let text = String::from_utf8_lossy(data);
        if let Ok(doc) = serde_json::from_str::<Value>(&text) {
            return match redact::redact_json_line(&doc.to_string(), report) {
                Cow::Borrowed(_) => data.to_vec(),
                Cow::Owned(red) => match serde_json::from_str::<Value>(&red) {
                    Ok(v) => serde_json::to_vec_pretty(&v).unwrap_or_else(|_| red.into_bytes()),
                    Err(_) => red.into_bytes(),
                },
            };
        }
    }
    // Line by line, as a bundle's transcripts are read: one bad byte touches only its
    // own line, and only if that line had something to redact.
    let jsonl = rel.ends_with(".jsonl");
    // The file is in memory: its tool calls whose commands named a secret are learned
    // before its lines are read, so each call's result is read as its output.
    let mut links = redact::Links::default();
    if jsonl {
        links.learn(data);
    }
    redact::redact_document(data, jsonl, report, |body, report| {
        redact::redact_line_bytes_linked(body, jsonl, Some(&links), report)
    })
    .into_owned()
}

/// Builds an element of `kind` holding `files`, with `fields` beside `data`.
pub fn encode(kind: &str, files: &[File], fields: Map<String, Value>) -> anyhow::Result<Value> {
    let mut tar = tar::Builder::new(Vec::new());
    for f in files {
        let mut header = tar::Header::new_gnu();
        header.set_size(f.data.len() as u64);
        header.set_mode(0o600);
        header.set_entry_type(tar::EntryType::Regular);
        tar.append_data(&mut header, &f.rel, f.data.as_slice())
            .with_context(|| format!("could not add {} to the {kind} element", f.rel))?;
    }
    let tar = tar.into_inner()?;
    // Elements are small and many: one thread each, deflated as the bundle is.
    let mut gz = super::codec::Writer::new(Vec::new(), 1, super::Level::Kept);
    gz.write_all(&tar)?;
    let (data, _) = gz.finish()?;
    let data = String::from_utf8(data).context("base64 is ASCII")?;
    let mut element = Map::new();
    element.insert("kind".into(), kind.into());
    element.insert("format".into(), FORMAT.into());
    element.insert("uncompressed_bytes".into(), (tar.len() as u64).into());
    element.insert("base64_bytes".into(), (data.len() as u64).into());
    element.insert("data".into(), data.into());
    for (k, v) in fields {
        element.entry(k).or_insert(v);
    }
    Ok(Value::Object(element))
}

/// The elements of a snapshot's `bundles`, as they were read.
pub fn elements(extra: &Map<String, Value>) -> anyhow::Result<Vec<&Map<String, Value>>> {
    match extra.get("bundles") {
        None => Ok(Vec::new()),
        Some(Value::Array(list)) => list
            .iter()
            .enumerate()
            .map(|(i, e)| e.as_object().with_context(|| format!("bundles[{i}] is not an object")))
            .collect(),
        Some(_) => bail!("bundles is not an array"),
    }
}

/// The kind of an element, for messages (terminal-safe).
pub fn kind_of(element: &Map<String, Value>) -> String {
    crate::sanitize::for_terminal(element.get("kind").and_then(Value::as_str).unwrap_or("(no kind)"))
        .into_owned()
}

/// The files of an element: its header checked, its data inflated no further than
/// `max_bytes`, only regular files with plain relative paths accepted.
pub fn decode(element: &Map<String, Value>, max_bytes: u64) -> anyhow::Result<Vec<File>> {
    let kind = kind_of(element);
    let data = super::codec::element_data(element, &kind)?;
    let declared = element.get("uncompressed_bytes").and_then(Value::as_u64).unwrap_or(u64::MAX);
    let limit = declared.min(max_bytes);
    let why = format!("the {kind} element inflates past {limit} bytes; refusing a decompression bomb");
    let mut text = data.as_bytes();
    let mut tar = Vec::new();
    super::codec::reader(&mut text, limit, why)
        .read_to_end(&mut tar)
        .map_err(|e| super::unpack::reason(e.into()))
        .with_context(|| format!("the {kind} element"))?;
    let mut files = Vec::new();
    let mut archive = tar::Archive::new(tar.as_slice());
    for entry in archive.entries().with_context(|| format!("the {kind} element is not a tar"))? {
        let mut entry = entry.with_context(|| format!("the {kind} element is not a tar"))?;
        let rel = String::from_utf8(entry.path_bytes().into_owned())
            .with_context(|| format!("the {kind} element holds a path that is not UTF-8"))?;
        if entry.header().entry_type() != tar::EntryType::Regular {
            bail!("the {kind} element holds {rel:?}, which is not a regular file");
        }
        let mut data = Vec::new();
        entry.read_to_end(&mut data)?;
        files.push(File { rel, data });
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_transcript_with_a_bad_byte_is_still_read_as_json() {
        let mut data = b"{\"a\":\"\xff\"}\n".to_vec();
        data.extend_from_slice(b"{\"a\":\"caf\xe9\",\"b\":\"\\u0070assword=hunter2xyz\"}\n");
        let mut report = Report::default();
        let out = redact_file("chats/s.jsonl", &data, &mut report);
        assert!(!String::from_utf8_lossy(&out).contains("hunter2xyz"), "{}", String::from_utf8_lossy(&out));
        assert_eq!(report.values, 1);
        // Nothing to redact: the bytes as they were.
        let clean = b"{\"a\":\"\xff\"}\n{\"b\":\"\\u0041\"}\n";
        assert_eq!(redact_file("chats/s.jsonl", clean, &mut Report::default()), clean.to_vec());
    }

    #[test]
    fn an_element_round_trips_and_its_header_is_checked() {
        let files = vec![File { rel: "chats/session-a.jsonl".into(), data: b"{}\n".to_vec() }];
        let mut fields = Map::new();
        fields.insert("project_dir".into(), "/p".into());
        let element = encode("gemini-project", &files, fields).unwrap();
        let element = element.as_object().unwrap();
        assert_eq!(element["project_dir"], "/p");
        assert_eq!(decode(element, 1 << 20).unwrap(), files);
        let mut short = element.clone();
        short.insert("uncompressed_bytes".into(), 10.into());
        assert!(format!("{:#}", decode(&short, 1 << 20).unwrap_err()).contains("decompression bomb"));
        let mut cut = element.clone();
        cut.insert("base64_bytes".into(), 3.into());
        assert!(decode(&cut, 1 << 20).is_err());
    }

    #[test]
    fn redaction_keeps_each_form_valid() {
        let secret = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";
        let jsonl = format!("{{\"a\":1}}\n{{\"content\":\"token {secret}\"}}\n");
        let mut report = Report::default();
        let out = String::from_utf8(redact_file("chats/s.jsonl", jsonl.as_bytes(), &mut report)).unwrap();
        assert!(!out.contains(secret), "{out}");
        for line in out.lines() {
            serde_json::from_str::<Value>(line).unwrap();
        }
        let json = format!(
            "{{\n  \"messages\": [\n    {{\"content\": \"export GITHUB_TOKEN={secret}\"}}\n  ]\n}}\n"
        );
        let out = redact_file("chats/s.json", json.as_bytes(), &mut report);
        let doc: Value = serde_json::from_slice(&out).unwrap();
        assert!(!doc.to_string().contains(secret));
        assert!(report.values >= 2);
    }
}
