//! Stimulus helpers: a small deterministic RNG, seeded all-random stimulus, and a closure
//! adapter. Unit-specific constrained-random generators implement
//! [`crate::Stimulus`] themselves.

use crate::Stimulus;
use warpforge_model::units::contract::{Bits, Params, UnitDesc};
use warpforge_model::units::declare::PortGroup;
use warpforge_model::units::trace::{InstanceReplay, Trace};

/// SplitMix64: tiny, fast, and the same sequence on every platform and crate version
/// (stimulus must be reproducible from its seed for rewinding and bug reports).
#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64(seed)
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0; tiny bias for huge n is irrelevant for stimulus).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    /// True with probability `1/n`.
    #[inline]
    pub fn one_in(&mut self, n: u64) -> bool {
        n != 0 && self.below(n) == 0
    }
}

/// Every input uniformly random each cycle, `rst_n` low for the first `reset_cycles`
/// cycles and then, at random, one cycle in `reset_one_in` (so reset is also exercised
/// from non-trivial states). Deterministic per seed and rewindable.
#[derive(Debug, Clone)]
pub struct RandomStimulus {
    seed: u64,
    rng: SplitMix64,
    cycles: u64,
    /// (port index, width) of every input except `rst_n`.
    inputs: Vec<(usize, u32)>,
    scratch: Vec<u64>,
    pub reset_cycles: u64,
    pub reset_one_in: u64,
}

impl RandomStimulus {
    pub fn new(desc: &UnitDesc, params: &Params, seed: u64, cycles: u64) -> RandomStimulus {
        let widths = desc.widths(params);
        let inputs: Vec<(usize, u32)> = desc
            .ports
            .iter()
            .enumerate()
            .skip(1)
            .filter(|(_, p)| p.role.is_input())
            .map(|(i, _)| (i, widths[i]))
            .collect();
        let max_words = inputs
            .iter()
            .map(|&(_, w)| w.div_ceil(64) as usize)
            .max()
            .unwrap_or(1);
        RandomStimulus {
            seed,
            rng: SplitMix64::new(seed),
            cycles,
            inputs,
            scratch: vec![0; max_words.max(1)],
            reset_cycles: 2,
            reset_one_in: 1000,
        }
    }

    pub fn with_reset_one_in(mut self, n: u64) -> Self {
        self.reset_one_in = n;
        self
    }
}

impl Stimulus for RandomStimulus {
    #[inline]
    fn drive(&mut self, cycle: u64, ports: &mut [Bits]) -> bool {
        if cycle >= self.cycles {
            return false;
        }
        let rst = cycle < self.reset_cycles || self.rng.one_in(self.reset_one_in);
        ports[0].set_u64(!rst as u64);
        for &(i, w) in &self.inputs {
            if w <= 64 {
                ports[i].set_u64(self.rng.next_u64());
            } else {
                let n = w.div_ceil(64) as usize;
                for s in &mut self.scratch[..n] {
                    *s = self.rng.next_u64();
                }
                ports[i].set_words(&self.scratch[..n]);
            }
        }
        true
    }

    fn reads_outputs(&self) -> bool {
        false
    }

    fn can_rewind(&self) -> bool {
        true
    }

    fn rewind(&mut self) {
        self.rng = SplitMix64::new(self.seed);
    }
}

/// Fixed input vectors (directed tests): one step per cycle, `Some(inputs)` with `rst_n`
/// high or `None` for a reset cycle (inputs idle). Rewindable.
#[derive(Debug, Clone)]
pub struct Script<I> {
    steps: Vec<Option<I>>,
    at: usize,
}

impl<I: PortGroup> Script<I> {
    pub fn new(steps: Vec<Option<I>>) -> Script<I> {
        Script { steps, at: 0 }
    }
}

impl<I: PortGroup> Stimulus for Script<I> {
    fn drive(&mut self, _cycle: u64, ports: &mut [Bits]) -> bool {
        let Some(step) = self.steps.get(self.at) else {
            return false;
        };
        self.at += 1;
        ports[0].set_u64(step.is_some() as u64);
        match step {
            Some(inp) => inp.write_ports(ports),
            None => I::default().write_ports(ports),
        }
        true
    }
    fn reads_outputs(&self) -> bool {
        false
    }
    fn can_rewind(&self) -> bool {
        true
    }
    fn rewind(&mut self) {
        self.at = 0;
    }
}

/// A stimulus from a closure `(cycle, ports) -> bool`. It may read the registered outputs;
/// it cannot rewind, so the harness records its inputs while running.
pub struct FnStimulus<F>(pub F);

impl<F: FnMut(u64, &mut [Bits]) -> bool> Stimulus for FnStimulus<F> {
    fn drive(&mut self, cycle: u64, ports: &mut [Bits]) -> bool {
        (self.0)(cycle, ports)
    }
}

/// One instance of a unit trace recorded while the GPU model ran a workload: one reset
/// cycle, the recorded events at their cycles, idle cycles between them (cut short once the
/// state settles, which is why it reads the registered outputs). A malformed trace ends
/// the stimulus; check [`TraceStimulus::error`] afterwards. Rewindable (the replay is a
/// function of the trace and the model's outputs), so long traces are not copied while
/// running.
pub struct TraceStimulus<'a> {
    trace: &'a Trace,
    instance: usize,
    replay: InstanceReplay<'a>,
    error: Option<String>,
}

impl<'a> TraceStimulus<'a> {
    pub fn new(trace: &'a Trace, instance: usize) -> Result<TraceStimulus<'a>, String> {
        Ok(TraceStimulus {
            trace,
            instance,
            replay: InstanceReplay::new(trace, instance)?,
            error: None,
        })
    }

    /// The decoding error that ended the stimulus early, if any.
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    /// Idle cycles skipped because the state had settled.
    pub fn skipped_idle(&self) -> u64 {
        self.replay.skipped_idle
    }
}

impl Stimulus for TraceStimulus<'_> {
    fn drive(&mut self, _cycle: u64, ports: &mut [Bits]) -> bool {
        match self.replay.drive(ports) {
            Ok(more) => more,
            Err(e) => {
                self.error = Some(e);
                false
            }
        }
    }

    fn can_rewind(&self) -> bool {
        true
    }

    fn rewind(&mut self) {
        match InstanceReplay::new(self.trace, self.instance) {
            Ok(r) => self.replay = r,
            Err(e) => self.error = Some(e),
        }
    }
}

/// Error-path stimulus for `simt_stack_spe` (the realistic program traffic is
/// [`crate::stack_stimulus::CfgStimulus`]): reads the registered TOS outputs and issues
/// mostly legal but unstructured traffic (updates at the TOS PC with its live mask; sequential steps,
/// divergent and uniform branches with nearby targets and reconvergence points, jumps,
/// partial and full exits, new launches), with rare illegal updates (wrong PC), mid-run
/// resets and junk on the update fields while `upd_valid` is low. Rewindable.
#[derive(Debug, Clone)]
pub struct SpeRandom {
    seed: u64,
    rng: SplitMix64,
    cycles: u64,
    lanes: u64,
    pc_mask: u64,
    /// Port positions: depth, tos_valid, tos_pc, tos_mask, the sticky error flags.
    depth: usize,
    err_pc: usize,
    err_overflow: usize,
    tos_valid: usize,
    tos_pc: usize,
    tos_mask: usize,
}

impl SpeRandom {
    pub fn new(params: &Params, seed: u64, cycles: u64) -> SpeRandom {
        use warpforge_model::units::contract::low_mask;
        use warpforge_model::units::simt_stack::SPE_DESC;
        let idx = |n| SPE_DESC.port_index(n).expect("simt_stack_spe port");
        SpeRandom {
            seed,
            rng: SplitMix64::new(seed),
            cycles,
            lanes: low_mask(params.get("WARP_SIZE") as u32),
            pc_mask: low_mask(params.get("PC_W") as u32),
            depth: idx("depth"),
            err_pc: idx("err_pc"),
            err_overflow: idx("err_overflow"),
            tos_valid: idx("tos_valid"),
            tos_pc: idx("tos_pc"),
            tos_mask: idx("tos_mask"),
        }
    }
}

impl Stimulus for SpeRandom {
    fn drive(&mut self, cycle: u64, ports: &mut [Bits]) -> bool {
        use warpforge_model::units::simt_stack::{SpeInputs, UpdKind};
        if cycle >= self.cycles {
            return false;
        }
        let r = &mut self.rng;
        let rst = cycle < 2 || r.one_in(5000);
        let depth = ports[self.depth].to_u64();
        let tos_valid = ports[self.tos_valid].to_u64() != 0;
        let pc = ports[self.tos_pc].to_u64();
        let mask = ports[self.tos_mask].to_u64();
        let pcm = self.pc_mask;
        let mut inp = SpeInputs {
            // Junk on the update fields: must be ignored while upd_valid is low.
            upd_pc: r.next_u64() as u32,
            upd_kind: r.below(4) as u8,
            upd_taken: r.next_u64() & self.lanes,
            upd_target: r.next_u64() as u32,
            upd_next: r.next_u64() as u32,
            upd_rpc: r.next_u64() as u32,
            ..Default::default()
        };
        // Errors are sticky until the next launch: relaunch soon after one.
        let err = ports[self.err_pc].to_u64() | ports[self.err_overflow].to_u64() != 0;
        if depth == 0 || r.one_in(if err { 16 } else { 400 }) {
            inp.launch_valid = true;
            inp.launch_pc = r.below(64) as u32;
            inp.launch_rpc = pcm as u32;
            inp.launch_mask = if r.one_in(2) {
                self.lanes
            } else {
                (r.next_u64() & self.lanes) | 1
            };
        } else if tos_valid && !r.one_in(8) {
            inp.upd_valid = true;
            inp.upd_pc = if r.one_in(1000) {
                r.next_u64() as u32
            } else {
                pc as u32
            };
            let kind = match r.below(10) {
                0..=4 => UpdKind::Seq,
                5..=7 => UpdKind::Branch,
                8 => UpdKind::Jump,
                _ => UpdKind::Exit,
            };
            inp.upd_kind = kind as u8;
            inp.upd_taken = match r.below(4) {
                0 => mask,
                1 => 0,
                _ => r.next_u64() & mask,
            };
            inp.upd_next = ((pc + 1) & pcm) as u32;
            inp.upd_target = (pc.wrapping_add(r.below(32)).wrapping_sub(8) & pcm) as u32;
            inp.upd_rpc = if r.one_in(4) {
                pcm as u32
            } else {
                ((pc + 1 + r.below(16)) & pcm) as u32
            };
        }
        ports[0].set_u64(!rst as u64);
        inp.write_ports(ports);
        true
    }

    fn can_rewind(&self) -> bool {
        true
    }

    fn rewind(&mut self) {
        self.rng = SplitMix64::new(self.seed);
    }
}

/// Two stimuli taking turns every `period` cycles (each is driven with the global cycle
/// number and sees the current outputs), e.g. legal program traffic and error-path traffic.
#[derive(Debug, Clone)]
pub struct Alternate<A, B> {
    pub a: A,
    pub b: B,
    pub period: u64,
}

impl<A: Stimulus, B: Stimulus> Stimulus for Alternate<A, B> {
    fn drive(&mut self, cycle: u64, ports: &mut [Bits]) -> bool {
        if (cycle / self.period.max(1)).is_multiple_of(2) {
            self.a.drive(cycle, ports)
        } else {
            self.b.drive(cycle, ports)
        }
    }
    fn reads_outputs(&self) -> bool {
        self.a.reads_outputs() || self.b.reads_outputs()
    }
    fn can_rewind(&self) -> bool {
        self.a.can_rewind() && self.b.can_rewind()
    }
    fn rewind(&mut self) {
        self.a.rewind();
        self.b.rewind();
    }
    fn steer(&mut self, coverage: &warpforge_model::units::coverage::Coverage) {
        self.a.steer(coverage);
        self.b.steer(coverage);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spe_random_reaches_deep_stacks_with_few_errors() {
        use warpforge_model::units::simt_stack::SPE_DESC;
        let params = SPE_DESC
            .params(&[("WARP_SIZE", 32u64), ("DEPTH", 8)])
            .unwrap();
        let mut m = (SPE_DESC.build)(&params);
        let mut ports = SPE_DESC.zero_ports(&params);
        let mut st = SpeRandom::new(&params, 5, 50_000);
        let (depth, err_pc, err_ovf) = (
            SPE_DESC.port_index("depth").unwrap(),
            SPE_DESC.port_index("err_pc").unwrap(),
            SPE_DESC.port_index("err_overflow").unwrap(),
        );
        let (mut max_depth, mut err_cycles, mut ovf_cycles, mut c) = (0, 0, 0, 0);
        loop {
            m.outputs(&mut ports);
            max_depth = max_depth.max(ports[depth].to_u64());
            err_cycles += ports[err_pc].to_u64();
            ovf_cycles += ports[err_ovf].to_u64();
            if !st.drive(c, &mut ports) {
                break;
            }
            m.outputs(&mut ports);
            m.tick(&ports);
            c += 1;
        }
        eprintln!(
            "max depth {max_depth}, err_pc cycles {err_cycles}, overflow cycles {ovf_cycles}"
        );
        assert!(max_depth >= 6, "max depth {max_depth}");
        assert!(ovf_cycles > 0, "overflow is exercised");
        assert!(
            err_cycles < 25_000,
            "err_pc set {err_cycles} of 50000 cycles"
        );
    }

    #[test]
    fn splitmix_is_stable() {
        let mut r = SplitMix64::new(0);
        // Reference values of SplitMix64 seeded with 0.
        assert_eq!(r.next_u64(), 0xe220a8397b1dcdaf);
        assert_eq!(r.next_u64(), 0x6e789e6aa1b965f4);
        for _ in 0..1000 {
            assert!(r.below(7) < 7);
        }
    }
}
