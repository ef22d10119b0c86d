//! Residency: the CTAs an SM holds and the resources they take (CTA slots, warps, threads,
//! registers, shared memory). Owns the CTA slots and the resource counters; the warp slots'
//! `active`/`finished`/`cta_slot` fields of the warp table are its too.

use super::warps::WarpSlot;
use crate::config::GpuConfig;
use crate::exec::{CtaState, LaunchInfo, WARP_SIZE};
use crate::ptx::ir::Kernel;

/// Per-SM resource needs of one CTA of the kernel.
#[derive(Debug, Clone, Copy)]
pub struct CtaFootprint {
    pub warps: u32,
    pub threads: u32,
    pub registers: u32,
    pub shared: u32,
}

impl CtaFootprint {
    pub fn of(cfg: &GpuConfig, kernel: &Kernel, launch: &LaunchInfo) -> CtaFootprint {
        let unit = cfg.sm.register_alloc_unit.max(1);
        let regs_per_thread = kernel.regs_per_thread.div_ceil(unit) * unit;
        let warps = launch.warps_per_cta;
        let su = cfg.sm.shared_alloc_unit.max(1) as u64;
        CtaFootprint {
            warps,
            threads: launch.threads_per_cta(),
            registers: regs_per_thread * WARP_SIZE as u32 * warps,
            shared: (launch.shared_bytes.div_ceil(su) * su) as u32,
        }
    }

    /// How many CTAs of this footprint fit on one empty SM (0: the kernel cannot run).
    pub fn ctas_per_sm(&self, cfg: &GpuConfig) -> u32 {
        let s = &cfg.sm;
        let mut n = s.max_ctas;
        n = n.min(s.max_warps / self.warps.max(1));
        n = n.min(s.max_threads / self.threads.max(1));
        if let Some(by_regs) = s.registers.checked_div(self.registers) {
            n = n.min(by_regs);
        }
        if let Some(by_shared) = s.shared_bytes.checked_div(self.shared) {
            n = n.min(by_shared);
        }
        n
    }
}

/// A resident CTA.
pub(super) struct CtaSlot {
    pub state: CtaState,
    /// Its warps' slots, in ascending order (they are taken lowest free first).
    pub warp_slots: Vec<usize>,
    pub live_warps: u32,
    /// Warps whose slot has been freed (a freed slot may already hold another CTA's warp).
    pub retired_warps: u32,
    pub footprint: CtaFootprint,
}

/// The CTA slots of an SM and the resources in use.
pub(super) struct Residency {
    ctas: Vec<Option<CtaSlot>>,
    used_warps: u32,
    used_threads: u32,
    used_regs: u32,
    used_shared: u32,
    used_ctas: u32,
}

impl Residency {
    pub fn new(cfg: &GpuConfig) -> Residency {
        Residency {
            ctas: (0..cfg.sm.max_ctas).map(|_| None).collect(),
            used_warps: 0,
            used_threads: 0,
            used_regs: 0,
            used_shared: 0,
            used_ctas: 0,
        }
    }

    /// No CTA resident (and so nothing in flight).
    #[inline(always)]
    pub fn is_idle(&self) -> bool {
        self.used_ctas == 0
    }

    /// Whether one more CTA of this footprint fits now.
    pub fn can_accept(&self, f: &CtaFootprint, cfg: &GpuConfig) -> bool {
        let s = &cfg.sm;
        self.used_ctas < s.max_ctas
            && self.used_warps + f.warps <= s.max_warps
            && self.used_threads + f.threads <= s.max_threads
            && self.used_regs + f.registers <= s.registers
            && self.used_shared + f.shared <= s.shared_bytes
    }

    /// The CTA slot the next CTA takes (`can_accept` checked there is one).
    pub fn free_cta_slot(&self) -> usize {
        self.ctas
            .iter()
            .position(|c| c.is_none())
            .expect("can_accept checked a free CTA slot")
    }

    /// The warp slot the next warp takes: the lowest free one.
    pub fn free_warp_slot(warps: &[WarpSlot]) -> usize {
        warps
            .iter()
            .position(|x| !x.active)
            .expect("can_accept checked free warp slots")
    }

    /// CTA `cta` takes slot `slot` and its resources.
    pub fn occupy(&mut self, slot: usize, cta: CtaSlot) {
        let f = cta.footprint;
        self.ctas[slot] = Some(cta);
        self.used_ctas += 1;
        self.used_warps += f.warps;
        self.used_threads += f.threads;
        self.used_regs += f.registers;
        self.used_shared += f.shared;
    }

    #[inline]
    pub fn cta(&self, slot: usize) -> &CtaSlot {
        self.ctas[slot].as_ref().expect("warp has a CTA")
    }

    #[inline]
    pub fn cta_mut(&mut self, slot: usize) -> &mut CtaSlot {
        self.ctas[slot].as_mut().expect("warp has a CTA")
    }

    /// The CTA in `slot`, if any (a fault report names a warp whose CTA may be gone).
    pub fn get(&self, slot: usize) -> Option<&CtaSlot> {
        self.ctas[slot].as_ref()
    }

    /// One warp of CTA slot `slot` freed its warp slot; the CTA leaves, freeing its
    /// resources, with its last warp.
    pub fn retire_warp(&mut self, slot: usize) {
        let done = {
            let cta = self.cta_mut(slot);
            cta.retired_warps += 1;
            cta.retired_warps == cta.footprint.warps
        };
        if done {
            let cta = self.ctas[slot].take().expect("checked");
            let f = cta.footprint;
            self.used_ctas -= 1;
            self.used_warps -= f.warps;
            self.used_threads -= f.threads;
            self.used_regs -= f.registers;
            self.used_shared -= f.shared;
        }
    }
}
