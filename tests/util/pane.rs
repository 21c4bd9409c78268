//! Waiting on a real tmux server's panes.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::Tmux;

/// Polls `check` every 50 ms until it returns something, failing after `secs` seconds
/// with `what` and the last state `describe` gives.
pub fn wait_for<T>(
    secs: u64,
    what: &str,
    mut check: impl FnMut() -> Option<T>,
    describe: impl Fn() -> String,
) -> T {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        if let Some(v) = check() {
            return v;
        }
        assert!(
            Instant::now() < deadline,
            "timed out after {secs} s waiting for {what}; last state:\n{}",
            describe()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The text of a pane, trailing blank lines dropped.
pub fn screen(tmux: &Tmux, target: &str) -> String {
    tmux.command()
        .args(["capture-pane", "-p", "-t", target])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim_end().to_string())
        .unwrap_or_default()
}

/// Waits until the pane shows `needle`.
pub fn wait_screen(tmux: &Tmux, target: &str, needle: &str) -> String {
    wait_for(
        20,
        &format!("{needle:?} in pane {target}"),
        || Some(screen(tmux, target)).filter(|s| s.contains(needle)),
        || screen(tmux, target),
    )
}

pub fn bin(name: &str) -> PathBuf {
    assert_cmd::cargo::cargo_bin(name)
}
