//! Port traces of hardware units recorded while the GPU model runs a workload
//! (`warpforge run --record-unit U --trace FILE`), replayed against the RTL by the
//! co-simulator.
//!
//! A trace holds one unit kind at one parameter set and any number of *instances* (every
//! warp's stack, every SM's scoreboard...). Per instance it stores the cycles on which the
//! unit saw non-idle inputs, with every input port's value. Between two recorded cycles the
//! unit saw idle inputs: every input 0 except `rst_n` = 1. Each instance starts from reset.
//!
//! A trace recorded by the GPU model keeps the unit's raw records in memory (see
//! [`TraceRecorder::keep_raw`] and `trace_sink`): a co-simulation in the same process
//! replays them as they are, and only [`TraceRecorder::write`] encodes them into the file
//! format below.
//!
//! File format (version 2), designed to be small and streamable:
//! ```text
//! WFTRACE 2\n
//! <header: one line of JSON>\n
//! <instance 0 bytes><instance 1 bytes>...
//! ```
//! The header names the unit, its parameters, the source (workload, config) and, per
//! instance, its name, event count and byte length. An instance's bytes are its events. An
//! event is LEB128 varints: the cycle delta from the previous event (the first: from 0);
//! a presence mask, bit `k` set when input port `k` (in port-list order, `rst_n` first)
//! differs from its idle value (`rst_n` 1, every other input 0); then each present port's
//! 64-bit words, low word first. Version 1 wrote every port of every event; most ports of a recorded cycle are
//! idle (a sequential stack update drives 3 of 11), so version 2 traces are about half the
//! size and cost about half the recording time.

use super::contract::{Bits, Params, Role, UnitDesc};
use super::declare::{PortGroup, PortWidth};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;

const MAGIC: &str = "WFTRACE 2";

/// The JSON header of a trace file.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct TraceHeader {
    pub unit: String,
    pub params: BTreeMap<String, u64>,
    /// What produced the trace (e.g. `workload bfs, size tiny, config gtx480`).
    pub source: String,
    pub instances: Vec<InstanceHeader>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct InstanceHeader {
    pub name: String,
    pub events: u64,
    /// The size of its events: in a file, their encoded bytes; in a trace recorded in this
    /// process (and not written), its raw records' bytes.
    pub bytes: u64,
}

/// Records the input traffic of every instance of one unit.
#[derive(Clone)]
pub struct TraceRecorder {
    desc: &'static UnitDesc,
    params: Params,
    /// Positions of the input ports in the port list.
    inputs: Vec<usize>,
    /// Scratch port values the caller fills for one event.
    scratch: Vec<Bits>,
    /// Per input port after `rst_n`, in port order: its width, for
    /// [`TraceRecorder::record_inputs`].
    input_widths: Vec<PortWidth>,
    /// The most bytes one event encodes to (delta, mask, every word of every input).
    max_event_bytes: usize,
    instances: Vec<InstanceRecord>,
    /// Set while the recorder keeps raw records (a trace sink's: see
    /// [`TraceRecorder::keep_raw`]).
    raw: Option<RawCodec>,
    /// A trace sink's chunks not filed under their instances yet, each list with the
    /// recorder's instance that is its instance 0.
    chunks: Vec<(Vec<Vec<u64>>, usize)>,
    /// The edges in `chunks`.
    chunk_edges: u64,
}

/// How the unit of a recorder that keeps raw records (a trace sink's) reads them back: the
/// functions `trace_sink` instantiates for the unit's [`super::declare::Unit::Recorded`].
#[derive(Clone, Copy)]
pub struct RawCodec {
    /// Files a recorder's chunks ([`TraceRecorder::add_chunks`]) under their instances.
    pub file: fn(&mut TraceRecorder),
    /// Encodes a recorder's filed raw records into its trace bytes (for a trace file).
    pub encode: fn(&mut TraceRecorder),
    /// One instance's raw records as events at the trace's parameters (for a replay).
    pub events: for<'a> fn(&'a [u64], &Params) -> RawEvents<'a>,
}

/// Writes the next event's inputs into the input positions of the ports given (`rst_n`
/// included) and returns its cycle; `None` after the last event.
pub type RawEvents<'a> = Box<dyn FnMut(&mut [Bits]) -> Option<u64> + Send + 'a>;

#[derive(Clone)]
struct InstanceRecord {
    name: String,
    /// The cycle of the last event (0 before the first).
    last_cycle: u64,
    events: u64,
    /// The instance's encoded events.
    bytes: Vec<u8>,
    /// The instance's raw records, while the recorder keeps them.
    raw: Vec<u64>,
}

impl TraceRecorder {
    pub fn new(desc: &'static UnitDesc, params: Params) -> TraceRecorder {
        let inputs: Vec<usize> = (0..desc.ports.len())
            .filter(|&i| desc.ports[i].role.is_input())
            .collect();
        let scratch = desc.zero_ports(&params);
        // A unit declaration with more inputs is a programming error, not user input.
        assert!(
            inputs.len() <= 64,
            "{}: more than 64 input ports",
            desc.name
        );
        let input_widths = Self::input_widths(desc, &inputs, &params);
        let max_event_bytes = Self::max_event_bytes(&input_widths);
        TraceRecorder {
            desc,
            params,
            inputs,
            scratch,
            input_widths,
            max_event_bytes,
            instances: Vec::new(),
            raw: None,
            chunks: Vec::new(),
            chunk_edges: 0,
        }
    }

    /// Adds a trace sink's chunks of raw edges (`edges` of them), to be filed under their
    /// instances when the trace is replayed or written.
    pub(crate) fn add_chunks(&mut self, chunks: Vec<Vec<u64>>, edges: u64) {
        debug_assert!(self.raw.is_some());
        if !chunks.is_empty() {
            self.chunks.push((chunks, 0));
            self.chunk_edges += edges;
        }
    }

    /// Takes the chunks out, to be filed (by [`RawCodec::file`]).
    pub(crate) fn take_chunks(&mut self) -> Vec<(Vec<Vec<u64>>, usize)> {
        self.chunk_edges = 0;
        std::mem::take(&mut self.chunks)
    }

    /// Files the chunks not filed yet under their instances.
    fn file_chunks(&mut self) {
        if let (Some(codec), false) = (self.raw, self.chunks.is_empty()) {
            (codec.file)(self);
        }
    }

    /// Keep the events as the unit's raw records (a trace sink's framing of
    /// [`super::trace_sink::RawRecord`] words, one stream per instance) instead of encoding
    /// them: a replay in this process reads them through `codec` ([`Trace::events`]), and
    /// only a trace file has them encoded (why: see `trace_sink`). Only for a recorder with
    /// no events yet.
    pub fn keep_raw(&mut self, codec: RawCodec) {
        assert_eq!(self.events(), 0, "keep_raw on a recorder with events");
        self.raw = Some(codec);
    }

    /// For a recorder keeping raw records: counts an event of instance `inst` at `cycle`
    /// and returns the instance's raw words and the cycle of its previous event, for the
    /// caller to append the event's record.
    #[inline(always)]
    pub(crate) fn raw_event(&mut self, inst: usize, cycle: u64) -> (&mut Vec<u64>, &mut u64) {
        debug_assert!(self.raw.is_some());
        let rec = &mut self.instances[inst];
        debug_assert!(cycle > rec.last_cycle || rec.events == 0);
        rec.events += 1;
        (&mut rec.raw, &mut rec.last_cycle)
    }

    /// Takes instance `inst`'s raw records out, to be encoded: the instance then has no
    /// events.
    pub(crate) fn take_raw(&mut self, inst: usize) -> Vec<u64> {
        let rec = &mut self.instances[inst];
        rec.events = 0;
        rec.last_cycle = 0;
        std::mem::take(&mut rec.raw)
    }

    pub(crate) fn instance_count(&self) -> usize {
        self.instances.len()
    }

    /// Encodes the raw records, if the recorder keeps them: afterwards it holds trace
    /// bytes only.
    pub fn encode_raw(&mut self) {
        self.file_chunks();
        if let Some(codec) = self.raw.take() {
            (codec.encode)(self);
        }
    }

    pub fn desc(&self) -> &'static UnitDesc {
        self.desc
    }

    /// The widths of the input ports after `rst_n` at `params`.
    fn input_widths(desc: &UnitDesc, inputs: &[usize], params: &Params) -> Vec<PortWidth> {
        let widths = desc.widths(params);
        inputs
            .iter()
            .skip(1)
            .map(|&i| PortWidth::of(widths[i]))
            .collect()
    }

    fn max_event_bytes(input_widths: &[PortWidth]) -> usize {
        let words: usize = input_widths
            .iter()
            .map(|w| w.bits.div_ceil(64).max(1) as usize)
            .sum();
        // The delta, the presence mask, the words.
        (2 + words) * MAX_VARINT_BYTES
    }

    /// Add an instance; returns its index for [`TraceRecorder::record`].
    pub fn add_instance(&mut self, name: String) -> usize {
        self.instances.push(InstanceRecord {
            name,
            last_cycle: 0,
            events: 0,
            bytes: Vec::new(),
            raw: Vec::new(),
        });
        self.instances.len() - 1
    }

    /// Record the inputs instance `inst` sees at `cycle` (cycles must not decrease per
    /// instance). `fill` writes the input ports; it starts from all-zero inputs with
    /// `rst_n` = 1.
    pub fn record(&mut self, inst: usize, cycle: u64, fill: impl FnOnce(&mut [Bits])) {
        for &i in &self.inputs {
            self.scratch[i].clear();
        }
        self.scratch[0].set_u64(1); // rst_n
        fill(&mut self.scratch);
        debug_assert!(self.raw.is_none(), "a recorder keeping raw records");
        let rec = &mut self.instances[inst];
        debug_assert!(cycle > rec.last_cycle || rec.events == 0);
        let delta = cycle.saturating_sub(rec.last_cycle);
        rec.last_cycle = cycle;
        rec.events += 1;
        encode_event(&mut rec.bytes, delta, &self.inputs, &self.scratch);
    }

    /// Record the unit's typed inputs `inp` at `cycle` for instance `inst`: the same bytes
    /// as [`TraceRecorder::record`] with `inp.write_ports`, encoded from the typed fields
    /// straight to varints (no port values in between: this runs once per recorded edge).
    #[inline]
    pub fn record_inputs<G: PortGroup>(&mut self, inst: usize, cycle: u64, inp: &G) {
        debug_assert_eq!(G::POSITIONS, &self.inputs[1..], "the unit's input group");
        debug_assert!(self.raw.is_none(), "a recorder keeping raw records");
        let rec = &mut self.instances[inst];
        debug_assert!(cycle > rec.last_cycle || rec.events == 0);
        let delta = cycle.saturating_sub(rec.last_cycle);
        rec.last_cycle = cycle;
        rec.events += 1;
        // Written straight into reserved capacity: most varints are one byte, and a growth
        // check per byte cost more than the encoding itself.
        let widths = &self.input_widths;
        append(&mut rec.bytes, self.max_event_bytes, |out| {
            out.varint(delta);
            write_inputs(out, widths, inp);
        });
    }

    /// Appends to `out` the bytes [`TraceRecorder::record_inputs`] writes for `inp` after the
    /// cycle delta, for [`TraceRecorder::record_encoded`] (encoding a trace file keeps them
    /// for values that recur).
    #[inline]
    pub fn encode_inputs<G: PortGroup>(&self, inp: &G, out: &mut Vec<u8>) {
        debug_assert_eq!(G::POSITIONS, &self.inputs[1..], "the unit's input group");
        append(out, self.max_event_bytes, |o| {
            write_inputs(o, &self.input_widths, inp)
        });
    }

    /// Records an event of instance `inst` at `cycle` whose bytes after the cycle delta
    /// are `tail` (from [`TraceRecorder::encode_inputs`] at this recorder's parameters).
    #[inline]
    pub fn record_encoded(&mut self, inst: usize, cycle: u64, tail: &[u8]) {
        let rec = &mut self.instances[inst];
        debug_assert!(cycle > rec.last_cycle || rec.events == 0);
        let delta = cycle.saturating_sub(rec.last_cycle);
        rec.last_cycle = cycle;
        rec.events += 1;
        append(&mut rec.bytes, MAX_VARINT_BYTES + tail.len(), |out| {
            out.varint(delta);
            out.bytes(tail);
        });
    }

    /// The parameters the events are encoded for (the trace header's).
    pub fn params(&self) -> &Params {
        &self.params
    }

    /// Lays the events out at `params` (of the same unit) from now on, those recorded so
    /// far included: for a unit whose recorded form does not depend on its parameters and
    /// is laid out when used ([`super::declare::Unit::recorded_inputs`]), such as the
    /// scoreboard's staged operations, whose trace widens `NUM_REGS` when a later launch
    /// uses more registers. Refused for a recorder that has encoded events already.
    pub fn relayout(&mut self, params: Params) -> Result<(), String> {
        if self.raw.is_none() && self.events() > 0 {
            return Err(format!(
                "{}: cannot lay out encoded events at other parameters",
                self.desc.name
            ));
        }
        self.scratch = self.desc.zero_ports(&params);
        self.input_widths = Self::input_widths(self.desc, &self.inputs, &params);
        self.max_event_bytes = Self::max_event_bytes(&self.input_widths);
        self.params = params;
        Ok(())
    }

    /// Append the instances of `other` (another SM's recorder of the same unit).
    pub fn absorb(&mut self, mut other: TraceRecorder) {
        if self.raw.is_some() != other.raw.is_some() {
            self.encode_raw();
            other.encode_raw();
        }
        // `other`'s instance 0 becomes this one's instance `offset`.
        let offset = self.instances.len();
        self.chunks.extend(
            other
                .chunks
                .drain(..)
                .map(|(chunks, first)| (chunks, first + offset)),
        );
        self.chunk_edges += other.chunk_edges;
        self.instances.extend(other.instances);
    }

    /// Total events recorded.
    pub fn events(&self) -> u64 {
        self.chunk_edges + self.instances.iter().map(|i| i.events).sum::<u64>()
    }

    /// Write the trace file; instances with no events are left out.
    pub fn write(&mut self, path: &Path, source: &str) -> Result<(), String> {
        self.encode_raw();
        let kept: Vec<&InstanceRecord> = self.instances.iter().filter(|i| i.events > 0).collect();
        let header = self.header(&kept, source);
        let write = || -> std::io::Result<()> {
            let mut f = std::io::BufWriter::new(std::fs::File::create(path)?);
            writeln!(f, "{MAGIC}")?;
            serde_json::to_writer(&mut f, &header)?;
            writeln!(f)?;
            for i in &kept {
                f.write_all(&i.bytes)?;
            }
            f.flush()
        };
        write().map_err(|e| format!("cannot write trace {}: {e}", path.display()))
    }

    /// The trace in memory, as [`Trace::read`] would return it from the written file.
    /// Raw records stay raw (see [`TraceRecorder::keep_raw`]): the replay decodes them.
    pub fn into_trace(mut self, source: &str) -> Trace {
        self.file_chunks();
        let kept: Vec<InstanceRecord> = self
            .instances
            .into_iter()
            .filter(|i| i.events > 0)
            .collect();
        let refs: Vec<&InstanceRecord> = kept.iter().collect();
        let header = Self::header_of(self.desc, &self.params, &refs, source);
        let (blobs, raw) = match self.raw {
            Some(codec) => (
                Vec::new(),
                Some(RawTrace {
                    instances: kept.into_iter().map(|i| i.raw).collect(),
                    codec,
                }),
            ),
            None => (kept.into_iter().map(|i| i.bytes).collect(), None),
        };
        Trace {
            header,
            desc: self.desc,
            params: self.params,
            blobs,
            raw,
        }
    }

    fn header(&self, kept: &[&InstanceRecord], source: &str) -> TraceHeader {
        Self::header_of(self.desc, &self.params, kept, source)
    }

    fn header_of(
        desc: &UnitDesc,
        params: &Params,
        kept: &[&InstanceRecord],
        source: &str,
    ) -> TraceHeader {
        TraceHeader {
            unit: desc.name.to_string(),
            params: params.iter().map(|(n, v)| (n.to_string(), v)).collect(),
            source: source.to_string(),
            instances: kept
                .iter()
                .map(|i| InstanceHeader {
                    name: i.name.clone(),
                    events: i.events,
                    bytes: (i.bytes.len() + 8 * i.raw.len()) as u64,
                })
                .collect(),
        }
    }
}

/// A trace file read back.
pub struct Trace {
    pub header: TraceHeader,
    pub desc: &'static UnitDesc,
    pub params: Params,
    /// Each instance's event bytes, in header order (empty for a raw trace).
    pub(crate) blobs: Vec<Vec<u8>>,
    /// A trace recorded in this process keeps its raw records instead.
    raw: Option<RawTrace>,
}

/// The instances' raw records of a trace recorded in this process (see
/// [`TraceRecorder::keep_raw`]), in header order.
struct RawTrace {
    instances: Vec<Vec<u64>>,
    codec: RawCodec,
}

impl Trace {
    /// [`Trace::read`], refusing a trace of another unit than `unit` when one is named
    /// (a command given both `--unit U` and `--trace F`).
    pub fn read_of(path: &Path, unit: Option<&str>) -> Result<Trace, String> {
        let trace = Trace::read(path)?;
        match unit {
            Some(u) if u != trace.desc.name => Err(format!(
                "{} is a trace of {}, not {u}",
                path.display(),
                trace.desc.name
            )),
            _ => Ok(trace),
        }
    }

    pub fn read(path: &Path) -> Result<Trace, String> {
        let ctx = |e: String| format!("trace {}: {e}", path.display());
        let file = std::fs::File::open(path).map_err(|e| ctx(e.to_string()))?;
        let mut r = BufReader::new(file);
        let mut line = String::new();
        r.read_line(&mut line).map_err(|e| ctx(e.to_string()))?;
        if line.trim_end() != MAGIC {
            return Err(ctx(format!(
                "not a warpforge trace (first line should be `{MAGIC}`)"
            )));
        }
        line.clear();
        r.read_line(&mut line).map_err(|e| ctx(e.to_string()))?;
        let header: TraceHeader =
            serde_json::from_str(&line).map_err(|e| ctx(format!("bad header: {e}")))?;
        let desc = super::find(&header.unit).map_err(ctx)?;
        let overrides: Vec<(&str, u64)> = header
            .params
            .iter()
            .map(|(k, v)| (k.as_str(), *v))
            .collect();
        let params = desc.params(&overrides).map_err(ctx)?;
        // The header's sizes are checked against the file before anything is allocated.
        let file_len = std::fs::metadata(path)
            .map_err(|e| ctx(e.to_string()))?
            .len();
        let total = header
            .instances
            .iter()
            .try_fold(0u64, |t, i| t.checked_add(i.bytes));
        if total.is_none_or(|t| t > file_len) {
            return Err(ctx(format!(
                "the header's instance sizes add up to more than the file's {file_len} bytes"
            )));
        }
        let mut blobs = Vec::with_capacity(header.instances.len());
        for inst in &header.instances {
            let mut b = vec![0u8; inst.bytes as usize];
            r.read_exact(&mut b)
                .map_err(|e| ctx(format!("instance {} is truncated ({e})", inst.name)))?;
            blobs.push(b);
        }
        Ok(Trace {
            header,
            desc,
            params,
            blobs,
            raw: None,
        })
    }

    /// The events of instance `i`.
    pub fn events(&self, i: usize) -> TraceEvents<'_> {
        let inputs: Vec<usize> = (0..self.desc.ports.len())
            .filter(|&p| self.desc.ports[p].role.is_input())
            .collect();
        TraceEvents {
            bytes: self.blobs.get(i).map_or(&[], Vec::as_slice),
            raw: self
                .raw
                .as_ref()
                .map(|r| (r.codec.events)(&r.instances[i], &self.params)),
            pos: 0,
            cycle: 0,
            inputs,
            name: &self.header.instances[i].name,
        }
    }
}

/// Decoder of one instance's events.
pub struct TraceEvents<'a> {
    bytes: &'a [u8],
    /// The events of a raw trace instead.
    raw: Option<RawEvents<'a>>,
    pos: usize,
    cycle: u64,
    inputs: Vec<usize>,
    name: &'a str,
}

impl TraceEvents<'_> {
    /// Decode the next event into the input positions of `ports`; returns its cycle, or
    /// `None` at the end of the instance.
    pub fn next_into(&mut self, ports: &mut [Bits]) -> Result<Option<u64>, String> {
        if let Some(raw) = &mut self.raw {
            return Ok(raw(ports));
        }
        if self.pos >= self.bytes.len() {
            return Ok(None);
        }
        let delta = self.varint()?;
        self.cycle = self
            .cycle
            .checked_add(delta)
            .ok_or_else(|| format!("{}: cycle count overflows at byte {}", self.name, self.pos))?;
        let present = self.varint()?;
        // The widest input port: the wcu's 1024-bit CTA masks (32 warps x 32 lanes).
        let mut words = [0u64; 16];
        for k in 0..self.inputs.len() {
            let port = &mut ports[self.inputs[k]];
            if present >> k & 1 == 0 {
                port.set_u64((k == 0) as u64); // idle: `rst_n` high, the rest 0
                continue;
            }
            let n = port.words().len();
            if n > words.len() {
                return Err(format!("{}: input port wider than 1024 bits", self.name));
            }
            for w in words.iter_mut().take(n) {
                *w = self.varint()?;
            }
            port.set_words(&words[..n]);
        }
        Ok(Some(self.cycle))
    }

    fn varint(&mut self) -> Result<u64, String> {
        // LEB128, at most 10 bytes; one bounds check per byte, no step_by iterator.
        let (bytes, mut pos) = (self.bytes, self.pos);
        let (mut v, mut shift) = (0u64, 0u32);
        while let Some(&b) = bytes.get(pos) {
            pos += 1;
            v |= ((b & 0x7f) as u64) << shift;
            if b & 0x80 == 0 {
                self.pos = pos;
                return Ok(v);
            }
            shift += 7;
            if shift >= 64 {
                self.pos = pos;
                return Err(format!("{}: bad varint at byte {}", self.name, self.pos));
            }
        }
        self.pos = pos;
        Err(format!("{}: event cut off at byte {}", self.name, self.pos))
    }
}

/// Replays one instance of a trace cycle by cycle: one reset cycle, then the recorded
/// events at their cycles with idle cycles in between, then idle cycles until the state
/// settles.
///
/// An idle run is cut short once an idle cycle leaves every registered and debug output
/// unchanged: with idle inputs the state is then a fixed point (each unit's next state
/// depends only on its state and inputs), so the remaining idle cycles of the run cannot
/// change anything. The skipped cycles are counted in [`InstanceReplay::skipped_idle`].
pub struct InstanceReplay<'a> {
    events: TraceEvents<'a>,
    /// The next event's input values (only input positions are meaningful).
    next: Vec<Bits>,
    next_cycle: Option<u64>,
    /// Recorded-timeline cycle of the next driven cycle.
    now: u64,
    reset_done: bool,
    /// Registered and debug outputs seen at the previous idle cycle of the current run
    /// (`state_ports` order; meaningful while `settled_valid`).
    settled: Vec<Bits>,
    settled_valid: bool,
    state_ports: Vec<usize>,
    input_ports: Vec<usize>,
    pub skipped_idle: u64,
}

impl<'a> InstanceReplay<'a> {
    pub fn new(trace: &'a Trace, instance: usize) -> Result<InstanceReplay<'a>, String> {
        let desc = trace.desc;
        let mut r = InstanceReplay {
            events: trace.events(instance),
            next: desc.zero_ports(&trace.params),
            next_cycle: None,
            now: 0,
            reset_done: false,
            settled: vec![],
            settled_valid: false,
            state_ports: (0..desc.ports.len())
                .filter(|&i| {
                    !desc.ports[i].role.is_input() && desc.ports[i].role != Role::Combinational
                })
                .collect(),
            input_ports: (0..desc.ports.len())
                .filter(|&i| desc.ports[i].role.is_input())
                .collect(),
            skipped_idle: 0,
        };
        r.settled = r.state_ports.iter().map(|&i| r.next[i].clone()).collect();
        r.next_cycle = r.events.next_into(&mut r.next)?;
        Ok(r)
    }

    /// Write this cycle's inputs into `ports` (whose registered and debug outputs hold the
    /// unit's current state). Returns `Ok(false)` when the instance is over.
    pub fn drive(&mut self, ports: &mut [Bits]) -> Result<bool, String> {
        if !self.reset_done {
            self.reset_done = true;
            self.idle_inputs(ports);
            ports[0].set_u64(0);
            return Ok(true);
        }
        match self.next_cycle {
            Some(c) if self.now >= c => {
                for &i in &self.input_ports {
                    ports[i].clone_from(&self.next[i]);
                }
                self.now = c + 1;
                self.settled_valid = false;
                self.next_cycle = self.events.next_into(&mut self.next)?;
                Ok(true)
            }
            next => {
                let unchanged = self.settled_valid
                    && self
                        .state_ports
                        .iter()
                        .zip(&self.settled)
                        .all(|(&i, p)| ports[i] == *p);
                if unchanged {
                    let Some(c) = next else { return Ok(false) };
                    self.skipped_idle += c - self.now;
                    self.now = c;
                    return self.drive(ports);
                }
                // Copied into the buffers allocated once (no allocation per cycle).
                for (&i, p) in self.state_ports.iter().zip(&mut self.settled) {
                    p.clone_from(&ports[i]);
                }
                self.settled_valid = true;
                self.idle_inputs(ports);
                self.now += 1;
                Ok(true)
            }
        }
    }

    /// The recorded-timeline cycle of the cycle [`Self::drive`] drove last (`None` for the
    /// reset cycle).
    pub fn cycle(&self) -> Option<u64> {
        self.now.checked_sub(1)
    }

    fn idle_inputs(&self, ports: &mut [Bits]) {
        for &i in &self.input_ports {
            ports[i].clear();
        }
        ports[0].set_u64(1);
    }
}

/// One event: the cycle delta, then every input port's words, low word first.
/// One event from generic port values (`inputs[0]` is `rst_n`).
fn encode_event(out: &mut Vec<u8>, delta: u64, inputs: &[usize], ports: &[Bits]) {
    let idle = |k: usize, p: &Bits| {
        if k == 0 {
            p.to_u64() == 1
        } else {
            p.words().iter().all(|&w| w == 0)
        }
    };
    let present = inputs
        .iter()
        .enumerate()
        .fold(0u64, |m, (k, &i)| m | ((!idle(k, &ports[i]) as u64) << k));
    write_varint(out, delta);
    write_varint(out, present);
    for (k, &i) in inputs.iter().enumerate() {
        if present >> k & 1 != 0 {
            ports[i].words().iter().for_each(|&w| write_varint(out, w));
        }
    }
}

/// The most bytes of one LEB128 varint of a u64.
const MAX_VARINT_BYTES: usize = 10;

/// Varints written into the spare capacity of a vector, which the caller reserved for the
/// most bytes it will write (`max_event_bytes`); [`append`] makes them part of it.
struct SpareBytes<'a> {
    spare: &'a mut [std::mem::MaybeUninit<u8>],
    /// Bytes written so far.
    n: usize,
}

impl SpareBytes<'_> {
    #[inline(always)]
    fn varint(&mut self, mut v: u64) {
        // Indexing the spare slice keeps this safe: writing past the reservation panics
        // instead of corrupting memory.
        while v >= 0x80 {
            self.spare[self.n].write(v as u8 | 0x80);
            self.n += 1;
            v >>= 7;
        }
        self.spare[self.n].write(v as u8);
        self.n += 1;
    }

    #[inline(always)]
    fn bytes(&mut self, bytes: &[u8]) {
        let to = &mut self.spare[self.n..self.n + bytes.len()];
        // SAFETY: `to` is `bytes.len()` bytes of the reservation (the indexing above
        // checked it), and `MaybeUninit<u8>` has the layout of `u8`.
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), to.as_mut_ptr().cast::<u8>(), bytes.len())
        };
        self.n += bytes.len();
    }
}

/// An event's bytes after its cycle delta: the presence mask, then the present ports' words.
#[inline(always)]
fn write_inputs<G: PortGroup>(out: &mut SpareBytes, widths: &[PortWidth], inp: &G) {
    // Bit 0 is `rst_n`, high (idle) in every typed event.
    out.varint(inp.present(widths) << 1);
    inp.encode(widths, &mut |w| out.varint(w));
}

/// Appends to `vec` what `write` puts into its spare capacity (at most `max` bytes) and
/// returns what `write` returns.
#[inline(always)]
fn append<R>(vec: &mut Vec<u8>, max: usize, write: impl FnOnce(&mut SpareBytes) -> R) -> R {
    vec.reserve(max);
    let start = vec.len();
    let mut out = SpareBytes {
        spare: vec.spare_capacity_mut(),
        n: 0,
    };
    let r = write(&mut out);
    let len = start + out.n;
    // SAFETY: the `n` bytes after the length were initialised by `SpareBytes`' writes,
    // within the capacity (the spare slice is bounds-checked).
    unsafe { vec.set_len(len) };
    r
}

#[inline]
fn write_varint(out: &mut Vec<u8>, mut v: u64) {
    loop {
        let b = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::declare::PortGroup;
    use crate::units::simt_stack::{SpeInputs, SPE_DESC};

    #[test]
    fn round_trip() {
        let p = SPE_DESC.params(&[("WARP_SIZE", 64u64)]).unwrap();
        let mut rec = TraceRecorder::new(&SPE_DESC, p.clone());
        let a = rec.add_instance("sm0.warp0".into());
        let b = rec.add_instance("sm0.warp1".into());
        let _empty = rec.add_instance("sm0.warp2".into());
        let inp = SpeInputs {
            upd_valid: true,
            upd_pc: 7,
            upd_taken: u64::MAX,
            upd_rpc: u32::MAX,
            ..Default::default()
        };
        rec.record(a, 3, |ports| inp.write_ports(ports));
        rec.record(b, 5, |_| {});
        rec.record(a, 10, |_| {});
        let dir = std::env::temp_dir().join(format!("wf-trace-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.wftrace");
        rec.write(&path, "unit test").unwrap();
        let t = Trace::read(&path).unwrap();
        assert_eq!(t.header.instances.len(), 2, "empty instances are dropped");
        assert_eq!(t.params, p);
        let mut ports = SPE_DESC.zero_ports(&p);
        let mut ev = t.events(0);
        assert_eq!(ev.next_into(&mut ports).unwrap(), Some(3));
        assert_eq!(SpeInputs::read_ports(&ports), inp);
        assert_eq!(ports[0].to_u64(), 1, "rst_n high");
        assert_eq!(ev.next_into(&mut ports).unwrap(), Some(10));
        assert_eq!(SpeInputs::read_ports(&ports), SpeInputs::default());
        assert_eq!(ev.next_into(&mut ports).unwrap(), None);
        std::fs::write(&path, "junk\n").unwrap();
        let err = Trace::read(&path).err().expect("junk is rejected");
        assert!(err.contains("not a warpforge trace"), "{err}");
        // A header that claims more bytes than the file holds is refused before anything
        // that size is allocated.
        let header = r#"{"unit":"simt_stack_spe","params":{},"source":"","instances":[{"name":"a","events":1,"bytes":1000000000000}]}"#;
        std::fs::write(&path, format!("{MAGIC}\n{header}\n")).unwrap();
        let err = Trace::read(&path)
            .err()
            .expect("oversized instance is rejected");
        assert!(err.contains("more than the file's"), "{err}");
        std::fs::remove_dir_all(&dir).ok();
    }

    /// A recorder laid out for wider parameters encodes later typed inputs at the new
    /// widths (the scoreboard's trace widens NUM_REGS when a launch uses more registers).
    #[test]
    fn typed_inputs_after_reencoding_use_the_new_widths() {
        use crate::units::dpe_scoreboard::{ScoreboardPortIn, SCOREBOARD_DESC};
        let narrow = SCOREBOARD_DESC.params(&[("NUM_REGS", 8u64)]).unwrap();
        let wide = SCOREBOARD_DESC.params(&[("NUM_REGS", 64u64)]).unwrap();
        let inp = ScoreboardPortIn {
            rsv_valid: 0b11,
            rsv_warp: 5 | (7 << 6),
            rsv_reg: 63 | (40 << 6),
            ..Default::default()
        };
        let mut typed = TraceRecorder::new(&SCOREBOARD_DESC, narrow.clone());
        let mut generic = TraceRecorder::new(&SCOREBOARD_DESC, narrow);
        for rec in [&mut typed, &mut generic] {
            rec.add_instance("sm0".into());
            rec.relayout(wide.clone()).unwrap();
        }
        typed.record_inputs(0, 1, &inp);
        generic.record(0, 1, |ports| inp.write_ports(ports));
        assert!(!typed.instances[0].bytes.is_empty());
        assert_eq!(typed.instances[0].bytes, generic.instances[0].bytes);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
        /// The typed encoder writes exactly the bytes of the generic one, for any field values
        /// (wider than their ports too: both keep the port's width) at two parameter sets.
        #[test]
        fn typed_inputs_encode_as_the_generic_path(
            values in proptest::collection::vec(proptest::num::u64::ANY, 11),
            flags in proptest::collection::vec(proptest::bool::ANY, 2),
            gaps in proptest::collection::vec(1u64..1 << 40, 1..4),
            narrow in proptest::bool::ANY,
        ) {
            let set: &[(&str, u64)] = if narrow {
                &[("WARP_SIZE", 8), ("PC_W", 8)]
            } else {
                &[]
            };
            let p = SPE_DESC.params(set).unwrap();
            let inp = SpeInputs {
                launch_valid: flags[0],
                launch_pc: values[0] as u32,
                launch_rpc: values[1] as u32,
                launch_mask: values[2],
                upd_valid: flags[1],
                upd_pc: values[3] as u32,
                upd_kind: values[4] as u8,
                upd_taken: values[5],
                upd_target: values[6] as u32,
                upd_next: values[7] as u32,
                upd_rpc: values[8] as u32,
            };
            let mut generic = TraceRecorder::new(&SPE_DESC, p.clone());
            let mut typed = TraceRecorder::new(&SPE_DESC, p);
            generic.add_instance("a".into());
            typed.add_instance("a".into());
            let mut cycle = 0;
            for gap in gaps {
                cycle += gap;
                generic.record(0, cycle, |ports| inp.write_ports(ports));
                typed.record_inputs(0, cycle, &inp);
            }
            proptest::prop_assert!(!typed.instances[0].bytes.is_empty());
            proptest::prop_assert_eq!(&generic.instances[0].bytes, &typed.instances[0].bytes);
        }

        /// Any port values (idle ones too, so the presence mask skips them; `rst_n` low
        /// too) and cycle gaps (varints of every length) read back as recorded.
        #[test]
        fn events_round_trip(
            events in proptest::collection::vec(
                (
                    1u64..u64::MAX / 32,
                    proptest::collection::vec(
                        proptest::prop_oneof![proptest::strategy::Just(0u64), proptest::num::u64::ANY],
                        16,
                    ),
                ),
                1..20,
            )
        ) {
            let p = SPE_DESC.params(&[("WARP_SIZE", 64u64)]).unwrap();
            let mut rec = TraceRecorder::new(&SPE_DESC, p.clone());
            let inst = rec.add_instance("sm0.warp0".into());
            let mut expected = Vec::new();
            let mut cycle = 0u64;
            for (gap, values) in &events {
                cycle += gap; // at most 19 gaps below u64::MAX / 32: no overflow
                let mut ports = Vec::new();
                rec.record(inst, cycle, |p| {
                    for (i, port) in p.iter_mut().enumerate() {
                        if SPE_DESC.ports[i].role.is_input() {
                            port.set_u64(values[i % values.len()]);
                        }
                    }
                    ports = p.to_vec();
                });
                expected.push((cycle, ports));
            }
            let dir = std::env::temp_dir()
                .join(format!("wf-trace-prop-{}-{:?}", std::process::id(), std::thread::current().id()));
            std::fs::create_dir_all(&dir).unwrap();
            let path = dir.join("t.wftrace");
            rec.write(&path, "property test").unwrap();
            let t = Trace::read(&path).unwrap();
            std::fs::remove_dir_all(&dir).ok();
            let mut ports = SPE_DESC.zero_ports(&p);
            let mut ev = t.events(0);
            for (cycle, want) in &expected {
                proptest::prop_assert_eq!(ev.next_into(&mut ports).unwrap(), Some(*cycle));
                for (i, (got, want)) in ports.iter().zip(want).enumerate() {
                    if SPE_DESC.ports[i].role.is_input() {
                        proptest::prop_assert_eq!(got.words(), want.words(), "port {}", i);
                    }
                }
            }
            proptest::prop_assert_eq!(ev.next_into(&mut ports).unwrap(), None);
        }
    }
}
