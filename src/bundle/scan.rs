//! Reading a `.lok` whose `bundle.data` may be gigabytes: a small scanner walks the
//! top-level object, keeps every other value's raw JSON (small) and either skips the
//! data string, noting where it starts, or hands it to a consumer as a stream.

use std::io::{self, BufRead, Read};

use serde_json::{Map, Value};

/// The non-bundle part of a document may hold a scrollback or a long history, but it
/// is never this large; past it the file is refused instead of filling memory.
const MAX_REST: usize = 256 * 1024 * 1024;

/// What the scan found besides the data.
pub struct Scanned {
    /// The document with `bundle.data` replaced by an empty string.
    pub doc: Value,
    /// Where the first character of `bundle.data` sits in the input, when there is one.
    pub data_offset: Option<u64>,
    /// Length of `bundle.data` as written (its `base64_bytes`).
    pub data_len: u64,
}

/// Called with what precedes `bundle.data` and a reader over it.
pub type DataConsumer<'a> = dyn FnMut(&Map<String, Value>, &mut dyn Read) -> anyhow::Result<()> + 'a;

pub struct Scanner<R> {
    r: R,
    offset: u64,
    rest: usize,
}

/// A syntax error, worded for the user.
fn bad(what: impl Into<String>, at: u64) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, SyntaxError(format!("{} at byte {at}", what.into())))
}

/// Marks an error as the document's JSON being malformed.
#[derive(Debug)]
pub struct SyntaxError(pub String);

impl std::fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SyntaxError {}

impl<R: BufRead> Scanner<R> {
    pub fn new(r: R, offset: u64) -> Scanner<R> {
        Scanner { r, offset, rest: 0 }
    }

    fn peek(&mut self) -> io::Result<Option<u8>> {
        loop {
            match self.r.fill_buf() {
                Ok(buf) => return Ok(buf.first().copied()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    fn bump(&mut self) -> io::Result<Option<u8>> {
        let b = self.peek()?;
        if b.is_some() {
            self.r.consume(1);
            self.offset += 1;
        }
        Ok(b)
    }

    fn need(&mut self) -> io::Result<u8> {
        self.bump()?.ok_or_else(|| bad("unexpected end of file", self.offset))
    }

    fn ws(&mut self) -> io::Result<()> {
        while let Some(b) = self.peek()? {
            if matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
                self.bump()?;
            } else {
                break;
            }
        }
        Ok(())
    }

    fn expect(&mut self, want: u8) -> io::Result<()> {
        self.ws()?;
        let at = self.offset;
        let got = self.need()?;
        if got != want {
            return Err(bad(format!("expected '{}', found '{}'", want as char, got.escape_ascii()), at));
        }
        Ok(())
    }

    fn push(&mut self, out: &mut Vec<u8>, b: u8) -> io::Result<()> {
        self.rest += 1;
        if self.rest > MAX_REST {
            return Err(bad("the part of the file outside bundle.data is larger than 256 MiB", self.offset));
        }
        out.push(b);
        Ok(())
    }

    /// Copies one string (the opening quote already read) into `out`, quotes included.
    fn string_into(&mut self, out: &mut Vec<u8>) -> io::Result<()> {
        self.push(out, b'"')?;
        loop {
            let b = self.need()?;
            self.push(out, b)?;
            match b {
                b'"' => return Ok(()),
                b'\\' => {
                    let e = self.need()?;
                    self.push(out, e)?;
                }
                _ => {}
            }
        }
    }

    /// Copies one JSON value's raw text into `out`.
    fn value_into(&mut self, out: &mut Vec<u8>) -> io::Result<()> {
        self.ws()?;
        let mut depth = 0usize;
        loop {
            let at = self.offset;
            let b = self.need()?;
            match b {
                b'"' => self.string_into(out)?,
                b'{' | b'[' => {
                    self.push(out, b)?;
                    depth += 1;
                    if depth > 128 {
                        return Err(bad("nested too deeply", at));
                    }
                }
                b'}' | b']' => {
                    if depth == 0 {
                        return Err(bad("unexpected closing bracket", at));
                    }
                    self.push(out, b)?;
                    depth -= 1;
                }
                _ => self.push(out, b)?,
            }
            if depth == 0 {
                // A scalar runs until a delimiter; a string or container is complete.
                if !matches!(b, b'"' | b'}' | b']') {
                    while let Some(n) = self.peek()? {
                        if matches!(n, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r') {
                            break;
                        }
                        self.bump()?;
                        self.push(out, n)?;
                    }
                }
                return Ok(());
            }
        }
    }

    fn key(&mut self) -> io::Result<String> {
        self.expect(b'"')?;
        let at = self.offset;
        let mut raw = Vec::new();
        self.string_into(&mut raw)?;
        serde_json::from_slice(&raw).map_err(|e| bad(format!("bad key: {e}"), at))
    }

    /// After a member: `,` (true, more follow) or the closing `}` (false).
    fn next_member(&mut self) -> io::Result<bool> {
        self.ws()?;
        let at = self.offset;
        match self.need()? {
            b',' => Ok(true),
            b'}' => Ok(false),
            b => Err(bad(format!("expected ',' or '}}', found '{}'", b.escape_ascii()), at)),
        }
    }

    /// Scans the whole document. `data` is called with a reader over `bundle.data` when
    /// it is met (after everything that precedes it was parsed into `so_far`); without a
    /// consumer the string is skipped.
    pub fn scan(&mut self, mut data: Option<&mut DataConsumer<'_>>) -> anyhow::Result<Scanned> {
        let mut top = Map::new();
        let mut data_offset = None;
        let mut data_len = 0;
        self.expect(b'{')?;
        self.ws()?;
        if self.peek()? == Some(b'}') {
            self.bump()?;
        } else {
            loop {
                let key = self.key()?;
                self.expect(b':')?;
                if top.contains_key(&key) {
                    return Err(bad(format!("the key {key:?} appears twice"), self.offset).into());
                }
                if key == "bundle" {
                    self.ws()?;
                    if self.peek()? == Some(b'{') {
                        let bundle = self.bundle(&mut top, &mut data, &mut data_offset, &mut data_len)?;
                        top.insert(key, Value::Object(bundle));
                    } else {
                        let v = self.parsed_value()?;
                        top.insert(key, v);
                    }
                } else {
                    let v = self.parsed_value()?;
                    top.insert(key, v);
                }
                if !self.next_member()? {
                    break;
                }
            }
        }
        self.ws()?;
        if let Some(b) = self.peek()? {
            return Err(bad(
                format!("trailing characters after the document ('{}')", b.escape_ascii()),
                self.offset,
            )
            .into());
        }
        Ok(Scanned { doc: Value::Object(top), data_offset, data_len })
    }

    fn parsed_value(&mut self) -> io::Result<Value> {
        let at = self.offset;
        let mut raw = Vec::new();
        self.value_into(&mut raw)?;
        serde_json::from_slice(&raw).map_err(|e| bad(e.to_string(), at))
    }

    fn bundle(
        &mut self,
        top: &mut Map<String, Value>,
        data: &mut Option<&mut DataConsumer<'_>>,
        data_offset: &mut Option<u64>,
        data_len: &mut u64,
    ) -> anyhow::Result<Map<String, Value>> {
        let mut bundle = Map::new();
        self.expect(b'{')?;
        self.ws()?;
        if self.peek()? == Some(b'}') {
            self.bump()?;
            return Ok(bundle);
        }
        loop {
            let key = self.key()?;
            self.expect(b':')?;
            if bundle.contains_key(&key) {
                return Err(bad(format!("the key bundle.{key} appears twice"), self.offset).into());
            }
            if key == "data" {
                self.ws()?;
                self.expect(b'"')?;
                *data_offset = Some(self.offset);
                let mut reader = DataReader { s: self, len: 0, done: false };
                if let Some(consume) = data.as_mut() {
                    let mut so_far = top.clone();
                    so_far.insert("bundle".into(), Value::Object(bundle.clone()));
                    consume(&so_far, &mut reader)?;
                }
                io::copy(&mut reader, &mut io::sink())?;
                *data_len = reader.len;
                bundle.insert(key, Value::String(String::new()));
            } else {
                let v = self.parsed_value()?;
                bundle.insert(key, v);
            }
            if !self.next_member()? {
                return Ok(bundle);
            }
        }
    }
}

/// The characters of `bundle.data`, up to its closing quote. `\/` is read as `/` (some
/// writers escape it); any other escape is not base64.
pub struct DataReader<'a, R> {
    s: &'a mut Scanner<R>,
    len: u64,
    done: bool,
}

impl<R: BufRead> Read for DataReader<'_, R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let mut n = 0;
        while n < out.len() && !self.done {
            let buf = loop {
                match self.s.r.fill_buf() {
                    Ok(b) => break b,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(e),
                }
            };
            if buf.is_empty() {
                return Err(bad("the file ends inside bundle.data (truncated?)", self.s.offset));
            }
            let want = (out.len() - n).min(buf.len());
            let stop = memchr::memchr2(b'"', b'\\', &buf[..want]).unwrap_or(want);
            out[n..n + stop].copy_from_slice(&buf[..stop]);
            n += stop;
            self.s.r.consume(stop);
            self.s.offset += stop as u64;
            self.len += stop as u64;
            if stop < want {
                let at = self.s.offset;
                match self.s.need()? {
                    b'"' => self.done = true,
                    _ => {
                        if self.s.need()? != b'/' {
                            return Err(bad("bundle.data holds a JSON escape, which is not base64", at));
                        }
                        out[n] = b'/';
                        n += 1;
                        self.len += 1;
                    }
                }
            }
            if n > 0 {
                break;
            }
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_is_streamed_and_the_rest_parsed() {
        let text =
            br#"{"a": [1, {"b": "x\"y"}], "bundle": {"kind": "k", "data": "QUJ\/D", "n": 5}, "z": true}"#;
        let mut seen = Vec::new();
        let mut consume = |so_far: &Map<String, Value>, r: &mut dyn Read| -> anyhow::Result<()> {
            assert_eq!(so_far["bundle"]["kind"], "k");
            r.read_to_end(&mut seen)?;
            Ok(())
        };
        let scanned = Scanner::new(&text[..], 0).scan(Some(&mut consume)).unwrap();
        assert_eq!(seen, b"QUJ/D");
        assert_eq!(scanned.doc["bundle"]["n"], 5);
        assert_eq!(scanned.doc["a"][1]["b"], "x\"y");
        assert_eq!(scanned.doc["z"], true);
        assert_eq!(scanned.data_len, 5);
        let offset = scanned.data_offset.unwrap() as usize;
        assert_eq!(&text[offset..offset + 3], b"QUJ");
    }

    #[test]
    fn broken_documents_are_refused() {
        for text in
            [&b"{\"a\": 1"[..], b"[1]", b"{\"bundle\": {\"data\": \"AB", b"{\"a\":1} x", b"{\"a\":1,\"a\":2}"]
        {
            assert!(Scanner::new(text, 0).scan(None).is_err(), "{}", String::from_utf8_lossy(text));
        }
    }
}
