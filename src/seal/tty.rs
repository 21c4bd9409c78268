//! Asking for a passphrase on the controlling terminal, never on stdin or from an
//! argument: stdin may be the sealed file itself, and an argument shows in `ps`.

use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, Write};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicI32, AtomicPtr, Ordering};

use age::secrecy::SecretString;

/// Why there is no passphrase.
#[derive(Debug)]
pub enum PromptError {
    /// No controlling terminal (cron, a pipe from ssh without -t, CI).
    NoTerminal(io::Error),
    /// The terminal closed, or the user typed nothing.
    Empty,
    Io(io::Error),
}

impl std::fmt::Display for PromptError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PromptError::NoTerminal(e) => write!(f, "no terminal to ask for a passphrase on (/dev/tty: {e})"),
            PromptError::Empty => f.write_str("no passphrase was typed"),
            PromptError::Io(e) => write!(f, "could not read the passphrase from the terminal: {e}"),
        }
    }
}

impl std::error::Error for PromptError {}

/// Echo off for as long as it lives. A signal that ends the process meanwhile (Ctrl-C,
/// a closed terminal) first turns echo back on, or the shell would be left blind.
struct NoEcho {
    fd: i32,
    saved: Option<Box<libc::termios>>,
    old_handlers: Vec<(libc::c_int, libc::sigaction)>,
}

/// What the signal handler restores: the terminal and its settings, or -1 and null.
static ECHO_FD: AtomicI32 = AtomicI32::new(-1);
static ECHO_SAVED: AtomicPtr<libc::termios> = AtomicPtr::new(std::ptr::null_mut());

extern "C" fn restore_echo_and_die(sig: libc::c_int) {
    let fd = ECHO_FD.load(Ordering::SeqCst);
    let saved = ECHO_SAVED.load(Ordering::SeqCst);
    // SAFETY: tcsetattr, signal and raise are async-signal-safe; `saved` points to the
    // settings NoEcho keeps alive until it has cleared this pointer.
    unsafe {
        if fd >= 0 && !saved.is_null() {
            libc::tcsetattr(fd, libc::TCSANOW, saved);
        }
        libc::signal(sig, libc::SIG_DFL);
        libc::raise(sig);
    }
}

impl NoEcho {
    fn new(tty: &File) -> NoEcho {
        let fd = tty.as_raw_fd();
        // SAFETY: a zeroed termios is a valid out-parameter; fd is an open terminal.
        let mut t: libc::termios = unsafe { std::mem::zeroed() };
        if unsafe { libc::tcgetattr(fd, &mut t) } != 0 {
            return NoEcho { fd, saved: None, old_handlers: Vec::new() };
        }
        let mut saved = Box::new(t);
        ECHO_FD.store(fd, Ordering::SeqCst);
        ECHO_SAVED.store(&mut *saved, Ordering::SeqCst);
        let mut old_handlers = Vec::new();
        for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT] {
            // SAFETY: installing a handler that only calls async-signal-safe functions.
            unsafe {
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = restore_echo_and_die as *const () as usize;
                libc::sigemptyset(&mut action.sa_mask);
                let mut old: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(sig, &action, &mut old) == 0 {
                    old_handlers.push((sig, old));
                }
            }
        }
        t.c_lflag &= !libc::ECHO;
        t.c_lflag |= libc::ICANON;
        // SAFETY: t came from tcgetattr on the same fd.
        unsafe { libc::tcsetattr(fd, libc::TCSANOW, &t) };
        NoEcho { fd, saved: Some(saved), old_handlers }
    }
}

impl Drop for NoEcho {
    fn drop(&mut self) {
        if let Some(saved) = &self.saved {
            // SAFETY: restoring what tcgetattr gave for this fd, then the old handlers.
            unsafe {
                libc::tcsetattr(self.fd, libc::TCSANOW, &**saved);
                for (sig, old) in &self.old_handlers {
                    libc::sigaction(*sig, old, std::ptr::null_mut());
                }
            }
            ECHO_SAVED.store(std::ptr::null_mut(), Ordering::SeqCst);
            ECHO_FD.store(-1, Ordering::SeqCst);
        }
    }
}

fn open_tty() -> Result<File, PromptError> {
    OpenOptions::new().read(true).write(true).open("/dev/tty").map_err(PromptError::NoTerminal)
}

fn ask(tty: &mut File, prompt: &str) -> Result<String, PromptError> {
    let mut line = String::new();
    {
        // Echo goes off before the prompt shows, so an answer typed ahead is not shown.
        let _quiet = NoEcho::new(tty);
        tty.write_all(prompt.as_bytes()).map_err(PromptError::Io)?;
        tty.flush().map_err(PromptError::Io)?;
        BufReader::new(&mut *tty).read_line(&mut line).map_err(PromptError::Io)?;
    }
    let _ = tty.write_all(b"\n");
    let text = line.strip_suffix('\n').unwrap_or(&line);
    let text = text.strip_suffix('\r').unwrap_or(text);
    if text.is_empty() {
        return Err(PromptError::Empty);
    }
    Ok(text.to_string())
}

/// One passphrase, e.g. to open a file or unlock a key.
pub fn read_passphrase(prompt: &str) -> Result<SecretString, PromptError> {
    let mut tty = open_tty()?;
    ask(&mut tty, prompt).map(SecretString::from)
}

/// A new passphrase, typed twice so a typo cannot seal a file for good.
pub fn read_new_passphrase(prompt: &str) -> Result<SecretString, PromptError> {
    let mut tty = open_tty()?;
    loop {
        let first = ask(&mut tty, prompt)?;
        let second = ask(&mut tty, "Type it again: ")?;
        if first == second {
            return Ok(SecretString::from(first));
        }
        tty.write_all(b"The two passphrases differ; try again.\n").map_err(PromptError::Io)?;
    }
}
