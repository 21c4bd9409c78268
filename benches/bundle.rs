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
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// Wall time and peak RSS (KiB) of a command and everything it waited for, measured by
/// GNU time: a child forked from this (large) process would inherit its high-water mark.
fn measure(cmd: &mut Command) -> (Duration, u64) {
    // Each run starts with no dirty pages of the one before to write back.
    let _ = Command::new("sync").status();
    let report = std::env::temp_dir().join(format!("lokust-bench-time-{}", std::process::id()));
    let mut timed = Command::new("/usr/bin/time");
    timed.arg("-o").arg(&report).args(["-f", "%U %S %M"]).arg(cmd.get_program()).args(cmd.get_args());
    if let Some(dir) = cmd.get_current_dir() {
        timed.current_dir(dir);
    }
    // Every run sees only what it is given (as under `env -i`), plus a PATH.
    timed.env_clear().env("PATH", "/usr/bin:/bin");
    for (k, v) in cmd.get_envs() {
        match v {
            Some(v) => timed.env(k, v),
            None => timed.env_remove(k),
        };
    }
    timed.stdout(std::process::Stdio::null());
    let start = Instant::now();
    let status = timed.status().expect("spawn /usr/bin/time");
    let wall = start.elapsed();
    assert!(status.success(), "{cmd:?} failed");
    let text = fs::read_to_string(&report).unwrap();
    let _ = fs::remove_file(&report);
    let last = text.trim().lines().last().unwrap_or("");
    let fields: Vec<&str> = last.split_whitespace().collect();
    if std::env::var_os("LOKUST_BENCH_VERBOSE").is_some() {
        eprintln!("    {:?}: {wall:?} wall, user {} s, sys {} s", cmd.get_program(), fields[0], fields[1]);
    }
    (wall, fields.last().and_then(|m| m.parse().ok()).unwrap_or(0))
}

#[path = "common/rng.rs"]
mod rng;
use rng::Rng;

fn uuid(r: &mut Rng) -> String {
    let (a, b) = (r.next(), r.next());
    format!(
        "{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}",
        a >> 32,
        (a >> 16) & 0xffff,
        a & 0xfff,
        b >> 52,
        b & 0xffff_ffff_ffff
    )
}

/// Words and bits of code, common words far more often (roughly Zipf).
fn prose(r: &mut Rng, words: &[String], n: usize) -> String {
    const CODE: [&str; 14] = [
        "fn ", "let ", "impl ", "match ", "return ", "::", "()", "{", "}", ";", "&mut ", "self.", "Ok(",
        "Err(",
    ];
    let mut s = String::new();
    for i in 0..n {
        if i % 9 == 8 {
            s.push_str(CODE[r.below(CODE.len())]);
        }
        s.push_str(&words[(r.below(30) * r.below(30)) % words.len()]);
        s.push(if i % 15 == 14 { '\n' } else { ' ' });
    }
    s
}

/// A transcript-like JSONL project of about `mb` megabytes under `slot`.
fn generate(slot: &Path, cwd: &str, mb: u64) {
    let mut r = Rng(0x9e37_79b9_7f4a_7c15);
    let words: Vec<String> = (0..600)
        .map(|_| {
            let len = 2 + r.below(9);
            (0..len).map(|_| (b'a' + r.below(26) as u8) as char).collect()
        })
        .collect();
    let text = |r: &mut Rng, n: usize| prose(r, &words, n);
    fs::create_dir_all(slot.join("memory")).unwrap();
    fs::write(slot.join("memory/MEMORY.md"), text(&mut r, 500)).unwrap();
    let target = mb * 1024 * 1024;
    let mut written = 0u64;
    let mut session = 0;
    while written < target {
        session += 1;
        let id = uuid(&mut r);
        let path = slot.join(format!("{id}.jsonl"));
        let mut out = BufWriter::new(File::create(&path).unwrap());
        let per_file = (8 << 20).min(target - written);
        let mut n = 0u64;
        let mut parent = "null".to_string();
        let mut last_output = String::new();
        while n < per_file {
            let me = uuid(&mut r);
            let ts = format!(
                "2026-01-{:02}T{:02}:{:02}:{:02}.{:03}Z",
                1 + session % 28,
                r.below(24),
                r.below(60),
                r.below(60),
                r.below(1000)
            );
            let (a, b, c) = (20 + r.below(60), 40 + r.below(200), 100 + r.below(400));
            let (short, answer) = (text(&mut r, a), text(&mut r, b));
            // Tools often show the same file again: two outputs in three repeat the last one.
            if r.below(3) == 0 || last_output.is_empty() {
                last_output = text(&mut r, c);
            }
            let output = last_output.clone();
            let event = if r.below(2) == 0 {
                serde_json::json!({"parentUuid": parent, "isSidechain": false, "userType": "external", "cwd": cwd,
                    "sessionId": id, "version": "2.1.197", "gitBranch": "main", "type": "user",
                    "message": {"role": "user", "content": short},
                    "uuid": me, "timestamp": ts})
            } else {
                serde_json::json!({"parentUuid": parent, "isSidechain": false, "userType": "external", "cwd": cwd,
                    "sessionId": id, "version": "2.1.197", "gitBranch": "main", "type": "assistant",
                    "requestId": format!("req_{:x}{:x}", r.next(), r.next()),
                    "message": {"id": format!("msg_{:x}", r.next()), "type": "message", "role": "assistant",
                        "model": "claude-opus-4-5", "content": [
                            {"type": "text", "text": answer},
                            {"type": "tool_use", "id": format!("toolu_{:x}", r.next()), "name": "Read",
                             "input": {"file_path": format!("{cwd}/src/{}.rs", words[r.below(words.len())])}}],
                        "stop_reason": "tool_use", "usage": {"input_tokens": r.below(50000), "output_tokens": r.below(4000)}},
                    "toolUseResult": {"stdout": output, "stderr": "", "interrupted": false},
                    "uuid": me, "timestamp": ts})
            };
            let line = event.to_string();
            out.write_all(line.as_bytes()).unwrap();
            out.write_all(b"\n").unwrap();
            n += line.len() as u64 + 1;
            parent = format!("\"{me}\"");
        }
        written += n;
    }
}

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
