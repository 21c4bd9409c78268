//! The generated Claude Code project the bundle and seal benchmarks run on, and the
//! measuring of a command's wall time and peak RSS.

use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::rng::Rng;

/// Wall time and peak RSS (KiB) of a command and everything it waited for, measured by
/// GNU time: a child forked from this (large) process would inherit its high-water mark.
pub fn measure(cmd: &mut Command) -> (Duration, u64) {
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
pub fn generate(slot: &Path, cwd: &str, mb: u64) {
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
