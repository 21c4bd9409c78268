//! `lokust-shell inspect FILE --transcript ID | --transcripts`: any agent's conversation
//! read from the `.lok` as normalized events, shown as blocks or printed as JSON lines.
//! Nothing is extracted to disk.

use std::io::{IsTerminal, Write};

use anyhow::{Context, bail};
use serde_json::Value;

use crate::agent::event::{self, Event};
use crate::lok::ShellLok;

/// A conversation larger than this is refused rather than held in memory; so is an
/// element that inflates past it.
const MAX_CONVERSATION: u64 = 256 << 20;

/// One conversation found in the file.
struct Conversation {
    agent: &'static str,
    session: String,
    events: Vec<Event>,
}

/// Prints the conversation `only` (or every one) of `lok` as each is read, so only one is
/// held at a time. An element that is refused is named on standard error and the others
/// are still read; an id found nowhere is an error that lists the ids the file holds.
pub fn run(
    lok: &ShellLok,
    name: &str,
    only: Option<&str>,
    json: bool,
    out: &mut impl Write,
) -> anyhow::Result<()> {
    let color = !json && std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    let mut shown = 0;
    let mut ids = Vec::new();
    let refused = each_conversation(lok, name, |c| {
        ids.push(c.session.clone());
        if only.is_some_and(|o| o != c.session) {
            return Ok(());
        }
        shown += 1;
        if json { print_json(&c, out) } else { show(&c, color, out) }
    })?;
    for r in &refused {
        crate::exit::warn(r);
    }
    if shown == 0 {
        let held = if ids.is_empty() {
            "none".to_string()
        } else {
            crate::sanitize::for_terminal(&ids.join(", ")).into_owned()
        };
        let also =
            if refused.is_empty() { String::new() } else { " (and an element that was refused)".to_string() };
        match only {
            Some(id) => bail!(
                "{name} holds no conversation {}; it holds: {held}{also}",
                crate::sanitize::for_terminal(id)
            ),
            None => bail!("{name} holds no conversation{also}"),
        }
    }
    Ok(())
}

fn print_json(c: &Conversation, out: &mut impl Write) -> anyhow::Result<()> {
    for e in &c.events {
        let mut v = serde_json::to_value(redacted(e))?;
        if let Value::Object(map) = &mut v {
            map.insert("agent".into(), c.agent.into());
            map.insert("sessionID".into(), crate::redact::redact(&c.session).into_owned().into());
        }
        writeln!(out, "{}", crate::sanitize::json_for_terminal(&v.to_string()))?;
    }
    Ok(())
}

/// Calls `visit` with each conversation of the file in turn; returns why elements were
/// refused.
fn each_conversation(
    lok: &ShellLok,
    name: &str,
    mut visit: impl FnMut(Conversation) -> anyhow::Result<()>,
) -> anyhow::Result<Vec<String>> {
    let mut refused = Vec::new();
    if let Some(b) =
        lok.bundle.as_ref().filter(|b| b.kind == crate::bundle::KIND && b.format == crate::bundle::FORMAT)
    {
        match crate::bundle::transcripts(
            &mut b.data.as_bytes(),
            Some(b.uncompressed_bytes),
            None,
            MAX_CONVERSATION,
        ) {
            Ok(found) => {
                for (id, bytes) in found {
                    let events = crate::agent::claude::events(&id, &bytes);
                    visit(Conversation { agent: crate::agent::claude::DISPLAY_NAME, session: id, events })?;
                }
            }
            Err(e) => refused.push(format!("{name}: the Claude Code conversations are refused: {e:#}")),
        }
    }
    let elements =
        crate::bundle::elements::elements(&lok.extra).with_context(|| format!("{name}: bad bundles"))?;
    for element in elements {
        let Some(agent) = crate::agent::by_kind(&crate::bundle::elements::kind_of(element)) else { continue };
        // A hostile element shows as refused, as in the summary.
        let files = match crate::agent::files(agent, element, MAX_CONVERSATION) {
            Ok(files) => files,
            Err(e) => {
                refused.push(format!("{name}: the {} conversations are refused: {e:#}", agent.name()));
                continue;
            }
        };
        for s in agent.sessions(&files) {
            let events = agent.events(&files, &s.id);
            visit(Conversation { agent: agent.name(), session: s.id, events })?;
        }
    }
    Ok(refused)
}

/// The event with every string it carries through the redactor: the file may be someone
/// else's, written by a lokust that redacted less (or none).
fn redacted(e: &Event) -> Event {
    let clean = |s: &Option<String>| s.as_deref().map(|t| crate::redact::redact(t).into_owned());
    Event {
        id: crate::redact::redact(&e.id).into_owned(),
        timestamp: clean(&e.timestamp),
        role: clean(&e.role),
        text: clean(&e.text),
        tool_name: clean(&e.tool_name),
        tool_output: clean(&e.tool_output),
        tool_input: e.tool_input.as_ref().map(|v| {
            let text = v.to_string();
            serde_json::from_str(&crate::redact::redact_json_line(&text, &mut Default::default()))
                .unwrap_or_else(|_| v.clone())
        }),
        message_id: clean(&e.message_id),
        parent_id: clean(&e.parent_id),
        model: clean(&e.model),
        kind: e.kind,
    }
}

/// Lines of a text shown, at most; the rest is counted.
const MAX_LINES: usize = 12;
/// Characters of a line shown, at most.
const MAX_WIDTH: usize = 400;

fn show(c: &Conversation, color: bool, out: &mut impl Write) -> anyhow::Result<()> {
    let paint = |code: &str, s: &str| if color { format!("\x1b[{code}m{s}\x1b[0m") } else { s.to_string() };
    // A short field is cut before it is redacted, so a hostile one costs nothing.
    let field = |s: &str| {
        let short: String = s.chars().take(MAX_WIDTH).collect();
        crate::sanitize::for_terminal(&crate::redact::redact(&short)).into_owned()
    };
    let title = format!(
        "{} conversation {} ({})",
        c.agent,
        field(&c.session),
        crate::human::count(c.events.len() as u64, "event")
    );
    writeln!(out, "{}", paint("1", &title))?;
    for e in &c.events {
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
            head.push_str(&format!(" ({})", field(role)));
        }
        if let Some(tool) = &e.tool_name {
            head.push_str(&format!(" {}", field(tool)));
        }
        let when = e.timestamp.as_deref().map(|t| format!("  {}", field(t))).unwrap_or_default();
        writeln!(out, "\n{}{}", paint(code, &head), paint("2", &when))?;
        let body = match e.kind {
            event::Kind::ToolCall => {
                e.tool_input.as_ref().map(|v| serde_json::to_string_pretty(v).unwrap_or_default())
            }
            event::Kind::ToolResult => e.tool_output.clone(),
            _ => e.text.clone().or(e.tool_output.clone()),
        };
        // Only what is shown is redacted, with some text after each cut line so that a
        // secret across the cut is still recognised whole.
        let (shown, more) = preview(body.as_deref().unwrap_or_default());
        let shown = crate::redact::redact(&shown);
        for line in shown.lines() {
            let line = if line.chars().count() > MAX_WIDTH {
                format!("{}…", line.chars().take(MAX_WIDTH).collect::<String>())
            } else {
                line.to_string()
            };
            writeln!(out, "  {}", crate::sanitize::for_terminal(&line))?;
        }
        if more > 0 {
            writeln!(out, "  … {}", crate::human::count(more as u64, "more line"))?;
        }
    }
    writeln!(out)?;
    Ok(())
}

/// The first [`MAX_LINES`] lines of `text`, each kept to [`MAX_WIDTH`] characters and a
/// margin, and how many lines were left out.
fn preview(text: &str) -> (String, usize) {
    let text = text.trim_start_matches(['\n', '\r']).trim_end();
    let mut lines = text.lines();
    let kept: Vec<String> =
        lines.by_ref().take(MAX_LINES).map(|l| l.chars().take(MAX_WIDTH + 256).collect()).collect();
    (kept.join("\n"), lines.count())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_texts_are_cut_and_counted() {
        let text: String = (0..30).map(|n| format!("line {n}\n")).collect();
        let (shown, more) = preview(&text);
        assert_eq!(shown.lines().count(), MAX_LINES);
        assert_eq!(more, 18);
        assert_eq!(preview(&"x".repeat(10_000)).0.chars().count(), MAX_WIDTH + 256);
    }
}
