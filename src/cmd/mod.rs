//! One module per subcommand; the binaries only parse arguments and call these.

pub mod archive;
pub mod completions;
pub mod doctor;
pub mod find;
pub mod init;
pub mod inspect;
pub mod redact;
pub mod relocate;
pub mod restore;
pub mod snapshot;
pub mod tmux;
pub mod transcript;
