//! The history section: the newest entries of the user's real history file, read from
//! the end so a 100 MB file costs what a 100 KB one does, decoded per shell, redacted.
//!
//! See: docs/shell-history.md for what zsh, bash and fish really write.

use std::borrow::Cow;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use crate::probe::Probe;
use crate::redact::{Report, redact_report};
use crate::shell::Shell;

/// The history file a shell of this name writes, as the shell itself would find it.
pub fn locate(probe: &Probe, shell: &str) -> Option<(PathBuf, Shell)> {
    let home = probe.home();
    let format = Shell::from_name(shell);
    if let Some(f) = probe.var_os("HISTFILE") {
        return Some((PathBuf::from(f), format.unwrap_or(Shell::Bash)));
    }
    match format? {
        Shell::Zsh => {
            let dir = probe.var_os("ZDOTDIR").map(PathBuf::from).or(home)?;
            Some((dir.join(".zsh_history"), Shell::Zsh))
        }
        Shell::Bash => Some((home?.join(".bash_history"), Shell::Bash)),
        Shell::Fish => {
            // `fish_history` names the session file; empty means history is off.
            let session = match probe.vars().find(|(k, _)| *k == "fish_history") {
                Some((_, v)) if v.is_empty() => return None,
                Some((_, v)) => v.to_string_lossy().into_owned(),
                None => "fish".to_string(),
            };
            let data = probe.xdg_dir("XDG_DATA_HOME", ".local/share")?;
            Some((data.join("fish").join(format!("{session}_history")), Shell::Fish))
        }
    }
}

pub struct HistoryCapture {
    pub tail: Vec<String>,
    pub redacted_lines: u64,
    pub report: Report,
}

/// Redacts each entry, counting the entries that changed.
pub fn redact_entries(entries: Vec<String>) -> HistoryCapture {
    let mut report = Report::default();
    let mut redacted_lines = 0;
    let tail = entries
        .into_iter()
        .map(|entry| match redact_report(&entry, &mut report) {
            Cow::Borrowed(_) => entry,
            Cow::Owned(changed) => {
                redacted_lines += 1;
                changed
            }
        })
        .collect();
    HistoryCapture { tail, redacted_lines, report }
}

/// The last `n` entries of a history file, oldest first.
pub fn read_tail(path: &Path, format: Shell, n: usize) -> io::Result<Vec<String>> {
    if n == 0 {
        return Ok(Vec::new());
    }
    let mut file = File::open(path)?;
    let len = file.metadata()?.len();
    let mut start = len;
    let mut block: u64 = 64 * 1024;
    let mut buf: Vec<u8> = Vec::new();
    loop {
        let from = start.saturating_sub(block);
        let mut chunk = vec![0; (start - from) as usize];
        file.seek(SeekFrom::Start(from))?;
        file.read_exact(&mut chunk)?;
        chunk.extend_from_slice(&buf);
        buf = chunk;
        start = from;
        let format = sniff(&buf).unwrap_or(format);
        let mut entries = parse(&buf, start == 0, format);
        if entries.len() >= n || start == 0 {
            let skip = entries.len().saturating_sub(n);
            entries.drain(..skip);
            return Ok(entries);
        }
        block = block.saturating_mul(2);
    }
}

/// Recognises a file's format from its own lines, whatever `$SHELL` says.
pub fn sniff(buf: &[u8]) -> Option<Shell> {
    let mut bash_marks = false;
    for line in buf.split(|&b| b == b'\n').skip(1).take(200) {
        if line.starts_with(b"- cmd: ") {
            return Some(Shell::Fish);
        }
        if zsh_extended_prefix(line).is_some() {
            return Some(Shell::Zsh);
        }
        bash_marks |= is_bash_timestamp(line);
    }
    bash_marks.then_some(Shell::Bash)
}

/// Entries in `buf`, oldest first. When `buf` does not begin at the start of the file, its
/// first line is a fragment, and so is any entry it continues: both are dropped.
pub fn parse(buf: &[u8], at_file_start: bool, format: Shell) -> Vec<String> {
    let buf = buf.strip_suffix(b"\n").unwrap_or(buf);
    if buf.is_empty() {
        return Vec::new();
    }
    let mut lines = buf.split(|&b| b == b'\n');
    match format {
        Shell::Zsh => parse_zsh(lines, at_file_start),
        Shell::Bash => {
            if !at_file_start {
                lines.next();
            }
            parse_bash(lines, at_file_start)
        }
        Shell::Fish => {
            if !at_file_start {
                lines.next();
            }
            parse_fish(lines)
        }
    }
}

fn parse_zsh<'a>(lines: impl Iterator<Item = &'a [u8]>, at_file_start: bool) -> Vec<String> {
    let mut lines = lines.peekable();
    if !at_file_start {
        // Drop the fragment and every line it continues into.
        for dropped in lines.by_ref() {
            if !dropped.ends_with(b"\\") {
                break;
            }
        }
    }
    let mut entries = Vec::new();
    let mut current: Option<Vec<u8>> = None;
    for line in lines {
        let continues = line.ends_with(b"\\");
        let body = if continues { &line[..line.len() - 1] } else { line };
        match current.as_mut() {
            Some(entry) => {
                entry.push(b'\n');
                entry.extend_from_slice(body);
            }
            None => {
                let body = zsh_extended_prefix(body).map_or(body, |cmd| cmd);
                current = Some(body.to_vec());
            }
        }
        if !continues {
            push_entry(&mut entries, &unmetafy(&current.take().unwrap_or_default()));
        }
    }
    if let Some(entry) = current {
        push_entry(&mut entries, &unmetafy(&entry));
    }
    entries
}

/// The command after `: <digits>:<digits>;`, when the line has that prefix.
fn zsh_extended_prefix(line: &[u8]) -> Option<&[u8]> {
    let rest = line.strip_prefix(b": ")?;
    let colon = rest.iter().position(|&b| b == b':')?;
    let semi = rest.iter().position(|&b| b == b';')?;
    let digits = |s: &[u8]| !s.is_empty() && s.iter().all(u8::is_ascii_digit);
    (colon < semi && digits(&rest[..colon]) && digits(&rest[colon + 1..semi])).then(|| &rest[semi + 1..])
}

/// zsh writes NUL and 0x83..=0xa2 as 0x83 followed by the byte XOR 0x20.
pub fn unmetafy(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut it = bytes.iter();
    while let Some(&b) = it.next() {
        if b == 0x83 {
            if let Some(&next) = it.next() {
                out.push(next ^ 0x20);
            }
        } else {
            out.push(b);
        }
    }
    out
}

fn is_bash_timestamp(line: &[u8]) -> bool {
    line.len() > 1 && line[0] == b'#' && line[1..].iter().all(u8::is_ascii_digit)
}

fn parse_bash<'a>(lines: impl Iterator<Item = &'a [u8]>, at_file_start: bool) -> Vec<String> {
    let lines: Vec<&[u8]> = lines.collect();
    if !lines.iter().any(|l| is_bash_timestamp(l)) {
        let mut entries = Vec::new();
        for line in lines {
            push_entry(&mut entries, line);
        }
        return entries;
    }
    // With timestamps, only the `#<epoch>` lines mark where an entry begins (lithist
    // keeps a multi-line command's newlines).
    let mut entries = Vec::new();
    let mut current: Option<Vec<u8>> = None;
    let mut seen_marker = false;
    for line in lines {
        if is_bash_timestamp(line) {
            if let Some(entry) = current.take() {
                push_entry(&mut entries, &entry);
            }
            seen_marker = true;
            current = Some(Vec::new());
        } else if !seen_marker {
            // Before the first marker: untimed entries at the file's start, a fragment
            // of an entry elsewhere.
            if at_file_start {
                push_entry(&mut entries, line);
            }
        } else if let Some(entry) = current.as_mut() {
            if !entry.is_empty() {
                entry.push(b'\n');
            }
            entry.extend_from_slice(line);
        }
    }
    if let Some(entry) = current {
        push_entry(&mut entries, &entry);
    }
    entries
}

fn parse_fish<'a>(lines: impl Iterator<Item = &'a [u8]>) -> Vec<String> {
    let mut entries = Vec::new();
    for line in lines {
        if let Some(cmd) = line.strip_prefix(b"- cmd: ") {
            push_entry(&mut entries, &fish_unescape(cmd));
        }
    }
    entries
}

fn fish_unescape(cmd: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(cmd.len());
    let mut it = cmd.iter().peekable();
    while let Some(&b) = it.next() {
        match (b, it.peek()) {
            (b'\\', Some(b'n')) => {
                out.push(b'\n');
                it.next();
            }
            (b'\\', Some(b'\\')) => {
                out.push(b'\\');
                it.next();
            }
            _ => out.push(b),
        }
    }
    out
}

fn push_entry(entries: &mut Vec<String>, bytes: &[u8]) {
    if !bytes.iter().all(u8::is_ascii_whitespace) {
        entries.push(String::from_utf8_lossy(bytes).into_owned());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(buf: &[u8], format: Shell) -> Vec<String> {
        parse(buf, true, format)
    }

    #[test]
    fn zsh_extended_multiline_and_metafied() {
        let mut file =
            b": 1700000000:0;ls -la\n: 1700000001:2;for i in 1 2; do\\\necho $i\\\ndone\n".to_vec();
        file.extend_from_slice(b": 1700000002:0;echo caf\xc3\xa9 \xe2\x83\xb8\x83\xb5\n");
        assert_eq!(all(&file, Shell::Zsh), ["ls -la", "for i in 1 2; do\necho $i\ndone", "echo café ☕"]);
    }

    #[test]
    fn zsh_fragment_at_the_cut_is_dropped() {
        // The buffer starts inside a multi-line entry: its remaining lines are dropped.
        let buf = b"tail of a line\\\nstill the same entry\\\ndone\n: 2:0;git status\nplain\n";
        assert_eq!(parse(buf, false, Shell::Zsh), ["git status", "plain"]);
        let buf = b"fragment\n: 2:0;one\n";
        assert_eq!(parse(buf, false, Shell::Zsh), ["one"]);
    }

    #[test]
    fn bash_timestamps_and_lithist() {
        let file =
            b"#1700000000\nls\n#1700000001\nfor i in 1; do\n  echo $i\ndone\n#1700000002\n#notacomment\n";
        assert_eq!(all(file, Shell::Bash), ["ls", "for i in 1; do\n  echo $i\ndone", "#notacomment"]);
        assert_eq!(all(b"ls\ncd /tmp\n", Shell::Bash), ["ls", "cd /tmp"]);
        assert_eq!(parse(b"frag\n#1\nls\n", false, Shell::Bash), ["ls"]);
    }

    #[test]
    fn fish_entries_and_escapes() {
        let file = b"- cmd: echo a\\nb\n  when: 1700000000\n- cmd: printf '\\\\n'\n  when: 1\n  paths:\n    - /tmp\n";
        assert_eq!(all(file, Shell::Fish), ["echo a\nb", "printf '\\n'"]);
    }

    #[test]
    fn sniffing_beats_the_shell_name() {
        assert_eq!(sniff(b"x\n- cmd: ls\n"), Some(Shell::Fish));
        assert_eq!(sniff(b"x\n: 1:0;ls\n"), Some(Shell::Zsh));
        assert_eq!(sniff(b"x\n#123\nls\n"), Some(Shell::Bash));
        assert_eq!(sniff(b"x\nls\n"), None);
    }

    #[test]
    fn invalid_utf8_is_kept_lossily() {
        assert_eq!(all(b"echo \xff\xfe ok\n", Shell::Bash), ["echo \u{fffd}\u{fffd} ok"]);
    }
}
