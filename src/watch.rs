//! What the prompt hook's background refresh does for conversations an agent is about to
//! delete. At most once a day per project it measures the shell's directory against each
//! agent's cleanup; when something is due it leaves a one-line notice that the shell's next
//! prompt prints with builtins only, and with `LOKUST_ARCHIVE=auto` it first archives the
//! project. All of it runs in the refresh, never in the prompt.

use std::io::Write;
use std::time::Duration;

use crate::agent::retention;
use crate::archive;
use crate::probe::Probe;

/// How often one project is measured.
const EVERY: Duration = Duration::from_secs(24 * 3600);

/// Whether `LOKUST_ARCHIVE` asks for automatic archives.
pub fn auto_archive(probe: &Probe) -> bool {
    probe.var_os("LOKUST_ARCHIVE").is_some_and(|v| v == "auto")
}

/// After the live file of shell `pid` was written. Never fails: what it cannot do, it
/// leaves undone (and logs when an archive fails).
pub fn after_refresh(probe: &Probe, pid: u32) {
    let Some(state) = probe.state_dir() else { return };
    let Some(dir) = std::fs::canonicalize(probe.cwd()).ok() else { return };
    let Some(project) = dir.to_str() else { return };
    let notices = state.join("notices");
    let seen = notices.join("seen").join(archive::project_key(project));
    if is_fresh(&seen) {
        return;
    }
    let measured = retention::of_project(probe, &dir);
    if measured.is_empty() || crate::fsutil::create_private_dir(&notices.join("seen")).is_err() {
        return;
    }
    // Shells refreshing in one project at once take turns; the first stamps the day and
    // does the work, the others find the stamp fresh and stay quiet.
    let Ok(_turn) = crate::fsutil::lock_file(&seen.with_extension("lock")) else { return };
    if is_fresh(&seen) || crate::fsutil::write_private_atomic(&seen, |_| Ok(())).is_err() {
        return;
    }
    let due: Vec<&retention::Due> = measured.iter().filter(|d| d.due > 0).collect();
    if due.is_empty() {
        return;
    }
    let keep = if auto_archive(probe) {
        match archive::archive(probe, &dir, &archive::Options::archive()) {
            Ok(archive::Outcome::Written { .. }) => {
                "archived them (LOKUST_ARCHIVE=auto): lokust-shell list".to_string()
            }
            Ok(archive::Outcome::Unchanged(_)) => {
                "the newest archive holds them: lokust-shell list".to_string()
            }
            Err(e) => {
                crate::hook::log(probe, &format!("pid {pid}: LOKUST_ARCHIVE=auto: {e:#}"));
                format!(
                    "could not archive them ({}); keep them: lokust-shell archive",
                    crate::sanitize::for_terminal(&format!("{e:#}"))
                )
            }
        }
    } else {
        "keep them: lokust-shell archive".to_string()
    };
    // One line, since the shells' prompts print one.
    let said: Vec<String> = due.iter().map(|d| d.warning()).collect();
    let text = format!("lokust: {}; {keep}\n", said.join("; "));
    let _ =
        crate::fsutil::write_private_atomic(&notices.join(pid.to_string()), |f| f.write_all(text.as_bytes()));
}

/// Whether the project's stamp was written within the last day.
fn is_fresh(seen: &std::path::Path) -> bool {
    std::fs::symlink_metadata(seen)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.elapsed().ok())
        .is_some_and(|age| age < EVERY)
}
