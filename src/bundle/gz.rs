//! A gzip writer that deflates on worker threads: the stream is cut into blocks of
//! [`BLOCK`] bytes, each compressed by libdeflate into a gzip member of its own, and the
//! members are written in order. RFC 1952 makes a gzip file a series of members, and
//! gunzip, `tar xz`, Python's `tarfile` and restore read them as one stream.
//!
//! libdeflate at level 6 on blocks of 1 MiB deflated real transcripts in 0.91 of the time
//! of zlib-rs tuned on blocks primed with their predecessor's last 32 KiB, 0.5% smaller,
//! and this Python's standard library in 0.87 of the time, 1.1% smaller
//! (docs/performance.md).

use super::*;

/// A block's gzip member, or why it could not be made.
type Member = io::Result<Vec<u8>>;

struct Job {
    data: Vec<u8>,
    reply: SyncSender<Member>,
}

/// How hard a stream is compressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// libdeflate's 6, gzip's default (and here both faster and smaller than it): a file
    /// that is kept or sent.
    Kept,
    /// Stored, not deflated (libdeflate's 0): a move's backup, written and read back at
    /// once on one machine, where deflating and inflating were two thirds of a move's time
    /// (docs/performance.md). Still gzip: any restore reads it.
    Quick,
}

impl Level {
    fn libdeflate(self) -> i32 {
        match self {
            Level::Kept => 6,
            Level::Quick => 0,
        }
    }
}

/// A gzip writer that deflates blocks on worker threads and writes their members in
/// order.
pub struct ParallelGz<W: Write> {
    out: W,
    block: Vec<u8>,
    jobs: Option<SyncSender<Job>>,
    pending: VecDeque<Receiver<Member>>,
    workers: Vec<std::thread::JoinHandle<()>>,
    total: u64,
    in_flight: usize,
    /// Members handed out: an empty stream still gets one, so that it is gzip.
    members: u64,
}

impl<W: Write> ParallelGz<W> {
    pub fn new(out: W, threads: usize, level: Level) -> ParallelGz<W> {
        // One block waiting for each worker, and one more being filled: enough to keep the
        // workers busy (more made no bundle faster), and each block held is peak memory.
        let (tx, rx) = sync_channel::<Job>(threads);
        let rx = Arc::new(Mutex::new(rx));
        let workers = (0..threads)
            .map(|_| {
                let rx = Arc::clone(&rx);
                std::thread::spawn(move || {
                    let mut deflate = Deflate::new(level);
                    loop {
                        let job = match rx.lock() {
                            Ok(guard) => guard.recv(),
                            Err(_) => return,
                        };
                        let Ok(job) = job else { return };
                        let _ = job.reply.send(deflate.member(&job.data));
                    }
                })
            })
            .collect();
        ParallelGz {
            out,
            block: Vec::with_capacity(BLOCK),
            jobs: Some(tx),
            pending: VecDeque::new(),
            workers,
            total: 0,
            in_flight: threads + 1,
            members: 0,
        }
    }

    fn dispatch(&mut self, last: bool) -> io::Result<()> {
        if !self.block.is_empty() || self.members == 0 {
            let data = std::mem::replace(&mut self.block, Vec::with_capacity(if last { 0 } else { BLOCK }));
            let (reply, rx) = sync_channel(1);
            self.jobs
                .as_ref()
                .ok_or_else(|| io::Error::other("compression already finished"))?
                .send(Job { data, reply })
                .map_err(|_| io::Error::other("a compression thread stopped"))?;
            self.members += 1;
            self.pending.push_back(rx);
        }
        while self.pending.len() > self.in_flight || (last && !self.pending.is_empty()) {
            self.collect_one()?;
        }
        Ok(())
    }

    fn collect_one(&mut self) -> io::Result<()> {
        let Some(rx) = self.pending.pop_front() else { return Ok(()) };
        let member = rx.recv().map_err(|_| io::Error::other("a compression thread stopped"))??;
        self.out.write_all(&member)
    }

    /// Ends the stream; returns the inner writer and the uncompressed length.
    pub fn finish(mut self) -> io::Result<(W, u64)> {
        self.dispatch(true)?;
        self.jobs = None;
        for w in self.workers.drain(..) {
            let _ = w.join();
        }
        let total = self.total;
        // `self` implements no Drop, so the writer can be moved out.
        Ok((self.out, total))
    }
}

/// A worker's compressor and the room it writes a member into, both kept for the
/// whole stream.
struct Deflate {
    compressor: libdeflater::Compressor,
    room: Vec<u8>,
}

impl Deflate {
    fn new(level: Level) -> Deflate {
        let level = libdeflater::CompressionLvl::new(level.libdeflate()).unwrap_or_default();
        Deflate { compressor: libdeflater::Compressor::new(level), room: Vec::new() }
    }

    /// `data` as one gzip member.
    fn member(&mut self, data: &[u8]) -> Member {
        let bound = self.compressor.gzip_compress_bound(data.len());
        if self.room.len() < bound {
            self.room.resize(bound, 0);
        }
        // The bound is libdeflate's own worst case, so there is always room.
        let len = self
            .compressor
            .gzip_compress(data, &mut self.room)
            .map_err(|e| io::Error::other(format!("deflate: {e}")))?;
        Ok(self.room[..len].to_vec())
    }
}

impl<W: Write> Write for ParallelGz<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let room = BLOCK - self.block.len();
        let n = room.min(buf.len());
        self.block.extend_from_slice(&buf[..n]);
        self.total += n as u64;
        if self.block.len() == BLOCK {
            self.dispatch(false)?;
        }
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parallel_gzip_is_members_any_gunzip_reads_as_one_stream() {
        let mut input = Vec::new();
        let mut x = 1u32;
        while input.len() < 3 * BLOCK + 5 {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
            input.extend_from_slice(format!("line {} of text {}\n", x % 977, x % 13).as_bytes());
        }
        for len in [0, 1, BLOCK - 1, BLOCK, input.len()] {
            for threads in [1, 2, 3] {
                let mut gz = ParallelGz::new(Vec::new(), threads, Level::Kept);
                gz.write_all(&input[..len]).unwrap();
                let (out, total) = gz.finish().unwrap();
                assert_eq!(total, len as u64);
                let mut back = Vec::new();
                flate2::read::MultiGzDecoder::new(&out[..]).read_to_end(&mut back).unwrap();
                assert!(back == input[..len], "len {len}, {threads} threads");
            }
        }
    }
}
