//! `lokust-shell-snapshot` / `lokust-shell snapshot`: capture, write, summarise.

use std::io::{self, IsTerminal, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

use crate::agent;
use crate::bundle;
use crate::cli::SnapshotArgs;
use crate::exit;
use crate::fsutil;
use crate::hook;
use crate::lok::Lok;
use crate::probe::Probe;
use crate::redact::Report;
use crate::seal;
use crate::snapshot::{self, Options, Snapshot};
use crate::summary;
use crate::tmux;

/// Where the finished `.lok` goes.
enum Destination {
    Stdout,
    File(PathBuf),
}

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
    // --tmux SESSION describes that session's active pane, as lokust-tmux export does:
    // its directory and shell (unless given) and its scrollback.
    let server = tmux::Server::new(None, None, &probe);
    let pane = args
        .tmux
        .as_ref()
        .and_then(|s| tmux::pane(&server, &probe, Some(&format!("={s}:")), opts.deadline).ok());
    if let Some(pane) = &pane {
        if opts.cwd.is_none() && pane.cwd.is_dir() {
            opts.cwd = Some(pane.cwd.clone());
        }
        if opts.shell.is_none() {
            opts.shell = tmux::process_name(pane.pid).filter(|n| crate::shell::Shell::from_name(n).is_some());
        }
    }
    let mut snap = snapshot::take(&probe, &opts);
    if let Some(pane) = &pane {
        match tmux::capture_scrollback(&server, &pane.id, opts.deadline) {
            Ok(text) => {
                snap.lok.shell.tmux_scrollback =
                    Some(tmux::encode_scrollback(&text, &mut snap.redactions.scrollback))
            }
            Err(e) => snap.warnings.push(format!("tmux: could not read the scrollback: {e}")),
        }
    }
    for w in &snap.warnings {
        exit::warn(w);
    }
    if exit::debug_enabled() {
        for (capturer, took) in &snap.timings {
            eprintln!("lokust: debug: {capturer} took {:.2} ms", took.as_secs_f64() * 1000.0);
        }
    }
    let plan = if args.bundle { bundle_plan(&probe, &snap)? } else { None };
    if plan.is_some() {
        crate::interrupt::install_signal_handlers();
    }
    let mut agents_report = Report::default();
    let carried = match &plan {
        Some(plan) => agent_elements(&probe, &snap, plan, !args.no_redact_bundle, &mut agents_report)?,
        None => Vec::new(),
    };
    let bundle_opts = bundle::BundleOptions {
        redact: !args.no_redact_bundle,
        progress: plan.as_ref().is_some_and(|p| p.total_bytes >= PROGRESS_FROM) && io::stderr().is_terminal(),
        elements: carried.iter().map(|c| c.element.clone()).collect(),
        ..bundle::BundleOptions::default()
    };
    if plan.is_some() && args.no_redact_bundle {
        exit::warn(
            "--no-redact-bundle: the Claude Code transcripts go into the .lok UNREDACTED; \
             any secret they mention is in the file",
        );
    }
    let mut stats = None;
    let lok = Lok::Shell(Box::new(snap.lok.clone()));
    // Written through the sealer (when sealing) into a counter of the bytes that land.
    let fill =
        |out: &mut dyn Write, sealer: Option<seal::Sealer>| -> anyhow::Result<Option<bundle::BundleStats>> {
            let mut out = seal::Output::new(out, sealer)?;
            let stats = match &plan {
                Some(plan) => Some(bundle::write_lok(&snap.lok, plan, &bundle_opts, &mut out)?),
                None => {
                    lok.write_to(&mut out)?;
                    None
                }
            };
            out.finish()?;
            Ok(stats)
        };
    let written = match &destination {
        Destination::Stdout => {
            let mut counted = bundle::Counting {
                inner: io::BufWriter::with_capacity(256 * 1024, io::stdout().lock()),
                count: 0,
            };
            stats = fill(&mut counted, sealer)?;
            counted.flush()?;
            counted.count
        }
        Destination::File(path) => {
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty())
                && !dir.is_dir()
            {
                bail!("cannot write {}: the directory {} does not exist", path.display(), dir.display());
            }
            fsutil::write_private_atomic(path, |f| {
                let mut out = io::BufWriter::with_capacity(256 * 1024, f);
                stats = fill(&mut out, sealer).map_err(|e| io::Error::other(format!("{e:#}")))?;
                out.flush()
            })
            .with_context(|| format!("could not write {}", path.display()))?;
            std::fs::metadata(path).map(|m| m.len()).unwrap_or(0)
        }
    };
    if let Some(stats) = &stats {
        for w in &stats.warnings {
            exit::warn(w);
        }
        snap.redactions.bundle = stats.redactions.clone();
        snap.redactions.bundle.merge(&agents_report);
        snap.lok.bundle = Some(crate::lok::Bundle {
            kind: bundle::KIND.into(),
            format: bundle::FORMAT.into(),
            uncompressed_bytes: stats.uncompressed_bytes,
            base64_bytes: stats.base64_bytes,
            ..Default::default()
        });
    }
    if !args.quiet {
        let name = match &destination {
            Destination::Stdout => "standard output".to_string(),
            Destination::File(p) => p.display().to_string(),
        };
        let mut err = io::stderr().lock();
        print_summary(&snap, stats.as_ref(), &carried, &name, written, &mut err)?;
        if let Some(to) = &sealed_to {
            writeln!(err, "Sealed:      with age, for {}", crate::sanitize::for_terminal(to))?;
        }
    }
    Ok(exit::SUCCESS)
}

/// Projects smaller than this bundle too fast for a progress bar to help.
const PROGRESS_FROM: u64 = 32 * 1024 * 1024;

/// The Claude Code project of the snapshot's directory (or of a parent: see
/// [`bundle::find_project`]); an error when there is none, since `--bundle` was asked.
fn bundle_plan(probe: &Probe, snap: &Snapshot) -> anyhow::Result<Option<bundle::Plan>> {
    let config = crate::capture::claude::config_dir(probe).context(
        "--bundle: no Claude Code config directory (set HOME or CLAUDE_CONFIG_DIR); nothing bundled",
    )?;
    let cwd = snap.cwd.as_path();
    match bundle::find_project(&config, probe.home().as_deref(), cwd)? {
        Some(found) => {
            if let Some(note) = found.note(cwd) {
                exit::warn(&note);
            }
            Ok(Some(found.plan))
        }
        None => bail!(
            "--bundle: Claude Code has no project for {} or any directory above it under {}; nothing to bundle",
            crate::sanitize::for_terminal(&snap.lok.shell.cwd),
            config.display()
        ),
    }
}

/// One agent's sessions carried in `bundles`.
struct CarriedAgent {
    agent: &'static dyn agent::Agent,
    element: serde_json::Value,
    sessions: Vec<agent::Session>,
}

/// The elements of every agent with sessions for the snapshot's directory (else for the
/// Claude project's, which may be a parent of it).
fn agent_elements(
    probe: &Probe,
    snap: &Snapshot,
    plan: &bundle::Plan,
    redact: bool,
    report: &mut Report,
) -> anyhow::Result<Vec<CarriedAgent>> {
    let here = std::fs::canonicalize(&snap.cwd).ok().and_then(|p| p.to_str().map(str::to_string));
    let roots: Vec<String> = here.into_iter().chain([plan.project_dir.clone()]).collect();
    let mut out = Vec::new();
    for &agent in agent::AGENTS {
        let Some(home) = agent.home(probe) else { continue };
        for root in &roots {
            let found = agent::element(agent, &home, root, redact, report)
                .with_context(|| format!("--bundle: could not carry the {} sessions", agent.name()))?;
            if let Some((element, sessions)) = found {
                out.push(CarriedAgent { agent, element, sessions });
                break;
            }
        }
    }
    Ok(out)
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
    let started_us = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_micros() as u64)
        .unwrap_or(0);
    let as_of_us = args.as_of.as_deref().and_then(hook::parse_epoch).unwrap_or(started_us);
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
        Ok(_) => exit::SUCCESS,
        Err(e) => {
            hook::log(&probe, &format!("pid {pid}: {e:#}"));
            exit::ERROR
        }
    }
}

fn destination(args: &SnapshotArgs, probe: &Probe, sealed: bool) -> anyhow::Result<Destination> {
    match args.output.as_ref().or(args.file.as_ref()) {
        Some(p) if p == Path::new("-") => Ok(Destination::Stdout),
        Some(p) => Ok(Destination::File(p.clone())),
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

fn print_summary(
    snap: &Snapshot,
    bundle: Option<&bundle::BundleStats>,
    carried: &[CarriedAgent],
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
    if let Some(b) = bundle {
        summary::bundle_line(b, w)?;
    }
    for c in carried {
        summary::agent_line(c.agent.id(), &c.sessions, w)?;
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
