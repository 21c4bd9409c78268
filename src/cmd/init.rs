//! `lokust-shell init zsh|bash|fish`: prints the prompt hook, calling this very binary.

use std::io::Write;

use crate::cli::InitArgs;
use crate::hook;

pub fn run(args: &InitArgs, out: &mut impl Write) -> anyhow::Result<u8> {
    // The absolute path keeps the hook working when PATH changes inside the shell.
    let exe = std::env::current_exe().ok();
    out.write_all(hook::script(args.shell, exe.as_deref()).as_bytes())?;
    out.flush()?;
    Ok(crate::exit::SUCCESS)
}
