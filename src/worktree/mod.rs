//! The work that exists only on this machine — unpushed commits, the index, the working
//! tree and untracked files — carried as the `git-worktree` payload and laid back on a
//! checkout of the same repository. Everything goes through the real `git` CLI: bundles,
//! binary diffs and the index are what git itself does most reliably.
//!
//! The payload is a tar (the caller compresses and encodes it like every bundle):
//!
//! | entry | what |
//! | --- | --- |
//! | `meta.json` | [`Meta`]: base, head, branch, remote, commits, files, what was left out |
//! | `commits.bundle` | a standard git bundle of the unpushed commits, when there are any |
//! | `index.patch` | `git diff --cached --binary` against HEAD |
//! | `worktree.patch` | `git diff --binary` of the working tree against the index |
//! | `untracked/<path>` | untracked, not ignored files (symlinks as links) |

mod apply;
mod capture;
mod element;
mod git;
mod paths;

pub use apply::{Applied, ApplyOptions, Carried, Plan, Step, read_tar};
pub use capture::{Capture, CaptureOptions, capture};
pub use element::{ElementStats, Pending, read_element, write_element};

use serde::{Deserialize, Serialize};

/// The `kind` of this payload in the `.lok`'s `bundles` array.
pub const KIND: &str = "git-worktree";

/// The default ceiling on carried work, in bytes (`--max-worktree`).
pub const DEFAULT_MAX_BYTES: u64 = 50 * 1024 * 1024;

/// The git work of the checkout around `cwd` that the remotes do not have, when there is
/// any; what stays behind (a file holding a secret, past `max_bytes`) becomes a warning.
/// A failing git is a warning too: the conversations still go.
pub fn carry(cwd: &std::path::Path, max_bytes: u64, warnings: &mut Vec<String>) -> Option<Capture> {
    let opts = CaptureOptions { max_bytes, ..CaptureOptions::default() };
    match capture(cwd, &opts) {
        Ok(Some(c)) => {
            for l in &c.meta.left_out {
                warnings.push(format!(
                    "--bundle: {} stays behind, not in the carried git work: {}",
                    crate::sanitize::for_terminal(&l.path),
                    l.why
                ));
            }
            let m = &c.meta;
            (!m.commits.is_empty() || !m.files.is_empty()).then_some(c)
        }
        Ok(None) => None,
        Err(e) => {
            warnings.push(format!("--bundle: the git work was not carried: {e:#}"));
            None
        }
    }
}

/// What the payload says about itself; also the fields written beside `data`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Meta {
    /// The commit HEAD pointed at.
    pub head: String,
    /// The newest commit a remote already has, which the target must have too
    /// (`None` when no remote-tracking ref contains any of HEAD's history).
    pub base: Option<String>,
    /// The branch checked out, `None` when HEAD was detached.
    pub branch: Option<String>,
    /// The fetch URL of `origin` (or the first remote), credentials taken out.
    pub remote: Option<String>,
    /// Unpushed commits, newest first.
    #[serde(default)]
    pub commits: Vec<Commit>,
    /// Changed and new files that travel.
    #[serde(default)]
    pub files: Vec<FileState>,
    /// Files that stayed behind, and why.
    #[serde(default)]
    pub left_out: Vec<LeftOut>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Commit {
    pub id: String,
    pub subject: String,
}

/// One carried path: `state` is `staged`, `unstaged` or `untracked`, `change` git's letter
/// (M, A, D, R, T) for the first two.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileState {
    pub path: String,
    pub state: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub change: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeftOut {
    pub path: String,
    pub why: String,
}

/// The names inside the payload's tar.
pub(crate) mod entry {
    pub const META: &str = "meta.json";
    pub const COMMITS: &str = "commits.bundle";
    pub const INDEX: &str = "index.patch";
    pub const WORKTREE: &str = "worktree.patch";
    pub const UNTRACKED: &str = "untracked/";
}
