//! `--bundle` and restore against the shell pipelines they replace, on a generated
//! Claude Code project of realistic JSONL (about 5x compressible), in the same run:
//!
//!   bundle:  lokust-shell-snapshot --bundle   vs  tar czf - DIR | base64 -w0
//!   restore: lokust-shell-restore             vs  base64 -d | tar xzf -
//!
//! with wall time (the median of 5 rounds, 3 above 100 MB), output size and peak RSS (of
//! the whole process tree). Redaction is on, as by default. `cargo bench --bench bundle`
//! runs 100 MB; add `-- 1000` for 1 GB too (sizes in MB).

use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

#[path = "common/rng.rs"]
mod rng;

#[path = "common/project.rs"]
mod project;
use project::{generate, measure};

/// The bundle's sizes, from the end of the .lok (they follow the data).
fn sizes(lok: &Path) -> (u64, u64) {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = File::open(lok).unwrap();
    let len = f.metadata().unwrap().len();
    f.seek(SeekFrom::Start(len.saturating_sub(200))).unwrap();
    let mut tail = String::new();
    f.read_to_string(&mut tail).unwrap();
    let field = |name: &str| -> u64 {
        let at = tail.find(&format!("\"{name}\": ")).unwrap() + name.len() + 4;
        tail[at..].chars().take_while(char::is_ascii_digit).collect::<String>().parse().unwrap()
    };
    (field("base64_bytes"), field("uncompressed_bytes"))
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn size_of(path: &Path) -> u64 {
    fs::metadata(path).unwrap().len()
}

fn run(mb: u64, work: &Path) {
    let home = work.join(format!("home-{mb}"));
    let project = work.join(format!("project-{mb}"));
    fs::create_dir_all(&project).unwrap();
    let cwd = fs::canonicalize(&project).unwrap();
    let slot_name = lokust::capture::claude::slot_name(cwd.to_str().unwrap());
    let slot = home.join(".claude/projects").join(&slot_name);
    if !slot.is_dir() {
        generate(&slot, cwd.to_str().unwrap(), mb);
    }
    let lok = work.join(format!("bundle-{mb}.lok"));
    let b64 = work.join(format!("pipeline-{mb}.b64"));
    let snapshot = env!("CARGO_BIN_EXE_lokust-shell-snapshot");
    let restore = env!("CARGO_BIN_EXE_lokust-shell-restore");
    // Warm the page cache so both read from memory.
    let warm =
        Command::new("sh").arg("-c").arg(format!("cat {}/*.jsonl > /dev/null", slot.display())).status();
    assert!(warm.is_ok_and(|s| s.success()));

    let target = work.join(format!("restored-{mb}"));
    let claude_dir = work.join(format!("restore-home-{mb}/.claude"));
    let unpack = work.join(format!("unpacked-{mb}"));
    // This machine's timings vary by a tenth between runs: each figure is the median of
    // several rounds, ours and the pipeline's taken in turn so that both see the same
    // conditions. Peak RSS is the highest seen.
    let rounds = if mb <= 100 { 5 } else { 3 };
    let (mut ours, mut shell, mut ours_r, mut shell_r) = (vec![], vec![], vec![], vec![]);
    let (mut ours_rss, mut shell_rss, mut ours_r_rss, mut shell_r_rss) = (0, 0, 0, 0);
    for _ in 0..rounds {
        let (t, rss) = measure(
            Command::new(snapshot)
                .env_clear()
                .env("HOME", &home)
                .env("PATH", "/usr/bin:/bin")
                .env("PWD", &cwd)
                .current_dir(&cwd)
                .args(["--bundle", "-q", "-o"])
                .arg(&lok),
        );
        ours.push(t);
        ours_rss = ours_rss.max(rss);
        let (t, rss) = measure(Command::new("sh").arg("-c").arg(format!(
            "tar czf - -C '{}' './{}' | base64 -w0 > '{}'",
            slot.parent().unwrap().display(),
            slot_name,
            b64.display()
        )));
        shell.push(t);
        shell_rss = shell_rss.max(rss);

        let _ = fs::remove_dir_all(&target);
        let _ = fs::remove_dir_all(&claude_dir);
        let (t, rss) = measure(
            Command::new(restore)
                .env_clear()
                .env("HOME", work.join(format!("restore-home-{mb}")))
                .arg(&lok)
                .arg("--to")
                .arg(&target)
                .arg("--claude-dir")
                .arg(&claude_dir)
                .stdout(std::process::Stdio::null()),
        );
        ours_r.push(t);
        ours_r_rss = ours_r_rss.max(rss);
        let _ = fs::remove_dir_all(&unpack);
        fs::create_dir_all(&unpack).unwrap();
        let (t, rss) = measure(Command::new("sh").arg("-c").arg(format!(
            "base64 -d '{}' | tar xzf - -C '{}'",
            b64.display(),
            unpack.display()
        )));
        shell_r.push(t);
        shell_r_rss = shell_r_rss.max(rss);
    }
    let (ours, shell, ours_r, shell_r) = (median(ours), median(shell), median(ours_r), median(shell_r));
    let (data_len, tar_len) = sizes(&lok);
    let pipeline_len = size_of(&b64);

    let s = |d: Duration| d.as_secs_f64();
    println!(
        "project {mb} MB ({:.1} MB tar, gzip ratio {:.2}x)",
        tar_len as f64 / 1e6,
        tar_len as f64 / (pipeline_len as f64 * 0.75)
    );
    println!(
        "  bundle   lokust {:6.2} s  {:7.1} MB out  {:6.1} MB RSS | tar czf | base64 -w0 {:6.2} s  {:7.1} MB out  {:6.1} MB RSS | {:.2}x faster, size {:+.2}%",
        s(ours),
        data_len as f64 / 1e6,
        ours_rss as f64 / 1024.0,
        s(shell),
        pipeline_len as f64 / 1e6,
        shell_rss as f64 / 1024.0,
        s(shell) / s(ours),
        (data_len as f64 / pipeline_len as f64 - 1.0) * 100.0
    );
    println!(
        "  restore  lokust {:6.2} s  {:6.1} MB RSS | base64 -d | tar xzf {:6.2} s  {:6.1} MB RSS | {:.2}x faster",
        s(ours_r),
        ours_r_rss as f64 / 1024.0,
        s(shell_r),
        shell_r_rss as f64 / 1024.0,
        s(shell_r) / s(ours_r)
    );
    for p in [&lok, &b64] {
        let _ = fs::remove_file(p);
    }
    for d in [&target, &unpack, &claude_dir] {
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
