//! Trace recording on the simulation thread at the cost of a copy, and the raw records a
//! trace keeps until it is replayed or written.
//!
//! A [`TraceSink`] appends each edge's raw record (a header word with the instance and
//! cycle, then the unit's [`Unit::Recorded`] value as [`RawRecord`] words) to a chunk of
//! words, and keeps the chunks. Nothing else happens while the simulation runs. When the
//! trace is used, its chunks are filed under their instances, still as raw words (the same
//! framing, one stream per instance, [`RawCodec::file`]); a co-simulation in the same
//! process then replays the raw records ([`RawCodec::events`], through
//! [`Unit::recorded_inputs`]), and only a trace file encodes them into the trace format
//! ([`RawCodec::encode`], into exactly the bytes of encoding in place).
//!
//! Why: encoding an edge into trace bytes (LEB128 varints of every non-idle input, the
//! scoreboard's port arrays packed into fields) cost 100-500 host instructions, several
//! times the unit's own clock edge. Until 2026-11-27 a thread beside the simulation
//! encoded the chunks; but on this project's machines work on the second core slows the
//! simulation on the first (README, "Speed"), so that thread's work counted in the
//! simulation's time even though none of it ran there. A co-simulation in the same process
//! has no use for the bytes, and replaying raw records is cheaper than decoding varints.
//!
//! Why variable-length words rather than the values as they are: what recording costs the
//! simulation is mostly memory traffic and stalls, not instructions, and a stream of fixed
//! 232-byte scoreboard records evicted the simulation's own data from its L2. Most edges
//! are one word ([`RawRecord::compact`]: a stack's sequential update, a scoreboard cycle
//! with at most two operations); the rest are a header and the value's words.
//!
//! Memory: the raw records are the trace, 8 bytes per compact edge (the encoded trace:
//! 2-5), held until the trace is replayed or written.

use super::contract::Params;
use super::declare::Unit;
use super::declare::{PortGroup, UnitParams};
use super::trace::{RawCodec, RawEvents, TraceRecorder};

/// Words per chunk (64 KiB). A chunk is full at the first edge that ends past it.
const CHUNK_WORDS: usize = 8192;

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

/// The one-word form of a compact edge, if its instance and its cycle's step fit it;
/// `last_cycle` is the previous edge's cycle in the stream (0 at its start), and becomes
/// this one's when the edge takes the form.
#[inline(always)]
fn compact_word(last_cycle: &mut u64, instance: usize, cycle: u64, payload: u64) -> Option<u64> {
    debug_assert!(payload >> COMPACT_PAYLOAD_BITS == 0);
    let step = cycle.wrapping_sub(*last_cycle);
    if instance >> COMPACT_INSTANCE_BITS != 0 || step >> COMPACT_STEP_BITS != 0 {
        return None;
    }
    *last_cycle = cycle;
    Some(
        payload << COMPACT_PAYLOAD_AT
            | step << COMPACT_STEP_AT
            | (instance as u64) << TAG_BITS
            | TAG_COMPACT,
    )
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
    compact_word(last_cycle, instance, cycle, payload)
        .map(|w| out.push(w))
        .is_some()
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

/// Files the edges of a chunk under their instances in `rec` (the chunk's instance 0 is
/// `rec`'s `first_instance`), as raw records (see [`TraceRecorder::keep_raw`]): about 90
/// host instructions per edge on mandelbrot, most of them the copy. A compact edge stays
/// one word unless its instance's cycle step outgrows the compact form; a value's words are
/// copied as they are.
fn file_by_instance<R: RawRecord>(chunk: &[u64], first_instance: usize, rec: &mut TraceRecorder) {
    let (mut at, mut chunk_cycle) = (0, 0u64);
    while at < chunk.len() {
        let (instance, cycle, framed) = next_framed(chunk, &mut at, &mut chunk_cycle);
        let (out, last_cycle) = rec.raw_event(first_instance + instance as usize, cycle);
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

/// Files the chunks a trace sink recorded into `rec` under their instances (the
/// [`RawCodec::file`] of unit `U`), each chunk freed once filed.
fn file_chunks<U: Unit>(rec: &mut TraceRecorder) {
    for (chunks, first_instance) in rec.take_chunks() {
        for chunk in chunks {
            file_by_instance::<U::Recorded>(&chunk, first_instance, rec);
        }
    }
}

/// The raw-record codec of unit `U`, for its trace sinks' recorders.
fn raw_codec<U: Unit>() -> RawCodec {
    RawCodec {
        file: file_chunks::<U>,
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

/// An empty chunk whose pages are already mapped.
///
/// Why: a trace is tens of megabytes of fresh memory, and the first touch of each 4 KiB
/// page of it is a page fault, a trap into the kernel: 6,450 of them on mandelbrot. One
/// `MADV_POPULATE_WRITE` per chunk maps its pages in one system call instead (measured by
/// sampling mandelbrot's recording runs: `exc_page_fault` 0.7-0.8% → 0.1-0.2% of the
/// samples, kernel time 6.2-6.5% → 5.2-5.3%; what is left is clearing and charging the
/// pages, which any first use of fresh memory pays). Where the kernel lacks it (before
/// Linux 5.14) the call fails and the pages fault in as before.
fn new_chunk() -> Vec<u64> {
    let mut chunk = Vec::with_capacity(CHUNK_WORDS + EDGE_WORDS);
    // Best effort: without it the pages fault in one at a time, as before.
    let _ = populate_spare(&mut chunk);
    chunk
}

/// Maps the whole pages of `words`' spare capacity (its bytes past `len`).
fn populate_spare(words: &mut Vec<u64>) -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        const PAGE: usize = 4096;
        let spare = words.spare_capacity_mut();
        let (addr, len) = (spare.as_mut_ptr() as usize, std::mem::size_of_val(spare));
        let start = addr.next_multiple_of(PAGE);
        let end = (addr + len) / PAGE * PAGE;
        if end > start {
            // SAFETY: the range is whole pages inside `words`' spare capacity, which the
            // `&mut` borrow owns and nothing reads; populating maps the pages and changes
            // no byte of them.
            let r = unsafe {
                libc::madvise(
                    start as *mut libc::c_void,
                    end - start,
                    libc::MADV_POPULATE_WRITE,
                )
            };
            if r != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = words;
    Ok(())
}

/// Spare words of a chunk past [`CHUNK_WORDS`], where it is closed: room for its last edge
/// (a scoreboard edge is at most 21 words), so it is not reallocated.
const EDGE_WORDS: usize = 64;

/// Appends `word` to `chunk` with a non-temporal store (x86-64), which goes to memory
/// without taking a cache line.
///
/// Why: the trace is tens of megabytes written once and read only after the run. Written
/// through the cache, every line of it first evicts a line of the simulation's own state
/// and reads the line from memory before writing it. Measured on 2026-11-28 with `bench
/// --record-traces --against` the same source with plain stores (alternating runs, every
/// workload): the pairs' median 1.6% faster (95% interval -0.5% .. +6.0%), for about 1%
/// more host instructions (the multi-word edges are copied once more).
#[inline(always)]
fn stream_word(chunk: &mut Vec<u64>, word: u64) {
    stream_words(chunk, &[word])
}

/// Appends `words` to `chunk` as [`stream_word`] does.
#[inline(always)]
fn stream_words(chunk: &mut Vec<u64>, words: &[u64]) {
    #[cfg(target_arch = "x86_64")]
    if chunk.capacity() - chunk.len() >= words.len() {
        let len = chunk.len();
        // SAFETY: the `words.len()` slots past `len` are inside the capacity (checked), so
        // each store stays in `chunk`'s allocation, and after the loop they are initialised,
        // which is what `set_len` needs. SSE2, which `_mm_stream_si64` needs, is part of
        // x86-64. Nothing reads the chunk's memory before `stream_fence` (the sink fences
        // when it closes a chunk and when it finishes, before the chunk leaves it).
        unsafe {
            let at = chunk.as_mut_ptr().add(len);
            for (i, &w) in words.iter().enumerate() {
                std::arch::x86_64::_mm_stream_si64(at.add(i).cast::<i64>(), w as i64);
            }
            chunk.set_len(len + words.len());
        }
        return;
    }
    chunk.extend_from_slice(words);
}

/// Orders the non-temporal stores of [`stream_words`] before any later access to the
/// chunks, from this thread or another one.
#[inline]
fn stream_fence() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a store fence has no preconditions (SSE, part of x86-64).
    unsafe {
        std::arch::x86_64::_mm_sfence()
    }
}

/// Calls [`stream_fence`] when dropped.
struct StreamFenceOnDrop;

impl Drop for StreamFenceOnDrop {
    fn drop(&mut self) {
        stream_fence();
    }
}

/// The recording end a unit host holds: raw edges in, a [`TraceRecorder`] out.
pub struct TraceSink<U: Unit> {
    /// Declared first, so dropped first: a sink dropped unfinished (a run that ends in an
    /// error) fences its streamed stores before its chunks are freed.
    _fence: StreamFenceOnDrop,
    chunk: Vec<u64>,
    /// An edge of more than one word, assembled before it is streamed into `chunk`.
    edge: Vec<u64>,
    /// The cycle of the chunk's last edge (0 at its start): compact edges store the step.
    last_cycle: u64,
    /// Full chunks, in recording order.
    chunks: Vec<Vec<u64>>,
    /// Edges recorded (the recorder counts them per instance only once they are filed).
    edges: u64,
    /// The recorder, keeping raw records (see [`TraceRecorder::keep_raw`]).
    recorder: TraceRecorder,
    unit: std::marker::PhantomData<fn() -> U>,
}

impl<U: Unit> TraceSink<U> {
    pub fn new(mut recorder: TraceRecorder) -> TraceSink<U> {
        debug_assert!(std::ptr::eq(recorder.desc(), U::desc()));
        recorder.keep_raw(raw_codec::<U>());
        TraceSink {
            _fence: StreamFenceOnDrop,
            chunk: new_chunk(),
            edge: Vec::with_capacity(EDGE_WORDS),
            last_cycle: 0,
            chunks: Vec::new(),
            edges: 0,
            recorder,
            unit: std::marker::PhantomData,
        }
    }

    /// Records instance `instance`'s edge at `cycle` (cycles must not decrease per
    /// instance).
    #[inline(always)]
    pub fn push(&mut self, instance: usize, cycle: u64, value: &U::Recorded) {
        if let Some(word) = value
            .compact()
            .and_then(|payload| compact_word(&mut self.last_cycle, instance, cycle, payload))
        {
            stream_word(&mut self.chunk, word);
        } else {
            self.push_framed(instance, cycle, |out| value.pack(out));
        }
        self.edge_written();
    }

    /// Records instance `instance`'s edge at `cycle` whose value's compact form is
    /// `payload` (see [`super::host::UnitHost::tick_compact`]); `value` gives the value for
    /// the rare edge whose instance or cycle step does not fit the one-word form.
    #[inline(always)]
    pub fn push_compact(
        &mut self,
        instance: usize,
        cycle: u64,
        payload: u64,
        value: impl FnOnce() -> U::Recorded,
    ) {
        match compact_word(&mut self.last_cycle, instance, cycle, payload) {
            Some(word) => stream_word(&mut self.chunk, word),
            None => self.push_framed(instance, cycle, |out| value().pack(out)),
        }
        self.edge_written();
    }

    /// Writes an edge as a header and the words `pack` appends: assembled in `edge` (which
    /// stays in cache), then streamed into the chunk.
    #[inline(always)]
    fn push_framed(&mut self, instance: usize, cycle: u64, pack: impl FnOnce(&mut Vec<u64>)) {
        self.edge.clear();
        push_header(&mut self.edge, &mut self.last_cycle, instance, cycle);
        pack(&mut self.edge);
        stream_words(&mut self.chunk, &self.edge);
    }

    /// Counts the edge just written and starts a new chunk when this one is full.
    #[inline(always)]
    fn edge_written(&mut self) {
        self.edges += 1;
        if self.chunk.len() >= CHUNK_WORDS {
            self.next_chunk();
        }
    }

    /// Keeps the full chunk and starts a new one.
    #[cold]
    #[inline(never)]
    fn next_chunk(&mut self) {
        stream_fence();
        let full = std::mem::replace(&mut self.chunk, new_chunk());
        self.chunks.push(full);
        self.last_cycle = 0;
    }

    /// Runs `change` on the recorder (a new instance, or the scoreboard's trace widening to
    /// wider parameters, [`TraceRecorder::relayout`]): it applies to the edges recorded so
    /// far too, since they are laid out only when replayed or written.
    pub fn change_recorder(&mut self, change: impl FnOnce(&mut TraceRecorder)) {
        change(&mut self.recorder)
    }

    /// The parameters of the trace being recorded.
    pub fn params(&self) -> &Params {
        self.recorder.params()
    }

    /// Edges recorded so far.
    pub fn edges(&self) -> u64 {
        self.edges
    }

    /// The recorder holding every recorded edge, as raw chunks: filed under their
    /// instances when the trace is replayed or written (not here: this runs inside the
    /// simulation's timed window).
    pub fn finish(mut self) -> TraceRecorder {
        stream_fence();
        if !self.chunk.is_empty() {
            // Of a GPU's two sinks per SM per run, kept until the co-simulation.
            self.chunk.shrink_to_fit();
            self.chunks.push(self.chunk);
        }
        self.recorder.add_chunks(self.chunks, self.edges);
        self.recorder
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

    #[test]
    fn streamed_words_land_in_order_within_the_capacity_and_beyond_it() {
        // Within the spare capacity the words are streamed in place (no reallocation);
        // past it they are appended as by `extend_from_slice`.
        let mut chunk = Vec::with_capacity(4);
        let at = chunk.as_ptr();
        stream_word(&mut chunk, 1);
        stream_words(&mut chunk, &[2, 3]);
        stream_fence();
        assert_eq!(chunk, [1, 2, 3]);
        assert_eq!(chunk.as_ptr(), at);
        stream_words(&mut chunk, &[4, 5, 6]);
        stream_fence();
        assert_eq!(chunk, [1, 2, 3, 4, 5, 6]);
    }

    /// Populating pages maps them and nothing else: a chunk starts empty with room for a
    /// whole chunk, and words already written stay as they are. The call succeeds (or,
    /// on a kernel before Linux 5.14, is refused as an unknown advice).
    #[test]
    fn populated_chunks_are_empty_and_populating_keeps_the_bytes() {
        let chunk = new_chunk();
        assert!(chunk.is_empty() && chunk.capacity() >= CHUNK_WORDS + 64);
        let pattern = |i: usize| i as u64 * 0x9e37_79b9 + 1;
        let mut words: Vec<u64> = Vec::with_capacity(5 * 512);
        words.extend((0..512 + 7).map(pattern));
        match populate_spare(&mut words) {
            Ok(()) => {}
            #[cfg(target_os = "linux")]
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {}
            Err(e) => panic!("populating the spare pages failed: {e}"),
        }
        words.extend((512 + 7..5 * 512).map(pattern));
        assert!(words.iter().enumerate().all(|(i, &w)| w == pattern(i)));
    }

    /// Edges of three instances, spanning several chunks: the sink's trace is the trace of
    /// encoding in place.
    #[test]
    fn a_sink_gives_the_trace_of_encoding_in_place() {
        for salt in 0..3 {
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
            }
            assert_eq!(sink.edges(), 3 * CHUNK_WORDS as u64 / 2 + 17);
            let rec = sink.finish();
            assert_eq!(
                rec.events(),
                3 * CHUNK_WORDS as u64 / 2 + 17,
                "counted unfiled"
            );
            assert_same_trace(rec, direct, &format!("salt {salt}"));
        }
    }

    /// The sinks of several SMs, absorbed into one recorder as the GPU does, give the trace
    /// of their recorders encoding in place absorbed the same way (each sink's instances
    /// after those of the sinks before), also when an instance is added to a sink mid-way
    /// (a recorder change, which the later edges use).
    #[test]
    fn absorbed_sinks_give_the_trace_of_encoding_in_place() {
        for round in 0..6u64 {
            let (mut all, mut all_direct): (Option<TraceRecorder>, Option<TraceRecorder>) =
                (None, None);
            for s in 0..5u64 {
                let mut sink = TraceSink::<SimtStackSpe>::new(spe_recorder());
                let mut direct = spe_recorder();
                // Some sinks fill several chunks, others part of one, one none at all.
                let edges = (s * 977 + round * 131) % (2 * CHUNK_WORDS as u64) * (s != 2) as u64;
                let mut cycle = 0;
                for k in 0..edges {
                    cycle += 1 + k % 3;
                    let inp = SpeInputs::seq((k * 7 + s) as u32, 0);
                    sink.push((k % 3) as usize, cycle, &StackRecord(inp));
                    direct.record_inputs((k % 3) as usize, cycle, &inp);
                }
                if s % 2 == 0 {
                    sink.change_recorder(|rec| {
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
                match (&mut all, &mut all_direct) {
                    (Some(a), Some(d)) => {
                        a.absorb(sink.finish());
                        d.absorb(direct);
                    }
                    _ => (all, all_direct) = (Some(sink.finish()), Some(direct)),
                }
            }
            let (all, all_direct) = (all.unwrap(), all_direct.unwrap());
            assert_same_trace(all, all_direct, &format!("round {round}"));
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
