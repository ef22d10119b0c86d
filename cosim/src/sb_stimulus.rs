//! Stimulus of `dpe_scoreboard`: constrained-random traffic as an SM drives it, with bursts
//! of uniformly random inputs.
//!
//! Why not uniform random alone (the kit's stimulus until 2026-11-28): with every port valid
//! half the time and `cpy_valid` a random 48-bit word, about half of the registers are
//! pending after a few hundred cycles, so a query almost always hazards (its outputs carry
//! little information), about 24 warps copy in every cycle (an SM copies for the warps
//! whose stacks diverge or reconverge: a few per cycle at most), and a reserve and a
//! release of the same register in one cycle — the coincidence the scoreboard's priority
//! rules are about — is rare. The traffic here is what an SM does: reserves of random
//! destination registers, writebacks that release registers reserved earlier (tracked in
//! `inflight`, in random order: the pipelines have different latencies), now and then a
//! release of a register that is not pending, a re-reserve of a register that retires in
//! the same cycle, copies of one to three warps (often one that reserves in the same
//! cycle: the `S |= P | RSV` path), and queries aimed at the registers in flight, of the
//! same side or the other one (the shadow bits). The fields of idle ports carry junk, and
//! warp and register indices out of range (`NUM_WARPS` or `NUM_REGS` not a power of two)
//! occur. One cycle in 256 starts a burst of 1-16 cycles of uniformly random inputs (every
//! port's every bit), which keeps everything the old stimulus reached within reach.
//!
//! Steering: while no reset has met a pending register (`reset while dbg_P`), resets come
//! one cycle in 64 instead of one in 1,000. Rewindable.

use crate::lockstep::typed_side::typed_stimulus_methods;
use crate::lockstep::{Stimulus, TypedStimulus};
use crate::stimulus::SplitMix64;
use warpforge_model::units::contract::{low_mask, set_words_field, Params};
use warpforge_model::units::coverage::Coverage;
use warpforge_model::units::declare::UnitParams;
use warpforge_model::units::dpe_scoreboard::{
    DpeScoreboard, RegRef, ScoreboardParams, ScoreboardPortIn, ScoreboardRegs, QUERY_SRCS,
};

/// At most this many writes are tracked in flight; more reserves are left pending untracked
/// (until a reset, a uniform burst's release or a random release clears them).
const INFLIGHT_MAX: usize = 256;

/// Constrained-random scoreboard traffic (see the module documentation).
#[derive(Debug, Clone)]
pub struct ScoreboardRandom {
    seed: u64,
    rng: SplitMix64,
    cycles: u64,
    p: ScoreboardParams,
    /// Widths of a warp and a register field (`$clog2` of their counts).
    warp_w: u32,
    reg_w: u32,
    /// Reserved and not yet released, as far as this stimulus knows.
    inflight: Vec<RegRef>,
    /// Cycles left of the current burst of uniformly random inputs.
    burst: u32,
    /// Steering: resets are frequent while no reset met a pending register.
    reset_often: bool,
    /// The cycle's inputs.
    inp: ScoreboardPortIn,
}

/// `$clog2(n)` for `n >= 1`.
fn clog2(n: u32) -> u32 {
    32 - (n - 1).leading_zeros()
}

/// `r` (32 random bits) scaled to `0..n`.
#[inline]
fn scale(r: u64, n: u32) -> u32 {
    (((r & 0xffff_ffff) * n as u64) >> 32) as u32
}

impl ScoreboardRandom {
    pub fn new(params: &Params, seed: u64, cycles: u64) -> ScoreboardRandom {
        let p = ScoreboardParams::from_params(params);
        ScoreboardRandom {
            seed,
            rng: SplitMix64::new(seed),
            cycles,
            p,
            warp_w: clog2(p.num_warps),
            reg_w: clog2(p.num_regs),
            inflight: Vec::with_capacity(INFLIGHT_MAX),
            burst: 0,
            reset_often: false,
            inp: ScoreboardPortIn::default(),
        }
    }

    /// An operand from 64 random bits: a warp and a register of the unit's, or (one in 32
    /// each) any value of the field, beyond `NUM_WARPS - 1` / `NUM_REGS - 1` when those are
    /// not powers of two (such an operand selects nothing); a random side.
    fn op(&self, r: u64) -> RegRef {
        let warp = match r >> 59 {
            0 => (r >> 40) as u32 & low_mask(self.warp_w) as u32,
            _ => scale(r, self.p.num_warps),
        };
        let reg = match r >> 59 & 31 {
            1 => (r >> 48) as u32 & low_mask(self.reg_w) as u32,
            _ => scale(r >> 32, self.p.num_regs),
        };
        RegRef {
            warp,
            side: (r >> 58 & 1) as u8,
            reg,
        }
    }

    /// Every input port uniformly random (as `RandomStimulus`).
    fn uniform(&mut self) {
        let inp = &mut self.inp;
        let rng = &mut self.rng;
        inp.rsv_valid = rng.next_u64() as u8;
        inp.rsv_warp = rng.next_u64();
        inp.rsv_side = rng.next_u64() as u8;
        inp.rsv_reg = rng.next_u64();
        inp.rel_valid = rng.next_u64() as u8;
        inp.rel_warp = rng.next_u64();
        inp.rel_side = rng.next_u64() as u8;
        inp.rel_reg = rng.next_u64();
        inp.cpy_valid = rng.next_u64();
        inp.q_warp = rng.next_u64();
        inp.q_side = rng.next_u64() as u8;
        for w in &mut inp.q_src {
            *w = rng.next_u64();
        }
        inp.q_src_valid = rng.next_u64() as u32;
        inp.q_dst = rng.next_u64();
        inp.q_dst_valid = rng.next_u64() as u8;
    }

    /// One cycle of SM-like traffic (see the module documentation).
    fn traffic(&mut self) {
        let p = self.p;
        let (ww, rw) = (self.warp_w, self.reg_w);
        // Decisions: valid bits of the reserve (bits 0..8) and release (8..16) ports,
        // released operands re-reserved (16..24), random releases (24..32), copies (32..48),
        // queries (48..64).
        let d = self.rng.next_u64();

        // Releases: a write in flight (in random order), or one in eight a random operand.
        let mut released = [RegRef::default(); 8];
        let mut n_released = 0;
        // Idle ports' fields carry junk (the RTL must ignore them), taken from `d`.
        let mut ports = OpPorts::junk(d, d >> 8, d >> 16);
        for k in 0..p.nwb {
            if d >> (8 + k) & 1 == 0 {
                continue;
            }
            let r = self.rng.next_u64();
            let op = match (d >> (24 + k) & 7 == 0, self.inflight.len()) {
                (false, n) if n > 0 => self.inflight.swap_remove(scale(r, n as u32) as usize),
                _ => self.op(r),
            };
            released[n_released] = op;
            n_released += 1;
            ports.set(k, op, ww, rw);
        }
        self.inp.rel_valid = ports.valid as u8;
        self.inp.rel_warp = ports.warps;
        self.inp.rel_side = ports.sides as u8;
        self.inp.rel_reg = ports.regs;

        // Reserves: random destinations; now and then the register a writeback retires
        // this cycle is written again (the release/reserve priority).
        let mut ports = OpPorts::junk(d >> 3, d >> 13, d >> 5);
        let mut reserving_warp = None;
        for k in 0..p.nrsv {
            if d >> k & 1 == 0 {
                continue;
            }
            let r = self.rng.next_u64();
            let op = match n_released {
                n if n > 0 && d >> (16 + k) & 7 == 0 => released[scale(r, n as u32) as usize],
                _ => self.op(r),
            };
            if self.inflight.len() < INFLIGHT_MAX {
                self.inflight.push(op);
            }
            reserving_warp = Some(op.warp);
            ports.set(k, op, ww, rw);
        }
        self.inp.rsv_valid = ports.valid as u8;
        self.inp.rsv_warp = ports.warps;
        self.inp.rsv_side = ports.sides as u8;
        self.inp.rsv_reg = ports.regs;

        // Copies: one to three warps in one cycle in eight, often one that reserves now;
        // one cycle in 256 any set of warps.
        self.inp.cpy_valid = 0;
        match d >> 32 & 0xff {
            0..=31 => {
                let r = self.rng.next_u64();
                for i in 0..1 + (d >> 40 & 1) + (d >> 41 & 1) {
                    let w = match reserving_warp {
                        Some(w) if i == 0 && d >> 42 & 1 == 0 => w,
                        _ => scale(r >> (20 * i), p.num_warps),
                    };
                    self.inp.cpy_valid |= 1u64.checked_shl(w).unwrap_or(0);
                }
            }
            32 => self.inp.cpy_valid = self.rng.next_u64(),
            _ => {}
        }

        // Queries: three in four aimed at a write in flight (its own side: the pending
        // bit; the other side: the shadow bit) through one of the four registers, which is
        // then valid; the other registers and valid bits random.
        let junk = self.rng.next_u64();
        let (mut q_warp, mut q_side, mut q_dst) = (junk, junk >> 16, junk >> 24);
        let mut src_valid = self.rng.next_u64();
        let mut dst_valid = src_valid >> 32;
        for w in &mut self.inp.q_src {
            *w = self.rng.next_u64();
        }
        for q in 0..p.q {
            let r = self.rng.next_u64();
            let aim = match self.inflight.len() {
                n if n > 0 && d >> (48 + q % 8) & 3 != 0 => {
                    Some(self.inflight[scale(r, n as u32) as usize])
                }
                _ => None,
            };
            let target = aim.unwrap_or_else(|| self.op(r.rotate_left(17)));
            let side = target.side ^ (r >> 40 & 1) as u8;
            set_field(&mut q_warp, q * ww, ww, target.warp as u64);
            set_field(&mut q_side, q, 1, side as u64);
            let slot = (r >> 41 & 3) as u32;
            if slot == QUERY_SRCS as u32 {
                set_field(&mut q_dst, q * rw, rw, target.reg as u64);
                dst_valid |= (aim.is_some() as u64) << q;
            } else {
                let i = q * QUERY_SRCS as u32 + slot;
                set_words_field(&mut self.inp.q_src, i * rw, rw, target.reg as u64);
                src_valid |= (aim.is_some() as u64) << i;
            }
        }
        self.inp.q_warp = q_warp;
        self.inp.q_side = q_side as u8;
        self.inp.q_src_valid = src_valid as u32;
        self.inp.q_dst = q_dst;
        self.inp.q_dst_valid = dst_valid as u8;
    }

    /// The cycle's inputs, each field cut to its port's width (the ports cut too, but the
    /// cut value is also what a replay file would show).
    fn cut(&mut self) -> ScoreboardPortIn {
        let p = self.p;
        let (ww, rw) = (self.warp_w, self.reg_w);
        let inp = &mut self.inp;
        inp.rsv_valid &= low_mask(p.nrsv) as u8;
        inp.rsv_warp &= low_mask(p.nrsv * ww);
        inp.rsv_side &= low_mask(p.nrsv) as u8;
        inp.rsv_reg &= low_mask(p.nrsv * rw);
        inp.rel_valid &= low_mask(p.nwb) as u8;
        inp.rel_warp &= low_mask(p.nwb * ww);
        inp.rel_side &= low_mask(p.nwb) as u8;
        inp.rel_reg &= low_mask(p.nwb * rw);
        inp.cpy_valid &= low_mask(p.num_warps);
        inp.q_warp &= low_mask(p.q * ww);
        inp.q_side &= low_mask(p.q) as u8;
        inp.q_src_valid &= low_mask(p.q * QUERY_SRCS as u32) as u32;
        inp.q_dst &= low_mask(p.q * rw);
        inp.q_dst_valid &= low_mask(p.q) as u8;
        inp.clone()
    }
}

/// The packed fields of a group of reserve or release ports being driven.
struct OpPorts {
    valid: u64,
    warps: u64,
    sides: u64,
    regs: u64,
}

impl OpPorts {
    /// No port valid, every field junk.
    fn junk(warps: u64, sides: u64, regs: u64) -> OpPorts {
        OpPorts {
            valid: 0,
            warps,
            sides,
            regs,
        }
    }

    /// Port `k` carries `op` (`ww`, `rw`: the warp and register field widths).
    fn set(&mut self, k: u32, op: RegRef, ww: u32, rw: u32) {
        self.valid |= 1 << k;
        set_field(&mut self.warps, k * ww, ww, op.warp as u64);
        set_field(&mut self.sides, k, 1, op.side as u64);
        set_field(&mut self.regs, k * rw, rw, op.reg as u64);
    }
}

/// Bits `[lsb, lsb + width)` of `word` set to `value`.
#[inline]
fn set_field(word: &mut u64, lsb: u32, width: u32, value: u64) {
    let m = low_mask(width) << lsb;
    *word = (*word & !m) | (value << lsb & m);
}

impl TypedStimulus<DpeScoreboard> for ScoreboardRandom {
    fn next_inputs(
        &mut self,
        cycle: u64,
        _: &ScoreboardRegs,
        inputs: &mut ScoreboardPortIn,
    ) -> Option<bool> {
        if cycle >= self.cycles {
            return None;
        }
        let rst = cycle < 2 || self.rng.one_in(if self.reset_often { 64 } else { 1000 });
        if rst {
            // The unit forgets every pending register.
            self.inflight.clear();
        }
        if self.burst == 0 && self.rng.one_in(256) {
            self.burst = 1 + self.rng.below(16) as u32;
        }
        if self.burst > 0 {
            self.burst -= 1;
            self.uniform();
        } else {
            self.traffic();
        }
        *inputs = self.cut();
        Some(!rst)
    }
}

impl Stimulus for ScoreboardRandom {
    typed_stimulus_methods!(DpeScoreboard);

    fn reads_outputs(&self) -> bool {
        false
    }

    fn can_rewind(&self) -> bool {
        true
    }

    fn rewind(&mut self) {
        self.rng = SplitMix64::new(self.seed);
        self.inflight.clear();
        self.burst = 0;
        self.reset_often = false;
    }

    fn steer(&mut self, coverage: &Coverage) {
        self.reset_often = coverage.is_unhit("reset while dbg_P");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use warpforge_model::units::contract::Bits;
    use warpforge_model::units::dpe_scoreboard::{sb_port, SCOREBOARD_DESC};

    /// Runs the stimulus against the model for `cycles` cycles at `overrides`; returns, per
    /// cycle, (queries that hazarded, warps copying, a reserve and a release of the same
    /// register of the same warp and side).
    fn run(overrides: &[(&str, u64)], seed: u64, cycles: u64) -> Vec<(u32, u32, bool)> {
        let params = SCOREBOARD_DESC.params(overrides).unwrap();
        let p = ScoreboardParams::from_params(&params);
        let mut model = (SCOREBOARD_DESC.build)(&params);
        let mut ports = SCOREBOARD_DESC.zero_ports(&params);
        model.tick(&ports);
        let mut stim = ScoreboardRandom::new(&params, seed, cycles);
        let (ww, rw) = (clog2(p.num_warps), clog2(p.num_regs));
        let ops = |ports: &[Bits], valid: usize, warp: usize, side: usize, reg: usize, n: u32| {
            (0..n)
                .filter(|&k| ports[valid].bit(k))
                .map(|k| {
                    (
                        ports[warp].field(k * ww, ww),
                        ports[side].field(k, 1),
                        ports[reg].field(k * rw, rw),
                    )
                })
                .collect::<Vec<_>>()
        };
        let mut out = vec![];
        for cycle in 0..cycles {
            assert!(stim.drive(cycle, &mut ports));
            model.outputs(&mut ports);
            use sb_port::*;
            let rsv = ops(&ports, rsv_valid, rsv_warp, rsv_side, rsv_reg, p.nrsv);
            let rel = ops(&ports, rel_valid, rel_warp, rel_side, rel_reg, p.nwb);
            out.push((
                ports[q_hazard].to_u64().count_ones(),
                ports[cpy_valid].to_u64().count_ones(),
                rsv.iter().any(|op| rel.contains(op)),
            ));
            model.tick(&ports);
        }
        out
    }

    /// SM-like traffic: queries hazard neither always nor never (uniform random inputs
    /// saturate the pending bits, so nearly every query hazards), a few warps copy at a
    /// time (a few cycles in 256 copy any set), and a release and a reserve of the same
    /// register coincide often enough for the priority rule to be exercised every few
    /// hundred cycles.
    #[test]
    fn traffic_keeps_hazards_informative_and_exercises_the_coincidences() {
        let cycles = 20_000u64;
        let log = run(&[], 7, cycles);
        let hazards: u64 = log.iter().map(|c| c.0 as u64).sum();
        let per_query = hazards as f64 / (2 * cycles) as f64;
        assert!((0.2..0.9).contains(&per_query), "hazard rate {per_query}");
        let copies: u64 = log.iter().map(|c| c.1 as u64).sum();
        let per_cycle = copies as f64 / cycles as f64;
        assert!(
            (0.1..2.0).contains(&per_cycle),
            "warps copying per cycle {per_cycle}"
        );
        let coincide = log.iter().filter(|c| c.2).count();
        assert!(
            coincide > 40,
            "same-register reserve and release in {coincide} cycles"
        );
    }

    /// Deterministic per seed, different across seeds, and the same again after a rewind.
    #[test]
    fn the_same_seed_gives_the_same_inputs_and_rewind_restarts_them() {
        let params = SCOREBOARD_DESC.params::<&str>(&[]).unwrap();
        let inputs = |stim: &mut ScoreboardRandom| {
            let mut ports = SCOREBOARD_DESC.zero_ports(&params);
            (0..3000)
                .map(|c| {
                    stim.drive(c, &mut ports);
                    ports.clone()
                })
                .collect::<Vec<_>>()
        };
        let mut a = ScoreboardRandom::new(&params, 3, 3000);
        let first = inputs(&mut a);
        a.rewind();
        assert_eq!(inputs(&mut a), first);
        assert_eq!(inputs(&mut ScoreboardRandom::new(&params, 3, 3000)), first);
        assert_ne!(inputs(&mut ScoreboardRandom::new(&params, 4, 3000)), first);
    }

    /// Every standard parameter set: the fields stay within their ports and the model
    /// accepts every cycle (the model asserts its invariants in debug builds).
    #[test]
    fn every_standard_set_runs() {
        for params in SCOREBOARD_DESC.standard_params() {
            let overrides: Vec<(&str, u64)> = params.iter().collect();
            let log = run(&overrides, 11, 3000);
            assert!(log.iter().any(|c| c.0 > 0), "{params}: no hazard at all");
        }
    }
}
