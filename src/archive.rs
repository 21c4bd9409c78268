//! The archive: bundled `.lok` files of a project kept on this machine, so that a
//! conversation an agent deletes (Claude Code after `cleanupPeriodDays`, Gemini CLI after
//! its `sessionRetention`) is still somewhere.
//!
//! `$XDG_STATE_HOME/lokust/archive/<key of the project's realpath>/<UTC time>.lok[.age]`,
//! each with `<UTC time>.manifest.json` beside it saying what it holds, readable without
//! opening a sealed file. A new archive is written only when the project's conversations
//! changed since the newest one (their fingerprint differs), as tmux-resurrect skips a
//! save equal to the last.

use std::collections::BTreeSet;
use std::fs;
use std::io::Write as _;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use anyhow::Context;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::agent::{self, known::Known};
use crate::bundle;
use crate::fsutil::{self, Destination};
use crate::probe::Probe;
use crate::snapshot;

/// What `captured_via` says of an archive.
pub const CAPTURED_VIA: &str = "lokust-archive";
const MANIFEST: &str = ".manifest.json";

/// What an archive holds, written beside it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub format: u32,
    /// The project's realpath.
    pub project_dir: String,
    pub created_at_ms: u64,
    /// The `.lok` file's name, beside this manifest.
    pub file: String,
    pub sealed: bool,
    pub bytes: u64,
    pub conversations: Vec<Conversation>,
    /// Of the conversations (ids, sizes, times): equal fingerprints, nothing changed.
    pub fingerprint: String,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Conversation {
    /// The name `--agents` takes.
    pub agent: String,
    pub id: String,
}

/// An archive on disk.
#[derive(Debug, Clone)]
pub struct Entry {
    pub lok: PathBuf,
    pub manifest_path: PathBuf,
    pub manifest: Manifest,
}

/// `$XDG_STATE_HOME/lokust/archive`.
pub fn root(probe: &Probe) -> Option<PathBuf> {
    probe.state_dir().map(|d| d.join("archive"))
}

/// The folder of one project's archives: named like Claude Code's slots, readable and
/// without separators.
pub fn project_folder(probe: &Probe, project: &str) -> Option<PathBuf> {
    root(probe).map(|r| r.join(project_key(project)))
}

/// A project's realpath as one readable file name.
pub fn project_key(project: &str) -> String {
    // Slot names fold every other character to `-`: the hash keeps `a b` and `a-b` apart.
    let hash: String =
        Sha256::digest(project.as_bytes()).iter().take(4).map(|b| format!("{b:02x}")).collect();
    format!("{}-{hash}", crate::capture::claude::slot_name(project))
}

pub enum Outcome {
    Written {
        path: PathBuf,
        manifest: Manifest,
        warnings: Vec<String>,
    },
    /// Nothing changed since this archive.
    Unchanged(PathBuf),
}

/// How an archive is written.
pub struct Options {
    /// Redact the conversations (an archive); `move` keeps the user's own data whole.
    pub redact: bool,
    /// `Some(max bytes)`: carry the git work too.
    pub worktree: Option<u64>,
    /// Write even when nothing changed since the newest archive.
    pub always: bool,
    /// Seal when the sealing variables are set.
    pub seal: bool,
    pub captured_via: &'static str,
    pub agents: agent::Chosen,
    /// A move's backup, read back at once on this machine: compressed for speed, and
    /// describing only the directory, not the shell (its environment, history, git, tmux).
    pub for_move: bool,
}

impl Options {
    pub fn archive() -> Options {
        Options {
            redact: true,
            worktree: Some(50 << 20),
            always: false,
            seal: true,
            captured_via: CAPTURED_VIA,
            agents: agent::Chosen::All,
            for_move: false,
        }
    }
}

/// Archives the project at `dir` (a realpath): every agent's conversations and the git
/// work, redacted, sealed when the sealing variables are set.
pub fn archive(probe: &Probe, dir: &Path, options: &Options) -> anyhow::Result<Outcome> {
    let prepared = prepare(probe, dir, options)?;
    // A move's backup is no archive a restore reads: one equal to it is still written.
    let newest = entries_of(&prepared.folder)
        .into_iter()
        .filter(|e| e.manifest.project_dir == prepared.project && !is_moved(e))
        .max_by_key(|e| e.manifest.created_at_ms);
    if let Some(newest) = newest.filter(|_| !options.always)
        && newest.manifest.fingerprint == prepared.fingerprint
    {
        return Ok(Outcome::Unchanged(newest.lok));
    }
    write(probe, prepared, options)
}

/// What an archive of a project would hold, read and not yet written.
pub struct Prepared {
    /// The project's realpath.
    pub project: String,
    /// Its folder in the archive.
    pub folder: PathBuf,
    /// The snapshot, without its payloads.
    pub lok: crate::lok::ShellLok,
    /// Claude Code's project as a bundle carries it.
    pub plan: Option<bundle::Plan>,
    /// Every other agent's element.
    pub carried: Vec<agent::Carried>,
    pub conversations: Vec<Conversation>,
    pub fingerprint: String,
    /// What could not be carried whole.
    pub warnings: Vec<String>,
    /// When it was read.
    pub created_at_ms: u64,
    work: Option<crate::worktree::Capture>,
}

impl Prepared {
    /// The document a restore of it would read, the other agents' elements in `bundles`
    /// and Claude Code's project left to [`Prepared::plan`].
    pub fn document(&self) -> crate::lok::ShellLok {
        let mut lok = self.lok.clone();
        let elements: Vec<serde_json::Value> = self.carried.iter().map(|c| c.element.clone()).collect();
        if !elements.is_empty() {
            lok.extra.insert("bundles".into(), serde_json::Value::Array(elements));
        }
        lok
    }
}

/// Reads what an archive of the project at `dir` (a realpath) would hold.
pub fn prepare(probe: &Probe, dir: &Path, options: &Options) -> anyhow::Result<Prepared> {
    let project = dir.to_str().context("the project's path is not UTF-8")?.to_string();
    let folder = project_folder(probe, &project).context("set HOME or XDG_STATE_HOME")?;
    let mut probe = probe.clone();
    probe.set_cwd(dir.to_path_buf());
    let mut snap = if !options.for_move {
        let opts = snapshot::Options {
            cwd: Some(dir.to_path_buf()),
            captured_via: options.captured_via.into(),
            ..snapshot::Options::default()
        };
        snapshot::take(&probe, &opts)
    } else {
        snapshot::of_directory(&probe, dir, options.captured_via)
    };
    let plan = match crate::capture::claude::config_dir(&probe)
        .filter(|_| options.agents.has(agent::claude::NAME))
    {
        Some(config) => bundle::find_project(&config, probe.home().as_deref(), dir)?.map(|f| f.plan),
        None => None,
    };
    let mut report = crate::redact::Report::default();
    let roots: Vec<String> =
        std::iter::once(project.clone()).chain(plan.as_ref().map(|p| p.project_dir.clone())).collect();
    let carried = agent::carry(&probe, &roots, &options.agents, options.redact, &mut report)?;
    let conversations = conversations(plan.as_ref(), &carried);
    if conversations.is_empty() {
        anyhow::bail!(
            "no agent has conversations for {}; nothing to archive",
            crate::sanitize::for_terminal(&project)
        );
    }
    let mut warnings = std::mem::take(&mut snap.warnings);
    let work = options.worktree.and_then(|max| crate::worktree::carry(dir, max, &mut warnings));
    let fingerprint = fingerprint(plan.as_ref(), &carried, work.as_ref());
    let created_at_ms = probe.now_ms();
    Ok(Prepared {
        project,
        folder,
        lok: snap.lok,
        plan,
        carried,
        conversations,
        fingerprint,
        warnings,
        created_at_ms,
        work,
    })
}

/// Writes the archive `prepared` describes.
pub fn write(probe: &Probe, prepared: Prepared, options: &Options) -> anyhow::Result<Outcome> {
    let Prepared {
        project, folder, lok, plan, carried, conversations, fingerprint, mut warnings, work, ..
    } = prepared;
    let sealer =
        if options.seal { crate::seal::args::SealArgs::default().options(probe).sealer()? } else { None };
    fsutil::create_private_dir(&folder).with_context(|| format!("could not create {}", folder.display()))?;
    let now = probe.now_ms();
    let stamp = crate::human::utc(now).replace(['-', ':'], "");
    let ext = if sealer.is_some() { "lok.age" } else { "lok" };
    let path = (1..)
        .map(|n| if n == 1 { format!("{stamp}.{ext}") } else { format!("{stamp}-{n}.{ext}") })
        .map(|name| folder.join(name))
        .find(|p| !p.exists() && !manifest_of(p).exists())
        .expect("a free name");
    let bundle_opts = bundle::BundleOptions {
        redact: options.redact,
        level: if options.for_move { bundle::Level::Quick } else { bundle::Level::Kept },
        elements: carried.iter().map(|c| c.element.clone()).collect(),
        streamed: work.into_iter().map(|w| Box::new(w) as Box<dyn bundle::StreamedElement>).collect(),
        ..bundle::BundleOptions::default()
    };
    let sealed = sealer.is_some();
    let carry = snapshot::Carried { plan: plan.as_ref(), opts: &bundle_opts };
    let (bytes, stats) = snapshot::write(&lok, Some(carry), &Destination::File(path.clone()), sealer)?;
    warnings.extend(stats.into_iter().flat_map(|s| s.warnings));
    let manifest = Manifest {
        format: 1,
        project_dir: project,
        created_at_ms: now,
        file: path.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_string(),
        sealed,
        bytes,
        conversations,
        fingerprint,
    };
    let manifest_path = manifest_of(&path);
    write_manifest(&manifest_path, &manifest)
        .with_context(|| format!("could not write {}", manifest_path.display()))?;
    Ok(Outcome::Written { path, manifest, warnings })
}

/// Every conversation the payloads carry, sorted.
fn conversations(plan: Option<&bundle::Plan>, carried: &[agent::Carried]) -> Vec<Conversation> {
    let mut out: BTreeSet<Conversation> = BTreeSet::new();
    if let Some(p) = plan {
        out.extend(
            p.sessions.iter().map(|id| Conversation { agent: agent::claude::NAME.into(), id: id.clone() }),
        );
    }
    for c in carried {
        out.extend(c.sessions.iter().map(|s| Conversation { agent: c.agent.id().into(), id: s.id.clone() }));
    }
    out.into_iter().collect()
}

/// Ids, sizes and last changes of the conversations, and the git work's own fingerprint:
/// what decides whether anything changed.
fn fingerprint(
    plan: Option<&bundle::Plan>,
    carried: &[agent::Carried],
    work: Option<&crate::worktree::Capture>,
) -> String {
    let mut h = Sha256::new();
    if let Some(w) = work {
        h.update(format!("git work {}\n", w.fingerprint()));
    }
    if let Some(p) = plan {
        h.update(format!("claude {} {} {}\n", p.total_bytes, p.newest_conversation(), p.sessions.join(",")));
    }
    for c in carried {
        let size = c.element.get("uncompressed_bytes").and_then(serde_json::Value::as_u64).unwrap_or(0);
        h.update(format!("{} {size}\n", c.agent.id()));
        for s in &c.sessions {
            h.update(format!("  {} {} {}\n", s.id, s.turns, s.last_updated.as_deref().unwrap_or("-")));
        }
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// `X.lok` / `X.lok.age` / `X.moved` → `X.manifest.json`.
fn manifest_of(lok: &Path) -> PathBuf {
    let name = lok.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    let stem = name
        .strip_suffix(".lok.age")
        .or_else(|| name.strip_suffix(".lok"))
        .or_else(|| name.strip_suffix(MOVED))
        .unwrap_or(name);
    lok.with_file_name(format!("{stem}{MANIFEST}"))
}

/// How a move's backup ends its name: a folder holding the old copies themselves, each
/// below `<agent>/` at its path in the agent's store, renamed there once their new copies
/// are in place (not a byte copied).
pub const MOVED: &str = ".moved";

/// Whether `entry` is a move's backup folder rather than a `.lok`.
pub fn is_moved(entry: &Entry) -> bool {
    entry.manifest.file.ends_with(MOVED)
}

/// Makes a move's empty backup folder `dir` ([`moved_dir`]) and its manifest: the old
/// copies are renamed into it as the move ends ([`moved_name`]). `bytes` is what they
/// hold.
pub fn begin_moved(dir: &Path, prepared: &Prepared, bytes: u64) -> anyhow::Result<()> {
    fs::DirBuilder::new()
        .mode(0o700)
        .create(dir)
        .with_context(|| format!("could not create {}", dir.display()))?;
    let manifest = Manifest {
        format: 1,
        project_dir: prepared.project.clone(),
        created_at_ms: prepared.created_at_ms,
        file: dir.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_string(),
        sealed: false,
        bytes,
        conversations: prepared.conversations.clone(),
        fingerprint: prepared.fingerprint.clone(),
    };
    let path = manifest_of(dir);
    write_manifest(&path, &manifest).with_context(|| format!("could not write {}", path.display()))?;
    Ok(())
}

/// A free name for a move's backup folder of `prepared`'s project (the project's folder
/// in the archive is made; the backup folder is not).
pub fn moved_dir(prepared: &Prepared) -> anyhow::Result<PathBuf> {
    let folder = &prepared.folder;
    fsutil::create_private_dir(folder).with_context(|| format!("could not create {}", folder.display()))?;
    let stamp = crate::human::utc(prepared.created_at_ms).replace(['-', ':'], "");
    Ok((1..)
        .map(|n| if n == 1 { format!("{stamp}{MOVED}") } else { format!("{stamp}-{n}{MOVED}") })
        .map(|name| folder.join(name))
        .find(|p| fs::symlink_metadata(p).is_err() && !manifest_of(p).exists())
        .expect("a free name"))
}

/// Where an old copy at `path`, in the store whose folder is `root`, goes in a move's
/// backup folder `dir`.
pub fn moved_name(dir: &Path, agent: &str, root: &Path, path: &Path) -> PathBuf {
    let rel = path.strip_prefix(root).ok().filter(|r| !r.as_os_str().is_empty());
    dir.join(agent).join(rel.unwrap_or_else(|| Path::new(path.file_name().unwrap_or_default())))
}

/// The bytes below `path`, links not followed.
pub fn size_of(path: &Path) -> u64 {
    match fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => {
            fs::read_dir(path).into_iter().flatten().flatten().map(|e| size_of(&e.path())).sum()
        }
        Ok(m) => m.len(),
        Err(_) => 0,
    }
}

/// A move's backup folder once its old copies are in: its manifest names the
/// conversations (agent, id) it holds and no other, and a folder that holds none goes.
pub fn settle_moved(dir: &Path, held: &[(String, String)]) {
    if held.is_empty() {
        forget_moved_if_empty(dir);
        return;
    }
    let path = manifest_of(dir);
    let Some(mut manifest) = moved_manifest(dir) else { return };
    manifest.conversations =
        held.iter().map(|(agent, id)| Conversation { agent: agent.clone(), id: id.clone() }).collect();
    manifest.conversations.sort();
    manifest.conversations.dedup();
    manifest.bytes = size_of(dir);
    let _ = write_manifest(&path, &manifest);
}

/// A manifest written whole or not at all, in one write (serde writes a token a call).
fn write_manifest(path: &Path, manifest: &Manifest) -> std::io::Result<()> {
    let text = serde_json::to_vec_pretty(manifest)?;
    fsutil::write_private_atomic(path, |f| f.write_all(&text))
}

/// The manifest of the move's backup folder `dir`, when it is that folder's (a `.lok` of
/// the same time has a manifest of the same name).
fn moved_manifest(dir: &Path) -> Option<Manifest> {
    let bytes = crate::agent::disk::read_bounded(&manifest_of(dir), 16 << 20).ok()?;
    let manifest: Manifest = serde_json::from_slice(&bytes).ok()?;
    let name = dir.file_name()?.to_str()?;
    (manifest.file == name).then_some(manifest)
}

/// Takes a move's backup folder away when nothing was put in it (the move was undone,
/// or kept every old copy), with its manifest (only its own); true when it is gone.
pub fn forget_moved_if_empty(dir: &Path) -> bool {
    fn prune_empty(dir: &Path) -> bool {
        let Ok(read) = fs::read_dir(dir) else { return false };
        let mut empty = true;
        for e in read.flatten() {
            let is_dir = e.file_type().is_ok_and(|t| t.is_dir());
            empty &= is_dir && prune_empty(&e.path());
        }
        empty && fs::remove_dir(dir).is_ok()
    }
    let mine = moved_manifest(dir).is_some();
    let gone = fs::symlink_metadata(dir).is_err() || prune_empty(dir);
    if gone && mine {
        let _ = fs::remove_file(manifest_of(dir));
    }
    gone
}

/// The archives of one project folder whose manifest and file are both there.
fn entries_of(folder: &Path) -> Vec<Entry> {
    let mut out = Vec::new();
    for f in fs::read_dir(folder).into_iter().flatten().flatten() {
        let manifest_path = f.path();
        // A regular file only (a FIFO would block the read).
        if !manifest_path.to_string_lossy().ends_with(MANIFEST) || !f.file_type().is_ok_and(|t| t.is_file()) {
            continue;
        }
        let Ok(bytes) = crate::agent::disk::read_bounded(&manifest_path, 16 << 20) else { continue };
        let Ok(manifest) = serde_json::from_slice::<Manifest>(&bytes) else { continue };
        // The file must be the one beside it, by a plain name.
        if manifest.file.contains('/') || manifest.file.starts_with('.') {
            continue;
        }
        let lok = folder.join(&manifest.file);
        // A manifest speaks for the file of its own name only: an edited one cannot make
        // prune delete another archive.
        if manifest_of(&lok) != manifest_path {
            continue;
        }
        // Not followed: a link named like a backup is not one.
        let kind = fs::symlink_metadata(&lok).map(|m| m.file_type());
        let moved = manifest.file.ends_with(MOVED);
        if kind.is_ok_and(|k| if moved { k.is_dir() } else { k.is_file() }) {
            out.push(Entry { lok, manifest_path, manifest });
        }
    }
    out.sort_by_key(|e| e.manifest.created_at_ms);
    out
}

/// Every archive on this machine, oldest first, optionally of one project only.
pub fn entries(probe: &Probe, project: Option<&str>) -> Vec<Entry> {
    let Some(root) = root(probe) else { return Vec::new() };
    let mut out: Vec<Entry> = match project {
        Some(p) => project_folder(probe, p).map(|f| entries_of(&f)).unwrap_or_default(),
        None => {
            fs::read_dir(&root).into_iter().flatten().flatten().flat_map(|d| entries_of(&d.path())).collect()
        }
    };
    out.retain(|e| project.is_none_or(|p| e.manifest.project_dir == p));
    out.sort_by_key(|e| e.manifest.created_at_ms);
    out
}

/// The conversations of `entry` that exist nowhere else: not in their agent's store on
/// this machine, nor in a newer archive of the same project.
pub fn only_here(probe: &Probe, entry: &Entry, all: &[Entry]) -> Vec<Conversation> {
    entry
        .manifest
        .conversations
        .iter()
        .filter(|c| {
            let in_store =
                Known::by_id(&c.agent).is_some_and(|k| k.find(probe, &c.id).ok().flatten().is_some());
            let in_newer = all.iter().any(|o| {
                o.manifest.project_dir == entry.manifest.project_dir
                    && o.manifest.created_at_ms > entry.manifest.created_at_ms
                    && o.manifest.conversations.contains(c)
            });
            !in_store && !in_newer
        })
        .cloned()
        .collect()
}

/// What `prune` would do.
pub struct Pruning {
    pub delete: Vec<Entry>,
    /// Kept although old: they hold conversations that exist nowhere else.
    pub kept_unique: Vec<(Entry, Vec<Conversation>)>,
}

pub struct PruneOptions {
    pub keep_last: usize,
    pub older_than: Duration,
    pub force: bool,
}

/// Archives older than `older_than`, beyond the newest `keep_last` of their project and
/// never the newest one; one holding a conversation that exists nowhere else stays
/// unless `force`.
pub fn prune_plan(probe: &Probe, all: &[Entry], opts: &PruneOptions) -> Pruning {
    let now = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).unwrap_or_default().as_millis() as u64;
    let cutoff = now.saturating_sub(opts.older_than.as_millis() as u64);
    let projects: BTreeSet<&str> = all.iter().map(|e| e.manifest.project_dir.as_str()).collect();
    let mut pruning = Pruning { delete: Vec::new(), kept_unique: Vec::new() };
    for project in projects {
        let mine: Vec<&Entry> = all.iter().filter(|e| e.manifest.project_dir == project).collect();
        let keep_from = mine.len().saturating_sub(opts.keep_last.max(1));
        for e in &mine[..keep_from] {
            if e.manifest.created_at_ms > cutoff {
                continue;
            }
            let unique = only_here(probe, e, all);
            if unique.is_empty() || opts.force {
                pruning.delete.push((*e).clone());
            } else {
                pruning.kept_unique.push(((*e).clone(), unique));
            }
        }
    }
    pruning
}

/// Deletes an archive file, and its manifest when there is one.
pub fn delete_file(lok: &Path) -> std::io::Result<()> {
    fs::remove_file(lok)?;
    match fs::remove_file(manifest_of(lok)) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

/// Deletes an archive and its manifest.
pub fn delete(entry: &Entry) -> std::io::Result<()> {
    if is_moved(entry) {
        fs::remove_dir_all(&entry.lok)?;
    } else {
        fs::remove_file(&entry.lok)?;
    }
    fs::remove_file(&entry.manifest_path)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `.lok` and a move's backup of one second share a manifest's name: forgetting a
    /// backup folder that is not there never takes the `.lok`'s manifest.
    #[test]
    fn forgetting_a_backup_folder_takes_only_its_own_manifest() {
        let dir = tempfile::tempdir().unwrap();
        let manifest = |file: &str| Manifest {
            format: 1,
            project_dir: "/p".into(),
            created_at_ms: 1,
            file: file.into(),
            sealed: false,
            bytes: 1,
            conversations: Vec::new(),
            fingerprint: String::new(),
        };
        let path = dir.path().join("20261128T000000Z.manifest.json");
        fs::write(&path, serde_json::to_vec(&manifest("20261128T000000Z.lok")).unwrap()).unwrap();
        assert!(forget_moved_if_empty(&dir.path().join("20261128T000000Z.moved")));
        assert!(path.is_file(), "the .lok's manifest was taken");
        fs::write(&path, serde_json::to_vec(&manifest("20261128T000000Z.moved")).unwrap()).unwrap();
        fs::create_dir_all(dir.path().join("20261128T000000Z.moved/claude/projects")).unwrap();
        assert!(forget_moved_if_empty(&dir.path().join("20261128T000000Z.moved")));
        assert!(!path.exists() && !dir.path().join("20261128T000000Z.moved").exists());
    }

    #[test]
    fn a_manifest_sits_beside_its_file() {
        assert_eq!(
            manifest_of(Path::new("/a/20261127T101010Z.lok")),
            Path::new("/a/20261127T101010Z.manifest.json")
        );
        assert_eq!(manifest_of(Path::new("/a/x-2.lok.age")), Path::new("/a/x-2.manifest.json"));
        assert_eq!(manifest_of(Path::new("/a/x.moved")), Path::new("/a/x.manifest.json"));
    }
}
