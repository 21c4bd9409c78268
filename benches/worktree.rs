//! Issue 14's target: carrying the git work — a 10,000-file working tree with 200 changed
//! files and 20 unpushed commits — adds less than 15% to a `--bundle` of a 100 MB project,
//! in flat memory.
//!
//! Measured in one run on generated data: `lokust-shell-snapshot --bundle` of a 100 MB
//! transcript-like Claude Code project (median of 3), then the git-worktree element of the
//! repository written the way `--bundle` streams it (capture, then tar → gzip → base64 into
//! a sink; median of 3), with the peak RSS of this process before and after.
//! `cargo bench --bench worktree`.

use std::fs;
use std::io::Write;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

#[path = "common/rng.rs"]
mod rng;
use rng::Rng;

fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args([
            "-c",
            "user.name=bench",
            "-c",
            "user.email=bench@example.invalid",
            "-c",
            "init.defaultBranch=main",
        ])
        .arg("-C")
        .arg(dir)
        .args(args)
        .stdout(std::process::Stdio::null())
        .status()
        .expect("git runs");
    assert!(status.success(), "git {args:?}");
}

fn words(r: &mut Rng, n: usize) -> String {
    let mut s = String::new();
    for i in 0..n {
        let len = 2 + r.below(9);
        s.extend((0..len).map(|_| (b'a' + r.below(26) as u8) as char));
        s.push(if i % 12 == 11 { '\n' } else { ' ' });
    }
    s
}

/// An origin and a clone with 10,000 files (about 4 KB each), 20 unpushed commits of 10
/// files each, 100 staged and 100 unstaged changes, and 20 untracked files.
fn repository(root: &Path) -> std::path::PathBuf {
    let mut r = Rng(0x2545_f491_4f6c_dd1d);
    let origin = root.join("origin.git");
    let work = root.join("work");
    fs::create_dir_all(&work).unwrap();
    git(root, &["init", "-q", "--bare", origin.to_str().unwrap()]);
    git(&work, &["init", "-q"]);
    for i in 0..10_000 {
        let p = work.join(format!("src/m{:02}/f{i:05}.rs", i % 100));
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, words(&mut r, 600)).unwrap();
    }
    git(&work, &["add", "-A"]);
    git(&work, &["commit", "-q", "-m", "tree"]);
    git(&work, &["remote", "add", "origin", origin.to_str().unwrap()]);
    git(&work, &["push", "-q", "origin", "main"]);
    let touch = |r: &mut Rng, i: usize| {
        let p = work.join(format!("src/m{:02}/f{i:05}.rs", i % 100));
        let mut f = fs::OpenOptions::new().append(true).open(p).unwrap();
        f.write_all(words(r, 40).as_bytes()).unwrap();
    };
    for c in 0..20 {
        for k in 0..10 {
            touch(&mut r, 5000 + c * 10 + k);
        }
        git(&work, &["commit", "-qam", &format!("change {c}")]);
    }
    for i in 0..100 {
        touch(&mut r, i * 7);
    }
    git(&work, &["add", "-u"]);
    for i in 0..100 {
        touch(&mut r, 1 + i * 7);
    }
    for i in 0..20 {
        fs::write(work.join(format!("new{i}.txt")), words(&mut r, 300)).unwrap();
    }
    work
}

/// A transcript-like project of about `mb` MB, as JSONL.
fn project(slot: &Path, cwd: &str, mb: u64) {
    let mut r = Rng(0x9e37_79b9_7f4a_7c15);
    fs::create_dir_all(slot).unwrap();
    let mut written = 0u64;
    let mut n = 0;
    while written < mb << 20 {
        let mut out = std::io::BufWriter::new(fs::File::create(slot.join(format!("s{n:04}.jsonl"))).unwrap());
        n += 1;
        for _ in 0..2000 {
            let line = serde_json::json!({"type": "assistant", "cwd": cwd, "sessionId": format!("{n}"),
                "message": {"role": "assistant", "content": [{"type": "text", "text": words(&mut r, 80)}]},
                "toolUseResult": {"stdout": words(&mut r, 120)}})
            .to_string();
            out.write_all(line.as_bytes()).unwrap();
            out.write_all(b"\n").unwrap();
            written += line.len() as u64 + 1;
        }
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// Peak RSS of this process so far, in KiB.
fn peak_kib() -> u64 {
    let status = fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn main() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let started = Instant::now();
    let work = repository(root);
    let cwd = fs::canonicalize(&work).unwrap();
    let home = root.join("home");
    let slot = home.join(".claude/projects").join(lokust::capture::claude::slot_name(cwd.to_str().unwrap()));
    project(&slot, cwd.to_str().unwrap(), 100);
    eprintln!("generated in {:.1} s", started.elapsed().as_secs_f64());

    let snapshot = env!("CARGO_BIN_EXE_lokust-shell-snapshot");
    let lok = root.join("b.lok");
    let run = |extra: &[&str]| -> Duration {
        let mut times = Vec::new();
        for _ in 0..3 {
            let t = Instant::now();
            let status = Command::new(snapshot)
                .env_clear()
                .env("HOME", &home)
                .env("PATH", "/usr/bin:/bin")
                .env("PWD", &cwd)
                .current_dir(&cwd)
                .args(["--bundle", "-q", "-o"])
                .arg(&lok)
                .args(extra)
                .stderr(std::process::Stdio::null())
                .status()
                .unwrap();
            assert!(status.success());
            times.push(t.elapsed());
        }
        median(times)
    };
    let bundle = run(&["--no-worktree"]);
    let lok_len = fs::metadata(&lok).unwrap().len();
    let with_work = run(&[]);
    let with_len = fs::metadata(&lok).unwrap().len();
    println!(
        "--bundle with the git work: {:.2} s vs {:.2} s without ({:+.1}%), {:.1} MB vs {:.1} MB",
        with_work.as_secs_f64(),
        bundle.as_secs_f64(),
        100.0 * (with_work.as_secs_f64() / bundle.as_secs_f64() - 1.0),
        with_len as f64 / 1e6,
        lok_len as f64 / 1e6
    );

    let before = peak_kib();
    let mut carried = Vec::new();
    let mut stats = lokust::worktree::ElementStats::default();
    for _ in 0..3 {
        let t = Instant::now();
        let cap =
            lokust::worktree::capture(&cwd, &lokust::worktree::CaptureOptions::default()).unwrap().unwrap();
        stats = lokust::worktree::write_element(&cap, std::io::sink()).unwrap();
        carried.push(t.elapsed());
        assert_eq!(cap.meta.commits.len(), 20);
    }
    let carried = median(carried);
    let after = peak_kib();
    println!(
        "--bundle of a 100 MB project: {:.2} s, {:.1} MB .lok",
        bundle.as_secs_f64(),
        lok_len as f64 / 1e6
    );
    println!(
        "git-worktree element (10,000 files, 200 changed, 20 unpushed commits): {:.2} s ({:+.1}% of the bundle), {:.2} MB tar, {:.2} MB base64",
        carried.as_secs_f64(),
        100.0 * carried.as_secs_f64() / bundle.as_secs_f64(),
        stats.uncompressed_bytes as f64 / 1e6,
        stats.base64_bytes as f64 / 1e6
    );
    println!(
        "peak RSS of this process: {:.1} MB before, {:.1} MB after carrying it three times",
        before as f64 / 1024.0,
        after as f64 / 1024.0
    );
}
