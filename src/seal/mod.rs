//! Sealed `.lok` files: standard age files (<https://age-encryption.org/v1>) made and
//! opened with the `age` crate, so `age -d` opens what lokust seals and lokust opens
//! what `age -e` seals. Both directions stream in 64 KiB chunks: memory stays flat and
//! no plaintext copy touches the disk.
//!
//! A sealed file is told from a plain one by its first bytes (a `.lok` is JSON and
//! starts with `{`), never by its name.

pub mod args;
mod keys;
mod tty;

use std::cell::{Cell, OnceCell};
use std::fmt::Write as _;
use std::io::{self, BufRead, BufReader, Cursor, Read, Write};
use std::path::{Path, PathBuf};

use age::armor::{ArmoredReader, ArmoredWriter, Format};
use age::secrecy::SecretString;
use age::stream::StreamWriter;
use anyhow::{Context, anyhow, bail};

use crate::lok::Lok;
use crate::probe::Probe;

pub use keys::ssh_tag;
pub use tty::PromptError;

/// The first bytes of a binary age file.
pub const BINARY_MAGIC: &[u8] = b"age-encryption.org/";
/// The first line of an armored (PEM-style) age file.
pub const ARMOR_BEGIN: &[u8] = b"-----BEGIN AGE ENCRYPTED FILE-----";
/// The suffix a sealed file's default name gains.
pub const SUFFIX: &str = ".age";

/// Whether `head` (the first bytes of a file) starts an age file, binary or armored.
pub fn looks_sealed(head: &[u8]) -> bool {
    let start = head.iter().position(|b| !b.is_ascii_whitespace()).unwrap_or(head.len());
    head.starts_with(BINARY_MAGIC) || head[start..].starts_with(ARMOR_BEGIN)
}

/// A reader with its first bytes put back.
pub type Sniffed<R> = io::Chain<Cursor<Vec<u8>>, R>;

/// Reads the first bytes of `r` and hands back whether they start an age file, with a
/// reader that still yields every byte.
pub fn sniff<R: Read>(mut r: R) -> io::Result<(bool, Sniffed<R>)> {
    let mut head = vec![0; 64];
    let mut n = 0;
    while n < head.len() {
        match r.read(&mut head[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    head.truncate(n);
    Ok((looks_sealed(&head), Cursor::new(head).chain(r)))
}

/// Whether a name says "sealed"; a plain file under such a name is refused.
pub fn named_sealed(path: &Path) -> bool {
    path.extension().is_some_and(|x| x == "age")
}

/// How to seal, from the command line or the environment.
#[derive(Debug, Clone, Default)]
pub struct SealOptions {
    /// `age1…` and SSH public keys.
    pub recipients: Vec<String>,
    /// Files of recipients, one a line.
    pub recipients_files: Vec<PathBuf>,
    /// ASCII armor instead of binary.
    pub armor: bool,
    /// Seal with a passphrase asked on the terminal.
    pub passphrase: bool,
}

impl SealOptions {
    pub fn wanted(&self) -> bool {
        self.passphrase || !self.recipients.is_empty() || !self.recipients_files.is_empty()
    }

    /// Resolves the recipients (or asks for the passphrase); `None` when not sealing.
    pub fn sealer(&self) -> anyhow::Result<Option<Sealer>> {
        if !self.wanted() {
            if self.armor {
                bail!("--armor needs something to seal to: --encrypt-to, --recipients-file or --passphrase");
            }
            return Ok(None);
        }
        if self.passphrase {
            if !self.recipients.is_empty() || !self.recipients_files.is_empty() {
                bail!(
                    "--passphrase cannot be combined with recipients: age seals a file to one or the other"
                );
            }
            let pass = tty::read_new_passphrase("Passphrase to seal the snapshot with: ")
                .context("--passphrase reads the passphrase from the terminal")?;
            return Ok(Some(Sealer {
                encryptor: age::Encryptor::with_user_passphrase(pass),
                armor: self.armor,
                labels: vec!["a passphrase".into()],
            }));
        }
        let mut all = Vec::new();
        for r in &self.recipients {
            all.push(keys::parse_recipient(r).context("--encrypt-to")?);
        }
        for f in &self.recipients_files {
            all.extend(keys::read_recipients_file(f)?);
        }
        let encryptor =
            age::Encryptor::with_recipients(all.iter().map(|r| r.key.as_ref() as &dyn age::Recipient))
                .map_err(|e| anyhow!("could not seal to these recipients: {e}"))?;
        Ok(Some(Sealer { encryptor, armor: self.armor, labels: all.into_iter().map(|r| r.label).collect() }))
    }
}

/// Ready to seal one stream.
pub struct Sealer {
    encryptor: age::Encryptor,
    armor: bool,
    /// Who can open the result, for the summary.
    pub labels: Vec<String>,
}

impl Sealer {
    /// Starts the age stream on `out`; the file is complete only after
    /// [`SealWriter::finish`], so a stream cut short reads as truncated, never as whole.
    pub fn wrap<W: Write>(self, out: W) -> io::Result<SealWriter<W>> {
        let format = if self.armor { Format::AsciiArmor } else { Format::Binary };
        let armored = ArmoredWriter::wrap_output(out, format)?;
        Ok(SealWriter { inner: self.encryptor.wrap_output(armored)? })
    }
}

/// An encrypting writer.
pub struct SealWriter<W: Write> {
    inner: StreamWriter<ArmoredWriter<W>>,
}

impl<W: Write> SealWriter<W> {
    /// Writes the last chunk (and the armor's end line) and hands back the output.
    pub fn finish(self) -> io::Result<W> {
        self.inner.finish()?.finish()
    }
}

impl<W: Write> Write for SealWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.inner.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// A writer that seals or passes through, so callers write one code path.
pub enum Output<W: Write> {
    Plain(W),
    Sealed(SealWriter<W>),
}

impl<W: Write> Output<W> {
    pub fn new(out: W, sealer: Option<Sealer>) -> io::Result<Output<W>> {
        Ok(match sealer {
            Some(s) => Output::Sealed(s.wrap(out)?),
            None => Output::Plain(out),
        })
    }

    pub fn finish(self) -> io::Result<W> {
        match self {
            Output::Plain(mut w) => {
                w.flush()?;
                Ok(w)
            }
            Output::Sealed(s) => {
                let mut w = s.finish()?;
                w.flush()?;
                Ok(w)
            }
        }
    }
}

impl<W: Write> Write for Output<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Output::Plain(w) => w.write(buf),
            Output::Sealed(w) => w.write(buf),
        }
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match self {
            Output::Plain(w) => w.write_all(buf),
            Output::Sealed(w) => w.write_all(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Output::Plain(w) => w.flush(),
            Output::Sealed(w) => w.flush(),
        }
    }
}

/// The keys to open sealed files with: `-i FILE`s, else the usual places. Loaded on
/// first need, once: a key's passphrase is asked at most once per run.
pub struct Keys {
    /// Whether to ask on the terminal (never from the prompt hook).
    prompts: bool,
    given: Vec<PathBuf>,
    defaults: Vec<PathBuf>,
    loaded: OnceCell<keys::Identities>,
    passphrase: OnceCell<SecretString>,
    /// Set once a file opened with one of the identities (not a passphrase).
    opened_by_identity: Cell<bool>,
}

impl Keys {
    pub fn new(given: &[PathBuf], probe: &Probe) -> Keys {
        let mut defaults = Vec::new();
        if let Some(home) = probe.home() {
            defaults.push(home.join(".ssh/id_ed25519"));
            defaults.push(home.join(".ssh/id_rsa"));
        }
        if let Some(config) = probe.xdg_dir("XDG_CONFIG_HOME", ".config") {
            defaults.push(config.join("lokust/identities"));
        }
        Keys {
            prompts: true,
            given: given.to_vec(),
            defaults,
            loaded: OnceCell::new(),
            passphrase: OnceCell::new(),
            opened_by_identity: Cell::new(false),
        }
    }

    /// The usual keys, without asking for any passphrase: for work in the background.
    pub fn without_prompts(probe: &Probe) -> Keys {
        Keys { prompts: false, ..Keys::new(&[], probe) }
    }

    /// Whether a file was opened with one of the receiver's own identities: it was sealed
    /// to them. (Sealing says who can read a file, not who wrote it.)
    pub fn opened_by_identity(&self) -> bool {
        self.opened_by_identity.get()
    }

    fn identities(&self) -> anyhow::Result<&keys::Identities> {
        if let Some(ids) = self.loaded.get() {
            return Ok(ids);
        }
        let ids = keys::load(&self.given, &self.defaults, self.prompts)?;
        Ok(self.loaded.get_or_init(|| ids))
    }

    fn passphrase(&self, name: &str) -> anyhow::Result<SecretString> {
        if let Some(p) = self.passphrase.get() {
            return Ok(p.clone());
        }
        if !self.prompts {
            bail!("{name} is sealed with a passphrase, and nothing may be asked here");
        }
        let p = tty::read_passphrase(&format!("Passphrase for {name}: "))
            .with_context(|| format!("{name} is sealed with a passphrase"))?;
        Ok(self.passphrase.get_or_init(|| p).clone())
    }

    fn default_places(&self) -> String {
        self.defaults.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
    }
}

/// One recipient line of an age header, as far as it tells.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Stanza {
    kind: String,
    /// The SSH key's tag.
    tag: Option<String>,
}

/// The header's stanzas, read off its text (`-> TYPE ARGS…` lines).
fn stanzas(header: &[u8]) -> Vec<Stanza> {
    String::from_utf8_lossy(header)
        .lines()
        .filter_map(|l| l.strip_prefix("-> "))
        // The age crate adds a random "*-grease" stanza to keep parsers honest.
        .filter(|l| !l.split(' ').next().unwrap_or_default().ends_with("-grease"))
        .map(|l| {
            let mut f = l.split(' ');
            let kind = f.next().unwrap_or_default().to_string();
            let tag = f.next().filter(|_| kind.starts_with("ssh-")).map(str::to_string);
            Stanza { kind, tag }
        })
        .collect()
}

fn describe_recipients(st: &[Stanza]) -> String {
    let mut parts = Vec::new();
    let ages = st.iter().filter(|s| s.kind == "X25519").count();
    if ages > 0 {
        parts.push(format!("{ages} age key(s) (age headers do not say which)"));
    }
    for s in st.iter().filter(|s| s.kind.starts_with("ssh-")) {
        parts.push(format!("{} key {}", s.kind, s.tag.as_deref().unwrap_or("?")));
    }
    for s in st.iter().filter(|s| s.kind != "X25519" && !s.kind.starts_with("ssh-")) {
        parts.push(format!("a {} recipient", s.kind));
    }
    parts.join(", ")
}

/// The longest header accepted; age headers are a few hundred bytes a recipient.
const MAX_HEADER: usize = 1 << 20;

/// Opens a sealed stream: reads the header, finds a key, and hands back a reader of
/// the plaintext that fails (never returns short) when the data is cut or changed.
pub fn open<R: Read + Send + 'static>(
    input: R,
    name: &str,
    keys: &Keys,
) -> anyhow::Result<Box<dyn Read + Send>> {
    let mut armored = ArmoredReader::new(BufReader::with_capacity(64 * 1024, input));
    let mut header = Vec::new();
    loop {
        let start = header.len();
        // Bounded, so a file of one endless line cannot fill the memory.
        let room = (MAX_HEADER - start) as u64;
        let n =
            (&mut armored).take(room).read_until(b'\n', &mut header).map_err(|e| stream_error(e, name))?;
        if header.len() >= MAX_HEADER {
            bail!("{name} is not a valid age file: its header is longer than 1 MiB");
        }
        if n == 0 || !header.ends_with(b"\n") {
            bail!("{name} is truncated: it ends inside its age header");
        }
        if header[start..].starts_with(b"---") {
            break;
        }
    }
    let st = stanzas(&header);
    let decryptor = age::Decryptor::new(Cursor::new(header).chain(armored)).map_err(|e| match e {
        age::DecryptError::Io(io) => stream_error(io, name),
        other => anyhow!("{name} is not a valid age file: {other}"),
    })?;
    let plain = if decryptor.is_scrypt() {
        let pass = keys.passphrase(name)?;
        let id = age::scrypt::Identity::new(pass);
        decryptor.decrypt(std::iter::once(&id as &dyn age::Identity)).map_err(|e| match e {
            age::DecryptError::DecryptionFailed => anyhow!("wrong passphrase for {name}"),
            other => header_error(other, name),
        })?
    } else {
        let ids = keys.identities()?;
        let offered: Vec<&keys::Loaded> = ids.keys.iter().filter(|k| worth_offering(k, &st)).collect();
        let result = decryptor.decrypt(offered.iter().map(|k| k.identity.as_ref()));
        match result {
            Ok(r) => {
                keys.opened_by_identity.set(true);
                r
            }
            Err(age::DecryptError::NoMatchingKeys) => return Err(no_key(name, &st, ids, keys)),
            Err(age::DecryptError::KeyDecryptionFailed) => {
                bail!("could not unlock the SSH key for {name}: wrong passphrase")
            }
            Err(other) => return Err(header_error(other, name)),
        }
    };
    Ok(Box::new(Checked { inner: plain, name: name.to_string() }))
}

/// A passphrase-protected key is offered only to a file sealed to it, so opening a file
/// for another key never asks for this one's passphrase.
fn worth_offering(k: &keys::Loaded, st: &[Stanza]) -> bool {
    if !k.protected {
        return true;
    }
    st.iter().any(|s| match &k.tag {
        Some(tag) => s.tag.as_deref() == Some(tag.as_str()),
        None => s.kind.starts_with("ssh-"),
    })
}

fn header_error(e: age::DecryptError, name: &str) -> anyhow::Error {
    match e {
        age::DecryptError::InvalidMac => {
            anyhow!("{name} was changed after it was sealed: its header fails authentication")
        }
        age::DecryptError::Io(io) => stream_error(io, name),
        other => anyhow!("could not open {name}: {other}"),
    }
}

fn no_key(name: &str, st: &[Stanza], ids: &keys::Identities, keys: &Keys) -> anyhow::Error {
    let mut msg =
        format!("none of the keys tried opens {name}\n  it is sealed to: {}", describe_recipients(st));
    if ids.tried.is_empty() {
        let _ = write!(msg, "\n  keys tried: none found (looked in {})", keys.default_places());
    } else {
        msg.push_str("\n  keys tried:");
        for t in &ids.tried {
            let _ = write!(msg, "\n    {} ({})", t.path.display(), t.what);
        }
    }
    msg.push_str("\n  pass the key it was sealed to with -i FILE");
    anyhow!(msg)
}

fn stream_error(e: io::Error, name: &str) -> anyhow::Error {
    if e.kind() == io::ErrorKind::UnexpectedEof {
        return anyhow!("{name} is truncated: the sealed data ends before its last chunk");
    }
    if e.kind() == io::ErrorKind::InvalidData {
        return anyhow!(
            "{name} is damaged: it was cut short or changed after it was sealed ({e}); refusing all of it"
        );
    }
    anyhow::Error::new(e).context(format!("could not read {name}"))
}

/// Turns age's terse stream errors into ones that name the file.
struct Checked<R> {
    inner: R,
    name: String,
}

impl<R: Read> Read for Checked<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.inner.read(buf).map_err(|e| match e.kind() {
            io::ErrorKind::UnexpectedEof | io::ErrorKind::InvalidData => {
                let kind = e.kind();
                io::Error::new(kind, format!("{:#}", stream_error(e, &self.name)))
            }
            _ => e,
        })
    }
}

/// Opens `input` when it is sealed, else hands it back untouched; a plain file whose
/// name ends in `.age` is refused, since whoever named it expected a sealed one.
pub fn open_any<R: Read + Send + 'static>(
    input: R,
    path: Option<&Path>,
    name: &str,
    keys: &Keys,
) -> anyhow::Result<(bool, Box<dyn Read + Send>)> {
    let (sealed, r) = sniff(input).with_context(|| format!("could not read {name}"))?;
    if sealed {
        return Ok((true, open(r, name, keys)?));
    }
    if path.is_some_and(named_sealed) {
        bail!(
            "{name} is named like a sealed file but is not an age file; refusing it \
             (if it is a plain .lok, rename it without .age)"
        );
    }
    if !keys.given.is_empty() {
        // Asking for a key says the user expects their own sealed file; a plain one could
        // come from anyone.
        crate::exit::warn(&format!(
            "{name} is not sealed: -i was not needed, and nothing shows who wrote it"
        ));
    }
    Ok((false, Box::new(r)))
}

/// Reads a whole `.lok` (`-` is stdin), opening it first when it is sealed.
pub fn read_lok(path: &Path, keys: &Keys) -> anyhow::Result<Lok> {
    let name = crate::lok::display_name(path);
    let input: Box<dyn Read + Send> = if path == Path::new("-") {
        Box::new(io::stdin())
    } else {
        Box::new(std::fs::File::open(path).with_context(|| format!("could not read {name}"))?)
    };
    let (_, mut r) = open_any(input, Some(path), &name, keys)?;
    let mut bytes = Vec::new();
    r.read_to_end(&mut bytes)
        .map_err(|e| anyhow!("{e}"))
        .with_context(|| format!("could not read {name}"))?;
    Ok(Lok::from_slice(&bytes, &name)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tells_age_files_from_json_by_their_first_bytes() {
        assert!(looks_sealed(b"age-encryption.org/v1\n-> X25519 abc\n"));
        assert!(looks_sealed(b"-----BEGIN AGE ENCRYPTED FILE-----\nYWdl"));
        assert!(looks_sealed(b"\n  -----BEGIN AGE ENCRYPTED FILE-----\n"));
        assert!(!looks_sealed(b"{\"format_version\": 1}"));
        assert!(!looks_sealed(b""));
        assert!(!looks_sealed(b"age"));
    }

    #[test]
    fn reads_recipients_off_the_header_text() {
        // The stanza syntax of the age specification (age-encryption.org/v1).
        let h = b"age-encryption.org/v1\n-> X25519 SVrzdFfkPxf0LPHOUGB1gNb9E5Vr8EUDa9kxk04iQ0o\nMWo\n\
-> ssh-ed25519 Zbq/tg h6pyWk1uJBv1AQfBhUlChbG3UJhOXjh4qpPqPGvILkE\nX0E\n--- gxhoSa5BciRDt8lOpYNcx4EYtKpS0CJ06F3ZwN82VaM\n";
        let st = stanzas(h);
        assert_eq!(st.len(), 2);
        assert_eq!(st[0], Stanza { kind: "X25519".into(), tag: None });
        assert_eq!(st[1], Stanza { kind: "ssh-ed25519".into(), tag: Some("Zbq/tg".into()) });
        assert_eq!(
            describe_recipients(&st),
            "1 age key(s) (age headers do not say which), ssh-ed25519 key Zbq/tg"
        );
    }

    #[test]
    fn an_endless_header_is_refused_without_reading_it_all() {
        let mut evil = b"age-encryption.org/v1\n-> X25519 ".to_vec();
        evil.resize(8 << 20, b'A');
        let keys = Keys::new(&[], &Probe::fake([], Path::new("/")));
        let err = open(Cursor::new(evil), "evil.age", &keys).err().expect("refused").to_string();
        assert!(err.contains("header is longer than 1 MiB"), "{err}");
    }

    #[test]
    fn a_sealed_stream_opens_and_a_cut_one_does_not() {
        let id = age::x25519::Identity::generate();
        let dir = tempfile::tempdir().unwrap();
        let idfile = dir.path().join("key.txt");
        std::fs::write(
            &idfile,
            format!("# test\n{}\n", age::secrecy::ExposeSecret::expose_secret(&id.to_string())),
        )
        .unwrap();
        let opts = SealOptions { recipients: vec![id.to_public().to_string()], ..SealOptions::default() };
        let plain: Vec<u8> = (0..200_000u32).flat_map(|i| i.to_le_bytes()).collect();
        let mut w = opts.sealer().unwrap().unwrap().wrap(Vec::new()).unwrap();
        w.write_all(&plain).unwrap();
        let sealed = w.finish().unwrap();
        let keys = Keys::new(std::slice::from_ref(&idfile), &Probe::fake([], dir.path()));
        let mut out = Vec::new();
        open(Cursor::new(sealed.clone()), "s.lok.age", &keys).unwrap().read_to_end(&mut out).unwrap();
        assert_eq!(out, plain);
        // Cut inside a chunk, and cut after whole chunks (64 KiB + a 16-byte tag each,
        // after a 16-byte nonce).
        let payload = sealed.len() - (plain.len() + 13 * 16);
        for (cut, says) in
            [(sealed.len() - 70_000, "cut short"), (payload + 2 * (65536 + 16), "is truncated")]
        {
            let cut = sealed[..cut].to_vec();
            let err =
                open(Cursor::new(cut), "s.lok.age", &keys).unwrap().read_to_end(&mut Vec::new()).unwrap_err();
            assert!(err.to_string().contains(says), "{err}");
        }
    }
}
