//! The snapshot side: what this checkout has that its remotes do not, written to a private
//! temp folder and streamed out as a tar.

use std::fs::{self, File};
use std::io::{self, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use tempfile::TempDir;

use super::{Commit, DEFAULT_MAX_BYTES, FileState, LeftOut, Meta, entry, git, paths};
use crate::capture::git::strip_credentials;
use crate::redact::{Report, redact_report};

#[derive(Debug, Clone)]
pub struct CaptureOptions {
    /// Ceiling on carried bytes (`--max-worktree`); what does not fit stays behind.
    pub max_bytes: u64,
    /// Deadline for each git command.
    pub deadline: Duration,
}

impl Default for CaptureOptions {
    fn default() -> Self {
        CaptureOptions { max_bytes: DEFAULT_MAX_BYTES, deadline: Duration::from_secs(120) }
    }
}

/// The carried work, staged in a private (0700) temp folder until it is streamed out.
pub struct Capture {
    pub meta: Meta,
    /// The checkout's top level.
    pub root: PathBuf,
    staged: TempDir,
    untracked: Vec<Untracked>,
}

struct Untracked {
    rel: String,
    link: Option<String>,
    executable: bool,
}

/// Captures the work in the repository containing `cwd`; `Ok(None)` outside a repository,
/// in a bare one, or before the first commit (there is nothing to lay it on).
pub fn capture(cwd: &Path, opts: &CaptureOptions) -> Result<Option<Capture>> {
    let d = opts.deadline;
    let Ok(root) = git::text(cwd, &["rev-parse", "--show-toplevel"], d) else {
        return Ok(None);
    };
    if root.is_empty() {
        return Ok(None);
    }
    let root = PathBuf::from(root);
    let Ok(head) = git::text(&root, &["rev-parse", "--verify", "-q", "HEAD^{commit}"], d) else {
        return Ok(None);
    };
    let branch =
        git::text(&root, &["symbolic-ref", "-q", "--short", "HEAD"], d).ok().filter(|b| !b.is_empty());
    if let Some(rule) = branch.as_deref().and_then(|b| secret_in(b.as_bytes())) {
        bail!(
            "the name of the branch checked out holds a secret ({rule}); the git work of {} was left out \
             (rename the branch, or pass --no-worktree)",
            root.display()
        );
    }
    let remote = remote_url(&root, d)
        .map(|u| redact_report(&strip_credentials(&u), &mut Report::default()).into_owned());

    let staged = tempfile::Builder::new().prefix("lokust-worktree-").tempdir()?;
    let mut meta = Meta { head: head.clone(), branch, remote, ..Meta::default() };

    // Commits HEAD has that no remote-tracking ref contains.
    let log = git::text(&root, &["log", "--format=%H%x1f%s", "HEAD", "--not", "--remotes"], d)?;
    meta.commits = log
        .lines()
        .filter_map(|l| l.split_once('\x1f'))
        .map(|(id, subject)| Commit { id: id.into(), subject: subject.into() })
        .collect();
    let boundary = git::text(&root, &["rev-list", "--boundary", "HEAD", "--not", "--remotes"], d)?;
    meta.base = if meta.commits.is_empty() {
        Some(head.clone())
    } else {
        boundary.lines().find_map(|l| l.strip_prefix('-')).map(str::to_string)
    };
    let mut used = 0u64;
    if !meta.commits.is_empty() {
        let file = staged.path().join(entry::COMMITS);
        let mut args: Vec<&std::ffi::OsStr> = vec!["bundle".as_ref(), "create".as_ref(), "-q".as_ref()];
        args.push(file.as_os_str());
        for a in ["HEAD", "--not", "--remotes"] {
            args.push(a.as_ref());
        }
        git::run(&root, &args, d)?;
        used += fs::metadata(&file)?.len();
    }

    let excluded = changed_files(&root, d, &mut meta)?;
    for (name, cached) in [(entry::INDEX, true), (entry::WORKTREE, false)] {
        let file = staged.path().join(name);
        write_patch(&root, cached, &file, &excluded, d)?;
        used += fs::metadata(&file)?.len();
    }
    if let Some(found) = secret_in_commits(&root, &meta.commits, d)? {
        bail!(
            "{found}; the git work of {} was left out (take the secret out of the commit, or pass --no-worktree)",
            root.display()
        );
    }
    if used > opts.max_bytes {
        bail!(
            "the unpushed commits and changes of {} take {} bytes, over the {} byte ceiling; raise --max-worktree or pass --no-worktree",
            root.display(),
            used,
            opts.max_bytes
        );
    }

    let untracked = untracked_files(&root, opts, used, &mut meta)?;
    meta.files.extend(untracked.iter().map(|u| FileState {
        path: u.rel.clone(),
        state: "untracked".into(),
        change: None,
    }));
    Ok(Some(Capture { meta, root, staged, untracked }))
}

/// The staged and unstaged changes, listed in `meta`; those whose content holds a secret,
/// or a link out of the checkout, stay behind whole and are returned (every name of a
/// rename) so the patches leave them out.
fn changed_files(root: &Path, d: Duration, meta: &mut Meta) -> Result<Vec<String>> {
    let staged_changes = name_status(root, true, d)?;
    let unstaged_changes = name_status(root, false, d)?;
    let mut excluded: Vec<String> = Vec::new();
    // Every changed path's index entry and blob, read by two git processes in all rather
    // than two per file (a checkout with hundreds of changes spent seconds forking).
    let changed: Vec<&str> = staged_changes
        .iter()
        .chain(&unstaged_changes)
        .filter(|(change, _)| change != "D")
        .filter_map(|(_, paths)| paths.last().map(String::as_str))
        .collect();
    let index = git::index_entries(root, &changed, d)?;
    let ids: Vec<&str> = changed.iter().map(|p| index.get(*p).map_or("", |(_, id)| id.as_str())).collect();
    let wanted: Vec<&str> = ids.iter().copied().filter(|id| !id.is_empty()).collect();
    let contents: std::collections::HashMap<&str, Vec<u8>> =
        wanted.iter().copied().zip(git::blobs(root, &wanted, d)?).collect();
    // A patch carries both sides of a change: what a staged change takes away (HEAD's
    // copy: the `-` and context lines, a binary patch's reverse half) is judged as what it
    // adds. (`HEAD:` names a path up to a newline, which batch input cannot hold.)
    let staged_paths: Vec<String> =
        staged_changes.iter().flat_map(|(_, p)| p.iter().filter(|p| !p.contains('\n')).cloned()).collect();
    let specs: Vec<String> = staged_paths.iter().map(|p| format!("HEAD:{p}")).collect();
    let specs: Vec<&str> = specs.iter().map(String::as_str).collect();
    let head_copies: std::collections::HashMap<&str, Vec<u8>> =
        staged_paths.iter().map(String::as_str).zip(git::blobs(root, &specs, d)?).collect();
    let staged = staged_changes.iter().map(|c| (c, true));
    for ((change, paths), is_staged) in staged.chain(unstaged_changes.iter().map(|c| (c, false))) {
        let Some(new) = paths.last() else { continue };
        if excluded.contains(new) {
            continue;
        }
        // A name is in the patch whatever the change, a deletion's too.
        if let Some(why) = paths.iter().find_map(|p| name_holds_secret(p)) {
            let path = paths.iter().map(|p| crate::redact::redact(p)).collect::<Vec<_>>().join(" -> ");
            meta.left_out.push(LeftOut { path, why });
            excluded.extend(paths.iter().cloned());
            continue;
        }
        // An unstaged change takes away the index's copy, judged below in any case.
        let taken_away = || {
            if !is_staged {
                return None;
            }
            paths.iter().find_map(|p| head_copies.get(p.as_str()).and_then(|b| secret_in(b)))
        };
        let entry = index.get(new.as_str());
        // Two paths may share one blob: each reads it.
        let index_text = entry.and_then(|(_, id)| contents.get(id.as_str()).cloned()).unwrap_or_default();
        let work_text = if change == "D" { Vec::new() } else { read_for_check(&root.join(new)) };
        let found = taken_away().or_else(|| secret_in(&index_text)).or_else(|| secret_in(&work_text));
        let why = if let Some(rule) = found {
            Some(format!("holds a secret ({rule})"))
        } else {
            // A link out of the checkout would be refused on restore, and the whole payload
            // with it: it stays behind here instead.
            let staged_link = entry.is_some_and(|(mode, _)| mode == "120000");
            link_out(root, new, staged_link, &index_text).map(str::to_string)
        };
        if let Some(why) = why {
            meta.left_out.push(LeftOut { path: new.clone(), why });
            excluded.extend(paths.iter().cloned());
        }
    }
    for (state, changes) in [("staged", &staged_changes), ("unstaged", &unstaged_changes)] {
        for (change, paths) in changes.iter() {
            if paths.iter().any(|p| excluded.contains(p)) {
                continue;
            }
            let path = paths.join(" -> ");
            meta.files.push(FileState { path, state: state.into(), change: Some(change.clone()) });
        }
    }
    Ok(excluded)
}

/// The untracked files that travel, not ignored ones, until `used` reaches the ceiling;
/// each one left behind is named in `meta` with why.
fn untracked_files(
    root: &Path,
    opts: &CaptureOptions,
    mut used: u64,
    meta: &mut Meta,
) -> Result<Vec<Untracked>> {
    let mut untracked = Vec::new();
    let list = git::run(root, &["ls-files", "--others", "--exclude-standard", "-z"], opts.deadline)?;
    for rel in git::split_z(&list) {
        let path = root.join(&rel);
        let leave =
            |why: &str, meta: &mut Meta| meta.left_out.push(LeftOut { path: rel.clone(), why: why.into() });
        if let Some(why) = paths::refuse_path(rel.trim_end_matches('/')) {
            leave(why, meta);
            continue;
        }
        if let Some(why) = name_holds_secret(&rel) {
            meta.left_out.push(LeftOut { path: crate::redact::redact(&rel).into_owned(), why });
            continue;
        }
        let Ok(md) = fs::symlink_metadata(&path) else { continue };
        if md.file_type().is_symlink() {
            let target = fs::read_link(&path)?.to_string_lossy().into_owned();
            match paths::refuse_link(&rel, &target) {
                Some(why) => leave(why, meta),
                None => untracked.push(Untracked { rel: rel.clone(), link: Some(target), executable: false }),
            }
            continue;
        }
        if md.is_dir() {
            leave("a nested repository", meta);
            continue;
        }
        if !md.is_file() {
            leave("not a regular file or a link", meta);
            continue;
        }
        if used + md.len() > opts.max_bytes {
            leave(&format!("over the --max-worktree ceiling of {} bytes", opts.max_bytes), meta);
            continue;
        }
        if let Some(rule) = secret_in(&read_for_check(&path)) {
            leave(&format!("holds a secret ({rule})"), meta);
            continue;
        }
        used += md.len();
        untracked.push(Untracked {
            rel: rel.clone(),
            link: None,
            executable: md.permissions().mode() & 0o111 != 0,
        });
    }
    Ok(untracked)
}

impl Capture {
    /// What decides whether the carried work changed since an earlier capture: its
    /// description, its patches, and each untracked file's size and last change (their
    /// bytes are read only when streamed).
    pub fn fingerprint(&self) -> String {
        use sha2::{Digest, Sha256};
        let mut h = Sha256::new();
        h.update(serde_json::to_vec(&self.meta).unwrap_or_default());
        for name in [entry::INDEX, entry::WORKTREE] {
            h.update(name.as_bytes());
            h.update(fs::read(self.staged.path().join(name)).unwrap_or_default());
        }
        for u in &self.untracked {
            let md = fs::symlink_metadata(self.root.join(&u.rel)).ok();
            let changed = md
                .as_ref()
                .and_then(|m| m.modified().ok())
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok());
            h.update(format!("{}\0{:?}\0{:?}\0{:?}\n", u.rel, u.link, md.map(|m| m.len()), changed));
        }
        h.finalize().iter().map(|b| format!("{b:02x}")).collect()
    }

    /// Streams the payload as a tar into `out`, reading each file as it goes.
    pub fn write_tar<W: Write>(&self, out: W) -> Result<W> {
        let mut tar = tar::Builder::new(out);
        tar.follow_symlinks(false);
        let meta = serde_json::to_vec_pretty(&self.meta)?;
        append_bytes(&mut tar, entry::META, &meta)?;
        for name in [entry::COMMITS, entry::INDEX, entry::WORKTREE] {
            let file = self.staged.path().join(name);
            if file.exists() {
                append_file(&mut tar, name, &file, 0o644)?;
            }
        }
        for u in &self.untracked {
            let name = format!("{}{}", entry::UNTRACKED, u.rel);
            match &u.link {
                Some(target) => {
                    let mut h = tar::Header::new_gnu();
                    h.set_entry_type(tar::EntryType::Symlink);
                    h.set_size(0);
                    h.set_mode(0o777);
                    tar.append_link(&mut h, &name, target)?;
                }
                None => {
                    let mode = if u.executable { 0o755 } else { 0o644 };
                    append_file(&mut tar, &name, &self.root.join(&u.rel), mode)
                        .with_context(|| format!("reading {}", self.root.join(&u.rel).display()))?;
                }
            }
        }
        Ok(tar.into_inner()?)
    }
}

fn append_bytes<W: Write>(tar: &mut tar::Builder<W>, name: &str, bytes: &[u8]) -> io::Result<()> {
    let mut h = tar::Header::new_gnu();
    h.set_size(bytes.len() as u64);
    h.set_mode(0o644);
    h.set_entry_type(tar::EntryType::Regular);
    tar.append_data(&mut h, name, bytes)
}

fn append_file<W: Write>(tar: &mut tar::Builder<W>, name: &str, path: &Path, mode: u32) -> io::Result<()> {
    let mut f = File::open(path)?;
    let mut h = tar::Header::new_gnu();
    h.set_size(f.metadata()?.len());
    h.set_mode(mode);
    h.set_entry_type(tar::EntryType::Regular);
    tar.append_data(&mut h, name, &mut f)
}

/// `origin`'s URL, else the first remote's.
fn remote_url(root: &Path, d: Duration) -> Option<String> {
    if let Ok(url) = git::text(root, &["config", "--get", "remote.origin.url"], d)
        && !url.is_empty()
    {
        return Some(url);
    }
    let names = git::text(root, &["remote"], d).ok()?;
    let first = names.lines().next()?;
    git::text(root, &["config", "--get", &format!("remote.{first}.url")], d).ok().filter(|u| !u.is_empty())
}

/// `(letter, [path] or [old, new])` for the index against HEAD, or the tree against the index.
fn name_status(root: &Path, cached: bool, d: Duration) -> Result<Vec<(String, Vec<String>)>> {
    let mut args = vec!["diff", "--name-status", "-z", "-M", "--no-ext-diff", "--ignore-submodules=none"];
    if cached {
        args.extend(["--cached", "HEAD"]);
    }
    let out = git::split_z_exact(&git::run(root, &args, d)?)?;
    let mut changes = Vec::new();
    let mut fields = out.into_iter();
    while let Some(status) = fields.next() {
        let letter: String = status.chars().take(1).collect();
        let n = if letter == "R" || letter == "C" { 2 } else { 1 };
        let paths: Vec<String> = fields.by_ref().take(n).collect();
        changes.push((letter, paths));
    }
    Ok(changes)
}

fn write_patch(root: &Path, cached: bool, out: &Path, excluded: &[String], d: Duration) -> Result<()> {
    let mut c: Vec<String> = [
        "diff",
        "--binary",
        "--full-index",
        "-M",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
        "--submodule=short",
        "--ignore-submodules=none",
        "--src-prefix=a/",
        "--dst-prefix=b/",
    ]
    .map(String::from)
    .to_vec();
    c.push(format!("--output={}", out.display()));
    if cached {
        c.extend(["--cached".into(), "HEAD".into()]);
    }
    c.push("--".into());
    for p in excluded {
        c.push(format!(":(exclude,literal){p}"));
    }
    git::run(root, &c, d)?;
    fs::set_permissions(out, fs::Permissions::from_mode(0o600))?;
    Ok(())
}

/// Why the link at `rel` (in the index or the working tree) may not travel, if it is one.
fn link_out(root: &Path, rel: &str, staged_link: bool, index_blob: &[u8]) -> Option<&'static str> {
    if staged_link && let Some(why) = paths::refuse_link(rel, &String::from_utf8_lossy(index_blob)) {
        return Some(why);
    }
    let path = root.join(rel);
    match fs::symlink_metadata(&path) {
        Ok(md) if md.file_type().is_symlink() => {
            let target = fs::read_link(&path).ok()?.to_string_lossy().into_owned();
            paths::refuse_link(rel, &target)
        }
        _ => None,
    }
}

/// The first unpushed commit that carries a secret, named with its file: in its message,
/// in a line it adds (of a text file or of one git calls binary), or in the name of a file
/// it touches. A commit cannot lose one of them without rewriting history, so such work
/// does not travel. The refusal names the commit and the file redacted.
fn secret_in_commits(root: &Path, commits: &[Commit], d: Duration) -> Result<Option<String>> {
    // The commit objects whole, as the bundle packs them (author, committer, any other
    // header, the message), read by one git process.
    let ids: Vec<&str> = commits.iter().map(|c| c.id.as_str()).collect();
    let objects = git::blobs(root, &ids, d)?;
    for (c, object) in commits.iter().zip(&objects) {
        let shown = git::run(
            root,
            &[
                "show",
                "--format=",
                "-p",
                "--text",
                // A merge as what it brings onto its first parent: its resolution too.
                "--diff-merges=first-parent",
                "--no-color",
                "--no-ext-diff",
                "--no-textconv",
                "--src-prefix=a/",
                "--dst-prefix=b/",
                &c.id,
            ],
            d,
        )?;
        let commit =
            format!("commit {} \"{}\"", &c.id[..12.min(c.id.len())], crate::redact::redact(&c.subject));
        if let Some(rule) = secret_in(object) {
            return Ok(Some(format!("{commit} holds a secret in its message or headers ({rule})")));
        }
        for (file, added) in added_by_file(&shown) {
            if let Some(rule) = secret_in(file.as_bytes()) {
                return Ok(Some(format!(
                    "{commit} touches a file whose name holds a secret ({rule}): {}",
                    crate::redact::redact(&file)
                )));
            }
            if let Some(rule) = secret_in(&added) {
                return Ok(Some(format!("{commit} adds a secret ({rule}) in {file}")));
            }
        }
    }
    Ok(None)
}

/// Each file of a patch, as its `diff --git` line names it (both names of a rename), with
/// the bytes of the lines it adds.
fn added_by_file(patch: &[u8]) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    for line in patch.split(|b| *b == b'\n') {
        if let Some(names) = line.strip_prefix(b"diff --git ") {
            files.push((String::from_utf8_lossy(names).into_owned(), Vec::new()));
        } else if let Some(add) = line.strip_prefix(b"+").filter(|_| !line.starts_with(b"+++"))
            && let Some((_, added)) = files.last_mut()
        {
            added.extend_from_slice(add);
            added.push(b'\n');
        }
    }
    // The header names both sides (`a/x b/x`); one name is enough when they agree.
    for (names, _) in &mut files {
        if let Some((a, b)) = names.split_once(" b/")
            && a.strip_prefix("a/") == Some(b)
        {
            *names = b.to_string();
        }
    }
    files
}

/// The file's bytes for the secret check (empty when unreadable; a link's target).
fn read_for_check(path: &Path) -> Vec<u8> {
    match fs::symlink_metadata(path) {
        Ok(md) if md.file_type().is_symlink() => {
            fs::read_link(path).map(|t| t.to_string_lossy().into_owned().into_bytes()).unwrap_or_default()
        }
        Ok(md) if md.is_file() => fs::read(path).unwrap_or_default(),
        _ => Vec::new(),
    }
}

/// Why a file whose name holds a secret stays behind: the name travels in the tar and is
/// printed by `inspect`.
fn name_holds_secret(rel: &str) -> Option<String> {
    secret_in(rel.as_bytes()).map(|rule| format!("its name holds a secret ({rule})"))
}

/// The first rule of the redactor that fires on `bytes`, if any. Bytes git calls binary
/// (a NUL among them) are judged by their runs of printable text, as `strings` shows
/// them: a token embedded in a binary file is one such run, and the rest is not text.
fn secret_in(bytes: &[u8]) -> Option<String> {
    if bytes.is_empty() {
        return None;
    }
    let text =
        if bytes.contains(&0) { printable_runs(bytes) } else { String::from_utf8_lossy(bytes).into_owned() };
    let mut report = Report::default();
    let _ = redact_report(&text, &mut report);
    (report.values > 0).then(|| report.by_rule.keys().next().map_or("secret".to_string(), |r| r.to_string()))
}

/// The runs of four or more printable ASCII characters of `bytes`, one a line.
fn printable_runs(bytes: &[u8]) -> String {
    let mut out = String::new();
    for run in bytes.split(|b| !(b.is_ascii_graphic() || *b == b' ' || *b == b'\t')) {
        if run.len() >= 4 {
            out.push_str(&String::from_utf8_lossy(run));
            out.push('\n');
        }
    }
    out
}
