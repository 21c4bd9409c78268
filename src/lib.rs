//! lokust: snapshot a terminal session into a portable `.lok` file and restore it on
//! another machine, at another path, without leaking a credential.
//!
//! The modules, lowest layer first; a module names only its own layer or those below
//! (`tests/layers.rs` checks it, ARCHITECTURE.md shows the flow):
//!
//! - Leaves: [`lok`] the format's types and schema · [`probe`] the environment, clock and
//!   cwd as read once · [`exec`] subprocesses with deadlines · [`fsutil`] private, atomic
//!   writes · [`sanitize`] text from a file made safe for a terminal · [`human`] sizes,
//!   times and counts as people read them · [`clock`] time since the epoch · [`interrupt`] the Ctrl-C flag · [`policy`] the one table of names that run or grant · [`place`] the one writer of what a restore lays in an agent's store · [`shell`] zsh,
//!   bash, fish and quoting · [`exit`] exit statuses and the one error printer.
//! - Readers: [`capture`] one module per section of a snapshot (env, history, terminal,
//!   multiplexer, git, Claude Code) · [`redact`] the redactor every text passes through
//!   · `seal` age encryption of a finished `.lok`, when present.
//! - The format's payloads: [`snapshot`] takes a shell snapshot · [`bundle`] writes and
//!   reads the embedded project archives and the `bundles` elements · [`worktree`] the
//!   git work not yet pushed.
//! - [`agent`] the `Agent` trait and one module per coding agent whose sessions move with
//!   a project (Claude Code, Codex, Copilot CLI, Droid, Gemini CLI, OpenCode, codeloops): **a new agent goes here**.
//! - [`restore`] puts a bundle back on disk: plan (what `--dry-run` prints), then apply.
//! - Presentation: [`summary`] what a `.lok` holds, for people · [`hook`] the prompt
//!   hooks' live snapshots · [`doctor`] is lokust set up right here · [`latest`] the newest snapshot on this machine · [`tmux`]
//!   export, import (one pane or whole sessions) and the key binding · [`archive`] bundled
//!   copies of projects kept here, listed and pruned · [`watch`] the hook's once-a-day
//!   look at conversations about to be deleted · [`relocate`] a project moved on this
//!   machine with its conversations.
//! - The command line: [`cli`] the clap definitions · [`cmd`] one module per subcommand,
//!   called by the thin binaries in `bins/`.

pub mod agent;
pub mod archive;
pub mod bundle;
pub mod capture;
pub mod cli;
pub mod clock;
pub mod cmd;
pub mod doctor;
pub mod exec;
pub mod exit;
pub mod fsutil;
pub mod hook;
pub mod human;
pub mod interrupt;
pub mod latest;
pub mod lok;
pub mod place;
pub mod policy;
pub mod probe;
pub mod redact;
pub mod relocate;
pub mod restore;
pub mod sanitize;
pub mod seal;
pub mod shell;
pub mod snapshot;
pub mod summary;
pub mod tmux;
pub mod watch;
pub mod worktree;
