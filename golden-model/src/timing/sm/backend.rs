//! Back end: the functional units (SP, SFU, DP) and the writeback wheel. Owns when each
//! unit accepts its next instruction and the register writebacks due in future cycles.
//!
//! An instruction dispatched at cycle t to a unit with initiation interval `ii` keeps that
//! unit busy until `t + ii` (plus operand-collection cycles of register-bank conflicts), and
//! writes its results back at `t + latency`. The wheel hands each cycle's writebacks to the
//! SM ([`Writebacks::take_due`]), which applies them to the register file and the scoreboard.

use crate::config::{GpuConfig, PipelineConfig};
use crate::exec::WARP_SIZE;
use crate::ptx::ir::InstClass;

/// The functional units of one SM.
pub(super) struct Pipelines {
    /// Cycle at which each unit accepts its next instruction.
    sp_free: Vec<u64>,
    sfu_free: Vec<u64>,
    dp_free: Vec<u64>,
}

impl Pipelines {
    pub fn new(cfg: &GpuConfig) -> Pipelines {
        Pipelines {
            sp_free: vec![0; cfg.pipeline.sp_units as usize],
            sfu_free: vec![0; cfg.pipeline.sfu_units as usize],
            dp_free: vec![0; cfg.pipeline.dp_units as usize],
        }
    }

    /// Whether a unit of `class` (any but `Mem`) can take an instruction at `now`.
    #[inline]
    pub fn unit_free(&self, class: InstClass, now: u64) -> bool {
        match class {
            InstClass::Alu | InstClass::Fma | InstClass::Ctrl => min_free(&self.sp_free) <= now,
            InstClass::Sfu | InstClass::Div => min_free(&self.sfu_free) <= now,
            InstClass::Dp => min_free(&self.dp_free) <= now,
            InstClass::Mem => unreachable!("the LSU is not a pipeline"),
        }
    }

    /// Dispatch an instruction of `class` (any but `Mem`) at `now` to its first free unit,
    /// `rf_extra` operand-collection cycles late. Returns its result latency.
    #[inline]
    pub fn dispatch(
        &mut self,
        class: InstClass,
        now: u64,
        rf_extra: u32,
        p: &PipelineConfig,
    ) -> u32 {
        let (units, lat, ii) = match class {
            InstClass::Alu => (&mut self.sp_free, p.alu_latency, p.alu_ii),
            InstClass::Fma => (&mut self.sp_free, p.fma_latency, p.fma_ii),
            InstClass::Ctrl => (&mut self.sp_free, p.ctrl_latency, 1),
            InstClass::Sfu => (&mut self.sfu_free, p.sfu_latency, p.sfu_ii),
            InstClass::Div => (&mut self.sfu_free, p.div_latency, p.div_ii),
            InstClass::Dp => (&mut self.dp_free, p.dp_latency, p.dp_ii),
            InstClass::Mem => unreachable!("the LSU is not a pipeline"),
        };
        let u = argmin(units);
        units[u] = now + ii as u64 + rf_extra as u64;
        lat
    }

    /// The earliest cycle after `now` at which a busy unit becomes free (`u64::MAX`: none).
    #[inline]
    pub fn next_free_after(&self, now: u64) -> u64 {
        let mut t = u64::MAX;
        for &u in self
            .sp_free
            .iter()
            .chain(&self.sfu_free)
            .chain(&self.dp_free)
        {
            if u > now && u < t {
                t = u;
            }
        }
        t
    }
}

/// A register written back in a future cycle.
#[derive(Clone, Copy)]
pub(super) struct Writeback {
    pub warp: u16,
    pub reg: u16,
    /// The issuing path (the L/R bit that travels down the pipeline, [L556-558]).
    pub side: u8,
    /// Whether the write was reserved in the scoreboard (see `Sm::write_result`).
    pub tracked: bool,
}

/// The writebacks due in each of the next cycles (a wheel as long as the longest latency).
pub(super) struct Writebacks {
    wheel: Vec<Vec<Writeback>>,
    mask: u64,
    /// One bit per wheel slot: the slot holds writebacks. Most cycles have none due, and
    /// this small bitset is in cache when the slot's own list header is not.
    busy: Vec<u64>,
}

impl Writebacks {
    pub fn new(cfg: &GpuConfig) -> Writebacks {
        let max_latency = [
            cfg.pipeline.alu_latency,
            cfg.pipeline.fma_latency,
            cfg.pipeline.dp_latency,
            cfg.pipeline.sfu_latency,
            cfg.pipeline.div_latency,
            cfg.pipeline.ctrl_latency,
            cfg.sm.shared_latency + 2 * WARP_SIZE as u32,
            cfg.l1.hit_latency,
        ]
        .into_iter()
        .max()
        .unwrap_or(1)
            // register-bank conflicts delay an instruction by up to 7 cycles (8 sources)
            + if cfg.sm.rf_bank_conflicts { 8 } else { 0 };
        let len = (max_latency as u64 + 2).next_power_of_two();
        Writebacks {
            wheel: (0..len).map(|_| Vec::with_capacity(16)).collect(),
            mask: len - 1,
            busy: vec![0; len.div_ceil(64) as usize],
        }
    }

    /// `wb` is due at cycle `at` (less than the wheel's length ahead).
    #[inline]
    pub fn schedule(&mut self, at: u64, wb: Writeback) {
        let idx = (at & self.mask) as usize;
        self.busy[idx / 64] |= 1 << (idx % 64);
        self.wheel[idx].push(wb);
    }

    /// The writebacks due at `now`, if any, with their slot: the caller applies them and
    /// gives the (emptied) list back with [`Writebacks::give_back`], keeping its storage.
    #[inline]
    pub fn take_due(&mut self, now: u64) -> Option<(usize, Vec<Writeback>)> {
        let idx = (now & self.mask) as usize;
        if self.busy[idx / 64] >> (idx % 64) & 1 == 0 {
            return None;
        }
        self.busy[idx / 64] &= !(1 << (idx % 64));
        Some((idx, std::mem::take(&mut self.wheel[idx])))
    }

    #[inline]
    pub fn give_back(&mut self, idx: usize, mut list: Vec<Writeback>) {
        list.clear();
        self.wheel[idx] = list;
    }
}

#[inline]
fn min_free(units: &[u64]) -> u64 {
    units.iter().copied().min().unwrap_or(0)
}

#[inline]
fn argmin(units: &[u64]) -> usize {
    let mut best = 0;
    for (i, &u) in units.iter().enumerate() {
        if u < units[best] {
            best = i;
        }
    }
    best
}
