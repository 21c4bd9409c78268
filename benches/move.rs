//! `lokust-shell move` against `cp -a` of the same conversations on the same filesystem:
//! `cargo bench --bench move` (100 MB; `-- 300` for another size in MB).
//!
//! Each round generates a Claude Code project of realistic JSONL under a private HOME,
//! then times `lokust-shell move A B` (the unredacted backup into the archive, the old
//! copies set aside, the restore at B, the old copies deleted) and `cp -a` of the slot.
//! Median of 3 rounds; figures only, nothing asserted.

use std::fs;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

#[path = "common/rng.rs"]
mod rng;

#[path = "common/project.rs"]
mod project;
use project::{generate, measure};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn slot_name(path: &str) -> String {
    path.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect()
}

fn main() {
    let mb: u64 = std::env::args().skip(1).find_map(|a| a.parse().ok()).unwrap_or(100);
    let exe = std::env::current_exe().unwrap();
    let lokust = exe.parent().unwrap().parent().unwrap().join("lokust-shell");
    assert!(lokust.exists(), "build it first: cargo build --release");
    let (mut moves, mut copies) = (Vec::new(), Vec::new());
    let (mut move_rss, mut copy_rss) = (0, 0);
    for _ in 0..3 {
        let dir = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(dir.path()).unwrap();
        let home = root.join("home");
        let a = root.join("src/a");
        fs::create_dir_all(&a).unwrap();
        let slot = home.join(".claude/projects").join(slot_name(a.to_str().unwrap()));
        generate(&slot, a.to_str().unwrap(), mb);

        let copy_to = root.join("copy");
        let (t, rss) = measure(Command::new("cp").arg("-a").arg(&slot).arg(&copy_to));
        copies.push(t);
        copy_rss = copy_rss.max(rss);
        let _ = fs::remove_dir_all(&copy_to);

        let (t, rss) = measure(
            Command::new(&lokust)
                .arg("move")
                .arg(&a)
                .arg(root.join("src/b"))
                .arg("--move-dir")
                .env("HOME", &home)
                .env("XDG_STATE_HOME", home.join(".local/state"))
                .current_dir(&root),
        );
        moves.push(t);
        move_rss = move_rss.max(rss);
        assert!(Path::new(&root.join("src/b")).is_dir());
    }
    let (m, c) = (median(moves), median(copies));
    println!("{mb} MB of conversations, median of 3");
    println!("  lokust-shell move --move-dir  {:>7.3} s  {:>6} KiB peak RSS", m.as_secs_f64(), move_rss);
    println!("  cp -a of the slot             {:>7.3} s  {:>6} KiB peak RSS", c.as_secs_f64(), copy_rss);
    println!("  ratio                         {:>7.2}x", m.as_secs_f64() / c.as_secs_f64());
}
