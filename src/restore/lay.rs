//! Lays transcripts read in place (a move) on the other cores while the staging goes on:
//! the writes of two files do not wait on each other, and laying the slot is most of a
//! move's time (docs/performance.md).

use std::path::PathBuf;
use std::sync::mpsc::{self, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use anyhow::Context;

use super::paths::PathMap;
use crate::bundle::WholeFile;
use crate::interrupt::{Interrupted, interrupted};

/// One transcript to lay: read `src` whole, rewrite it by `map`, create `dest`.
pub(super) struct Lay {
    pub src: WholeFile,
    pub dest: PathBuf,
    pub map: Arc<PathMap>,
}

impl Lay {
    pub fn run(self) -> anyhow::Result<()> {
        let Lay { mut src, dest, map } = self;
        super::write_new_with(&dest, |out| map.rewrite_stream(&mut src, out))
            .with_context(|| format!("could not lay {}", src.rel().display()))
    }
}

/// Threads that take a transcript only when one of them is idle, so the staging thread
/// lays the rest itself and nothing piles up in memory.
pub(super) struct Layers {
    jobs: SyncSender<Lay>,
    threads: Vec<JoinHandle<()>>,
    failed: Arc<Mutex<Option<anyhow::Error>>>,
}

impl Layers {
    /// One thread per core beside the caller's, at most three; none on one core.
    pub fn new() -> Layers {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let count = cores.saturating_sub(1).min(3);
        // A rendezvous channel: a send succeeds only into an idle thread's hands.
        let (jobs, queue) = mpsc::sync_channel::<Lay>(0);
        let queue = Arc::new(Mutex::new(queue));
        let failed = Arc::new(Mutex::new(None));
        let threads = (0..count)
            .map(|_| {
                let (queue, failed) = (Arc::clone(&queue), Arc::clone(&failed));
                std::thread::spawn(move || {
                    loop {
                        let next = queue.lock().map_err(|_| ()).and_then(|q| q.recv().map_err(|_| ()));
                        let Ok(lay) = next else { return };
                        let result = if interrupted() { Err(Interrupted.into()) } else { lay.run() };
                        if let Err(e) = result
                            && let Ok(mut first) = failed.lock()
                        {
                            first.get_or_insert(e);
                        }
                    }
                })
            })
            .collect();
        Layers { jobs, threads, failed }
    }

    /// Lays `lay` on an idle thread, or here when none is.
    pub fn lay(&self, lay: Lay) -> anyhow::Result<()> {
        self.check()?;
        match self.jobs.try_send(lay) {
            Ok(()) => Ok(()),
            Err(TrySendError::Full(lay) | TrySendError::Disconnected(lay)) => lay.run(),
        }
    }

    /// The first error a thread met, so the staging stops at the next entry.
    fn check(&self) -> anyhow::Result<()> {
        match self.failed.lock().ok().and_then(|mut first| first.take()) {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Waits for every thread to finish what it took; its first error, if any.
    pub fn finish(self) -> anyhow::Result<()> {
        let Layers { jobs, threads, failed } = self;
        drop(jobs);
        let mut panicked = false;
        for thread in threads {
            panicked |= thread.join().is_err();
        }
        if let Some(e) = failed.lock().ok().and_then(|mut first| first.take()) {
            return Err(e);
        }
        anyhow::ensure!(!panicked, "a thread laying the transcripts stopped before its end");
        Ok(())
    }
}
