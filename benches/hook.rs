//! What the zsh prompt hook adds to each prompt: `cargo bench --bench hook`.
//!
//! A real interactive zsh (`zsh -i`, commands on standard input) runs PROMPTS empty
//! commands; a first precmd function records `$EPOCHREALTIME` at every prompt, so the
//! time between two marks is one prompt-to-prompt cycle with the hooks after it. The
//! scenarios run interleaved, ROUNDS times, and the medians are printed with what each
//! adds to the bare prompt:
//!
//! - none: no hook;
//! - true &!: a hook that forks `true` into the background at every prompt, the cheapest
//!   a hook that forks can be;
//! - lokust: the real hook, as users run it (refresh when the directory changed, or new
//!   commands ran and LOKUST_HOOK_INTERVAL seconds passed);
//! - lokust, cd every prompt: the worst case, a refresh forked at every prompt.
//!
//! Figures only; nothing is asserted (timings drift on shared machines).

use std::fs;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

const PROMPTS: usize = 200;
const ROUNDS: usize = 3;

const MARK: &str = "\\builtin zmodload zsh/datetime\ntypeset -ga __bench_marks\n__bench_mark() { __bench_marks+=($EPOCHREALTIME) }\nprecmd_functions=(__bench_mark)\n";

struct Scenario {
    name: &'static str,
    rc: String,
    /// The command typed at each prompt.
    command: &'static str,
}

fn scenarios(lokust: &Path) -> Vec<Scenario> {
    let hook = String::from_utf8(
        Command::new(lokust).args(["init", "zsh"]).output().expect("lokust-shell init zsh").stdout,
    )
    .unwrap();
    vec![
        Scenario { name: "none", rc: MARK.to_string(), command: ":" },
        Scenario {
            name: "true &!",
            rc: format!("{MARK}__bench_true() {{ \\command true &! }}\nprecmd_functions+=(__bench_true)\n"),
            command: ":",
        },
        Scenario { name: "lokust", rc: format!("{MARK}{hook}"), command: ":" },
        Scenario {
            name: "lokust, cd every prompt",
            rc: format!("{MARK}{hook}"),
            command: "cd $__bench_dirs[$((HISTCMD % 2 + 1))]",
        },
    ]
}

/// Prompt-to-prompt times in ms of one run of a scenario.
fn run(s: &Scenario, dir: &Path) -> Vec<f64> {
    let zdotdir = dir.join(s.name.replace([' ', '&', '!', ','], "_"));
    fs::create_dir_all(&zdotdir).unwrap();
    let a = dir.join("a");
    let b = dir.join("b");
    fs::create_dir_all(&a).unwrap();
    fs::create_dir_all(&b).unwrap();
    let rc = format!("{}\n__bench_dirs=('{}' '{}')\nHISTSIZE=1000\n", s.rc, a.display(), b.display());
    fs::write(zdotdir.join(".zshrc"), rc).unwrap();
    let mut input = String::new();
    for _ in 0..PROMPTS {
        input.push_str(s.command);
        input.push('\n');
    }
    input.push_str("print -r -- $__bench_marks\n");
    let mut child = Command::new("zsh")
        .arg("-i")
        .current_dir(&a)
        .env("ZDOTDIR", &zdotdir)
        .env("HOME", dir)
        .env("XDG_STATE_HOME", dir.join("state"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("zsh");
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    let marks: Vec<f64> =
        String::from_utf8_lossy(&out.stdout).split_whitespace().filter_map(|m| m.parse().ok()).collect();
    assert!(marks.len() > PROMPTS / 2, "{}: zsh recorded {} prompts", s.name, marks.len());
    // The first prompt pays for loading the rc file; it is not a prompt-to-prompt cycle.
    marks.windows(2).skip(1).map(|w| (w[1] - w[0]) * 1000.0).collect()
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn main() {
    if Command::new("zsh").arg("--version").output().is_err() {
        eprintln!("skipped: zsh is not installed");
        return;
    }
    let lokust = Path::new(env!("CARGO_BIN_EXE_lokust-shell"));
    let dir = tempfile::tempdir().unwrap();
    let scenarios = scenarios(lokust);
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); scenarios.len()];
    for _ in 0..ROUNDS {
        for (i, s) in scenarios.iter().enumerate() {
            times[i].extend(run(s, dir.path()));
        }
    }
    let live = fs::read_dir(dir.path().join("state/lokust/live"))
        .map(|d| d.flatten().filter(|e| e.path().extension().is_some_and(|x| x == "lok")).count())
        .unwrap_or(0);
    println!("zsh prompt-to-prompt time, {PROMPTS} prompts x {ROUNDS} rounds per hook (ms)");
    println!(
        "{:<26} {:>8} {:>8} {:>8} {:>12} {:>11}",
        "hook", "median", "p90", "mean", "added (med)", "/ true &!"
    );
    let base = {
        let mut t = times[0].clone();
        t.sort_by(f64::total_cmp);
        percentile(&t, 0.5)
    };
    for t in &mut times {
        t.sort_by(f64::total_cmp);
    }
    // What the cheapest forking hook adds, as the unit for the others.
    let fork = percentile(&times[1], 0.5) - base;
    for (s, t) in scenarios.iter().zip(&times) {
        let median = percentile(t, 0.5);
        let mean = t.iter().sum::<f64>() / t.len() as f64;
        println!(
            "{:<26} {:>8.3} {:>8.3} {:>8.3} {:>+12.3} {:>10.2}x",
            s.name,
            median,
            percentile(t, 0.9),
            mean,
            median - base,
            (median - base) / fork
        );
    }
    println!("({live} shells left a live file; the writes themselves run in the background)");
}
