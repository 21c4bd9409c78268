//! What sealing costs: `lokust-shell-snapshot --bundle` plain against the same sealed to
//! an age key (`--encrypt-to age1…`), and `lokust-shell-restore` of each, on the
//! generated Claude Code project of the bundle benchmark. Wall time is the median of 5
//! rounds (3 above 100 MB), plain and sealed taken in turn; peak RSS is the highest seen.
//! The target: sealing adds at most 10% to the bundle's wall time, and memory stays flat
//! whatever the size. `cargo bench --bench seal` runs 100 MB; `-- 1000` adds 1 GB.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use age::secrecy::ExposeSecret;

#[path = "common/rng.rs"]
mod rng;

#[path = "common/project.rs"]
mod project;
use project::{generate, measure};

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn run(mb: u64, work: &Path) {
    let home = work.join(format!("home-{mb}"));
    let project = work.join(format!("project-{mb}"));
    fs::create_dir_all(&project).unwrap();
    let cwd = fs::canonicalize(&project).unwrap();
    let slot = home.join(".claude/projects").join(lokust::capture::claude::slot_name(cwd.to_str().unwrap()));
    if !slot.is_dir() {
        generate(&slot, cwd.to_str().unwrap(), mb);
    }
    let key = age::x25519::Identity::generate();
    let key_file = work.join("seal-bench-key.txt");
    fs::write(&key_file, format!("{}\n", key.to_string().expose_secret())).unwrap();
    let recipient = key.to_public().to_string();
    let plain = work.join(format!("seal-plain-{mb}.lok"));
    let sealed = work.join(format!("seal-sealed-{mb}.lok.age"));
    let snapshot = env!("CARGO_BIN_EXE_lokust-shell-snapshot");
    let restore = env!("CARGO_BIN_EXE_lokust-shell-restore");
    let warm =
        Command::new("sh").arg("-c").arg(format!("cat {}/*.jsonl > /dev/null", slot.display())).status();
    assert!(warm.is_ok_and(|s| s.success()));

    let snap = |out: &Path, seal: &[&str]| {
        measure(
            Command::new(snapshot)
                .env("HOME", &home)
                .env("PWD", &cwd)
                .current_dir(&cwd)
                .args(["--bundle", "-q"])
                .args(seal)
                .arg("-o")
                .arg(out),
        )
    };
    let target = work.join(format!("seal-restored-{mb}"));
    let restore_home = work.join(format!("seal-restore-home-{mb}"));
    let unseal = |file: &Path, keys: &[&Path]| {
        let _ = fs::remove_dir_all(&target);
        let _ = fs::remove_dir_all(&restore_home);
        let mut cmd = Command::new(restore);
        cmd.env("HOME", &restore_home).arg(file).arg("--to").arg(&target);
        for k in keys {
            cmd.arg("-i").arg(k);
        }
        measure(&mut cmd)
    };
    let rounds = if mb <= 100 { 5 } else { 3 };
    let (mut p, mut s, mut pr, mut sr) = (vec![], vec![], vec![], vec![]);
    let (mut p_rss, mut s_rss, mut pr_rss, mut sr_rss) = (0, 0, 0, 0);
    for _ in 0..rounds {
        let (t, rss) = snap(&plain, &[]);
        p.push(t);
        p_rss = p_rss.max(rss);
        let (t, rss) = snap(&sealed, &["--encrypt-to", &recipient]);
        s.push(t);
        s_rss = s_rss.max(rss);
        let (t, rss) = unseal(&plain, &[]);
        pr.push(t);
        pr_rss = pr_rss.max(rss);
        let (t, rss) = unseal(&sealed, &[&key_file]);
        sr.push(t);
        sr_rss = sr_rss.max(rss);
    }
    let (p, s, pr, sr) = (median(p), median(s), median(pr), median(sr));
    let secs = |d: Duration| d.as_secs_f64();
    let mib = |kib: u64| kib as f64 / 1024.0;
    let size = |f: &Path| fs::metadata(f).unwrap().len() as f64 / 1e6;
    println!("project {mb} MB");
    println!(
        "  bundle   plain {:6.2} s {:6.1} MB RSS | sealed {:6.2} s {:6.1} MB RSS | sealing adds {:+.1}% (target <= 10%) | {:.1} -> {:.1} MB",
        secs(p),
        mib(p_rss),
        secs(s),
        mib(s_rss),
        (secs(s) / secs(p) - 1.0) * 100.0,
        size(&plain),
        size(&sealed)
    );
    println!(
        "  restore  plain {:6.2} s {:6.1} MB RSS | sealed {:6.2} s {:6.1} MB RSS | opening adds {:+.1}%",
        secs(pr),
        mib(pr_rss),
        secs(sr),
        mib(sr_rss),
        (secs(sr) / secs(pr) - 1.0) * 100.0
    );
    for f in [&plain, &sealed, &key_file] {
        let _ = fs::remove_file(f);
    }
    for d in [&target, &restore_home] {
        let _ = fs::remove_dir_all(d);
    }
}

fn main() {
    let mut sizes: Vec<u64> = vec![100];
    for arg in std::env::args().skip(1) {
        if let Ok(mb) = arg.parse() {
            sizes.push(mb);
        }
    }
    let work: PathBuf = std::env::var_os("LOKUST_BENCH_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("lokust-bench"));
    fs::create_dir_all(&work).unwrap();
    for mb in sizes {
        run(mb, &work);
    }
}
