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
    // Paths come out raw (no octal quoting), and a pager never starts. What is read is
    // what a bundle packs: replacement objects are not followed (`git replace` would show
    // the check another commit than the one that travels), and a root commit's diff is
    // shown whatever `log.showRoot` says.
    cmd.env("GIT_PAGER", "cat").env("GIT_NO_REPLACE_OBJECTS", "1");
    cmd.args(["-c", "core.quotepath=off", "-c", "log.showRoot=true", "-C"]).arg(dir);
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

/// The index entries of `paths`: path → (mode, blob id), from one `git ls-files -s`.
pub fn index_entries(
    dir: &Path,
    paths: &[&str],
    deadline: Duration,
) -> Result<std::collections::HashMap<String, (String, String)>> {
    let mut args: Vec<String> = vec!["ls-files".into(), "-s".into(), "-z".into(), "--".into()];
    args.extend(paths.iter().map(|p| format!(":(literal){p}")));
    let out = run(dir, &args, deadline)?;
    let mut entries = std::collections::HashMap::new();
    for record in out.split(|b| *b == 0).filter(|r| !r.is_empty()) {
        // `<mode> <id> <stage>\t<path>`
        let text = String::from_utf8_lossy(record);
        let Some((head, path)) = text.split_once('\t') else { continue };
        let mut fields = head.split(' ');
        if let (Some(mode), Some(id)) = (fields.next(), fields.next()) {
            entries.insert(path.to_string(), (mode.to_string(), id.to_string()));
        }
    }
    Ok(entries)
}

/// The contents of the blobs `ids`, in order, read through one `git cat-file --batch`
/// (an id git does not have reads as empty).
pub fn blobs(dir: &Path, ids: &[&str], deadline: Duration) -> Result<Vec<Vec<u8>>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let mut c = cmd(dir);
    c.args(["cat-file", "--batch"]);
    let input: Vec<u8> = ids.iter().flat_map(|id| format!("{id}\n").into_bytes()).collect();
    let out = exec::output_with_input(c, input, deadline)
        .with_context(|| format!("git cat-file --batch in {}", dir.display()))?;
    let mut blobs = Vec::with_capacity(ids.len());
    let mut at = 0;
    for _ in ids {
        let end =
            out[at..].iter().position(|b| *b == b'\n').map(|i| at + i).context("git cat-file: cut output")?;
        let header = String::from_utf8_lossy(&out[at..end]).into_owned();
        at = end + 1;
        // `<id> <type> <size>`, or `<id> missing`.
        let size: Option<usize> =
            header.rsplit(' ').next().and_then(|s| s.parse().ok()).filter(|_| !header.ends_with(" missing"));
        match size {
            Some(n) => {
                let body = out.get(at..at + n).context("git cat-file: cut output")?;
                blobs.push(body.to_vec());
                at += n + 1;
            }
            None => blobs.push(Vec::new()),
        }
    }
    Ok(blobs)
}

/// [`split_z`] for names that must be given back to git exactly (to leave a file out of
/// a patch): one that is not UTF-8 would be given back changed, and match nothing.
pub fn split_z_exact(out: &[u8]) -> Result<Vec<String>> {
    out.split(|b| *b == 0)
        .filter(|s| !s.is_empty())
        .map(|s| {
            String::from_utf8(s.to_vec()).map_err(|_| {
                let name = String::from_utf8_lossy(s);
                anyhow::anyhow!(
                    "a file name that is not UTF-8 ({}) cannot be left out of the carried work exactly",
                    crate::sanitize::for_terminal(&crate::redact::redact(&name))
                )
            })
        })
        .collect()
}

/// NUL-separated fields of `-z` output.
pub fn split_z(out: &[u8]) -> Vec<String> {
    out.split(|b| *b == 0)
        .filter(|s| !s.is_empty())
        .map(|s| String::from_utf8_lossy(s).into_owned())
        .collect()
}
