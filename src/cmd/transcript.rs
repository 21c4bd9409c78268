//! `lokust-shell inspect FILE --transcript ID | --transcripts`: any agent's conversation
//! read from the `.lok` as normalized events, shown as blocks or printed as JSON lines.
//! Nothing is extracted to disk.

use std::io::{IsTerminal, Write};

use anyhow::{Context, bail};
use serde_json::Value;

use crate::agent::event::{self, Event};
use crate::lok::ShellLok;

/// A conversation larger than this is refused rather than held in memory.
const MAX_CONVERSATION: u64 = 1 << 30;

/// One conversation found in the file.
struct Conversation {
    agent: &'static str,
    session: String,
    events: Vec<Event>,
}

/// Prints the conversation `only` (or every one) of `lok`; an unknown id is an error that
/// lists the ids the file holds.
pub fn run(
    lok: &ShellLok,
    name: &str,
    only: Option<&str>,
    json: bool,
    out: &mut impl Write,
) -> anyhow::Result<()> {
    let found = conversations(lok, name, only)?;
    if found.is_empty() {
        let ids: Vec<String> = conversations(lok, name, None)?.into_iter().map(|c| c.session).collect();
        match only {
            Some(id) => bail!(
                "{name} holds no conversation {}; it holds: {}",
                crate::sanitize::for_terminal(id),
                if ids.is_empty() {
                    "none".to_string()
                } else {
                    crate::sanitize::for_terminal(&ids.join(", ")).into_owned()
                }
            ),
            None => bail!("{name} holds no conversation"),
        }
    }
    let color = !json && std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    for c in &found {
        if json {
            for e in &c.events {
                let mut v = serde_json::to_value(redacted(e))?;
                if let Value::Object(map) = &mut v {
                    map.insert("agent".into(), c.agent.into());
                    map.insert("sessionID".into(), c.session.clone().into());
                }
                writeln!(out, "{v}")?;
            }
        } else {
            show(c, color, out)?;
        }
    }
    Ok(())
}

fn conversations(lok: &ShellLok, name: &str, only: Option<&str>) -> anyhow::Result<Vec<Conversation>> {
    let mut out = Vec::new();
    if let Some(b) =
        lok.bundle.as_ref().filter(|b| b.kind == crate::bundle::KIND && b.format == crate::bundle::FORMAT)
    {
        let found = crate::bundle::transcripts(
            &mut b.data.as_bytes(),
            Some(b.uncompressed_bytes),
            only,
            MAX_CONVERSATION,
        )
        .with_context(|| format!("could not read the bundle in {name}"))?;
        for (id, bytes) in found {
            let events = crate::agent::claude::events(&id, &bytes);
            out.push(Conversation { agent: crate::agent::claude::DISPLAY_NAME, session: id, events });
        }
    }
    let elements =
        crate::bundle::elements::elements(&lok.extra).with_context(|| format!("{name}: bad bundles"))?;
    for element in elements {
        let Some(agent) = crate::agent::by_kind(&crate::bundle::elements::kind_of(element)) else { continue };
        // A hostile element shows as refused, as in the summary.
        let files = crate::agent::files(agent, element, crate::restore::DEFAULT_MAX_SIZE)
            .with_context(|| format!("{name}: the {} conversations are refused", agent.name()))?;
        for s in agent.sessions(&files) {
            if only.is_some_and(|o| o != s.id) {
                continue;
            }
            let events = agent.events(&files, &s.id);
            out.push(Conversation { agent: agent.name(), session: s.id, events });
        }
    }
    Ok(out)
}

/// The event with every text it carries through the redactor: the file may be someone
/// else's, written by a lokust that redacted less.
fn redacted(e: &Event) -> Event {
    let clean = |s: &Option<String>| s.as_deref().map(|t| crate::redact::redact(t).into_owned());
    Event {
        text: clean(&e.text),
        tool_output: clean(&e.tool_output),
        tool_input: e.tool_input.as_ref().map(|v| {
            let text = v.to_string();
            serde_json::from_str(&crate::redact::redact_json_line(&text, &mut Default::default()))
                .unwrap_or_else(|_| v.clone())
        }),
        ..e.clone()
    }
}

/// Lines of a text shown, at most; the rest is counted.
const MAX_LINES: usize = 12;
/// Characters of a line shown, at most.
const MAX_WIDTH: usize = 400;

fn show(c: &Conversation, color: bool, out: &mut impl Write) -> anyhow::Result<()> {
    let paint = |code: &str, s: &str| if color { format!("\x1b[{code}m{s}\x1b[0m") } else { s.to_string() };
    let safe = |s: &str| crate::sanitize::for_terminal(s).into_owned();
    writeln!(
        out,
        "{}",
        paint("1", &format!("{} conversation {} ({} events)", c.agent, safe(&c.session), c.events.len()))
    )?;
    for e in &c.events {
        let e = redacted(e);
        let (label, code) = match e.kind {
            event::Kind::User => ("user", "1;32"),
            event::Kind::Assistant => ("assistant", "1;34"),
            event::Kind::ToolCall => ("tool call", "1;33"),
            event::Kind::ToolResult => ("tool result", "33"),
            event::Kind::Error => ("error", "1;31"),
            event::Kind::Meta => ("note", "2"),
        };
        let mut head = label.to_string();
        if let Some(role) = e.role.as_deref().filter(|r| !["user", "assistant", "tool"].contains(r)) {
            head.push_str(&format!(" ({})", safe(role)));
        }
        if let Some(tool) = &e.tool_name {
            head.push_str(&format!(" {}", safe(tool)));
        }
        let when = e.timestamp.as_deref().map(|t| format!("  {}", safe(t))).unwrap_or_default();
        writeln!(out, "\n{}{}", paint(code, &head), paint("2", &when))?;
        let body = match e.kind {
            event::Kind::ToolCall => {
                e.tool_input.as_ref().map(|v| serde_json::to_string_pretty(v).unwrap_or_default())
            }
            event::Kind::ToolResult => e.tool_output.clone(),
            _ => e.text.clone().or(e.tool_output.clone()),
        };
        for line in cut(body.as_deref().unwrap_or_default()) {
            writeln!(out, "  {}", safe(&line))?;
        }
    }
    writeln!(out)?;
    Ok(())
}

/// The lines of `text` as shown: the first [`MAX_LINES`], each cut at [`MAX_WIDTH`]
/// characters, then how many more there were.
fn cut(text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.trim_start_matches(['\n', '\r']).trim_end().lines().collect();
    let mut out: Vec<String> = lines
        .iter()
        .take(MAX_LINES)
        .map(|l| {
            if l.chars().count() > MAX_WIDTH {
                format!("{}…", l.chars().take(MAX_WIDTH).collect::<String>())
            } else {
                l.to_string()
            }
        })
        .collect();
    if lines.len() > MAX_LINES {
        out.push(format!("… {} more lines", lines.len() - MAX_LINES));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_texts_are_cut_and_counted() {
        let text: String = (0..30).map(|n| format!("line {n}\n")).collect();
        let shown = cut(&text);
        assert_eq!(shown.len(), MAX_LINES + 1);
        assert_eq!(shown.last().unwrap(), "… 18 more lines");
        assert!(cut(&"x".repeat(1000))[0].ends_with('…'));
    }
}
