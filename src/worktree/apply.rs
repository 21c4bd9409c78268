//! The restore side: read a carried payload (refused whole when any part is hostile), plan
//! what laying it on a checkout would do, and do it without destroying anything there.

use std::collections::BTreeSet;
use std::fmt;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use tempfile::TempDir;

use super::{Meta, entry, git, paths};

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
    /// Also lay files that configure what an agent or an editor runs (`--trust-config`).
    pub trust_config: bool,
    pub deadline: Option<Duration>,
}

/// One thing the restore does, in order; `--dry-run` prints them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    Clone { remote: String },
    Stash,
    BackupBranch { branch: String, at: String },
    MoveAside { path: String },
    Fetch { commits: usize },
    Checkout { branch: Option<String>, head: String },
    Index { files: usize },
    WorkTree { files: usize },
    Untracked { files: usize },
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
            Step::Fetch { commits } => write!(f, "fetch {commits} unpushed commit{}", plural(*commits)),
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

    fn count(&self, state: &str) -> usize {
        self.meta.files.iter().filter(|f| f.state == state).count()
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
        let mut steps = Vec::new();
        if Self::needs_clone(dir) {
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
            steps.push(Step::Clone { remote: remote.clone() });
        } else {
            let top = git::text(dir, &["rev-parse", "--show-toplevel"], d).map_err(|_| {
                anyhow!("{} is not a git checkout; the carried work was left out", dir.display())
            })?;
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
        }
        if self.has_commits {
            steps.push(Step::Fetch { commits: self.meta.commits.len() });
        }
        steps.push(Step::Checkout { branch: self.meta.branch.clone(), head: self.meta.head.clone() });
        steps.push(Step::Index { files: self.count("staged") });
        steps.push(Step::WorkTree { files: self.count("unstaged") });
        steps.push(Step::Untracked { files: self.untracked.len() });
        Ok(Plan { dir: dir.to_path_buf(), steps })
    }

    /// Whether the carried head contains `commit` (so moving to it loses nothing). The
    /// carried commits' objects are fetched first (no ref moves), which changes nothing a
    /// person sees.
    fn reaches(&self, dir: &Path, commit: &str, d: Duration) -> bool {
        if self.has_commits && self.fetch(dir, d).is_err() {
            return false;
        }
        git::ok(dir, &["merge-base", "--is-ancestor", commit, &self.meta.head], d)
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
        if !git::ok(dir, &["cat-file", "-e", &format!("{}^{{commit}}", self.meta.head)], d) {
            bail!(
                "{} does not have the carried HEAD {} after the fetch",
                dir.display(),
                short(&self.meta.head)
            );
        }
        if !opts.trust_config {
            self.refuse_executable_config(dir, d)?;
        }
        self.check_patches(dir, d)?;
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
                    let to = format!("{path}.lokust-saved");
                    fs::rename(dir.join(path), dir.join(&to))?;
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

    /// Applies both patches to a scratch index of the carried head: a patch that does not fit
    /// is found before anything in the checkout changes.
    fn check_patches(&self, dir: &Path, d: Duration) -> Result<()> {
        let index = self.dir.path().join("scratch-index");
        let run = |args: &[&std::ffi::OsStr]| {
            let mut c = git::cmd(dir);
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
        Ok(())
    }

    /// Refuses, before anything is laid, work that adds or changes a file an agent or an
    /// editor runs commands from (`.claude/`, `.mcp.json`, `.envrc`…): someone else's file
    /// must not plant a hook or an MCP server in a checkout the user already trusts.
    fn refuse_executable_config(&self, dir: &Path, d: Duration) -> Result<()> {
        let mut paths: Vec<String> = self
            .meta
            .files
            .iter()
            .flat_map(|f| f.path.split(" -> ").map(str::to_string).collect::<Vec<_>>())
            .collect();
        if self.has_commits {
            let range = match &self.meta.base {
                Some(base) => vec![
                    "diff".to_string(),
                    "--name-only".into(),
                    "-z".into(),
                    base.clone(),
                    self.meta.head.clone(),
                ],
                None => vec![
                    "ls-tree".to_string(),
                    "-r".into(),
                    "-z".into(),
                    "--name-only".into(),
                    self.meta.head.clone(),
                ],
            };
            paths.extend(git::split_z(&git::run(dir, &range, d)?));
        }
        let mut found: Vec<String> = paths.into_iter().filter(|p| is_executable_config(p)).collect();
        found.sort();
        found.dedup();
        if !found.is_empty() {
            bail!(
                "the carried work changes files that can run commands or grant permissions ({}); nothing was laid \
                 (look at them with lokust-shell inspect; --trust-config lays them)",
                found
                    .iter()
                    .map(|p| crate::sanitize::for_terminal(p).into_owned())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
        Ok(())
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

    /// Writes each untracked file new (never over one), refusing to follow a link on the way.
    fn write_untracked(&self, dir: &Path) -> Result<()> {
        for (rel, content) in &self.untracked {
            let target = dir.join(rel);
            let mut at = dir.to_path_buf();
            let parents: Vec<_> =
                Path::new(rel).parent().map(|p| p.components().collect()).unwrap_or_default();
            for c in parents {
                at.push(c);
                match fs::symlink_metadata(&at) {
                    Ok(md) if md.file_type().is_symlink() || !md.is_dir() => {
                        bail!("{} is a link or a file, not a folder; {rel} was not written", at.display())
                    }
                    Ok(_) => {}
                    Err(_) => fs::create_dir(&at)?,
                }
            }
            match content {
                Content::Link(to) => std::os::unix::fs::symlink(to, &target)
                    .with_context(|| format!("making the link {}", target.display()))?,
                Content::File { staged, executable } => {
                    let mut out = OpenOptions::new()
                        .write(true)
                        .create_new(true)
                        .open(&target)
                        .with_context(|| format!("writing {}", target.display()))?;
                    io::copy(&mut File::open(staged)?, &mut out)?;
                    out.flush()?;
                    let mode = if *executable { 0o755 } else { 0o644 };
                    fs::set_permissions(&target, fs::Permissions::from_mode(mode))?;
                }
            }
        }
        Ok(())
    }
}

/// Whether `rel` is one of the paths `git status -z` listed (it goes into the stash).
fn dirty_path(status: &[u8], rel: &str) -> bool {
    git::split_z(status).iter().any(|e| e.get(3..) == Some(rel))
}

/// Files of a checkout that an agent or an editor runs commands from, or that grant an
/// agent permissions: project settings with hooks, MCP servers, allowed tools, tasks.
fn is_executable_config(path: &str) -> bool {
    const FOLDERS: &[&str] =
        &[".claude/", ".gemini/", ".codex/", ".opencode/", ".factory/", ".vscode/", ".devcontainer/"];
    const FILES: &[&str] = &[".mcp.json", "opencode.json", ".envrc"];
    let path = path.trim_start_matches("./");
    FOLDERS.iter().any(|f| path.starts_with(f) || path.contains(&format!("/{f}")))
        || FILES.iter().any(|f| path == *f || path.ends_with(&format!("/{f}")))
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
