//! Redaction and `--bundle` on real Claude Code transcripts (`fixtures/real/
//! claude-code/`, written by other people's sessions), replicated to the size asked for,
//! not on generated text:
//!
//!   redact:  what `--bundle` does to every line (one core), in MB/s
//!   filter:  `lokust-shell redact --as transcript` over the same JSONL, in MB/s
//!   bundle:  `lokust-shell-snapshot --bundle` of a project made of those transcripts, with
//!            redaction and without, against `tar czf - DIR | base64 -w0`
//!   restore: `lokust-shell-restore` of that bundle, against `base64 -d | tar xzf -`
//!
//! `cargo bench --bench transcripts` runs 100 MB; `-- 1000` adds 1 GB (sizes in MB).

use std::fs::{self, File};
use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

// Only `measure` is used here; the project generator is for the other benchmarks.
#[allow(dead_code)]
#[path = "common/rng.rs"]
mod rng;

#[allow(dead_code)]
#[path = "common/project.rs"]
mod project;
use project::measure;

fn real_fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/real")
}

/// Every line of every real transcript, in a fixed order.
fn real_lines() -> Vec<String> {
    let root = real_fixtures().join("claude-code");
    let mut files = Vec::new();
    let mut stack = vec![root.clone()];
    while let Some(dir) = stack.pop() {
        for e in fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())).flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "jsonl") {
                files.push(p);
            }
        }
    }
    files.sort();
    let mut lines = Vec::new();
    for f in files {
        for line in BufReader::new(File::open(&f).unwrap()).lines() {
            let line = line.unwrap();
            if !line.trim().is_empty() {
                lines.push(line);
            }
        }
    }
    assert!(!lines.is_empty(), "no transcripts under {}", root.display());
    lines
}

/// The real lines repeated to `bytes`, split into files of about 8 MB as sessions are.
/// Each repetition gets its own session id, so that no cache sees the same bytes twice
/// more often than a real project would.
fn write_project(dir: &Path, lines: &[String], bytes: u64) -> u64 {
    fs::create_dir_all(dir).unwrap();
    let mut written = 0u64;
    let mut n = 0;
    while written < bytes {
        let id = format!("00000000-0000-4000-8000-{n:012}");
        let mut out = BufWriter::new(File::create(dir.join(format!("{id}.jsonl"))).unwrap());
        let mut in_file = 0u64;
        'fill: loop {
            for line in lines {
                let line = line.replace("\"sessionId\":\"", &format!("\"sessionId\":\"{id}-"));
                out.write_all(line.as_bytes()).unwrap();
                out.write_all(b"\n").unwrap();
                in_file += line.len() as u64 + 1;
                if in_file >= 8 << 20 || written + in_file >= bytes {
                    break 'fill;
                }
            }
        }
        written += in_file;
        n += 1;
    }
    written
}

fn mbps(bytes: u64, took: Duration) -> f64 {
    bytes as f64 / 1e6 / took.as_secs_f64()
}

fn bin(name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().unwrap().parent().unwrap();
    let path = dir.join(name);
    assert!(path.exists(), "{} is not built: run cargo build --release first", path.display());
    path
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

/// One pass of what `--bundle` does to every line of `files`, on this thread alone:
/// the lines changed and the values redacted.
fn redact_pass(files: &[PathBuf]) -> (u64, u64) {
    let mut report = lokust::redact::Report::default();
    let mut changed = 0u64;
    // Read as --bundle reads (`src/bundle/source.rs`): 256 KiB at a time into one
    // buffer, whole lines handed on and the partial last line kept for the next read,
    // each line found with memchr and handed as bytes to what --bundle calls, which
    // checks it as UTF-8 in place. Read whole, the 8 MB files left the caches between
    // the copy and the scan: 8-43% slower in four paired runs.
    const CHUNK: usize = 256 * 1024;
    let mut data: Vec<u8> = Vec::with_capacity(2 * CHUNK);
    for f in files {
        let mut file = File::open(f).unwrap();
        data.clear();
        loop {
            let start = data.len();
            data.resize(start + CHUNK, 0);
            let n = file.read(&mut data[start..]).unwrap();
            data.truncate(start + n);
            let upto = if n == 0 {
                data.len()
            } else {
                memchr::memrchr(b'\n', &data[start..]).map_or(0, |i| start + i + 1)
            };
            let mut at = 0;
            while at < upto {
                let end = memchr::memchr(b'\n', &data[at..upto]).map_or(upto, |i| at + i);
                let line = &data[at..end];
                at = end + 1;
                if line.is_empty() {
                    continue;
                }
                if let std::borrow::Cow::Owned(_) = lokust::redact::redact_line_bytes(line, true, &mut report)
                {
                    changed += 1;
                }
            }
            data.drain(..upto);
            if n == 0 {
                break;
            }
        }
    }
    (changed, report.values)
}

fn run(mb: u64, work: &Path, lines: &[String]) {
    let home = work.join(format!("home-{mb}"));
    let project = work.join(format!("proj-{mb}"));
    fs::create_dir_all(&project).unwrap();
    let real = fs::canonicalize(&project).unwrap();
    let slot = home.join(".claude/projects").join(lokust::capture::claude::slot_name(real.to_str().unwrap()));
    let bytes = write_project(&slot, lines, mb << 20);

    // What --bundle does to each line, on this thread alone.
    let mut files: Vec<PathBuf> = fs::read_dir(&slot).unwrap().flatten().map(|e| e.path()).collect();
    files.sort();
    // Five passes, the median reported with the range: this machine's speed moves by
    // a third from one run of the same binary to the next.
    let mut passes = Vec::new();
    let mut found = (0, 0);
    for _ in 0..5 {
        let started = Instant::now();
        found = redact_pass(&files);
        passes.push(started.elapsed());
    }
    let (changed, values) = found;
    let slowest = *passes.iter().max().unwrap();
    let fastest = *passes.iter().min().unwrap();
    let took = median(passes);
    println!(
        "transcripts {mb} MB ({} real lines repeated): redact_line_bytes {:.0} MB/s on one core (median of 5 passes, {:.0}-{:.0}), {changed} lines changed, {values} values",
        lines.len(),
        mbps(bytes, took),
        mbps(bytes, slowest),
        mbps(bytes, fastest),
    );

    // For a profiler: LOKUST_BENCH_ONLY=redact stops here.
    if std::env::var_os("LOKUST_BENCH_ONLY").is_some_and(|v| v == "redact") {
        let _ = fs::remove_dir_all(&home);
        return;
    }
    // lokust-shell redact --as transcript, the filter by hand.
    let all = work.join(format!("all-{mb}.jsonl"));
    {
        let mut out = BufWriter::new(File::create(&all).unwrap());
        for f in &files {
            std::io::copy(&mut File::open(f).unwrap(), &mut out).unwrap();
        }
    }
    let filter = |args: &[&str]| {
        let started = Instant::now();
        let status = Command::new(bin("lokust-shell"))
            .arg("redact")
            .args(args)
            .stdin(File::open(&all).unwrap())
            .stdout(File::create(work.join("out.jsonl")).unwrap())
            .status()
            .unwrap();
        assert!(status.success());
        started.elapsed()
    };
    if Command::new(bin("lokust-shell"))
        .args(["redact", "--help"])
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("--as"))
    {
        println!(
            "  lokust-shell redact --as transcript: {:.0} MB/s",
            mbps(bytes, filter(&["--as", "transcript"]))
        );
    } else {
        println!("  lokust-shell redact (as text): {:.0} MB/s", mbps(bytes, filter(&[])));
    }

    // --bundle with and without redaction against the shell pipeline, and restore of that
    // bundle against `base64 -d | tar xz` of the pipeline's own output: 5 rounds each,
    // interleaved, so that a slow moment of this machine falls on both sides alike.
    let out = work.join("b.lok");
    let b64 = work.join("b.b64");
    let (mut lok_times, mut raw_times, mut pipe_times) = (Vec::new(), Vec::new(), Vec::new());
    let (mut restore_times, mut untar_times) = (Vec::new(), Vec::new());
    let (mut rss, mut restore_rss) = ((0, 0), (0, 0));
    let restore_home = work.join(format!("restore-home-{mb}"));
    let restored = work.join(format!("restored-{mb}"));
    let untarred = work.join(format!("untarred-{mb}"));
    for _ in 0..5 {
        let mut cmd = Command::new(bin("lokust-shell-snapshot"));
        cmd.current_dir(&real).env("HOME", &home).env("PWD", &real).args(["--bundle", "-q", "-o"]).arg(&out);
        let (t, r) = measure(&mut cmd);
        lok_times.push(t);
        rss.0 = rss.0.max(r);
        let mut cmd = Command::new(bin("lokust-shell-snapshot"));
        cmd.current_dir(&real)
            .env("HOME", &home)
            .env("PWD", &real)
            .args(["--bundle", "--no-redact-bundle", "-q", "-o"])
            .arg(&out);
        raw_times.push(measure(&mut cmd).0);
        let mut cmd = Command::new("sh");
        cmd.arg("-c").arg(format!("tar czf - -C '{}' . | base64 -w0 > '{}'", slot.display(), b64.display()));
        let (t, r) = measure(&mut cmd);
        pipe_times.push(t);
        rss.1 = rss.1.max(r);

        let _ = fs::remove_dir_all(&restore_home);
        let _ = fs::remove_dir_all(&restored);
        let mut cmd = Command::new(bin("lokust-shell-restore"));
        cmd.arg(&out).arg("--to").arg(&restored).env("HOME", &restore_home);
        let (t, r) = measure(&mut cmd);
        restore_times.push(t);
        restore_rss.0 = restore_rss.0.max(r);
        let _ = fs::remove_dir_all(&untarred);
        fs::create_dir_all(&untarred).unwrap();
        let mut cmd = Command::new("sh");
        cmd.arg("-c").arg(format!("base64 -d < '{}' | tar xzf - -C '{}'", b64.display(), untarred.display()));
        let (t, r) = measure(&mut cmd);
        untar_times.push(t);
        restore_rss.1 = restore_rss.1.max(r);
    }
    let (lok, raw, pipe) = (median(lok_times), median(raw_times), median(pipe_times));
    let lok_size = fs::metadata(&out).map(|m| m.len()).unwrap_or(0);
    let pipe_size = fs::metadata(&b64).map(|m| m.len()).unwrap_or(1);
    println!(
        "  --bundle {:.2} s ({:.2}x of tar czf | base64, size {:.3}x, {} MB RSS); without redaction {:.2} s ({:.2}x); pipeline {:.2} s ({} MB RSS), median of 5",
        lok.as_secs_f64(),
        lok.as_secs_f64() / pipe.as_secs_f64(),
        lok_size as f64 / pipe_size as f64,
        rss.0 / 1024,
        raw.as_secs_f64(),
        raw.as_secs_f64() / pipe.as_secs_f64(),
        pipe.as_secs_f64(),
        rss.1 / 1024,
    );
    let (restore, untar) = (median(restore_times), median(untar_times));
    println!(
        "  restore {:.2} s ({:.2}x of base64 -d | tar xz, {} MB RSS); pipeline {:.2} s ({} MB RSS), median of 5",
        restore.as_secs_f64(),
        restore.as_secs_f64() / untar.as_secs_f64(),
        restore_rss.0 / 1024,
        untar.as_secs_f64(),
        restore_rss.1 / 1024,
    );
    for d in [&restore_home, &restored, &untarred] {
        let _ = fs::remove_dir_all(d);
    }
    for p in [&out, &b64, &all, &work.join("out.jsonl")] {
        let _ = fs::remove_file(p);
    }
    let _ = fs::remove_dir_all(&home);
    let _ = fs::remove_dir_all(&project);
}

fn main() {
    let mut sizes: Vec<u64> = vec![100];
    for arg in std::env::args().skip(1) {
        if let Ok(mb) = arg.parse() {
            sizes.push(mb);
        }
    }
    let lines = real_lines();
    let work: PathBuf = std::env::var_os("LOKUST_BENCH_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("lokust-bench-transcripts"));
    fs::create_dir_all(&work).unwrap();
    for mb in sizes {
        run(mb, &work, &lines);
    }
}
