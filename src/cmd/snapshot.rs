//! `lokust-shell-snapshot` / `lokust-shell snapshot`: capture, write, summarise.

use std::io::{self, IsTerminal, Write};

use anyhow::{Context, bail};

use crate::agent;
use crate::bundle;
use crate::cli::SnapshotArgs;
use crate::exit;
use crate::fsutil::{self, Destination};
use crate::hook;
use crate::probe::Probe;
use crate::redact::Report;
use crate::seal;
use crate::snapshot::{self, Options, Snapshot};
use crate::summary;
use crate::tmux;
use crate::worktree;

pub fn run(args: &SnapshotArgs) -> anyhow::Result<u8> {
    if let Some(pid) = args.live {
        return Ok(live(args, pid));
    }
    match capture(args) {
        // A bundle stops at Ctrl-C; the half-written temp file is removed on the way out.
        Err(_) if args.bundle && crate::interrupt::interrupted() => {
            eprintln!("lokust: interrupted; no snapshot was written");
            Ok(exit::INTERRUPTED)
        }
        other => other,
    }
}

fn capture(args: &SnapshotArgs) -> anyhow::Result<u8> {
    let probe = Probe::from_process().context("could not read the working directory")?;
    if let Some(why) = probe.cwd_unreadable() {
        exit::warn(&format!(
            "the working directory cannot be read ({why}); the snapshot describes $PWD, {}",
            crate::sanitize::for_terminal(&probe.cwd().to_string_lossy())
        ));
    }
    let mut opts = options(args)?;
    // Recipients are checked (or the passphrase asked) before any work is done.
    let sealer = args.seal.options(&probe).sealer()?;
    let sealed_to = sealer.as_ref().map(|s| s.labels.join(", "));
    let destination = destination(args, &probe, sealer.is_some())?;
    let mut snap = taken(args, &probe, &mut opts);
    for w in &snap.warnings {
        exit::warn(w);
    }
    if exit::debug_enabled() {
        for (capturer, took) in &snap.timings {
            eprintln!("lokust: debug: {capturer} took {:.2} ms", took.as_secs_f64() * 1000.0);
        }
    }
    let mut agents_report = Report::default();
    let (plan, carried, work) = payloads(args, &probe, &snap, &mut agents_report)?;
    let bundle_opts = bundle::BundleOptions {
        redact: !args.no_redact_bundle,
        progress: plan.as_ref().is_some_and(|p| p.total_bytes >= PROGRESS_FROM) && io::stderr().is_terminal(),
        elements: carried.iter().map(|c| c.element.clone()).collect(),
        streamed: work.iter().map(|w| Box::new(w.clone()) as Box<dyn bundle::StreamedElement>).collect(),
        ..bundle::BundleOptions::default()
    };
    if plan.is_some() && args.no_redact_bundle {
        exit::warn(
            "--no-redact-bundle: the Claude Code transcripts go into the .lok UNREDACTED; \
             any secret they mention is in the file",
        );
    }
    let carry = args.bundle.then_some(snapshot::Carried { plan: plan.as_ref(), opts: &bundle_opts });
    let (written, stats) = snapshot::write(&snap.lok, carry, &destination, sealer)?;
    if let Some(stats) = &stats {
        for w in &stats.warnings {
            exit::warn(w);
        }
        snap.redactions.bundle = stats.redactions.clone();
    }
    if let (Some(stats), Some(_)) = (&stats, &plan) {
        snap.lok.bundle = Some(bundle_field(stats));
    }
    snap.redactions.bundle.merge(&agents_report);
    if args.bundle {
        let project = plan.as_ref().map_or(snap.cwd.as_path(), |p| std::path::Path::new(&p.project_dir));
        let kept: Vec<&str> =
            plan.iter().map(|_| agent::claude::NAME).chain(carried.iter().map(|c| c.agent.id())).collect();
        retention_warning(&probe, project, &kept);
    }
    if !args.quiet {
        let name = destination.name();
        let mut err = io::stderr().lock();
        let carried = Carried {
            bundle: stats.as_ref().filter(|_| plan.is_some()),
            agents: &carried,
            work: work.as_ref().and_then(|w| w.get()).map(|c| &c.meta),
        };
        print_summary(&snap, &carried, &name, written, &mut err)?;
        if let Some(to) = &sealed_to {
            writeln!(err, "Sealed:      with age, for {}", crate::sanitize::for_terminal(to))?;
        }
    }
    Ok(exit::SUCCESS)
}

/// What `--bundle` carries, when asked: the Claude Code project's plan, every chosen
/// agent's element, and the git work captured on its own thread meanwhile.
type Payloads = (Option<bundle::Plan>, Vec<agent::Carried>, Option<std::sync::Arc<worktree::Pending>>);

fn payloads(
    args: &SnapshotArgs,
    probe: &Probe,
    snap: &snapshot::Snapshot,
    report: &mut Report,
) -> anyhow::Result<Payloads> {
    if !args.bundle {
        return Ok((None, Vec::new(), None));
    }
    let chosen = agent::Chosen::from_list(args.carry.agents.as_deref());
    // Captured on its own thread while the conversations are read and compressed.
    let work = (!args.carry.no_worktree)
        .then(|| std::sync::Arc::new(worktree::Pending::start(snap.cwd.clone(), args.carry.max_worktree)));
    let (plan, carried) = bundle_payloads(probe, snap, &chosen, !args.no_redact_bundle, &work, report)?;
    Ok((plan, carried, work))
}

/// The document's `bundle` field for what was written.
fn bundle_field(stats: &bundle::BundleStats) -> crate::lok::Bundle {
    crate::lok::Bundle {
        kind: bundle::KIND.into(),
        format: bundle::FORMAT.into(),
        uncompressed_bytes: stats.uncompressed_bytes,
        base64_bytes: stats.base64_bytes,
        ..Default::default()
    }
}

/// The snapshot; with `--tmux SESSION`, of that session's active pane, as lokust-tmux
/// export takes it: its directory and shell (unless given) and its scrollback.
fn taken(args: &SnapshotArgs, probe: &Probe, opts: &mut snapshot::Options) -> snapshot::Snapshot {
    let server = tmux::Server::new(None, None, probe);
    let pane = args
        .tmux
        .as_ref()
        .and_then(|s| tmux::pane(&server, probe, Some(&format!("={s}:")), opts.deadline).ok());
    if let Some(pane) = &pane {
        if opts.cwd.is_none() && pane.cwd.is_dir() {
            opts.cwd = Some(pane.cwd.clone());
        }
        if opts.shell.is_none() {
            opts.shell = tmux::process_name(pane.pid).filter(|n| crate::shell::Shell::from_name(n).is_some());
        }
    }
    let mut snap = snapshot::take(probe, opts);
    if let Some(pane) = &pane {
        match tmux::capture_scrollback(&server, &pane.id, opts.deadline) {
            Ok(text) => {
                snap.lok.shell.tmux_scrollback =
                    Some(tmux::encode_scrollback(&text, &mut snap.redactions.scrollback))
            }
            Err(e) => snap.warnings.push(format!("tmux: could not read the scrollback: {e}")),
        }
    }
    snap
}

/// Says so when an agent is about to delete conversations of the bundled project, and
/// whether this file keeps them (`kept` names the agents it carries).
fn retention_warning(probe: &Probe, project: &std::path::Path, kept: &[&str]) {
    let Ok(dir) = std::fs::canonicalize(project) else { return };
    for due in agent::retention::of_project(probe, &dir).iter().filter(|d| d.due > 0) {
        let keep = if kept.contains(&due.id) {
            "this file keeps them, and so does: lokust-shell archive"
        } else {
            "this file does not carry them (--agents); keep them: lokust-shell archive"
        };
        exit::warn(&format!("{}; {keep}", due.warning()));
    }
}

/// Projects smaller than this bundle too fast for a progress bar to help.
const PROGRESS_FROM: u64 = 32 * 1024 * 1024;

/// What `--bundle` carries: the Claude Code project of the snapshot's directory or of a
/// parent (see [`bundle::find_project`]) unless `--agents` leaves it out, and the sessions
/// of every chosen agent there. An error when there is nothing, since `--bundle` was asked.
fn bundle_payloads(
    probe: &Probe,
    snap: &Snapshot,
    chosen: &agent::Chosen,
    redact: bool,
    work: &Option<std::sync::Arc<worktree::Pending>>,
    report: &mut Report,
) -> anyhow::Result<(Option<bundle::Plan>, Vec<agent::Carried>)> {
    let config = crate::capture::claude::config_dir(probe);
    let cwd = snap.cwd.as_path();
    let mut plan = None;
    if chosen.has(agent::claude::NAME)
        && let Some(config) = &config
        && let Some(found) = bundle::find_project(config, probe.home().as_deref(), cwd)?
    {
        if let Some(note) = found.note(cwd) {
            exit::warn(&note);
        }
        plan = Some(found.plan);
    }
    let here = std::fs::canonicalize(cwd).ok().and_then(|p| p.to_str().map(str::to_string));
    let roots: Vec<String> = here.into_iter().chain(plan.as_ref().map(|p| p.project_dir.clone())).collect();
    let carried = agent::carry(probe, &roots, chosen, redact, report).context("--bundle")?;
    // Only with nothing else to carry is the git work waited for here.
    if plan.is_some() || !carried.is_empty() || work.as_ref().is_some_and(|w| w.get().is_some()) {
        return Ok((plan, carried));
    }
    let others = if agent::AGENTS.iter().any(|a| chosen.has(a.id())) {
        ", and no other agent has sessions there"
    } else {
        ""
    };
    match (&config, chosen.has(agent::claude::NAME)) {
        (_, false) => bail!(
            "--bundle: none of the agents chosen with --agents has sessions for {}; nothing to bundle",
            crate::sanitize::for_terminal(&snap.lok.shell.cwd)
        ),
        (None, true) => bail!(
            "--bundle: no Claude Code config directory (set HOME or CLAUDE_CONFIG_DIR){others}; nothing to bundle"
        ),
        (Some(config), true) => bail!(
            "--bundle: Claude Code has no project for {} or any directory above it under {}{others}; \
             nothing to bundle",
            crate::sanitize::for_terminal(&snap.lok.shell.cwd),
            config.display()
        ),
    }
}

fn options(args: &SnapshotArgs) -> anyhow::Result<Options> {
    let cwd = match &args.cwd {
        Some(dir) => Some(
            std::path::absolute(dir)
                .ok()
                .filter(|d| d.is_dir())
                .with_context(|| format!("{} is not a directory", dir.display()))?,
        ),
        None => None,
    };
    let history_entries = match &args.history_from {
        Some(from) => Some(hook::hidden_dropped(
            hook::read_handover(from)
                .with_context(|| format!("could not read the history from {}", from.display()))?,
            args.ignore_space,
        )),
        None => None,
    };
    Ok(Options {
        history_lines: args.history_lines,
        history_file: args.history_file.clone(),
        history_entries,
        tmux_session: args.tmux.clone(),
        shell: args.shell.clone(),
        cwd,
        ..Options::default()
    })
}

/// `--live PID`, for the prompt hook: never prints, never fails loudly; what goes wrong
/// goes to the hook log.
fn live(args: &SnapshotArgs, pid: u32) -> u8 {
    // Without the shell's own clock (fish has none without a fork), the time this process
    // was forked orders two refreshes the way the prompts did; the time it got to run may
    // not, on a busy machine.
    let as_of_us = args
        .as_of
        .as_deref()
        .and_then(hook::parse_epoch)
        .or_else(crate::clock::process_started_us)
        .unwrap_or_else(|| crate::clock::now().as_micros() as u64);
    let probe = match Probe::from_process() {
        // The directory is gone: nothing true can be said about it, keep the old file.
        Ok(p) if p.cwd_unreadable().is_some() => return exit::ERROR,
        Ok(p) => p,
        Err(_) => return exit::ERROR,
    };
    let result = (|| {
        let history = match &args.history_from {
            Some(from) => Some(hook::hidden_dropped(
                hook::read_handover(from).context("could not read the history handed over")?,
                args.ignore_space,
            )),
            None => None,
        };
        hook::write_live(
            &probe,
            &hook::LiveOptions {
                pid,
                shell: args.shell.clone(),
                history,
                history_lines: args.history_lines,
                interval: args.interval.map(std::time::Duration::from_secs),
                as_of_us,
                seal: args.seal.options(&probe),
            },
        )
    })();
    match result {
        Ok(_) => {
            crate::watch::after_refresh(&probe, pid);
            exit::SUCCESS
        }
        Err(e) => {
            hook::log(&probe, &format!("pid {pid}: {e:#}"));
            exit::ERROR
        }
    }
}

fn destination(args: &SnapshotArgs, probe: &Probe, sealed: bool) -> anyhow::Result<Destination> {
    match args.output.as_ref().or(args.file.as_ref()) {
        Some(p) => Ok(Destination::from_arg(p)),
        None if !io::stdout().is_terminal() => Ok(Destination::Stdout),
        // JSON on a terminal helps nobody: keep it where `--latest` will find it.
        None => {
            let dir = probe
                .state_dir()
                .context("cannot find a place for the snapshot: set HOME or XDG_STATE_HOME, or pass -o FILE")?
                .join("snapshots");
            fsutil::create_private_dir(&dir)
                .with_context(|| format!("could not create {}", dir.display()))?;
            let stamp = crate::human::utc(probe.now_ms()).replace(['-', ':'], "");
            let host = hostname::get().map(|h| h.to_string_lossy().into_owned()).unwrap_or_default();
            let host: String =
                host.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' }).collect();
            let suffix = if sealed { seal::SUFFIX } else { "" };
            Ok(Destination::File(dir.join(format!("{host}-{stamp}.lok{suffix}"))))
        }
    }
}

/// What `--bundle` put in the file, for the summary.
struct Carried<'a> {
    bundle: Option<&'a bundle::BundleStats>,
    agents: &'a [agent::Carried],
    work: Option<&'a worktree::Meta>,
}

fn print_summary(
    snap: &Snapshot,
    carried: &Carried<'_>,
    name: &str,
    bytes: u64,
    w: &mut impl Write,
) -> io::Result<()> {
    writeln!(w, "Captured: {} ({})", crate::sanitize::for_terminal(name), crate::human::size(bytes))?;
    writeln!(w)?;
    summary::shell_contents(&snap.lok, w)?;
    if let Some(source) = &snap.history_source {
        writeln!(w, "History:     from {}", crate::sanitize::for_terminal(source))?;
    }
    if let Some(b) = carried.bundle {
        summary::bundle_line(b, w)?;
    }
    for c in carried.agents {
        summary::agent_line(c.agent.id(), &c.sessions, w)?;
    }
    if let Some(m) = carried.work {
        summary::worktree_line(m, w)?;
    }
    let r = &snap.redactions;
    let sections: [(&str, &Report); 5] = [
        ("history", &r.history),
        ("env", &r.env),
        ("git remote", &r.git),
        ("scrollback", &r.scrollback),
        ("bundle", &r.bundle),
    ];
    let parts: Vec<String> = sections
        .iter()
        .filter(|(_, rep)| rep.values > 0)
        .map(|(section, rep)| {
            format!(
                "{section} {} in {}",
                crate::human::count(rep.values, "value"),
                crate::human::count(rep.lines, "line")
            )
        })
        .collect();
    if parts.is_empty() {
        writeln!(w, "Redacted:    nothing found")
    } else {
        writeln!(w, "Redacted:    {}", parts.join("; "))
    }
}
