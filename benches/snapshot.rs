//! Benchmark of the snapshot's hot paths, printed as figures and ratios (no assertions):
//!
//! - a no-bundle `lokust-shell-snapshot` in this repository (target: under 15 ms median);
//! - the tail of a 100 MB zsh history: lokust's reader next to `tail -n 200` of the same
//!   file (target: within 2x), and whole snapshots over a 100 MB and a 100 KB history
//!   (the same cost is the point).
//!
//! Run with `cargo bench --bench snapshot`.

use std::fs;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use lokust::capture::history;
use lokust::shell::Shell;

const RUNS: usize = 50;

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}

/// Median wall time of running `cmd` to completion, output discarded.
fn time_process(mut make: impl FnMut() -> Command) -> Duration {
    for _ in 0..5 {
        make().stdout(Stdio::null()).stderr(Stdio::null()).status().expect("runs");
    }
    median(
        (0..RUNS)
            .map(|_| {
                let mut cmd = make();
                cmd.stdout(Stdio::null()).stderr(Stdio::null());
                let started = Instant::now();
                let status = cmd.status().expect("runs");
                let took = started.elapsed();
                assert!(status.success(), "{cmd:?} failed");
                took
            })
            .collect(),
    )
}

/// A zsh extended history of about `bytes`, with multi-line and non-ASCII entries.
fn write_history(path: &Path, bytes: u64) {
    let commands = [
        "git status",
        "cargo test --release -- --nocapture",
        "cd ~/src/lokust && ls -la",
        "for f in *.rs; do\\\n  wc -l $f\\\ndone",
        "echo caf\u{e9} na\u{ef}ve",
        "docker run --rm -it -v $PWD:/src rust:1.88 cargo build",
        "kubectl get pods -n production -o wide | grep -v Running",
        "rg -n 'fn main' --type rust | head -20",
    ];
    let mut out = BufWriter::new(fs::File::create(path).unwrap());
    let (mut written, mut i) = (0u64, 0u64);
    while written < bytes {
        let line =
            format!(": {}:0;{} # {i}\n", 1_700_000_000 + i, commands[(i % commands.len() as u64) as usize]);
        out.write_all(line.as_bytes()).unwrap();
        written += line.len() as u64;
        i += 1;
    }
    out.flush().unwrap();
}

fn main() {
    let snapshot_bin = env!("CARGO_BIN_EXE_lokust-shell-snapshot");
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big_history");
    let small = dir.path().join("small_history");
    write_history(&big, 100 * 1024 * 1024);
    write_history(&small, 100 * 1024);
    let repo = env!("CARGO_MANIFEST_DIR");
    let out = dir.path().join("out.lok");

    // `lokust-shell-snapshot > s.lok`: standard output (discarded here).
    let snapshot = |hist: &Path| {
        let hist = hist.to_path_buf();
        move || {
            let mut cmd = Command::new(snapshot_bin);
            cmd.arg("-q").current_dir(repo).env("SHELL", "/bin/zsh").env("HISTFILE", &hist);
            cmd
        }
    };
    let plain = time_process(snapshot(&small));
    println!("no-bundle snapshot > s.lok (git repo, 100 KB history): median {}  (target < 15 ms)", ms(plain));
    // `-o FILE` adds the temp file, fsync and rename that make the write atomic and durable.
    let to_file = time_process(|| {
        let mut cmd = snapshot(&small)();
        cmd.arg("-o").arg(&out);
        cmd
    });
    println!("no-bundle snapshot -o s.lok (atomic, fsync'd): median {}", ms(to_file));

    let tail = time_process(|| {
        let mut cmd = Command::new("tail");
        cmd.args(["-n", "200"]).arg(&big);
        cmd
    });
    let reader = median(
        (0..RUNS)
            .map(|_| {
                let started = Instant::now();
                let entries = history::read_tail(&big, Shell::Zsh, 200).unwrap();
                let took = started.elapsed();
                assert_eq!(entries.len(), 200);
                took
            })
            .collect(),
    );
    println!(
        "tail of a 100 MB history: tail -n 200 {} (a process); lokust reader {} (in process): {:.2}x tail  (target <= 2x)",
        ms(tail),
        ms(reader),
        reader.as_secs_f64() / tail.as_secs_f64()
    );
    let with_big = time_process(snapshot(&big));
    println!(
        "whole snapshot over a 100 MB history {} vs a 100 KB one {}: {:.2}x; vs tail -n 200: {:.2}x",
        ms(with_big),
        ms(plain),
        with_big.as_secs_f64() / plain.as_secs_f64(),
        with_big.as_secs_f64() / tail.as_secs_f64()
    );
}
