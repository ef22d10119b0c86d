//! Stimulus of the CAPRI units: `capri_capt`'s constrained-random traffic and directed
//! vectors (spec §7.5), and `slp_perm`'s exhaustive sweep (§7.4).

use crate::lockstep::typed_side::typed_stimulus_methods;
use crate::lockstep::TypedStimulus;
use crate::stimulus::{Script, SplitMix64};
use crate::Stimulus;
use warpforge_model::units::capri_capt::{CapriCapt, CaptInputs, CaptParams, CaptRegs};
use warpforge_model::units::contract::{low_mask, Params};
use warpforge_model::units::coverage::Coverage;
use warpforge_model::units::declare::UnitParams;
use warpforge_model::units::slp_perm::{SlpInputs, SlpParams};

/// Branch traffic for one CAPT: PCs from a pool somewhat larger than the table (so entries
/// hit, miss and get evicted), a quarter of the branches not diverged, WCU updates of pool
/// PCs, of the same cycle's branch PC (T11) and of the entry the same cycle's allocation
/// evicts (the allocation must win), flushes and resets in mid-stream, junk on the fields
/// of idle ports. A shadow model of the table says which entry an allocation will evict.
/// Steering: while an entry was never allocated or the table never evicted, flushes and
/// resets become rare and the pool twice the table; while a coincidence bin is unhit,
/// flushes are frequent. Rewindable.
#[derive(Debug, Clone)]
pub struct CaptRandom {
    seed: u64,
    rng: SplitMix64,
    cycles: u64,
    shadow: CapriCapt,
    entries: u32,
    pc_mask: u32,
    /// Filling the table: fewer flushes and resets, a larger pool.
    fill: bool,
    /// Coincidences of flush with lookups and updates.
    coincide: bool,
}

impl CaptRandom {
    pub fn new(params: &Params, seed: u64, cycles: u64) -> CaptRandom {
        let p = CaptParams::from_params(params);
        CaptRandom {
            seed,
            rng: SplitMix64::new(seed),
            cycles,
            shadow: CapriCapt::new(p),
            entries: p.entries,
            pc_mask: low_mask(p.pcw) as u32,
            fill: false,
            coincide: false,
        }
    }

    /// Pool PC `k` (distinct for distinct `k` below 2^PCW: an odd multiplier).
    fn pc(&self, k: u64) -> u32 {
        (k as u32).wrapping_mul(0x9e37_79b1).wrapping_add(0x40) & self.pc_mask
    }

    fn pool_pc(&mut self) -> u32 {
        let n = self.entries as u64 * if self.fill { 2 } else { 3 } / 2 + 1;
        let k = self.rng.below(n.min(self.pc_mask as u64 + 1));
        self.pc(k)
    }

    /// The tag the next allocation evicts, when the table is full.
    fn victim_tag(&self) -> Option<u32> {
        if self.shadow.occupancy() < self.entries {
            return None;
        }
        let last = (self.entries - 1) as u8;
        (0..self.entries as usize)
            .find(|&i| self.shadow.rank(i) == last)
            .and_then(|i| self.shadow.entry(i))
            .map(|(tag, _)| tag)
    }
}

impl TypedStimulus<CapriCapt> for CaptRandom {
    fn next_inputs(&mut self, cycle: u64, _: &CaptRegs, inputs: &mut CaptInputs) -> Option<bool> {
        if cycle >= self.cycles {
            return None;
        }
        let (flush_in, reset_in) = match (self.fill, self.coincide) {
            (true, _) => (20_000, 50_000),
            (false, true) => (40, 3_000),
            (false, false) => (400, 3_000),
        };
        let rst = cycle < 2 || self.rng.one_in(reset_in);
        let junk = self.rng.next_u64();
        let mut inp = CaptInputs {
            flush: self.rng.one_in(flush_in),
            br_valid: !self.rng.one_in(4),
            br_pc: junk as u32 & self.pc_mask,
            br_diverged: !self.rng.one_in(4),
            upd_valid: self.rng.one_in(2),
            upd_pc: (junk >> 32) as u32 & self.pc_mask,
            upd_adequate: self.rng.one_in(2),
        };
        if inp.br_valid {
            inp.br_pc = self.pool_pc();
        }
        if inp.upd_valid {
            inp.upd_pc = match (self.rng.below(4), self.victim_tag()) {
                (0, _) => inp.br_pc,
                (1, Some(tag)) => tag,
                _ => self.pool_pc(),
            };
        }
        if rst {
            self.shadow.reset();
        } else {
            self.shadow.tick(&inp);
        }
        *inputs = inp;
        Some(!rst)
    }
}

impl Stimulus for CaptRandom {
    typed_stimulus_methods!(CapriCapt);

    fn reads_outputs(&self) -> bool {
        false
    }

    fn can_rewind(&self) -> bool {
        true
    }

    fn rewind(&mut self) {
        self.rng = SplitMix64::new(self.seed);
        self.shadow = CapriCapt::new(self.shadow.params());
        self.fill = false;
        self.coincide = false;
    }

    fn steer(&mut self, coverage: &Coverage) {
        self.fill = coverage.is_unhit("rsp_evict")
            || (0..self.entries).any(|k| coverage.is_unhit(&format!("rsp_idx={k} when rsp_alloc")));
        self.coincide = ["flush & br_valid & br_diverged", "flush & upd_valid"]
            .iter()
            .any(|b| coverage.is_unhit(b));
    }
}

/// The directed vectors of spec §7.5 for the CAPT, at any parameters: T3 (Fig 4.8: a
/// non-divergent warp bypasses, a miss allocates, a hit stalls, the WCU clears the
/// history), T4 (the branch again), T5 (an adequate evaluation, twice: saturation), T16 (a
/// non-divergent branch touches nothing), T10 (ENTRIES+1 divergent PCs, then the first
/// again), T11 (update and lookup of one PC in one cycle), the allocation evicting the
/// entry a same-cycle update names, T12 (flush with a lookup and an update), reset in
/// mid-stream, and a lookup every cycle over twice the table's PCs.
pub fn capt_directed(params: &Params) -> Script<CaptInputs> {
    let p = CaptParams::from_params(params);
    let mask = low_mask(p.pcw) as u32;
    let n = p.entries;
    let br = |pc: u32, diverged| {
        Some(CaptInputs {
            br_valid: true,
            br_pc: pc & mask,
            br_diverged: diverged,
            ..CaptInputs::default()
        })
    };
    let upd = |pc: u32, adequate| {
        Some(CaptInputs {
            upd_valid: true,
            upd_pc: pc & mask,
            upd_adequate: adequate,
            ..CaptInputs::default()
        })
    };
    let both = |b: Option<CaptInputs>, u: Option<CaptInputs>| {
        let (b, u) = (b.unwrap(), u.unwrap());
        Some(CaptInputs {
            upd_valid: true,
            upd_pc: u.upd_pc,
            upd_adequate: u.upd_adequate,
            ..b
        })
    };
    let flushed = |x: Option<CaptInputs>| {
        Some(CaptInputs {
            flush: true,
            ..x.unwrap()
        })
    };
    let idle = Some(CaptInputs::default());
    let bc = 0x2a;
    let mut s = vec![None, None];
    // T3, T4, T5, T16.
    s.extend([
        br(bc, false),
        idle,
        br(bc, true),
        br(bc, true),
        upd(bc, false),
        idle,
    ]);
    s.extend([
        br(bc, true),
        upd(bc, true),
        upd(bc, true),
        br(bc, true),
        br(bc + 1, false),
    ]);
    s.extend([
        upd(bc, false),
        upd(bc, false),
        upd(bc, false),
        br(bc, true),
        idle,
    ]);
    // T10, twice (the second pass with inadequate updates between), then the first PC.
    for pass in 0..2 {
        for k in 0..=n {
            s.push(br(0x100 + k + pass, true));
            if pass == 1 {
                s.push(upd(0x100 + k + pass, false));
            }
        }
        s.push(br(0x100 + pass, true));
    }
    // T11; a reset and a fresh fill, then the allocation winning over an update of its
    // victim (the oldest entry, 0x400) and the victim missing.
    s.extend([both(br(0x101, true), upd(0x101, true)), br(0x101, true)]);
    s.extend([None, idle]);
    s.extend((0..n).map(|k| br(0x400 + k, true)));
    s.extend([both(br(0x500, true), upd(0x400, true)), br(0x400, true)]);
    // T12, then reset in mid-stream.
    s.extend([
        flushed(both(br(0x101, true), upd(0x101, false))),
        br(0x101, true),
    ]);
    s.extend([
        br(0x102, true),
        br(0x103, true),
        flushed(br(0x104, true)),
        idle,
    ]);
    s.extend([
        br(0x105, true),
        br(0x106, true),
        None,
        br(0x105, true),
        idle,
    ]);
    // A lookup every cycle, at least twice around a pool of twice the table, with updates.
    for k in 0..(4 * n).max(64) {
        let pc = 0x200 + k % (2 * n);
        s.push(both(br(pc, k % 5 != 0), upd(pc + 1, k % 3 == 0)));
    }
    Script::new(s)
}

/// Every (en, mode, inverse, wid, lane) of `slp_perm` at its parameters, with a random
/// `vec_in` per cycle (§7.4's exhaustive sweep): `2 * 8 * 2 * 2^WIDW * S` cycles after two
/// reset cycles.
pub fn slp_sweep(params: &Params, seed: u64) -> Script<SlpInputs> {
    let p = SlpParams::from_params(params);
    let mut rng = SplitMix64::new(seed);
    let mut steps = vec![None, None];
    for en in [false, true] {
        for mode in 0..8u8 {
            for inverse in [false, true] {
                for wid in 0..1u32 << p.widw {
                    for lane_in in 0..p.s {
                        steps.push(Some(SlpInputs {
                            en,
                            mode,
                            inverse,
                            wid,
                            lane_in,
                            vec_in: rng.next_u64() & low_mask(p.s),
                        }));
                    }
                }
            }
        }
    }
    Script::new(steps)
}
