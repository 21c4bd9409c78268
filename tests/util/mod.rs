//! The test environment every integration test uses: a private HOME and XDG dirs in a
//! temp dir, the built binaries run with a clean environment, and helpers for the real
//! programs the tests drive (tmux on a private socket, git, zsh, bash, fish).

#![allow(dead_code)]

pub mod archive;
pub mod claude;
pub mod element;
pub mod gemini;
pub mod pane;
pub mod schema;
pub mod standin;
pub mod work;

use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command as StdCommand;

use assert_cmd::Command;
use tempfile::TempDir;

/// The repository's `fixtures/` directory.
pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

/// Every file below `dir`, sorted.
pub fn files_below(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in fs::read_dir(dir).expect("readable dir").flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(files_below(&path));
        } else {
            out.push(path);
        }
    }
    out.sort();
    out
}

/// Whether a program is on PATH. In CI a missing one fails the test (the test command
/// installs everything); on a developer's machine the test is skipped with a message.
pub fn have(program: &str) -> bool {
    let found = StdCommand::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        assert!(std::env::var_os("CI").is_none(), "{program} is required in CI but not installed");
        eprintln!("skipped: {program} is not installed");
    }
    found
}

pub struct TestEnv {
    pub root: TempDir,
    pub home: PathBuf,
    pub cwd: PathBuf,
}

impl TestEnv {
    pub fn new() -> TestEnv {
        let root = tempfile::Builder::new().prefix("lokust-test-").tempdir().expect("temp dir");
        let home = root.path().join("home");
        let cwd = root.path().join("work");
        for dir in [&home, &cwd] {
            fs::create_dir_all(dir).expect("create dir");
        }
        TestEnv { root, home, cwd }
    }

    /// A built binary with a clean environment: only PATH, HOME, USER, LANG and TERM,
    /// so nothing of the developer's own session leaks into a test.
    pub fn cmd(&self, bin: &str) -> Command {
        let mut cmd = Command::from_std(self.process(bin));
        cmd.current_dir(&self.cwd);
        cmd
    }

    /// The same as [`TestEnv::cmd`], as a process to spawn, signal and wait for.
    pub fn process(&self, bin: &str) -> StdCommand {
        let mut cmd = StdCommand::new(assert_cmd::cargo::cargo_bin(bin));
        cmd.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("USER", "tester")
            .env("LANG", "C.UTF-8")
            .env("SHELL", "/bin/bash")
            .env("XDG_STATE_HOME", self.home.join(".local/state"))
            .current_dir(&self.cwd);
        cmd
    }

    /// Writes `contents` at `rel` under the temp root, creating parents.
    pub fn write(&self, rel: impl AsRef<Path>, contents: impl AsRef<[u8]>) -> PathBuf {
        let path = self.root.path().join(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, contents).unwrap();
        path
    }

    /// Runs a shell command in `dir` and panics with its output when it fails.
    pub fn sh(&self, dir: &Path, script: &str) -> String {
        run_ok(StdCommand::new("sh").args(["-c", script]).current_dir(dir).env("HOME", &self.home))
    }
}

/// Runs a command, panicking with its full output when it fails.
pub fn run_ok(cmd: &mut StdCommand) -> String {
    let out = cmd.output().expect("spawn");
    assert!(
        out.status.success(),
        "{:?} failed: {}\nstdout:\n{}\nstderr:\n{}",
        cmd,
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Parses a command's stdout as JSON, showing it in full when it is not.
pub fn json(stdout: &[u8]) -> serde_json::Value {
    serde_json::from_slice(stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}):\n{}", String::from_utf8_lossy(stdout)))
}

/// A tmux server of its own, on a socket in a temp dir, killed when dropped.
pub struct Tmux {
    pub dir: TempDir,
    pub socket: PathBuf,
}

impl Tmux {
    /// Starts a server with one detached session `session`, 200x50, running `shell`.
    pub fn start(session: &str, cwd: &Path, home: &Path, shell: &str) -> Tmux {
        let dir = tempfile::Builder::new().prefix("lokust-tmux-").tempdir().unwrap();
        let socket = dir.path().join("sock");
        let tmux = Tmux { dir, socket };
        run_ok(
            tmux.command()
                .args(["-f", "/dev/null", "new-session", "-d", "-s", session, "-x", "200", "-y", "50", "-c"])
                .arg(cwd)
                .arg(shell)
                .env("HOME", home),
        );
        tmux
    }

    pub fn command(&self) -> StdCommand {
        let mut cmd = StdCommand::new("tmux");
        cmd.arg("-S").arg(&self.socket);
        cmd
    }

    /// Runs a tmux command against this server and returns its stdout.
    pub fn run<S: AsRef<OsStr>>(&self, args: &[S]) -> String {
        run_ok(self.command().args(args))
    }

    /// The `$TMUX` value a shell inside this server would see.
    pub fn tmux_var(&self) -> String {
        let pid = self.run(&["display-message", "-p", "#{pid}"]);
        format!("{},{},0", self.socket.display(), pid.trim())
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.command().arg("kill-server").output();
    }
}

/// Makes a git repository in `dir` with one commit, quietly, with a fixed identity.
pub fn git_repo(dir: &Path) {
    fs::create_dir_all(dir).unwrap();
    git(dir, &["init", "-q", "-b", "main"]);
    fs::write(dir.join("README"), "hello\n").unwrap();
    git(dir, &["add", "README"]);
    git(dir, &["commit", "-q", "-m", "first"]);
}

/// Runs git in `dir` with the test identity.
pub fn git(dir: &Path, args: &[&str]) -> String {
    run_ok(
        StdCommand::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "lokust test")
            .env("GIT_AUTHOR_EMAIL", "test@lokust.invalid")
            .env("GIT_COMMITTER_NAME", "lokust test")
            .env("GIT_COMMITTER_EMAIL", "test@lokust.invalid"),
    )
}
/// What a finished command wrote, as text.
pub fn stdout(a: &assert_cmd::assert::Assert) -> String {
    String::from_utf8_lossy(&a.get_output().stdout).into_owned()
}

pub fn stderr(a: &assert_cmd::assert::Assert) -> String {
    String::from_utf8_lossy(&a.get_output().stderr).into_owned()
}

/// A Codex conversation `id` of `dir` under `home`, as Codex writes its rollouts.
pub fn codex_rollout(home: &Path, dir: &Path, id: &str) -> PathBuf {
    let real = fs::canonicalize(dir).unwrap();
    let meta = serde_json::json!({"timestamp": "2026-11-24T06:32:04.935Z", "type": "session_meta",
        "payload": {"id": id, "cwd": real}});
    let msg = serde_json::json!({"timestamp": "2026-11-24T06:32:05.059Z", "type": "event_msg",
        "payload": {"type": "user_message", "message": "codex prompt"}});
    let sessions = home.join(".codex/sessions/2026/11/24");
    fs::create_dir_all(&sessions).unwrap();
    let path = sessions.join(format!("rollout-2026-11-24T06-32-04-{id}.jsonl"));
    fs::write(&path, format!("{meta}\n{msg}\n")).unwrap();
    path
}

/// A finished command's status and output, for an assertion's message.
pub fn output_text(out: &std::process::Output) -> String {
    format!(
        "status {}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}
