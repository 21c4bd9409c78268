//! Human-readable descriptions of a `.lok`, shared by the snapshot summary and `inspect`.
//! Everything taken from the file passes through [`sanitize`](crate::sanitize) first.

use std::io::{self, Write};

use crate::human::{duration, size, thousands, utc};
use crate::lok::{CoordinationLok, ShellLok};
use crate::sanitize::for_terminal as safe;

fn short(head: &str) -> &str {
    head.get(..7).unwrap_or(head)
}

/// The "Contents:" block of a shell session.
pub fn shell_contents<W: Write>(lok: &ShellLok, w: &mut W) -> io::Result<()> {
    let s = &lok.shell;
    writeln!(w, "Contents:")?;
    writeln!(w, "  cwd:         {}", safe(&s.cwd))?;
    writeln!(w, "  user:        {}@{}", safe(&s.user), safe(&s.hostname))?;
    writeln!(w, "  shell:       {}", safe(&s.shell))?;
    writeln!(
        w,
        "  history:     {} ({} redacted)",
        crate::human::count_as(s.history_tail.len() as u64, "entry", "entries"),
        s.history_redacted_lines
    )?;
    writeln!(w, "  env:         {} kept, {} dropped", s.env.len(), s.env_dropped_count)?;
    let terminal = match &s.terminal {
        Some(t) => {
            let mut out = t.program.clone().unwrap_or_else(|| "unknown".into());
            if let Some(v) = &t.version {
                out = format!("{out} {v}");
            }
            if let Some(term) = &t.term {
                out = format!("{out} ({term})");
            }
            out
        }
        None => "unknown".into(),
    };
    writeln!(w, "  terminal:    {}", safe(&terminal))?;
    let mux = match &s.multiplexer {
        Some(m) => format!("{} session {}", m.kind, m.session.as_deref().unwrap_or("?")),
        None => "none".into(),
    };
    writeln!(w, "  multiplexer: {}", safe(&mux))?;
    let git = match &s.git {
        Some(g) => {
            let at = match (&g.branch, &g.head) {
                (Some(b), Some(h)) => format!("{b} @ {}", short(h)),
                (None, Some(h)) => format!("detached @ {}", short(h)),
                (Some(b), None) => format!("{b} (no commits)"),
                (None, None) => "no HEAD".into(),
            };
            let remote = g.remote.as_deref().map(|r| format!(", {r}")).unwrap_or_default();
            format!("{at} ({} dirty){remote}", g.dirty_files)
        }
        None => "none".into(),
    };
    writeln!(w, "  git:         {}", safe(&git))?;
    let claude = match &s.claude_code {
        Some(c) => {
            format!(
                "{} ({}, {})",
                c.project_slot,
                crate::human::count(c.sessions_logged, "session"),
                crate::human::count(c.memory_files, "memory file")
            )
        }
        None => "none".into(),
    };
    writeln!(w, "  claude code: {}", safe(&claude))?;
    if let Some(sb) = &s.tmux_scrollback {
        writeln!(w, "  scrollback:  {}", size(sb.bytes))?;
    }
    let bundle = match &lok.bundle {
        Some(b) => format!(
            "{} ({} uncompressed, {} encoded)",
            b.kind,
            size(b.uncompressed_bytes),
            size(b.base64_bytes)
        ),
        None => "none".into(),
    };
    writeln!(w, "  bundle:      {}", safe(&bundle))
}

/// The bundle line of the snapshot summary.
pub fn bundle_line<W: Write>(b: &crate::bundle::BundleStats, w: &mut W) -> io::Result<()> {
    writeln!(
        w,
        "  bundled:     {}, {}",
        crate::human::count(b.sessions, "conversation"),
        crate::human::count(b.files, "file")
    )
}

/// The git work carried, as the snapshot summary shows it.
pub fn worktree_line<W: Write>(m: &crate::worktree::Meta, w: &mut W) -> io::Result<()> {
    let left =
        if m.left_out.is_empty() { String::new() } else { format!(", {} left behind", m.left_out.len()) };
    writeln!(
        w,
        "  git work:    {} unpushed, {} changed or new{left}",
        crate::human::count(m.commits.len() as u64, "commit"),
        crate::human::count(m.files.len() as u64, "file")
    )
}

/// One agent's conversations carried, as the snapshot summary shows them (`gemini:`).
pub fn agent_line<W: Write>(id: &str, sessions: &[crate::agent::Session], w: &mut W) -> io::Result<()> {
    let label = format!("{id}:");
    writeln!(w, "  {label:<12} {}", crate::human::count(sessions.len() as u64, "conversation"))
}

/// One agent's conversations in its element, as `inspect` lists them.
pub fn agent_sessions<W: Write>(
    name: &str,
    turn_word: &str,
    sessions: &[crate::agent::Session],
    w: &mut W,
) -> io::Result<()> {
    writeln!(w)?;
    writeln!(w, "{name} conversations:")?;
    if sessions.is_empty() {
        return writeln!(w, "  none");
    }
    for s in sessions {
        let when = s.last_updated.as_deref().unwrap_or("-");
        let outcome = s.outcome.as_deref().map(|o| format!("  {}", safe(o))).unwrap_or_default();
        writeln!(w, "  {}  {:>5} {turn_word}  last {}{outcome}", safe(&s.id), s.turns, safe(when))?;
        if let Some(p) = &s.first_prompt {
            writeln!(w, "      {}", safe(&prompt_shown(p)))?;
        }
    }
    Ok(())
}

/// The start of a first prompt as the listings show it: redacted (the file may be someone
/// else's, written without redaction), then cut.
fn prompt_shown(p: &str) -> String {
    let head: String = p.chars().take(400).collect();
    crate::redact::redact(&head).chars().take(70).collect()
}

/// A bundle's conversations, as `inspect` lists them.
pub fn bundle_sessions<W: Write>(sessions: &[crate::bundle::SessionInfo], w: &mut W) -> io::Result<()> {
    writeln!(w)?;
    writeln!(w, "Conversations in the bundle:")?;
    if sessions.is_empty() {
        return writeln!(w, "  none");
    }
    for s in sessions {
        let when = s.last_timestamp.as_deref().unwrap_or("-");
        writeln!(w, "  {}  {:>5} events  {:>9}  last {}", safe(&s.id), s.events, size(s.bytes), safe(when))?;
        if let Some(p) = &s.first_prompt {
            writeln!(w, "      {}", safe(&prompt_shown(p)))?;
        }
    }
    Ok(())
}

/// The carried `.claude.json` keys that can run commands or grant permissions.
pub fn withheld_config<W: Write>(withheld: &[crate::agent::claude::Withheld], w: &mut W) -> io::Result<()> {
    if withheld.is_empty() {
        return Ok(());
    }
    writeln!(w)?;
    writeln!(w, "Project settings that can run commands or grant permissions")?;
    writeln!(w, "(not installed by a restore without --trust-config):")?;
    for item in withheld {
        for line in &item.details {
            writeln!(w, "  {}: {line}", item.key)?;
        }
    }
    Ok(())
}

/// A whole shell session, as `inspect` shows it.
pub fn inspect_shell<W: Write>(lok: &ShellLok, all_history: bool, w: &mut W) -> io::Result<()> {
    writeln!(
        w,
        "Shell session {}, captured {} by {} via {}",
        safe(&lok.session.id),
        utc(lok.session.created_at_ms),
        safe(&lok.created_by),
        safe(&lok.captured_via)
    )?;
    writeln!(w)?;
    shell_contents(lok, w)?;
    tmux_session(lok, w)?;
    let tail = &lok.shell.history_tail;
    if !tail.is_empty() {
        let shown = if all_history { tail.len() } else { tail.len().min(10) };
        writeln!(w)?;
        if shown < tail.len() {
            writeln!(w, "History (last {shown} of {}; --history for all):", tail.len())?;
        } else {
            writeln!(w, "History:")?;
        }
        for entry in &tail[tail.len() - shown..] {
            writeln!(w, "  {}", safe(entry))?;
        }
    }
    Ok(())
}

/// The windows and panes of a whole tmux session, each agent pane with its conversation.
pub fn tmux_session<W: Write>(lok: &ShellLok, w: &mut W) -> io::Result<()> {
    let Some(found) = crate::lok::tmux::TmuxSession::from_extra(&lok.extra) else { return Ok(()) };
    writeln!(w)?;
    let ts = match found {
        Ok(ts) => ts,
        Err(why) => return writeln!(w, "tmux session: not rebuilt by import: {}", safe(&why)),
    };
    let panes: usize = ts.windows.iter().map(|w| w.panes.len()).sum();
    writeln!(
        w,
        "tmux session {} ({} {}, {panes} {}) at {}:",
        safe(&ts.name),
        ts.windows.len(),
        if ts.windows.len() == 1 { "window" } else { "windows" },
        if panes == 1 { "pane" } else { "panes" },
        safe(&ts.root)
    )?;
    for win in &ts.windows {
        let mut flags = Vec::new();
        if win.active {
            flags.push("active".to_string());
        }
        if win.zoomed {
            flags.push("zoomed".to_string());
        }
        if let Err(why) = crate::tmux::layout::panes(&win.layout) {
            flags.push(format!("layout refused: {why}"));
        }
        let flags = if flags.is_empty() { String::new() } else { format!(" ({})", flags.join(", ")) };
        writeln!(w, "  window {} {}{flags}", win.index, safe(&win.name))?;
        for p in &win.panes {
            let dir =
                p.cwd_rel.as_deref().map_or_else(|| format!("{} (outside the root)", p.cwd), str::to_string);
            let what = match (&p.agent, &p.foreground) {
                (Some(a), _) => match (&a.session_id, &a.how) {
                    (Some(id), how) => format!(
                        "{}, conversation {} ({}{})",
                        a.id,
                        id,
                        how.as_deref().unwrap_or("?"),
                        if a.element.is_some() { ", carried" } else { "" }
                    ),
                    (None, _) => format!("{}, no conversation recorded", a.id),
                },
                (None, Some(fg)) => format!("running {}", fg.argv.join(" ")),
                (None, None) => p.shell.clone().unwrap_or_else(|| "shell".into()),
            };
            writeln!(w, "    pane {} {}  {}", p.index, safe(&dir), safe(&what))?;
        }
    }
    Ok(())
}

/// A coordination session: its phases with status, duration and tokens.
pub fn inspect_coordination<W: Write>(lok: &CoordinationLok, w: &mut W) -> io::Result<()> {
    let s = &lok.session;
    write!(w, "Coordination session {} ({})", safe(&s.id), safe(&s.status))?;
    match &lok.workflow_name {
        Some(name) => writeln!(w, ": {}", safe(name))?,
        None => writeln!(w)?,
    }
    writeln!(w)?;
    if let Some(dir) = &lok.project_dir {
        writeln!(w, "  project:  {}", safe(dir))?;
    }
    writeln!(w, "  created:  {} by {}", utc(s.created_at_ms), safe(&lok.created_by))?;
    let done = s.phases.iter().filter(|p| p.status == "completed").count();
    writeln!(w, "  phases:   {done}/{} completed, current {}", s.phases.len(), s.current_phase_index)?;
    writeln!(w, "  total:    {}, {} tokens", duration(s.total_duration_ms), thousands(s.total_tokens))?;
    if let Some(prompts) = &lok.agent_prompts {
        writeln!(w, "  prompts:  {} custom", prompts.len())?;
    }
    if !s.phases.is_empty() {
        writeln!(w)?;
        writeln!(w, "Phases:")?;
        let width = s.phases.iter().map(|p| p.name.chars().count().max(p.agent_id.len())).max().unwrap_or(0);
        for (i, p) in s.phases.iter().enumerate() {
            let name = if p.name.is_empty() { &p.agent_id } else { &p.name };
            writeln!(
                w,
                "  {}. {:width$}  {:9}  {:>8}  {:>8} tokens  {}",
                i + 1,
                safe(name),
                safe(&p.status),
                duration(p.duration_ms),
                thousands(p.tokens_used),
                size(p.output.len() as u64),
            )?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_as_people_write_them() {
        assert_eq!(thousands(49793), "49,793");
        assert_eq!(thousands(100), "100");
        assert_eq!(duration(365_295), "6m 05s");
        assert_eq!(duration(30_052), "30.1s");
        assert_eq!(size(2_408_141), "2.3 MB");
        assert_eq!(utc(1_776_042_774_000), "2026-04-13T01:12:54Z");
    }
}
