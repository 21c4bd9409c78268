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

/// The most scrollback text a rebuild shows in all its panes.
const MAX_REPLAY_TOTAL: usize = 64 << 20;

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
    // The active pane's scrollback is in `shell`: one pane shows it, however many the file
    // marks active.
    let mut active_given = false;
    let mut replay_budget = MAX_REPLAY_TOTAL;
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
            } else if p.active && w.active && !active_given {
                active_given = true;
                active_text.to_string()
            } else {
                String::new()
            };
            // Escaping can grow a hostile text sixfold: each pane shows its last MiB (the
            // capture's own cut: the last lines that fit), and the session at most
            // MAX_REPLAY_TOTAL.
            let max = format::MAX_SCROLLBACK.min(replay_budget);
            let (kept, cut) = super::session::tail(&scrollback, max);
            if cut > 0 && max == replay_budget {
                let total = crate::human::size(MAX_REPLAY_TOTAL as u64);
                warnings.push(format!(
                    "{}: the session's scrollback passed {total}; later panes show none",
                    label(p)
                ));
            }
            let scrollback = kept.to_string();
            replay_budget -= scrollback.len();
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
/// `press_enter`. A failure or Ctrl-C part way removes the half-built session, by its id:
/// never a session someone else created under the same name meanwhile.
pub fn apply(
    probe: &Probe,
    server: &Server,
    plan: &Plan,
    wanted: &str,
    shell: &str,
    press_enter: bool,
    deadline: Duration,
) -> anyhow::Result<String> {
    let mut made = None;
    let result = build(probe, server, plan, wanted, shell, press_enter, deadline, &mut made);
    match (result, made) {
        (Ok(()), Some(m)) => Ok(m.name),
        (Ok(()), None) => Err(anyhow!("the session was not created")),
        (Err(e), made) => {
            if let Some(m) = made {
                let _ = server.run(&["kill-session", "-t", &m.id], deadline);
            }
            Err(e)
        }
    }
}

/// The session this import created.
struct Made {
    name: String,
    /// `$3`: names can be taken by others, ids cannot.
    id: String,
}

/// What tmux prints of a pane it created.
const CREATED: &str = "#{session_id}\t#{window_id}\t#{pane_id}";

#[allow(clippy::too_many_arguments)]
fn build(
    probe: &Probe,
    server: &Server,
    plan: &Plan,
    wanted: &str,
    shell: &str,
    press_enter: bool,
    deadline: Duration,
    made: &mut Option<Made>,
) -> anyhow::Result<()> {
    let mut staged = Vec::new();
    let mut active_window = None;
    for (n, w) in plan.windows.iter().enumerate() {
        let mut pane_ids: Vec<String> = Vec::new();
        let mut window_id = String::new();
        for (i, p) in w.panes.iter().enumerate() {
            if crate::interrupt::interrupted() {
                return Err(
                    anyhow::Error::new(crate::interrupt::Interrupted).context("the session was not created")
                );
            }
            let mut args: Vec<OsString> = match (n, i, made.as_ref()) {
                (_, 0, Some(m)) => {
                    ["new-window", "-d", "-t", &format!("{}:", m.id)].map(OsString::from).to_vec()
                }
                (_, 0, None) => Vec::new(),
                _ => ["split-window", "-d", "-t", pane_ids[0].as_str()].map(OsString::from).to_vec(),
            };
            if i == 0
                && let Some(wname) = &w.name
            {
                args.extend(["-n".into(), literal(wname).into()]);
            }
            args.extend(["-P".into(), "-F".into(), CREATED.into(), "-c".into()]);
            args.push(literal(&p.dir.to_string_lossy()).into());
            let replay =
                if p.replay.is_empty() { None } else { Some(super::replay_text_file(probe, &p.replay)?) };
            if let Some(file) = &replay {
                args.extend(super::replay_command(file, shell));
            }
            let created = if made.is_none() {
                let size = w.layout.as_deref().and_then(layout::size).unwrap_or((200, 50));
                new_session(server, wanted, size, &args, deadline).map(|(name, out)| {
                    let id = out.split('\t').next().unwrap_or_default().to_string();
                    *made = Some(Made { name, id });
                    out
                })
            } else {
                server.run(&args, deadline).map_err(anyhow::Error::new)
            };
            let out = match created {
                Ok(out) => out,
                Err(e) => {
                    if let Some(f) = replay {
                        let _ = std::fs::remove_file(f);
                    }
                    return Err(e.context(format!("could not create pane {}.{}", w.index, p.index)));
                }
            };
            let mut fields = out.trim().split('\t').skip(1);
            window_id = fields.next().unwrap_or_default().to_string();
            let id = fields.next().unwrap_or_default().to_string();
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
        if w.active {
            active_window = Some(window_id);
        }
    }
    if let Some(window) = active_window {
        let _ = server.run(&["select-window", "-t", &window], deadline);
    }
    stage(server, &staged, press_enter, deadline);
    Ok(())
}

/// The session's first pane: under `wanted`, else `wanted-2`… when that name is taken,
/// also when someone takes it between the check and the creation.
fn new_session(
    server: &Server,
    wanted: &str,
    (x, y): (u32, u32),
    rest: &[OsString],
    deadline: Duration,
) -> anyhow::Result<(String, String)> {
    let mut last = None;
    for _ in 0..20 {
        let name = super::free_session_name(server, wanted, deadline)?;
        let mut args: Vec<OsString> =
            ["new-session", "-d", "-s", &literal(&name), "-x", &x.to_string(), "-y", &y.to_string()]
                .map(OsString::from)
                .to_vec();
        args.extend(rest.iter().cloned());
        match server.run(&args, deadline) {
            Ok(out) => return Ok((name, out)),
            Err(crate::exec::ExecError::Failed { stderr, .. }) if stderr.contains("duplicate session") => {
                last = Some(stderr);
            }
            Err(e) => return Err(e.into()),
        }
    }
    Err(anyhow!("could not find a free session name: {}", last.unwrap_or_default().trim()))
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

/// Types each resume command on its pane's prompt, as keys, never as a command tmux runs:
/// once the pane's replay has handed over to the shell and the pane has been still for a
/// moment (the prompt drawn), so the keys reach the prompt and not the replay or a
/// start-up script.
fn stage(server: &Server, staged: &[(String, String)], press_enter: bool, deadline: Duration) {
    let until = Instant::now() + Duration::from_secs(10);
    for (pane, cmd) in staged {
        let mut last_screen = None;
        let mut still_since = Instant::now();
        while Instant::now() < until {
            let pid = server
                .query(Some(pane), "#{pane_pid}", deadline)
                .ok()
                .flatten()
                .and_then(|pid| pid.trim().parse::<u32>().ok());
            let shell_runs = pid.and_then(super::process::read).is_some_and(|p| {
                let replaying =
                    p.argv.get(1).is_some_and(|a| a == "-c") && p.argv.get(3).is_some_and(|a| a == "lokust");
                !replaying
                    && super::process_name(p.pid)
                        .is_some_and(|n| crate::shell::Shell::from_name(&n).is_some())
            });
            let screen = server.run(&["capture-pane", "-p", "-t", pane], deadline).ok();
            if screen != last_screen {
                last_screen = screen;
                still_since = Instant::now();
            } else if shell_runs && still_since.elapsed() >= Duration::from_millis(300) {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = server.run(&["send-keys", "-t", pane, "-l", cmd], deadline);
        if press_enter {
            let _ = server.run(&["send-keys", "-t", pane, "Enter"], deadline);
        }
    }
}

/// `s` as tmux takes it literally where it expands formats (names, titles, `-c`): `#`
/// doubled (`#(command)` would run), except before `[`, which tmux keeps as it is; and a
/// final `;`, which would end the tmux command, escaped.
pub fn literal(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 4);
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        out.push(c);
        if c == '#' && chars.peek() != Some(&'[') {
            out.push('#');
        }
    }
    if out.ends_with(';') {
        out.insert(out.len() - 1, '\\');
    }
    out
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

    fn session(panes: usize) -> TmuxSession {
        let pane = |i: usize| format::Pane {
            index: i as u32,
            active: true,
            cwd: "/old/app".into(),
            cwd_rel: Some(".".into()),
            title: String::new(),
            shell: None,
            foreground: None,
            agent: None,
            history_tail: Vec::new(),
            scrollback: None,
            scrollback_cut_bytes: 0,
            extra: Default::default(),
        };
        TmuxSession {
            format: 1,
            name: "s".into(),
            root: "/old/app".into(),
            windows: vec![format::Window {
                index: 0,
                name: "w".into(),
                active: true,
                zoomed: false,
                automatic_rename: false,
                layout: "bad".into(),
                panes: (0..panes).map(pane).collect(),
                extra: Default::default(),
            }],
            extra: Default::default(),
        }
    }

    #[test]
    fn the_active_scrollback_is_shown_once_however_many_panes_claim_it() {
        let dir = tempfile::tempdir().unwrap();
        let mapping = Mapping { old_root: "/old/app", to: Some(dir.path()), maps: &[] };
        let plan = plan(&session(5), &mapping, "ACTIVE-TEXT\n", false, &|_, _| false).unwrap();
        let shown = plan.windows[0].panes.iter().filter(|p| p.replay.contains("ACTIVE-TEXT")).count();
        assert_eq!(shown, 1);
        assert!(plan.windows[0].layout.is_none() && plan.warnings.iter().any(|w| w.contains("tiled")));
    }

    #[test]
    fn formats_in_names_are_taken_literally() {
        assert_eq!(literal("a#(touch x)#{pane_id}"), "a##(touch x)##{pane_id}");
        assert_eq!(literal("w#[fg=red]"), "w#[fg=red]");
        assert_eq!(literal("##["), "###[");
        assert_eq!(literal("build;"), "build\\;");
        assert_eq!(literal("a\\;"), "a\\\\;");
        assert_eq!(literal("a;b"), "a;b");
    }
}
