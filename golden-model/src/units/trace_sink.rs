//! Trace recording off the simulation thread, and the raw records a trace keeps until it
//! is replayed or written.
//!
//! A [`TraceSink`] keeps the simulation thread's share of recording to a copy: it appends
//! each edge's raw record (a header word with the instance and cycle, then the unit's
//! [`Unit::Recorded`] value as [`RawRecord`] words) to a chunk, and hands full chunks to
//! one trace thread shared by the process, which files each edge under its instance in the
//! [`TraceRecorder`], still as raw words (the same framing, one stream per instance): about
//! 90 host instructions per edge on mandelbrot, most of them the copy.
//!
//! Why the records stay raw: encoding an edge into trace bytes (LEB128 varints of every
//! non-idle input, the scoreboard's port arrays packed into fields) cost 100-500 host
//! instructions, several times the unit's own clock edge, and on this project's machines
//! the trace thread's work on the second core slows the simulation on the first (README,
//! "Speed"). A co-simulation in the same process has no use for the bytes: it replays the
//! raw records ([`RawCodec::events`], through [`Unit::recorded_inputs`]), which is also
//! cheaper than decoding varints. Only a trace file encodes them ([`RawCodec::encode`],
//! when the trace is written), into exactly the bytes of encoding in place.
//!
//! Why variable-length words rather than the values as they are: what recording costs the
//! simulation is mostly memory traffic and stalls, not instructions. Every byte the
//! simulation thread writes into a chunk is a cache line it must own again when the chunk
//! comes back from the trace thread (on the other core), and a stream of fixed 232-byte
//! scoreboard records evicted the simulation's own data from its L2. Most edges are one
//! word ([`RawRecord::compact`]: a stack's sequential update, a scoreboard cycle with at
//! most two operations); the rest are a header and the value's words.
//!
//! The simulation thread never waits for the trace thread while a kernel runs or between
//! launches: a change of the recorder (the scoreboard's trace widening at a launch with more
//! registers) is itself a job in the trace thread's queue ([`TraceSink::change_recorder`]),
//! and the parameters the simulation checks are kept on this side ([`TraceSink::params`]).
//!
//! Memory stays bounded by the trace: at most [`QUEUED_CHUNKS`] chunks wait for the trace
//! thread (a simulation that outruns it waits), and the raw records take 8 bytes per
//! compact edge (the encoded trace: 2-5). Where no thread can be started, or with
//! `WARPFORGE_TRACE_INLINE` set (to measure the difference), chunks are filed on the
//! calling thread.

use super::contract::Params;
use super::declare::Unit;
use super::declare::{PortGroup, UnitParams};
use super::trace::{RawCodec, RawEvents, TraceRecorder};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{sync_channel, SyncSender};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};

/// Words per chunk (64 KiB), so a chunk handed over is still in the shared cache when the
/// trace thread reads it. A chunk is handed over at the first edge that ends past it.
const CHUNK_WORDS: usize = 8192;

/// Chunks that may wait for the trace thread before the simulation waits for it.
pub const QUEUED_CHUNKS: usize = 32;

/// A recorded value as raw 64-bit words: what the simulation thread copies per edge.
/// `declare_unit!` implements it for every port group (a presence word, then the words of
/// the non-zero ports).
pub trait RawRecord: Sized + Send + 'static {
    /// Appends the value's words.
    fn pack(&self, out: &mut Vec<u64>);
    /// The value [`RawRecord::pack`] wrote at the front of `words`, and the words it took.
    fn unpack(words: &[u64]) -> (Self, usize);
    /// The number of words [`RawRecord::pack`] wrote at the front of `words`. A unit whose
    /// values are costly to build overrides it to read only the count.
    #[inline]
    fn packed_len(words: &[u64]) -> usize {
        Self::unpack(words).1
    }
    /// The value as a payload below 2^[`COMPACT_PAYLOAD_BITS`], for the common values of a
    /// unit that has a one-word form (a stack's sequential update, a scoreboard cycle with
    /// one reserve and one release): the edge is then a single word with its header.
    #[inline(always)]
    fn compact(&self) -> Option<u64> {
        None
    }
    /// Whether compact values recur often enough that encoding keeps their encoded bytes
    /// ([`CompactTails`]) and copies them undecoded.
    const COMPACT_VALUES_RECUR: bool = false;
    /// The value [`RawRecord::compact`] gave `payload` for.
    fn from_compact(payload: u64) -> Self {
        unreachable!("a compact record {payload:#x} of a type without a compact form")
    }
}

/// Payload bits of a compact edge.
pub const COMPACT_PAYLOAD_BITS: u32 = 40;

/// How a chunk's words frame its edges. The low two bits of an edge's first word say which
/// form it takes:
///
/// - `0b00` header: the instance in bits 2..18, the cycle above them; the value's
///   [`RawRecord::pack`] words follow.
/// - `0b01` compact edge, one word: the instance in bits 2..12, the cycle as a step of
///   bits 12..24 over the chunk's previous edge, the [`RawRecord::compact`] payload above.
///   Most edges take this form, and the simulation thread writes one word instead of 3-4.
/// - `0b11` wide header (an instance or cycle too large): the instance and the cycle in the
///   next two words, then the value's words.
const TAG_BITS: u32 = 2;
const TAG_MASK: u64 = 0b11;
const TAG_HEADER: u64 = 0b00;
const TAG_COMPACT: u64 = 0b01;
const WIDE_HEADER: u64 = 0b11;
const INSTANCE_BITS: u32 = 16;
const COMPACT_INSTANCE_BITS: u32 = 10;
const COMPACT_STEP_BITS: u32 = 12;
const COMPACT_STEP_AT: u32 = TAG_BITS + COMPACT_INSTANCE_BITS;
const COMPACT_PAYLOAD_AT: u32 = COMPACT_STEP_AT + COMPACT_STEP_BITS;
const _: () = assert!(COMPACT_PAYLOAD_AT + COMPACT_PAYLOAD_BITS == 64);

const fn low_bits(n: u32) -> u64 {
    (1 << n) - 1
}

/// Appends a compact edge if its instance and its cycle's step fit the one-word form;
/// `last_cycle` is the previous edge's cycle in `out` (0 at its start).
#[inline(always)]
fn push_compact(
    out: &mut Vec<u64>,
    last_cycle: &mut u64,
    instance: usize,
    cycle: u64,
    payload: u64,
) -> bool {
    debug_assert!(payload >> COMPACT_PAYLOAD_BITS == 0);
    let step = cycle.wrapping_sub(*last_cycle);
    if instance >> COMPACT_INSTANCE_BITS != 0 || step >> COMPACT_STEP_BITS != 0 {
        return false;
    }
    *last_cycle = cycle;
    out.push(
        payload << COMPACT_PAYLOAD_AT
            | step << COMPACT_STEP_AT
            | (instance as u64) << TAG_BITS
            | TAG_COMPACT,
    );
    true
}

/// Appends the header of an edge whose value's words follow.
#[inline(always)]
fn push_header(out: &mut Vec<u64>, last_cycle: &mut u64, instance: usize, cycle: u64) {
    *last_cycle = cycle;
    if instance >> INSTANCE_BITS == 0 && cycle >> (64 - INSTANCE_BITS - TAG_BITS) == 0 {
        out.push(cycle << (INSTANCE_BITS + TAG_BITS) | (instance as u64) << TAG_BITS | TAG_HEADER);
    } else {
        out.extend_from_slice(&[WIDE_HEADER, instance as u64, cycle]);
    }
}

/// Appends an edge: `last_cycle` is the previous edge's cycle in `out` (0 at its start).
#[inline(always)]
fn push_edge<R: RawRecord>(
    out: &mut Vec<u64>,
    last_cycle: &mut u64,
    instance: usize,
    cycle: u64,
    value: &R,
) {
    if let Some(payload) = value.compact() {
        if push_compact(out, last_cycle, instance, cycle, payload) {
            return;
        }
    }
    push_header(out, last_cycle, instance, cycle);
    value.pack(out);
}

/// How an edge's words begin.
enum Framed {
    /// A [`RawRecord::compact`] payload: the edge is this one word.
    Compact(u64),
    /// The value's [`RawRecord::pack`] words start where the reader now is.
    Value,
}

/// Reads the framing of the edge at `words[*at]` and moves `*at` past it; `last_cycle`
/// is the previous edge's cycle (0 at the start of `words`), and becomes this one's.
/// Returns the edge's instance and cycle.
#[inline(always)]
fn next_framed(words: &[u64], at: &mut usize, last_cycle: &mut u64) -> (u32, u64, Framed) {
    let word = words[*at];
    let (instance, cycle, framed) = match word & TAG_MASK {
        TAG_COMPACT => {
            *at += 1;
            let instance = (word >> TAG_BITS & low_bits(COMPACT_INSTANCE_BITS)) as u32;
            let step = word >> COMPACT_STEP_AT & low_bits(COMPACT_STEP_BITS);
            (
                instance,
                last_cycle.wrapping_add(step),
                Framed::Compact(word >> COMPACT_PAYLOAD_AT),
            )
        }
        WIDE_HEADER => {
            *at += 3;
            (words[*at - 2] as u32, words[*at - 1], Framed::Value)
        }
        tag => {
            debug_assert_eq!(tag, TAG_HEADER);
            *at += 1;
            (
                (word >> TAG_BITS & low_bits(INSTANCE_BITS)) as u32,
                word >> (INSTANCE_BITS + TAG_BITS),
                Framed::Value,
            )
        }
    };
    *last_cycle = cycle;
    (instance, cycle, framed)
}

/// An edge as a chunk holds it.
enum ChunkEdge<R> {
    /// A [`RawRecord::compact`] payload.
    Compact(u64),
    Value(R),
}

/// Calls `each(instance, cycle, edge)` for the edges of a chunk of words (or of one
/// instance's raw records), in order.
#[inline(always)]
fn for_each_edge<R: RawRecord>(words: &[u64], mut each: impl FnMut(u32, u64, ChunkEdge<R>)) {
    let (mut at, mut last_cycle) = (0, 0u64);
    while at < words.len() {
        let (instance, cycle, framed) = next_framed(words, &mut at, &mut last_cycle);
        let edge = match framed {
            Framed::Compact(payload) => ChunkEdge::Compact(payload),
            Framed::Value => {
                let (value, n) = R::unpack(&words[at..]);
                at += n;
                ChunkEdge::Value(value)
            }
        };
        each(instance, cycle, edge);
    }
}

/// Files the edges of a chunk under their instances in `rec`, as raw records (see
/// [`TraceRecorder::keep_raw`]): the whole of what the trace thread does per edge. A
/// compact edge stays one word unless its instance's cycle step outgrows the compact form;
/// a value's words are copied as they are.
fn file_by_instance<R: RawRecord>(chunk: &[u64], rec: &mut TraceRecorder) {
    let (mut at, mut chunk_cycle) = (0, 0u64);
    while at < chunk.len() {
        let (instance, cycle, framed) = next_framed(chunk, &mut at, &mut chunk_cycle);
        let (out, last_cycle) = rec.raw_event(instance as usize, cycle);
        match framed {
            Framed::Compact(payload) => {
                if !push_compact(out, last_cycle, 0, cycle, payload) {
                    push_header(out, last_cycle, 0, cycle);
                    R::from_compact(payload).pack(out);
                }
            }
            Framed::Value => {
                let n = R::packed_len(&chunk[at..]);
                push_header(out, last_cycle, 0, cycle);
                out.extend_from_slice(&chunk[at..at + n]);
                at += n;
            }
        }
    }
}

/// Encodes the raw records a trace sink filed in `rec` into trace bytes (the
/// [`RawCodec::encode`] of unit `U`), instance by instance, each instance's raw words freed
/// once encoded.
fn encode_raw<U: Unit>(rec: &mut TraceRecorder) {
    let params = U::Params::from_params(rec.params());
    let inputs = |value: &U::Recorded| U::recorded_inputs(value, &params);
    let mut tails = CompactTails::new();
    for inst in 0..rec.instance_count() {
        let raw = rec.take_raw(inst);
        for_each_edge::<U::Recorded>(&raw, |_, cycle, edge| match edge {
            // A kept compact value is copied without being decoded.
            ChunkEdge::Compact(payload) if U::Recorded::COMPACT_VALUES_RECUR => {
                let tail = tails.tail(payload, |out| {
                    rec.encode_inputs(&inputs(&U::Recorded::from_compact(payload)), out)
                });
                rec.record_encoded(inst, cycle, tail)
            }
            ChunkEdge::Compact(payload) => {
                rec.record_inputs(inst, cycle, &inputs(&U::Recorded::from_compact(payload)))
            }
            ChunkEdge::Value(value) => rec.record_inputs(inst, cycle, &inputs(&value)),
        });
    }
}

/// The events of one instance's raw records, as the unit's input ports at `params` (the
/// [`RawCodec::events`] of unit `U`): what replaying a trace recorded in this process
/// decodes, with no trace bytes in between.
fn raw_events<'a, U: Unit>(words: &'a [u64], params: &Params) -> RawEvents<'a> {
    let params = U::Params::from_params(params);
    let (mut at, mut last_cycle) = (0, 0u64);
    Box::new(move |ports| {
        if at >= words.len() {
            return None;
        }
        let (_, cycle, framed) = next_framed(words, &mut at, &mut last_cycle);
        let value = match framed {
            Framed::Compact(payload) => U::Recorded::from_compact(payload),
            Framed::Value => {
                let (value, n) = U::Recorded::unpack(&words[at..]);
                at += n;
                value
            }
        };
        ports[0].set_u64(1); // rst_n
        U::recorded_inputs(&value, &params).write_ports(ports);
        Some(cycle)
    })
}

/// The raw-record codec of unit `U`, for its trace sinks' recorders.
fn raw_codec<U: Unit>() -> RawCodec {
    RawCodec {
        encode: encode_raw::<U>,
        events: raw_events::<U>,
    }
}

/// Slots of [`CompactTails`].
const COMPACT_TAIL_SLOTS: usize = 256;
/// The longest encoded tail [`CompactTails`] keeps.
const COMPACT_TAIL_BYTES: usize = 31;

/// The trace bytes after the cycle delta of recently encoded compact values, in a
/// direct-mapped table keyed by their [`RawRecord::compact`] payload, for units whose
/// compact values recur.
///
/// Why: a stack's sequential updates are most of its edges, one value per PC of a loop
/// body (99.9% hits on mandelbrot). Encoding one from its value (the presence mask over
/// all 11 ports, a varint per present word) costs ~250 host instructions; a hit is a copy
/// of a few bytes. A scoreboard cycle's pair of operations recurs too rarely (41% hits, and
/// a miss costs more than encoding), so the scoreboard does not use it.
pub struct CompactTails {
    slots: Box<[CompactTail; COMPACT_TAIL_SLOTS]>,
    /// Where a value that is not kept is encoded.
    scratch: Vec<u8>,
}

#[derive(Clone, Copy)]
struct CompactTail {
    /// The payload with [`CompactTails::FILLED`] set; 0 for an empty slot.
    key: u64,
    len: u8,
    bytes: [u8; COMPACT_TAIL_BYTES],
}

impl CompactTails {
    /// Above every payload (payloads have [`COMPACT_PAYLOAD_BITS`] bits).
    const FILLED: u64 = 1 << 63;
    const EMPTY: CompactTail = CompactTail {
        key: 0,
        len: 0,
        bytes: [0; COMPACT_TAIL_BYTES],
    };

    fn new() -> CompactTails {
        CompactTails {
            slots: Box::new([Self::EMPTY; COMPACT_TAIL_SLOTS]),
            scratch: Vec::new(),
        }
    }

    #[inline(always)]
    fn slot(payload: u64) -> usize {
        // Fibonacci hashing: PCs and register numbers differ in their low bits.
        (payload.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 56) as usize % COMPACT_TAIL_SLOTS
    }

    /// The kept tail of the value of compact `payload`, if any.
    #[cfg(test)]
    fn get(&self, payload: u64) -> Option<&[u8]> {
        let slot = &self.slots[Self::slot(payload)];
        (slot.key == payload | Self::FILLED).then(|| &slot.bytes[..slot.len as usize])
    }

    /// The tail of the value of compact `payload`: kept, or written by `encode` (and kept
    /// when it fits a slot). The bytes must be a function of the payload and the
    /// recorder's parameters alone.
    #[inline(always)]
    pub fn tail(&mut self, payload: u64, encode: impl FnOnce(&mut Vec<u8>)) -> &[u8] {
        let key = payload | Self::FILLED;
        let slot = &mut self.slots[Self::slot(payload)];
        if slot.key != key {
            let scratch = &mut self.scratch;
            scratch.clear();
            encode(scratch);
            if scratch.len() > COMPACT_TAIL_BYTES {
                return scratch;
            }
            slot.key = key;
            slot.len = scratch.len() as u8;
            slot.bytes[..scratch.len()].copy_from_slice(scratch);
        }
        &slot.bytes[..slot.len as usize]
    }
}

type Job = Box<dyn FnOnce() + Send>;

/// Wall time the trace thread has spent on jobs, process-wide.
static TRACE_THREAD_BUSY_NS: AtomicU64 = AtomicU64::new(0);

/// Seconds the trace thread has spent filing edges so far in this process: the host time
/// recording costs beside the simulation thread's own share.
pub fn trace_thread_busy_seconds() -> f64 {
    TRACE_THREAD_BUSY_NS.load(Ordering::Relaxed) as f64 * 1e-9
}

/// The process's trace thread (`None` where it could not be started).
fn trace_thread() -> Option<&'static SyncSender<Job>> {
    static TRACE_THREAD: OnceLock<Option<SyncSender<Job>>> = OnceLock::new();
    TRACE_THREAD
        .get_or_init(|| {
            if std::env::var_os("WARPFORGE_TRACE_INLINE").is_some() {
                return None;
            }
            let (tx, rx) = sync_channel::<Job>(QUEUED_CHUNKS);
            std::thread::Builder::new()
                .name("trace-thread".into())
                .spawn(move || {
                    while let Ok(job) = rx.recv() {
                        let started = std::time::Instant::now();
                        job();
                        TRACE_THREAD_BUSY_NS
                            .fetch_add(started.elapsed().as_nanos() as u64, Ordering::Relaxed);
                    }
                })
                .ok()
                .map(|_| tx)
        })
        .as_ref()
}

/// Runs `job` on the trace thread, or here when there is none (or it has died: the job
/// then reports the same failure on this thread).
fn submit(job: Job) {
    match trace_thread() {
        Some(tx) => {
            if let Err(e) = tx.send(job) {
                (e.0)()
            }
        }
        None => job(),
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A poisoned lock means a job panicked; that panic has already been reported.
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The recording end a unit host holds: raw edges in, a [`TraceRecorder`] out.
pub struct TraceSink<U: Unit> {
    chunk: Vec<u64>,
    /// The cycle of the chunk's last edge (0 at its start): compact edges store the step.
    last_cycle: u64,
    /// The recorder's parameters, kept here so that reading them needs no wait for the
    /// trace thread (the scoreboard's host checks them at every launch).
    params: Params,

    shared: Arc<Shared<U>>,
}

/// What a sink shares with the jobs that file its chunks.
struct Shared<U: Unit> {
    /// The recorder, keeping raw records (see [`TraceRecorder::keep_raw`]).
    recorder: Mutex<TraceRecorder>,
    unit: std::marker::PhantomData<fn() -> U>,
    /// Filed chunks, emptied, for reuse: after the first few, handing a chunk over
    /// allocates nothing (a fresh chunk per hand-over cost page faults and cross-thread
    /// frees, more than the copying itself).
    spare: Mutex<Vec<Vec<u64>>>,
    /// Jobs of this sink queued or running on the trace thread (chunks and recorder
    /// changes).
    in_flight: AtomicUsize,
}

impl<U: Unit> Shared<U> {
    /// Files `chunk`'s edges under their instances in the recorder (the chunks of a sink
    /// in the order they were handed over) and keeps it for reuse.
    fn file(&self, mut chunk: Vec<u64>) {
        file_by_instance::<U::Recorded>(&chunk, &mut lock(&self.recorder));
        chunk.clear();
        lock(&self.spare).push(chunk);
    }
}

/// The last chunk of a sink whose recording ends ([`TraceSink::flush`]): queued for the
/// trace thread like any other, and filed by the thread that ends the recording instead
/// if it gets there first.
///
/// Why: when a run ends, every sink (two per SM: the warps' stacks and the scoreboard)
/// holds a partly filled chunk, and handling those tails is the whole wait for the traces
/// (10-16 ms a run when they were encoded, 2-4% of a short workload's simulation time).
/// The trace thread takes the tails from the first sink on, the ending thread from the
/// last one back, and they meet half way.
pub struct TraceTail(Box<dyn FnOnce() + Send>);

impl TraceTail {
    /// Files the tail on this thread, unless the trace thread has started it or still has
    /// earlier chunks of the same sink to file (they must go first).
    pub fn file_here_if_free(self) {
        (self.0)()
    }
}

/// Files the tails on this thread from the last one back while the trace thread takes
/// them from the first one on (see [`TraceTail`]).
pub fn file_tails(tails: Vec<TraceTail>) {
    tails
        .into_iter()
        .rev()
        .for_each(TraceTail::file_here_if_free);
}

impl<U: Unit> TraceSink<U> {
    pub fn new(mut recorder: TraceRecorder) -> TraceSink<U> {
        debug_assert!(std::ptr::eq(recorder.desc(), U::desc()));
        recorder.keep_raw(raw_codec::<U>());
        TraceSink {
            params: recorder.params().clone(),
            chunk: Vec::with_capacity(CHUNK_WORDS + 64),
            last_cycle: 0,
            shared: Arc::new(Shared {
                recorder: Mutex::new(recorder),
                unit: std::marker::PhantomData,
                spare: Mutex::default(),
                in_flight: AtomicUsize::new(0),
            }),
        }
    }

    /// Records instance `instance`'s edge at `cycle` (cycles must not decrease per
    /// instance).
    #[inline(always)]
    pub fn push(&mut self, instance: usize, cycle: u64, value: &U::Recorded) {
        push_edge(
            &mut self.chunk,
            &mut self.last_cycle,
            instance,
            cycle,
            value,
        );
        if self.chunk.len() >= CHUNK_WORDS {
            self.hand_over();
        }
    }

    /// Hands the chunk to the trace thread.
    #[cold]
    #[inline(never)]
    fn hand_over(&mut self) {
        if let Some(chunk) = self.take_chunk() {
            let shared = Arc::clone(&self.shared);
            submit(Box::new(move || {
                shared.file(chunk);
                shared.in_flight.fetch_sub(1, Ordering::Release);
            }));
        }
    }

    /// The chunk, counted in flight, replaced by an empty one; `None` when it is empty.
    fn take_chunk(&mut self) -> Option<Vec<u64>> {
        if self.chunk.is_empty() {
            return None;
        }
        let reused = lock(&self.shared.spare).pop();
        let next = reused.unwrap_or_else(|| Vec::with_capacity(CHUNK_WORDS + 64));
        self.last_cycle = 0;
        self.shared.in_flight.fetch_add(1, Ordering::Relaxed);
        Some(std::mem::replace(&mut self.chunk, next))
    }

    /// Hands the partly filled chunk over as a [`TraceTail`] (at the end of a recording,
    /// before [`TraceSink::finish`]); `None` when it is empty.
    pub fn flush(&mut self) -> Option<TraceTail> {
        let chunk = self.take_chunk()?;
        let slot = Arc::new(Mutex::new(Some(chunk)));
        let (queued, queued_slot) = (Arc::clone(&self.shared), Arc::clone(&slot));
        submit(Box::new(move || {
            if let Some(chunk) = lock(&queued_slot).take() {
                queued.file(chunk);
            }
            queued.in_flight.fetch_sub(1, Ordering::Release);
        }));
        let shared = Arc::clone(&self.shared);
        Some(TraceTail(Box::new(move || {
            // In flight: this tail alone, so every earlier chunk of the sink is filed.
            // Taking the chunk out of its slot decides who files it.
            if shared.in_flight.load(Ordering::Acquire) == 1 {
                let chunk = lock(&slot).take();
                if let Some(chunk) = chunk {
                    shared.file(chunk);
                }
            }
        })))
    }

    /// Waits until every edge recorded so far is filed.
    fn sync(&mut self) {
        self.hand_over();
        let (tx, rx) = sync_channel(1);
        submit(Box::new(move || {
            let _ = tx.send(());
        }));
        // Jobs run in order: once this one has, every earlier chunk is filed and its job
        // (with its handle on the recorder) dropped. An error means the trace thread died, after
        // which jobs run on this thread anyway.
        let _ = rx.recv();
    }

    /// The events filed so far, once every edge recorded so far is.
    #[cfg(test)]
    fn filed_events(&mut self) -> u64 {
        self.sync();
        lock(&self.shared.recorder).events()
    }

    /// Runs `change` on the recorder on the trace thread, after every edge recorded so far
    /// and before any recorded later, without waiting for it; `params` are the recorder's
    /// parameters after it (a re-encoding at wider ports).
    pub fn change_recorder(
        &mut self,
        params: Params,
        change: impl FnOnce(&mut TraceRecorder) + Send + 'static,
    ) {
        self.hand_over();
        self.params = params;
        let shared = Arc::clone(&self.shared);
        // Counted in flight like a chunk: a tail must not be filed before it.
        shared.in_flight.fetch_add(1, Ordering::Relaxed);
        submit(Box::new(move || {
            change(&mut lock(&shared.recorder));
            shared.in_flight.fetch_sub(1, Ordering::Release);
        }));
    }

    /// The parameters of the trace being recorded (no wait for the trace thread).
    pub fn params(&self) -> &Params {
        &self.params
    }

    /// The recorder with every recorded edge filed in it (as raw records: they are
    /// encoded when the trace is written or replayed).
    pub fn finish(mut self) -> TraceRecorder {
        self.sync();
        let mut recorder = lock(&self.shared.recorder);
        let empty = TraceRecorder::new(recorder.desc(), recorder.params().clone());
        std::mem::replace(&mut *recorder, empty)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::dpe_scoreboard::{
        DpeScoreboard, ScoreboardParams, ScoreboardPorts, SCOREBOARD_DESC,
    };
    use crate::units::simt_stack::{
        SeqUpdate, SimtStackSpe, SpeInputs, SpeParams, StackRecord, SPE_DESC,
    };
    use crate::units::trace::Trace;

    /// A sink's recorder holds the trace a recorder encoding in place (`direct`) holds:
    /// its raw records encode to the same bytes, and replay as the same events.
    fn assert_same_trace(sink: TraceRecorder, direct: TraceRecorder, what: &str) {
        let mut encoded = sink.clone();
        encoded.encode_raw();
        let raw = sink.into_trace("t");
        let (encoded, direct) = (encoded.into_trace("t"), direct.into_trace("t"));
        assert_eq!(encoded.header, direct.header, "{what}");
        assert_eq!(encoded.blobs, direct.blobs, "{what}");
        assert!(raw.blobs.is_empty(), "{what}: the sink's trace stays raw");
        let names = |t: &Trace| -> Vec<(String, u64)> {
            t.header
                .instances
                .iter()
                .map(|i| (i.name.clone(), i.events))
                .collect()
        };
        assert_eq!(names(&raw), names(&direct), "{what}");
        let (mut a, mut b) = (
            raw.desc.zero_ports(&raw.params),
            direct.desc.zero_ports(&direct.params),
        );
        for i in 0..direct.header.instances.len() {
            let (mut from_raw, mut from_bytes) = (raw.events(i), direct.events(i));
            let mut events = 0;
            loop {
                let cycle = from_raw.next_into(&mut a).unwrap();
                assert_eq!(
                    cycle,
                    from_bytes.next_into(&mut b).unwrap(),
                    "{what}: instance {i}"
                );
                if cycle.is_none() {
                    break;
                }
                for (p, port) in direct.desc.ports.iter().enumerate() {
                    if port.role.is_input() {
                        assert_eq!(
                            a[p], b[p],
                            "{what}: instance {i} event {events} {}",
                            port.name
                        );
                    }
                }
                events += 1;
            }
            assert_eq!(events, direct.header.instances[i].events, "{what}");
        }
    }

    fn spe_recorder() -> TraceRecorder {
        let mut rec = TraceRecorder::new(&SPE_DESC, SpeParams::default().to_params().unwrap());
        for i in 0..3 {
            rec.add_instance(format!("w{i}"));
        }
        rec
    }

    /// Edges of three instances, spanning several chunks, with the recorder read back
    /// mid-way (after a wait for the trace thread): the bytes are those of encoding in place,
    /// also with other sinks recording from other threads at the same time.
    #[test]
    fn off_thread_filing_gives_the_trace_of_encoding_in_place() {
        let run = |salt: u64| {
            let mut sink = TraceSink::<SimtStackSpe>::new(spe_recorder());
            let mut direct = spe_recorder();
            // Instance 2's cycles cross 2^48, where its headers take the wide form.
            let mut cycle = [0u64, 0, (1 << 48) - 3000];
            for k in 0..(3 * CHUNK_WORDS as u64 / 2 + 17) {
                let i = ((k * 7 + salt) % 3) as usize;
                // Steps past a compact edge's reach now and then.
                cycle[i] += 1 + (k % 5) + if k % 97 == 0 { 5000 } else { 0 };
                let pc = (k * 13 + salt) as u32;
                // Sequential updates (one-word edges) and launches (words of the group).
                let inp = if k % 3 == 0 {
                    SpeInputs::launch(pc, k ^ salt)
                } else {
                    SpeInputs::seq(pc, 0)
                };
                sink.push(i, cycle[i], &StackRecord(inp));
                direct.record_inputs(i, cycle[i], &inp);
                if k == CHUNK_WORDS as u64 / 4 + 5 {
                    assert_eq!(sink.filed_events(), k + 1, "all edges so far filed");
                }
            }
            assert_same_trace(sink.finish(), direct, &format!("salt {salt}"));
        };
        std::thread::scope(|s| {
            for salt in 0..3 {
                s.spawn(move || run(salt));
            }
        });
    }

    /// The tails of many sinks, filed by this thread and the trace thread at once
    /// ([`file_tails`]), give the bytes of encoding in place, also when a recorder change
    /// (here: a new instance, which the tail's edges use) is queued just before a tail.
    #[test]
    fn tails_shared_with_the_trace_thread_give_the_trace_of_encoding_in_place() {
        for round in 0..20u64 {
            let mut sinks = Vec::new();
            let mut directs = Vec::new();
            let mut tails = Vec::new();
            for s in 0..12u64 {
                let mut sink = TraceSink::<SimtStackSpe>::new(spe_recorder());
                let mut direct = spe_recorder();
                // Some sinks leave full chunks queued behind their tail; others none.
                let edges = (s * 977 + round * 131) % (2 * CHUNK_WORDS as u64) + 1;
                let mut cycle = 0;
                for k in 0..edges {
                    cycle += 1 + k % 3;
                    let inp = SpeInputs::seq((k * 7 + s) as u32, 0);
                    sink.push((k % 3) as usize, cycle, &StackRecord(inp));
                    direct.record_inputs((k % 3) as usize, cycle, &inp);
                }
                if s % 3 == 0 {
                    sink.change_recorder(sink.params().clone(), |rec| {
                        rec.add_instance("late".into());
                    });
                    direct.add_instance("late".into());
                    for k in 0..50 {
                        cycle += 1;
                        let inp = SpeInputs::launch(k, 1);
                        sink.push(3, cycle, &StackRecord(inp));
                        direct.record_inputs(3, cycle, &inp);
                    }
                }
                tails.extend(sink.flush());
                sinks.push(sink);
                directs.push(direct);
            }
            file_tails(tails);
            for (sink, direct) in sinks.into_iter().zip(directs) {
                assert_same_trace(sink.finish(), direct, &format!("round {round}"));
            }
        }
    }

    /// Every port group packs into raw words and back to the same value, for values with
    /// any subset of fields non-zero.
    #[test]
    fn port_groups_round_trip_through_raw_words() {
        use crate::units::simt_stack_dpe::DpeInputs;
        let mut words = Vec::new();
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for _ in 0..2000 {
            let r = next();
            let pick = |bit: u32, v: u64| if r >> bit & 1 != 0 { v } else { 0 };
            let spe = SpeInputs {
                launch_valid: r & 1 != 0,
                launch_pc: pick(1, next()) as u32,
                launch_mask: pick(2, next()),
                upd_valid: r >> 3 & 1 != 0,
                upd_pc: pick(4, next()) as u32,
                upd_kind: pick(5, next() & 3) as u8,
                upd_taken: pick(6, next()),
                upd_next: pick(7, next()) as u32,
                upd_rpc: pick(8, next()) as u32,
                ..Default::default()
            };
            let dpe = DpeInputs::update_from((r >> 9 & 1) as u8, &spe);
            let mut wcu = crate::units::wcu::WcuInputs {
                req_valid: r >> 10 & 1 != 0,
                req_umask: pick(11, next()) as u32,
                ..Default::default()
            };
            if r >> 12 & 1 != 0 {
                wcu.req_mask[(r >> 13 & 15) as usize] = next();
            }
            words.clear();
            spe.pack(&mut words);
            dpe.pack(&mut words);
            wcu.pack(&mut words);
            let (a, n) = SpeInputs::unpack(&words);
            let (b, m) = DpeInputs::unpack(&words[n..]);
            let (c, k) = crate::units::wcu::WcuInputs::unpack(&words[n + m..]);
            assert_eq!((a, b, c), (spe, dpe, wcu));
            assert_eq!(n + m + k, words.len());
            // The counts read without building the values.
            assert_eq!(SpeInputs::packed_len(&words), n);
            assert_eq!(DpeInputs::packed_len(&words[n..]), m);
            assert_eq!(crate::units::wcu::WcuInputs::packed_len(&words[n + m..]), k);
        }
    }

    /// A stack's sequential update (and only that) is one word, on either side of a DPE.
    #[test]
    fn stack_updates_are_compact_exactly_when_sequential() {
        use crate::timing::reconv::stack_update;
        use crate::units::simt_stack_dpe::DpeInputs;
        let seq = stack_update(41, &crate::exec::Flow::Seq);
        let payload = StackRecord(seq).compact().expect("sequential");
        assert_eq!(StackRecord::<SpeInputs>::from_compact(payload).0, seq);
        for side in 0..2 {
            let dpe = DpeInputs::update_from(side, &seq);
            let p = StackRecord(dpe).compact().expect("sequential");
            assert_eq!(StackRecord::<DpeInputs>::from_compact(p).0, dpe);
        }
        for other in [
            SpeInputs::launch(3, 0xff),
            SpeInputs {
                upd_taken: 1,
                ..seq
            },
            SpeInputs { upd_next: 7, ..seq },
            SpeInputs {
                launch_rpc: 1,
                ..seq
            },
        ] {
            assert_eq!(StackRecord(other).compact(), None, "{other:?}");
        }
    }

    /// A stack record's compact form is taken by exactly the sequential updates, for values
    /// that differ from one in any one field or none.
    #[test]
    fn the_compact_test_is_equality_with_a_sequential_update() {
        use crate::units::simt_stack_dpe::DpeInputs;
        let mut rng = crate::units::random_program::SplitMix64::new(7);
        for _ in 0..20_000 {
            let r = rng.next_u64();
            let pc = if r & 1 == 0 {
                u32::MAX
            } else {
                rng.next_u64() as u32
            };
            let side = (r >> 1 & 3) as u8;
            let v = rng.next_u64();
            let mut spe = SpeInputs::seq(pc, 0);
            let mut dpe = DpeInputs::seq(pc, side);
            // One field changed (or none), to a random value that may equal the old one.
            match r >> 3 & 15 {
                0 => (spe.launch_valid, dpe.launch_valid) = (v & 1 != 0, v & 1 != 0),
                1 => (spe.launch_pc, dpe.launch_pc) = (v as u32, v as u32),
                2 => (spe.launch_rpc, dpe.launch_rpc) = (v as u32 & 1, v as u32 & 1),
                3 => (spe.launch_mask, dpe.launch_mask) = (v & 3, v & 3),
                4 => (spe.upd_valid, dpe.upd_valid) = (v & 1 != 0, v & 1 != 0),
                5 => (spe.upd_kind, dpe.upd_kind) = (v as u8 & 3, v as u8 & 3),
                6 => (spe.upd_taken, dpe.upd_taken) = (v & 1, v & 1),
                7 => (spe.upd_target, dpe.upd_target) = (v as u32 & 1, v as u32 & 1),
                8 => (spe.upd_next, dpe.upd_next) = (v as u32 & 3, v as u32 & 3),
                9 => (spe.upd_rpc, dpe.upd_rpc) = (v as u32 & 1, v as u32 & 1),
                10 => (spe.upd_pc, dpe.upd_pc) = (v as u32, v as u32),
                _ => {}
            }
            let seq_spe = spe == SpeInputs::seq(spe.upd_pc, 0);
            assert_eq!(StackRecord(spe).compact().is_some(), seq_spe, "{spe:?}");
            let seq_dpe = dpe.upd_side < 2 && dpe == DpeInputs::seq(dpe.upd_pc, dpe.upd_side);
            assert_eq!(StackRecord(dpe).compact().is_some(), seq_dpe, "{dpe:?}");
        }
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
            sink.push(0, c, sb.staged());
            direct.record_inputs(0, c, &sb.staged_port_values(&ScoreboardPorts::of(&p)));
            sb.tick();
        }
        assert_same_trace(sink.finish(), direct, "scoreboard");
    }

    /// The table gives back what `encode` wrote for a payload, encodes again only for a
    /// payload it does not hold (a new one, or one that lost its slot), and
    /// never keeps a tail longer than a slot.
    #[test]
    fn compact_tails_keep_exactly_the_bytes_encoded_for_each_payload() {
        let bytes_of = |payload: u64| -> Vec<u8> {
            // Lengths 1..=40: some too long for a slot.
            let len = (payload % 40 + 1) as usize;
            (0..len).map(|i| (payload as usize * 7 + i) as u8).collect()
        };
        let mut tails = CompactTails::new();
        let mut encodes = 0;
        for _round in 0..2 {
            for payload in (0..2000u64).chain(0..2000) {
                let mut encoded = false;
                let tail = tails.tail(payload, |out| {
                    encoded = true;
                    out.extend(bytes_of(payload))
                });
                assert_eq!(tail, &bytes_of(payload)[..], "payload {payload}");
                encodes += encoded as u32;
                let kept = tails.get(payload).map(<[u8]>::to_vec);
                let fits = bytes_of(payload).len() <= COMPACT_TAIL_BYTES;
                assert_eq!(kept, fits.then(|| bytes_of(payload)), "payload {payload}");
            }
        }
        // 2000 payloads in 256 slots: most lost their slot before they came back.
        assert!(encodes > 2 * 2000, "{encodes} encodes");
    }
}
