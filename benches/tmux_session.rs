//! A whole tmux session saved and rebuilt: `cargo bench --bench tmux_session`.
//!
//! A private tmux server holds one session of 3 windows × 4 panes; each pane's history
//! holds SCROLLBACK lines of shell output (commands, paths, a token now and then, as a
//! long build log would). The release `lokust-tmux` then runs `export --session` (no
//! `--bundle`) and `import --to` ROUNDS times, each timed from outside; the import is
//! set beside the same session built by plain tmux commands (`new-session`,
//! `split-window`, `select-layout`), the floor any rebuild pays.
//!
//! Figures only; nothing is asserted (timings drift on shared machines).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

const WINDOWS: usize = 3;
const PANES: usize = 4;
const SCROLLBACK: usize = 10_000;
const ROUNDS: usize = 5;

fn tmux(socket: &Path, args: &[&str]) -> String {
    let out = Command::new("tmux").arg("-S").arg(socket).args(args).output().expect("tmux");
    assert!(out.status.success(), "tmux {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn binary(name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let release = exe.parent().unwrap().parent().unwrap().join(name);
    assert!(release.exists(), "build it first: cargo build --release ({})", release.display());
    release
}

/// SCROLLBACK lines of output, printed by `cat` in the pane so tmux keeps them.
fn log_file(dir: &Path, n: usize) -> PathBuf {
    let mut text = String::new();
    for i in 0..SCROLLBACK {
        match i % 50 {
            0 => text.push_str(&format!("$ cargo build --release -p crate{n}\n")),
            7 => text.push_str("export GITHUB_TOKEN=ghp_R7c2Qm9XvLp4Tn8Ws1Yd6Hb3Kf5Jg0Ae2Zx9\n"),
            _ => text.push_str(&format!(
                "   Compiling dependency-{i} v0.{}.{} (/home/dev/src/app/crates/part{})\n",
                i % 17,
                i % 5,
                i % 9
            )),
        }
    }
    let path = dir.join(format!("log{n}.txt"));
    fs::write(&path, text).unwrap();
    path
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let lokust_tmux = binary("lokust-tmux");
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let root = dir.path().join("src/app");
    fs::create_dir_all(&home).unwrap();
    fs::create_dir_all(&root).unwrap();
    let socket = dir.path().join("sock");
    let root_s = root.to_str().unwrap();
    let limit = (SCROLLBACK + 100).to_string();
    tmux(&socket, &["-f", "/dev/null", "new-session", "-d", "-s", "boot", "-x", "200", "-y", "50"]);
    tmux(&socket, &["set-option", "-g", "history-limit", &limit]);
    tmux(&socket, &["new-session", "-d", "-s", "work", "-x", "200", "-y", "50", "-c", root_s]);
    for w in 0..WINDOWS {
        if w > 0 {
            tmux(&socket, &["new-window", "-t", "work", "-c", root_s]);
        }
        for p in 1..PANES {
            tmux(&socket, &["split-window", "-t", &format!("work:{w}"), "-c", root_s]);
            tmux(&socket, &["select-layout", "-t", &format!("work:{w}"), "tiled"]);
            let _ = p;
        }
    }
    for w in 0..WINDOWS {
        for p in 0..PANES {
            let log = log_file(dir.path(), w * PANES + p);
            tmux(
                &socket,
                &["send-keys", "-t", &format!("work:{w}.{p}"), &format!("cat {}", log.display()), "Enter"],
            );
        }
    }
    // Until every pane holds its whole log.
    let deadline = Instant::now() + std::time::Duration::from_secs(120);
    while Instant::now() < deadline {
        let sizes = tmux(&socket, &["list-panes", "-s", "-t", "work", "-F", "#{history_size}"]);
        if sizes.lines().all(|s| s.trim().parse::<usize>().unwrap_or(0) >= SCROLLBACK - 100) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    let lok = dir.path().join("s.lok");
    let run = |args: &[&str]| {
        let start = Instant::now();
        let out = Command::new(&lokust_tmux)
            .arg("-S")
            .arg(&socket)
            .args(args)
            .env("HOME", &home)
            .env("XDG_STATE_HOME", home.join("state"))
            .output()
            .expect("lokust-tmux");
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        start.elapsed().as_secs_f64()
    };
    let mut export = Vec::new();
    let mut import = Vec::new();
    let mut plain = Vec::new();
    for round in 0..ROUNDS {
        export.push(run(&["export", "--session", "-t", "work", "-o", lok.to_str().unwrap()]));
        let to = dir.path().join(format!("dest{round}"));
        import.push(run(&[
            "import",
            lok.to_str().unwrap(),
            "--to",
            to.to_str().unwrap(),
            "--session",
            "imp",
        ]));
        // The new panes print their scrollback; a busy server would slow the next round.
        std::thread::sleep(std::time::Duration::from_secs(3));
        tmux(&socket, &["kill-session", "-t", "=imp"]);
        let start = Instant::now();
        let name = format!("plain{round}");
        tmux(&socket, &["new-session", "-d", "-s", &name, "-x", "200", "-y", "50", "-c", root_s]);
        for w in 0..WINDOWS {
            if w > 0 {
                tmux(&socket, &["new-window", "-d", "-t", &format!("={name}:"), "-c", root_s]);
            }
            for _ in 1..PANES {
                tmux(&socket, &["split-window", "-d", "-t", &format!("={name}:{w}"), "-c", root_s]);
                tmux(&socket, &["select-layout", "-t", &format!("={name}:{w}"), "tiled"]);
            }
        }
        plain.push(start.elapsed().as_secs_f64());
        tmux(&socket, &["kill-session", "-t", &format!("={name}")]);
    }
    let size = fs::metadata(&lok).unwrap().len();
    println!(
        "{} panes × {SCROLLBACK} scrollback lines; file {:.1} MB; median of {ROUNDS}",
        WINDOWS * PANES,
        size as f64 / 1e6
    );
    println!("  export --session        {:>7.3} s", median(export));
    println!("  import --to             {:>7.3} s", median(import));
    println!("  the same panes by tmux  {:>7.3} s (new-session, split-window, select-layout)", median(plain));
    let _ = Command::new("tmux").arg("-S").arg(&socket).arg("kill-server").status();
}
