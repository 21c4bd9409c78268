//! What the capturers read of the world: the environment, the clock and the home
//! directory, gathered once so capturers stay pure and unit tests can hand them a fake.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Default)]
pub struct Probe {
    vars: BTreeMap<OsString, OsString>,
    cwd: PathBuf,
    /// Why the working directory could not be read, when `$PWD` stood in for it.
    cwd_unreadable: Option<String>,
}

impl Probe {
    /// The real process environment and working directory. A directory deleted under
    /// the shell cannot be read, so `$PWD` (when absolute) stands in for it, and
    /// [`Probe::cwd_unreadable`] says why.
    pub fn from_process() -> std::io::Result<Probe> {
        let vars: BTreeMap<OsString, OsString> = std::env::vars_os().collect();
        match std::env::current_dir() {
            Ok(cwd) => Ok(Probe { vars, cwd, cwd_unreadable: None }),
            Err(e) => {
                let pwd = vars.get(OsStr::new("PWD")).map(PathBuf::from).filter(|p| p.is_absolute());
                let Some(pwd) = pwd else { return Err(e) };
                Ok(Probe { vars, cwd: pwd, cwd_unreadable: Some(e.to_string()) })
            }
        }
    }

    /// Set when the working directory could not be read and `$PWD` stands in for it.
    pub fn cwd_unreadable(&self) -> Option<&str> {
        self.cwd_unreadable.as_deref()
    }

    /// Another process's view: its environment and working directory.
    pub fn from_vars(vars: impl IntoIterator<Item = (String, String)>, cwd: &Path) -> Probe {
        Probe {
            vars: vars.into_iter().map(|(k, v)| (k.into(), v.into())).collect(),
            cwd: cwd.to_path_buf(),
            cwd_unreadable: None,
        }
    }

    /// A probe over the given variables, for tests.
    pub fn fake<'a>(vars: impl IntoIterator<Item = (&'a str, &'a str)>, cwd: &Path) -> Probe {
        Probe {
            vars: vars.into_iter().map(|(k, v)| (k.into(), v.into())).collect(),
            cwd: cwd.to_path_buf(),
            cwd_unreadable: None,
        }
    }

    /// A variable's value when it is set, valid UTF-8 and not empty.
    pub fn var(&self, name: &str) -> Option<&str> {
        self.vars.get(OsStr::new(name)).and_then(|v| v.to_str()).filter(|v| !v.is_empty())
    }

    pub fn var_os(&self, name: &str) -> Option<&OsStr> {
        self.vars.get(OsStr::new(name)).map(OsString::as_os_str).filter(|v| !v.is_empty())
    }

    pub fn vars(&self) -> impl Iterator<Item = (&OsStr, &OsStr)> {
        self.vars.iter().map(|(k, v)| (k.as_os_str(), v.as_os_str()))
    }

    /// The same probe with one variable set, e.g. `$TMUX` of the server being asked.
    pub fn with_var(mut self, name: &str, value: impl Into<OsString>) -> Probe {
        self.vars.insert(name.into(), value.into());
        self
    }

    pub fn set_cwd(&mut self, cwd: PathBuf) {
        self.cwd = cwd;
    }

    pub fn cwd(&self) -> &Path {
        &self.cwd
    }

    /// `$HOME`, falling back to the password database's entry.
    pub fn home(&self) -> Option<PathBuf> {
        self.var_os("HOME").map(PathBuf::from).or_else(|| {
            #[allow(deprecated)] // fine on Unix since Rust 1.86; the only fallback left
            std::env::home_dir()
        })
    }

    /// An XDG base directory: `$NAME` when absolute, else `~/<fallback>`.
    pub fn xdg_dir(&self, name: &str, fallback: &str) -> Option<PathBuf> {
        match self.var_os(name).map(PathBuf::from) {
            Some(p) if p.is_absolute() => Some(p),
            _ => self.home().map(|h| h.join(fallback)),
        }
    }

    /// `$XDG_STATE_HOME/lokust`.
    pub fn state_dir(&self) -> Option<PathBuf> {
        self.xdg_dir("XDG_STATE_HOME", ".local/state").map(|d| d.join("lokust"))
    }

    pub fn now_ms(&self) -> u64 {
        crate::clock::now().as_millis() as u64
    }
}
