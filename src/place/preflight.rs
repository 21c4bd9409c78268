//! What is checked of a whole plan before anything of it is written, so that a refusal
//! leaves nothing behind that another part of the same file could use; and what the
//! receiver's disk says of each placement when the plan is made ([`settle`]).

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

use anyhow::bail;
use rustix::fs::FileType;

use super::at::{existing, read_below};
use super::{Content, Placement, Plan, Step};

/// The longest name a Linux or macOS file system takes, in bytes.
const NAME_MAX: usize = 255;

/// Refuses the whole plan, before anything is written, when a placement's path is not
/// plain, a name is too long, two placements write the same path or a file where another
/// needs a folder, a link or a non-folder stands on the way to one, an edited file is not
/// a regular file, or a copy to set aside is not below the placement's root.
pub fn check(plan: &Plan) -> anyhow::Result<()> {
    let mut seen: BTreeSet<PathBuf> = BTreeSet::new();
    let mut walked: BTreeSet<PathBuf> = BTreeSet::new();
    let mut files: BTreeSet<PathBuf> = BTreeSet::new();
    let mut folders: BTreeSet<PathBuf> = BTreeSet::new();
    for p in &plan.items {
        plain(p)?;
        if !matches!(p.step, Step::Write | Step::Replace(_)) {
            continue;
        }
        // Each folder on the way is walked once, however many placements go in it.
        if let Some(parent) = p.rel.parent().filter(|r| !r.as_os_str().is_empty())
            && walked.insert(p.root.join(parent))
        {
            super::at::check_folder(&p.root, parent)?;
        }
        match &p.content {
            Content::Edit(_) => {
                if existing(&p.root, &p.rel)?.is_some_and(|k| k != FileType::RegularFile) {
                    bail!("{} is not a regular file; lokust does not write through it", p.path().display());
                }
                folders.extend(p.rel.ancestors().skip(1).map(|a| p.root.join(a)));
                continue;
            }
            Content::File(_) | Content::Copy { .. } | Content::Link(_) => {
                claim(&mut seen, &mut files, &mut folders, p.path())?
            }
            Content::Staged(from) => {
                claim(&mut seen, &mut files, &mut folders, p.path())?;
                if from.is_dir() {
                    files.remove(&p.path());
                    folders.insert(p.path());
                }
            }
            Content::Folder(entries) => {
                claim(&mut seen, &mut files, &mut folders, p.path())?;
                // Placed whole as a folder: not a file, whatever else claims it.
                files.remove(&p.path());
                folders.insert(p.path());
                for e in entries {
                    claim(&mut seen, &mut files, &mut folders, p.path().join(&e.rel))?;
                }
            }
        }
        if let Step::Replace(theirs) = &p.step {
            for t in theirs {
                let below = t.strip_prefix(&p.root).is_ok_and(|r| {
                    !r.as_os_str().is_empty() && r.components().all(|c| matches!(c, Component::Normal(_)))
                });
                if !below {
                    bail!("{} is not below {}; it is not set aside", t.display(), p.root.display());
                }
                existing(&p.root, t.strip_prefix(&p.root)?)?;
            }
        }
    }
    if let Some(both) = files.iter().find(|f| folders.contains(*f)) {
        bail!("{} would be both a file and a folder; nothing is written", both.display());
    }
    Ok(())
}

/// Records that `path` is written (a file, or a folder placed whole) and that its parents
/// are folders.
fn claim(
    seen: &mut BTreeSet<PathBuf>,
    files: &mut BTreeSet<PathBuf>,
    folders: &mut BTreeSet<PathBuf>,
    path: PathBuf,
) -> anyhow::Result<()> {
    folders.extend(path.ancestors().skip(1).map(Path::to_path_buf));
    files.insert(path.clone());
    if !seen.insert(path.clone()) {
        bail!("{} would be written twice; nothing is written", path.display());
    }
    Ok(())
}

fn plain(p: &Placement) -> anyhow::Result<()> {
    let short = |c: &std::ffi::OsStr| c.len() <= NAME_MAX;
    let rel_ok = !p.rel.as_os_str().is_empty()
        && p.rel.components().all(|c| matches!(c, Component::Normal(n) if short(n)));
    let entries_ok = match &p.content {
        Content::Folder(entries) => entries.iter().all(|e| {
            !e.rel.is_empty()
                && e.rel.split('/').all(|c| !c.is_empty() && c != "." && c != ".." && c.len() <= NAME_MAX)
        }),
        _ => true,
    };
    if !rel_ok || !entries_ok || !p.root.is_absolute() {
        bail!(
            "{} is not a plain path below {} of names a file system takes",
            p.rel.display(),
            p.root.display()
        );
    }
    Ok(())
}

/// What the receiver has where a new file or folder would go decides its step, whatever
/// the agent read: the same bytes are already there; anything else there (a file with
/// other content, a folder, a link) is the receiver's and kept. The conversation to
/// resume is never one kept.
pub fn settle(plan: &mut Plan) {
    for p in &mut plan.items {
        if p.step != Step::Write || matches!(p.content, Content::Edit(_)) {
            continue;
        }
        match existing(&p.root, &p.rel) {
            Ok(None) => {}
            Ok(Some(FileType::RegularFile)) if matches!(&p.content, Content::File(e) if read_below(&p.root, &p.rel).is_some_and(|b| b == e.data)) =>
            {
                p.step = Step::Same;
            }
            Ok(Some(_)) => p.step = Step::Keep(vec![p.path()]),
            // A link on the way refuses the whole plan when it is checked.
            Err(_) => {}
        }
    }
    let kept = |id: &str| plan.items.iter().any(|p| p.session == id && matches!(p.step, Step::Keep(_)));
    if plan.newest.as_deref().is_some_and(kept) {
        plan.newest = None;
    }
}
