//! `lokust-shell doctor`: is lokust set up right on this machine? One check per line (the
//! binaries, the prompt hook and whether it fires, the state folder's modes, whether the
//! user can open what they seal, tmux and its binding, each agent's home and CLI, stale
//! Claude Code registry entries, retention, the unpushed work), each problem with the line
//! that fixes it. Read-only; never prints a secret or a whole key.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde::Serialize;

use crate::agent::retention;
use crate::probe::Probe;

/// How a check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    Warn,
    Fail,
    Skipped,
}

impl Status {
    pub fn mark(self) -> &'static str {
        match self {
            Status::Ok => "✓",
            Status::Warn => "!",
            Status::Fail => "✗",
            Status::Skipped => "-",
        }
    }
}

/// One check: what it looked at, what it found, and the line that fixes a problem.
#[derive(Debug, Clone, Serialize)]
pub struct Check {
    pub name: String,
    pub status: Status,
    pub detail: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

fn check(name: &str, status: Status, detail: impl Into<String>, fix: Option<String>) -> Check {
    Check { name: name.to_string(), status, detail: detail.into(), fix }
}

/// A subprocess's first line of output, with a deadline; `None` when it is not there.
fn first_line(program: &str, args: &[&str]) -> Option<String> {
    let mut cmd = std::process::Command::new(program);
    cmd.args(args).stdin(std::process::Stdio::null());
    let out = crate::exec::output(cmd, Duration::from_secs(5)).ok()?;
    String::from_utf8_lossy(&out).lines().next().map(|l| l.trim().to_string())
}

/// Every check, in the order shown. `shell_pid` is the shell that runs doctor (its live
/// file says whether the hook fires).
pub fn run(probe: &Probe, shell_pid: Option<u32>) -> Vec<Check> {
    let recipients = recipients(probe);
    let mut out = vec![binaries(), hook(probe, shell_pid), state_modes(probe), sealing(probe, &recipients)];
    out.extend(tmux(probe, !recipients.is_empty()));
    out.extend(agents(probe));
    out.push(stale_claude_registry(probe));
    out.push(interrupted_move(probe));
    out.push(claude_retention(probe));
    out.push(gemini_retention(probe));
    out.push(unpushed(probe));
    out
}

/// The four binaries are on PATH and of this version.
fn binaries() -> Check {
    let want = env!("CARGO_PKG_VERSION");
    let mut missing = Vec::new();
    let mut other = Vec::new();
    for bin in ["lokust-shell", "lokust-shell-snapshot", "lokust-shell-restore", "lokust-tmux"] {
        match first_line(bin, &["--version"]) {
            None => missing.push(bin),
            Some(v) if !v.ends_with(want) => other.push(format!("{bin} ({v})")),
            Some(_) => {}
        }
    }
    if !missing.is_empty() {
        check(
            "binaries",
            Status::Fail,
            format!("not on PATH: {}", missing.join(", ")),
            Some(
                "cargo install --locked --path . (from the lokust checkout), and ~/.cargo/bin on PATH".into(),
            ),
        )
    } else if !other.is_empty() {
        check(
            "binaries",
            Status::Warn,
            format!("another version than {want}: {}", other.join(", ")),
            Some("cargo install --locked --force --path .".into()),
        )
    } else {
        check("binaries", Status::Ok, format!("all four on PATH, version {want}"), None)
    }
}

/// The hook of the user's shell is in its startup file, and fires: the live file of the
/// shell running doctor is fresh.
fn hook(probe: &Probe, shell_pid: Option<u32>) -> Check {
    let shell = probe.var("SHELL").unwrap_or_default();
    let name = Path::new(&shell).file_name().and_then(|n| n.to_str()).unwrap_or("").to_string();
    let (rc, line) = match name.as_str() {
        "zsh" => (".zshrc", "eval \"$(lokust-shell init zsh)\""),
        "bash" => (".bashrc", "eval \"$(lokust-shell init bash)\""),
        "fish" => (".config/fish/config.fish", "lokust-shell init fish | source"),
        _ => {
            return check("prompt hook", Status::Skipped, format!("shell {name:?} has no lokust hook"), None);
        }
    };
    let home = probe.home().unwrap_or_default();
    let installed = fs::read_to_string(home.join(rc)).is_ok_and(|t| t.contains("lokust-shell init"));
    let live = shell_pid.and_then(|pid| crate::hook::live_dir(probe).map(|d| d.join(format!("{pid}.lok"))));
    let fresh = live
        .as_ref()
        .and_then(|p| fs::metadata(p).ok()?.modified().ok())
        .is_some_and(|t| SystemTime::now().duration_since(t).unwrap_or_default() < Duration::from_secs(600));
    match (installed, fresh) {
        (_, true) => {
            check("prompt hook", Status::Ok, format!("{name}: firing (the live file is fresh)"), None)
        }
        (true, false) => check(
            "prompt hook",
            Status::Warn,
            format!("{name}: in ~/{rc} but not firing in this shell"),
            Some(format!("open a new {name}, or run: {line}")),
        ),
        (false, false) => check(
            "prompt hook",
            Status::Warn,
            format!("{name}: not installed, so no live snapshot and no --latest after a crash"),
            Some(format!("echo '{line}' >> ~/{rc}")),
        ),
    }
}

/// The state folder and what is in it are private: folders 0700, files 0600.
fn state_modes(probe: &Probe) -> Check {
    let Some(dir) = probe.state_dir() else {
        return check("state folder", Status::Skipped, "no HOME or XDG_STATE_HOME", None);
    };
    if !dir.exists() {
        return check("state folder", Status::Ok, format!("{} not made yet", dir.display()), None);
    }
    let mut open = Vec::new();
    let mut stack = vec![dir.clone()];
    while let Some(d) = stack.pop() {
        if let Ok(m) = fs::symlink_metadata(&d)
            && m.permissions().mode() & 0o077 != 0
        {
            open.push(d.clone());
        }
        for e in fs::read_dir(&d).into_iter().flatten().flatten() {
            let Ok(m) = fs::symlink_metadata(e.path()) else { continue };
            if m.is_dir() {
                stack.push(e.path());
            } else if m.is_file() && m.permissions().mode() & 0o077 != 0 {
                open.push(e.path());
            }
        }
    }
    if open.is_empty() {
        check("state folder", Status::Ok, format!("{}: private", dir.display()), None)
    } else {
        check(
            "state folder",
            Status::Fail,
            format!(
                "{} readable by others, e.g. {}",
                crate::human::count_as(open.len() as u64, "entry", "entries"),
                open[0].display()
            ),
            Some(format!(
                "chmod -R go-rwx {}",
                crate::shell::posix_quote(&dir.to_string_lossy(), crate::shell::Quote::WhenNeeded)
            )),
        )
    }
}

/// The recipients the user seals to from the environment, as text.
fn recipients(probe: &Probe) -> Vec<String> {
    let mut out: Vec<String> = probe
        .var("LOKUST_ENCRYPT_TO")
        .unwrap_or_default()
        .split([',', '\n'])
        .map(str::trim)
        .filter(|r| !r.is_empty())
        .map(str::to_string)
        .collect();
    if let Some(file) = probe.var("LOKUST_RECIPIENTS_FILE").filter(|f| !f.is_empty())
        && let Ok(text) = fs::read_to_string(file)
    {
        out.extend(
            text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')).map(str::to_string),
        );
    }
    out
}

/// The public side of the keys the user holds where lokust looks for them: the SSH keys'
/// `.pub` files (type and key) and the age identities' public keys.
fn held_keys(probe: &Probe) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(home) = probe.home() {
        for name in ["id_ed25519", "id_rsa"] {
            if home.join(".ssh").join(name).is_file()
                && let Ok(text) = fs::read_to_string(home.join(".ssh").join(format!("{name}.pub")))
            {
                out.extend(text.lines().map(|l| l.split_whitespace().take(2).collect::<Vec<_>>().join(" ")));
            }
        }
    }
    if let Some(config) = probe.xdg_dir("XDG_CONFIG_HOME", ".config")
        && let Ok(text) = fs::read_to_string(config.join("lokust/identities"))
    {
        use std::str::FromStr;
        for line in text.lines().map(str::trim).filter(|l| l.starts_with("AGE-SECRET-KEY-1")) {
            if let Ok(id) = age::x25519::Identity::from_str(line) {
                out.push(id.to_public().to_string());
            }
        }
    }
    out
}

/// Files sealed from the environment can be opened here: a recipient is a key the user
/// holds. Only counts are printed, never a key.
fn sealing(probe: &Probe, wanted: &[String]) -> Check {
    if wanted.is_empty() {
        return check(
            "sealing",
            Status::Skipped,
            "LOKUST_ENCRYPT_TO and LOKUST_RECIPIENTS_FILE are not set",
            None,
        );
    }
    let held = held_keys(probe);
    let norm = |r: &str| r.split_whitespace().take(2).collect::<Vec<_>>().join(" ");
    let mine = wanted.iter().filter(|r| held.contains(&norm(r))).count();
    if mine == 0 {
        check(
            "sealing",
            Status::Fail,
            format!(
                "files are sealed to {}, none of which you hold here: you could not open them",
                crate::human::count(wanted.len() as u64, "recipient")
            ),
            Some("add your own key: export LOKUST_ENCRYPT_TO=\"$(cat ~/.ssh/id_ed25519.pub)\" (or put the matching identity in ~/.config/lokust/identities)".into()),
        )
    } else {
        check(
            "sealing",
            Status::Ok,
            format!("sealed to {} of {} recipients you hold", mine, wanted.len()),
            None,
        )
    }
}

/// tmux: its version, the key binding, and the sealing variables in the server's
/// environment (the key runs there, not in the shell).
fn tmux(probe: &Probe, sealing: bool) -> Vec<Check> {
    let Some(version) = first_line("tmux", &["-V"]) else {
        return vec![check("tmux", Status::Skipped, "tmux is not installed", None)];
    };
    let mut out = vec![check("tmux", Status::Ok, version, None)];
    let Some(_) = probe.var("TMUX") else {
        out.push(check("tmux binding", Status::Skipped, "not inside tmux", None));
        return out;
    };
    let keys = crate::exec::output(
        {
            let mut c = std::process::Command::new("tmux");
            c.args(["list-keys"]);
            c
        },
        Duration::from_secs(5),
    )
    .map(|o| String::from_utf8_lossy(&o).into_owned())
    .unwrap_or_default();
    out.push(if keys.contains("lokust-tmux") {
        check("tmux binding", Status::Ok, "a key runs lokust-tmux export", None)
    } else {
        check(
            "tmux binding",
            Status::Warn,
            "no key runs lokust-tmux",
            Some("lokust-tmux bind >> ~/.tmux.conf && tmux source-file ~/.tmux.conf".into()),
        )
    });
    if sealing {
        let env = first_line("tmux", &["show-environment", "-g", "LOKUST_ENCRYPT_TO"]).unwrap_or_default();
        out.push(if env.starts_with("LOKUST_ENCRYPT_TO=") {
            check("tmux sealing", Status::Ok, "the server seals as the shell does", None)
        } else {
            check(
                "tmux sealing",
                Status::Warn,
                "the shell seals but the tmux server does not know LOKUST_ENCRYPT_TO: exports from the key are plain",
                Some("tmux set-environment -g LOKUST_ENCRYPT_TO \"$LOKUST_ENCRYPT_TO\"".into()),
            )
        });
    }
    out
}

/// Each agent: its home on this machine and its CLI's version.
fn agents(probe: &Probe) -> Vec<Check> {
    let mut out = Vec::new();
    let claude_home = crate::capture::claude::config_dir(probe);
    let mut all: Vec<(&str, &str, Option<PathBuf>)> =
        vec![(crate::agent::claude::NAME, crate::agent::claude::DISPLAY_NAME, claude_home)];
    all.extend(crate::agent::AGENTS.iter().map(|a| (a.id(), a.name(), a.home(probe))));
    for (cli, name, home) in all {
        let version = first_line(cli, &["--version"]);
        let has_home = home.as_ref().is_some_and(|h| h.is_dir());
        let (status, detail) = match (has_home, version) {
            (true, Some(v)) => (Status::Ok, format!("{} ({v})", home.unwrap_or_default().display())),
            (true, None) => (Status::Ok, format!("{} (CLI not on PATH)", home.unwrap_or_default().display())),
            (false, Some(v)) => (Status::Ok, format!("{v}; no conversations here yet")),
            (false, None) => (Status::Skipped, "not used on this machine".into()),
        };
        out.push(check(name, status, detail, None));
    }
    out
}

/// Claude Code keeps `sessions/<pid>.json` for each running process; an entry whose
/// process is gone (killed) is stale, and a tool reading it would take a dead session.
fn stale_claude_registry(probe: &Probe) -> Check {
    let Some(dir) = crate::capture::claude::config_dir(probe).map(|d| d.join("sessions")) else {
        return check("claude registry", Status::Skipped, "no Claude Code config folder", None);
    };
    let pids: Vec<u32> = fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.strip_suffix(".json")?.parse().ok())
        .collect();
    if pids.is_empty() {
        return check("claude registry", Status::Skipped, "no running Claude Code recorded", None);
    }
    let stale: Vec<u32> =
        pids.iter().zip(crate::hook::alive(&pids)).filter(|(_, a)| !a).map(|(p, _)| *p).collect();
    if stale.is_empty() {
        check(
            "claude registry",
            Status::Ok,
            format!("{} live", crate::human::count_as(pids.len() as u64, "entry", "entries")),
            None,
        )
    } else {
        let list: Vec<String> = stale.iter().map(|p| format!("{p}.json")).collect();
        check(
            "claude registry",
            Status::Warn,
            format!("stale entries of processes that are gone: {}", list.join(", ")),
            Some(format!(
                "rm {}",
                stale
                    .iter()
                    .map(|p| dir.join(format!("{p}.json")).display().to_string())
                    .collect::<Vec<_>>()
                    .join(" ")
            )),
        )
    }
}

/// A `move` killed part way leaves the old copies set aside, where their agents do not
/// look: named, with the line that puts each back.
fn interrupted_move(probe: &Probe) -> Check {
    let left = crate::relocate::leftovers(probe);
    if left.is_empty() {
        return check("interrupted move", Status::Ok, "no conversations left set aside", None);
    }
    let quote = |p: &std::path::Path| {
        crate::shell::posix_quote(&p.to_string_lossy(), crate::shell::Quote::WhenNeeded)
    };
    let by_hand = "the next lokust-shell move rolls the interrupted one back; or by hand:".to_string();
    let fixes: Vec<String> = std::iter::once(by_hand)
        .chain(left.iter().map(|(aside, original)| {
            if original.exists() {
                format!("rm -r {}   # {} is back already", quote(aside), quote(original))
            } else {
                format!("mv {} {}", quote(aside), quote(original))
            }
        }))
        .collect();
    check(
        "interrupted move",
        Status::Warn,
        format!(
            "{} set aside by a move that did not finish; the move's backup is in the archive (lokust-shell list)",
            crate::human::count_as(left.len() as u64, "copy", "copies")
        ),
        Some(fixes.join("\n")),
    )
}

/// Claude Code deletes transcripts older than `cleanupPeriodDays` (30 by default) when it
/// starts: how many of this machine's are within five days of it, each project judged by
/// its own settings.
fn claude_retention(probe: &Probe) -> Check {
    let name = "claude retention";
    let Some(config) = crate::capture::claude::config_dir(probe).filter(|c| c.is_dir()) else {
        return check(name, Status::Skipped, "no Claude Code config folder", None);
    };
    if let retention::Cleanup::Skipped { from } = retention::claude_cleanup(&config, None) {
        let why = format!(
            "cleanupPeriodDays in {} is below 1 or not a number: Claude Code skips its cleanup",
            from.display()
        );
        return check(name, Status::Ok, why, None);
    }
    retention_check(name, "Claude Code", retention::claude_due_everywhere(&config, SystemTime::now()))
}

/// Gemini CLI deletes chats older than `general.sessionRetention.maxAge` (on, 30 days, by
/// default) in the project it starts in: how many of this machine's are close to it, each
/// project judged by its own settings.
fn gemini_retention(probe: &Probe) -> Check {
    let name = "gemini retention";
    let Some(gh) = crate::agent::Agent::home(&crate::agent::gemini::Gemini, probe).filter(|g| g.is_dir())
    else {
        return check(name, Status::Skipped, "no Gemini CLI folder", None);
    };
    if retention::gemini_retention(&retention::GeminiLayers::new(Some(probe), &gh, None)).is_none() {
        return check(
            name,
            Status::Ok,
            "sessionRetention is off: Gemini CLI deletes nothing by itself",
            None,
        );
    }
    retention_check(name, "Gemini CLI", retention::gemini_due_everywhere(probe, &gh, SystemTime::now()))
}

fn retention_check(name: &str, agent: &str, due: Option<retention::Due>) -> Check {
    match due {
        None => check(name, Status::Skipped, format!("no {agent} conversations here"), None),
        Some(d) if d.due == 0 => check(
            name,
            Status::Ok,
            format!("{}; none of {} due within {}", d.rule, d.total, retention::MARGIN_WORDS),
            None,
        ),
        Some(d) => check(
            name,
            Status::Warn,
            format!(
                "{} within {} of {agent}'s cleanup ({})",
                crate::human::count(d.due, "conversation"),
                retention::MARGIN_WORDS,
                d.rule
            ),
            Some(format!(
                "keep them: lokust-shell archive in each project (LOKUST_ARCHIVE=auto does it from the prompt hook), or {} (lokust never edits it)",
                d.fix
            )),
        ),
    }
}

/// What `--bundle` would carry of this checkout's git work.
fn unpushed(probe: &Probe) -> Check {
    let dir = probe.cwd();
    let git = |args: &[&str]| {
        let mut c = std::process::Command::new("git");
        c.arg("-C").arg(dir).args(args);
        crate::exec::output(c, Duration::from_secs(5)).ok().map(|o| String::from_utf8_lossy(&o).into_owned())
    };
    if git(&["rev-parse", "--is-inside-work-tree"]).is_none() {
        return check("git work", Status::Skipped, "not in a git checkout", None);
    }
    let ahead = git(&["rev-list", "--count", "@{upstream}..HEAD"]).and_then(|s| s.trim().parse::<u64>().ok());
    let dirty = git(&["status", "--porcelain"]).map_or(0, |s| s.lines().count() as u64);
    let commits = match ahead {
        Some(n) => crate::human::count(n, "unpushed commit"),
        None => "no upstream".to_string(),
    };
    check(
        "git work",
        Status::Ok,
        format!("--bundle would carry {commits} and {}", crate::human::count(dirty, "changed file")),
        None,
    )
}
