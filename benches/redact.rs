//! Throughput of `lokust::redact::filter::run` (what `lokust-shell redact` runs) over
//! ~100 MB of mixed shell history and tmux scrollback, against a plain `io::copy` of the
//! same bytes. Also the cold cost of the first call, which a snapshot process pays.
//!
//!     CARGO_TARGET_DIR=… cargo bench --bench redact

use std::io::{self, BufReader};
use std::time::{Duration, Instant};

use lokust::redact;

#[path = "common/rng.rs"]
mod rng;
use rng::Rng;

/// What the redaction corpus needs beyond the shared generator.
trait Pick {
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str;
    fn chars(&mut self, alphabet: &[u8], n: usize, out: &mut String);
}

impl Pick for Rng {
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len())]
    }
    fn chars(&mut self, alphabet: &[u8], n: usize, out: &mut String) {
        for _ in 0..n {
            out.push(alphabet[self.below(alphabet.len())] as char);
        }
    }
}

const HEX: &[u8] = b"0123456789abcdef";
const ALNUM: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

const HISTORY: &[&str] = &[
    "git status",
    "git log --oneline -20",
    "cargo build --release",
    "cargo test --lib",
    "ls -la",
    "cd ~/src/lokust",
    "vim src/main.rs",
    "docker compose up -d",
    "kubectl get pods -n default",
    "npm run dev",
    "make -j4",
    "ssh -p 2222 deploy@bastion",
    "psql -h db -p 5432 -U app",
    "mkdir -p build/out",
    "git add -p",
    "export TOKENIZERS_PARALLELISM=false",
    "export SSH_AUTH_SOCK=/run/user/1000/ssh-agent.sock",
    "aws secretsmanager get-secret-value --secret-id prod/db/password",
    "curl -H \"Authorization: Bearer $TOKEN\" https://api.example.com/v1/me",
    "rg -n session src/",
    "htop",
    "tmux attach -t main",
];

const SCROLLBACK: &[&str] = &[
    "   Compiling serde v1.0.229",
    "   Compiling lokust v0.1.0 (/home/alice/src/lokust)",
    "    Finished `release` profile [optimized] target(s) in 41.20s",
    "test redact::tests::structure_is_kept ... ok",
    "test result: ok. 42 passed; 0 failed; 0 ignored; 0 measured",
    "drwxr-xr-x  5 alice alice  4096 Nov 21 10:02 src",
    "-rw-r--r--  1 alice alice 40579 Nov 21 10:02 Cargo.lock",
    "NAME                      READY   STATUS    RESTARTS   AGE",
    "api-7d9f8b6c5d-x2k4q      1/1     Running   0          3d",
    "2026-11-21T10:02:03.123Z INFO  server: listening on 0.0.0.0:8080",
    "2026-11-21T10:02:04.456Z WARN  auth: session refreshed for user 42",
    "    at Object.<anonymous> (/app/node_modules/express/lib/router/index.js:284:7)",
    "  warning: unused variable: `key`",
    "On branch main\nYour branch is up to date with 'origin/main'.",
    "Everything up-to-date",
    "[main 3f2a1b9] Fix the token refresh race",
];

/// History where most lines hold a keyword (`token`, `auth`, `session`, `passed`…):
/// every such line goes through the rule engines.
fn dense(target: usize) -> Vec<u8> {
    let mut rng = Rng(0xdec0_de00_1234_5678);
    let mut s = String::with_capacity(target + 4096);
    while s.len() < target {
        let pool = if rng.below(2) == 0 { HISTORY } else { SCROLLBACK };
        s.push_str(rng.pick(pool));
        s.push('\n');
    }
    s.into_bytes()
}

fn generate(target: usize, secrets: bool) -> Vec<u8> {
    let mut rng = Rng(0x5eed_1234_abcd_ef01);
    let mut s = String::with_capacity(target + 4096);
    while s.len() < target {
        match rng.below(100) {
            0..=34 => {
                s.push_str(rng.pick(HISTORY));
            }
            35..=44 => {
                s.push_str("git show ");
                rng.chars(HEX, 40, &mut s);
            }
            45..=49 => {
                s.push_str("docker pull ghcr.io/acme/api@sha256:");
                rng.chars(HEX, 64, &mut s);
            }
            50..=84 => s.push_str(rng.pick(SCROLLBACK)),
            85..=94 => {
                // Long lines: minified output, base64 dumps, wide tables.
                let n = 200 + rng.below(2000);
                rng.chars(ALNUM, n, &mut s);
            }
            95..=97 => {
                s.push_str(": 1700000000:0;cd /srv/app && ./run.sh --verbose");
            }
            _ if !secrets => s.push_str("cargo clippy --all-targets -- -D warnings"),
            _ => {
                // About 2% of lines carry a secret.
                match rng.below(4) {
                    0 => {
                        s.push_str("export GITHUB_TOKEN=ghp_");
                        rng.chars(ALNUM, 36, &mut s);
                    }
                    1 => {
                        s.push_str("mysql -u root -p");
                        rng.chars(ALNUM, 12, &mut s);
                        s.push_str(" app");
                    }
                    2 => {
                        s.push_str("curl -u admin:");
                        rng.chars(ALNUM, 14, &mut s);
                        s.push_str(" https://ci.example.com");
                    }
                    _ => {
                        s.push_str("psql postgres://app:");
                        rng.chars(ALNUM, 10, &mut s);
                        s.push_str("@db:5432/app");
                    }
                }
            }
        }
        s.push('\n');
    }
    s.into_bytes()
}

/// This thread's time on a CPU so far: the machines this runs on are shared, and wall
/// time there measures the neighbours as much as the code.
fn cpu_time() -> Option<Duration> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    Some(Duration::from_nanos(s.split_whitespace().next()?.parse().ok()?))
}

/// Best wall time and best CPU time of `runs` runs.
fn best_of<T>(runs: usize, mut f: impl FnMut() -> T) -> (Duration, Option<Duration>, T) {
    let mut best = Duration::MAX;
    let mut best_cpu: Option<Duration> = None;
    let mut last = None;
    for _ in 0..runs {
        let c = cpu_time();
        let t = Instant::now();
        let r = f();
        best = best.min(t.elapsed());
        if let (Some(c0), Some(c1)) = (c, cpu_time()) {
            best_cpu = Some(best_cpu.map_or(c1 - c0, |b| b.min(c1 - c0)));
        }
        last = Some(r);
    }
    (best, best_cpu, last.unwrap())
}

fn main() {
    // Cold start first, before anything has built the prefilter or compiled a regex.
    let t = Instant::now();
    let _ = redact::redact("ls -la");
    let cold_clean = t.elapsed();
    let t = Instant::now();
    let out = redact::redact("export DB_PASSWORD=hunter2; mysql -uroot -phunter2 app");
    let cold_secret = t.elapsed();
    assert!(!out.contains("hunter2"));

    let data = generate(100 * 1024 * 1024, true);
    measure("mixed history and scrollback, ~2% of lines with a secret", &data);
    end_to_end(&data);
    let data = generate(100 * 1024 * 1024, false);
    measure("the same without secrets (harmless text only)", &data);
    let data = dense(50 * 1024 * 1024);
    measure("worst case: short history lines, most holding a keyword", &data);
    println!("first call, clean text:        {:>8.3} ms", cold_clean.as_secs_f64() * 1e3);
    println!("first call, text with secrets: {:>8.3} ms", cold_secret.as_secs_f64() * 1e3);
}

/// The binary as users run it, `lokust-shell redact < file > /dev/null`, next to `cat`.
fn end_to_end(data: &[u8]) {
    use std::process::{Command, Stdio};
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("mixed.txt");
    std::fs::write(&file, data).unwrap();
    let run = |program: &str, args: &[&str]| {
        let mut best = Duration::MAX;
        for _ in 0..3 {
            let started = Instant::now();
            let status = Command::new(program)
                .args(args)
                .stdin(std::fs::File::open(&file).unwrap())
                .stdout(Stdio::null())
                .status()
                .unwrap();
            assert!(status.success());
            best = best.min(started.elapsed());
        }
        best
    };
    let mb = data.len() as f64 / (1024.0 * 1024.0);
    let cat = run("cat", &[]);
    let lokust = run(env!("CARGO_BIN_EXE_lokust-shell"), &["redact"]);
    println!(
        "end to end, {mb:.0} MiB file: cat {:.1} MiB/s, lokust-shell redact {:.1} MiB/s ({:.1}x the time of cat)",
        mb / cat.as_secs_f64(),
        mb / lokust.as_secs_f64(),
        lokust.as_secs_f64() / cat.as_secs_f64()
    );
}

fn measure(what: &str, data: &[u8]) {
    let mb = data.len() as f64 / (1024.0 * 1024.0);
    let reader = || BufReader::with_capacity(64 * 1024, data);

    let (copy_t, copy_cpu, copied) = best_of(5, || {
        let mut out = Vec::with_capacity(data.len() + 1024 * 1024);
        io::copy(&mut reader(), &mut out).unwrap();
        out.len()
    });
    let (filter_t, filter_cpu, (report, n)) = best_of(5, || {
        let mut out = Vec::with_capacity(data.len() + 1024 * 1024);
        let r = redact::filter::run(reader(), &mut out).unwrap();
        (r, out.len())
    });
    assert_eq!(copied, data.len());
    let rate = |d: Duration| mb / d.as_secs_f64();
    println!("{what}: {mb:.1} MiB, {} lines redacted, {} values", report.lines, report.values);
    println!(
        "  io::copy     wall {:>7.1} MiB/s   cpu {:>7.1} MiB/s",
        rate(copy_t),
        copy_cpu.map_or(f64::NAN, rate)
    );
    println!(
        "  filter::run  wall {:>7.1} MiB/s   cpu {:>7.1} MiB/s   ({n} bytes out)",
        rate(filter_t),
        filter_cpu.map_or(f64::NAN, rate)
    );
    println!(
        "  filter::run takes {:.1}x the time of io::copy (wall), {:.1}x (cpu)",
        filter_t.as_secs_f64() / copy_t.as_secs_f64(),
        filter_cpu.zip(copy_cpu).map_or(f64::NAN, |(f, c)| f.as_secs_f64() / c.as_secs_f64())
    );
}
