//! `lokust-shell move OLD NEW`: a project renamed on this machine keeps its agents'
//! conversations. The move is a restore: the conversations of OLD are written, unredacted,
//! into a `.lok` in the archive (the backup), the old copies are set aside in their own
//! stores, the directory is renamed when asked, and the backup is restored at NEW by the
//! same plan and placement code as any restore. When the restore fails, everything set
//! aside goes back; when it succeeds, the old copies are deleted, so each conversation
//! has one copy, as Claude Code requires.
//!
//! Claude Code and Codex CLI conversations move. Another agent with conversations in OLD
//! refuses the move until `--agents` leaves it out: its store is not rewritten here yet.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, anyhow, bail};

use crate::agent::{self, Chosen, known::Known};
use crate::archive;
use crate::probe::Probe;
use crate::sanitize::for_terminal as safe;

/// The agents whose stores `move` rewrites.
const MOVED: &[&str] = &[agent::claude::NAME, "codex"];

pub struct MoveOptions {
    pub agents: Chosen,
    pub move_dir: bool,
    pub dry_run: bool,
}

/// What a move did, or would do.
pub struct Moved {
    pub new: PathBuf,
    /// The unredacted `.lok` of the old conversations (none in a dry run).
    pub backup: Option<PathBuf>,
    pub lines: Vec<String>,
}

/// Why a move was refused: nothing was changed.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Refused(pub String);

fn refuse(message: String) -> anyhow::Error {
    anyhow!(Refused(message))
}

pub fn relocate(probe: &Probe, old: &Path, new: &Path, opts: &MoveOptions) -> anyhow::Result<Moved> {
    let old_abs = std::path::absolute(old).with_context(|| format!("bad path {}", old.display()))?;
    let old_real = fs::canonicalize(&old_abs).unwrap_or(old_abs.clone());
    let new_abs = std::path::absolute(new).with_context(|| format!("bad path {}", new.display()))?;
    let new_real = new_abs
        .parent()
        .and_then(|p| fs::canonicalize(p).ok())
        .map_or(new_abs.clone(), |p| p.join(new_abs.file_name().unwrap_or_default()));
    let old_str = old_real.to_str().context("OLD is not UTF-8")?.to_string();
    let new_str = new_real.to_str().context("NEW is not UTF-8")?.to_string();
    if new_real.starts_with(&old_real) {
        return Err(refuse(format!(
            "{} is inside {}: a project cannot move into itself",
            safe(&new_str),
            safe(&old_str)
        )));
    }
    if opts.move_dir {
        check_rename(&old_abs, &new_abs)?;
    }
    refuse_running(probe, &old_real)?;
    refuse_taken(probe, &new_str, &opts.agents)?;
    let held = held(probe, &old_str, &opts.agents)?;
    let not_moved: Vec<String> = held
        .iter()
        .filter(|(k, _)| !MOVED.contains(&k.id()))
        .map(|(k, n)| format!("{} ({})", k.name(), crate::human::count(*n as u64, "conversation")))
        .collect();
    if !not_moved.is_empty() {
        return Err(refuse(format!(
            "move rewrites Claude Code's and Codex CLI's stores only, and {} has conversations of {} too: {}; \
             leave them with --agents claude,codex (they keep pointing at the old path), or carry them with \
             lokust-shell-snapshot --bundle and lokust-shell-restore",
            if not_moved.len() == 1 { "another agent" } else { "other agents" },
            safe(&old_str),
            not_moved.join(", ")
        )));
    }
    let mut lines: Vec<String> = held
        .iter()
        .map(|(k, n)| {
            format!(
                "{}: {} from {} to {}",
                k.name(),
                crate::human::count(*n as u64, "conversation"),
                safe(&old_str),
                safe(&new_str)
            )
        })
        .collect();
    if opts.move_dir {
        lines.push(format!("directory: {} renamed to {}", safe(&old_str), safe(&new_str)));
    }
    if held.is_empty() && !opts.move_dir {
        bail!("no agent has conversations of {}; nothing to move", safe(&old_str));
    }
    if opts.dry_run {
        return Ok(Moved { new: new_real, backup: None, lines });
    }
    let chosen = Chosen::Only(held.iter().map(|(k, _)| k.id().to_string()).collect());
    let backup = if held.is_empty() {
        None
    } else {
        let options = archive::Options {
            redact: false,
            worktree: None,
            always: true,
            captured_via: "lokust-move",
            agents: chosen.clone(),
        };
        match archive::archive(probe, &old_real, &options)? {
            archive::Outcome::Written { path, .. } => Some(path),
            archive::Outcome::Unchanged(path) => Some(path),
        }
    };
    let aside = set_aside(probe, &old_str, &held)?;
    let result = finish(probe, &old_abs, &new_abs, backup.as_deref(), opts);
    match result {
        Ok(mut done) => {
            for (_, moved) in &aside {
                let _ = if moved.is_dir() { fs::remove_dir_all(moved) } else { fs::remove_file(moved) };
            }
            lines.append(&mut done);
            Ok(Moved { new: new_real, backup, lines })
        }
        Err(e) => {
            for (from, moved) in aside.iter().rev() {
                let _ = fs::rename(moved, from);
            }
            if opts.move_dir && new_abs.exists() && !old_abs.exists() {
                let _ = fs::rename(&new_abs, &old_abs);
            }
            Err(e.context(format!(
                "the move was undone{}",
                backup
                    .as_ref()
                    .map(|b| format!("; the conversations are also in {}", b.display()))
                    .unwrap_or_default()
            )))
        }
    }
}

/// The directory rename, then the restore of the backup at NEW.
fn finish(
    probe: &Probe,
    old: &Path,
    new: &Path,
    backup: Option<&Path>,
    opts: &MoveOptions,
) -> anyhow::Result<Vec<String>> {
    if opts.move_dir {
        fs::rename(old, new)
            .with_context(|| format!("could not rename {} to {}", old.display(), new.display()))?;
    }
    let Some(backup) = backup else { return Ok(Vec::new()) };
    let claude_dir = crate::capture::claude::config_dir(probe).context("set HOME or CLAUDE_CONFIG_DIR")?;
    let restore_opts = crate::restore::RestoreOptions {
        to: new.to_path_buf(),
        claude_dir,
        home: probe.home(),
        dry_run: false,
        force: false,
        max_size: crate::restore::DEFAULT_MAX_SIZE,
        // The user's own settings, moving on their own machine.
        trust_config: true,
        only_session: None,
    };
    let keys = crate::seal::Keys::without_prompts(probe);
    let outcome = crate::restore::restore(crate::restore::Source::open(backup, &keys)?, &restore_opts)?;
    if let Some(refused) = outcome.refused().next() {
        bail!("{} exists with other content", refused.path.display());
    }
    let mut lines = Vec::new();
    if let Some(id) = &outcome.newest_session {
        lines.push(format!(
            "  resume: cd {} && claude --resume {id}",
            crate::shell::posix_quote(
                &outcome.project_dir.to_string_lossy(),
                crate::shell::Quote::WhenNeeded
            )
        ));
    }
    use crate::restore::elements::{self, Outcome};
    let element_opts = elements::Options {
        dry_run: false,
        force: false,
        clone: false,
        trust_config: true,
        max_size: crate::restore::DEFAULT_MAX_SIZE,
    };
    for done in elements::restore_all(probe, &outcome.lok, &outcome.project_dir, element_opts, None)? {
        match done {
            Outcome::Done(d) => lines.extend(d.resume.map(|r| {
                format!(
                    "  resume: cd {} && {r}",
                    crate::shell::posix_quote(
                        &outcome.project_dir.to_string_lossy(),
                        crate::shell::Quote::WhenNeeded
                    )
                )
            })),
            Outcome::Refused(why) => bail!(why),
            Outcome::Interrupted => bail!(crate::interrupt::Interrupted),
            Outcome::Unknown(kind) => bail!("an element of kind {kind:?} was not restored"),
        }
    }
    Ok(lines)
}

/// `--move-dir`: OLD a directory, NEW free, both on one filesystem (a rename, never a copy).
fn check_rename(old: &Path, new: &Path) -> anyhow::Result<()> {
    use std::os::unix::fs::MetadataExt;
    let old_meta = fs::metadata(old).map_err(|_| {
        refuse(format!(
            "{} does not exist: nothing to rename (leave out --move-dir when it was moved already)",
            old.display()
        ))
    })?;
    if !old_meta.is_dir() {
        return Err(refuse(format!("{} is not a directory", old.display())));
    }
    if fs::symlink_metadata(new).is_ok() {
        return Err(refuse(format!("{} exists already; --move-dir renames into a free name", new.display())));
    }
    let parent = new
        .parent()
        .filter(|p| p.is_dir())
        .ok_or_else(|| refuse(format!("the folder of {} does not exist", new.display())))?;
    if fs::metadata(parent)?.dev() != old_meta.dev() {
        return Err(refuse(format!(
            "{} and {} are on different filesystems; move the folder first (mv {} {}) and run move without --move-dir",
            old.display(),
            new.display(),
            crate::shell::posix_quote(&old.to_string_lossy(), crate::shell::Quote::WhenNeeded),
            crate::shell::posix_quote(&new.to_string_lossy(), crate::shell::Quote::WhenNeeded)
        )));
    }
    Ok(())
}

/// An agent working in OLD would write to the old copies while they move.
fn refuse_running(probe: &Probe, old: &Path) -> anyhow::Result<()> {
    use crate::tmux::process;
    let me = std::process::id();
    let mut found = Vec::new();
    for entry in fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
        if pid == me {
            continue;
        }
        let Some(cwd) = process::cwd(pid) else { continue };
        if !cwd.starts_with(old) {
            continue;
        }
        if let Some(p) = process::read(pid)
            && let Some(agent) = crate::tmux::running::program_of(&p)
        {
            found.push(format!("{} (pid {pid})", agent.name()));
        }
    }
    let _ = probe;
    if found.is_empty() {
        return Ok(());
    }
    Err(refuse(format!(
        "an agent is working in {}: {}; quit it first",
        safe(&old.to_string_lossy()),
        found.join(", ")
    )))
}

/// NEW must not hold another project's conversations: two projects would share them.
fn refuse_taken(probe: &Probe, new: &str, chosen: &Chosen) -> anyhow::Result<()> {
    let held = held(probe, new, chosen)?;
    if held.is_empty() {
        return Ok(());
    }
    let names: Vec<String> = held
        .iter()
        .map(|(k, n)| format!("{} ({})", k.name(), crate::human::count(*n as u64, "conversation")))
        .collect();
    Err(refuse(format!("{} holds conversations of its own already: {}", safe(new), names.join(", "))))
}

/// Each chosen agent with conversations of exactly `dir` (and the projects below it, for
/// those that record the directory in each conversation), and how many.
fn held(probe: &Probe, dir: &str, chosen: &Chosen) -> anyhow::Result<Vec<(Known, usize)>> {
    let mut out = Vec::new();
    if chosen.has(agent::claude::NAME)
        && let Some(config) = crate::capture::claude::config_dir(probe)
        && let Some(slot) = claude_slot(&config, dir)
    {
        let n = fs::read_dir(&slot)
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().ends_with(".jsonl"))
            .count();
        if n > 0 {
            out.push((Known::Claude, n));
        }
    }
    for &a in agent::AGENTS.iter().filter(|a| chosen.has(a.id())) {
        let Some(home) = a.home(probe) else { continue };
        if let Some(files) = a.collect(&home, dir)? {
            let n = a.sessions(&files).len();
            if n > 0 {
                out.push((Known::Other(a), n));
            }
        }
    }
    Ok(out)
}

fn claude_slot(config: &Path, dir: &str) -> Option<PathBuf> {
    let slot = crate::capture::claude::slot_name(dir);
    let projects = config.join("projects");
    crate::capture::claude::find_slot_dir(&projects, &slot)
        .or_else(|| Some(projects.join(slot)).filter(|p| p.is_dir()))
}

/// Renames the old copies out of their agent's sight, beside themselves (one filesystem,
/// nothing copied): Claude Code's slot, Codex's rollouts. Returns (original, set aside).
fn set_aside(probe: &Probe, old: &str, held: &[(Known, usize)]) -> anyhow::Result<Vec<(PathBuf, PathBuf)>> {
    let stamp = crate::human::utc(probe.now_ms()).replace(['-', ':'], "");
    let mut moved: Vec<(PathBuf, PathBuf)> = Vec::new();
    let mut aside = |from: PathBuf| -> anyhow::Result<()> {
        let name = from.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let to = from.with_file_name(format!(".lokust-moving-{stamp}-{name}"));
        fs::rename(&from, &to).with_context(|| format!("could not set {} aside", from.display()))?;
        moved.push((from, to));
        Ok(())
    };
    let result = (|| -> anyhow::Result<()> {
        for (k, _) in held {
            match k {
                Known::Claude => {
                    let config =
                        crate::capture::claude::config_dir(probe).context("no Claude Code folder")?;
                    if let Some(slot) = claude_slot(&config, old) {
                        aside(slot)?;
                    }
                }
                Known::Other(a) => {
                    let home = a.home(probe).context("no home")?;
                    let files = a.collect(&home, old)?.unwrap_or_default();
                    for s in a.sessions(&files) {
                        if let Some(found) = k.find(probe, &s.id)? {
                            aside(found.path)?;
                        }
                    }
                }
            }
        }
        Ok(())
    })();
    if let Err(e) = result {
        for (from, to) in moved.iter().rev() {
            let _ = fs::rename(to, from);
        }
        return Err(e);
    }
    Ok(moved)
}
