//! `lokust-shell-restore` / `lokust-shell restore`: restore, then say what happened and
//! what to type next (or, with `--print-shell`, print it as a script).

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

use crate::cli::RestoreArgs;
use crate::exit;
use crate::human::size;
use crate::lok::{Lok, ShellLok};
use crate::probe::Probe;
use crate::restore::{self, Action, RestoreOptions, RestoreOutcome};
use crate::sanitize::for_terminal as safe;
use crate::seal;
use crate::shell::{Quote, posix_quote};

pub fn run(args: &RestoreArgs) -> anyhow::Result<u8> {
    crate::interrupt::install_signal_handlers();
    let probe = Probe::from_process().unwrap_or_default();
    let home = probe.home();
    let claude_dir = match &args.claude_dir {
        Some(d) => d.clone(),
        None => crate::capture::claude::config_dir(&probe).context(
            "cannot find Claude Code's config directory: set HOME or CLAUDE_CONFIG_DIR, or pass --claude-dir",
        )?,
    };
    let claude_dir = std::path::absolute(&claude_dir).unwrap_or(claude_dir);
    let keys = seal::Keys::new(&args.keys.identity, &probe);
    let (file, to) = match picked(&probe, args, &keys)? {
        Picked::File(file, to) => (file, to),
        Picked::Done(status) => return Ok(status),
    };
    if let Some(id) = &args.session
        && (id.is_empty() || id.contains(['/', '\0']) || id.starts_with('.'))
    {
        bail!("{:?} is not a conversation id", crate::sanitize::for_terminal(id));
    }
    crate::shell::refuse_literal_tilde(&to)?;
    let opts = RestoreOptions {
        to,
        claude_dir,
        home,
        dry_run: args.dry_run,
        force: args.force,
        max_size: args.max_size,
        trust_config: args.trust_config,
        only_session: args.session.clone(),
    };
    let outcome = match restored(&file, &opts, &keys)? {
        Ok(o) => o,
        Err(status) => return Ok(status),
    };
    for w in &outcome.warnings {
        exit::warn(w);
    }
    if !outcome.dry_run && !outcome.config_trusted && !outcome.config_withheld.is_empty() {
        exit::warn(&crate::agent::claude::left_out_line(&outcome.config_withheld));
    }
    let mut elements_placed = 0;
    let stdout = io::stdout();
    let stderr = io::stderr();
    let mut human: Box<dyn Write> =
        if args.print_shell { Box::new(stderr.lock()) } else { Box::new(stdout.lock()) };
    let stream = if args.print_shell { "standard error" } else { "standard output" };
    let report =
        if outcome.dry_run { print_plan(&outcome, &mut human) } else { print_done(&outcome, &mut human) };
    report.and_then(|()| human.flush()).with_context(|| {
        if outcome.dry_run {
            format!("could not write the plan to {stream}")
        } else {
            format!(
                "restored into {}, but could not write the report to {stream}",
                outcome.slot_dir.display()
            )
        }
    })?;
    let elements = restore_elements(&probe, &outcome, &opts, args.clone, &mut human)
        .map(|(done, placed)| {
            elements_placed = placed;
            done
        })
        .and_then(|ok| if outcome.dry_run { Ok(ok) } else { print_next(&outcome, &mut human).map(|()| ok) })
        .with_context(|| format!("could not write the report to {stream}"))?;
    human.flush().ok();
    drop(human);
    if args.print_shell && !outcome.dry_run {
        let (script, dropped) = shell_script(&outcome.project_dir, &outcome.lok);
        warn_dropped(&dropped);
        let mut out = stdout.lock();
        out.write_all(script.as_bytes())
            .and_then(|()| out.flush())
            .context("could not write the script to standard output")?;
    }
    status(args, &file, &outcome, elements, elements_placed)
}

/// Which file a restore reads and where it goes; `Done` when `--latest` found a snapshot
/// with nothing to restore and said where the shell was.
enum Picked {
    File(PathBuf, PathBuf),
    Done(u8),
}

fn picked(probe: &Probe, args: &RestoreArgs, keys: &seal::Keys) -> anyhow::Result<Picked> {
    if args.latest {
        let file = crate::latest::find_for_user(probe)?;
        let lok = match seal::read_lok(&file, keys)? {
            Lok::Shell(s) => s,
            Lok::Coordination(_) => {
                bail!("{} is a coordination session; see lokust-shell inspect", file.display())
            }
        };
        let carries_elements =
            lok.extra.get("bundles").and_then(|b| b.as_array()).is_some_and(|b| !b.is_empty());
        if lok.bundle.is_none() && !carries_elements {
            return where_was_i(&lok, args.print_shell).map(Picked::Done);
        }
        let to = args.to.clone().unwrap_or_else(|| PathBuf::from(&lok.shell.cwd));
        Ok(Picked::File(file, to))
    } else if args.from_archive {
        Ok(Picked::File(from_archive(probe, args)?, args.to.clone().unwrap_or_default()))
    } else {
        // clap requires both without --latest.
        Ok(Picked::File(args.file.clone().unwrap_or_default(), args.to.clone().unwrap_or_default()))
    }
}

/// The restore of `file`; `Err(status)` when a signal stopped it (and it said so).
fn restored(
    file: &std::path::Path,
    opts: &RestoreOptions,
    keys: &seal::Keys,
) -> anyhow::Result<Result<restore::RestoreOutcome, u8>> {
    use restore::RestoreError;
    let source = match restore::Source::open(file, keys) {
        Ok(s) => s,
        Err(_) if crate::interrupt::interrupted() => return interrupted(),
        Err(e) => return Err(e),
    };
    match restore::restore(source, opts) {
        Ok(o) => Ok(Ok(o)),
        // Stopped while merging into a slot: some files are in place, and it says so.
        Err(RestoreError::PartlyPlaced(p)) => {
            eprintln!("lokust: {p}");
            Ok(Err(exit::INTERRUPTED))
        }
        // A signal can surface as another error (a pipe closed by the same Ctrl-C).
        Err(RestoreError::Interrupted(_)) => interrupted(),
        Err(_) if crate::interrupt::interrupted() => interrupted(),
        Err(e) => Err(e.into()),
    }
}

fn interrupted() -> anyhow::Result<Result<restore::RestoreOutcome, u8>> {
    eprintln!("lokust: interrupted; nothing was changed");
    Ok(Err(exit::INTERRUPTED))
}

/// The exit status once everything is reported: a `--session` the file does not hold is an
/// error, then an interruption, a refused element, or files kept.
fn status(
    args: &RestoreArgs,
    file: &std::path::Path,
    outcome: &restore::RestoreOutcome,
    elements: Elements,
    elements_placed: usize,
) -> anyhow::Result<u8> {
    if let Some(id) = &args.session
        && !outcome.sessions.contains(id)
        && elements_placed == 0
        && matches!(elements, Elements::AllDone)
    {
        bail!(
            "{} holds no conversation {}; nothing was restored",
            file.display(),
            crate::sanitize::for_terminal(id)
        );
    }
    match elements {
        Elements::Interrupted => {
            eprintln!("lokust: interrupted; what is listed above was restored, the rest of the file was not");
            return Ok(exit::INTERRUPTED);
        }
        Elements::SomeRefused => return Ok(exit::ERROR),
        Elements::AllDone => {}
    }
    let refused = outcome.refused().count();
    // A dry run ends as the restore would: a script can ask first whether it would succeed.
    if refused > 0 && outcome.dry_run {
        exit::warn(&format!(
            "{refused} file(s) exist with other content and would be kept; the incoming ones would be \
             refused (--force would replace them, keeping backups)"
        ));
        return Ok(exit::ERROR);
    }
    if refused > 0 {
        exit::warn(&format!(
            "{refused} file(s) exist with other content and were kept; the incoming ones were refused \
             (--force replaces them, keeping backups)"
        ));
        return Ok(exit::ERROR);
    }
    Ok(exit::SUCCESS)
}

/// How the elements of `bundles` went.
enum Elements {
    AllDone,
    SomeRefused,
    /// A signal stopped the restore between two elements.
    Interrupted,
}

/// Applies each element of `bundles` this lokust knows, each on its own: one refused
/// does not undo the rest. Says what was done (or, in a dry run, would be).
fn restore_elements(
    probe: &Probe,
    outcome: &RestoreOutcome,
    opts: &RestoreOptions,
    args_clone: bool,
    w: &mut dyn Write,
) -> io::Result<(Elements, usize)> {
    use restore::elements::{self, Outcome};
    let options = elements::Options {
        dry_run: outcome.dry_run,
        force: opts.force,
        clone: args_clone,
        trust_config: opts.trust_config,
        max_size: opts.max_size,
    };
    let only = opts.only_session.as_deref();
    let done = match elements::restore_all(probe, &outcome.lok, &outcome.project_dir, options, only) {
        Ok(done) => done,
        Err(e) => {
            exit::warn(&format!("{e}; the further payloads were not restored"));
            return Ok((Elements::SomeRefused, 0));
        }
    };
    let placed = done.iter().filter(|d| matches!(d, Outcome::Done(_))).count();
    let mut all = Elements::AllDone;
    for element in done {
        match element {
            Outcome::Done(done) => {
                writeln!(w)?;
                for line in &done.lines {
                    writeln!(w, "{line}")?;
                }
                if let Some(cmd) = &done.resume {
                    let dir = posix_quote(&outcome.project_dir.to_string_lossy(), Quote::WhenNeeded);
                    writeln!(w, "  resume: cd {dir} && {cmd}")?;
                }
            }
            Outcome::Refused(message) => {
                all = Elements::SomeRefused;
                exit::warn(&message);
            }
            Outcome::Interrupted => return Ok((Elements::Interrupted, placed)),
            Outcome::Unknown(kind) => {
                exit::warn(&format!("this lokust does not know bundles of kind {kind:?}; left out"))
            }
        }
    }
    Ok((all, placed))
}

/// `--from-archive`: the newest archive holding `--session` (of `--project` when given),
/// else the newest of `--project`.
fn from_archive(probe: &Probe, args: &RestoreArgs) -> anyhow::Result<PathBuf> {
    let project = match &args.project {
        Some(p) => Some(
            std::fs::canonicalize(p)
                .or_else(|_| std::path::absolute(p))?
                .to_str()
                .context("the project's path is not UTF-8")?
                .to_string(),
        ),
        None => None,
    };
    if args.session.is_none() && project.is_none() {
        bail!("--from-archive needs --session ID or --project DIR to choose an archive");
    }
    let all = crate::archive::entries(probe, project.as_deref());
    let holds = |e: &&crate::archive::Entry| {
        args.session.as_ref().is_none_or(|id| e.manifest.conversations.iter().any(|c| &c.id == id))
    };
    // A move's backup is a folder of the old copies, not a file a restore reads.
    let holding = all.iter().rev().filter(|e| !crate::archive::is_moved(e)).find(holds);
    if holding.is_none()
        && let Some(moved) = all.iter().rev().find(holds)
    {
        bail!(
            "only a move's backup holds it: {} keeps the old copies as their agents' stores kept them \
             (below <agent>/, at their paths in the store); copy them back from there, or move the \
             project back with lokust-shell move",
            moved.lok.display()
        );
    }
    match holding {
        Some(e) => {
            eprintln!("lokust: from the archive {}", e.lok.display());
            Ok(e.lok.clone())
        }
        None => bail!(
            "no archive{} holds {}",
            project
                .as_deref()
                .map(|p| format!(" of {}", crate::sanitize::for_terminal(p)))
                .unwrap_or_default(),
            args.session.as_deref().map_or("anything".to_string(), |id| format!(
                "conversation {}",
                crate::sanitize::for_terminal(id)
            ))
        ),
    }
}

/// `--latest` on a snapshot without a bundle (a live file, most often): nothing to
/// extract, so show where the shell was and how to get back there.
fn where_was_i(lok: &ShellLok, print_shell: bool) -> anyhow::Result<u8> {
    let dir = PathBuf::from(&lok.shell.cwd);
    let stdout = io::stdout();
    let mut w: Box<dyn Write> =
        if print_shell { Box::new(io::stderr().lock()) } else { Box::new(stdout.lock()) };
    let here = if dir.is_dir() { "" } else { " (not on this machine)" };
    writeln!(w, "The shell was in {}{here}", safe(&lok.shell.cwd))?;
    let tail = &lok.shell.history_tail;
    if !tail.is_empty() {
        writeln!(w, "  last commands:")?;
        for entry in &tail[tail.len().saturating_sub(5)..] {
            writeln!(w, "    {}", safe(entry))?;
        }
    }
    if let Some(c) = &lok.shell.claude_code {
        writeln!(
            w,
            "  claude code: {} in {}",
            crate::human::count(c.sessions_logged, "conversation"),
            safe(&c.project_path)
        )?;
    }
    writeln!(w)?;
    writeln!(w, "Next:")?;
    writeln!(w, "  cd {}", posix_quote(&lok.shell.cwd, Quote::WhenNeeded))?;
    for line in git_advice(&dir, lok) {
        writeln!(w, "  {line}")?;
    }
    if lok.shell.claude_code.is_some() {
        writeln!(w, "  claude --continue")?;
    }
    w.flush()?;
    drop(w);
    if print_shell {
        let (script, dropped) = shell_script(&dir, lok);
        warn_dropped(&dropped);
        let mut out = stdout.lock();
        out.write_all(script.as_bytes())
            .and_then(|()| out.flush())
            .context("could not write the script to standard output")?;
    }
    Ok(exit::SUCCESS)
}

fn verb(a: Action) -> &'static str {
    match a {
        Action::Add => "add",
        Action::Same => "same",
        Action::Replace => "replace",
        Action::Refuse => "conflict",
    }
}

fn print_plan(o: &RestoreOutcome, w: &mut dyn Write) -> io::Result<()> {
    writeln!(w, "Restore plan (dry run: nothing written)")?;
    writeln!(w)?;
    writeln!(w, "  to:        {}", safe(&o.project_dir.to_string_lossy()))?;
    if !o.claude_bundle {
        return writeln!(w, "  claude:    no Claude Code project in this file");
    }
    writeln!(w, "  slot:      {} (was {})", safe(&o.slot), safe(&o.old_slot))?;
    for (old, new) in &o.path_map {
        writeln!(w, "  paths:     {} -> {}", safe(old), safe(new))?;
    }
    let total: u64 = o.files.iter().map(|f| f.bytes).sum();
    writeln!(w, "  files:     {} ({})", o.files.len(), size(total))?;
    for f in &o.files {
        writeln!(w, "    {:8} {:>9}  {}", verb(f.action), size(f.bytes), safe(&f.path.to_string_lossy()))?;
    }
    let conflicts = o.files.iter().filter(|f| f.action == Action::Refuse).count();
    if conflicts > 0 {
        writeln!(w, "  conflicts: {conflicts} (kept as they are; --force replaces them, keeping backups)")?;
    }
    print_outside_slot(o, w)?;
    print_sessions(o, w)
}

/// What changes outside the slot: the prompt history and the `.claude.json` entry, with
/// every withheld (or, with --trust-config, installed) command and permission.
fn print_outside_slot(o: &RestoreOutcome, w: &mut dyn Write) -> io::Result<()> {
    let would = if o.dry_run { "would be " } else { "" };
    if o.history_lines > 0 || o.history_refused > 0 {
        writeln!(w, "  history:   {} prompts {would}added", o.history_lines)?;
    }
    if o.history_refused > 0 {
        writeln!(w, "  refused:   {} prompt-history lines of other projects", o.history_refused)?;
    }
    if let Some(c) = &o.claude_json {
        writeln!(w, "  project:   .claude.json entry {}", safe(c))?;
    }
    if o.config_withheld.is_empty() {
        return Ok(());
    }
    let head =
        if o.config_trusted { "installed (--trust-config)" } else { "withheld (--trust-config installs)" };
    writeln!(w, "  {head}:")?;
    for item in &o.config_withheld {
        for line in &item.details {
            writeln!(w, "    {}: {line}", item.key)?;
        }
    }
    Ok(())
}

fn print_sessions(o: &RestoreOutcome, w: &mut dyn Write) -> io::Result<()> {
    writeln!(w, "  sessions:  {}", o.sessions.len())?;
    for (id, slot) in &o.duplicates {
        writeln!(w, "  note:      session {} also exists in {}", safe(id), safe(slot))?;
    }
    Ok(())
}

fn print_done(o: &RestoreOutcome, w: &mut dyn Write) -> io::Result<()> {
    let count = |a| o.files.iter().filter(|f| f.action == a).count();
    if o.config_trusted && !o.config_withheld.is_empty() {
        // Shown before anything else: these run or are allowed from now on.
        writeln!(w, "Installed from the sender's .claude.json (--trust-config):")?;
        for item in &o.config_withheld {
            for line in &item.details {
                writeln!(w, "  {}: {line}", item.key)?;
            }
        }
        writeln!(w)?;
    }
    if !o.claude_bundle {
        // Only other agents' sessions: each says what it did, and how to resume, below.
        writeln!(
            w,
            "Restored into {} (no Claude Code project in this file)",
            safe(&o.project_dir.to_string_lossy())
        )?;
        return Ok(());
    }
    writeln!(w, "Restored into {}", safe(&o.slot_dir.to_string_lossy()))?;
    writeln!(
        w,
        "  files:     {} added, {} unchanged, {} replaced, {} refused",
        count(Action::Add),
        count(Action::Same),
        count(Action::Replace),
        count(Action::Refuse)
    )?;
    for f in o.refused() {
        // A file beside a conversation the receiver keeps in its own version stays out with it.
        let why = if std::fs::symlink_metadata(&f.path).is_ok() {
            "exists with other content; kept"
        } else {
            "left out with its conversation, which the receiver keeps in another version"
        };
        writeln!(w, "  refused:   {} ({why})", safe(&f.path.to_string_lossy()))?;
    }
    for b in &o.backups {
        writeln!(w, "  backup:    {}", safe(&b.to_string_lossy()))?;
    }
    for (old, new) in &o.path_map {
        writeln!(w, "  paths:     {} -> {}", safe(old), safe(new))?;
    }
    if o.history_lines > 0 {
        writeln!(w, "  history:   {} prompts added", o.history_lines)?;
    }
    if o.history_refused > 0 {
        writeln!(w, "  refused:   {} prompt-history lines of other projects", o.history_refused)?;
    }
    if let Some(c) = &o.claude_json {
        writeln!(w, "  project:   .claude.json entry {}", safe(c))?;
    }
    for d in &o.cleaned {
        writeln!(w, "  cleaned:   {} (left by an interrupted run)", safe(&d.to_string_lossy()))?;
    }
    print_sessions(o, w)
}

/// Where to go and how to resume, once everything (the git work included) is in place.
fn print_next(o: &RestoreOutcome, w: &mut dyn Write) -> io::Result<()> {
    writeln!(w)?;
    writeln!(w, "Next:")?;
    writeln!(w, "  cd {}", posix_quote(&o.project_dir.to_string_lossy(), Quote::WhenNeeded))?;
    for line in git_advice(&o.project_dir, &o.lok) {
        writeln!(w, "  {line}")?;
    }
    if !o.claude_bundle {
        return Ok(());
    }
    match &o.newest_session {
        Some(id) => writeln!(w, "  claude --resume {}", safe(id)),
        None => writeln!(w, "  claude --continue"),
    }
}

/// The target's git state next to the snapshot's, as advice.
fn git_advice(dir: &Path, lok: &ShellLok) -> Vec<String> {
    let Some(snap) = &lok.shell.git else { return Vec::new() };
    let head_short = |h: &str| h.get(..7).unwrap_or(h).to_string();
    match git2::Repository::open(dir) {
        Ok(repo) => {
            let head = repo.head().ok();
            let branch =
                head.as_ref().filter(|h| h.is_branch()).and_then(|h| h.shorthand().ok().map(str::to_string));
            let commit = head.as_ref().and_then(|h| h.target()).map(|o| o.to_string());
            let mut out = Vec::new();
            let same_branch = branch == snap.branch;
            let same_head = commit.is_some() && commit == snap.head;
            if same_branch && same_head {
                out.push(format!(
                    "# git: on {} @ {}, as in the snapshot",
                    safe(branch.as_deref().unwrap_or("detached HEAD")),
                    head_short(commit.as_deref().unwrap_or(""))
                ));
            } else {
                out.push(format!(
                    "# git: here {} @ {}; the snapshot was on {} @ {}",
                    safe(branch.as_deref().unwrap_or("detached HEAD")),
                    head_short(commit.as_deref().unwrap_or("none")),
                    safe(snap.branch.as_deref().unwrap_or("detached HEAD")),
                    head_short(snap.head.as_deref().unwrap_or("none"))
                ));
                match (&snap.branch, &snap.head) {
                    (Some(b), _) => {
                        out.push(format!("git fetch && git checkout {}", posix_quote(b, Quote::WhenNeeded)))
                    }
                    (None, Some(h)) => out.push(format!("git fetch && git checkout {h}")),
                    _ => {}
                }
            }
            out
        }
        Err(_) => match &snap.remote {
            Some(remote) => {
                let mut out = vec![
                    "# git: not a repository here; the snapshot's code came from:".to_string(),
                    format!("git clone {} .", posix_quote(remote, Quote::WhenNeeded)),
                ];
                if let Some(b) = &snap.branch {
                    out.push(format!("git checkout {}", posix_quote(b, Quote::WhenNeeded)));
                } else if let Some(h) = &snap.head {
                    out.push(format!("git checkout {h}"));
                }
                out
            }
            None => {
                vec!["# git: the snapshot's repository had no remote; copy the code over yourself".into()]
            }
        },
    }
}

/// `cd` plus the captured environment that passes restore's own allowlist (locale,
/// editor, pager: see `restore::shell_env`), as POSIX shell; with the names it dropped.
pub fn shell_script(dir: &Path, lok: &ShellLok) -> (String, Vec<String>) {
    let mut out = format!("cd {}\n", posix_quote(&dir.to_string_lossy(), Quote::WhenNeeded));
    let (keep, dropped) = restore::shell_env::exportable(&lok.shell.env);
    for (name, value) in keep {
        out.push_str(&format!("export {name}={}\n", posix_quote(&value, Quote::WhenNeeded)));
    }
    // Not the file's value: the new path itself, for hooks that read it.
    if lok.shell.env.contains_key("CLAUDE_PROJECT_DIR") {
        out.push_str(&format!(
            "export CLAUDE_PROJECT_DIR={}\n",
            posix_quote(&dir.to_string_lossy(), Quote::WhenNeeded)
        ));
    }
    let dropped = dropped.into_iter().filter(|n| n != "CLAUDE_PROJECT_DIR").collect();
    (out, dropped)
}

/// Says, once, which variables of the snapshot `--print-shell` did not export.
fn warn_dropped(dropped: &[String]) {
    if dropped.is_empty() {
        return;
    }
    let names: Vec<String> = dropped.iter().map(|n| safe(n).into_owned()).collect();
    exit::warn(&format!(
        "{} variable(s) of the snapshot not exported (only locale, editor and pager are): {}",
        names.len(),
        names.join(", ")
    ));
}
