//! The git section, read with libgit2: branch (or detached), HEAD, the number of dirty
//! files and the remote with any credentials taken out of its URL.

use std::path::Path;

use git2::{ErrorCode, Repository, StatusOptions};

use crate::lok::Git;
use crate::redact::{Report, redact_report};

/// `Ok(None)` outside a repository; `Err` when a repository is there but unreadable.
pub fn capture(cwd: &Path, report: &mut Report) -> Result<Option<Git>, git2::Error> {
    let repo = match Repository::discover(cwd) {
        Ok(repo) => repo,
        Err(e) if e.code() == ErrorCode::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let (branch, head) = match repo.head() {
        Ok(head) => {
            let id = head.target().map(|oid| oid.to_string());
            let branch = if head.is_branch() { head.shorthand().ok().map(str::to_string) } else { None };
            (branch, id)
        }
        // A repository with no commit yet: HEAD names a branch that does not exist.
        Err(e) if e.code() == ErrorCode::UnbornBranch => {
            let name = repo
                .find_reference("HEAD")
                .ok()
                .and_then(|r| r.symbolic_target().ok().flatten().map(str::to_string))
                .map(|t| t.trim_start_matches("refs/heads/").to_string());
            (name, None)
        }
        Err(e) => return Err(e),
    };
    let detached = repo.head_detached().unwrap_or(false);
    let dirty_files = if repo.is_bare() { 0 } else { count_dirty(&repo)? };
    let remote = remote_url(&repo).map(|url| redact_report(&strip_credentials(&url), report).into_owned());
    // A branch's name is the user's text like any other: a token in it is redacted.
    let branch = branch.map(|b| redact_report(&b, report).into_owned());
    let mut git = Git { branch, head, dirty_files, remote, ..Git::default() };
    git.extra.insert("detached".into(), detached.into());
    Ok(Some(git))
}

fn count_dirty(repo: &Repository) -> Result<u64, git2::Error> {
    let mut opts = StatusOptions::new();
    opts.include_untracked(true).recurse_untracked_dirs(true).include_ignored(false).exclude_submodules(true);
    let statuses = repo.statuses(Some(&mut opts))?;
    Ok(statuses.iter().filter(|s| !s.status().is_empty() && !s.status().is_ignored()).count() as u64)
}

/// `origin`, else the first remote that has a URL.
fn remote_url(repo: &Repository) -> Option<String> {
    if let Ok(origin) = repo.find_remote("origin")
        && let Ok(url) = origin.url()
    {
        return Some(url.to_string());
    }
    let names = repo.remotes().ok()?;
    names.iter().find_map(|name| repo.find_remote(name.ok()??).ok()?.url().ok().map(str::to_string))
}

/// Removes the user-info part of a URL when it can hold a credential: a password, or any
/// user name over http(s), where a bare token in that place is common.
/// `https://user:tok@host/x` → `https://host/x`; `ssh://git@host/x` is left alone.
pub fn strip_credentials(url: &str) -> String {
    let Some(scheme_end) = url.find("://") else {
        return url.to_string();
    };
    let after = &url[scheme_end + 3..];
    let authority_end = after.find(['/', '?', '#']).unwrap_or(after.len());
    let Some(at) = after[..authority_end].rfind('@') else {
        return url.to_string();
    };
    let userinfo = &after[..at];
    let scheme = url[..scheme_end].to_ascii_lowercase();
    if userinfo.contains(':') || scheme.starts_with("http") {
        format!("{}{}", &url[..scheme_end + 3], &after[at + 1..])
    } else {
        url.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::strip_credentials;

    #[test]
    fn credentials_leave_the_url() {
        assert_eq!(strip_credentials("https://user:tok@host/x"), "https://host/x");
        assert_eq!(strip_credentials("https://ghp_abc@github.com/o/r.git"), "https://github.com/o/r.git");
        assert_eq!(strip_credentials("ssh://git@host:22/x"), "ssh://git@host:22/x");
        assert_eq!(strip_credentials("ssh://u:pw@host/x"), "ssh://host/x");
        assert_eq!(strip_credentials("git@github.com:o/r.git"), "git@github.com:o/r.git");
        assert_eq!(strip_credentials("https://host/x?q=a@b"), "https://host/x?q=a@b");
        assert_eq!(strip_credentials("https://a:b:c@d@host/x"), "https://host/x");
    }
}
