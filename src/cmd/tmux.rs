//! `lokust-tmux export | import | bind`.

use std::io::{self, Write};
use std::path::Path;

use anyhow::Context;

use crate::bundle;
use crate::cli::{BindArgs, ExportArgs, ImportArgs, TmuxCli};
use crate::exec;
use crate::exit;
use crate::fsutil::Destination;
use crate::probe::Probe;
use crate::snapshot;
use crate::tmux::{self, ExportOptions, ImportOptions, Server};

fn server(cli: &TmuxCli, probe: &Probe) -> Server {
    Server::new(cli.socket_name.as_deref(), cli.socket_path.as_deref(), probe)
}

fn home_relative(probe: &Probe, path: &Path) -> String {
    match probe.home().and_then(|h| path.strip_prefix(h).ok().map(Path::to_path_buf)) {
        Some(rel) => format!("~/{}", rel.display()),
        None => path.display().to_string(),
    }
}

/// Saves the pane and tells the tmux client where it went, or what failed: from a key
/// binding, the status line is the only place anyone will look.
pub fn export(cli: &TmuxCli, args: &ExportArgs) -> anyhow::Result<u8> {
    // Ctrl-C, TERM or HUP (the pane closing) stop a bundle between chunks and leave no
    // half-written file: the snapshot pipeline's write sees to it, as for every caller.
    let probe = Probe::from_process().context("could not read the working directory")?;
    let server = server(cli, &probe);
    let deadline = exec::default_deadline();
    if args.all_sessions {
        return export_all(&probe, &server, args);
    }
    let result = export_to(&probe, &server, args, args.target.clone());
    let target = if args.session { None } else { args.target.as_deref() };
    match &result {
        Ok(Some((path, bytes, secrets))) => {
            let redacted = match secrets {
                0 => String::new(),
                1 => ", 1 secret redacted".to_string(),
                n => format!(", {n} secrets redacted"),
            };
            let what = if args.session { "session" } else { "pane" };
            let msg = format!(
                "lokust: {what} saved to {} ({}{redacted})",
                home_relative(&probe, path),
                crate::human::size(*bytes)
            );
            server.display(target, &msg, deadline);
        }
        Ok(None) => {}
        Err(e) => server.display(target, &format!("lokust: export failed: {e:#}"), deadline),
    }
    result.map(|_| exit::SUCCESS)
}

/// `--all-sessions`: each session of the server in its own file.
fn export_all(probe: &Probe, server: &Server, args: &ExportArgs) -> anyhow::Result<u8> {
    let names = server
        .run(&["list-sessions", "-F", "#{session_name}"], exec::default_deadline())
        .context("could not list the tmux sessions")?;
    let one = ExportArgs { session: true, all_sessions: false, ..args.clone() };
    let mut failed = 0;
    for name in names.lines().filter(|n| !n.is_empty()) {
        if let Err(e) = export_to(probe, server, &one, Some(name.to_string())) {
            exit::warn(&format!("session {}: {e:#}", crate::sanitize::for_terminal(name)));
            failed += 1;
        }
    }
    Ok(if failed == 0 { exit::SUCCESS } else { exit::ERROR })
}

fn export_to(
    probe: &Probe,
    server: &Server,
    args: &ExportArgs,
    target: Option<String>,
) -> anyhow::Result<Option<(std::path::PathBuf, u64, u64)>> {
    // Recipients are checked (or the passphrase asked) before the pane is read.
    let sealer = args.seal.options(probe).sealer()?;
    let opts = ExportOptions {
        target,
        whole_session: args.session,
        bundle: args.bundle,
        agents: crate::agent::Chosen::from_list(args.carry.agents.as_deref()),
        worktree: (!args.carry.no_worktree).then_some(args.carry.max_worktree),
        deadline: exec::default_deadline(),
    };
    let mut exported = tmux::export(probe, server, &opts)?;
    let work = exported.work.take();
    let snap = &exported.snapshot;
    if !args.quiet {
        for w in &snap.warnings {
            exit::warn(w);
        }
    }
    let bundle_opts = bundle::BundleOptions {
        elements: exported.carried.iter().map(|c| c.element.clone()).collect(),
        streamed: work.into_iter().map(|w| Box::new(w) as Box<dyn bundle::StreamedElement>).collect(),
        ..bundle::BundleOptions::default()
    };
    let destination = match &args.output {
        Some(p) => Destination::from_arg(p),
        None => {
            let label = if args.session { exported.pane.session_label() } else { exported.pane.label() };
            Destination::File(tmux::export_path(probe, &label, sealer.is_some())?)
        }
    };
    let carry =
        args.bundle.then_some(snapshot::Carried { plan: exported.bundle.as_ref(), opts: &bundle_opts });
    let (bytes, stats) = snapshot::write(&snap.lok, carry, &destination, sealer)?;
    let bundle_secrets = stats.map_or(0, |s| s.redactions.values);
    let Destination::File(path) = destination else { return Ok(None) };
    if !args.quiet {
        println!("{}", path.display());
    }
    let r = &snap.redactions;
    let secrets = r.history.values
        + r.env.values
        + r.git.values
        + r.scrollback.values
        + r.bundle.values
        + bundle_secrets;
    Ok(Some((path, bytes, secrets)))
}

pub fn import(cli: &TmuxCli, args: &ImportArgs) -> anyhow::Result<u8> {
    crate::interrupt::install_signal_handlers();
    let probe = Probe::from_process().context("could not read the working directory")?;
    let server = server(cli, &probe);
    let opts = ImportOptions {
        to: match &args.to {
            Some(to) => {
                crate::shell::refuse_literal_tilde(to)?;
                Some(to.clone())
            }
            None => None,
        },
        session: args.session.clone(),
        maps: args.maps.clone(),
        resume_agents: args.resume_agents,
        no_scrollback: args.no_scrollback,
        dry_run: args.dry_run,
        deadline: exec::default_deadline(),
    };
    let keys = crate::seal::Keys::new(&args.keys.identity, &probe);
    let imported = tmux::import(&probe, &server, &args.file, &opts, &keys)?;
    for w in &imported.warnings {
        exit::warn(w);
    }
    for line in &imported.restored_agents {
        eprintln!("lokust: {line}");
    }
    if args.dry_run {
        println!("would create session {}:", crate::sanitize::for_terminal(&imported.session));
        for line in &imported.panes {
            println!("  {line}");
        }
        return Ok(exit::SUCCESS);
    }
    for line in &imported.panes {
        eprintln!("lokust: {line}");
    }
    println!("{}", imported.session);
    // The hint names the same server the session was made on.
    let quote = |s: &str| crate::shell::posix_quote(s, crate::shell::Quote::WhenNeeded);
    let server_arg = match (&cli.socket_name, &cli.socket_path) {
        (Some(name), _) => format!(" -L {}", quote(name)),
        (None, Some(path)) => format!(" -S {}", quote(&path.to_string_lossy())),
        (None, None) => String::new(),
    };
    eprintln!(
        "lokust: session {} created in {}; attach with: tmux{server_arg} attach -t {}",
        crate::sanitize::for_terminal(&imported.session),
        crate::sanitize::for_terminal(&imported.cwd.to_string_lossy()),
        crate::sanitize::for_terminal(&quote(&format!("={}", imported.session)))
    );
    Ok(exit::SUCCESS)
}

pub fn bind(cli: &TmuxCli, args: &BindArgs) -> anyhow::Result<u8> {
    let exe = std::env::current_exe().context("could not find lokust-tmux's own path")?;
    if args.apply {
        let probe = Probe::from_process().context("could not read the working directory")?;
        let server = server(cli, &probe);
        tmux::apply_binding(
            &server,
            &exe,
            args.key.as_deref(),
            args.session_key.as_deref(),
            exec::default_deadline(),
        )?;
    } else {
        let mut out = io::stdout().lock();
        let key = args.key.as_deref().unwrap_or(tmux::DEFAULT_KEY);
        let session_key = args.session_key.as_deref().unwrap_or(tmux::DEFAULT_SESSION_KEY);
        out.write_all(tmux::bind_lines(&exe, key, session_key).as_bytes())?;
        out.flush()?;
    }
    Ok(exit::SUCCESS)
}
