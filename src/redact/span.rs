//! What every reading hands the pipeline: the spans it found, how the text is read, and a
//! way to read decoded text again. It sits below the readings and the pipeline alike, so
//! that neither names the other to share them.

use regex::bytes::{Regex, RegexBuilder};

/// A byte range of a line to replace, and the rule that found it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Span {
    pub start: usize,
    pub end: usize,
    pub rule: &'static str,
}

/// How a text is read, when its kind is known (`lokust-shell redact --as …`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Reading {
    /// Any text: shell lines, scrollback, prose, files; names are read leniently, as
    /// shell writes them (`DB_PASS=…`).
    #[default]
    Any,
    /// Source code: a name counts only when it ends with what names a secret, as keys
    /// and variables holding one do, and a trailing `\` joins no command.
    Code,
    /// A configuration file: read as code is, and a value at a line's start runs to the
    /// line's end (less an inline comment), whatever punctuation it holds.
    Config,
}

/// The whole pipeline on a text a reading made (a blob decoded, a scalar folded):
/// `(text, depth, reading)`. Handed down by the pipeline, so a reading can read again
/// without naming the pipeline above it.
pub(crate) type Rescan = fn(&[u8], u8, Reading) -> Vec<Span>;

/// How deep inside decoded text a reading is, and how it reads what it decodes.
#[derive(Clone, Copy)]
pub(crate) struct Nested {
    pub depth: u8,
    pub rescan: Rescan,
}

impl Nested {
    /// The spans the pipeline finds in `text`, decoded at this depth.
    pub(crate) fn read(self, text: &[u8]) -> Vec<Span> {
        (self.rescan)(text, self.depth + 1, Reading::Any)
    }
}

pub(crate) fn ascii_regex(pattern: &str) -> Regex {
    RegexBuilder::new(pattern)
        .unicode(false)
        .build()
        .unwrap_or_else(|e| panic!("rule pattern {pattern:?} does not compile: {e}"))
}

/// A rule's regex, compiled once on first use.
macro_rules! lazy_re {
    ($name:ident, $re:expr) => {
        static $name: LazyLock<Regex> = LazyLock::new(|| ascii_regex($re));
    };
}
pub(crate) use lazy_re;
