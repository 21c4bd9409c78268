//! The `tmux_session` object of a shell `.lok` (additive to version 1, `docs/format.md`):
//! every window and pane of one tmux session. `shell` keeps describing the active pane, so
//! a reader that does not know this object still restores that pane whole.
//!
//! Everything here is description. A reader runs nothing of it: a pane's foreground
//! program is redacted text for display, and an agent's resume command is built by the
//! reader from the agent's id grammar, never taken from the file.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Extra, Scrollback};

/// The `format` this lokust writes and reads.
pub const FORMAT: u32 = 1;
/// At most this many windows, and panes in a window; a file with more is not rebuilt.
/// (And [`MAX_PANES_TOTAL`] in all.)
pub const MAX_WINDOWS: usize = 64;
pub const MAX_PANES: usize = 64;
/// At most this many panes in all: each is a login shell on the receiver.
pub const MAX_PANES_TOTAL: usize = 256;
/// Names and titles are cut to this many characters.
pub const MAX_NAME: usize = 256;
/// A pane's scrollback keeps its last this many bytes; the cut is counted.
pub const MAX_SCROLLBACK: usize = 1 << 20;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TmuxSession {
    /// Always 1.
    pub format: u32,
    /// The session's name (at most 256 characters).
    #[schemars(length(max = 256))]
    pub name: String,
    /// The directory `--to` maps: the git top level of the active pane's directory, else
    /// the deepest directory holding every pane's.
    pub root: String,
    /// In index order, at most 64.
    #[schemars(length(max = 64))]
    pub windows: Vec<Window>,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Window {
    pub index: u32,
    #[schemars(length(max = 256))]
    pub name: String,
    #[serde(default)]
    pub active: bool,
    /// One pane fills the window (`resize-pane -Z`); `layout` is the unzoomed one.
    #[serde(default)]
    pub zoomed: bool,
    /// tmux names the window after its program; `name` is then not set on import.
    #[serde(default)]
    pub automatic_rename: bool,
    /// `#{window_layout}`: checked (grammar, checksum, pane count) before it is applied;
    /// a bad one is replaced by `tiled`.
    pub layout: String,
    /// In index order, at most 64.
    #[schemars(length(max = 64))]
    pub panes: Vec<Pane>,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Pane {
    pub index: u32,
    #[serde(default)]
    pub active: bool,
    /// The pane's directory on the sending machine.
    pub cwd: String,
    /// `cwd` relative to `root` (`.` for the root itself); null when it is outside.
    pub cwd_rel: Option<String>,
    /// Escaped on import (at most 256 characters).
    #[serde(default)]
    #[schemars(length(max = 256))]
    pub title: String,
    /// The pane's shell (`zsh`), when the pane runs one.
    pub shell: Option<String>,
    /// The program in the pane's foreground, for display only: never run or typed.
    pub foreground: Option<Foreground>,
    /// The coding agent the pane runs, and its conversation.
    pub agent: Option<PaneAgent>,
    /// The last commands of the pane's shell, redacted; the active pane's are in `shell`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub history_tail: Vec<String>,
    /// The pane's scrollback, redacted, at most 1 MiB (its end); the active pane's is
    /// `shell.tmux_scrollback`.
    pub scrollback: Option<Scrollback>,
    /// Bytes cut from the start of the scrollback to keep it within 1 MiB.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub scrollback_cut_bytes: u64,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Foreground {
    /// The program's name (`vim`, or `node` for an agent on node).
    pub argv0: String,
    /// Its arguments, redacted like history; never executed.
    pub argv: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PaneAgent {
    /// The name `--agents` takes (`claude`, `codex`, …).
    pub id: String,
    /// Its conversation, when it could be told for certain.
    pub session_id: Option<String>,
    /// How the id was found: `registry`, `argv`, `open-file` or `newest`.
    pub how: Option<String>,
    /// Why no id was recorded, when none was.
    pub note: Option<String>,
    /// The `bundles` element (or the top-level `bundle`) carrying the conversation.
    pub element: Option<ElementRef>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ElementRef {
    pub kind: String,
    pub project_dir: String,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The first `MAX_NAME` characters of `s`.
pub fn capped(s: &str) -> String {
    s.chars().take(MAX_NAME).collect()
}

impl TmuxSession {
    /// The object from a file's top level, or why it cannot be rebuilt. `None`: the file
    /// has no whole session.
    pub fn from_extra(extra: &Extra) -> Option<Result<TmuxSession, String>> {
        let value = extra.get("tmux_session")?;
        let session: TmuxSession = match serde_json::from_value(value.clone()) {
            Ok(s) => s,
            Err(e) => return Some(Err(format!("its tmux_session is not readable: {e}"))),
        };
        Some(session.check().map(|()| session))
    }

    fn check(&self) -> Result<(), String> {
        if self.format != FORMAT {
            return Err(format!("its tmux_session has format {}; this lokust reads {FORMAT}", self.format));
        }
        if self.windows.is_empty() || self.windows.len() > MAX_WINDOWS {
            return Err(format!(
                "its tmux_session has {} windows (1 to {MAX_WINDOWS} are rebuilt)",
                self.windows.len()
            ));
        }
        if let Some(w) = self.windows.iter().find(|w| w.panes.is_empty() || w.panes.len() > MAX_PANES) {
            return Err(format!(
                "a window of its tmux_session has {} panes (1 to {MAX_PANES} are rebuilt)",
                w.panes.len()
            ));
        }
        let total: usize = self.windows.iter().map(|w| w.panes.len()).sum();
        if total > MAX_PANES_TOTAL {
            return Err(format!(
                "its tmux_session has {total} panes (at most {MAX_PANES_TOTAL} are rebuilt)"
            ));
        }
        Ok(())
    }
}
