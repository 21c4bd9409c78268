//! Which of a snapshot's environment variables `--print-shell` may export on the
//! receiving machine.
//!
//! The `.lok` may be someone else's, and an exported variable can run code
//! (`PROMPT_COMMAND`, `BASH_ENV`, `LD_PRELOAD`, `PATH`, `ZDOTDIR`…) or name a program
//! that is run later (`EDITOR`, `PAGER`). So the restore applies its own allowlist,
//! whatever the file holds: the locale, and an editor or pager given as a plain
//! program name (no path, no shell syntax). Everything else is dropped and counted.

/// Locale variables: their values select a locale, nothing runs.
fn is_locale(name: &str) -> bool {
    matches!(name, "LANG" | "LANGUAGE")
        || (name.starts_with("LC_") && name[3..].bytes().all(|b| b.is_ascii_uppercase()))
}

/// Variables whose value names a program the user's tools will start.
const PROGRAM_VARS: &[&str] = &["EDITOR", "VISUAL", "PAGER"];

/// A locale value: `en_US.UTF-8`, `C`, `de_DE@euro`.
fn plain_locale(value: &str) -> bool {
    value.len() <= 64 && value.bytes().all(|b| b.is_ascii_alphanumeric() || b"._@-:".contains(&b))
}

/// Editors and pagers by name. An interpreter (`sh`, `python3`) would run the file it is
/// handed, so only programs known to show or edit text are taken.
const KNOWN_PROGRAMS: &[&str] = &[
    "vi",
    "vim",
    "nvim",
    "gvim",
    "nano",
    "pico",
    "emacs",
    "emacsclient",
    "micro",
    "hx",
    "helix",
    "kak",
    "code",
    "codium",
    "subl",
    "zed",
    "mate",
    "ed",
    "joe",
    "jed",
    "mcedit",
    "less",
    "more",
    "most",
    "bat",
    "batcat",
    "delta",
    "moar",
    "moor",
    "w3m",
];

/// A known program on the receiver's own PATH, with simple options: `nvim`, `less -R`,
/// `code --wait`. No `/` (a path could point at something the sender planted), no
/// quotes, substitutions or separators.
fn plain_program(value: &str) -> bool {
    let mut words = value.split(' ');
    let Some(program) = words.next() else { return false };
    let option_ok = |w: &str| {
        w.len() > 1 && w.starts_with('-') && w.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
    };
    value.len() <= 64 && KNOWN_PROGRAMS.contains(&program) && words.all(option_ok)
}

/// The variables to export, in the file's order, and the names of those dropped.
pub fn exportable<'a>(
    env: impl IntoIterator<Item = (&'a String, &'a String)>,
) -> (Vec<(String, String)>, Vec<String>) {
    let mut keep = Vec::new();
    let mut dropped = Vec::new();
    for (name, value) in env {
        let ok = if is_locale(name) {
            plain_locale(value)
        } else if PROGRAM_VARS.contains(&name.as_str()) {
            plain_program(value)
        } else {
            false
        };
        if ok && !value.contains(crate::lok::REDACTED) {
            keep.push((name.clone(), value.clone()));
        } else {
            dropped.push(name.clone());
        }
    }
    (keep, dropped)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(pairs: &[(&str, &str)]) -> (Vec<(String, String)>, Vec<String>) {
        let owned: Vec<(String, String)> =
            pairs.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect();
        exportable(owned.iter().map(|(a, b)| (a, b)))
    }

    #[test]
    fn only_locale_editor_and_pager_pass() {
        let (keep, dropped) = run(&[
            ("LANG", "en_US.UTF-8"),
            ("LC_ALL", "C"),
            ("EDITOR", "nvim"),
            ("PAGER", "less -R"),
            ("VISUAL", "code --wait"),
            ("PROMPT_COMMAND", "touch /tmp/pwned"),
            ("PATH", "/tmp/evil:/usr/bin"),
            ("LD_PRELOAD", "/tmp/evil.so"),
            ("BASH_ENV", "/tmp/evil.sh"),
            ("ZDOTDIR", "/tmp/evil"),
            ("TERM_PROGRAM", "iTerm.app"),
            ("TERM_PROGRAM_VERSION", "3"),
        ]);
        let names: Vec<&str> = keep.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["LANG", "LC_ALL", "EDITOR", "PAGER", "VISUAL"]);
        assert_eq!(dropped.len(), 7);
    }

    #[test]
    fn program_values_with_paths_or_shell_syntax_are_dropped() {
        for bad in [
            "/tmp/evil",
            "vim; rm -rf ~",
            "$(curl x)",
            "vim `id`",
            "sh -c",
            "python3",
            "less +!id",
            "",
            "-x",
            "vim -c=!id x",
            "emacs --load=evil",
        ] {
            let (keep, _) = run(&[("EDITOR", bad)]);
            assert!(keep.is_empty(), "{bad:?} was kept");
        }
        let (keep, _) = run(&[("LC_CTYPE", "en_US.UTF-8; id")]);
        assert!(keep.is_empty());
    }
}
