//! The process-wide Ctrl-C flag: SIGINT, SIGTERM and SIGHUP become a flag that long
//! operations (a bundle, a restore) check between steps, so they can remove their temp
//! files and exit 130 instead of dying halfway.

use std::sync::atomic::{AtomicBool, Ordering};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Whether SIGINT, SIGTERM or SIGHUP arrived since [`install_signal_handlers`].
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::Relaxed)
}

extern "C" fn on_signal(_: libc::c_int) {
    INTERRUPTED.store(true, Ordering::Relaxed);
}

/// Turns Ctrl-C (and TERM, HUP) into the flag [`interrupted`] reads.
pub fn install_signal_handlers() {
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
        unsafe {
            libc::signal(sig, on_signal as *const () as libc::sighandler_t);
        }
    }
}

/// The error of an interrupted operation; the commands map it to exit status 130.
#[derive(Debug)]
pub struct Interrupted;

impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("interrupted; nothing was changed")
    }
}

impl std::error::Error for Interrupted {}
