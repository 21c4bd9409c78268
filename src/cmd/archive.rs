//! `lokust-shell archive | list | prune`: bundled copies of projects kept on this machine.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;

use crate::archive::{self, Entry, Outcome, PruneOptions};
use crate::cli::{ArchiveArgs, ListArgs, PruneArgs};
use crate::exit;
use crate::human::{size, utc};
use crate::probe::Probe;
use crate::sanitize::for_terminal as safe;

/// The project's realpath; for a directory gone since (moved, deleted), its absolute path.
fn realpath(dir: &Path) -> anyhow::Result<String> {
    let real = std::fs::canonicalize(dir)
        .or_else(|_| std::path::absolute(dir))
        .with_context(|| format!("bad path {}", dir.display()))?;
    real.to_str().map(str::to_string).context("the project's path is not UTF-8")
}

pub fn archive(args: &ArchiveArgs) -> anyhow::Result<u8> {
    let probe = Probe::from_process().context("could not read the working directory")?;
    let dir = args.dir.clone().unwrap_or_else(|| probe.cwd().to_path_buf());
    if !dir.is_dir() {
        anyhow::bail!("{} is not a directory", dir.display());
    }
    let real = PathBuf::from(realpath(&dir)?);
    match archive::archive(&probe, &real, &archive::Options::archive())? {
        Outcome::Unchanged(path) => {
            if !args.quiet {
                eprintln!(
                    "lokust: nothing changed since {}; no archive written",
                    safe(&path.to_string_lossy())
                );
            }
        }
        Outcome::Written { path, manifest, warnings } => {
            for w in &warnings {
                exit::warn(w);
            }
            println!("{}", path.display());
            if !args.quiet {
                eprintln!(
                    "lokust: archived {} of {} ({}{})",
                    crate::human::count(manifest.conversations.len() as u64, "conversation"),
                    safe(&manifest.project_dir),
                    size(manifest.bytes),
                    if manifest.sealed { ", sealed" } else { "" }
                );
            }
        }
    }
    Ok(exit::SUCCESS)
}

pub fn list(args: &ListArgs, out: &mut impl Write) -> anyhow::Result<u8> {
    let probe = Probe::from_process().unwrap_or_default();
    let project = args.project.as_deref().map(realpath).transpose()?;
    let all = archive::entries(&probe, None);
    let shown: Vec<&Entry> =
        all.iter().filter(|e| project.as_ref().is_none_or(|p| &e.manifest.project_dir == p)).collect();
    let mut kept = kept_files(&probe);
    kept.retain(|k| project.as_ref().is_none_or(|p| k.project.as_ref() == Some(p)));
    if args.json {
        let mut rows: Vec<serde_json::Value> = shown
            .iter()
            .map(|e| {
                let only: Vec<_> = archive::only_here(&probe, e, &all);
                let kind = if archive::is_moved(e) { "moved" } else { "archive" };
                serde_json::json!({"kind": kind, "path": e.lok, "created_at_ms": e.manifest.created_at_ms,
                    "project_dir": e.manifest.project_dir, "sealed": e.manifest.sealed, "bytes": e.manifest.bytes,
                    "conversations": e.manifest.conversations, "only_here": only})
            })
            .collect();
        rows.extend(kept.iter().map(|k| {
            serde_json::json!({"kind": k.kind, "path": k.path, "modified_ms": k.modified_ms, "bytes": k.bytes,
                "sealed": k.sealed, "project_dir": k.project, "agents": k.agents})
        }));
        writeln!(out, "{}", serde_json::Value::Array(rows))?;
        return Ok(exit::SUCCESS);
    }
    if shown.is_empty() && kept.is_empty() {
        writeln!(out, "nothing kept yet (lokust-shell archive keeps a project)")?;
    }
    for e in &shown {
        let only = archive::only_here(&probe, e, &all);
        let mut agents: Vec<&str> = e.manifest.conversations.iter().map(|c| c.agent.as_str()).collect();
        agents.dedup();
        // A move's backup is the old copies, as their stores kept them: "moved".
        let (kind, form) = match (archive::is_moved(e), e.manifest.sealed) {
            (true, _) => ("moved", "files"),
            (false, true) => ("archive", "sealed"),
            (false, false) => ("archive", "plain"),
        };
        writeln!(
            out,
            "{kind:<9} {}  {}  {}  {}{}  {}  {form}",
            utc(e.manifest.created_at_ms),
            safe(&e.manifest.project_dir),
            agents.join(","),
            crate::human::count(e.manifest.conversations.len() as u64, "conversation"),
            if only.is_empty() { String::new() } else { format!(" ({} only here)", only.len()) },
            size(e.manifest.bytes),
        )?;
        for c in &only {
            writeln!(out, "          only here: {} {}", safe(&c.agent), safe(&c.id))?;
        }
        writeln!(out, "          {}", safe(&e.lok.to_string_lossy()))?;
    }
    for k in &kept {
        let agents = if k.agents.is_empty() { "-".to_string() } else { k.agents.join(",") };
        writeln!(
            out,
            "{:<9} {}  {}  {}  {}  {}",
            k.kind,
            utc(k.modified_ms),
            match &k.project {
                Some(p) => safe(p).into_owned(),
                None if k.sealed => "(sealed)".to_string(),
                None => "-".to_string(),
            },
            agents,
            size(k.bytes),
            if k.sealed { "sealed" } else { "plain" },
        )?;
        writeln!(out, "          {}", safe(&k.path.to_string_lossy()))?;
    }
    out.flush()?;
    Ok(exit::SUCCESS)
}

struct Kept {
    kind: &'static str,
    path: PathBuf,
    modified_ms: u64,
    bytes: u64,
    sealed: bool,
    /// Read from a plain file; a sealed one says nothing without its key.
    project: Option<String>,
    agents: Vec<String>,
}

/// The exports, snapshots and live files, oldest first.
fn kept_files(probe: &Probe) -> Vec<Kept> {
    let Some(state) = probe.state_dir() else { return Vec::new() };
    let mut out = Vec::new();
    for (dir, kind) in [("exports", "export"), ("snapshots", "snapshot"), ("live", "live")] {
        for f in std::fs::read_dir(state.join(dir)).into_iter().flatten().flatten() {
            let path = f.path();
            let name = path.to_string_lossy().into_owned();
            // Not followed: a link or a FIFO named `.lok` is not a kept file.
            let Ok(meta) = f.metadata() else { continue };
            if !meta.is_file() || !(name.ends_with(".lok") || name.ends_with(".lok.age")) {
                continue;
            }
            let modified_ms = meta
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_millis() as u64);
            let sealed = name.ends_with(".age");
            let (project, agents) = if sealed { (None, Vec::new()) } else { what_it_holds(&path) };
            out.push(Kept { kind, sealed, path, modified_ms, bytes: meta.len(), project, agents });
        }
    }
    out.sort_by_key(|k| k.modified_ms);
    out
}

/// The project and the agents of a plain `.lok`, read by the scanner that steps over the
/// bundle's data without holding it; nothing when the file is not a readable document.
fn what_it_holds(path: &Path) -> (Option<String>, Vec<String>) {
    let Ok(file) = std::fs::File::open(path) else { return (None, Vec::new()) };
    let mut scanner = crate::bundle::scan::Scanner::new(std::io::BufReader::new(file), 0);
    let Ok(scanned) = scanner.scan(None) else { return (None, Vec::new()) };
    let doc = &scanned.doc;
    let project = doc["shell"]["cwd"].as_str().or_else(|| doc["project_dir"].as_str()).map(str::to_string);
    let mut agents: Vec<String> = Vec::new();
    if doc["bundle"].is_object() {
        agents.push(crate::agent::claude::NAME.to_string());
    }
    for element in doc["bundles"].as_array().into_iter().flatten() {
        if let Some(agent) = element["kind"].as_str().and_then(crate::agent::by_kind) {
            agents.push(agent.id().to_string());
        }
    }
    agents.dedup();
    (project, agents)
}

pub fn prune(args: &PruneArgs) -> anyhow::Result<u8> {
    let probe = Probe::from_process().unwrap_or_default();
    let project = args.project.as_deref().map(realpath).transpose()?;
    let all = archive::entries(&probe, None);
    let mine: Vec<Entry> = all
        .iter()
        .filter(|e| project.as_ref().is_none_or(|p| &e.manifest.project_dir == p))
        .cloned()
        .collect();
    let opts = PruneOptions { keep_last: args.keep_last, older_than: args.older_than, force: args.force };
    let plan = archive::prune_plan(&probe, &mine, &opts);
    let verb = if args.dry_run { "would delete" } else { "deleted" };
    for e in &plan.delete {
        if !args.dry_run {
            archive::delete(e).with_context(|| format!("could not delete {}", e.lok.display()))?;
        }
        eprintln!("lokust: {verb} {}", safe(&e.lok.to_string_lossy()));
    }
    for (e, unique) in &plan.kept_unique {
        eprintln!(
            "lokust: kept {}: it holds the only copy of {} (--force deletes it anyway)",
            safe(&e.lok.to_string_lossy()),
            unique.iter().map(|c| format!("{} {}", c.agent, c.id)).collect::<Vec<_>>().join(", ")
        );
    }
    if plan.delete.is_empty() && plan.kept_unique.is_empty() {
        eprintln!("lokust: nothing to prune");
    }
    Ok(if plan.kept_unique.is_empty() { exit::SUCCESS } else { exit::ERROR })
}
