//! The restore side: read a carried payload (refused whole when any part is hostile), plan
//! what laying it on a checkout would do, and do it without destroying anything there.

use std::collections::BTreeSet;
use std::fmt;
use std::fs::{self, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use tempfile::TempDir;

use super::{Meta, entry, git, paths};
use crate::policy::{Match, Policy};

/// What the tracked part of a payload lays on a checkout.
struct Laid {
    changes: Vec<LaidPath>,
    /// Commits the carried head adds to what the checkout had.
    commits: usize,
}

/// A path the tracked part adds, changes or removes; a link's target when it lays one.
struct LaidPath {
    path: String,
    link: Option<String>,
    removed: bool,
}

/// A payload read and checked, held in a private (0700) temp folder.
pub struct Carried {
    pub meta: Meta,
    dir: TempDir,
    has_commits: bool,
    /// `(path, staged file or link target, executable)`.
    untracked: Vec<(String, Content)>,
}

enum Content {
    File { staged: PathBuf, executable: bool },
    Link(String),
}

/// Reads the payload's tar. Anything outside the layout — a path out of the checkout or into
/// `.git`, a link pointing out, a device, a duplicate, more than `max_bytes` — refuses the
/// whole payload before anything is written to the checkout.
pub fn read_tar<R: Read>(input: R, max_bytes: u64) -> Result<Carried> {
    let dir = tempfile::Builder::new().prefix("lokust-worktree-").tempdir()?;
    let mut archive = tar::Archive::new(input);
    let mut meta: Option<Meta> = None;
    let mut has_commits = false;
    let mut untracked = Vec::new();
    let mut seen = BTreeSet::new();
    let mut total = 0u64;
    for (n, item) in archive.entries()?.enumerate() {
        let mut item = item.context("the git-worktree payload is not a readable tar")?;
        let name = String::from_utf8(item.path_bytes().into_owned())
            .map_err(|_| anyhow!("the git-worktree payload names a path that is not UTF-8"))?;
        let kind = item.header().entry_type();
        total = total.saturating_add(item.size());
        if total > max_bytes {
            bail!("the git-worktree payload is over {max_bytes} bytes");
        }
        if !seen.insert(name.clone()) {
            bail!("the git-worktree payload holds {name} twice");
        }
        if let Some(rel) = name.strip_prefix(entry::UNTRACKED) {
            if let Some(why) = paths::refuse_path(rel) {
                bail!("the git-worktree payload has {why}: {rel}");
            }
            if kind.is_symlink() {
                let target = item
                    .link_name()?
                    .map(|t| t.to_string_lossy().into_owned())
                    .ok_or_else(|| anyhow!("link {rel} has no target"))?;
                if let Some(why) = paths::refuse_link(rel, &target) {
                    bail!("the git-worktree payload has {why}: {rel} -> {target}");
                }
                untracked.push((rel.to_string(), Content::Link(target)));
            } else if kind.is_file() {
                let executable = item.header().mode()? & 0o111 != 0;
                let staged = dir.path().join(format!("u{n}"));
                copy_private(&mut item, &staged)?;
                untracked.push((rel.to_string(), Content::File { staged, executable }));
            } else {
                bail!("the git-worktree payload has {rel}, which is neither a file nor a link");
            }
            continue;
        }
        if !kind.is_file() {
            bail!("the git-worktree payload has {name}, which is not a file");
        }
        match name.as_str() {
            entry::META => {
                let mut text = Vec::new();
                item.read_to_end(&mut text)?;
                meta = Some(serde_json::from_slice(&text).context("the git-worktree payload's meta.json")?);
            }
            entry::COMMITS | entry::INDEX | entry::WORKTREE => {
                copy_private(&mut item, &dir.path().join(&name))?;
                has_commits |= name == entry::COMMITS;
            }
            other => bail!("the git-worktree payload has an entry lokust does not know: {other}"),
        }
    }
    let meta = meta.ok_or_else(|| anyhow!("the git-worktree payload has no meta.json"))?;
    check_meta(&meta)?;
    // A file and a folder of the same name cannot both be laid down.
    let names: BTreeSet<&str> = untracked.iter().map(|(r, _)| r.as_str()).collect();
    for r in &names {
        let mut p = Path::new(r).parent();
        while let Some(parent) = p.filter(|p| !p.as_os_str().is_empty()) {
            if names.contains(parent.to_str().unwrap_or_default()) {
                bail!("the git-worktree payload has {r} below the file {}", parent.display());
            }
            p = parent.parent();
        }
    }
    for patch in [entry::INDEX, entry::WORKTREE] {
        let file = dir.path().join(patch);
        if file.exists() {
            check_patch(&file)?;
        }
    }
    Ok(Carried { meta, dir, has_commits, untracked })
}

fn copy_private(from: &mut impl Read, to: &Path) -> Result<()> {
    let mut f = OpenOptions::new().write(true).create_new(true).mode(0o600).open(to)?;
    io::copy(from, &mut f)?;
    Ok(())
}

fn is_hex_id(s: &str) -> bool {
    (s.len() == 40 || s.len() == 64) && s.bytes().all(|b| b.is_ascii_hexdigit())
}

fn check_meta(meta: &Meta) -> Result<()> {
    if !is_hex_id(&meta.head) || meta.base.as_deref().is_some_and(|b| !is_hex_id(b)) {
        bail!("the git-worktree payload's head or base is not a commit id");
    }
    if let Some(b) = &meta.branch
        && (b.starts_with('-')
            || b.is_empty()
            || b.contains("..")
            || b.chars().any(|c| c.is_control() || " ~^:?*[\\".contains(c)))
    {
        bail!("the git-worktree payload names a branch git would not accept: {b:?}");
    }
    Ok(())
}

/// Every path a patch touches stays inside and out of `.git`; a link it makes points inside.
fn check_patch(file: &Path) -> Result<()> {
    let text = fs::read(file)?;
    let mut link_path: Option<String> = None;
    let mut in_link = false;
    for line in text.split(|b| *b == b'\n') {
        let line = String::from_utf8_lossy(line);
        if let Some(rest) = line.strip_prefix("diff --git ") {
            in_link = false;
            link_path = None;
            for part in rest.split(' ') {
                let p = part.trim_matches('"');
                if let Some(p) = p.strip_prefix("a/").or_else(|| p.strip_prefix("b/"))
                    && let Some(why) = paths::refuse_path(p)
                {
                    bail!("a carried patch has {why}: {p}");
                }
            }
            continue;
        }
        for header in ["--- a/", "+++ b/", "rename from ", "rename to ", "copy from ", "copy to "] {
            if let Some(p) = line.strip_prefix(header) {
                let p = p.trim_matches('"');
                if let Some(why) = paths::refuse_path(p) {
                    bail!("a carried patch has {why}: {p}");
                }
                if header == "+++ b/" {
                    link_path = Some(p.to_string());
                }
            }
        }
        if (line.starts_with("new file mode ") || line.starts_with("new mode ")) && line.ends_with("120000") {
            in_link = true;
        }
        if line.starts_with("index ") && line.ends_with(" 120000") {
            in_link = true;
        }
        if in_link
            && let Some(target) = line.strip_prefix('+').filter(|_| !line.starts_with("+++"))
            && let Some(path) = &link_path
            && let Some(why) = paths::refuse_link(path, target)
        {
            bail!("a carried patch has {why}: {path} -> {target}");
        }
    }
    Ok(())
}

#[derive(Debug, Clone, Default)]
pub struct ApplyOptions {
    /// Save what would be overwritten (a stash, a backup branch, a renamed file), then go on.
    pub force: bool,
    /// Clone the snapshot's remote into an absent or empty DIR first.
    pub clone: bool,
    /// What is not laid: files that configure what an agent or an editor runs. `None`
    /// lays everything (`--trust-config`).
    pub withhold: Option<Policy>,
    pub deadline: Option<Duration>,
}

/// One thing the restore does, in order; `--dry-run` prints them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    Clone {
        remote: String,
    },
    Stash,
    BackupBranch {
        branch: String,
        at: String,
    },
    MoveAside {
        path: String,
    },
    /// How many commits the carried bundle adds, when the checkout can tell.
    Fetch {
        commits: Option<usize>,
    },
    Checkout {
        branch: Option<String>,
        head: String,
    },
    Index {
        files: usize,
    },
    WorkTree {
        files: usize,
    },
    Untracked {
        files: usize,
    },
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Step::Clone { remote } => write!(f, "clone {remote}"),
            Step::Stash => write!(f, "save the checkout's own changes in a stash (git stash list)"),
            Step::BackupBranch { branch, at } => {
                write!(f, "keep commit {} on a new branch {branch}", short(at))
            }
            Step::MoveAside { path } => write!(f, "move {path} aside to {path}.lokust-saved"),
            Step::Fetch { commits: Some(n) } => write!(f, "fetch {n} unpushed commit{}", plural(*n)),
            Step::Fetch { commits: None } => write!(f, "fetch the carried unpushed commits"),
            Step::Checkout { branch: Some(b), head } => write!(f, "check out branch {b} at {}", short(head)),
            Step::Checkout { branch: None, head } => write!(f, "check out {} (detached)", short(head)),
            Step::Index { files } => write!(f, "stage {files} change{}", plural(*files)),
            Step::WorkTree { files } => write!(f, "lay {files} unstaged change{}", plural(*files)),
            Step::Untracked { files } => write!(f, "write {files} untracked file{}", plural(*files)),
        }
    }
}

fn short(id: &str) -> &str {
    &id[..id.len().min(12)]
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// What laying the payload on a checkout will do.
#[derive(Debug, Clone)]
pub struct Plan {
    pub dir: PathBuf,
    pub steps: Vec<Step>,
}

/// What was done, with the names of what was saved.
#[derive(Debug, Clone, Default)]
pub struct Applied {
    pub saved: Vec<String>,
}

impl Carried {
    fn deadline(opts: &ApplyOptions) -> Duration {
        opts.deadline.unwrap_or(Duration::from_secs(600))
    }

    /// Whether `dir` has no checkout yet (missing or empty): the work needs a clone first.
    pub fn needs_clone(dir: &Path) -> bool {
        fs::read_dir(dir).map(|mut e| e.next().is_none()).unwrap_or(true)
    }

    /// The command that makes the checkout at `dir` the work can be laid on, when the
    /// snapshot names a remote lokust would clone (never an option or a transport helper).
    pub fn clone_command(&self, dir: &Path) -> Result<String> {
        let remote = self.meta.remote.as_deref().context("the snapshot names no remote to clone")?;
        check_remote(remote)?;
        Ok(format!(
            "git clone -- {} {}",
            crate::shell::posix_quote(remote, crate::shell::Quote::WhenNeeded),
            crate::shell::posix_quote(&dir.to_string_lossy(), crate::shell::Quote::WhenNeeded)
        ))
    }

    /// Decides what laying the payload on `dir` takes; refuses, with the reason, what would
    /// destroy something there unless `opts.force`.
    pub fn plan(&self, dir: &Path, opts: &ApplyOptions) -> Result<Plan> {
        let d = Self::deadline(opts);
        let mut steps = if Self::needs_clone(dir) {
            vec![self.clone_step(dir, opts)?]
        } else {
            self.steps_on(dir, opts, d)?
        };
        // What the tracked part lays is read from the payload itself, laid on the checkout
        // in a scratch index; with a clone still to come, apply does the same after it.
        self.refuse_withheld(Vec::new(), opts)?;
        let commits = if Self::needs_clone(dir) {
            None
        } else {
            let laid = self.laid(dir, &self.scratch_repo(dir, d)?, d)?;
            self.check_laid(&laid, opts)?;
            for path in ignored_in_the_way(dir, &laid, d)? {
                if !opts.force {
                    bail!(
                        "{} is in the way of the carried work, and git ignores it, so checking out would \
                         overwrite or delete it (pass --force to move it aside)",
                        dir.join(&path).display()
                    );
                }
                steps.insert(0, Step::MoveAside { path });
            }
            Some(laid.commits)
        };
        if self.has_commits {
            steps.push(Step::Fetch { commits });
        }
        steps.push(Step::Checkout { branch: self.meta.branch.clone(), head: self.meta.head.clone() });
        steps.push(Step::Index { files: self.patch_paths(entry::INDEX, d)?.len() });
        steps.push(Step::WorkTree { files: self.patch_paths(entry::WORKTREE, d)?.len() });
        steps.push(Step::Untracked { files: self.untracked.len() });
        Ok(Plan { dir: dir.to_path_buf(), steps })
    }

    /// The clone a restore to a folder with no checkout needs, when `--clone` allows it.
    fn clone_step(&self, dir: &Path, opts: &ApplyOptions) -> Result<Step> {
        let Some(remote) = &self.meta.remote else {
            bail!("{} is not a checkout and the snapshot names no remote to clone", dir.display());
        };
        check_remote(remote)?;
        if !opts.clone {
            bail!(
                "{} has no checkout; run `git clone -- {} {}` and restore again, or pass --clone",
                dir.display(),
                crate::shell::posix_quote(remote, crate::shell::Quote::WhenNeeded),
                crate::shell::posix_quote(&dir.to_string_lossy(), crate::shell::Quote::WhenNeeded)
            );
        }
        Ok(Step::Clone { remote: remote.clone() })
    }

    /// What an existing checkout needs before the work is laid on it: it must be the
    /// repository's top with the base commit; its own changes, commits no branch keeps and
    /// files in the way are saved first, and only with `--force`.
    fn steps_on(&self, dir: &Path, opts: &ApplyOptions, d: Duration) -> Result<Vec<Step>> {
        let mut steps = Vec::new();
        let top = git::text(dir, &["rev-parse", "--show-toplevel"], d)
            .map_err(|_| anyhow!("{} is not a git checkout; the carried work was left out", dir.display()))?;
        if fs::canonicalize(&top).ok() != fs::canonicalize(dir).ok() {
            bail!("{} is inside the checkout {top}, not its top; restore to {top}", dir.display());
        }
        if let Some(base) = &self.meta.base
            && !git::ok(dir, &["cat-file", "-e", &format!("{base}^{{commit}}")], d)
        {
            bail!(
                "{} does not have commit {} the carried work starts from; run `git fetch` there, or restore to a checkout of the same repository",
                dir.display(),
                short(base)
            );
        }
        let status = git::run(dir, &["status", "--porcelain=v1", "-z", "--untracked-files=all"], d)?;
        let dirty = !status.is_empty();
        if dirty {
            if !opts.force {
                bail!(
                    "{} has uncommitted changes of its own; the carried work was not laid on them (pass --force to save them in a stash first)",
                    dir.display()
                );
            }
            steps.push(Step::Stash);
        }
        let stamp = stamp();
        if let Some(branch) = &self.meta.branch
            && let Ok(at) = git::text(
                dir,
                &["rev-parse", "--verify", "-q", &format!("refs/heads/{branch}^{{commit}}")],
                d,
            )
            && at != self.meta.head
            && !self.reaches(dir, &at, d)
        {
            if !opts.force {
                bail!(
                    "branch {branch} in {} is at {}, which the carried branch does not contain; moving it would lose commits (pass --force to keep them on a backup branch)",
                    dir.display(),
                    short(&at)
                );
            }
            steps.push(Step::BackupBranch { branch: format!("lokust-backup/{branch}-{stamp}"), at });
        }
        let detached = git::text(dir, &["symbolic-ref", "-q", "HEAD"], d).is_err();
        if detached
            && let Ok(at) = git::text(dir, &["rev-parse", "--verify", "-q", "HEAD^{commit}"], d)
            && at != self.meta.head
            && !self.reaches(dir, &at, d)
            && git::text(dir, &["for-each-ref", "--contains", &at, "--count=1"], d)
                .unwrap_or_default()
                .is_empty()
        {
            if !opts.force {
                bail!(
                    "{} has commit {} checked out on no branch; checking out the carried work would leave it behind (pass --force to keep it on a backup branch)",
                    dir.display(),
                    short(&at)
                );
            }
            steps.push(Step::BackupBranch { branch: format!("lokust-backup/detached-{stamp}"), at });
        }
        for (rel, _) in &self.untracked {
            let p = dir.join(rel);
            if fs::symlink_metadata(&p).is_ok() && !dirty_path(&status, rel) {
                if !opts.force {
                    bail!(
                        "{} is in the way of a carried untracked file (pass --force to move it aside)",
                        p.display()
                    );
                }
                steps.push(Step::MoveAside { path: rel.clone() });
            }
        }
        Ok(steps)
    }

    /// Whether the carried head contains `commit` (so moving to it loses nothing). The
    /// carried commits' objects are fetched first (no ref moves), which changes nothing a
    /// person sees.
    fn reaches(&self, dir: &Path, commit: &str, d: Duration) -> bool {
        let Ok(repo) = self.scratch_repo(dir, d) else { return false };
        git::ok(&repo, &["merge-base", "--is-ancestor", commit, &self.meta.head], d)
    }

    /// A bare repository in the payload's temp folder that reads the checkout's objects
    /// through `alternates`, with the carried commits fetched into it once: a plan (and
    /// `--dry-run`) writes nothing into the checkout, not even objects.
    fn scratch_repo(&self, dir: &Path, d: Duration) -> Result<PathBuf> {
        let repo = self.dir.path().join("scratch.git");
        if !repo.join("objects/info").is_dir() {
            let common = git::text(dir, &["rev-parse", "--git-common-dir"], d)?;
            let objects = fs::canonicalize(dir.join(common).join("objects"))
                .with_context(|| format!("{} has no object store", dir.display()))?;
            let mut c = git::cmd(self.dir.path());
            c.args(["init", "-q", "--bare"]).arg(&repo);
            crate::exec::output(c, d)?;
            fs::write(repo.join("objects/info/alternates"), format!("{}\n", objects.display()))?;
            if self.has_commits
                && let Err(e) = self.fetch(&repo, d)
            {
                // Not left half made: the next question would take it for fetched.
                let _ = fs::remove_dir_all(&repo);
                return Err(e);
            }
        }
        Ok(repo)
    }

    /// Fetches the carried commits' objects (no ref moves but FETCH_HEAD).
    fn fetch(&self, dir: &Path, d: Duration) -> Result<()> {
        let bundle = self.dir.path().join(entry::COMMITS);
        git::run(dir, &["bundle".as_ref(), "verify".as_ref(), "-q".as_ref(), bundle.as_os_str()], d)
            .context("the carried commits do not fit this repository")?;
        git::run(
            dir,
            &["fetch".as_ref(), "-q".as_ref(), "--no-tags".as_ref(), bundle.as_os_str(), "HEAD".as_ref()],
            d,
        )?;
        Ok(())
    }

    /// Carries out `plan`. Checks every patch against the carried head in a scratch index
    /// before the checkout is touched, so bad data changes nothing.
    pub fn apply(&self, plan: &Plan, opts: &ApplyOptions) -> Result<Applied> {
        let d = Self::deadline(opts);
        let dir = &plan.dir;
        let mut applied = Applied::default();
        for step in &plan.steps {
            if let Step::Clone { remote } = step {
                let mut c = git::cmd(Path::new("."));
                c.args(["-c", "protocol.ext.allow=never", "clone", "-q", "--", remote]).arg(dir);
                crate::exec::output(c, d).with_context(|| format!("git clone {remote}"))?;
            }
        }
        if self.has_commits {
            self.fetch(dir, d)?;
        }
        let laid = self.laid(dir, dir, d)?;
        self.check_laid(&laid, opts)?;
        self.check_untracked_parents(dir)?;
        // The checkout may have changed since the plan: without a stash step it must still be
        // clean, or checking out could carry someone's fresh edit into the carried state.
        if !plan.steps.contains(&Step::Stash)
            && !plan.steps.iter().any(|s| matches!(s, Step::Clone { .. }))
            && !git::run(dir, &["status", "--porcelain=v1", "-z", "--untracked-files=all"], d)?.is_empty()
        {
            bail!(
                "{} changed while restoring; nothing was laid on it (run the restore again)",
                dir.display()
            );
        }
        for step in &plan.steps {
            match step {
                Step::Stash => {
                    let msg = format!("lokust: saved before restoring carried work {}", stamp());
                    git::run(dir, &["stash", "push", "--include-untracked", "-q", "-m", &msg], d)?;
                    applied.saved.push(format!("stash@{{0}} \"{msg}\" (git stash pop to get it back)"));
                }
                Step::BackupBranch { branch, at } => {
                    git::run(dir, &["branch", branch, at], d)?;
                    applied.saved.push(format!("branch {branch} at {}", short(at)));
                }
                Step::MoveAside { path } => {
                    // Never over an earlier saved copy: `-2`, `-3`… after the name then.
                    let to = crate::place::move_aside(dir, Path::new(path), ".lokust-saved")?;
                    let to = to.strip_prefix(dir).unwrap_or(&to).to_string_lossy().into_owned();
                    applied.saved.push(to);
                }
                Step::Checkout { branch: Some(b), head } => {
                    git::run(dir, &["checkout", "-q", "-B", b, head], d)?;
                }
                Step::Checkout { branch: None, head } => {
                    git::run(dir, &["checkout", "-q", "--detach", head], d)?;
                }
                Step::Index { .. } => self.apply_patch(dir, entry::INDEX, &["--index"], d)?,
                Step::WorkTree { .. } => self.apply_patch(dir, entry::WORKTREE, &[], d)?,
                Step::Untracked { .. } => self.write_untracked(dir)?,
                Step::Clone { .. } | Step::Fetch { .. } => {}
            }
        }
        Ok(applied)
    }

    /// What the tracked part will lay on `dir`, read from the payload: the carried head
    /// with both patches applied in a scratch index (a patch that does not fit, or that git
    /// cannot read, is refused here, before the checkout changes), against the checkout's
    /// own HEAD. The paths come from git's reading of the payload, never from `meta.json`.
    /// `repo` holds the objects, the carried commits fetched into it: the checkout itself
    /// when applying, the scratch repository when planning.
    fn laid(&self, dir: &Path, repo: &Path, d: Duration) -> Result<Laid> {
        if !git::ok(repo, &["cat-file", "-e", &format!("{}^{{commit}}", self.meta.head)], d) {
            bail!("{} does not have the carried HEAD {}", dir.display(), short(&self.meta.head));
        }
        let index = self.dir.path().join("scratch-index");
        let run = |args: &[&std::ffi::OsStr]| {
            let mut c = git::cmd(repo);
            c.env("GIT_INDEX_FILE", &index).args(args);
            crate::exec::output(c, d)
        };
        run(&["read-tree".as_ref(), self.meta.head.as_ref()])?;
        for name in [entry::INDEX, entry::WORKTREE] {
            let patch = self.dir.path().join(name);
            if fs::metadata(&patch).map(|m| m.len() > 0).unwrap_or(false) {
                run(&["apply".as_ref(), "--cached".as_ref(), "--binary".as_ref(), patch.as_os_str()])
                    .with_context(|| {
                        format!("the carried {name} does not apply to {}", short(&self.meta.head))
                    })?;
            }
        }
        let tree = String::from_utf8_lossy(&run(&["write-tree".as_ref()])?).trim().to_string();
        const EMPTY_TREE: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";
        let own = git::text(dir, &["rev-parse", "-q", "--verify", "HEAD^{tree}"], d)
            .unwrap_or_else(|_| EMPTY_TREE.to_string());
        let raw = git::run(repo, &["diff-tree", "-r", "-z", "--no-renames", &own, &tree], d)?;
        let mut changes = Vec::new();
        let mut fields = raw.split(|b| *b == 0).filter(|f| !f.is_empty());
        while let (Some(head), Some(path)) = (fields.next(), fields.next()) {
            // `:oldmode newmode oldid newid status`
            let head = String::from_utf8_lossy(head);
            let parts: Vec<&str> = head.trim_start_matches(':').split(' ').collect();
            let path = String::from_utf8(path.to_vec())
                .map_err(|_| anyhow!("the carried work names a path that is not UTF-8"))?;
            let (mode, id) =
                (parts.get(1).copied().unwrap_or_default(), parts.get(3).copied().unwrap_or_default());
            let link = (mode == "120000")
                .then(|| git::run(repo, &["cat-file", "blob", id], d))
                .transpose()?
                .map(|t| String::from_utf8_lossy(&t).into_owned());
            let removed = parts.get(4).is_some_and(|s| s.starts_with('D'));
            changes.push(LaidPath { path, link, removed });
        }
        let commits = match (&self.meta.base, self.has_commits) {
            (_, false) => 0,
            (Some(base), true) => {
                git::text(repo, &["rev-list", "--count", &format!("{base}..{}", self.meta.head)], d)?
                    .parse()
                    .unwrap_or(0)
            }
            (None, true) => {
                git::text(repo, &["rev-list", "--count", &self.meta.head], d)?.parse().unwrap_or(0)
            }
        };
        Ok(Laid { changes, commits })
    }

    /// Refuses tracked work that lays a path out of the checkout or into `.git`, a link
    /// pointing out, or (unless trusted) a file the policy withholds: commits and patches
    /// cannot be laid in part.
    fn check_laid(&self, laid: &Laid, opts: &ApplyOptions) -> Result<()> {
        let safe = |s: &str| crate::sanitize::for_terminal(s).into_owned();
        let mut withheld = Vec::new();
        for change in &laid.changes {
            if let Some(why) = paths::refuse_path(&change.path) {
                bail!("the carried work has {why}: {}", safe(&change.path));
            }
            if let Some(target) = &change.link
                && let Some(why) = paths::refuse_link(&change.path, target)
            {
                bail!("the carried work has {why}: {} -> {}", safe(&change.path), safe(target));
            }
            withheld.push(&change.path);
        }
        // The untracked files go in last: a path the tracked part also writes, or one below
        // a file or link it lays, would stop the restore half-laid. Refused before anything.
        for (rel, _) in &self.untracked {
            let clash = laid.changes.iter().filter(|c| !c.removed).find(|c| {
                *rel == c.path || rel.strip_prefix(c.path.as_str()).is_some_and(|r| r.starts_with('/'))
            });
            if let Some(c) = clash {
                bail!(
                    "the carried work lays {} from its commits or changes and the untracked {} too; nothing of \
                     the git work was laid",
                    safe(&c.path),
                    safe(rel)
                );
            }
        }
        self.refuse_withheld(withheld, opts)
    }

    /// Refuses the whole git work when it lays, tracked (`tracked`) or untracked, a file
    /// the policy withholds: nothing of it is laid, so no part of the same file can use
    /// what was left.
    fn refuse_withheld(&self, tracked: Vec<&String>, opts: &ApplyOptions) -> Result<()> {
        let Some(policy) = &opts.withhold else { return Ok(()) };
        let untracked = self.untracked.iter().map(|(rel, _)| rel);
        let mut found: Vec<String> = tracked
            .into_iter()
            .chain(untracked)
            .filter_map(|p| {
                let m: Match = policy.matches(p)?;
                Some(format!("{} ({})", crate::sanitize::for_terminal(p), m.tool))
            })
            .collect();
        found.sort();
        found.dedup();
        if !found.is_empty() {
            bail!(
                "the carried work changes files that can run commands or grant permissions: {}; nothing of the git \
                 work was laid (look at them with lokust-shell inspect; --trust-config lays them)",
                found.join(", ")
            );
        }
        Ok(())
    }

    /// The paths a carried patch writes, as `git apply` reads it (any prefix, renames).
    fn patch_paths(&self, name: &str, d: Duration) -> Result<Vec<String>> {
        let patch = self.dir.path().join(name);
        if !fs::metadata(&patch).map(|m| m.len() > 0).unwrap_or(false) {
            return Ok(Vec::new());
        }
        let mut c = git::cmd(self.dir.path());
        c.args(["apply", "--numstat", "-z"]).arg(&patch);
        let out = crate::exec::output(c, d)
            .with_context(|| format!("the carried {name} is not a patch git reads"))?;
        // `added\tdeleted\tpath\0`, or for a rename `added\tdeleted\t\0from\0to\0`.
        let mut paths = Vec::new();
        let mut fields = out.split(|b| *b == 0);
        while let Some(field) = fields.next() {
            if field.is_empty() {
                continue;
            }
            let text = String::from_utf8_lossy(field);
            match text.splitn(3, '\t').nth(2) {
                Some("") => {
                    fields.next();
                    paths.extend(fields.next().map(|p| String::from_utf8_lossy(p).into_owned()));
                }
                Some(path) => paths.push(path.to_string()),
                None => bail!("the carried {name} is not a patch git reads"),
            }
        }
        Ok(paths)
    }

    fn apply_patch(&self, dir: &Path, name: &str, extra: &[&str], d: Duration) -> Result<()> {
        let patch = self.dir.path().join(name);
        if !fs::metadata(&patch).map(|m| m.len() > 0).unwrap_or(false) {
            return Ok(());
        }
        let mut c = git::cmd(dir);
        c.args(["apply", "--binary", "--whitespace=nowarn"]).args(extra).arg(&patch);
        crate::exec::output(c, d)
            .with_context(|| format!("applying the carried {name} in {}", dir.display()))?;
        Ok(())
    }

    /// Refuses, before anything is written, an untracked file whose folder in the checkout is
    /// a link or a file: writing through it could land outside.
    fn check_untracked_parents(&self, dir: &Path) -> Result<()> {
        for (rel, _) in &self.untracked {
            let mut at = dir.to_path_buf();
            for c in Path::new(rel).parent().into_iter().flat_map(|p| p.components()) {
                at.push(c);
                match fs::symlink_metadata(&at) {
                    Ok(md) if md.file_type().is_symlink() || !md.is_dir() => {
                        bail!(
                            "{} is a link or a file, not a folder; the carried {rel} cannot go below it",
                            at.display()
                        )
                    }
                    Ok(_) => {}
                    Err(_) => break,
                }
            }
        }
        Ok(())
    }

    /// Writes each untracked file new (never over one) through the placement layer, which
    /// opens every folder on the way with no link followed.
    fn write_untracked(&self, dir: &Path) -> Result<()> {
        let plan = self.untracked_plan(dir);
        let done = crate::place::apply(&plan, std::time::SystemTime::now())?;
        if done.interrupted {
            // The files before the signal are in the checkout: say how many, not "nothing".
            return Err(anyhow!(crate::interrupt::Interrupted)).context(format!(
                "{} of {} untracked files were written before it; restoring again with --force lays the rest",
                done.files,
                plan.items.len()
            ));
        }
        if let Some(there) = done.left.first() {
            bail!("{} appeared while the untracked files were written; left as it is", there.display());
        }
        Ok(())
    }

    /// The untracked files and links as placements in the checkout at `dir`: what the
    /// dry run lists and what is written.
    fn untracked_plan(&self, dir: &Path) -> crate::place::Plan {
        use crate::place;
        let mut plan = place::Plan::new("git work", "file", dir.to_string_lossy());
        for (rel, content) in &self.untracked {
            let content = match content {
                Content::Link(to) => place::Content::Link(PathBuf::from(to)),
                Content::File { staged, executable } => place::Content::Copy {
                    from: staged.clone(),
                    mode: if *executable { 0o755 } else { 0o644 },
                },
            };
            plan.items.push(place::Placement {
                kind: place::Kind::Checkout,
                session: String::new(),
                root: dir.to_path_buf(),
                rel: PathBuf::from(rel),
                content,
                step: place::Step::Write,
            });
        }
        plan
    }

    /// One line per untracked file or link the git work would write, as the dry run
    /// lists them.
    pub fn untracked_lines(&self, dir: &Path) -> Vec<String> {
        self.untracked_plan(dir)
            .describe()
            .into_iter()
            .skip(1)
            .map(|l| format!("  {}", l.trim_start()))
            .collect()
    }
}

impl Carried {
    /// What `inspect` shows: the files as the payload itself writes them (the patches as
    /// git reads them, the untracked entries of the tar), marking what `policy` withholds;
    /// the commits as the sender listed them, since counting them needs the checkout.
    pub fn describe(&self, policy: Option<&Policy>) -> Result<Vec<String>> {
        // A stranger's payload says what it likes: redacted, then made safe to print.
        let clean = |s: &str| crate::sanitize::for_terminal(&crate::redact::redact(s)).into_owned();
        let meta = &self.meta;
        let mut lines = vec![format!(
            "git work on {} at {}{}",
            meta.branch.as_deref().map_or("a detached HEAD".to_string(), clean),
            short(&meta.head),
            meta.remote.as_deref().map_or(String::new(), |r| format!(" (remote {})", clean(r)))
        )];
        if self.has_commits {
            lines.push(format!(
                "  {} unpushed commit{} (as the sender lists them; a restore counts them from the commits)",
                meta.commits.len(),
                plural(meta.commits.len())
            ));
            for c in &meta.commits {
                lines.push(format!("    {} {}", short(&c.id), clean(&c.subject)));
            }
        }
        let d = Duration::from_secs(60);
        let mut files: Vec<(&str, String)> = Vec::new();
        files.extend(self.patch_paths(entry::INDEX, d)?.into_iter().map(|p| ("staged", p)));
        files.extend(self.patch_paths(entry::WORKTREE, d)?.into_iter().map(|p| ("unstaged", p)));
        files.extend(self.untracked.iter().map(|(rel, _)| ("untracked", rel.clone())));
        lines.push(format!("  {} file{}", files.len(), plural(files.len())));
        for (state, path) in &files {
            let mark = policy
                .and_then(|p| p.matches(path))
                .map_or(String::new(), |m| format!("  [withheld: {} runs or grants from it]", m.tool));
            lines.push(format!("    {state:<9} {}{mark}", clean(path)));
        }
        if !meta.left_out.is_empty() {
            lines.push(format!("  left out: {}", meta.left_out.len()));
            for l in &meta.left_out {
                lines.push(format!("    {}: {}", clean(&l.path), clean(&l.why)));
            }
        }
        Ok(lines)
    }
}

/// What the checkout holds that git does not track (so `git status` is silent about it:
/// ignored files) where the carried tree writes a file or a folder: `git checkout` would
/// overwrite or delete it.
fn ignored_in_the_way(dir: &Path, laid: &Laid, d: Duration) -> Result<Vec<String>> {
    let tracked: BTreeSet<String> =
        git::split_z(&git::run(dir, &["ls-files", "-z"], d)?).into_iter().collect();
    let tracked_dirs: BTreeSet<&str> =
        tracked.iter().flat_map(|p| p.match_indices('/').map(move |(at, _)| &p[..at])).collect();
    let mut found = BTreeSet::new();
    for change in laid.changes.iter().filter(|c| !c.removed) {
        let mut at = 0;
        loop {
            let end = change.path[at..].find('/').map_or(change.path.len(), |i| at + i);
            let prefix = &change.path[..end];
            let last = end == change.path.len();
            if !tracked.contains(prefix) && !tracked_dirs.contains(prefix) {
                match fs::symlink_metadata(dir.join(prefix)) {
                    // A real folder of ignored files: the checkout writes beside them.
                    Ok(md) if md.is_dir() && !last => {}
                    Ok(_) => {
                        found.insert(prefix.to_string());
                        break;
                    }
                    Err(_) => break,
                }
            }
            if last {
                break;
            }
            at = end + 1;
        }
    }
    Ok(found.into_iter().collect())
}

/// Whether `rel` is one of the paths `git status -z` listed (it goes into the stash).
fn dirty_path(status: &[u8], rel: &str) -> bool {
    git::split_z(status).iter().any(|e| e.get(3..) == Some(rel))
}

/// A remote lokust will hand to `git clone`: no option, no transport helper (`ext::`).
fn check_remote(remote: &str) -> Result<()> {
    if remote.starts_with('-') || remote.contains("::") || remote.chars().any(char::is_control) {
        bail!("the snapshot's remote {remote:?} is not a URL lokust will clone");
    }
    Ok(())
}

fn stamp() -> String {
    crate::clock::now().as_secs().to_string()
}
