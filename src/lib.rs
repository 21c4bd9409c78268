//! lokust: snapshot a terminal session into a portable `.lok` file and restore it on
//! another machine, at another path, without leaking a credential.

pub mod lok;
pub mod redact;
