//! The shells lokust knows — zsh, bash and fish — and the one way to quote a word for
//! each, so every script lokust prints (hooks, key bindings, `--print-shell`, hints)
//! quotes the same way.

/// A shell with a prompt hook, a history format and completions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Shell {
    Zsh,
    Bash,
    Fish,
}

impl Shell {
    /// The shell a program name (`$SHELL`'s basename) stands for; `sh` reads like bash.
    pub fn from_name(name: &str) -> Option<Shell> {
        match name.trim_start_matches('-') {
            "zsh" => Some(Shell::Zsh),
            "bash" | "sh" => Some(Shell::Bash),
            "fish" => Some(Shell::Fish),
            _ => None,
        }
    }

    /// `s` as one word of this shell's syntax.
    pub fn quote(self, s: &str) -> String {
        match self {
            Shell::Zsh | Shell::Bash => posix_quote(s, Quote::WhenNeeded),
            Shell::Fish => fish_quote(s, Quote::WhenNeeded),
        }
    }
}

/// Whether [`posix_quote`] and [`fish_quote`] leave a plain word bare.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quote {
    /// Plain words (`main`, `/usr/bin/vim`) stay bare: for hints a person reads.
    WhenNeeded,
    /// Always quoted: for generated scripts, where a path is quoted whatever it holds.
    Always,
}

fn is_plain(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || "/._-+:@%,=".contains(c))
}

/// One word for a POSIX shell (sh, bash, zsh), single-quoted.
///
/// ```
/// use lokust::shell::{Quote, posix_quote};
/// assert_eq!(posix_quote("/usr/bin/vim", Quote::WhenNeeded), "/usr/bin/vim");
/// assert_eq!(posix_quote("/usr/bin/vim", Quote::Always), "'/usr/bin/vim'");
/// assert_eq!(posix_quote("it's here", Quote::WhenNeeded), r"'it'\''s here'");
/// ```
pub fn posix_quote(s: &str, when: Quote) -> String {
    if when == Quote::WhenNeeded && is_plain(s) {
        return s.to_string();
    }
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// One word for fish, whose single quotes take `\'` and `\\` escapes.
pub fn fish_quote(s: &str, when: Quote) -> String {
    if when == Quote::WhenNeeded && is_plain(s) {
        return s.to_string();
    }
    format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'"))
}

/// Refuses a target path that starts with a `~` the shell did not expand (it was quoted):
/// taken as written it would make a folder named `~` in the current directory.
pub fn refuse_literal_tilde(path: &std::path::Path) -> anyhow::Result<()> {
    let text = path.to_string_lossy();
    if text == "~" || text.starts_with("~/") {
        let home = std::env::var("HOME").unwrap_or_else(|_| "$HOME".to_string());
        anyhow::bail!(
            "{text} starts with a ~ the shell did not expand (it was quoted); write {}{} or leave the ~ unquoted",
            home,
            &text[1..]
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_round_trips_through_the_real_shells() {
        let words = ["plain", "two words", "it's", "back\\slash", "$HOME", "a\nb", "", "*"];
        for (shell, quote) in [("sh", posix_quote as fn(&str, Quote) -> String), ("fish", fish_quote)] {
            let Ok(found) =
                std::process::Command::new("sh").args(["-c", &format!("command -v {shell}")]).output()
            else {
                continue;
            };
            if !found.status.success() {
                continue;
            }
            for w in words {
                for when in [Quote::WhenNeeded, Quote::Always] {
                    let script = format!("printf '%s' {}", quote(w, when));
                    let out = std::process::Command::new(shell).args(["-c", &script]).output().unwrap();
                    assert_eq!(String::from_utf8_lossy(&out.stdout), w, "{shell}: {script}");
                }
            }
        }
    }
}
