//! One module per subcommand; the binaries only parse arguments and call these.

pub mod completions;
pub mod inspect;
pub mod restore;
pub mod snapshot;
