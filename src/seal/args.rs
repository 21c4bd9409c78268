//! The sealing and opening flags, shared by every command that writes or reads a `.lok`.

use std::path::PathBuf;

use clap::Args;

use super::SealOptions;
use crate::probe::Probe;

/// How to seal what is written.
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "Sealing (age encryption)")]
pub struct SealArgs {
    /// Seal to an age key (age1…) or an SSH public key.
    ///
    /// Repeatable. RECIPIENT is taken the way `age -r` takes it: an age public key, or an
    /// ssh-ed25519 or ssh-rsa public key line, so
    /// --encrypt-to "$(ssh otherhost cat .ssh/id_ed25519.pub)" seals for another machine.
    /// The result is a standard age file: `age -d -i KEY` opens it, and so do
    /// lokust-shell-restore, lokust-shell inspect and lokust-tmux import. The default file
    /// name gains .age. Without any sealing flag, LOKUST_ENCRYPT_TO (recipients separated
    /// by commas or newlines) and LOKUST_RECIPIENTS_FILE are read instead, so a key
    /// binding or a script seals without flags.
    #[arg(short = 'r', long = "encrypt-to", value_name = "RECIPIENT")]
    pub encrypt_to: Vec<String>,

    /// Seal to the recipients listed in FILE.
    ///
    /// Repeatable. One age or SSH public key a line; blank lines and lines starting with
    /// # are skipped, as in `age -R`.
    #[arg(short = 'R', long = "recipients-file", value_name = "FILE")]
    pub recipients_file: Vec<PathBuf>,

    /// Seal with a passphrase typed on the terminal.
    ///
    /// The passphrase is read twice from the terminal (/dev/tty), never from an argument,
    /// the environment or standard input; `age -d` asks for it too.
    #[arg(long, conflicts_with_all = ["encrypt_to", "recipients_file"])]
    pub passphrase: bool,

    /// Seal as ASCII armor (PEM-style text) instead of binary.
    #[arg(long)]
    pub armor: bool,
}

impl SealArgs {
    /// The flags, else (when none says how to seal) LOKUST_ENCRYPT_TO and
    /// LOKUST_RECIPIENTS_FILE from `probe`'s environment: a flag always wins over the
    /// environment, and an empty variable is unset.
    pub fn options(&self, probe: &Probe) -> SealOptions {
        let mut recipients = split(self.encrypt_to.iter().map(String::as_str));
        let mut recipients_files = self.recipients_file.clone();
        if !self.passphrase && recipients.is_empty() && recipients_files.is_empty() {
            recipients = split(probe.var("LOKUST_ENCRYPT_TO").into_iter());
            recipients_files = probe
                .var("LOKUST_RECIPIENTS_FILE")
                .filter(|f| !f.trim().is_empty())
                .map(PathBuf::from)
                .into_iter()
                .collect();
        }
        SealOptions { recipients, recipients_files, armor: self.armor, passphrase: self.passphrase }
    }
}

/// Recipients given one per flag, or several separated by commas or newlines.
fn split<'a>(values: impl Iterator<Item = &'a str>) -> Vec<String> {
    values
        .flat_map(|v| v.split([',', '\n']))
        .map(str::trim)
        .filter(|r| !r.is_empty())
        .map(str::to_string)
        .collect()
}

/// Which keys open a sealed file.
#[derive(Debug, Clone, Default, Args)]
pub struct KeyArgs {
    /// Open a sealed (age) file with the key in FILE.
    ///
    /// Repeatable. FILE is an age identity file (AGE-SECRET-KEY-1… lines, as age-keygen
    /// writes) or an SSH private key (ed25519 or RSA; a passphrase-protected one is asked
    /// for on the terminal). Without -i: ~/.ssh/id_ed25519, ~/.ssh/id_rsa and
    /// $XDG_CONFIG_HOME/lokust/identities; a file sealed with a passphrase asks for it.
    /// A file is known to be sealed by its first bytes, whatever its name.
    #[arg(short = 'i', long = "identity", value_name = "FILE")]
    pub identity: Vec<PathBuf>,
}
