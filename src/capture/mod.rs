//! One capturer per section of a shell snapshot. Each reads the world through a
//! [`Probe`](crate::probe::Probe) and fails on its own: the snapshot goes on without it.

pub mod claude;
pub mod env;
pub mod git;
pub mod history;
pub mod multiplexer;
pub mod terminal;
