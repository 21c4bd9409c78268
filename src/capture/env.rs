//! The environment section: an allowlist of harmless variables, a name-based drop of
//! anything that sounds secret, and the redactor over every value that is kept.

use std::collections::BTreeMap;

use crate::probe::Probe;
use crate::redact::{Report, redact_env};

/// Variables kept by exact name (spec/lok-format.md, `shell.env`).
const ALLOWED: &[&str] = &[
    "HOME",
    "USER",
    "SHELL",
    "TERM",
    "LANG",
    "PWD",
    "OLDPWD",
    "EDITOR",
    "PAGER",
    "TERM_PROGRAM",
    "TERM_PROGRAM_VERSION",
    "COLORTERM",
    "LC_ALL",
    "LC_CTYPE",
    "TMUX",
    "TMUX_PANE",
    "ZELLIJ",
    "ZELLIJ_SESSION_NAME",
    "CLAUDECODE_ENTRYPOINT",
    "CLAUDE_PROJECT_DIR",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
];

/// Variables kept by prefix.
const ALLOWED_PREFIXES: &[&str] = &["LC_", "XDG_"];

/// A name containing any of these is dropped whatever the allowlist says.
const SECRET_NAME_PARTS: &[&str] =
    &["TOKEN", "KEY", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH", "PRIVATE"];

pub struct EnvCapture {
    pub env: BTreeMap<String, String>,
    pub dropped: u64,
    pub report: Report,
}

/// Whether a variable name may travel in a `.lok`.
pub fn is_allowed(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    if SECRET_NAME_PARTS.iter().any(|p| upper.contains(p)) {
        return false;
    }
    ALLOWED.contains(&name) || ALLOWED_PREFIXES.iter().any(|p| name.starts_with(p))
}

pub fn capture(probe: &Probe) -> EnvCapture {
    let mut env = BTreeMap::new();
    let mut dropped = 0;
    let mut report = Report::default();
    for (name, value) in probe.vars() {
        match name.to_str() {
            Some(name) if is_allowed(name) => {
                let value = value.to_string_lossy();
                env.insert(name.to_string(), redact_env(name, &value, &mut report).into_owned());
            }
            _ => dropped += 1,
        }
    }
    EnvCapture { env, dropped, report }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn allowlist_prefixes_and_secret_names() {
        let probe = Probe::fake(
            [
                ("HOME", "/home/u"),
                ("LC_TIME", "C"),
                ("XDG_RUNTIME_DIR", "/run/user/1"),
                ("XDG_AUTH_TOKEN", "x"),
                ("GITHUB_TOKEN", "y"),
                ("PATH", "/bin"),
                ("EDITOR", "vim"),
            ],
            Path::new("/"),
        );
        let got = capture(&probe);
        assert_eq!(
            got.env.keys().map(String::as_str).collect::<Vec<_>>(),
            ["EDITOR", "HOME", "LC_TIME", "XDG_RUNTIME_DIR"]
        );
        assert_eq!(got.dropped, 3);
    }

    #[test]
    fn kept_values_pass_the_redactor() {
        let tok = "ghp_R7c2Qm9XvLp4Tn8Ws1Yd6Hb3Kf5Jg0Ae2Zx9";
        let value = format!("vim -c 'let g:t=\"{tok}\"'");
        let probe = Probe::fake([("EDITOR", value.as_str())], Path::new("/"));
        let got = capture(&probe);
        assert!(!got.env["EDITOR"].contains(tok));
        assert_eq!(got.report.values, 1);
    }
}
