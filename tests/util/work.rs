//! A git origin and a clone holding every kind of unfinished work (issue 14): unpushed
//! commits on a branch, staged, unstaged, deleted, renamed, binary, executable, a symlink,
//! untracked, ignored, and an untracked file holding a token; and what `git` says of a
//! checkout's state, to compare two of them byte for byte.

use std::fs;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::Path;
use std::process::Command;

pub fn git(dir: &Path, args: &[&str]) -> Vec<u8> {
    let out = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "init.defaultBranch=main"])
        .arg("-C")
        .arg(dir)
        .args(args)
        .env_remove("GIT_DIR")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?} in {}: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

pub fn write(dir: &Path, rel: &str, bytes: &[u8]) {
    let p = dir.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, bytes).unwrap();
}

/// An origin, and a clone with every kind of unfinished work of the issue.
pub fn scenario(root: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let origin = root.join("origin.git");
    let seed = root.join("seed");
    fs::create_dir_all(&seed).unwrap();
    git(root, &["init", "-q", "--bare", origin.to_str().unwrap()]);
    git(&seed, &["init", "-q"]);
    write(&seed, "README.md", b"hello\n");
    write(&seed, "src/lib.rs", b"pub fn a() {}\n");
    write(&seed, "old_name.txt", b"to be renamed, with enough text to be seen as a rename\n");
    write(&seed, "doomed.txt", b"deleted soon\n");
    write(&seed, "run.sh", b"#!/bin/sh\necho hi\n");
    write(&seed, ".gitignore", b"*.log\n");
    git(&seed, &["add", "-A"]);
    git(&seed, &["commit", "-q", "-m", "first"]);
    git(&seed, &["remote", "add", "origin", origin.to_str().unwrap()]);
    git(&seed, &["push", "-q", "origin", "main"]);

    let work = root.join("work");
    git(root, &["clone", "-q", origin.to_str().unwrap(), work.to_str().unwrap()]);
    git(&work, &["checkout", "-q", "-b", "feature"]);
    write(&work, "src/lib.rs", b"pub fn a() {}\npub fn b() {}\n");
    git(&work, &["commit", "-qam", "add b"]);
    write(&work, "src/new.rs", b"pub fn c() {}\n");
    git(&work, &["add", "src/new.rs"]);
    git(&work, &["commit", "-qm", "add c"]);
    // Staged, then unstaged on top of the staged one.
    write(&work, "README.md", b"hello\nstaged line\n");
    git(&work, &["add", "README.md"]);
    write(&work, "README.md", b"hello\nstaged line\nunstaged line\n");
    git(&work, &["rm", "-q", "doomed.txt"]);
    git(&work, &["mv", "old_name.txt", "new_name.txt"]);
    write(&work, "logo.bin", &(0..=255u8).cycle().take(4096).collect::<Vec<_>>());
    git(&work, &["add", "logo.bin"]);
    fs::set_permissions(work.join("run.sh"), fs::Permissions::from_mode(0o755)).unwrap();
    symlink("src/lib.rs", work.join("lib-link")).unwrap();
    git(&work, &["add", "lib-link"]);
    write(&work, "notes/todo.txt", b"untracked notes\n");
    write(&work, "debug.log", b"ignored, must not travel\n");
    write(&work, "deploy.env", b"GITHUB_TOKEN=ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5\n");
    (origin, work)
}

pub fn state(dir: &Path) -> Vec<Vec<u8>> {
    let mut untracked = Vec::new();
    for rel in git(dir, &["ls-files", "--others", "--exclude-standard"])
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
    {
        let rel = String::from_utf8_lossy(rel).into_owned();
        untracked.push(rel.clone().into_bytes());
        untracked.push(fs::read(dir.join(&rel)).unwrap());
    }
    vec![
        git(dir, &["rev-parse", "HEAD"]),
        git(dir, &["symbolic-ref", "HEAD"]),
        git(dir, &["diff", "--cached", "--binary", "--full-index"]),
        git(dir, &["diff", "--binary", "--full-index"]),
        untracked.concat(),
    ]
}
