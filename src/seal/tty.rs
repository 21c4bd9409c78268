//! Asking for a passphrase on the controlling terminal, never on stdin or from an
//! argument: stdin may be the sealed file itself, and an argument shows in `ps`.

use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, Write};
use std::os::fd::AsRawFd;

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

/// Echo off for as long as it lives; restored on drop, Ctrl-C aside (the shell's `reset`
/// then helps, as with ssh and gpg).
struct NoEcho {
    fd: i32,
    saved: Option<libc::termios>,
}

impl NoEcho {
    fn new(tty: &File) -> NoEcho {
        let fd = tty.as_raw_fd();
        // SAFETY: a zeroed termios is a valid out-parameter; fd is an open terminal.
        let mut t: libc::termios = unsafe { std::mem::zeroed() };
        if unsafe { libc::tcgetattr(fd, &mut t) } != 0 {
            return NoEcho { fd, saved: None };
        }
        let saved = t;
        t.c_lflag &= !libc::ECHO;
        t.c_lflag |= libc::ICANON;
        // SAFETY: t came from tcgetattr on the same fd.
        unsafe { libc::tcsetattr(fd, libc::TCSANOW, &t) };
        NoEcho { fd, saved: Some(saved) }
    }
}

impl Drop for NoEcho {
    fn drop(&mut self) {
        if let Some(saved) = &self.saved {
            // SAFETY: restoring what tcgetattr gave for this fd.
            unsafe { libc::tcsetattr(self.fd, libc::TCSANOW, saved) };
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
