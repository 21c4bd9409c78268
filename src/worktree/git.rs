//! Running `git` for this module: with a deadline, without the caller's `GIT_DIR` and
//! friends (a hook or a test may have set them), and with output never depending on the
//! user's diff configuration.

use std::ffi::OsStr;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, Result};

use crate::exec;

/// A `git -C dir` command, isolated from the environment's repository selection.
pub fn cmd(dir: &Path) -> Command {
    let mut cmd = Command::new("git");
    for var in
        ["GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_NAMESPACE", "GIT_PREFIX"]
    {
        cmd.env_remove(var);
    }
    // Paths come out raw (no octal quoting), and a pager never starts.
    cmd.env("GIT_PAGER", "cat").args(["-c", "core.quotepath=off", "-C"]).arg(dir);
    cmd
}

/// Runs `git -C dir args…` and returns stdout.
pub fn run<S: AsRef<OsStr>>(dir: &Path, args: &[S], deadline: Duration) -> Result<Vec<u8>> {
    let mut c = cmd(dir);
    c.args(args);
    let what =
        args.iter().take(2).map(|a| a.as_ref().to_string_lossy().into_owned()).collect::<Vec<_>>().join(" ");
    exec::output(c, deadline).with_context(|| format!("git {what} in {}", dir.display()))
}

/// [`run`], as trimmed text.
pub fn text<S: AsRef<OsStr>>(dir: &Path, args: &[S], deadline: Duration) -> Result<String> {
    Ok(String::from_utf8_lossy(&run(dir, args, deadline)?).trim().to_string())
}

/// Whether `git -C dir args…` succeeds (a question such as `merge-base --is-ancestor`).
pub fn ok<S: AsRef<OsStr>>(dir: &Path, args: &[S], deadline: Duration) -> bool {
    run(dir, args, deadline).is_ok()
}

/// NUL-separated fields of `-z` output.
pub fn split_z(out: &[u8]) -> Vec<String> {
    out.split(|b| *b == 0)
        .filter(|s| !s.is_empty())
        .map(|s| String::from_utf8_lossy(s).into_owned())
        .collect()
}
