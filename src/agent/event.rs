//! One conversation read alike for every agent: the normalized event a session viewer
//! uses (`id`, `kind`, `timestamp`, `role`, `text`, `toolName`, `toolInput`, `toolOutput`,
//! `messageID`, `parentID`, `model`), so a receiver can read a conversation before
//! restoring it. Each agent turns its own records into these; nothing is written to disk.

use serde::Serialize;
use serde_json::Value;

/// What an event is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    User,
    Assistant,
    ToolCall,
    ToolResult,
    Error,
    Meta,
}

/// One event of a conversation.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Event {
    /// The agent's own id of the record, else `<session>:<n>`.
    pub id: String,
    pub kind: Kind,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(rename = "toolName", skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
    #[serde(rename = "toolInput", skip_serializing_if = "Option::is_none")]
    pub tool_input: Option<Value>,
    #[serde(rename = "toolOutput", skip_serializing_if = "Option::is_none")]
    pub tool_output: Option<String>,
    #[serde(rename = "messageID", skip_serializing_if = "Option::is_none")]
    pub message_id: Option<String>,
    #[serde(rename = "parentID", skip_serializing_if = "Option::is_none")]
    pub parent_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

impl Event {
    /// An event of `kind` with nothing else said yet; ids are filled in by [`number`].
    pub fn new(kind: Kind) -> Event {
        Event {
            id: String::new(),
            kind,
            timestamp: None,
            role: None,
            text: None,
            tool_name: None,
            tool_input: None,
            tool_output: None,
            message_id: None,
            parent_id: None,
            model: None,
        }
    }

    pub fn text(kind: Kind, text: impl Into<String>) -> Event {
        Event { text: Some(text.into()), ..Event::new(kind) }
    }

    pub fn at(mut self, timestamp: Option<&str>) -> Event {
        self.timestamp = timestamp.map(str::to_string);
        self
    }

    pub fn role(mut self, role: &str) -> Event {
        self.role = Some(role.to_string());
        self
    }
}

/// Gives every event without an id one that is stable within the session.
pub fn number(session: &str, mut events: Vec<Event>) -> Vec<Event> {
    for (n, e) in events.iter_mut().enumerate() {
        if e.id.is_empty() {
            e.id = format!("{session}:{n}");
        }
    }
    events
}

/// The text of a value as people read it: a string as it is, text parts joined, anything
/// else as compact JSON.
pub fn text_of(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Array(parts) => {
            let texts: Vec<String> = parts
                .iter()
                .filter_map(|p| match p {
                    Value::String(s) => Some(s.clone()),
                    Value::Object(o) => {
                        o.get("text").or_else(|| o.get("content")).or_else(|| o.get("output")).map(text_of)
                    }
                    _ => None,
                })
                .collect();
            if texts.is_empty() { value.to_string() } else { texts.join("\n") }
        }
        Value::Object(o) => o
            .get("text")
            .or_else(|| o.get("content"))
            .or_else(|| o.get("output"))
            .map(text_of)
            .unwrap_or_else(|| value.to_string()),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// A string field of a JSON object.
pub fn str_of<'a>(value: &'a Value, pointer: &str) -> Option<&'a str> {
    value.pointer(pointer).and_then(Value::as_str)
}

/// The JSON lines of a file that read, in order.
pub fn json_lines(data: &[u8]) -> impl Iterator<Item = Value> + '_ {
    data.split(|b| *b == b'\n')
        .filter(|l| !l.iter().all(u8::is_ascii_whitespace))
        .filter_map(|l| serde_json::from_slice(l).ok())
}

/// Anthropic-style content (Claude Code, Factory Droid): a string, or blocks of `text`,
/// `thinking`, `tool_use` and `tool_result`; one event per block that says something.
pub fn from_blocks(role: &str, content: &Value, base: &Event) -> Vec<Event> {
    let message = |kind: Kind, text: String| Event { kind, text: Some(text), ..base.clone() };
    let own = if role == "assistant" { Kind::Assistant } else { Kind::User };
    let Some(blocks) = content.as_array() else {
        let text = text_of(content);
        return if text.trim().is_empty() { Vec::new() } else { vec![message(own, text)] };
    };
    let mut out = Vec::new();
    for block in blocks {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => {
                let text = str_of(block, "/text").unwrap_or_default();
                if !text.trim().is_empty() {
                    out.push(message(own, text.to_string()));
                }
            }
            Some("tool_use") => out.push(Event {
                kind: Kind::ToolCall,
                text: None,
                tool_name: str_of(block, "/name").map(str::to_string),
                tool_input: block.get("input").cloned(),
                message_id: str_of(block, "/id").map(str::to_string).or_else(|| base.message_id.clone()),
                ..base.clone()
            }),
            Some("tool_result") => out.push(Event {
                kind: if block.get("is_error").and_then(Value::as_bool) == Some(true) {
                    Kind::Error
                } else {
                    Kind::ToolResult
                },
                role: Some("tool".into()),
                text: None,
                tool_output: Some(text_of(block.get("content").unwrap_or(&Value::Null))),
                message_id: str_of(block, "/tool_use_id")
                    .map(str::to_string)
                    .or_else(|| base.message_id.clone()),
                ..base.clone()
            }),
            Some("thinking") => {
                let text = str_of(block, "/thinking").unwrap_or_default();
                if !text.trim().is_empty() {
                    out.push(Event {
                        kind: Kind::Meta,
                        role: Some("thinking".into()),
                        ..message(own, text.into())
                    });
                }
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_serialize_as_the_viewer_reads_them() {
        let mut e = Event::text(Kind::ToolCall, "x").at(Some("2026-01-01T00:00:00Z"));
        e.tool_name = Some("Bash".into());
        e.tool_input = Some(serde_json::json!({"command": "ls"}));
        let v = serde_json::to_value(number("s", vec![e])).unwrap();
        assert_eq!(v[0]["kind"], "tool_call");
        assert_eq!(v[0]["toolName"], "Bash");
        assert_eq!(v[0]["id"], "s:0");
        assert!(v[0].get("model").is_none());
    }

    #[test]
    fn text_of_joins_parts() {
        let parts = serde_json::json!([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]);
        assert_eq!(text_of(&parts), "a\nb");
        assert_eq!(text_of(&serde_json::json!("x")), "x");
    }
}
