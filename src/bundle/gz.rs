//! A gzip writer that deflates on worker threads, pigz-style: blocks primed with the
//! previous 32 KiB so the output is one gzip member about the size gzip makes.

use super::deflate::TunedDeflate;
use super::*;

/// A deflated block and the CRC of its input.
pub(super) type Compressed = io::Result<(Vec<u8>, crc32fast::Hasher)>;

pub(super) struct Job {
    data: Arc<Vec<u8>>,
    prev: Option<Arc<Vec<u8>>>,
    last: bool,
    reply: SyncSender<Compressed>,
}

/// A gzip writer that deflates blocks on worker threads and writes them in order: one
/// gzip member, readable by any gunzip, whose size is within a fraction of gzip's because
/// each block is primed with the end of the one before.
pub struct ParallelGz<W: Write> {
    out: W,
    block: Vec<u8>,
    prev: Option<Arc<Vec<u8>>>,
    jobs: Option<SyncSender<Job>>,
    pending: VecDeque<Receiver<Compressed>>,
    workers: Vec<std::thread::JoinHandle<()>>,
    crc: crc32fast::Hasher,
    total: u64,
    in_flight: usize,
    started: bool,
}

impl<W: Write> ParallelGz<W> {
    pub fn new(out: W, threads: usize) -> ParallelGz<W> {
        let (tx, rx) = sync_channel::<Job>(threads * 2);
        let rx = Arc::new(Mutex::new(rx));
        let workers = (0..threads)
            .map(|_| {
                let rx = Arc::clone(&rx);
                std::thread::spawn(move || {
                    let mut deflate = TunedDeflate::new();
                    loop {
                        let job = match rx.lock() {
                            Ok(guard) => guard.recv(),
                            Err(_) => return,
                        };
                        let Ok(job) = job else { return };
                        let result = match &mut deflate {
                            Ok(deflate) => compress_block(deflate, &job),
                            Err(e) => Err(io::Error::new(e.kind(), e.to_string())),
                        };
                        let _ = job.reply.send(result);
                    }
                })
            })
            .collect();
        ParallelGz {
            out,
            block: Vec::with_capacity(BLOCK),
            prev: None,
            jobs: Some(tx),
            pending: VecDeque::new(),
            workers,
            crc: crc32fast::Hasher::new(),
            total: 0,
            in_flight: threads * 2 + 1,
            started: false,
        }
    }

    fn dispatch(&mut self, last: bool) -> io::Result<()> {
        if !self.started {
            // gzip header: deflate, no name, no mtime, Unix.
            self.out.write_all(&[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3])?;
            self.started = true;
        }
        let data = Arc::new(std::mem::replace(&mut self.block, Vec::with_capacity(BLOCK)));
        let (reply, rx) = sync_channel(1);
        let job = Job { data: Arc::clone(&data), prev: self.prev.take(), last, reply };
        self.jobs
            .as_ref()
            .ok_or_else(|| io::Error::other("compression already finished"))?
            .send(job)
            .map_err(|_| io::Error::other("a compression thread stopped"))?;
        self.prev = Some(data);
        self.pending.push_back(rx);
        while self.pending.len() > self.in_flight || (last && !self.pending.is_empty()) {
            self.collect_one()?;
        }
        Ok(())
    }

    fn collect_one(&mut self) -> io::Result<()> {
        let Some(rx) = self.pending.pop_front() else { return Ok(()) };
        let (bytes, crc) = rx.recv().map_err(|_| io::Error::other("a compression thread stopped"))??;
        self.crc.combine(&crc);
        self.out.write_all(&bytes)
    }

    /// Ends the stream; returns the inner writer and the uncompressed length.
    pub fn finish(mut self) -> io::Result<(W, u64)> {
        self.dispatch(true)?;
        let crc = std::mem::replace(&mut self.crc, crc32fast::Hasher::new()).finalize();
        let mut trailer = [0u8; 8];
        trailer[..4].copy_from_slice(&crc.to_le_bytes());
        trailer[4..].copy_from_slice(&(self.total as u32).to_le_bytes());
        self.out.write_all(&trailer)?;
        self.jobs = None;
        for w in self.workers.drain(..) {
            let _ = w.join();
        }
        let total = self.total;
        // `self` implements no Drop, so the writer can be moved out.
        Ok((self.out, total))
    }
}

pub(super) fn compress_block(deflate: &mut TunedDeflate, job: &Job) -> Compressed {
    let dictionary = job.prev.as_deref().map_or(&[][..], |prev| &prev[prev.len().saturating_sub(WINDOW)..]);
    let mut out = Vec::with_capacity(job.data.len() / 3 + 1024);
    deflate.block(dictionary, &job.data, job.last, &mut out)?;
    let mut crc = crc32fast::Hasher::new();
    crc.update(&job.data);
    Ok((out, crc))
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
    fn parallel_gzip_is_one_member_any_gunzip_reads() {
        let mut input = Vec::new();
        let mut x = 1u32;
        while input.len() < 3 * BLOCK + 5 {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
            input.extend_from_slice(format!("line {} of text {}\n", x % 977, x % 13).as_bytes());
        }
        for len in [0, 1, BLOCK - 1, BLOCK, input.len()] {
            for threads in [1, 2, 3] {
                let mut gz = ParallelGz::new(Vec::new(), threads);
                gz.write_all(&input[..len]).unwrap();
                let (out, total) = gz.finish().unwrap();
                assert_eq!(total, len as u64);
                let mut back = Vec::new();
                flate2::read::GzDecoder::new(&out[..]).read_to_end(&mut back).unwrap();
                assert!(back == input[..len], "len {len}, {threads} threads");
            }
        }
    }
}
