//! lokust: snapshot a terminal session into a portable `.lok` file and restore it on
//! another machine, at another path, without leaking a credential.

pub mod bundle;
pub mod capture;
pub mod cli;
pub mod cmd;
pub mod exec;
pub mod exit;
pub mod fsutil;
pub mod hook;
pub mod human;
pub mod interrupt;
pub mod latest;
pub mod lok;
pub mod probe;
pub mod redact;
pub mod restore;
pub mod sanitize;
pub mod shell;
pub mod snapshot;
pub mod summary;
pub mod tmux;
pub mod worktree;
