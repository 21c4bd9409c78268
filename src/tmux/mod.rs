//! lokust-tmux: saving a pane as a `.lok` with its scrollback (export), bringing a saved
//! pane back as a new tmux session (import), and the key binding that runs export.
//!
//! Everything is asked of the tmux server itself, with a deadline, so export works from
//! a key binding: no terminal, tmux's environment, the pane's directory and shell taken
//! from tmux and the pane's process. tmux-resurrect's most filed problems are the guide:
//! a save is never empty or half written (atomic, and only after every step succeeded),
//! each pane keeps its own history (the prompt hook's live snapshot of that very shell),
//! nothing depends on the status line, and import works under another home directory.

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, anyhow, bail};
use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;

pub mod layout;
pub mod process;
pub mod rebuild;
pub mod running;
pub mod session;

use crate::exec::ExecError;
use crate::fsutil;
use crate::hook;
use crate::lok::tmux as format;
use crate::lok::{Lok, Scrollback, ShellLok};
use crate::probe::Probe;
use crate::redact::{Report, redact_report};
use crate::sanitize;
use crate::snapshot::{self, Options, Snapshot};

/// The key bound after the prefix when `@lokust-export-key` is not set: free in tmux's
/// default key table (tmux 3.3), and not tmux-resurrect's C-s / C-r either.
pub const DEFAULT_KEY: &str = "C-e";
/// The key for a whole session's export: free in tmux's default key table too.
pub const DEFAULT_SESSION_KEY: &str = "M-e";

/// The `format` of `shell.tmux_scrollback`.
pub const SCROLLBACK_FORMAT: &str = "text+base64";

pub use crate::capture::multiplexer::Server;

/// What tmux says about one pane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pane {
    pub session: String,
    pub session_id: String,
    pub window_index: String,
    pub pane_index: String,
    pub id: String,
    /// The process tmux started in the pane: normally the shell.
    pub pid: u32,
    pub socket_path: String,
    pub server_pid: String,
    pub cwd: PathBuf,
}

const PANE_FORMAT: &str = "#{session_name}\t#{session_id}\t#{window_index}\t#{pane_index}\t#{pane_id}\t#{pane_pid}\t#{pid}\t#{socket_path}\t#{pane_current_path}";

impl Pane {
    fn parse(line: &str) -> Option<Pane> {
        let mut f = line.splitn(9, '\t');
        let mut next = || f.next().map(str::to_string);
        let (session, session_id, window_index, pane_index, id, pid, server_pid, socket_path, cwd) =
            (next()?, next()?, next()?, next()?, next()?, next()?, next()?, next()?, next()?);
        if session.is_empty() || id.is_empty() {
            return None;
        }
        Some(Pane {
            session,
            session_id,
            window_index,
            pane_index,
            id,
            pid: pid.parse().ok()?,
            socket_path,
            server_pid,
            cwd: PathBuf::from(cwd),
        })
    }

    /// The `$TMUX` value a shell in this pane sees.
    pub fn tmux_var(&self) -> String {
        format!("{},{},{}", self.socket_path, self.server_pid, self.session_id.trim_start_matches('$'))
    }

    /// `work-1.0`, for file names.
    pub fn label(&self) -> String {
        format!("{}-{}.{}", file_safe(&self.session), self.window_index, self.pane_index)
    }

    /// `work`, for the file of a whole session.
    pub fn session_label(&self) -> String {
        file_safe(&self.session)
    }
}

/// The pane `target` (a tmux target; default `$TMUX_PANE`, else tmux's current pane).
pub fn pane(
    server: &Server,
    probe: &Probe,
    target: Option<&str>,
    deadline: Duration,
) -> anyhow::Result<Pane> {
    let target = target.map(str::to_string).or_else(|| probe.var("TMUX_PANE").map(str::to_string));
    let answer = server
        .query(target.as_deref(), PANE_FORMAT, deadline)
        .context("could not ask tmux about the pane")?
        .unwrap_or_default();
    // Server-wide fields are filled in even when the target is unknown.
    Pane::parse(&answer).ok_or_else(|| match &target {
        Some(t) => anyhow!("the tmux server has no pane {t:?}"),
        None => anyhow!("the tmux server named no current pane (pass -t PANE)"),
    })
}

/// The name of process `pid` (`zsh`, `bash`, `fish`…), when it is running.
pub fn process_name(pid: u32) -> Option<String> {
    use sysinfo::{Pid, ProcessRefreshKind, ProcessesToUpdate, System};
    let mut sys = System::new().ok()?;
    let pid = Pid::from_u32(pid);
    sys.refresh_processes_specifics(ProcessesToUpdate::Some(&[pid]), true, ProcessRefreshKind::nothing());
    let name = sys.process(pid)?.name().to_string_lossy().trim_start_matches('-').to_string();
    Some(name)
}

/// The pane's whole history, wrapped lines joined (`-J`, which also keeps the padding
/// at the end of each line: trimmed here), trailing blank lines dropped.
pub fn capture_scrollback(server: &Server, pane_id: &str, deadline: Duration) -> Result<String, ExecError> {
    let raw = server.run(&["capture-pane", "-p", "-J", "-S", "-", "-t", pane_id], deadline)?;
    Ok(tidy_scrollback(&raw))
}

fn tidy_scrollback(raw: &str) -> String {
    let mut text = String::with_capacity(raw.len());
    for line in raw.lines() {
        text.push_str(line.trim_end());
        text.push('\n');
    }
    let kept = text.trim_end().len();
    text.truncate(kept);
    if !text.is_empty() {
        text.push('\n');
    }
    text
}

/// Redacts `text` (counting into `report`) and encodes it as `shell.tmux_scrollback`.
pub fn encode_scrollback(text: &str, report: &mut Report) -> Scrollback {
    let clean = redact_report(text, report);
    Scrollback {
        format: SCROLLBACK_FORMAT.into(),
        bytes: clean.len() as u64,
        data: BASE64.encode(clean.as_bytes()),
        extra: Default::default(),
    }
}

/// The text of a saved scrollback.
pub fn decode_scrollback(sb: &Scrollback) -> anyhow::Result<String> {
    if sb.format != SCROLLBACK_FORMAT {
        bail!("the scrollback's format is {:?}; this lokust reads {SCROLLBACK_FORMAT:?}", sb.format);
    }
    let bytes = BASE64.decode(sb.data.trim()).context("the scrollback is not valid base64")?;
    if bytes.len() as u64 != sb.bytes {
        crate::exit::warn(&format!(
            "the scrollback holds {} bytes where the file says {} (truncated?)",
            bytes.len(),
            sb.bytes
        ));
    }
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// Text from a file, made safe for a terminal line by line: newlines and tabs stay.
pub fn for_terminal_lines(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let (body, nl) = match line.strip_suffix('\n') {
            Some(b) => (b.strip_suffix('\r').unwrap_or(b), "\n"),
            None => (line, ""),
        };
        out.push_str(&sanitize::for_terminal(body));
        out.push_str(nl);
    }
    out
}

/// A name made of characters that are safe in a file name.
fn file_safe(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') { c } else { '_' })
        .collect();
    if s.is_empty() || s.starts_with('.') { format!("_{s}") } else { s }
}

#[derive(Debug, Clone)]
pub struct ExportOptions {
    pub target: Option<String>,
    pub bundle: bool,
    /// With `bundle`: the agents whose sessions go in.
    pub agents: crate::agent::Chosen,
    /// With `bundle`: carry the git work, up to this many bytes (`None`: leave it behind).
    pub worktree: Option<u64>,
    /// Every window and pane of the session (`target` names the session), not one pane.
    pub whole_session: bool,
    pub deadline: Duration,
}

pub struct Exported {
    pub pane: Pane,
    pub snapshot: Snapshot,
    /// With `--bundle`: the Claude Code project to stream into the file as it is written.
    pub bundle: Option<crate::bundle::Plan>,
    /// With `--bundle`: other agents' sessions of the pane's directory, redacted.
    pub carried: Vec<crate::agent::Carried>,
    /// With `--bundle`: the git work the remotes do not have.
    pub work: Option<crate::worktree::Capture>,
}

/// Snapshots the shell in a pane and adds the pane's scrollback; with `whole_session`,
/// every window and pane of its session too (`shell` then describes the active pane).
pub fn export(probe: &Probe, server: &Server, opts: &ExportOptions) -> anyhow::Result<Exported> {
    let mut panes_report = Report::default();
    let captured = if opts.whole_session {
        Some(session::capture(probe, server, opts.target.as_deref(), opts.deadline, &mut panes_report)?)
    } else {
        None
    };
    let target = captured.as_ref().map(|c| c.active_pane.as_str()).or(opts.target.as_deref());
    let pane = pane(server, probe, target, opts.deadline)?;
    let mut snap = snapshot_pane(probe, server, &pane, opts.deadline)?;
    snap.redactions.scrollback.merge(&panes_report);
    // A whole session carries what lies under its root, which `--to` maps on import.
    let dir = captured.as_ref().map_or_else(|| snap.cwd.clone(), |c| PathBuf::from(&c.session.root));
    let mut exported = Exported { pane, snapshot: snap, bundle: None, carried: Vec::new(), work: None };
    if opts.bundle {
        carry_dir(probe, &mut exported, &dir, opts)?;
    }
    if let Some(mut captured) = captured {
        link_agents(&mut captured, &exported, opts.bundle);
        let snap = &mut exported.snapshot;
        snap.warnings.append(&mut captured.warnings);
        let value = serde_json::to_value(&captured.session).context("could not describe the session")?;
        snap.lok.extra.insert("tmux_session".into(), value);
    }
    Ok(exported)
}

/// The shell in `pane`, as a snapshot taken inside it would see it, with its scrollback.
fn snapshot_pane(
    probe: &Probe,
    server: &Server,
    pane: &Pane,
    deadline: Duration,
) -> anyhow::Result<Snapshot> {
    // The capturers see the pane as a shell inside it would: its $TMUX and $TMUX_PANE.
    let probe = probe.clone().with_var("TMUX", pane.tmux_var()).with_var("TMUX_PANE", pane.id.clone());
    let shell = process_name(pane.pid).filter(|n| crate::shell::Shell::from_name(n).is_some());
    let live = hook::read_live(&probe, pane.pid);
    let snap_opts = Options {
        cwd: Some(pane.cwd.clone()).filter(|c| c.is_dir()),
        shell,
        // The hook's live snapshot of this very shell has its history from memory, which
        // is fresher than the history file and belongs to this pane alone.
        history_entries: live.map(|l| l.shell.history_tail).filter(|h| !h.is_empty()),
        captured_via: "lokust-tmux".into(),
        deadline,
        ..Options::default()
    };
    let mut snap = snapshot::take(&probe, &snap_opts);
    if snap_opts.history_entries.is_some() {
        snap.history_source = Some("the shell's live snapshot".into());
    }
    let text = capture_scrollback(server, &pane.id, deadline).context("could not read the scrollback")?;
    snap.lok.shell.tmux_scrollback = Some(encode_scrollback(&text, &mut snap.redactions.scrollback));
    Ok(snap)
}

/// `--bundle`: the agents' conversations and the git work of `dir`.
fn carry_dir(probe: &Probe, exported: &mut Exported, dir: &Path, opts: &ExportOptions) -> anyhow::Result<()> {
    let pane = &exported.pane;
    let probe = probe.clone().with_var("TMUX", pane.tmux_var()).with_var("TMUX_PANE", pane.id.clone());
    let snap = &mut exported.snapshot;
    let bundle =
        if opts.agents.has(crate::agent::claude::NAME) { bundle_plan(&probe, snap, dir)? } else { None };
    let here = fs::canonicalize(dir).ok().and_then(|p| p.to_str().map(str::to_string));
    let roots: Vec<String> = here.into_iter().chain(bundle.as_ref().map(|p| p.project_dir.clone())).collect();
    let mut report = crate::redact::Report::default();
    let carried = crate::agent::carry(&probe, &roots, &opts.agents, true, &mut report).context("--bundle")?;
    snap.redactions.bundle.merge(&report);
    exported.work = opts.worktree.and_then(|max| crate::worktree::carry(dir, max, &mut snap.warnings));
    exported.bundle = bundle;
    exported.carried = carried;
    Ok(())
}

/// Points each agent pane at the element carrying its conversation; with `--bundle`, says
/// which conversations the file does not carry.
fn link_agents(captured: &mut session::Captured, exported: &Exported, bundled: bool) {
    let panes = captured.session.windows.iter_mut().flat_map(|w| {
        let index = w.index;
        w.panes.iter_mut().map(move |p| (index, p))
    });
    for (window, pane) in panes {
        let Some(agent) = pane.agent.as_mut() else { continue };
        let Some(id) = agent.session_id.as_deref() else { continue };
        let element = if agent.id == crate::agent::claude::NAME {
            exported.bundle.as_ref().filter(|b| b.sessions.iter().any(|s| s == id)).map(|b| {
                format::ElementRef { kind: crate::bundle::KIND.into(), project_dir: b.project_dir.clone() }
            })
        } else {
            exported
                .carried
                .iter()
                .find(|c| c.agent.id() == agent.id && c.sessions.iter().any(|s| s.id == id))
                .map(|c| format::ElementRef {
                    kind: c.agent.kind().into(),
                    project_dir: c.element.as_object().and_then(crate::agent::old_root).unwrap_or_default(),
                })
        };
        if bundled && element.is_none() {
            captured.warnings.push(format!(
                "pane {window}.{}: its conversation {id} is not under {} and is not in the file; \
                 export its own project to carry it",
                pane.index,
                sanitize::for_terminal(&captured.session.root)
            ));
        }
        agent.element = element;
    }
}

/// The Claude Code project of the pane's directory; a warning when there is none.
fn bundle_plan(
    probe: &Probe,
    snap: &mut Snapshot,
    cwd: &Path,
) -> anyhow::Result<Option<crate::bundle::Plan>> {
    let Some(config) = crate::capture::claude::config_dir(probe) else {
        snap.warnings
            .push("--bundle: no Claude Code config directory; its conversations are not bundled".into());
        return Ok(None);
    };
    let Some(found) = crate::bundle::find_project(&config, probe.home().as_deref(), cwd)? else {
        snap.warnings.push(format!(
            "--bundle: Claude Code has no project for {}; nothing bundled",
            sanitize::for_terminal(&cwd.to_string_lossy())
        ));
        return Ok(None);
    };
    snap.warnings.extend(found.note(cwd));
    Ok(Some(found.plan))
}

/// `$XDG_STATE_HOME/lokust/exports/<session>-<window>.<pane>-<UTC time>.lok`, created
/// 0700; a second export in the same second gets a suffix.
/// `sealed` names the file `.lok.age`.
pub fn export_path(probe: &Probe, label: &str, sealed: bool) -> anyhow::Result<PathBuf> {
    let dir = probe
        .state_dir()
        .context("cannot find a place for the export: set HOME or XDG_STATE_HOME, or pass -o FILE")?
        .join("exports");
    fsutil::create_private_dir(&dir).with_context(|| format!("could not create {}", dir.display()))?;
    let stamp = crate::human::utc(probe.now_ms()).replace(['-', ':'], "");
    let base = format!("{label}-{stamp}");
    let ext = if sealed { "lok.age" } else { "lok" };
    Ok(free_name(&dir, &base, ext))
}

fn free_name(dir: &Path, base: &str, ext: &str) -> PathBuf {
    let first = dir.join(format!("{base}.{ext}"));
    if !first.exists() {
        return first;
    }
    (2..).map(|n| dir.join(format!("{base}-{n}.{ext}"))).find(|p| !p.exists()).expect("an unused name")
}

#[derive(Debug, Clone)]
pub struct ImportOptions {
    pub to: Option<PathBuf>,
    pub session: Option<String>,
    /// `--map OLD=NEW`: pane directories under OLD go under NEW.
    pub maps: Vec<(PathBuf, PathBuf)>,
    /// Press Enter on each staged resume (only for a file sealed to the receiver).
    pub resume_agents: bool,
    pub no_scrollback: bool,
    pub dry_run: bool,
    pub deadline: Duration,
}

#[derive(Debug, Clone)]
pub struct Imported {
    pub session: String,
    pub cwd: PathBuf,
    pub scrollback_bytes: usize,
    pub warnings: Vec<String>,
    /// What was restored of other agents' sessions, and how to resume them.
    pub restored_agents: Vec<String>,
    /// A whole session: its windows and panes, in words.
    pub panes: Vec<String>,
}

/// Restores the bundle of `lok` (when it has one), as lokust-shell-restore does, and
/// returns the directory it was restored to: `to`, else the saved directory's path.
fn restore_bundle(
    probe: &Probe,
    lok: &ShellLok,
    source: &Path,
    opts: &ImportOptions,
    keys: &crate::seal::Keys,
    warnings: &mut Vec<String>,
    notes: &mut Vec<String>,
) -> anyhow::Result<Option<PathBuf>> {
    let carries_elements = lok.extra.get("bundles").and_then(|b| b.as_array()).is_some_and(|b| !b.is_empty());
    if lok.bundle.is_none() && !carries_elements {
        return Ok(None);
    }
    if let Some(b) = &lok.bundle {
        crate::restore::check_bundle_header(&b.kind, &b.format, &crate::lok::display_name(source))?;
    }
    // A path only the file names is never written: the file may be someone else's, and
    // its directory may be the receiver's own checkout.
    let dry_run = opts.dry_run;
    let Some(to) = opts.to.clone() else {
        bail!(
            "{} carries conversations or git work, and only --to says where they go; nothing was restored \
             (run: lokust-tmux import {} --to DIR)",
            crate::lok::display_name(source),
            crate::shell::posix_quote(&source.to_string_lossy(), crate::shell::Quote::WhenNeeded)
        );
    };
    let claude_dir = crate::capture::claude::config_dir(probe)
        .context("cannot find Claude Code's config directory: set HOME or CLAUDE_CONFIG_DIR")?;
    let opts = crate::restore::RestoreOptions {
        to,
        claude_dir,
        home: probe.home(),
        dry_run,
        force: false,
        max_size: crate::restore::DEFAULT_MAX_SIZE,
        trust_config: false,
        only_session: None,
    };
    let outcome = crate::restore::restore(crate::restore::Source::open(source, keys)?, &opts)?;
    if !outcome.config_withheld.is_empty() {
        warnings.push(crate::agent::claude::left_out_line(&outcome.config_withheld));
    }
    for refused in outcome.refused() {
        warnings.push(format!(
            "kept the existing {}: it differs from the one in the file (lokust-shell-restore --force replaces it)",
            refused.path.display()
        ));
    }
    warnings.extend(outcome.warnings.iter().cloned());
    // Other agents' sessions, each on its own, as lokust-shell-restore places them.
    use crate::restore::elements::{self, Outcome};
    let element_opts = elements::Options {
        dry_run,
        force: false,
        clone: false,
        trust_config: false,
        max_size: opts.max_size,
    };
    match elements::restore_all(probe, &outcome.lok, &outcome.project_dir, element_opts, None) {
        Ok(done) => {
            for element in done {
                match element {
                    Outcome::Done(d) => {
                        notes.extend(d.lines.into_iter().chain(d.resume.map(|r| format!("  resume: {r}"))))
                    }
                    Outcome::Refused(message) => warnings.push(message),
                    Outcome::Interrupted => {
                        return Err(anyhow::Error::new(crate::interrupt::Interrupted).context(format!(
                            "stopped after restoring into {}; the rest of the file was not restored",
                            outcome.project_dir.display()
                        )));
                    }
                    Outcome::Unknown(kind) => {
                        warnings.push(format!("this lokust does not know bundles of kind {kind:?}; left out"))
                    }
                }
            }
        }
        Err(e) => warnings.push(format!("{e}; the further payloads were not restored")),
    }
    Ok(Some(outcome.project_dir))
}

/// Recreates a saved pane as a new detached session: its directory, then its scrollback
/// shown in the pane before the shell starts (as tmux-resurrect does). A file holding a
/// whole session (`tmux_session`) gets every window and pane back.
pub fn import(
    probe: &Probe,
    server: &Server,
    source: &Path,
    opts: &ImportOptions,
    keys: &crate::seal::Keys,
) -> anyhow::Result<Imported> {
    let lok = match crate::seal::read_lok(source, keys)? {
        Lok::Shell(s) => s,
        Lok::Coordination(_) => {
            bail!(
                "{} is a coordination session; lokust-tmux imports shell sessions",
                crate::lok::display_name(source)
            )
        }
    };
    if opts.resume_agents {
        rebuild::check_resume_agents(keys, source)?;
    }
    let mut warnings = Vec::new();
    let whole = match format::TmuxSession::from_extra(&lok.extra) {
        Some(Ok(ts)) => Some(ts),
        Some(Err(why)) => {
            warnings.push(format!("{why}; only the active pane is rebuilt"));
            None
        }
        None => None,
    };
    let mut restored_agents = Vec::new();
    let restored = restore_bundle(probe, &lok, source, opts, keys, &mut warnings, &mut restored_agents)?;
    let to = match (&restored, &opts.to) {
        (Some(dir), _) => Some(dir.clone()),
        (None, Some(to)) => {
            let to = std::path::absolute(to).with_context(|| format!("bad path {}", to.display()))?;
            if !opts.dry_run {
                fs::create_dir_all(&to).with_context(|| format!("could not create {}", to.display()))?;
            }
            Some(to)
        }
        (None, None) => None,
    };
    let active_text = match (&lok.shell.tmux_scrollback, opts.no_scrollback) {
        (Some(sb), false) => for_terminal_lines(&decode_scrollback(sb)?),
        _ => String::new(),
    };
    let shell = server
        .run(&["show-options", "-gv", "default-shell"], opts.deadline)
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .or_else(|| probe.var("SHELL").map(str::to_string))
        .unwrap_or_else(|| "/bin/sh".into());
    let wanted = opts
        .session
        .clone()
        .or_else(|| whole.as_ref().map(|w| w.name.clone()))
        .or_else(|| lok.shell.multiplexer.as_ref().and_then(|m| m.session.clone()))
        .unwrap_or_else(|| "lokust".into());
    let wanted = session_safe(&wanted);
    let mut made = Made { probe, server, lok: &lok, opts, active_text: &active_text, shell: &shell, wanted };
    let (session, cwd, panes) = match whole {
        Some(ts) => made.session(&ts, to, restored.is_some(), &mut warnings)?,
        None => made.pane(to, &mut warnings)?,
    };
    Ok(Imported { session, cwd, scrollback_bytes: active_text.len(), warnings, restored_agents, panes })
}

/// What an import creates, once the file's payloads are restored.
struct Made<'a> {
    probe: &'a Probe,
    server: &'a Server,
    lok: &'a ShellLok,
    opts: &'a ImportOptions,
    active_text: &'a str,
    shell: &'a str,
    wanted: String,
}

impl Made<'_> {
    /// Every window and pane of `ts`: the session's name, its root here, the panes in words.
    fn session(
        &mut self,
        ts: &format::TmuxSession,
        to: Option<PathBuf>,
        restored: bool,
        warnings: &mut Vec<String>,
    ) -> anyhow::Result<(String, PathBuf, Vec<String>)> {
        let opts = self.opts;
        let mapping = rebuild::Mapping { old_root: &ts.root, to: to.as_deref(), maps: &opts.maps };
        let carried = carried_ids(self.lok);
        let probe = self.probe;
        let present = |agent: crate::agent::known::Known, id: &str| {
            agent.find(probe, id).ok().flatten().is_some()
                || (opts.dry_run && carried.iter().any(|c| c == id))
        };
        let plan = rebuild::plan(ts, &mapping, self.active_text, opts.no_scrollback, &present)?;
        warnings.extend(plan.warnings.iter().cloned());
        let mut panes = rebuild::describe(&plan);
        if opts.dry_run && restored {
            let first =
                "the conversations and git work restored first, as lokust-shell-restore --dry-run lists";
            panes.insert(0, first.into());
        }
        let session = if opts.dry_run {
            std::mem::take(&mut self.wanted)
        } else {
            rebuild::apply(
                probe,
                self.server,
                &plan,
                &self.wanted,
                self.shell,
                opts.resume_agents,
                opts.deadline,
            )?
        };
        Ok((session, to.unwrap_or_else(|| PathBuf::from(&ts.root)), panes))
    }

    /// The active pane alone, in `to`, else the saved directory, else the home directory.
    fn pane(
        &mut self,
        to: Option<PathBuf>,
        warnings: &mut Vec<String>,
    ) -> anyhow::Result<(String, PathBuf, Vec<String>)> {
        let lok = self.lok;
        let cwd = match to {
            Some(dir) => dir,
            None => {
                let saved = PathBuf::from(&lok.shell.cwd);
                if !lok.shell.cwd.is_empty() && saved.is_absolute() && saved.is_dir() {
                    saved
                } else {
                    let home = self.probe.home().unwrap_or_else(|| PathBuf::from("/"));
                    warnings.push(format!(
                        "the saved directory {} is not here; starting in {} (use --to PATH)",
                        sanitize::for_terminal(&lok.shell.cwd),
                        home.display()
                    ));
                    home
                }
            }
        };
        let panes = vec![format!("one pane in {}", sanitize::for_terminal(&cwd.to_string_lossy()))];
        if self.opts.dry_run {
            return Ok((std::mem::take(&mut self.wanted), cwd, panes));
        }
        let replay = if self.active_text.is_empty() {
            None
        } else {
            Some(replay_file(self.probe, self.active_text, lok)?)
        };
        let result =
            new_session(self.server, &self.wanted, &cwd, self.shell, replay.as_deref(), self.opts.deadline);
        if result.is_err()
            && let Some(r) = &replay
        {
            let _ = fs::remove_file(r);
        }
        Ok((result?, cwd, panes))
    }
}

/// Every conversation id the file's elements list, and the top-level bundle's.
fn carried_ids(lok: &ShellLok) -> Vec<String> {
    let mut ids = Vec::new();
    let elements = lok.extra.get("bundles").and_then(|b| b.as_array()).into_iter().flatten();
    for e in elements {
        let sessions = e.get("sessions").and_then(|s| s.as_array()).into_iter().flatten();
        ids.extend(sessions.filter_map(|s| s.get("id")?.as_str().map(str::to_string)));
    }
    if let Some(b) = &lok.bundle {
        let listed = b.extra.get("sessions").and_then(|s| s.as_array()).into_iter().flatten();
        ids.extend(listed.filter_map(|s| {
            s.as_str().map(str::to_string).or_else(|| s.get("id")?.as_str().map(str::to_string))
        }));
    }
    ids
}

/// tmux session names cannot hold `:` or `.`; control characters have no business there.
fn session_safe(name: &str) -> String {
    // `:` and `.` separate targets; `$ % @ { }` start ids and special targets; `# \ ;` and
    // quotes mean something to tmux's parser or formats; invisible characters are shown.
    let shown = sanitize::for_terminal(name);
    let s: String = shown
        .chars()
        .take(format::MAX_NAME)
        .map(|c| if ":.$%@{}#\\;'\"".contains(c) || c.is_control() { '_' } else { c })
        .collect();
    if s.trim().is_empty() { "lokust".into() } else { s }
}

/// The scrollback, with a closing line saying where it came from, in a private file the
/// pane prints and deletes.
fn replay_file(probe: &Probe, text: &str, lok: &ShellLok) -> anyhow::Result<PathBuf> {
    let note = format!(
        "[lokust: restored scrollback of {}@{}, saved {}]\n",
        sanitize::for_terminal(&lok.shell.user),
        sanitize::for_terminal(&lok.shell.hostname),
        crate::human::utc(lok.session.created_at_ms)
    );
    replay_text_file(probe, &format!("{text}{note}"))
}

/// `text` (already safe for a terminal) in a private file a new pane prints and deletes.
fn replay_text_file(probe: &Probe, text: &str) -> anyhow::Result<PathBuf> {
    let dir = probe.state_dir().context("set HOME or XDG_STATE_HOME")?.join("imports");
    fsutil::create_private_dir(&dir).with_context(|| format!("could not create {}", dir.display()))?;
    // A pane that never got to show its text (killed at once) leaves it behind.
    prune_older(&dir, Duration::from_secs(24 * 3600));
    let path = dir.join(format!("{}.txt", uuid::Uuid::new_v4()));
    fsutil::write_private_atomic(&path, |f| {
        use std::io::Write;
        f.write_all(text.as_bytes())
    })
    .with_context(|| format!("could not write {}", path.display()))?;
    Ok(path)
}

/// The pane command that prints `file`, deletes it and becomes the login shell. Given as
/// separate arguments, tmux runs it without a shell parsing it: no quoting of paths.
fn replay_command(file: &Path, shell: &str) -> Vec<OsString> {
    let mut args: Vec<OsString> =
        ["--", "/bin/sh", "-c", "cat -- \"$1\"; rm -f -- \"$1\"; exec \"$2\" -l", "lokust"]
            .map(OsString::from)
            .to_vec();
    args.push(file.into());
    args.push(shell.into());
    args
}

fn prune_older(dir: &Path, age: Duration) {
    for entry in fs::read_dir(dir).into_iter().flatten().flatten() {
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|a| a > age);
        if old && entry.path().extension().is_some_and(|x| x == "txt") {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// `wanted`, or `wanted-2`, `wanted-3`… when the name is taken: an existing session is
/// never touched.
fn free_session_name(server: &Server, wanted: &str, deadline: Duration) -> anyhow::Result<String> {
    for n in 1..=100 {
        let name = if n == 1 { wanted.to_string() } else { format!("{wanted}-{n}") };
        if server.run(&["has-session", "-t", &format!("={name}")], deadline).is_err() {
            return Ok(name);
        }
    }
    Err(anyhow!("every name from {wanted} to {wanted}-100 is taken"))
}

/// Creates the session `wanted`, or `wanted-2`, `wanted-3`… when the name is taken:
/// an existing session is never touched.
fn new_session(
    server: &Server,
    wanted: &str,
    cwd: &Path,
    shell: &str,
    replay: Option<&Path>,
    deadline: Duration,
) -> anyhow::Result<String> {
    let mut last_err = None;
    for _ in 0..100 {
        let name = free_session_name(server, wanted, deadline)?;
        // tmux expands formats, `#(command)` included, in names and in -c.
        let mut args: Vec<OsString> =
            vec!["new-session".into(), "-d".into(), "-s".into(), rebuild::literal(&name).into()];
        args.extend(["-c".into(), rebuild::literal(&cwd.to_string_lossy()).into()]);
        if let Some(file) = replay {
            args.extend(replay_command(file, shell));
        }
        match server.run(&args, deadline) {
            Ok(_) => return Ok(name),
            // Someone took the name between the check and now: try the next one.
            Err(ExecError::Failed { stderr, .. }) if stderr.contains("duplicate session") => {
                last_err = Some(anyhow!(stderr));
            }
            Err(e) => return Err(anyhow::Error::new(e).context("could not create the tmux session")),
        }
    }
    Err(last_err.unwrap_or_else(|| anyhow!("every name from {wanted} to {wanted}-100 is taken")))
}

/// Quotes `s` for tmux's configuration language (inside double quotes).
fn tmux_quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        if matches!(c, '"' | '\\' | '$') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

/// The shell command a key press runs: the current pane, or with `session` its whole
/// session (named by id, which needs no quoting).
fn export_command(exe: &Path, session: bool) -> String {
    let exe = crate::shell::posix_quote(&exe.to_string_lossy(), crate::shell::Quote::Always);
    if session {
        format!("{exe} export --session --quiet -t '#{{session_id}}'")
    } else {
        format!("{exe} export --quiet -t '#{{pane_id}}'")
    }
}

/// The tmux.conf lines binding prefix + `key` to export the current pane, and prefix +
/// `session_key` to export its whole session.
pub fn bind_lines(exe: &Path, key: &str, session_key: &str) -> String {
    format!(
        "# lokust: prefix + {key} saves the current pane, with its scrollback, to a .lok\n\
         # in $XDG_STATE_HOME/lokust/exports/; prefix + {session_key} saves every window and pane\n\
         # of the session (lokust-tmux bind --key KEY --session-key KEY for other keys).\n\
         bind-key {} run-shell -b {}\n\
         bind-key {} run-shell -b {}\n",
        tmux_quote(key),
        tmux_quote(&export_command(exe, false)),
        tmux_quote(session_key),
        tmux_quote(&export_command(exe, true))
    )
}

/// Binds the export keys in the running server: `key`, else the server's
/// `@lokust-export-key`, else [`DEFAULT_KEY`]; `session_key`, else
/// `@lokust-session-key`, else [`DEFAULT_SESSION_KEY`]. Returns the keys bound.
pub fn apply_binding(
    server: &Server,
    exe: &Path,
    key: Option<&str>,
    session_key: Option<&str>,
    deadline: Duration,
) -> anyhow::Result<(String, String)> {
    let chosen = |given: Option<&str>, option: &str, default: &str| -> anyhow::Result<String> {
        let key = match given {
            Some(k) => k.to_string(),
            None => server
                .run(&["show-options", "-gqv", option], deadline)
                .with_context(|| format!("could not ask tmux for {option}"))?
                .trim()
                .to_string(),
        };
        Ok(if key.is_empty() { default.to_string() } else { key })
    };
    let key = chosen(key, "@lokust-export-key", DEFAULT_KEY)?;
    let session_key = chosen(session_key, "@lokust-session-key", DEFAULT_SESSION_KEY)?;
    for (k, session) in [(&key, false), (&session_key, true)] {
        server
            .run(&["bind-key", k.as_str(), "run-shell", "-b", &export_command(exe, session)], deadline)
            .with_context(|| format!("could not bind {k}"))?;
    }
    Ok((key, session_key))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pane_answer_is_parsed_with_tabs_in_the_path() {
        let p = Pane::parse("work\t$3\t1\t0\t%7\t4242\t99\t/tmp/s\t/home/a\tb").unwrap();
        assert_eq!((p.session.as_str(), p.pid, p.cwd.as_path()), ("work", 4242, Path::new("/home/a\tb")));
        assert_eq!(p.tmux_var(), "/tmp/s,99,3");
        assert_eq!(p.label(), "work-1.0");
        assert!(Pane::parse("work\t$3").is_none());
    }

    #[test]
    fn scrollback_is_redacted_before_it_is_encoded() {
        let tok = "ghp_R7c2Qm9XvLp4Tn8Ws1Yd6Hb3Kf5Jg0Ae2Zx9";
        let mut report = Report::default();
        let sb = encode_scrollback(&format!("$ echo {tok}\n{tok}\n$ ls\n"), &mut report);
        let text = decode_scrollback(&sb).unwrap();
        assert_eq!(text, "$ echo [REDACTED]\n[REDACTED]\n$ ls\n");
        assert_eq!((sb.bytes as usize, report.values), (text.len(), 2));
    }

    #[test]
    fn padding_and_the_empty_screen_below_are_dropped() {
        assert_eq!(tidy_scrollback("   \n$ ls  \na b\n\n  \n\n"), "\n$ ls\na b\n");
        assert_eq!(tidy_scrollback("\n\n"), "");
    }

    #[test]
    fn hostile_text_is_escaped_but_lines_stay() {
        assert_eq!(for_terminal_lines("a\x1b[2J\r\n\tb\n"), "a\\u{1b}[2J\n\tb\n");
    }

    #[test]
    fn names_are_made_safe() {
        assert_eq!(session_safe("a:b.c"), "a_b_c");
        assert_eq!(session_safe("$0"), "_0");
        assert_eq!(session_safe("dev#[1];x\\y"), "dev_[1]_x_y");
        assert_eq!(session_safe(" "), "lokust");
        assert_eq!(file_safe("my work/x"), "my_work_x");
        assert_eq!(file_safe(".."), "_..");
    }

    #[test]
    fn bind_lines_quote_for_tmux_and_sh() {
        let lines = bind_lines(Path::new("/opt/my $dir/lokust-tmux"), "C-e", "M-e");
        assert!(lines.contains("bind-key \"C-e\" run-shell -b \"'/opt/my \\$dir/lokust-tmux' export --quiet -t '#{pane_id}'\""), "{lines}");
        assert!(lines.contains("bind-key \"M-e\" run-shell -b \"'/opt/my \\$dir/lokust-tmux' export --session --quiet -t '#{session_id}'\""), "{lines}");
    }
}
