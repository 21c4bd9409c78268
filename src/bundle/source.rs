//! Reading a project file for the bundle: consistently (a file that grows while it is
//! read is cut at the length it had, a transcript at its last complete line) and
//! redacted chunk by chunk on every core, so the tar entry's declared size is exact.

use super::*;
use crate::redact::Links;

/// How much of a file to take: its size when opened, and for JSONL cut after the last
/// complete line (a last line without a newline counts when it parses as JSON), so a
/// transcript being appended to never yields half a line.
pub(super) fn consistent_len(file: &mut File, jsonl: bool) -> io::Result<u64> {
    let len = file.metadata()?.len();
    if !jsonl || len == 0 {
        return Ok(len);
    }
    let mut end = len;
    let mut tail: Vec<u8> = Vec::new();
    loop {
        let start = end.saturating_sub(64 * 1024);
        let mut buf = vec![0; (end - start) as usize];
        file.seek(SeekFrom::Start(start))?;
        file.read_exact(&mut buf)?;
        if let Some(nl) = memchr::memrchr(b'\n', &buf) {
            buf.drain(..=nl);
            buf.extend_from_slice(&tail);
            tail = buf;
            let cut = start + nl as u64 + 1;
            file.seek(SeekFrom::Start(0))?;
            if tail.is_empty() || serde_json::from_slice::<serde::de::IgnoredAny>(&tail).is_ok() {
                return Ok(len);
            }
            return Ok(cut);
        }
        buf.extend_from_slice(&tail);
        tail = buf;
        if start == 0 {
            file.seek(SeekFrom::Start(0))?;
            let whole = serde_json::from_slice::<serde::de::IgnoredAny>(&tail).is_ok();
            return Ok(if whole { len } else { 0 });
        }
        end = start;
    }
}

/// Reads a file's first `len` bytes a chunk of whole lines at a time. The same bytes
/// always split into the same chunks, so a second read can be checked chunk by chunk.
pub(super) struct Chunker {
    file: io::Take<File>,
    len: u64,
    buf: Vec<u8>,
    /// Bytes of `buf` handed out by the last call, dropped at the next.
    handed: usize,
    eof: bool,
}

impl Chunker {
    pub(super) fn new(file: File, len: u64) -> Chunker {
        Chunker { file: file.take(len), len, buf: Vec::with_capacity(CHUNK), handed: 0, eof: false }
    }

    /// The same file's chunks again, from its start.
    fn again(self) -> io::Result<Chunker> {
        let mut file = self.file.into_inner();
        file.seek(SeekFrom::Start(0))?;
        Ok(Chunker::new(file, self.len))
    }

    /// The chunk handed out last.
    fn current(&self) -> &[u8] {
        &self.buf[..self.handed]
    }

    /// The next chunk (whole lines, except at the end), borrowed until the next call.
    fn next(&mut self) -> io::Result<Option<&[u8]>> {
        self.buf.drain(..self.handed);
        self.handed = 0;
        loop {
            if self.eof && self.buf.is_empty() {
                return Ok(None);
            }
            let start = self.buf.len();
            if !self.eof {
                self.buf.resize(start + CHUNK, 0);
                let n = read_full(&mut self.file, &mut self.buf[start..])?;
                self.buf.truncate(start + n);
                self.eof = n == 0;
            }
            let upto = if self.eof {
                self.buf.len()
            } else {
                // Only the bytes just read can hold the chunk's last newline.
                memchr::memrchr(b'\n', &self.buf[start..]).map_or(0, |i| start + i + 1)
            };
            if upto == 0 {
                continue;
            }
            self.handed = upto;
            return Ok(Some(&self.buf[..upto]));
        }
    }
}

/// What redaction changes in one chunk, found in the first read: the chunk's length and
/// CRC (to recognise it in the second read) and the lines replaced.
pub(super) struct ChunkPlan {
    len: usize,
    crc: u32,
    edits: Vec<(usize, usize, Vec<u8>)>,
}

/// A chunk's edits, its redacted length, what was redacted and the values replaced.
type Planned = (Edits, u64, Report, Vec<Vec<u8>>);

/// What redaction changes in one file: each chunk's edits, and the secrets found in it,
/// whose echoes anywhere in the file are replaced too.
pub(super) struct FilePlan {
    chunks: Vec<ChunkPlan>,
    echoes: Echoes,
    /// The transcript's tool calls whose commands named a secret, all of them: a chunk
    /// read afresh has its results read as their output whichever chunk the call was in.
    links: Arc<Links>,
}

struct PlanJob {
    raw: Vec<u8>,
    jsonl: bool,
    /// The calls of the file up to the end of this chunk (`Links`).
    links: Arc<Links>,
    reply: SyncSender<Planned>,
}

/// Threads that redact chunks for the first read, alive for the whole bundle: a thread
/// per batch of chunks started every redactor's caches (the transcript's keys, its
/// long repeated strings) empty again, which cost a third of the redaction.
pub(super) struct Redactors {
    jobs: SyncSender<PlanJob>,
    workers: usize,
}

impl Redactors {
    /// Starts `workers` redactors in `scope`; they stop when the returned value is
    /// dropped.
    pub(super) fn start<'scope>(scope: &'scope std::thread::Scope<'scope, '_>, workers: usize) -> Redactors {
        let workers = workers.max(1);
        let (jobs, rx) = sync_channel::<PlanJob>(workers);
        let rx = Arc::new(Mutex::new(rx));
        for _ in 0..workers {
            let rx = Arc::clone(&rx);
            scope.spawn(move || {
                loop {
                    let job = match rx.lock() {
                        Ok(guard) => guard.recv(),
                        Err(_) => return,
                    };
                    let Ok(job) = job else { return };
                    let mut report = Report::default();
                    let ((edits, len), found) =
                        redact::collecting(|| plan_chunk(&job.raw, job.jsonl, &job.links, &mut report));
                    let _ = job.reply.send((edits, len, report, found));
                }
            });
        }
        Redactors { jobs, workers }
    }
}

/// The first read of a file: every chunk's edits and the redacted size. Up to one chunk
/// per redactor is in flight, answered in order. When a secret was found in it or in a
/// file before it (`carried`, which learns this file's), a second pass replaces its
/// echoes in every chunk.
pub(super) fn plan_file(
    chunks: Chunker,
    jsonl: bool,
    redactors: &Redactors,
    report: &mut Report,
    carried: &mut Echoes,
) -> io::Result<(u64, FilePlan)> {
    let mut echoes = carried.clone();
    let (size, chunks, plans, links) = plan_chunks(chunks, jsonl, redactors, report, &mut echoes)?;
    carried.clone_from(&echoes);
    if echoes.is_empty() {
        return Ok((size, FilePlan { chunks: plans, echoes, links }));
    }
    let mut chunks = chunks.again()?;
    let mut size = 0u64;
    let mut with = Vec::with_capacity(plans.len());
    let mut planned = plans.into_iter();
    while let Some(raw) = chunks.next()? {
        if crate::interrupt::interrupted() {
            return Err(io::Error::other(crate::interrupt::Interrupted));
        }
        let edits = match planned.next() {
            Some(p) if p.len == raw.len() && p.crc == crc32fast::hash(raw) => p.edits,
            // Rewritten since the first pass: read afresh (the second read checks again).
            _ => plan_chunk(raw, jsonl, &with_calls(&links, raw, jsonl), report).0,
        };
        let (edits, len) = with_echoes(raw, edits, &echoes, jsonl, report);
        size += len;
        with.push(ChunkPlan { len: raw.len(), crc: crc32fast::hash(raw), edits });
    }
    Ok((size, FilePlan { chunks: with, echoes, links }))
}

/// `links` with the calls of `raw` learned too: a chunk rewritten since they were learned
/// may hold calls of its own.
fn with_calls(links: &Arc<Links>, raw: &[u8], jsonl: bool) -> Arc<Links> {
    let mut more = Links::clone(links);
    if jsonl && more.learn(raw) { Arc::new(more) } else { Arc::clone(links) }
}

/// The first pass of [`plan_file`]: the chunks' edits and redacted size, with the secrets
/// found learned into `echoes`, and the file's tool calls whose commands named a secret.
///
/// Chunks are redacted in parallel, so no redactor knows what the chunks before its own
/// held; a transcript's tool call and its result may be in two of them. The calls are
/// learned here, in order, before each chunk is handed out: a chunk goes with every call
/// up to its end (ids are unique, so the later calls it may see do no harm). Learning
/// them looks for `"Bash"` in the chunk and parses only the records that hold it.
fn plan_chunks(
    mut chunks: Chunker,
    jsonl: bool,
    redactors: &Redactors,
    report: &mut Report,
    echoes: &mut Echoes,
) -> io::Result<(u64, Chunker, Vec<ChunkPlan>, Arc<Links>)> {
    let mut links = Links::default();
    let mut shared = Arc::new(Links::default());
    let mut plans = Vec::new();
    let mut size = 0u64;
    let mut pending: VecDeque<(usize, u32, Receiver<Planned>)> = VecDeque::new();
    let stopped = || io::Error::other("a redaction thread stopped");
    loop {
        if crate::interrupt::interrupted() {
            return Err(io::Error::other(crate::interrupt::Interrupted));
        }
        let raw = chunks.next()?;
        if let Some(raw) = raw {
            if jsonl && links.learn(raw) {
                shared = Arc::new(links.clone());
            }
            let (reply, rx) = sync_channel(1);
            pending.push_back((raw.len(), crc32fast::hash(raw), rx));
            let job = PlanJob { raw: raw.to_vec(), jsonl, links: Arc::clone(&shared), reply };
            redactors.jobs.send(job).map_err(|_| stopped())?;
        }
        while pending.len() >= redactors.workers || (raw.is_none() && !pending.is_empty()) {
            let Some((len, crc, rx)) = pending.pop_front() else { break };
            let (edits, out_len, r, found) = rx.recv().map_err(|_| stopped())?;
            report.merge(&r);
            echoes.learn(found);
            plans.push(ChunkPlan { len, crc, edits });
            size += out_len;
        }
        if raw.is_none() {
            return Ok((size, chunks, plans, shared));
        }
    }
}

/// Byte ranges of a chunk and what replaces them.
pub(super) type Edits = Vec<(usize, usize, Vec<u8>)>;

/// The lines of `buf`, each with its newline; found with memchr, which is several times
/// faster than testing byte by byte on transcript-long lines.
pub(super) fn lines(buf: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut rest = buf;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let end = memchr::memchr(b'\n', rest).map_or(rest.len(), |i| i + 1);
        let (line, tail) = rest.split_at(end);
        rest = tail;
        Some(line)
    })
}

/// Redacts every line of `chunk`, returning the edits and the output length. `links`: the
/// file's tool calls up to the chunk's end whose commands named a secret.
pub(super) fn plan_chunk(chunk: &[u8], jsonl: bool, links: &Links, report: &mut Report) -> (Edits, u64) {
    let mut edits = Vec::new();
    let mut out_len = 0u64;
    let mut at = 0;
    for line in lines(chunk) {
        let body = line.strip_suffix(b"\n").unwrap_or(line);
        // A clean line (nearly all of them) is not copied at all.
        let red = redact::redact_line_bytes_linked(body, jsonl, Some(links), report);
        out_len += (red.len() + line.len() - body.len()) as u64;
        if let Cow::Owned(new) = red
            && new != body
        {
            edits.push((at, at + body.len(), new));
        }
        at += line.len();
    }
    (edits, out_len)
}

/// `edits` of `chunk` with every echo of a secret found in the file replaced as well, and
/// the chunk's redacted length.
fn with_echoes(
    chunk: &[u8],
    edits: Edits,
    echoes: &Echoes,
    jsonl: bool,
    report: &mut Report,
) -> (Edits, u64) {
    let mut out = Vec::with_capacity(edits.len());
    let mut planned = edits.into_iter().peekable();
    let mut len = 0u64;
    let mut at = 0;
    for line in lines(chunk) {
        let body_end = at + line.strip_suffix(b"\n").map_or(line.len(), <[u8]>::len);
        let edit = planned.next_if(|e| e.0 == at);
        let body = edit.as_ref().map_or(&chunk[at..body_end], |e| &e.2[..]);
        let red = echoes.redact(body, jsonl, report);
        len += (red.len() + line.len() - (body_end - at)) as u64;
        if edit.is_some() || matches!(red, Cow::Owned(_)) {
            out.push((at, body_end, red.into_owned()));
        }
        at += line.len();
    }
    (out, len)
}

pub(super) fn apply(chunk: &[u8], edits: &[(usize, usize, Vec<u8>)], out: &mut Vec<u8>) {
    let mut pos = 0;
    for (start, end, with) in edits {
        out.extend_from_slice(&chunk[pos..*start]);
        out.extend_from_slice(with);
        pos = *end;
    }
    out.extend_from_slice(&chunk[pos..]);
}

/// A file's redacted content as a reader of exactly `size` bytes, the size the first
/// read counted. Each chunk is checked against that read: an unchanged chunk gets the
/// edits found then, a changed one is redacted afresh (a file rewritten in between
/// never leaks), and the output is cut at a line end or padded with newlines so the
/// tar stays whole.
pub(super) struct Exact<'a> {
    chunks: Chunker,
    plans: Option<FilePlan>,
    jsonl: bool,
    index: usize,
    size: u64,
    produced: u64,
    out: Vec<u8>,
    /// The current chunk is served straight from the chunker (nothing to change).
    direct: bool,
    pos: usize,
    report: &'a mut Report,
    progress: Option<&'a indicatif::ProgressBar>,
    pub(super) changed: bool,
}

impl<'a> Exact<'a> {
    /// A reader of a file's `size` redacted bytes, checked against the first read's `plans`
    /// (none: the file goes in as it is).
    pub(super) fn new(
        chunks: Chunker,
        plans: Option<FilePlan>,
        jsonl: bool,
        size: u64,
        report: &'a mut Report,
        progress: Option<&'a indicatif::ProgressBar>,
    ) -> Exact<'a> {
        Exact {
            chunks,
            plans,
            jsonl,
            index: 0,
            size,
            produced: 0,
            out: Vec::new(),
            direct: false,
            pos: 0,
            report,
            progress,
            changed: false,
        }
    }

    fn refill(&mut self) -> io::Result<bool> {
        if crate::interrupt::interrupted() {
            return Err(io::Error::other(crate::interrupt::Interrupted));
        }
        let Some(raw) = self.chunks.next()? else { return Ok(false) };
        if let Some(p) = self.progress {
            p.inc(raw.len() as u64);
        }
        match &self.plans {
            None => self.direct = true,
            Some(plans) => match plans.chunks.get(self.index) {
                Some(plan) if plan.len == raw.len() && plan.crc == crc32fast::hash(raw) => {
                    if plan.edits.is_empty() {
                        self.direct = true;
                    } else {
                        apply(raw, &plan.edits, &mut self.out)
                    }
                }
                _ => {
                    self.changed = true;
                    let links = with_calls(&plans.links, raw, self.jsonl);
                    let (edits, _) = plan_chunk(raw, self.jsonl, &links, self.report);
                    let (edits, _) = with_echoes(raw, edits, &plans.echoes, self.jsonl, self.report);
                    apply(raw, &edits, &mut self.out);
                }
            },
        }
        self.index += 1;
        Ok(true)
    }
}

impl Exact<'_> {
    fn current(&self) -> &[u8] {
        if self.direct { self.chunks.current() } else { &self.out }
    }
}

impl Read for Exact<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.pos == self.current().len() {
            self.out.clear();
            self.direct = false;
            self.pos = 0;
            let left = self.size - self.produced;
            if left == 0 {
                return Ok(0);
            }
            if !self.refill()? {
                self.changed = true;
                self.out.resize(left.min(CHUNK as u64) as usize, b'\n');
            } else if self.current().len() as u64 > left {
                self.changed = true;
                if self.direct {
                    self.out.extend_from_slice(self.chunks.current());
                    self.direct = false;
                }
                let cut = memchr::memrchr(b'\n', &self.out[..left as usize]).map_or(0, |i| i + 1);
                self.out.truncate(cut);
                self.out.resize(left as usize, b'\n');
            }
        }
        let pos = self.pos;
        let current = self.current();
        let n = buf.len().min(current.len() - pos);
        buf[..n].copy_from_slice(&current[pos..pos + n]);
        self.pos += n;
        self.produced += n as u64;
        Ok(n)
    }
}

pub(super) fn read_full(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_with_a_bad_byte_is_still_read_as_json() {
        let body = b"{\"a\":\"\xff\",\"b\":\"\\u0070assword=hunter2xyz\"}";
        let mut report = Report::default();
        let out = redact::redact_line_bytes(body, true, &mut report);
        assert!(!String::from_utf8_lossy(&out).contains("hunter2xyz"), "{}", String::from_utf8_lossy(&out));
        assert_eq!(report.values, 1);
        let clean = b"{\"a\":\"\xff\",\"b\":\"\\u0041\"}";
        assert!(matches!(redact::redact_line_bytes(clean, true, &mut Report::default()), Cow::Borrowed(_)));
    }

    /// A transcript's tool call in one chunk and its result chunks later: the chunks are
    /// redacted in parallel, and the result is still read as the call's output. The
    /// result of a call whose command names nothing is left, and so is a rewritten
    /// chunk's, read afresh with the calls the file holds.
    #[test]
    fn a_result_chunks_after_its_call_is_read_as_its_output() {
        let call = |id: &str, command: &str| {
            serde_json::json!({"type": "assistant", "message": {"role": "assistant", "content": [
                {"type": "tool_use", "id": id, "name": "Bash", "input": {"command": command}}]}})
            .to_string()
        };
        let result = |id: &str, out: &str| {
            serde_json::json!({"type": "user", "message": {"role": "user", "content": [
                {"tool_use_id": id, "type": "tool_result", "content": out}]},
                "toolUseResult": {"stdout": out, "stderr": ""}})
            .to_string()
        };
        let filler =
            serde_json::json!({"type": "user", "message": {"content": "x".repeat(1000)}}).to_string();
        let mut text = String::new();
        for line in [call("toolu_01Vault", "cat ~/.vault_pass"), call("toolu_01Pkg", "cat package.json")] {
            text.push_str(&line);
            text.push('\n');
        }
        // Past the third chunk.
        while text.len() < 3 * CHUNK {
            text.push_str(&filler);
            text.push('\n');
        }
        for line in
            [result("toolu_01Vault", "Ember!Orbit7537\n"), result("toolu_01Pkg", "Kx9vQ2mZp4Lw8Rt7Yb3N\n")]
        {
            text.push_str(&line);
            text.push('\n');
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        fs::write(&path, &text).unwrap();
        let len = text.len() as u64;
        let mut report = Report::default();
        let (size, plans) = std::thread::scope(|s| {
            let redactors = Redactors::start(s, 3);
            let chunks = Chunker::new(File::open(&path).unwrap(), len);
            plan_file(chunks, true, &redactors, &mut report, &mut Echoes::default()).unwrap()
        });
        assert!(plans.chunks.len() > 3, "{}", plans.chunks.len());
        let read = |plans: FilePlan, report: &mut Report| {
            let mut reader = Exact::new(
                Chunker::new(File::open(&path).unwrap(), len),
                Some(plans),
                true,
                size,
                report,
                None,
            );
            let mut out = String::new();
            reader.read_to_string(&mut out).unwrap();
            out
        };
        let out = read(plans, &mut report);
        assert!(!out.contains("Ember!Orbit7537"), "the secret passed");
        assert_eq!(out.matches("Kx9vQ2mZp4Lw8Rt7Yb3N").count(), 2);
        assert_eq!(report.by_rule.get("command-output"), Some(&2));
        // A plan that no chunk matches any more: each chunk is read afresh.
        let stale = FilePlan {
            chunks: Vec::new(),
            echoes: Echoes::default(),
            links: Arc::new({
                let mut links = Links::default();
                links.learn(text.as_bytes());
                links
            }),
        };
        let out = read(stale, &mut Report::default());
        assert!(!out.contains("Ember!Orbit7537") && out.contains("Kx9vQ2mZp4Lw8Rt7Yb3N"));
    }

    #[test]
    fn a_file_rewritten_between_the_reads_is_redacted_afresh() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let clean = "{\"a\":\"nothing to see here at all, fine\"}\n";
        fs::write(&path, clean).unwrap();
        let mut report = Report::default();
        let mut chunks = Chunker::new(File::open(&path).unwrap(), clean.len() as u64);
        let mut plans = Vec::new();
        let mut size = 0;
        while let Some(raw) = chunks.next().unwrap() {
            let (edits, n) = plan_chunk(raw, true, &Links::default(), &mut report);
            plans.push(ChunkPlan { len: raw.len(), crc: crc32fast::hash(raw), edits });
            size += n;
        }
        // Same length, now with a secret in it.
        let dirty = "{\"a\":\"key AKIAQWERTYUIOPASDFGH okay!!!\"}\n";
        assert_eq!(dirty.len(), clean.len());
        fs::write(&path, dirty).unwrap();
        let mut reader = Exact::new(
            Chunker::new(File::open(&path).unwrap(), clean.len() as u64),
            Some(FilePlan { chunks: plans, echoes: Echoes::default(), links: Arc::default() }),
            true,
            size,
            &mut report,
            None,
        );
        let mut out = String::new();
        reader.read_to_string(&mut out).unwrap();
        assert!(reader.changed);
        assert_eq!(out.len() as u64, size);
        assert!(!out.contains("AKIA"), "{out}");
    }
}
