//! The model thread of the two-thread lockstep without the by-name port values: a
//! stimulus written against a unit's typed ports ([`TypedStimulus`]) drives the typed
//! unit model directly, and the cycle's frame words (and the coverage, sampled from them)
//! come straight from the typed values.
//!
//! Why: on the by-name path every port of every cycle goes through a [`Bits`] value
//! several times (written by the stimulus, read by the model, the model's outputs written,
//! read again by the coverage and by the frame writer). For the stacks that port traffic
//! was most of the model thread, the longer of the two threads (README, "Co-simulation
//! speed").
//!
//! Same results, by construction: the stimulus's logic exists once (its by-name `drive`
//! is [`drive_typed`] over the same [`TypedStimulus::next_inputs`]), the unit model is the
//! same typed model the by-name [`Adapter`](warpforge_model::units::declare::Adapter)
//! wraps, a typed value put into a frame ([`PortGroup::put_frame`]) has the words its
//! `Bits` would have, and the coverage reads either through the same sampler
//! ([`Coverage::sample_from`]). The test `typed_model_side_writes_the_by_name_frames`
//! compares the two frame by frame.

use super::model_side::ModelSide;
use super::{Stimulus, STEER_INTERVAL};
use crate::rtl::FramePorts;
use warpforge_model::units::contract::{Bits, Params, Role, UnitDesc};
use warpforge_model::units::coverage::Coverage;
use warpforge_model::units::declare::{PortGroup, PortWidth, Unit, UnitParams, WordSlot, RST_N};

/// A stimulus of unit `U` written against its typed ports.
pub trait TypedStimulus<U: Unit> {
    /// The inputs of `cycle` into `inputs` (every field; it holds the default values
    /// when called), given the registered outputs `regs` (state(`cycle`); only when
    /// [`Stimulus::reads_outputs`] says so, else they may be stale): `Some(rst_n)`, or
    /// `None` when the stimulus has ended.
    fn next_inputs(
        &mut self,
        cycle: u64,
        regs: &U::Registered,
        inputs: &mut U::Inputs,
    ) -> Option<bool>;
}

/// [`Stimulus::drive`] of a typed stimulus: the registered outputs read from `ports`, the
/// inputs and `rst_n` written to them.
pub fn drive_typed<U: Unit, T: TypedStimulus<U> + ?Sized>(
    stim: &mut T,
    cycle: u64,
    ports: &mut [Bits],
) -> bool {
    let regs = U::Registered::read_ports(ports);
    let mut inputs = U::Inputs::default();
    match stim.next_inputs(cycle, &regs, &mut inputs) {
        None => false,
        Some(rst_n) => {
            ports[RST_N].set_u64(rst_n as u64);
            inputs.write_ports(ports);
            true
        }
    }
}

/// The [`Stimulus`] methods of a stimulus written against unit `$unit`'s typed ports
/// ([`TypedStimulus`]): `drive` through [`drive_typed`], `frame_side` through
/// [`typed_side`]. Put it in the stimulus's `impl Stimulus`.
macro_rules! typed_stimulus_methods {
    ($unit:ty) => {
        fn drive(
            &mut self,
            cycle: u64,
            ports: &mut [warpforge_model::units::contract::Bits],
        ) -> bool {
            $crate::lockstep::typed_side::drive_typed::<$unit, _>(self, cycle, ports)
        }

        fn frame_side<'a>(
            &'a mut self,
            setup: $crate::lockstep::FrameSetup<'a>,
        ) -> Box<dyn $crate::lockstep::FrameSide + 'a> {
            $crate::lockstep::typed_side::typed_side::<$unit, _>(self, setup)
        }

        fn has_typed_side(&self) -> bool {
            true
        }
    };
}
pub(crate) use typed_stimulus_methods;

/// What a model thread needs to know of the frames it writes.
pub struct FrameSetup<'a> {
    pub desc: &'static UnitDesc,
    pub params: &'a Params,
    /// The ports of a cycle's frame after its header: the inputs, then the compared
    /// outputs.
    pub inputs: &'a FramePorts,
    pub outputs: &'a FramePorts,
    /// The debug-state ports of a sample.
    pub state: &'a FramePorts,
    pub coverage: Coverage,
    pub first_cycle: u64,
    /// Whether a typed stimulus may take the typed path ([`typed_side`]); false: every
    /// stimulus takes the by-name one (to compare the two).
    pub typed: bool,
}

/// The model thread's cycle, whichever way the ports are carried.
pub trait FrameSide {
    /// The cycle the next [`FrameSide::drive_into`] drives.
    fn cycle(&self) -> u64;
    /// Drive the next cycle and append its inputs' and outputs' words to `batch` (as
    /// [`FramePorts::write`] does) and, with `sample`, the debug state (state(cycle)) after
    /// them; then the clock edge. False when the stimulus has ended (nothing appended).
    fn drive_into(&mut self, batch: &mut Vec<u64>, sample: bool) -> bool;
    /// Append the debug state now (after the last cycle) to `batch`.
    fn state_into(&mut self, batch: &mut Vec<u64>);
    /// Whether this is the typed path ([`typed_side`]).
    fn typed(&self) -> bool;
    /// The coverage of the cycles driven.
    fn into_coverage(self: Box<Self>) -> Coverage;
}

/// The model side of a typed stimulus and its unit (see the module documentation).
struct TypedSide<'s, U: Unit, T: ?Sized> {
    stim: &'s mut T,
    unit: U,
    coverage: Coverage,
    first_cycle: u64,
    cycle: u64,
    inputs: U::Inputs,
    /// Every port's words in a cycle's frame (after the header), and the debug-state
    /// ports' the coverage reads in the scratch frame's tail.
    slots: Vec<WordSlot>,
    /// A cycle's frame, written in place, then its first `carried` words appended to the
    /// batch; after them, the debug-state ports `state_read` the coverage reads.
    frame: Vec<u64>,
    carried: usize,
    state_read: Vec<usize>,
    /// For the debug state only (every state interval).
    ports: Vec<Bits>,
    state: &'s FramePorts,
}

/// The model side of the by-name path: the stimulus's ports, the unit model behind its
/// by-name adapter, the frame written from the ports' `Bits` (the default
/// [`Stimulus::frame_side`]).
pub fn by_name_side<'a, S: Stimulus + ?Sized>(
    stim: &'a mut S,
    setup: FrameSetup<'a>,
) -> Box<dyn FrameSide + 'a> {
    let (side, ports) = ModelSide::start(
        stim,
        setup.desc,
        setup.params,
        setup.coverage,
        setup.first_cycle,
    );
    Box::new(ByName {
        side,
        ports,
        inputs: setup.inputs,
        outputs: setup.outputs,
        state: setup.state,
    })
}

/// See [`by_name_side`].
struct ByName<'a, S: ?Sized> {
    side: ModelSide<'a, S>,
    ports: Vec<Bits>,
    inputs: &'a FramePorts,
    outputs: &'a FramePorts,
    state: &'a FramePorts,
}

impl<S: Stimulus + ?Sized> FrameSide for ByName<'_, S> {
    #[inline]
    fn cycle(&self) -> u64 {
        self.side.cycle()
    }
    #[inline]
    fn drive_into(&mut self, batch: &mut Vec<u64>, sample: bool) -> bool {
        if !self.side.drive(&mut self.ports) {
            return false;
        }
        self.inputs.write(&self.ports, batch);
        self.outputs.write(&self.ports, batch);
        if sample {
            self.state_into(batch);
        }
        self.side.close(&mut self.ports);
        true
    }
    fn state_into(&mut self, batch: &mut Vec<u64>) {
        self.side.model.debug_state(&mut self.ports);
        self.state.write(&self.ports, batch);
    }
    fn typed(&self) -> bool {
        false
    }
    fn into_coverage(self: Box<Self>) -> Coverage {
        self.side.into_coverage()
    }
}

/// The typed model side of `stim` for unit `U` (what a typed stimulus's
/// [`Stimulus::frame_side`] returns); the by-name one when `setup` says so, or when the
/// frames or the coverage need a port a frame does not carry.
pub fn typed_side<'a, U: Unit, T: TypedStimulus<U> + Stimulus + ?Sized>(
    stim: &'a mut T,
    setup: FrameSetup<'a>,
) -> Box<dyn FrameSide + 'a> {
    debug_assert!(std::ptr::eq(setup.desc, U::desc()));
    let widths = setup.desc.widths(setup.params);
    let none = WordSlot {
        at: 0,
        len: 0,
        width: PortWidth::of(0),
    };
    let mut slots = vec![none; widths.len()];
    let mut at = 0u32;
    // Port `p`'s words next in the frame.
    let mut place = |p: usize, slots: &mut Vec<WordSlot>| {
        let len = widths[p].div_ceil(64).max(1);
        slots[p] = WordSlot {
            at,
            len,
            width: PortWidth::of(widths[p]),
        };
        at += len;
        at
    };
    let mut carried = 0;
    for &p in setup.inputs.ports().iter().chain(setup.outputs.ports()) {
        carried = place(p, &mut slots);
    }
    let all_carried = (setup.desc.ports.iter().enumerate())
        .filter(|(_, s)| s.role != Role::Debug)
        .all(|(p, _)| slots[p].len > 0);
    if !setup.typed || !all_carried {
        return by_name_side(stim, setup);
    }
    // The debug-state ports the coverage reads (in reset cycles, say): after the frame's
    // words in the scratch frame, filled only in the cycles that read them.
    let mut state_read = vec![];
    let mut words = carried;
    for p in setup.coverage.ports_read() {
        if slots[p].len == 0 {
            words = place(p, &mut slots);
            state_read.push(p);
        }
    }
    let mut unit = U::new(U::Params::from_params(setup.params));
    unit.reset(); // the implicit reset cycle before cycle 0
    let mut coverage = setup.coverage;
    coverage.bind_frame(&slots);
    Box::new(TypedSide {
        stim,
        unit,
        coverage,
        first_cycle: setup.first_cycle,
        cycle: setup.first_cycle,
        inputs: U::Inputs::default(),
        slots,
        frame: vec![0; words as usize],
        carried: carried as usize,
        state_read,
        ports: setup.desc.zero_ports(setup.params),
        state: setup.state,
    })
}

impl<U: Unit, T: TypedStimulus<U> + Stimulus + ?Sized> FrameSide for TypedSide<'_, U, T> {
    #[inline]
    fn cycle(&self) -> u64 {
        self.cycle
    }

    /// As `ModelSide::drive` and `close`: steer, the registered outputs, the stimulus's
    /// inputs, the clock edge with the combinational outputs it returns (0 in reset; the
    /// debug state is taken before it), all put into the frame, and the coverage sampled
    /// from it.
    #[inline]
    fn drive_into(&mut self, batch: &mut Vec<u64>, sample: bool) -> bool {
        if (self.cycle - self.first_cycle).is_multiple_of(STEER_INTERVAL) {
            self.stim.steer(&self.coverage);
        }
        // Cut to the ports' widths, as the by-name path's values are (its stimulus reads
        // them from, and its model reads the inputs from, ports of those widths).
        let mut regs = self.unit.registered();
        regs.fit(&self.slots);
        self.inputs = Default::default(); // as `drive_typed` gives them
        let Some(rst_n) = self.stim.next_inputs(self.cycle, &regs, &mut self.inputs) else {
            return false;
        };
        self.inputs.fit(&self.slots);
        let state_read = self.coverage.needs_state(!rst_n);
        if sample || state_read {
            self.unit.debug_state(&mut self.ports);
        }
        let events = if rst_n {
            self.unit.tick(&self.inputs)
        } else {
            self.unit.reset();
            Default::default()
        };
        // Every word of the frame is written: each carried port is an input, a registered
        // or a combinational output.
        let frame = &mut self.frame[..];
        frame[self.slots[RST_N].at as usize] = rst_n as u64;
        self.inputs.put_frame(&self.slots, frame);
        regs.put_frame(&self.slots, frame);
        events.put_frame(&self.slots, frame);
        if state_read {
            for &p in &self.state_read {
                let s = self.slots[p];
                frame[s.at as usize..(s.at + s.len) as usize]
                    .copy_from_slice(self.ports[p].words());
            }
        }
        self.coverage.sample_frame(frame, &self.slots);
        batch.extend_from_slice(&frame[..self.carried]);
        if sample {
            self.state.write(&self.ports, batch);
        }
        self.cycle += 1;
        true
    }

    fn state_into(&mut self, batch: &mut Vec<u64>) {
        self.unit.debug_state(&mut self.ports);
        self.state.write(&self.ports, batch);
    }

    fn typed(&self) -> bool {
        true
    }

    fn into_coverage(self: Box<Self>) -> Coverage {
        self.coverage
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kits::{BoxedStimulus, KITS};

    /// A frame layout of `desc` at `params` as an RTL model's would be: `rst_n` and the
    /// inputs, the compared outputs, the debug state; one-word ports first in each.
    fn frames(desc: &UnitDesc, params: &Params) -> [FramePorts; 3] {
        let widths = desc.widths(params);
        let part = |roles: &[Role]| {
            let mut ports: Vec<usize> = (0..desc.ports.len())
                .filter(|&p| roles.contains(&desc.ports[p].role))
                .collect();
            ports.sort_by_key(|&p| widths[p] > 64);
            FramePorts::new(ports, &widths)
        };
        [
            part(&[Role::Input]),
            part(&[Role::Registered, Role::Combinational]),
            part(&[Role::Debug]),
        ]
    }

    /// What a model side wrote: every word over up to `cycles` cycles (a state sample every
    /// 64), then the final state; the coverage; whether it took the typed path.
    type Written = (Vec<u64>, Vec<(String, u64)>, bool);

    fn run(
        desc: &'static UnitDesc,
        params: &Params,
        mut stim: BoxedStimulus,
        typed: bool,
        (first_cycle, every): (u64, u64),
        cycles: u64,
    ) -> Written {
        let [inputs, outputs, state] = frames(desc, params);
        let setup = FrameSetup {
            desc,
            params,
            inputs: &inputs,
            outputs: &outputs,
            state: &state,
            coverage: Coverage::new(desc, params).unwrap(),
            first_cycle,
            typed,
        };
        let mut side = stim.frame_side(setup);
        let took_typed = side.typed();
        let mut words = vec![];
        while side.cycle() < first_cycle.saturating_add(cycles) {
            let sample = (side.cycle() - first_cycle).is_multiple_of(every);
            if !side.drive_into(&mut words, sample) {
                break;
            }
        }
        side.state_into(&mut words);
        let cov = side.into_coverage();
        let bins = cov.bins_hit().map(|(b, n)| (b.to_string(), n)).collect();
        (words, bins, took_typed)
    }

    /// Both paths from fresh stimuli: the same words and coverage; whether typed.
    fn compare(
        desc: &'static UnitDesc,
        params: &Params,
        what: &str,
        stim: impl Fn() -> BoxedStimulus,
        cycles: u64,
    ) -> bool {
        // From cycle 0 with a state sample every 64 cycles, and from cycle 5 every 7.
        let mut took = true;
        for at in [(0, 64), (5, 7)] {
            took &= compare_at(desc, params, what, &stim, at, cycles);
        }
        took
    }

    fn compare_at(
        desc: &'static UnitDesc,
        params: &Params,
        what: &str,
        stim: &impl Fn() -> BoxedStimulus,
        at: (u64, u64),
        cycles: u64,
    ) -> bool {
        let (words, bins, by_name_typed) = run(desc, params, stim(), false, at, cycles);
        let typed = run(desc, params, stim(), true, at, cycles);
        assert!(!by_name_typed);
        assert!(!words.is_empty());
        let at = |w: &[u64]| format!("{} {params} {what} {at:?} ({} words)", desc.name, w.len());
        assert_eq!(words.len(), typed.0.len(), "{}", at(&words));
        if let Some(i) = (0..words.len()).find(|&i| words[i] != typed.0[i]) {
            panic!("{}: word {i} differs", at(&words));
        }
        assert_eq!(bins, typed.1, "{}", at(&words));
        typed.2
    }

    /// The typed model side writes exactly the by-name side's frames, state samples and
    /// coverage, for every kit's random (two seeds) and directed stimulus at every
    /// standard parameter set; every kit's random stimulus but `slp_perm`'s (uniformly
    /// random inputs, port by port) takes it.
    #[test]
    fn typed_model_side_writes_the_by_name_frames() {
        for kit in KITS {
            let desc = kit.unit;
            let typed_unit = desc.name != "slp_perm";
            for params in desc.standard_params() {
                for seed in [1, 7] {
                    let stim = || (kit.random)(desc, &params, seed, 20_000);
                    let typed = compare(desc, &params, &format!("seed {seed}"), stim, 20_000);
                    assert_eq!(typed, typed_unit, "{} {params}", desc.name);
                }
                if let Some(directed) = kit.directed {
                    let stim = || directed(desc, &params);
                    compare(desc, &params, "directed", stim, u64::MAX);
                }
            }
        }
    }
}
