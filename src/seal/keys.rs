//! Recipients (who may open a sealed file) and identities (what opens it), read the way
//! the `age` command reads them: `age1…` and SSH public keys, recipients files with `#`
//! comments, age identity files and OpenSSH private keys.

use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::{Arc, Mutex};

use age::secrecy::SecretString;
use anyhow::{Context, bail};
use base64::Engine;
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD};
use sha2::{Digest, Sha256};

use super::tty;

/// A recipient, and how to name it in messages.
pub struct Recipient {
    pub key: Box<dyn age::Recipient + Send>,
    pub label: String,
}

/// Parses one recipient as `age -r` takes it.
pub fn parse_recipient(text: &str) -> anyhow::Result<Recipient> {
    let text = text.trim();
    if text.starts_with("age1") {
        let key = age::x25519::Recipient::from_str(text)
            .map_err(|e| anyhow::anyhow!("{text:?} is not a valid age public key: {e}"))?;
        return Ok(Recipient { key: Box::new(key), label: text.to_string() });
    }
    if text.starts_with("ssh-") || text.starts_with("ecdsa-") || text.starts_with("sk-") {
        let mut fields = text.split_whitespace();
        let kind = fields.next().unwrap_or_default().to_string();
        let blob = fields.next().unwrap_or_default().to_string();
        let key = age::ssh::Recipient::from_str(text).map_err(|e| match e {
            age::ssh::ParseRecipientKeyError::Unsupported(k) => anyhow::anyhow!(
                "{k} keys cannot receive age files; use an ssh-ed25519 or ssh-rsa key, or an age1… key"
            ),
            age::ssh::ParseRecipientKeyError::RsaModulusTooSmall => {
                anyhow::anyhow!("this ssh-rsa key is too short (under 2048 bits) to seal to")
            }
            age::ssh::ParseRecipientKeyError::RsaModulusTooLarge => {
                anyhow::anyhow!("this ssh-rsa key is too long (over 16384 bits) to seal to")
            }
            _ => anyhow::anyhow!("{:?} is not a valid SSH public key", shorten(text)),
        })?;
        let tag = STANDARD.decode(&blob).ok().map(|w| ssh_tag(&w)).unwrap_or_default();
        return Ok(Recipient { key: Box::new(key), label: format!("{kind} key {tag}") });
    }
    bail!(
        "{:?} is not a recipient: give an age public key (age1…) or an SSH public key \
         (ssh-ed25519 … or ssh-rsa …); a file of them goes to -R",
        shorten(text)
    )
}

fn shorten(text: &str) -> String {
    if text.chars().count() > 40 {
        format!("{}…", text.chars().take(40).collect::<String>())
    } else {
        text.into()
    }
}

/// Reads a recipients file: one recipient a line, `#` comments and blank lines skipped;
/// `-` is standard input.
pub fn read_recipients_file(path: &Path) -> anyhow::Result<Vec<Recipient>> {
    let text = if path == Path::new("-") {
        let mut s = String::new();
        std::io::stdin().read_to_string(&mut s).map(|_| s)
    } else {
        std::fs::read_to_string(path)
    }
    .with_context(|| format!("could not read the recipients file {}", path.display()))?;
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        out.push(parse_recipient(line).with_context(|| format!("{}, line {}", path.display(), n + 1))?);
    }
    if out.is_empty() {
        bail!("the recipients file {} names no recipient", path.display());
    }
    Ok(out)
}

/// The tag age writes in an SSH stanza: the first four bytes of the SHA-256 of the
/// public key's wire form, base64 without padding. It lets a message say which key a
/// file is sealed to without holding the key.
pub fn ssh_tag(wire: &[u8]) -> String {
    STANDARD_NO_PAD.encode(&Sha256::digest(wire)[..4])
}

/// What was tried to open a file, for the message when nothing fits.
#[derive(Debug, Clone)]
pub struct Tried {
    pub path: PathBuf,
    pub what: String,
}

/// The identities found, ready to offer to a sealed file.
pub struct Identities {
    pub keys: Vec<Loaded>,
    pub tried: Vec<Tried>,
}

pub struct Loaded {
    pub identity: Box<dyn age::Identity>,
    /// The SSH tag, when known.
    pub tag: Option<String>,
    /// Protected by a passphrase: only offered to a file sealed to its tag, so a file
    /// for another key does not ask for this one's passphrase.
    pub protected: bool,
}

/// Remembers what the user typed for a key, so a file opened twice (`--latest` reads
/// it, then restores it) asks once.
#[derive(Clone, Default)]
struct Prompter {
    cache: Arc<Mutex<Vec<(String, SecretString)>>>,
    /// Never ask: a protected key is then skipped.
    silent: bool,
}

impl age::Callbacks for Prompter {
    fn display_message(&self, message: &str) {
        eprintln!("lokust: {message}");
    }

    fn confirm(&self, _: &str, _: &str, _: Option<&str>) -> Option<bool> {
        None
    }

    fn request_public_string(&self, _: &str) -> Option<String> {
        None
    }

    fn request_passphrase(&self, description: &str) -> Option<SecretString> {
        if self.silent {
            return None;
        }
        let mut cache = self.cache.lock().ok()?;
        if let Some((_, p)) = cache.iter().find(|(d, _)| d == description) {
            return Some(p.clone());
        }
        let prompt = format!("{}: ", description.trim_end().trim_end_matches(':'));
        match tty::read_passphrase(&prompt) {
            Ok(p) => {
                cache.push((description.to_string(), p.clone()));
                Some(p)
            }
            Err(e) => {
                eprintln!("lokust: {e}");
                None
            }
        }
    }
}

/// A private key others can read is no longer private; ssh refuses such a key, lokust
/// says so and goes on.
fn warn_if_open_to_others(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    if let Ok(meta) = std::fs::metadata(path)
        && meta.permissions().mode() & 0o077 != 0
    {
        crate::exit::warn(&format!(
            "the identity file {} can be read by others (mode {:o}); run: chmod 600 {}",
            path.display(),
            meta.permissions().mode() & 0o777,
            crate::shell::posix_quote(&path.to_string_lossy(), crate::shell::Quote::WhenNeeded)
        ));
    }
}

/// Loads identity files: the ones given, else the usual places that exist.
pub fn load(given: &[PathBuf], defaults: &[PathBuf], prompts: bool) -> anyhow::Result<Identities> {
    let prompter = Prompter { silent: !prompts, ..Prompter::default() };
    let mut ids = Identities { keys: Vec::new(), tried: Vec::new() };
    if !given.is_empty() {
        for path in given {
            load_file(path, &prompter, &mut ids)?;
        }
        return Ok(ids);
    }
    for path in defaults.iter().filter(|p| p.is_file()) {
        // A broken default key is not fatal: the next one may open the file.
        if let Err(e) = load_file(path, &prompter, &mut ids) {
            ids.tried.push(Tried { path: path.clone(), what: format!("unreadable: {e:#}") });
        }
    }
    Ok(ids)
}

fn load_file(path: &Path, prompter: &Prompter, ids: &mut Identities) -> anyhow::Result<()> {
    let bytes = std::fs::read(path)
        .with_context(|| format!("could not read the identity file {}", path.display()))?;
    warn_if_open_to_others(path);
    let text = String::from_utf8_lossy(&bytes);
    if text.contains("AGE-SECRET-KEY-1") {
        let mut n = 0;
        for line in text.lines().map(str::trim).filter(|l| l.starts_with("AGE-SECRET-KEY-1")) {
            let id = age::x25519::Identity::from_str(line)
                .map_err(|e| anyhow::anyhow!("{}: an invalid age secret key: {e}", path.display()))?;
            ids.tried.push(Tried { path: path.to_path_buf(), what: format!("age key {}", id.to_public()) });
            ids.keys.push(Loaded { identity: Box::new(id), tag: None, protected: false });
            n += 1;
        }
        if n == 0 {
            bail!("{} holds no age secret key", path.display());
        }
        return Ok(());
    }
    if text.contains("-----BEGIN AGE ENCRYPTED FILE-----") || bytes.starts_with(b"age-encryption.org/") {
        bail!(
            "{} is a passphrase-protected age identity file, which lokust does not open; \
             decrypt it with `age -d` first",
            path.display()
        );
    }
    let name = path.display().to_string();
    let id = age::ssh::Identity::from_buffer(BufReader::new(&bytes[..]), Some(name.clone()))
        .map_err(|_| anyhow::anyhow!("{name} is neither an age identity file nor an SSH private key"))?;
    let wire = public_wire(&text).or_else(|| pub_file_wire(path));
    let tag = wire.as_deref().map(ssh_tag);
    let (stanza_type, protected) = match &id {
        age::ssh::Identity::Unsupported(k) => {
            ids.tried.push(Tried { path: path.to_path_buf(), what: format!("unsupported SSH key: {k:?}") });
            return Ok(());
        }
        age::ssh::Identity::Encrypted(_) => (ssh_type(wire.as_deref()), true),
        age::ssh::Identity::Unencrypted(_) => (ssh_type(wire.as_deref()), false),
    };
    let note = if protected { ", passphrase-protected" } else { "" };
    ids.tried.push(Tried {
        path: path.to_path_buf(),
        what: format!("{stanza_type} key {}{note}", tag.as_deref().unwrap_or("(tag unknown)")),
    });
    ids.keys.push(Loaded { identity: Box::new(id.with_callbacks(prompter.clone())), tag, protected });
    Ok(())
}

fn ssh_type(wire: Option<&[u8]>) -> &'static str {
    match wire.and_then(|w| ssh_string(w, 0)).map(|(s, _)| s) {
        Some(b"ssh-ed25519") => "ssh-ed25519",
        Some(b"ssh-rsa") => "ssh-rsa",
        _ => "ssh",
    }
}

/// The public key held in clear in an `openssh-key-v1` private key, encrypted or not.
fn public_wire(text: &str) -> Option<Vec<u8>> {
    const BEGIN: &str = "-----BEGIN OPENSSH PRIVATE KEY-----";
    let start = text.find(BEGIN)? + BEGIN.len();
    let end = text[start..].find("-----END")? + start;
    let b64: String = text[start..end].chars().filter(|c| !c.is_whitespace()).collect();
    let raw = STANDARD.decode(b64).ok()?;
    let magic = b"openssh-key-v1\0";
    let mut at = raw.strip_prefix(magic.as_slice()).map(|_| magic.len())?;
    for _ in 0..3 {
        // cipher name, KDF name, KDF options
        at = ssh_string(&raw, at)?.1;
    }
    let count = u32::from_be_bytes(raw.get(at..at + 4)?.try_into().ok()?);
    if count != 1 {
        return None;
    }
    ssh_string(&raw, at + 4).map(|(s, _)| s.to_vec())
}

/// The public key of `KEY.pub` next to a private key `KEY`, when it is there.
fn pub_file_wire(path: &Path) -> Option<Vec<u8>> {
    let mut name = path.as_os_str().to_owned();
    name.push(".pub");
    let line = std::fs::read_to_string(PathBuf::from(name)).ok()?;
    STANDARD.decode(line.split_whitespace().nth(1)?).ok()
}

/// An SSH wire string at `at`: its bytes and the offset after it.
fn ssh_string(raw: &[u8], at: usize) -> Option<(&[u8], usize)> {
    let len = u32::from_be_bytes(raw.get(at..at + 4)?.try_into().ok()?) as usize;
    let start = at + 4;
    Some((raw.get(start..start.checked_add(len)?)?, start + len))
}
