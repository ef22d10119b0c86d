//! The model side of a lockstep cycle: the stimulus (steered by the coverage), the unit
//! model and the coverage, one cycle at a time.
//!
//! Every loop that runs a stimulus against the model by name goes through [`ModelSide`]:
//! the sequential lockstep loop, the model thread of the pipelined loop for a by-name
//! stimulus, the probe that times each half, and the re-run that rebuilds a failing run's
//! inputs for its report. They must all see the same inputs for the same stimulus and
//! seed (a steered stimulus depends on the coverage so far), which is what having one
//! cursor guarantees. The typed model side (`typed_side.rs`) does the same steps in the
//! same order on typed values; a unit test compares the two frame by frame.

use super::{Stimulus, STEER_INTERVAL};
use warpforge_model::units::contract::{Bits, Params, UnitDesc, UnitModel};
use warpforge_model::units::coverage::Coverage;
use warpforge_model::units::declare::RST_N;

/// A stimulus driving a unit model, cycle by cycle (steps 1, 2, 4 and the model's half of
/// 7 of the lockstep cycle, see the module documentation of `lockstep`).
pub(crate) struct ModelSide<'s, S: ?Sized> {
    pub(crate) stim: &'s mut S,
    pub(crate) model: Box<dyn UnitModel>,
    coverage: Coverage,
    /// Whether the stimulus reads the registered outputs (state(t)) before driving.
    reads: bool,
    first_cycle: u64,
    cycle: u64,
}

impl<'s, S: Stimulus + ?Sized> ModelSide<'s, S> {
    /// `model` after its implicit reset cycle; the first cycle driven is `first_cycle`.
    pub(crate) fn new(
        stim: &'s mut S,
        model: Box<dyn UnitModel>,
        coverage: Coverage,
        first_cycle: u64,
    ) -> ModelSide<'s, S> {
        ModelSide {
            reads: stim.reads_outputs(),
            stim,
            model,
            coverage,
            first_cycle,
            cycle: first_cycle,
        }
    }

    /// A fresh model of `desc` at `params` after its implicit reset cycle, driven by
    /// `stim` from `first_cycle`; and the port vector.
    pub(crate) fn start(
        stim: &'s mut S,
        desc: &'static UnitDesc,
        params: &Params,
        coverage: Coverage,
        first_cycle: u64,
    ) -> (ModelSide<'s, S>, Vec<Bits>) {
        let mut model = (desc.build)(params);
        let ports = desc.zero_ports(params);
        model.tick(&ports); // rst_n = 0
        (ModelSide::new(stim, model, coverage, first_cycle), ports)
    }

    /// The cycle the next [`ModelSide::drive`] drives.
    #[inline]
    pub(crate) fn cycle(&self) -> u64 {
        self.cycle
    }

    /// Steer the stimulus (every [`STEER_INTERVAL`] cycles of the run), state(t) into the
    /// registered ports when the stimulus reads them, the stimulus's inputs for this cycle,
    /// then the outputs the RTL must show for them (after the first step the registered
    /// ports already hold state(t), so only the combinational ones are computed). False
    /// when the stimulus has ended (the outputs are then not computed).
    #[inline]
    pub(crate) fn drive(&mut self, ports: &mut [Bits]) -> bool {
        if (self.cycle - self.first_cycle).is_multiple_of(STEER_INTERVAL) {
            self.stim.steer(&self.coverage);
        }
        if self.reads {
            self.model.registered_outputs(ports);
        }
        if !self.stim.drive(self.cycle, ports) {
            return false;
        }
        // The inputs are read once and kept for the clock edge in `close`: nothing changes
        // the input ports in between (the caller compares, writes a frame, samples).
        self.model.outputs_keeping_inputs(ports, !self.reads);
        true
    }

    /// Close the cycle [`ModelSide::drive`] opened: its coverage (with the model's debug
    /// state packed into `ports` first when the bins read it) and the model's clock edge.
    #[inline]
    pub(crate) fn close(&mut self, ports: &mut [Bits]) {
        if self.coverage.needs_state(ports[RST_N].to_u64() == 0) {
            self.model.debug_state(ports);
        }
        self.coverage.sample(ports);
        self.model.tick_kept(ports);
        self.cycle += 1;
    }

    /// The coverage of the cycles closed so far.
    pub(crate) fn into_coverage(self) -> Coverage {
        self.coverage
    }
}
