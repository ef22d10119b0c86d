//! Trace recording off the simulation thread.
//!
//! Encoding a recorded edge (LEB128 varints of every non-idle input, the scoreboard's port
//! arrays packed into fields) costs 150-400 host instructions, several times what the unit's
//! own clock edge costs. A [`TraceSink`] keeps the simulation thread's share to a copy: it
//! appends each edge's raw record (instance, cycle, the unit's [`Unit::Recorded`] value) to a
//! chunk, and hands full chunks to one encoder thread shared by the process, which runs the
//! unit's [`Unit::encode_recorded`] into the [`TraceRecorder`]. The trace bytes are exactly
//! those of encoding in place: one thread encodes every chunk of a recorder, in the order the
//! chunks were handed over.
//!
//! Memory stays bounded: at most [`QUEUED_CHUNKS`] chunks wait for the encoder (a
//! simulation that outruns it waits), and the encoded trace is what recording in place
//! would hold. Where no thread can be started, or with `WARPFORGE_TRACE_INLINE` set (to
//! measure the difference), chunks are encoded on the calling thread.

use super::declare::Unit;
use super::trace::TraceRecorder;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, SyncSender};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};

/// Edges per chunk: about 64-128 KiB of raw records, so a chunk handed over is still in
/// the shared cache when the encoder reads it.
const CHUNK_EDGES: usize = 1024;

/// Chunks that may wait for the encoder before the simulation waits for it.
pub const QUEUED_CHUNKS: usize = 32;

/// One recorded clock edge before encoding.
#[derive(Clone, Copy)]
pub struct RecordedEdge<R> {
    pub instance: u32,
    pub cycle: u64,
    pub value: R,
}

type Job = Box<dyn FnOnce() + Send>;

/// Wall time the encoder thread has spent encoding, process-wide.
static ENCODER_BUSY_NS: AtomicU64 = AtomicU64::new(0);

/// Seconds the encoder thread has spent encoding so far in this process: the host time
/// recording costs beside the simulation thread's own share.
pub fn encoder_busy_seconds() -> f64 {
    ENCODER_BUSY_NS.load(Ordering::Relaxed) as f64 * 1e-9
}

/// The process's encoder thread (`None` where it could not be started).
fn encoder() -> Option<&'static SyncSender<Job>> {
    static ENCODER: OnceLock<Option<SyncSender<Job>>> = OnceLock::new();
    ENCODER
        .get_or_init(|| {
            if std::env::var_os("WARPFORGE_TRACE_INLINE").is_some() {
                return None;
            }
            let (tx, rx) = sync_channel::<Job>(QUEUED_CHUNKS);
            std::thread::Builder::new()
                .name("trace-encoder".into())
                .spawn(move || {
                    while let Ok(job) = rx.recv() {
                        let started = std::time::Instant::now();
                        job();
                        ENCODER_BUSY_NS
                            .fetch_add(started.elapsed().as_nanos() as u64, Ordering::Relaxed);
                    }
                })
                .ok()
                .map(|_| tx)
        })
        .as_ref()
}

/// Runs `job` on the encoder thread, or here when there is none (or it has died: the job
/// then reports the same failure on this thread).
fn submit(job: Job) {
    match encoder() {
        Some(tx) => {
            if let Err(e) = tx.send(job) {
                (e.0)()
            }
        }
        None => job(),
    }
}

fn lock(recorder: &Mutex<TraceRecorder>) -> MutexGuard<'_, TraceRecorder> {
    // A poisoned lock means an encode panicked; that panic has already been reported.
    recorder.lock().unwrap_or_else(PoisonError::into_inner)
}

type Chunk<U> = Vec<RecordedEdge<<U as Unit>::Recorded>>;

/// The recording end a unit host holds: raw edges in, a [`TraceRecorder`] out.
pub struct TraceSink<U: Unit> {
    chunk: Vec<RecordedEdge<U::Recorded>>,
    recorder: Arc<Mutex<TraceRecorder>>,
    /// Encoded chunks, emptied, for reuse: after the first few, handing a chunk over
    /// allocates nothing (a fresh 64-256 KiB chunk per hand-over cost page faults and
    /// cross-thread frees, more than the copying itself).
    spare: Arc<Mutex<Vec<Chunk<U>>>>,
}

impl<U: Unit> TraceSink<U> {
    pub fn new(recorder: TraceRecorder) -> TraceSink<U> {
        debug_assert!(std::ptr::eq(recorder.desc(), U::desc()));
        TraceSink {
            chunk: Vec::with_capacity(CHUNK_EDGES),
            recorder: Arc::new(Mutex::new(recorder)),
            spare: Arc::default(),
        }
    }

    /// Records instance `instance`'s edge at `cycle` (cycles must not decrease per
    /// instance).
    #[inline(always)]
    pub fn push(&mut self, instance: usize, cycle: u64, value: U::Recorded) {
        self.chunk.push(RecordedEdge {
            instance: instance as u32,
            cycle,
            value,
        });
        if self.chunk.len() == CHUNK_EDGES {
            self.hand_over();
        }
    }

    /// Hands the chunk to the encoder.
    #[cold]
    #[inline(never)]
    fn hand_over(&mut self) {
        if self.chunk.is_empty() {
            return;
        }
        let reused = self
            .spare
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop();
        let next = reused.unwrap_or_else(|| Vec::with_capacity(CHUNK_EDGES));
        let mut chunk = std::mem::replace(&mut self.chunk, next);
        let recorder = Arc::clone(&self.recorder);
        let spare = Arc::clone(&self.spare);
        submit(Box::new(move || {
            U::encode_recorded(&mut lock(&recorder), &chunk);
            chunk.clear();
            spare
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(chunk);
        }));
    }

    /// Waits until every edge recorded so far is encoded.
    fn sync(&mut self) {
        self.hand_over();
        let (tx, rx) = sync_channel(1);
        submit(Box::new(move || {
            let _ = tx.send(());
        }));
        // Jobs run in order: once this one has, every earlier chunk is encoded and its job
        // (with its handle on the recorder) dropped. An error means the encoder died, after
        // which jobs run on this thread anyway.
        let _ = rx.recv();
    }

    /// The recorder with every edge so far encoded (e.g. to re-encode it for wider ports).
    pub fn recorder(&mut self) -> MutexGuard<'_, TraceRecorder> {
        self.sync();
        lock(&self.recorder)
    }

    /// Every recorded edge, encoded.
    pub fn finish(mut self) -> TraceRecorder {
        self.sync();
        match Arc::try_unwrap(self.recorder) {
            Ok(m) => m.into_inner().unwrap_or_else(PoisonError::into_inner),
            // Not reached after `sync`; moving the recorder out keeps the result anyway.
            Err(shared) => {
                let mut rec = lock(&shared);
                let empty = TraceRecorder::new(rec.desc(), rec.params().clone());
                std::mem::replace(&mut *rec, empty)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::declare::UnitParams;
    use crate::units::dpe_scoreboard::{
        DpeScoreboard, ScoreboardParams, ScoreboardPorts, SCOREBOARD_DESC,
    };
    use crate::units::simt_stack::{SimtStackSpe, SpeInputs, SpeParams, SPE_DESC};

    fn spe_recorder() -> TraceRecorder {
        let mut rec = TraceRecorder::new(&SPE_DESC, SpeParams::default().to_params().unwrap());
        for i in 0..3 {
            rec.add_instance(format!("w{i}"));
        }
        rec
    }

    /// Edges of three instances, spanning several chunks, with the recorder read back
    /// mid-way (as `RegDeps::begin_kernel` does): the bytes are those of encoding in place,
    /// also with other sinks recording from other threads at the same time.
    #[test]
    fn off_thread_encoding_writes_the_bytes_of_encoding_in_place() {
        let run = |salt: u64| {
            let mut sink = TraceSink::<SimtStackSpe>::new(spe_recorder());
            let mut direct = spe_recorder();
            let mut cycle = [0u64; 3];
            for k in 0..(3 * CHUNK_EDGES as u64 + 17) {
                let i = ((k * 7 + salt) % 3) as usize;
                cycle[i] += 1 + (k % 5);
                let inp = SpeInputs::launch((k * 13 + salt) as u32, k ^ salt);
                sink.push(i, cycle[i], inp);
                direct.record_inputs(i, cycle[i], &inp);
                if k == CHUNK_EDGES as u64 + 5 {
                    assert_eq!(sink.recorder().events(), k + 1, "all edges so far encoded");
                }
            }
            let a = sink.finish().into_trace("t");
            let b = direct.into_trace("t");
            assert_eq!(a.header, b.header);
            assert_eq!(a.blobs, b.blobs);
        };
        std::thread::scope(|s| {
            for salt in 0..3 {
                s.spawn(move || run(salt));
            }
        });
    }

    /// The scoreboard keeps staged operations; encoded at the trace's layout they are the
    /// port values the SM would have written in place.
    #[test]
    fn staged_scoreboard_edges_encode_as_their_port_values() {
        let p = ScoreboardParams::default();
        let params = p.to_params().unwrap();
        let new_rec = || {
            let mut r = TraceRecorder::new(&SCOREBOARD_DESC, params.clone());
            r.add_instance("sm0".into());
            r
        };
        let mut sb = DpeScoreboard::new(p);
        let mut sink = TraceSink::<DpeScoreboard>::new(new_rec());
        let mut direct = new_rec();
        for c in 1..2000u64 {
            let w = (c % p.num_warps as u64) as u32;
            assert!(sb.reserve(w, (c & 1) as u8, (c % 17) as u32));
            if c % 3 == 0 {
                assert!(sb.release(w, 0, (c % 11) as u32));
            }
            if c % 7 == 0 {
                sb.copy(w);
            }
            sink.push(0, c, *sb.staged());
            direct.record_inputs(0, c, &sb.staged_port_values(&ScoreboardPorts::of(&p)));
            sb.tick();
        }
        assert_eq!(
            sink.finish().into_trace("t").blobs,
            direct.into_trace("t").blobs
        );
    }
}
