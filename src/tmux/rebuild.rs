//! Rebuilding a whole tmux session from a file's `tmux_session`: a plan first (every
//! pane's directory at the new path, each layout checked, what each agent pane will
//! offer), printed as it is by `--dry-run`, then applied by creating a new session.
//!
//! Nothing of the file is run or typed. The only command ever put on a pane's prompt is
//! an agent's resume, built by lokust from the agent's fixed form and an id of the
//! agent's own grammar that exists on this machine; it waits for the user's Enter unless
//! `--resume-agents` was given for a file sealed to the receiver. Every name, title and
//! path handed to tmux has `#` doubled, since tmux expands formats (and `#(command)`) in
//! them.

use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, anyhow};

use super::{Server, layout};
use crate::agent::known::Known;
use crate::lok::tmux::{self as format, TmuxSession};
use crate::probe::Probe;
use crate::sanitize;

/// What a rebuild will create.
#[derive(Debug)]
pub struct Plan {
    pub windows: Vec<WindowPlan>,
    pub warnings: Vec<String>,
}

#[derive(Debug)]
pub struct WindowPlan {
    pub index: u32,
    /// `None`: tmux names it after its program (automatic rename).
    pub name: Option<String>,
    /// `None`: the saved layout failed its checks, and panes are tiled.
    pub layout: Option<String>,
    pub zoomed: bool,
    pub active: bool,
    pub panes: Vec<PanePlan>,
}

#[derive(Debug)]
pub struct PanePlan {
    pub index: u32,
    pub active: bool,
    pub dir: PathBuf,
    pub title: String,
    /// Shown in the pane before its shell starts: the scrollback and lokust's notes, each
    /// line made safe for a terminal.
    pub replay: String,
    /// The resume command put on the pane's prompt.
    pub staged: Option<String>,
    /// What the pane ran, or why no resume is offered, in words.
    pub note: Option<String>,
}

/// How pane directories map: `root → to`, then each `--map OLD=NEW`.
pub struct Mapping<'a> {
    /// The session's root on the sending machine.
    pub old_root: &'a str,
    pub to: Option<&'a Path>,
    pub maps: &'a [(PathBuf, PathBuf)],
}

/// Whether an agent's conversation is (or, for a dry run, will be) on this machine.
pub type Present<'a> = &'a dyn Fn(Known, &str) -> bool;

/// The plan for `ts`. `active_text` is the active pane's scrollback (kept in `shell`).
pub fn plan(
    ts: &TmuxSession,
    mapping: &Mapping,
    active_text: &str,
    no_scrollback: bool,
    present: Present,
) -> anyhow::Result<Plan> {
    let mut warnings = Vec::new();
    let root =
        mapping.to.map(Path::to_path_buf).or_else(|| Some(PathBuf::from(&ts.root)).filter(|r| r.is_dir()));
    let fallback = root.clone().unwrap_or_else(|| PathBuf::from("/"));
    let mut windows = Vec::new();
    for w in &ts.windows {
        let label = |p: &format::Pane| format!("pane {}.{}", w.index, p.index);
        let layout = match layout::panes(&w.layout) {
            Ok(n) if n == w.panes.len() => Some(w.layout.clone()),
            Ok(n) => {
                warnings.push(format!(
                    "window {}: its layout holds {n} panes, not {}; tiled instead",
                    w.index,
                    w.panes.len()
                ));
                None
            }
            Err(why) => {
                warnings.push(format!("window {}: its layout is refused ({why}); tiled instead", w.index));
                None
            }
        };
        let mut panes = Vec::new();
        for p in &w.panes {
            let dir = pane_dir(p, mapping, root.as_deref(), &fallback, &mut warnings, &label(p));
            let scrollback = if no_scrollback {
                String::new()
            } else if let Some(sb) = &p.scrollback {
                super::for_terminal_lines(&super::decode_scrollback(sb)?)
            } else if p.active && w.active {
                active_text.to_string()
            } else {
                String::new()
            };
            let (staged, note) = offer(p, present);
            let mut replay = scrollback;
            if let Some(n) = &note {
                replay.push_str(&format!("[lokust: {}]\n", sanitize::for_terminal(n)));
            }
            panes.push(PanePlan {
                index: p.index,
                active: p.active,
                dir,
                title: sanitize::for_terminal(&format::capped(&p.title)).into_owned(),
                replay,
                staged,
                note,
            });
        }
        windows.push(WindowPlan {
            index: w.index,
            name: (!w.automatic_rename)
                .then(|| sanitize::for_terminal(&format::capped(&w.name)).into_owned()),
            layout,
            zoomed: w.zoomed,
            active: w.active,
            panes,
        });
    }
    Ok(Plan { windows, warnings })
}

/// The pane's directory here: an `--map` of its old path, else its place under the root,
/// else its old path when that exists; never outside the root through `..` or a link.
fn pane_dir(
    p: &format::Pane,
    mapping: &Mapping,
    root: Option<&Path>,
    fallback: &Path,
    warnings: &mut Vec<String>,
    label: &str,
) -> PathBuf {
    let old = Path::new(&p.cwd);
    // The longest OLD wins, the session's own root (`root → --to`) counted among them.
    let root_len = if p.cwd_rel.is_some() && root.is_some() { mapping.old_root.len() } else { 0 };
    let mapped = mapping
        .maps
        .iter()
        .filter(|(from, _)| old.is_absolute() && old.starts_with(from) && from.as_os_str().len() > root_len)
        .max_by_key(|(from, _)| from.as_os_str().len())
        .map(|(from, to)| to.join(old.strip_prefix(from).unwrap_or(Path::new(""))));
    if let Some(dir) = mapped {
        if dir.is_dir() {
            return dir;
        }
        warnings.push(format!("{label}: {} does not exist; it starts in {}", shown(&dir), shown(fallback)));
        return fallback.to_path_buf();
    }
    if let (Some(rel), Some(root)) = (&p.cwd_rel, root) {
        let plain =
            Path::new(rel).components().all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
        if !plain {
            warnings.push(format!(
                "{label}: its directory {} climbs out of the session's root; it starts in {}",
                sanitize::for_terminal(rel),
                shown(root)
            ));
            return root.to_path_buf();
        }
        let dir = if rel == "." { root.to_path_buf() } else { root.join(rel) };
        if !root.exists() {
            // A dry run before the root is created: nothing to check yet.
            return dir;
        }
        let inside = match (std::fs::canonicalize(&dir), std::fs::canonicalize(root)) {
            (Ok(d), Ok(r)) => d.starts_with(r) && d.is_dir(),
            _ => false,
        };
        if inside {
            return dir;
        }
        warnings.push(format!(
            "{label}: {} is not a directory here; it starts in {}",
            shown(&dir),
            shown(root)
        ));
        return root.to_path_buf();
    }
    if mapping.to.is_none() && old.is_absolute() && old.is_dir() {
        return old.to_path_buf();
    }
    warnings.push(format!(
        "{label}: its directory {} is outside the session's root and not mapped (--map OLD=NEW); it starts in {}",
        sanitize::for_terminal(&p.cwd),
        shown(fallback)
    ));
    fallback.to_path_buf()
}

fn shown(p: &Path) -> String {
    sanitize::for_terminal(&p.to_string_lossy()).into_owned()
}

/// The resume command offered in an agent pane, or what the pane ran, in words.
fn offer(p: &format::Pane, present: Present) -> (Option<String>, Option<String>) {
    let program = || {
        p.foreground.as_ref().map(|f| {
            let line = f.argv.join(" ");
            let line: String = line.chars().take(format::MAX_NAME).collect();
            format!("this pane was running: {line} (not restarted)")
        })
    };
    let Some(agent) = &p.agent else { return (None, program()) };
    let Some(known) = Known::by_id(&agent.id) else { return (None, program()) };
    let Some(id) = agent.session_id.as_deref() else {
        let why = agent.note.as_deref().unwrap_or("its conversation was not recorded");
        return (None, Some(format!("this pane was running {}; {why}", known.name())));
    };
    match known.resume_command(id) {
        Some(cmd) if present(known, id) => (Some(cmd), None),
        Some(_) => (
            None,
            Some(format!("{} conversation {id} is not on this machine; nothing to resume", known.name())),
        ),
        None => (
            None,
            Some(format!("this pane was running {}; its conversation id is not of its form", known.name())),
        ),
    }
}

/// Creates the session `wanted` (or `wanted-2`…; an existing session is never touched)
/// from `plan`, and puts each staged resume on its pane's prompt, pressing Enter only with
/// `press_enter`. A failure or Ctrl-C part way removes the half-built session.
pub fn apply(
    probe: &Probe,
    server: &Server,
    plan: &Plan,
    wanted: &str,
    shell: &str,
    press_enter: bool,
    deadline: Duration,
) -> anyhow::Result<String> {
    let name = super::free_session_name(server, wanted, deadline)?;
    let result = build(probe, server, plan, &name, shell, press_enter, deadline);
    if result.is_err() {
        let _ = server.run(&["kill-session", "-t", &format!("={name}")], deadline);
    }
    result.map(|()| name)
}

fn build(
    probe: &Probe,
    server: &Server,
    plan: &Plan,
    name: &str,
    shell: &str,
    press_enter: bool,
    deadline: Duration,
) -> anyhow::Result<()> {
    let mut staged = Vec::new();
    for (n, w) in plan.windows.iter().enumerate() {
        let mut pane_ids: Vec<String> = Vec::new();
        for (i, p) in w.panes.iter().enumerate() {
            if crate::interrupt::interrupted() {
                return Err(
                    anyhow::Error::new(crate::interrupt::Interrupted).context("the session was not created")
                );
            }
            let mut args: Vec<OsString> = match (n, i) {
                (0, 0) => {
                    let (x, y) = w.layout.as_deref().and_then(layout::size).unwrap_or((200, 50));
                    ["new-session", "-d", "-s", &literal(name), "-x", &x.to_string(), "-y", &y.to_string()]
                        .map(OsString::from)
                        .to_vec()
                }
                (_, 0) => ["new-window", "-d", "-t", &format!("={name}:")].map(OsString::from).to_vec(),
                _ => ["split-window", "-d", "-t", pane_ids[0].as_str()].map(OsString::from).to_vec(),
            };
            if i == 0
                && let Some(wname) = &w.name
            {
                args.extend(["-n".into(), literal(wname).into()]);
            }
            args.extend(["-P".into(), "-F".into(), "#{pane_id}".into(), "-c".into()]);
            args.push(literal(&p.dir.to_string_lossy()).into());
            let replay =
                if p.replay.is_empty() { None } else { Some(super::replay_text_file(probe, &p.replay)?) };
            if let Some(file) = &replay {
                args.extend(super::replay_command(file, shell));
            }
            let made = server.run(&args, deadline);
            let id = match made {
                Ok(out) => out.trim().to_string(),
                Err(e) => {
                    if let Some(f) = replay {
                        let _ = std::fs::remove_file(f);
                    }
                    return Err(anyhow::Error::new(e)
                        .context(format!("could not create pane {}.{}", w.index, p.index)));
                }
            };
            if i > 0 {
                // Room for the next split; the saved layout is applied at the end.
                let _ = server.run(&["select-layout", "-t", &pane_ids[0], "tiled"], deadline);
            }
            if !p.title.is_empty() {
                let _ = server.run(&["select-pane", "-t", &id, "-T", &literal(&p.title)], deadline);
            }
            if let Some(cmd) = &p.staged {
                staged.push((id.clone(), cmd.clone()));
            }
            pane_ids.push(id);
        }
        finish_window(server, w, &pane_ids, deadline)?;
    }
    if let Some((w, _)) = plan.windows.iter().enumerate().find(|(_, w)| w.active) {
        let _ = server.run(&["select-window", "-t", &format!("={name}:{w}")], deadline);
    }
    stage(server, &staged, press_enter, deadline);
    Ok(())
}

/// The saved layout (or tiled), the active pane, and the zoom.
fn finish_window(
    server: &Server,
    w: &WindowPlan,
    panes: &[String],
    deadline: Duration,
) -> anyhow::Result<()> {
    let first = &panes[0];
    let layout = w.layout.as_deref().unwrap_or("tiled");
    if server.run(&["select-layout", "-t", first, layout], deadline).is_err() {
        server
            .run(&["select-layout", "-t", first, "tiled"], deadline)
            .with_context(|| format!("could not lay out window {}", w.index))?;
    }
    let active = w.panes.iter().position(|p| p.active).unwrap_or(0);
    let _ = server.run(&["select-pane", "-t", &panes[active]], deadline);
    if w.zoomed && panes.len() > 1 {
        let _ = server.run(&["resize-pane", "-Z", "-t", &panes[active]], deadline);
    }
    Ok(())
}

/// Types each resume command on its pane's prompt once the pane's shell runs (after the
/// scrollback replay), as keys, never as a command tmux runs.
fn stage(server: &Server, staged: &[(String, String)], press_enter: bool, deadline: Duration) {
    let until = Instant::now() + Duration::from_secs(5);
    for (pane, cmd) in staged {
        while Instant::now() < until {
            let shell_runs = server
                .query(Some(pane), "#{pane_pid}", deadline)
                .ok()
                .flatten()
                .and_then(|pid| pid.trim().parse::<u32>().ok())
                .and_then(super::process_name)
                .is_some_and(|n| crate::shell::Shell::from_name(&n).is_some());
            if shell_runs {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = server.run(&["send-keys", "-t", pane, "-l", cmd], deadline);
        if press_enter {
            let _ = server.run(&["send-keys", "-t", pane, "Enter"], deadline);
        }
    }
}

/// `s` as tmux takes it literally where it expands formats (names, titles, `-c`).
pub fn literal(s: &str) -> String {
    s.replace('#', "##")
}

/// The plan in words, for `--dry-run` and after the import.
pub fn describe(plan: &Plan) -> Vec<String> {
    let mut lines = Vec::new();
    for w in &plan.windows {
        let name = w.name.as_deref().unwrap_or("(named by its program)");
        let mut flags = Vec::new();
        if w.active {
            flags.push("active");
        }
        if w.zoomed {
            flags.push("zoomed");
        }
        if w.layout.is_none() {
            flags.push("tiled");
        }
        let flags = if flags.is_empty() { String::new() } else { format!(" ({})", flags.join(", ")) };
        lines.push(format!("window {} {}{flags}", w.index, name));
        for p in &w.panes {
            lines.push(format!("  pane {} in {}", p.index, shown(&p.dir)));
            if let Some(cmd) = &p.staged {
                lines.push(format!("    on its prompt: {cmd}"));
            }
            if let Some(note) = &p.note {
                lines.push(format!("    {}", sanitize::for_terminal(note)));
            }
        }
    }
    lines
}

/// Refuses `--resume-agents` unless the file opened with one of the receiver's identities.
pub fn check_resume_agents(keys: &crate::seal::Keys, source: &Path) -> anyhow::Result<()> {
    if keys.opened_by_identity() {
        return Ok(());
    }
    Err(anyhow!(
        "--resume-agents runs the agents of {} without asking, and is only for a file sealed to one of your \
         own keys; this one is not. Nothing was restored (import it without --resume-agents: each resume \
         waits on its pane's prompt for your Enter)",
        crate::lok::display_name(source)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_in_names_are_taken_literally() {
        assert_eq!(literal("a#(touch x)#{pane_id}"), "a##(touch x)##{pane_id}");
    }
}
