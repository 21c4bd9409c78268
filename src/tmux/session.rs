//! Capture of a whole tmux session: every window with its layout and every pane with its
//! directory, shell, history, scrollback, foreground program and agent conversation.
//!
//! One `list-panes -s` names every pane; names and titles, which may hold any character,
//! come from their own queries with the free text last on each line.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, anyhow, bail};

use super::{Server, process, running};
use crate::lok::tmux::{self as format, Foreground, Pane, PaneAgent, TmuxSession, Window};
use crate::probe::Probe;
use crate::redact::{Report, redact_report};

/// One pane as tmux lists it.
struct Listed {
    window_index: u32,
    window_active: bool,
    zoomed: bool,
    layout: String,
    index: u32,
    active: bool,
    id: String,
    pid: u32,
    cwd: PathBuf,
}

const PANES: &str = "#{window_index}\t#{window_active}\t#{window_zoomed_flag}\t#{window_layout}\t#{pane_index}\t#{pane_active}\t#{pane_id}\t#{pane_pid}\t#{pane_current_path}";

impl Listed {
    fn parse(line: &str) -> Option<Listed> {
        let f: Vec<&str> = line.splitn(9, '\t').collect();
        let [wi, wa, z, layout, pi, pa, id, pid, cwd] = f.as_slice() else { return None };
        Some(Listed {
            window_index: wi.parse().ok()?,
            window_active: *wa == "1",
            zoomed: *z == "1",
            layout: layout.to_string(),
            index: pi.parse().ok()?,
            active: *pa == "1",
            id: id.to_string(),
            pid: pid.parse().ok()?,
            cwd: PathBuf::from(cwd),
        })
    }
}

/// What a capture found, beside the object itself.
pub struct Captured {
    pub session: TmuxSession,
    /// The pane `shell` describes.
    pub active_pane: String,
    pub warnings: Vec<String>,
    /// Panes whose agent's id was found, as (pane label, agent, id).
    pub agents: Vec<(String, running::Running)>,
}

/// The session `target` (a session name; default the one of `$TMUX_PANE`).
pub fn capture(
    probe: &Probe,
    server: &Server,
    target: Option<&str>,
    deadline: Duration,
    report: &mut Report,
) -> anyhow::Result<Captured> {
    let name = session_name(server, probe, target, deadline)?;
    let exact = format!("={name}");
    let listed: Vec<Listed> = server
        .run(&["list-panes", "-s", "-t", &exact, "-F", PANES], deadline)
        .context("could not list the session's panes")?
        .lines()
        .filter_map(Listed::parse)
        .collect();
    if listed.is_empty() {
        bail!("tmux listed no panes in session {}", crate::sanitize::for_terminal(&name));
    }
    let titles =
        keyed(server, &["list-panes", "-s", "-t", &exact, "-F", "#{pane_id}\t#{pane_title}"], deadline);
    let windows_named = keyed(
        server,
        &["list-windows", "-t", &exact, "-F", "#{window_index}\t#{automatic-rename}\t#{window_name}"],
        deadline,
    );
    let active = listed
        .iter()
        .find(|p| p.window_active && p.active)
        .or_else(|| listed.first())
        .ok_or_else(|| anyhow!("no pane"))?;
    let active_pane = active.id.clone();
    let root = root_of(&active.cwd, &listed, probe);
    let tree = process::children();
    let mut warnings = Vec::new();
    let mut agents = Vec::new();
    let mut windows: Vec<Window> = Vec::new();
    for l in &listed {
        if windows.last().is_none_or(|w| w.index != l.window_index) {
            let (auto, wname) = windows_named
                .get(&l.window_index.to_string())
                .and_then(|v| v.split_once('\t'))
                .map(|(a, n)| (a == "1", n.to_string()))
                .unwrap_or_default();
            windows.push(Window {
                index: l.window_index,
                name: format::capped(&wname),
                active: l.window_active,
                zoomed: l.zoomed,
                automatic_rename: auto,
                layout: l.layout.clone(),
                panes: Vec::new(),
                extra: Default::default(),
            });
        }
        let label = format!("{}.{}", l.window_index, l.index);
        let title = titles.get(&l.id).cloned().unwrap_or_default();
        let is_shell_pane = l.id == active_pane;
        let mut pane = pane_of(probe, server, l, &root, &title, is_shell_pane, &tree, deadline, report)?;
        if let Some(found) = running::detect(&process::foreground(l.pid, &tree, 3)) {
            if let Some(why) = &found.note {
                warnings.push(format!("pane {label}: {} runs here, but {why}", found.agent.name()));
            }
            pane.agent = Some(PaneAgent {
                id: found.agent.id().to_string(),
                session_id: found.session_id.clone(),
                how: found.how.map(|h| h.as_str().to_string()),
                note: found.note.clone(),
                element: None,
            });
            agents.push((label, found));
        }
        windows.last_mut().expect("a window was pushed").panes.push(pane);
    }
    if windows.len() > format::MAX_WINDOWS || windows.iter().any(|w| w.panes.len() > format::MAX_PANES) {
        bail!(
            "the session has more than {} windows or panes in a window; lokust keeps at most that many",
            format::MAX_WINDOWS
        );
    }
    let session = TmuxSession {
        format: format::FORMAT,
        name: format::capped(&name),
        root: root.to_string_lossy().into_owned(),
        windows,
        extra: Default::default(),
    };
    Ok(Captured { session, active_pane, warnings, agents })
}

/// The name of session `target`, or of the session the current pane is in.
fn session_name(
    server: &Server,
    probe: &Probe,
    target: Option<&str>,
    deadline: Duration,
) -> anyhow::Result<String> {
    let target = match target {
        // A session id (`$3`, as the key binding passes) or an exact name.
        Some(t) if t.starts_with('$') => Some(format!("{t}:")),
        Some(t) => Some(format!("={t}:")),
        None => probe.var("TMUX_PANE").map(str::to_string),
    };
    server
        .query(target.as_deref(), "#{session_name}", deadline)
        .context("could not ask tmux about the session")?
        .ok_or_else(|| match target {
            Some(t) => anyhow!(
                "the tmux server has no session {}",
                crate::sanitize::for_terminal(t.trim_start_matches('=').trim_end_matches(':'))
            ),
            None => anyhow!("not inside tmux: name the session with -t SESSION"),
        })
}

/// Lines `KEY\tREST` of a tmux listing, by key; empty when tmux cannot answer.
fn keyed(server: &Server, args: &[&str], deadline: Duration) -> HashMap<String, String> {
    let out = server.run(args, deadline).unwrap_or_default();
    out.lines().filter_map(|l| l.split_once('\t')).map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

/// The git top level of the active pane's directory; else the deepest directory holding
/// every pane's, when that is below the home directory; else the active pane's.
fn root_of(active: &Path, listed: &[Listed], probe: &Probe) -> PathBuf {
    if let Some(top) = active.ancestors().find(|d| d.join(".git").symlink_metadata().is_ok()) {
        return top.to_path_buf();
    }
    let mut common = active.to_path_buf();
    for l in listed {
        while !l.cwd.starts_with(&common) {
            if !common.pop() {
                break;
            }
        }
    }
    match probe.home() {
        Some(home) if common.starts_with(&home) && common != home => common,
        _ => active.to_path_buf(),
    }
}

#[allow(clippy::too_many_arguments)]
fn pane_of(
    probe: &Probe,
    server: &Server,
    l: &Listed,
    root: &Path,
    title: &str,
    is_shell_pane: bool,
    tree: &HashMap<u32, Vec<u32>>,
    deadline: Duration,
    report: &mut Report,
) -> anyhow::Result<Pane> {
    let cwd_rel = l.cwd.strip_prefix(root).ok().map(|r| {
        let r = r.to_string_lossy();
        if r.is_empty() { ".".to_string() } else { r.into_owned() }
    });
    let shell = super::process_name(l.pid).filter(|n| crate::shell::Shell::from_name(n).is_some());
    let fg = process::foreground(l.pid, tree, 0);
    let foreground = fg.first().map(|p| {
        let line = redact_report(&p.argv.join(" "), report).into_owned();
        Foreground {
            argv0: p.argv.first().map(|a| a.rsplit('/').next().unwrap_or(a).to_string()).unwrap_or_default(),
            argv: line.split(' ').map(str::to_string).collect(),
        }
    });
    let (history_tail, scrollback, cut) = if is_shell_pane {
        // `shell` holds the active pane's own; not written twice.
        (Vec::new(), None, 0)
    } else {
        let history = super::hook::read_live(probe, l.pid)
            .map(|live| {
                live.shell.history_tail.iter().map(|h| redact_report(h, report).into_owned()).collect()
            })
            .unwrap_or_default();
        let text = super::capture_scrollback(server, &l.id, deadline)
            .with_context(|| format!("could not read the scrollback of pane {}", l.id))?;
        let (text, cut) = tail(&text, format::MAX_SCROLLBACK);
        (history, Some(super::encode_scrollback(text, report)), cut)
    };
    Ok(Pane {
        index: l.index,
        active: l.active,
        cwd: l.cwd.to_string_lossy().into_owned(),
        cwd_rel,
        title: format::capped(title),
        shell,
        foreground,
        agent: None,
        history_tail,
        scrollback,
        scrollback_cut_bytes: cut as u64,
        extra: Default::default(),
    })
}

/// The last `max` bytes of `text`, from a line start, and how many bytes were cut.
pub(crate) fn tail(text: &str, max: usize) -> (&str, usize) {
    if text.len() <= max {
        return (text, 0);
    }
    let mut start = text.len() - max;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    let start = text[start..].find('\n').map_or(start, |n| start + n + 1);
    (&text[start..], start)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_listing_is_parsed_with_tabs_in_the_path() {
        let l = Listed::parse("1\t1\t0\tcf3a,200x50,0,0,0\t2\t1\t%7\t4242\t/home/a\tb").unwrap();
        assert_eq!((l.window_index, l.index, l.id.as_str(), l.pid), (1, 2, "%7", 4242));
        assert_eq!(l.cwd, PathBuf::from("/home/a\tb"));
        assert!(l.window_active && l.active && !l.zoomed);
        assert!(Listed::parse("1\t1").is_none());
    }

    #[test]
    fn a_long_scrollback_keeps_its_end_from_a_line_start() {
        assert_eq!(tail("abc\n", 10), ("abc\n", 0));
        assert_eq!(tail("aaaa\nbbbb\ncc\n", 6), ("cc\n", 10));
        let (kept, cut) = tail("ééééé\nx\n", 5);
        assert_eq!((kept, cut), ("x\n", 11));
    }
}
