//! Exit statuses, the same for every binary (and listed in every man page), and the one
//! place errors are printed.

use std::io;
use std::process::ExitCode;

/// The command did what was asked.
pub const SUCCESS: u8 = 0;
/// Bad input, a refused operation, or a failure to write the result.
pub const ERROR: u8 = 2;
/// Interrupted by a signal (Ctrl-C).
pub const INTERRUPTED: u8 = 130;

/// Runs a command body and maps its outcome to an exit status: errors are printed once,
/// prefixed `lokust: ` with their context chain; a closed pipe downstream is not an error.
pub fn run(body: impl FnOnce() -> anyhow::Result<u8>) -> ExitCode {
    match body() {
        Ok(code) => ExitCode::from(code),
        Err(e) if is_broken_pipe(&e) => ExitCode::from(SUCCESS),
        // A failure after Ctrl-C, TERM or HUP is the signal's doing, however it surfaced.
        Err(e)
            if crate::interrupt::interrupted()
                || e.chain().any(|c| c.is::<crate::interrupt::Interrupted>()) =>
        {
            eprintln!("lokust: {e:#}");
            ExitCode::from(INTERRUPTED)
        }
        Err(e) => {
            eprintln!("lokust: {e:#}");
            ExitCode::from(ERROR)
        }
    }
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| c.downcast_ref::<io::Error>().is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe))
}

/// Whether `LOKUST_LOG` asks for debug output (`debug` or `trace`).
pub fn debug_enabled() -> bool {
    matches!(std::env::var("LOKUST_LOG").as_deref(), Ok("debug" | "trace"))
}

/// Prints a warning the same way everywhere.
pub fn warn(message: &str) {
    eprintln!("lokust: warning: {message}");
}
