//! The pipelined lockstep: the same comparison as [`Cosim::run_counting`], with the model
//! side on a second thread.
//!
//! A lockstep cycle is two independent halves: the model side (the stimulus, the unit
//! model, the coverage) decides the inputs and the expected outputs, and the RTL side
//! (set the inputs, settle, compare, clock edge) only checks them. Nothing flows back from
//! the RTL to the model side as long as the two agree (a stimulus that reads outputs reads
//! the model's, which are the RTL's until the first difference). So the model side runs
//! on its own thread up to [`IN_FLIGHT`] batches of [`BATCH_CYCLES`] cycles ahead and hands
//! each cycle over as one frame of port words: the run takes the longer of the two halves
//! instead of their sum.
//!
//! The first difference (or RTL error) stops both sides, and the run is done again the
//! sequential way from the start with the stimulus rewound (only rewindable stimuli are
//! pipelined): that run stops at the same cycle and builds the report, the replay file
//! and the waveforms exactly as a sequential run does. A failure costs the cycles up to
//! it twice; a passing run, which is the case that has to be fast, costs nothing extra.

use super::typed_side::{FrameSetup, FrameSide};
use super::{Cosim, Pipelining, Stimulus, Summary, PROBE_CYCLES, PROBE_ROUNDS};
use crate::rtl::{FramePorts, RtlModel};
use crate::CosimError;
use crossbeam_utils::Backoff;
use std::sync::mpsc::{channel, sync_channel, Receiver, Sender, SyncSender};
use std::sync::mpsc::{TryRecvError, TrySendError};
use std::time::{Duration, Instant};
use warpforge_model::units::contract::Bits;
use warpforge_model::units::coverage::Coverage;

/// Cycles per batch handed from the model thread to the RTL thread: large enough that the
/// hand-over (a channel message, now and then a thread wake-up) is noise per cycle.
const BATCH_CYCLES: usize = 256;
/// Batches the model side may run ahead of the RTL side.
const IN_FLIGHT: usize = 8;

/// Cycles per batch when both sides take turns on one thread: few enough that a batch's
/// frames are still in the core's first-level cache when the RTL side reads them (a
/// `wcu` frame is about 45 words).
const ONE_THREAD_BATCH_CYCLES: usize = 16;

/// Frame header: the debug-state ports follow the outputs (a state sample).
const SAMPLE: u64 = 1;
/// Frame header: no cycle; the state after the last clock edge follows.
const FINAL: u64 = 2;

/// Which ports a frame carries, in order: every input and compared output (in the RTL
/// model's frame order, which it reads without a `Bits` per port), and the debug-state
/// ports when the frame is a sample.
struct Frame {
    inputs: FramePorts,
    outputs: FramePorts,
    state: FramePorts,
}

/// The next batch, or `None` when the model side is done. The two sides run at similar
/// rates, so a wait is usually short: spin (then yield) a little before blocking, as
/// parking a thread and waking it costs more than such a wait.
fn recv_batch(from_model: &Receiver<Vec<u64>>) -> Option<Vec<u64>> {
    let backoff = Backoff::new();
    loop {
        match from_model.try_recv() {
            Ok(batch) => return Some(batch),
            Err(TryRecvError::Disconnected) => return None,
            Err(TryRecvError::Empty) if backoff.is_completed() => return from_model.recv().ok(),
            Err(TryRecvError::Empty) => backoff.snooze(),
        }
    }
}

/// Hand a batch to the RTL side (spinning first, as [`recv_batch`]); false when the RTL
/// side has stopped.
fn send_batch(to_rtl: &SyncSender<Vec<u64>>, mut batch: Vec<u64>) -> bool {
    let backoff = Backoff::new();
    loop {
        match to_rtl.try_send(batch) {
            Ok(()) => return true,
            Err(TrySendError::Disconnected(_)) => return false,
            Err(TrySendError::Full(back)) if backoff.is_completed() => {
                return to_rtl.send(back).is_ok()
            }
            Err(TrySendError::Full(back)) => {
                batch = back;
                backoff.snooze();
            }
        }
    }
}

/// The RTL side's verdict (Ok(the cycle after the last one checked) or Err(the cycle at
/// which the RTL differed or failed)), and how the model side ended.
type Checked = (Result<u64, u64>, ModelEnd);

/// Whether both sides went through every cycle up to `end` and agreed.
fn whole_run((checked, model): Checked, end: u64) -> bool {
    checked == Ok(model.end) && model.end == end
}

/// What the model side ends with.
struct ModelEnd {
    /// The cycle after the last one driven.
    end: u64,
    samples: u64,
    coverage: Coverage,
}

impl Cosim {
    /// Whether [`Cosim::run`] may pipeline: allowed ([`Cosim::with_pipelining`]), a second
    /// core to run on, and not inside a rayon worker (trace replays already run their
    /// instances in parallel, one per core).
    pub(super) fn may_pipeline(&self) -> bool {
        self.pipelining != Pipelining::Never
            && rayon::current_thread_index().is_none()
            && std::thread::available_parallelism().is_ok_and(|n| n.get() >= 2)
    }

    /// Whether the two-thread run is expected to be the faster: always with
    /// [`Pipelining::Always`]; with [`Pipelining::Auto`], when the first [`PROBE_CYCLES`]
    /// cycles of `stim` (rewound after each try) ran faster on two threads than on one,
    /// the best of [`PROBE_ROUNDS`] tries of each, the first time this is asked.
    ///
    /// Why a race and not a rule: the two threads cost a frame per cycle (the model side
    /// writes the cycle's port words, the RTL side reads them from the other core's
    /// cache), so they pay when both halves are long enough to hide that, not when one
    /// half is longer. Measured 2026-11-27: the stacks' RTL half was 0.2-0.4 of their
    /// model half and two threads were still 10-98% faster; `slp_perm`'s was 0.5 and two
    /// threads were 8-17% slower (its RTL half is a few hundred host instructions).
    pub(super) fn pipelining_pays<S: Stimulus + Send + ?Sized>(
        &self,
        stim: &mut S,
        first_cycle: u64,
    ) -> bool {
        if self.pipelining == Pipelining::Always {
            return true;
        }
        if let Some(&pays) = self.probed.get() {
            return pays;
        }
        let cycles = PROBE_CYCLES.min(self.max_cycles);
        let (mut one, mut two) = (Duration::MAX, Duration::MAX);
        for _ in 0..PROBE_ROUNDS {
            let t1 = self.time_one_thread(stim, first_cycle, cycles);
            stim.rewind();
            let t2 = self.time_two_threads(stim, first_cycle, cycles);
            stim.rewind();
            match (t1, t2) {
                (Some(t1), Some(t2)) => {
                    one = one.min(t1);
                    two = two.min(t2);
                }
                // A stimulus that ends sooner is too short for its timing to say anything
                // (or for a second thread to pay), and a difference or an RTL error is the
                // run's to report: one thread, without deciding for the next runs.
                _ => return false,
            }
        }
        let pays = two < one;
        let _ = self.probed.set(pays);
        pays
    }

    /// The time of `cycles` lockstep cycles on one thread as a one-thread run does them
    /// (in batches for a typed model side, else as [`Cosim::run_counting`]; state samples
    /// included), from a fresh model and RTL; `None` when the stimulus ends sooner, the RTL
    /// fails or differs.
    fn time_one_thread<S: Stimulus + ?Sized>(
        &self,
        stim: &mut S,
        first_cycle: u64,
        cycles: u64,
    ) -> Option<Duration> {
        let mut rtl = self.rtl_model(false).ok()?;
        rtl.reset().ok()?;
        rtl.set_cycle(first_cycle);
        if self.batched_on_one_thread(stim) {
            let t = Instant::now();
            let checked = self.check_one_thread(&mut rtl, stim, first_cycle, cycles);
            return whole_run(checked.ok()?, first_cycle + cycles).then(|| t.elapsed());
        }
        let (mut side, mut ports) = self.model_side(stim, first_cycle).ok()?;
        let sampled = !rtl.state_indices().is_empty();
        let t = Instant::now();
        while side.cycle() < first_cycle + cycles {
            let cycle = side.cycle();
            if !side.drive(&mut ports) {
                return None;
            }
            rtl.set_inputs(&ports);
            rtl.eval().ok()?;
            if rtl.first_mismatch(&ports).is_some() {
                return None;
            }
            if sampled && (cycle - first_cycle).is_multiple_of(self.state_interval) {
                rtl.sample_state().ok()?;
                side.model.debug_state(&mut ports);
                if rtl.first_state_mismatch(&ports).is_some() {
                    return None;
                }
            }
            side.close(&mut ports);
            rtl.edge().ok()?;
        }
        Some(t.elapsed())
    }

    /// The time of `cycles` pipelined lockstep cycles (thread start included), from a
    /// fresh model and RTL; `None` when the stimulus ends sooner, the RTL fails or differs.
    fn time_two_threads<S: Stimulus + Send + ?Sized>(
        &self,
        stim: &mut S,
        first_cycle: u64,
        cycles: u64,
    ) -> Option<Duration> {
        let mut rtl = self.rtl_model(false).ok()?;
        rtl.reset().ok()?;
        rtl.set_cycle(first_cycle);
        let t = Instant::now();
        let checked = self.check_pipelined(&mut rtl, stim, first_cycle, cycles);
        whole_run(checked.ok()?, first_cycle + cycles).then(|| t.elapsed())
    }

    /// Whether a one-thread run of `stim` takes turns a batch of frames at a time (a typed
    /// model side, whose frames cost less than its ports would), rather than the
    /// sequential loop (a by-name one, compared straight from its ports).
    fn batched_on_one_thread<S: Stimulus + ?Sized>(&self, stim: &S) -> bool {
        stim.has_typed_side() && self.typed_model_side
    }

    /// The ports of the frames `rtl` reads.
    fn frame_of(&self, rtl: &RtlModel) -> Frame {
        let widths = self.desc.widths(&self.params);
        Frame {
            inputs: FramePorts::new(rtl.input_frame_order(), &widths),
            outputs: FramePorts::new(rtl.output_frame_order(), &widths),
            state: FramePorts::new(rtl.state_indices().to_vec(), &widths),
        }
    }

    /// Both threads over up to `cycles` cycles: the RTL side's verdict (Ok(the cycle after
    /// the last one checked) or Err(the cycle at which the RTL differed or failed)) and
    /// how the model side ended.
    fn check_pipelined<S: Stimulus + Send + ?Sized>(
        &self,
        rtl: &mut RtlModel,
        stim: &mut S,
        first_cycle: u64,
        cycles: u64,
    ) -> Result<Checked, CosimError> {
        let frame = self.frame_of(rtl);
        let (to_rtl, from_model) = sync_channel::<Vec<u64>>(IN_FLIGHT);
        let (recycle, recycled) = channel::<Vec<u64>>();
        std::thread::scope(|s| {
            let model_side =
                s.spawn(|| self.model_thread(stim, first_cycle, cycles, &frame, to_rtl, recycled));
            let checked = self.rtl_side(rtl, first_cycle, &frame, from_model, recycle);
            // `from_model` is gone: a model side still running stops at its next batch.
            let model = model_side
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))?;
            Ok((checked, model))
        })
    }

    /// [`Cosim::check_pipelined`] on this thread, a batch at a time: the model side writes
    /// a batch of frames, then the RTL side checks it (see
    /// [`Cosim::batched_on_one_thread`]).
    fn check_one_thread<S: Stimulus + ?Sized>(
        &self,
        rtl: &mut RtlModel,
        stim: &mut S,
        first_cycle: u64,
        cycles: u64,
    ) -> Result<Checked, CosimError> {
        let frame = self.frame_of(rtl);
        let mut side = stim.frame_side(self.frame_setup(&frame, first_cycle)?);
        let mut fill = BatchFill::new(self, &frame, first_cycle, cycles, ONE_THREAD_BATCH_CYCLES);
        let mut batch = Vec::with_capacity(fill.capacity);
        let mut ports = self.desc.zero_ports(&self.params);
        let mut cycle = first_cycle;
        loop {
            batch.clear();
            let more = fill.fill(&mut *side, &mut batch);
            if !more {
                fill.finish(&mut *side, &mut batch);
            }
            if let Err(stopped) = check_batch(rtl, &frame, &batch, &mut cycle, &mut ports) {
                return Ok((Err(stopped), fill.end(side)));
            }
            if !more {
                return Ok((Ok(cycle), fill.end(side)));
            }
        }
    }

    /// The lockstep run of [`Cosim::run_counting`] (without activity counting) in batches
    /// of frames: with the model side on a second thread (`two`; see the module
    /// documentation), or on this one when its model side is typed (else it is
    /// [`Cosim::run_counting`]). A difference is reported by the sequential loop, re-run.
    pub(super) fn run_batched<S: Stimulus + Send + ?Sized>(
        &self,
        instance: &str,
        stim: &mut S,
        first_cycle: u64,
        two: bool,
    ) -> Result<Summary, CosimError> {
        if !two && !self.batched_on_one_thread(stim) {
            // By name on one thread: the sequential loop compares straight from the ports.
            return self.run_counting(instance, stim, first_cycle, None);
        }
        let t0 = Instant::now();
        let mut rtl = self.rtl_model(false)?;
        rtl.reset().map_err(|e| Self::rtl_err(0, e))?;
        rtl.set_cycle(first_cycle);
        let (checked, model) = if two {
            self.check_pipelined(&mut rtl, stim, first_cycle, self.max_cycles)?
        } else {
            self.check_one_thread(&mut rtl, stim, first_cycle, self.max_cycles)?
        };
        match checked {
            Ok(end) if end == model.end => {
                let elapsed = t0.elapsed();
                let cycles = end - first_cycle;
                let (compared, state_ports) =
                    (rtl.output_indices().len(), rtl.state_indices().len());
                Ok(Summary {
                    unit: self.desc.name.to_string(),
                    instance: instance.to_string(),
                    params: self.params.to_string(),
                    cycles,
                    ports_compared: compared,
                    state_ports,
                    state_interval: self.state_interval,
                    state_samples: model.samples,
                    comparisons: cycles * compared as u64 + model.samples * state_ports as u64,
                    elapsed,
                    cycles_per_sec: cycles as f64 / elapsed.as_secs_f64().max(1e-9),
                    coverage: model.coverage,
                    pipelined: two,
                })
            }
            Ok(end) => Err(CosimError::Nondeterministic(format!(
                "batched lockstep: the RTL side checked up to cycle {end}, the model side \
                 drove up to cycle {}",
                model.end
            ))),
            Err(stopped) => {
                // Do it again the sequential way: it stops at the same cycle and writes
                // the full report.
                stim.rewind();
                match self.run_counting(instance, stim, first_cycle, None) {
                    Err(e) => Err(e),
                    Ok(_) => Err(CosimError::Nondeterministic(format!(
                        "the batched lockstep run stopped at cycle {stopped} (the RTL \
                         differed from the model or failed), but the same run done \
                         sequentially did not: the stimulus or the RTL is not \
                         deterministic"
                    ))),
                }
            }
        }
    }

    /// The model thread: stimulus, unit model and coverage, one frame per cycle.
    fn model_thread<S: Stimulus + ?Sized>(
        &self,
        stim: &mut S,
        first_cycle: u64,
        cycles: u64,
        frame: &Frame,
        to_rtl: SyncSender<Vec<u64>>,
        recycled: Receiver<Vec<u64>>,
    ) -> Result<ModelEnd, CosimError> {
        let mut side = stim.frame_side(self.frame_setup(frame, first_cycle)?);
        let mut fill = BatchFill::new(self, frame, first_cycle, cycles, BATCH_CYCLES);
        let capacity = fill.capacity;
        let fresh = || Vec::with_capacity(capacity);
        let mut batch = fresh();
        loop {
            let more = fill.fill(&mut *side, &mut batch);
            if !more {
                break;
            }
            let full =
                std::mem::replace(&mut batch, recycled.try_recv().unwrap_or_else(|_| fresh()));
            batch.clear();
            if !send_batch(&to_rtl, full) {
                // The RTL side stopped (a difference): nothing more is wanted.
                break;
            }
        }
        fill.finish(&mut *side, &mut batch);
        send_batch(&to_rtl, batch);
        Ok(fill.end(side))
    }

    /// What a model side is given to write its frames with.
    fn frame_setup<'a>(
        &'a self,
        frame: &'a Frame,
        first_cycle: u64,
    ) -> Result<FrameSetup<'a>, CosimError> {
        Ok(FrameSetup {
            desc: self.desc,
            params: &self.params,
            inputs: &frame.inputs,
            outputs: &frame.outputs,
            state: &frame.state,
            coverage: self.coverage()?,
            first_cycle,
            typed: self.typed_model_side,
        })
    }

    /// The calling thread: each frame's inputs into the RTL, settle, compare, clock edge.
    /// Ok(the cycle after the last one checked), or Err(the cycle at which the RTL
    /// differed or failed).
    fn rtl_side(
        &self,
        rtl: &mut RtlModel,
        first_cycle: u64,
        frame: &Frame,
        from_model: Receiver<Vec<u64>>,
        recycle: Sender<Vec<u64>>,
    ) -> Result<u64, u64> {
        let mut ports = self.desc.zero_ports(&self.params);
        let mut cycle = first_cycle;
        while let Some(batch) = recv_batch(&from_model) {
            check_batch(rtl, frame, &batch, &mut cycle, &mut ports)?;
            let _ = recycle.send(batch);
        }
        Ok(cycle)
    }
}

/// A model side's frames, a batch at a time: the cycles to run, when the state is
/// sampled, and what the batches need room for.
struct BatchFill {
    first_cycle: u64,
    end: u64,
    interval: u64,
    next_sample: u64,
    samples: u64,
    stateful: bool,
    /// Cycles per batch.
    batch_cycles: usize,
    /// Words a batch may take: `batch_cycles` frames (a header and the ports' words each,
    /// a port over 64 bits taking several), the state of its sampling cycles and, the
    /// last one, the final state after its marker; so a batch is never grown.
    capacity: usize,
}

impl BatchFill {
    fn new(
        cosim: &Cosim,
        frame: &Frame,
        first_cycle: u64,
        cycles: u64,
        batch_cycles: usize,
    ) -> BatchFill {
        let stateful = !frame.state.is_empty();
        let interval = if stateful {
            cosim.state_interval
        } else {
            u64::MAX
        };
        let words_per_cycle = 1 + frame.inputs.words() + frame.outputs.words();
        let samples_per_batch = if stateful {
            (batch_cycles as u64).div_ceil(interval.max(1)) as usize + 1
        } else {
            0
        };
        BatchFill {
            first_cycle,
            end: first_cycle.saturating_add(cycles),
            interval,
            next_sample: first_cycle,
            samples: 0,
            stateful,
            batch_cycles,
            capacity: batch_cycles * words_per_cycle + samples_per_batch * frame.state.words() + 1,
        }
    }

    /// Up to `batch_cycles` cycles of `side` into `batch`; false when the run is over (the
    /// stimulus ended, or the end was reached before the batch was full), with the
    /// batch's frames so far.
    fn fill(&mut self, side: &mut dyn FrameSide, batch: &mut Vec<u64>) -> bool {
        for _ in 0..self.batch_cycles {
            let cycle = side.cycle();
            if cycle >= self.end {
                return false;
            }
            let sample = cycle == self.next_sample;
            let head = batch.len();
            batch.push(if sample { SAMPLE } else { 0 });
            if !side.drive_into(batch, sample) {
                batch.truncate(head);
                return false;
            }
            if sample {
                self.next_sample = cycle.saturating_add(self.interval);
                self.samples += 1;
            }
        }
        true
    }

    /// The final state(cycle) after the last cycle, which no cycle of the stimulus showed.
    fn finish(&mut self, side: &mut dyn FrameSide, batch: &mut Vec<u64>) {
        if self.stateful && side.cycle() > self.first_cycle {
            self.samples += 1;
            batch.push(FINAL);
            side.state_into(batch);
        }
    }

    fn end(&self, side: Box<dyn FrameSide + '_>) -> ModelEnd {
        ModelEnd {
            end: side.cycle(),
            samples: self.samples,
            coverage: side.into_coverage(),
        }
    }
}

/// Check one batch of frames against the RTL, from `*cycle` on: each frame's inputs into
/// the RTL, settle, compare, clock edge. Err(the cycle at which the RTL differed or
/// failed).
fn check_batch(
    rtl: &mut RtlModel,
    frame: &Frame,
    batch: &[u64],
    cycle: &mut u64,
    ports: &mut [Bits],
) -> Result<(), u64> {
    let mut pos = 0;
    while pos < batch.len() {
        // A run of plain frames in the model's own loop; the other frames below.
        if batch[pos] == 0 {
            match rtl.check_frames(batch, &mut pos) {
                Ok(n) => {
                    *cycle += n;
                    if pos == batch.len() {
                        break;
                    }
                }
                Err(n) => {
                    *cycle += n;
                    return Err(*cycle);
                }
            }
        }
        let head = batch[pos];
        pos += 1;
        if head == FINAL {
            frame.state.read(ports, batch, &mut pos);
            let same = rtl.eval().is_ok()
                && rtl.sample_state().is_ok()
                && rtl.first_state_mismatch(ports).is_none();
            if !same {
                return Err(*cycle);
            }
            continue;
        }
        // A state sample (plain frames went to the shim's loop above): the inputs straight
        // from the frame's words into the model, the outputs against them, then the state.
        pos += rtl.set_inputs_from_words(&batch[pos..]);
        if rtl.eval().is_err() {
            return Err(*cycle);
        }
        let (same, read) = rtl.outputs_match_words(&batch[pos..]);
        if !same {
            return Err(*cycle);
        }
        pos += read;
        if head == SAMPLE {
            frame.state.read(ports, batch, &mut pos);
            if rtl.sample_state().is_err() || rtl.first_state_mismatch(ports).is_some() {
                return Err(*cycle);
            }
        }
        if rtl.edge().is_err() {
            return Err(*cycle);
        }
        *cycle += 1;
    }
    Ok(())
}
