//! The old project path → the new one, inside every event: `cwd` and any other absolute
//! path below the old project dir, matched on path-component boundaries in the JSON
//! text, every other byte of the line kept.

use std::borrow::Cow;
use std::io::{self, Read, Write};
use std::path::{Component, Path, PathBuf};

#[derive(Debug, Clone)]
pub struct PathMap {
    /// Old paths, longest first, each with a searcher for its form inside a JSON string
    /// (built once: building one per search was a tenth of a restore's time).
    olds: Vec<(String, memchr::memmem::Finder<'static>)>,
    new: String,
    new_json: Vec<u8>,
}

fn finder(needle: &[u8]) -> memchr::memmem::Finder<'static> {
    memchr::memmem::Finder::new(needle).into_owned()
}

use crate::agent::disk::json_inner;

/// Bytes that continue a file name, so a match followed or preceded by one is a
/// different path (`/a/proj-2`, `/x/a/proj`).
fn name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-' | b'~') || b >= 0x80
}

impl PathMap {
    pub fn new(new: &str) -> PathMap {
        PathMap { olds: Vec::new(), new: new.to_string(), new_json: json_inner(new) }
    }

    /// Adds an old path; the root, relative paths and the new path itself are ignored.
    pub fn add(&mut self, old: &str) {
        let old = old.trim_end_matches('/');
        if !old.starts_with('/')
            || old.is_empty()
            || old == self.new
            || self.olds.iter().any(|(o, _)| o == old)
        {
            return;
        }
        self.olds.push((old.to_string(), finder(&json_inner(old))));
        self.olds.sort_by_key(|(o, _)| std::cmp::Reverse(o.len()));
    }

    /// Forgets the old paths strictly below `dir`: they move with it.
    pub fn remove_below(&mut self, dir: &str) {
        let prefix = format!("{}/", dir.trim_end_matches('/'));
        self.olds.retain(|(o, _)| !o.starts_with(&prefix));
    }

    pub fn set_new(&mut self, new: &str) {
        self.new = new.to_string();
        self.new_json = json_inner(new);
        self.olds.retain(|(o, _)| o != new);
    }

    /// The same map for plain text (a note, not JSON): paths are matched as they are
    /// written, without JSON escapes.
    pub fn plain(&self) -> PathMap {
        PathMap {
            olds: self.olds.iter().map(|(o, _)| (o.clone(), finder(o.as_bytes()))).collect(),
            new: self.new.clone(),
            new_json: self.new.as_bytes().to_vec(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.olds.is_empty()
    }

    pub fn pairs(&self) -> Vec<(String, String)> {
        self.olds.iter().map(|(o, _)| (o.clone(), self.new.clone())).collect()
    }

    /// The earliest match of an old path in `hay[from..]` starting before `limit`, on
    /// component boundaries: `before` is the byte preceding `hay` (if any), and the end
    /// of `hay` counts as a boundary.
    fn next_match(
        &self,
        hay: &[u8],
        from: usize,
        limit: usize,
        before: Option<u8>,
    ) -> Option<(usize, usize)> {
        let mut best: Option<(usize, usize)> = None;
        for (_, old) in &self.olds {
            let mut at = from;
            while at < limit {
                let Some(i) = old.find(&hay[at..]) else { break };
                let start = at + i;
                if start >= limit {
                    break;
                }
                let end = start + old.needle().len();
                let prev = if start == 0 { before } else { Some(hay[start - 1]) };
                let before_ok = prev.is_none_or(|b| !name_byte(b));
                let after_ok = end == hay.len() || !name_byte(hay[end]);
                if before_ok && after_ok {
                    if best.is_none_or(|(s, e)| start < s || (start == s && end > e)) {
                        best = Some((start, end));
                    }
                    break;
                }
                at = start + 1;
            }
        }
        best
    }

    /// One JSON text with every old path replaced.
    pub fn rewrite_line<'a>(&self, line: &'a [u8]) -> Cow<'a, [u8]> {
        if self.olds.is_empty() || !self.olds.iter().any(|(_, o)| o.find(line).is_some()) {
            return Cow::Borrowed(line);
        }
        let mut out = Vec::with_capacity(line.len() + 64);
        let mut pos = 0;
        while let Some((start, end)) = self.next_match(line, pos, line.len(), None) {
            out.extend_from_slice(&line[pos..start]);
            out.extend_from_slice(&self.new_json);
            pos = end;
        }
        if pos == 0 {
            return Cow::Borrowed(line);
        }
        out.extend_from_slice(&line[pos..]);
        Cow::Owned(out)
    }

    /// Rewrites a stream in chunks, whatever its line lengths, so memory stays flat even
    /// for a transcript line of many megabytes. The bytes that could start a match not
    /// yet complete are carried over to the next chunk.
    pub fn rewrite_stream(&self, src: &mut dyn Read, out: &mut dyn Write) -> io::Result<()> {
        self.rewrite_stream_by(src, out, 128 * 1024)
    }

    fn rewrite_stream_by(&self, src: &mut dyn Read, out: &mut dyn Write, chunk: usize) -> io::Result<()> {
        if self.olds.is_empty() {
            io::copy(src, out)?;
            return Ok(());
        }
        let keep = self.olds.iter().map(|(_, o)| o.needle().len()).max().unwrap_or(0) + 1;
        // Zeroed once: `filled` bytes at its start are the data not yet written.
        let mut buf = vec![0u8; chunk + keep];
        let mut filled = 0;
        let mut before: Option<u8> = None;
        loop {
            if filled == buf.len() {
                // A reader that never gives a whole chunk still leaves room for one.
                buf.resize(filled + chunk, 0);
            }
            let n = loop {
                match src.read(&mut buf[filled..]) {
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    other => break other?,
                }
            };
            filled += n;
            let eof = n == 0;
            let data = &buf[..filled];
            // Bytes below `limit` are settled: a match starting there ends inside `data`
            // with its following byte present (or at the true end).
            let limit = if eof { filled } else { filled.saturating_sub(keep) };
            let mut pos = 0;
            while let Some((s, e)) = self.next_match(data, pos, limit, before) {
                out.write_all(&data[pos..s])?;
                out.write_all(&self.new_json)?;
                pos = e;
            }
            let flush = pos.max(limit);
            out.write_all(&data[pos..flush])?;
            if flush > 0 {
                before = Some(data[flush - 1]);
            }
            buf.copy_within(flush..filled, 0);
            filled -= flush;
            if eof {
                return Ok(());
            }
        }
    }
}

/// The real path `to` will have once created: the nearest existing ancestor resolved,
/// the rest appended (`.` and `..` applied by name, as nothing below exists yet).
pub fn predict_realpath(to: &Path) -> io::Result<PathBuf> {
    let mut abs = PathBuf::new();
    for c in std::path::absolute(to)?.components() {
        match c {
            Component::ParentDir => {
                abs.pop();
            }
            Component::CurDir => {}
            c => abs.push(c),
        }
    }
    let mut existing = abs.clone();
    let mut rest = Vec::new();
    while fs_exists(&existing).is_none() {
        let Some(name) = existing.file_name().map(|n| n.to_os_string()) else { break };
        rest.push(name);
        existing.pop();
    }
    let mut real = std::fs::canonicalize(&existing)?;
    if !real.is_dir() {
        return Err(io::Error::other(format!("{} is not a directory", real.display())));
    }
    for name in rest.iter().rev() {
        real.push(name);
    }
    Ok(real)
}

fn fs_exists(p: &Path) -> Option<()> {
    std::fs::symlink_metadata(p).ok().map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rewrites_on_component_boundaries_only() {
        let mut map = PathMap::new("/new/my dir/naïve");
        map.add("/Users/al/proj");
        let line = br#"{"cwd":"/Users/al/proj","a":"/Users/al/proj/src/x.rs","b":"/Users/al/proj-2","c":"/x/Users/al/proj","d":"cd /Users/al/proj\nls","e":"file:///Users/al/proj/y"}"#;
        let out = map.rewrite_line(line);
        assert_eq!(
            std::str::from_utf8(&out).unwrap(),
            r#"{"cwd":"/new/my dir/naïve","a":"/new/my dir/naïve/src/x.rs","b":"/Users/al/proj-2","c":"/x/Users/al/proj","d":"cd /new/my dir/naïve\nls","e":"file:///new/my dir/naïve/y"}"#
        );
        assert!(matches!(map.rewrite_line(br#"{"b":"/Users/al/proj.bak"}"#), Cow::Borrowed(_)));
    }

    #[test]
    fn streaming_in_any_chunk_size_gives_the_same_bytes() {
        let mut map = PathMap::new("/n");
        map.add("/Users/al/proj");
        map.add("/Users/al/proj/sub");
        let text = br#"{"cwd":"/Users/al/proj"} /Users/al/proj-2 x/Users/al/proj/sub/a "/Users/al/proj/sub"
/Users/al/proj
{"b":"/Users/al/proj.bak","c":"/Users/al/proj"}/Users/al/proj"#;
        let want = map.rewrite_line(text).into_owned();
        for chunk in 1..40 {
            let mut out = Vec::new();
            map.rewrite_stream_by(&mut &text[..], &mut out, chunk).unwrap();
            assert_eq!(String::from_utf8_lossy(&out), String::from_utf8_lossy(&want), "chunk {chunk}");
            // A reader that gives a few bytes at a time, as an inflater may.
            let mut out = Vec::new();
            let mut trickle = Trickle { data: &text[..], step: chunk % 3 + 1 };
            map.rewrite_stream_by(&mut trickle, &mut out, chunk).unwrap();
            assert_eq!(
                String::from_utf8_lossy(&out),
                String::from_utf8_lossy(&want),
                "trickled, chunk {chunk}"
            );
        }
    }

    struct Trickle<'a> {
        data: &'a [u8],
        step: usize,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            let n = self.step.min(out.len()).min(self.data.len());
            out[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            Ok(n)
        }
    }

    #[test]
    fn a_quote_in_the_new_path_stays_valid_json() {
        let mut map = PathMap::new("/n/a\"b");
        map.add("/o");
        let out = map.rewrite_line(br#"{"cwd":"/o"}"#);
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v["cwd"], "/n/a\"b");
    }

    #[test]
    fn the_target_path_is_predicted_before_it_exists() {
        let dir = tempfile::tempdir().unwrap();
        let real = std::fs::canonicalize(dir.path()).unwrap();
        assert_eq!(predict_realpath(&dir.path().join("a/./b/../c")).unwrap(), real.join("a/c"));
    }
}
