//! Why a restore stopped reading a `.lok`, as one type, so callers and messages decide by
//! variant and not by the text of an error. Every message names the file.

use std::io;

use crate::bundle::scan::SyntaxError;
use crate::bundle::unpack::UnpackError;
use crate::interrupt::Interrupted;
use crate::lok::LokError;

#[derive(Debug, thiserror::Error)]
pub enum RestoreError {
    /// Ctrl-C or a signal: nothing was changed.
    #[error(transparent)]
    Interrupted(#[from] Interrupted),
    /// The file is not JSON.
    #[error("{name} is not valid JSON: {detail}")]
    Syntax { name: String, detail: String },
    /// JSON, but not a `.lok` of a version or shape this lokust reads.
    #[error(transparent)]
    Format(#[from] LokError),
    /// A valid `.lok` that holds nothing this restore puts back (a coordination session,
    /// no bundle, a bundle of another kind or format, data of another length).
    #[error("{0}")]
    NotRestorable(String),
    /// The bundle's data is broken or hostile; nothing was written.
    #[error("{name}: {reason}")]
    Data { name: String, reason: String },
    /// The file could not be read.
    #[error("could not read {name}")]
    Read {
        name: String,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// Ctrl-C while an existing slot was merged: what was placed before it stays.
    #[error(transparent)]
    PartlyPlaced(#[from] PartlyPlaced),
    /// Placing what was read failed (a folder that could not be made, a link on the way,
    /// a slot made by another restore meanwhile); the message says what and where.
    #[error(transparent)]
    Placing(anyhow::Error),
}

/// Ctrl-C (or TERM, HUP) while an existing slot was merged file by file: the files
/// before it are in place, none after it. Running the restore again places the rest.
#[derive(Debug, thiserror::Error)]
#[error(
    "interrupted after {placed} of {total} files were placed in {}; run the restore again to place the rest{}",
    slot.display(),
    kept_as(backups)
)]
pub struct PartlyPlaced {
    pub placed: usize,
    pub total: usize,
    pub slot: std::path::PathBuf,
    /// The receiver's files `--force` had set aside before the signal.
    pub backups: Vec<std::path::PathBuf>,
}

fn kept_as(backups: &[std::path::PathBuf]) -> String {
    if backups.is_empty() {
        return String::new();
    }
    let named: Vec<String> =
        backups.iter().map(|b| crate::sanitize::for_terminal(&b.to_string_lossy()).into_owned()).collect();
    format!("; the receiver's copies replaced so far are kept as {}", named.join(", "))
}

/// The error as the restore's own, when it already is one (or an interruption).
fn own(e: anyhow::Error) -> Result<RestoreError, anyhow::Error> {
    if e.chain().any(|c| c.is::<Interrupted>()) {
        return Ok(RestoreError::Interrupted(Interrupted));
    }
    e.downcast::<RestoreError>()
}

/// Any error of a restore as its variant: the restore's own kept, the rest a failure to
/// place what was read.
pub(super) fn classify(e: anyhow::Error) -> RestoreError {
    match own(e) {
        Ok(r) => r,
        Err(e) => match e.downcast::<PartlyPlaced>() {
            Ok(p) => RestoreError::PartlyPlaced(p),
            Err(e) => RestoreError::Placing(e),
        },
    }
}

/// What went wrong while reading the document (everything but the bundle's data).
pub(super) fn reading(e: anyhow::Error, name: &str) -> RestoreError {
    let e = match own(e) {
        Ok(r) => return r,
        Err(e) => e,
    };
    for cause in e.chain() {
        let inner = cause.downcast_ref::<io::Error>().and_then(|i| i.get_ref());
        if let Some(s) = cause.downcast_ref::<SyntaxError>().or_else(|| inner.and_then(|i| i.downcast_ref()))
        {
            return RestoreError::Syntax { name: name.into(), detail: s.to_string() };
        }
    }
    match e.downcast::<LokError>() {
        Ok(l) => RestoreError::Format(l),
        Err(e) => RestoreError::Read { name: name.into(), source: e.into() },
    }
}

/// What went wrong in the bundle's data.
pub(super) fn data(e: anyhow::Error, name: &str) -> RestoreError {
    match own(e) {
        Ok(r) => r,
        Err(e) => match e.downcast_ref::<UnpackError>() {
            Some(u) => RestoreError::Data { name: name.into(), reason: u.to_string() },
            None => RestoreError::Data { name: name.into(), reason: format!("{e:#}") },
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use anyhow::anyhow;

    #[test]
    fn each_cause_becomes_its_variant_and_names_the_file() {
        let syntax =
            anyhow::Error::from(io::Error::new(io::ErrorKind::InvalidData, SyntaxError("EOF".into())));
        assert_eq!(reading(syntax, "s.lok").to_string(), "s.lok is not valid JSON: EOF");
        assert!(matches!(
            reading(anyhow!(Interrupted).context("while reading"), "s.lok"),
            RestoreError::Interrupted(_)
        ));
        let own = anyhow!(RestoreError::NotRestorable("s.lok has no bundle".into()));
        assert_eq!(reading(own, "s.lok").to_string(), "s.lok has no bundle");
        let io = anyhow::Error::from(io::Error::from(io::ErrorKind::PermissionDenied));
        let e = reading(io, "s.lok");
        assert!(matches!(e, RestoreError::Read { .. }));
        assert_eq!(format!("{:#}", anyhow::Error::from(e)), "could not read s.lok: permission denied");
        let refused = anyhow!(UnpackError::Refused("the bundle holds a FIFO (x)".into()));
        assert_eq!(data(refused, "s.lok").to_string(), "s.lok: the bundle holds a FIFO (x)");
        // Raised by the restore itself inside the data (a check that names the file): kept.
        let named = anyhow!(RestoreError::Data { name: "s.lok".into(), reason: "inflates".into() });
        assert_eq!(data(named, "s.lok").to_string(), "s.lok: inflates");
    }
}
