//! What `inspect` shows of a bundle without extracting it: its conversations (id,
//! first prompt, events, last time) and the carried `.claude.json` entry.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use serde_json::{Map, Value};

use super::EXTRAS;
use super::unpack::{self, Budget};

/// The ceiling a listing applies to the decompressed size.
const LISTING_CEILING: u64 = 4 << 30;
/// The carried `.claude.json` entry is read into memory up to this size.
const MAX_CONFIG: u64 = 16 << 20;

/// A conversation in a bundle, for `inspect`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionInfo {
    pub id: String,
    pub first_prompt: Option<String>,
    pub events: u64,
    pub last_timestamp: Option<String>,
    pub bytes: u64,
}

/// What `inspect` shows of a bundle.
#[derive(Debug, Clone, Default)]
pub struct BundleListing {
    pub sessions: Vec<SessionInfo>,
    /// The carried `.claude.json` project entry, for `inspect` to say what of it a
    /// default restore would not install.
    pub config_entry: Option<Map<String, Value>>,
}

/// Lists a bundle's conversations and withheld configuration without extracting
/// anything: `data` is the base64 text of `bundle.data`.
pub fn list_bundle(data: &mut dyn Read, declared: Option<u64>) -> anyhow::Result<BundleListing> {
    let mut out = Vec::new();
    let mut config_entry = None;
    let budget = Budget { declared, ceiling: LISTING_CEILING };
    let config = Path::new(EXTRAS).join("claude-project.json");
    unpack::unpack(data, budget, &mut |entry| {
        if entry.rel == config && entry.size <= MAX_CONFIG {
            let mut text = Vec::new();
            entry.reader.read_to_end(&mut text)?;
            if let Some(Value::Object(e)) =
                serde_json::from_slice::<Value>(&text).ok().and_then(|v| v.get("entry").cloned())
            {
                config_entry = Some(e);
            }
            return Ok(());
        }
        let Some(id) = top_level_transcript(&entry.rel) else { return Ok(()) };
        let mut info =
            SessionInfo { id, first_prompt: None, events: 0, last_timestamp: None, bytes: entry.size };
        let mut reader = BufReader::new(entry.reader);
        let mut line = Vec::new();
        loop {
            line.clear();
            if reader.read_until(b'\n', &mut line)? == 0 {
                break;
            }
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            info.events += 1;
            if let Some(ts) = field_str(&line, b"\"timestamp\":\"") {
                info.last_timestamp = Some(ts);
            }
            if info.first_prompt.is_none() && memchr::memmem::find(&line, b"\"type\":\"user\"").is_some() {
                info.first_prompt = first_prompt(&line);
            }
        }
        out.push(info);
        Ok(())
    })?;
    Ok(BundleListing { sessions: out, config_entry })
}

/// The conversations of a bundle as their bytes, `<id>.jsonl` at the top of the slot,
/// read without extracting anything: all of them, or the one named `only`. A conversation
/// over `max_each` bytes is refused rather than held in memory.
pub fn transcripts(
    data: &mut dyn Read,
    declared: Option<u64>,
    only: Option<&str>,
    max_each: u64,
) -> anyhow::Result<Vec<(String, Vec<u8>)>> {
    let mut out = Vec::new();
    let budget = Budget { declared, ceiling: LISTING_CEILING };
    unpack::unpack(data, budget, &mut |entry| {
        let Some(id) = top_level_transcript(&entry.rel) else { return Ok(()) };
        if only.is_some_and(|o| o != id) {
            return Ok(());
        }
        if entry.size > max_each {
            anyhow::bail!("conversation {id} is over {max_each} bytes");
        }
        let mut bytes = Vec::with_capacity(entry.size as usize);
        entry.reader.read_to_end(&mut bytes)?;
        out.push((id, bytes));
        Ok(())
    })?;
    Ok(out)
}

/// `<id>.jsonl` at the top of the slot.
pub fn top_level_transcript(rel: &Path) -> Option<String> {
    let mut comps = rel.components();
    let name = comps.next()?.as_os_str().to_str()?;
    if comps.next().is_some() {
        return None;
    }
    name.strip_suffix(".jsonl").filter(|id| !id.is_empty()).map(str::to_string)
}

/// The string value after `key` in a JSON line, without parsing the line.
fn field_str(line: &[u8], key: &[u8]) -> Option<String> {
    let at = memchr::memmem::rfind(line, key)? + key.len();
    let end = memchr::memchr(b'"', &line[at..])?;
    std::str::from_utf8(&line[at..at + end]).ok().map(str::to_string)
}

/// The text of a user event that a person typed (not a tool result or a command echo).
fn first_prompt(line: &[u8]) -> Option<String> {
    let v: Value = serde_json::from_slice(line).ok()?;
    if v.get("isMeta").and_then(Value::as_bool) == Some(true) {
        return None;
    }
    let content = v.get("message")?.get("content")?;
    let text = match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .find(|b| b.get("type").and_then(Value::as_str) == Some("text"))
            .and_then(|b| b.get("text"))
            .and_then(Value::as_str)?
            .to_string(),
        _ => return None,
    };
    let text = text.trim();
    if text.is_empty() || text.starts_with('<') {
        return None;
    }
    Some(text.lines().next().unwrap_or("").to_string())
}

// ---------------------------------------------------------------------------
