//! Running a subprocess or a slow in-process step with a deadline, so that a wedged tmux
//! server or a huge repository can never hang a snapshot or a prompt hook.

use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use wait_timeout::ChildExt;

/// Why a deadline-bound step produced nothing.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    #[error("could not run {program}: {source}")]
    Spawn { program: String, source: std::io::Error },
    #[error("{program} did not answer within {} ms (raise LOKUST_TIMEOUT_MS to wait longer)", .after.as_millis())]
    Timeout { program: String, after: Duration },
    #[error("{0}")]
    NotFound(String),
    #[error("{program} failed ({status}): {stderr}")]
    Failed { program: String, status: String, stderr: String },
}

/// The default deadline for one subprocess; `LOKUST_TIMEOUT_MS` overrides it.
pub fn default_deadline() -> Duration {
    std::env::var("LOKUST_TIMEOUT_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .map(Duration::from_millis)
        .unwrap_or(Duration::from_millis(2000))
}

/// Runs `cmd` to completion within `deadline` and returns its stdout.
/// stdin is closed; stdout and stderr are drained on threads so a chatty child can't block.
pub fn output(cmd: Command, deadline: Duration) -> Result<Vec<u8>, ExecError> {
    run(cmd, None, deadline)
}

/// [`output`], with `input` written to the child's stdin (from a thread, so a child that
/// writes before it has read everything cannot block on a full pipe).
pub fn output_with_input(cmd: Command, input: Vec<u8>, deadline: Duration) -> Result<Vec<u8>, ExecError> {
    run(cmd, Some(input), deadline)
}

fn run(mut cmd: Command, input: Option<Vec<u8>>, deadline: Duration) -> Result<Vec<u8>, ExecError> {
    let program = cmd.get_program().to_string_lossy().into_owned();
    let mut child = cmd
        .stdin(if input.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|source| ExecError::Spawn { program: program.clone(), source })?;
    let stdin = child.stdin.take();
    let feed = thread::spawn(move || {
        if let (Some(mut pipe), Some(input)) = (stdin, input) {
            let _ = std::io::Write::write_all(&mut pipe, &input);
        }
    });
    let out = drain(child.stdout.take());
    let err = drain(child.stderr.take());
    let status = match child.wait_timeout(deadline) {
        Ok(Some(status)) => status,
        Ok(None) | Err(_) => {
            let _ = child.kill();
            let _ = child.wait();
            return Err(ExecError::Timeout { program, after: deadline });
        }
    };
    let _ = feed.join();
    let stdout = out.join().unwrap_or_default();
    let stderr = err.join().unwrap_or_default();
    if status.success() {
        Ok(stdout)
    } else {
        Err(ExecError::Failed {
            program,
            status: status.to_string(),
            stderr: String::from_utf8_lossy(&stderr).trim().to_string(),
        })
    }
}

fn drain<R: Read + Send + 'static>(pipe: Option<R>) -> thread::JoinHandle<Vec<u8>> {
    thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(mut p) = pipe {
            let _ = p.read_to_end(&mut buf);
        }
        buf
    })
}

/// Runs `work` on its own thread and gives up waiting after `deadline`.
/// The thread is left to finish on its own: the process exits soon after a snapshot.
pub fn within<T: Send + 'static>(
    what: &str,
    deadline: Duration,
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, ExecError> {
    let (tx, rx) = mpsc::channel();
    let started = Instant::now();
    thread::spawn(move || {
        let _ = tx.send(work());
    });
    rx.recv_timeout(deadline.saturating_sub(started.elapsed()))
        .map_err(|_| ExecError::Timeout { program: what.to_string(), after: deadline })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hanging_child_is_killed_at_the_deadline() {
        let mut cmd = Command::new("sleep");
        cmd.arg("5");
        let started = Instant::now();
        let err = output(cmd, Duration::from_millis(100)).unwrap_err();
        assert!(matches!(err, ExecError::Timeout { .. }), "{err}");
        assert!(started.elapsed() < Duration::from_secs(2));
    }

    #[test]
    fn large_output_does_not_block_and_failures_carry_stderr() {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "head -c 300000 /dev/zero"]);
        assert_eq!(output(cmd, Duration::from_secs(5)).unwrap().len(), 300_000);
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "echo nope >&2; exit 3"]);
        let err = output(cmd, Duration::from_secs(5)).unwrap_err().to_string();
        assert!(err.contains("nope") && err.contains('3'), "{err}");
    }
}
