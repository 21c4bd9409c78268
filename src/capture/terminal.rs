//! The terminal section: the emulator and its version from TERM_PROGRAM, or from the
//! variables of terminals that don't set it, and $TERM.

use crate::lok::Terminal;
use crate::probe::Probe;

/// Terminals recognised by a variable of their own: (variable, program, version variable).
const SIGNATURES: &[(&str, &str, Option<&str>)] = &[
    ("GHOSTTY_RESOURCES_DIR", "ghostty", None),
    ("KITTY_WINDOW_ID", "kitty", None),
    ("WEZTERM_PANE", "WezTerm", None),
    ("WEZTERM_EXECUTABLE", "WezTerm", None),
    ("ALACRITTY_WINDOW_ID", "Alacritty", None),
    ("ALACRITTY_SOCKET", "Alacritty", None),
    ("ALACRITTY_LOG", "Alacritty", None),
    ("ITERM_SESSION_ID", "iTerm.app", None),
    ("VSCODE_INJECTION", "vscode", None),
    ("VSCODE_GIT_IPC_HANDLE", "vscode", None),
    ("WT_SESSION", "Windows Terminal", None),
    ("KONSOLE_VERSION", "Konsole", Some("KONSOLE_VERSION")),
    ("VTE_VERSION", "VTE", Some("VTE_VERSION")),
];

/// TERM_PROGRAM values that name a multiplexer, not the terminal around it.
const MULTIPLEXERS: &[&str] = &["tmux", "screen", "zellij"];

pub fn capture(probe: &Probe) -> Option<Terminal> {
    let term = probe.var("TERM").map(str::to_string);
    let declared = probe.var("TERM_PROGRAM");
    let recognised = SIGNATURES.iter().find(|(var, _, _)| probe.var(var).is_some());
    let (program, version) = match (declared, recognised) {
        (Some(p), Some((_, name, version_var))) if MULTIPLEXERS.contains(&p) => {
            (Some(name.to_string()), version_var.and_then(|v| probe.var(v)).map(str::to_string))
        }
        (Some(p), _) => (Some(p.to_string()), probe.var("TERM_PROGRAM_VERSION").map(str::to_string)),
        (None, Some((_, name, version_var))) => {
            (Some(name.to_string()), version_var.and_then(|v| probe.var(v)).map(str::to_string))
        }
        (None, None) => (None, None),
    };
    if program.is_none() && term.is_none() {
        return None;
    }
    Some(Terminal { program, version, term, ..Terminal::default() })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn of(vars: &[(&str, &str)]) -> Option<(Option<String>, Option<String>, Option<String>)> {
        capture(&Probe::fake(vars.iter().copied(), Path::new("/"))).map(|t| (t.program, t.version, t.term))
    }

    fn s(v: &str) -> Option<String> {
        Some(v.to_string())
    }

    #[test]
    fn declared_recognised_and_behind_tmux() {
        assert_eq!(
            of(&[("TERM_PROGRAM", "ghostty"), ("TERM_PROGRAM_VERSION", "1.3.1"), ("TERM", "xterm-ghostty")]),
            Some((s("ghostty"), s("1.3.1"), s("xterm-ghostty")))
        );
        assert_eq!(
            of(&[("KITTY_WINDOW_ID", "1"), ("TERM", "xterm-kitty")]),
            Some((s("kitty"), None, s("xterm-kitty")))
        );
        assert_eq!(
            of(&[("TERM_PROGRAM", "tmux"), ("TERM_PROGRAM_VERSION", "3.3a"), ("WT_SESSION", "x")]),
            Some((s("Windows Terminal"), None, None))
        );
        assert_eq!(
            of(&[("TERM_PROGRAM", "tmux"), ("TERM_PROGRAM_VERSION", "3.3a")]),
            Some((s("tmux"), s("3.3a"), None))
        );
        assert_eq!(of(&[("VTE_VERSION", "7600")]), Some((s("VTE"), s("7600"), None)));
        assert_eq!(of(&[]), None);
    }
}
