//! Hook points: where a hardware unit that observes the GPU attaches to the timing model.
//!
//! A unit that reacts to what the SMs and the memory hierarchy do (a DVFS controller, warp
//! compaction and its CAPRI predictor, Slumber's register-file and Snooze's cache power
//! control, a thread-block dispatcher) implements [`GpuHooks`], overriding only the methods
//! it needs, and is attached with [`crate::gpu::Gpu::with_hooks`]; afterwards
//! [`crate::gpu::Gpu::hooks`] gives it back with whatever it gathered.
//!
//! | hook | where it is called | for |
//! |---|---|---|
//! | [`GpuHooks::on_cycle_start`] | the GPU loop, every SM with a clock edge, busy or idle | DVFS, power gating |
//! | [`GpuHooks::on_interval`] | the GPU loop, every `sim.interval_cycles` base ticks, after the counters' snapshot | DVFS (may change SM clocks) |
//! | [`GpuHooks::on_cta_dispatch`] | the CTA dispatcher, per block placed | thread-block scheduling |
//! | [`GpuHooks::on_issue`] | the SM's issue stage, per warp instruction issued | compaction, lane permutation |
//! | [`GpuHooks::on_branch`] | the SM's issue stage, per conditional branch issued | CAPRI, compaction |
//! | [`GpuHooks::on_rf_access`] | the SM's register file, per register read at issue and written back | Slumber |
//! | [`GpuHooks::on_cache_miss`] | an L1 (per SM) or L2 (per bank) tag lookup that misses | LAMAR, Snooze |
//! | [`GpuHooks::on_cache_fill`] | a line written into an L1 or L2 tag array | LAMAR, Snooze |
//! | [`GpuHooks::on_cache_evict`] | a valid line leaving an L1 or L2 (replaced or invalidated) | Snooze |
//!
//! A unit that is itself a hardware model (`declare_unit!`) keeps its instances in a
//! `units::host::UnitHost` inside its hooks type, gathers its inputs from the event hooks
//! and ticks them from `on_cycle_start` (one edge per SM cycle), so its port traces and
//! activity counters come with it.
//!
//! ```
//! use warpforge_model::config::GpuConfig;
//! use warpforge_model::gpu::{Gpu, Mode};
//! use warpforge_model::hooks::{GpuHooks, RfAccess};
//! use warpforge_model::host::{Dim3, Host, KernelArg};
//!
//! /// What a Slumber-like controller needs: per SM and register-file bank, the last cycle
//! /// the bank was accessed.
//! struct LastAccess(Vec<Vec<Option<u64>>>);
//!
//! impl GpuHooks for LastAccess {
//!     fn on_rf_access(&mut self, ev: &RfAccess) {
//!         self.0[ev.sm as usize][ev.bank as usize] = Some(ev.cycle);
//!     }
//! }
//!
//! let cfg = GpuConfig::preset("gtx480", &[]).unwrap();
//! let banks = vec![vec![None; cfg.sm.rf_banks as usize]; cfg.sm.count as usize];
//! let mut gpu = Gpu::with_hooks(cfg, Mode::Timing, LastAccess(banks));
//! let ptx = ".version 6.0\n.target sm_70\n.address_size 64\n\
//!     .visible .entry k(.param .u64 p)\n{\n.reg .b32 %r<2>;\n.reg .b64 %rd<4>;\n\
//!     ld.param.u64 %rd1, [p];\ncvta.to.global.u64 %rd2, %rd1;\nmov.u32 %r1, %tid.x;\n\
//!     mul.wide.u32 %rd3, %r1, 4;\nadd.s64 %rd2, %rd2, %rd3;\nst.global.u32 [%rd2], %r1;\n\
//!     ret;\n}\n";
//! let m = gpu.load_module("k.ptx", ptx).unwrap();
//! let out = gpu.alloc(32 * 4).unwrap();
//! gpu.launch(m, "k", Dim3::x(1), Dim3::x(32), 0, &[KernelArg::Ptr(out)]).unwrap();
//! // The one block ran on SM 0; the other SMs' banks were never accessed.
//! assert!(gpu.hooks().0[0].iter().any(|c| c.is_some()));
//! assert!(gpu.hooks().0[1].iter().all(|c| c.is_none()));
//! ```
//!
//! # Why a trait with default no-op methods, passed by `&mut`
//! Every hook is statically dispatched: the GPU is generic over its hooks type
//! (`Gpu<H: GpuHooks = NoHooks>`, so code naming plain `Gpu` gets the no-hook GPU), and the
//! per-cycle functions (`timing::run_kernel`, `Sm::cycle`, `MemoryHierarchy::cycle_with`
//! and `issue_with`) take `&mut H`. With [`NoHooks`] every call is an empty inline function
//! and the event it would have been given is never built: the simulator's core loop costs
//! exactly what it did without hook points (measured with cachegrind, see the README).
//! A `dyn` object or a list of boxed observers would cost an indirect call per event, and
//! buffering events per cycle would cost memory traffic and a drain loop even when nothing
//! listens.
//!
//! One hooks object serves the SMs and the memory hierarchy alike: the GPU owns it and lends
//! it, by `&mut`, to whichever part of the model runs at the moment (they run one after the
//! other in the GPU loop, so one borrow at a time suffices). The calls arrive in simulation
//! order, deterministic like the rest of the model. Several units attach together as a
//! tuple, `(A, B)`, which calls `A`'s hook then `B`'s.
//!
//! The hooks observe: they receive copies and shared references and cannot change the
//! SMs' or the caches' state, except `on_interval`, which receives the clock domains and
//! may change SM frequencies (effective from the next tick). A unit that changes what the
//! model does (a compaction unit regrouping threads) will need its own decision point where
//! it acts; it will still observe through these.

use crate::counters::Counters;
use crate::ptx::ir::InstClass;
use crate::timing::clock::Clocks;

/// The hooks of one GPU. Every method has an empty default: override what you need.
#[allow(unused_variables)]
pub trait GpuHooks {
    /// SM `sm` starts its cycle `cycle` (of its own clock) at base tick `now`: called for
    /// every SM with a clock edge in the tick, whether or not it has work (an idle SM's
    /// `Sm::cycle` is skipped, its cycle still counts). Per launch, the calls for SM `i`
    /// equal `KernelStats::per_sm[i].cycles`.
    #[inline(always)]
    fn on_cycle_start(&mut self, sm: usize, cycle: u64, now: u64) {}

    /// An interval boundary (`sim.interval_cycles` base ticks since the launch's start or
    /// the previous boundary) at base tick `now`, right after the counters were snapshotted
    /// (read them by name). A DVFS controller changes SM frequencies here
    /// (`Clocks::set_sm_khz`), effective from the next tick. Not called at the end of a
    /// launch: a launch of `c` ticks has `(c - 1) / sim.interval_cycles` boundaries.
    #[inline(always)]
    fn on_interval(&mut self, now: u64, counters: &Counters, clocks: &mut Clocks) {}

    /// The dispatcher placed a block on an SM.
    #[inline(always)]
    fn on_cta_dispatch(&mut self, ev: &CtaDispatch) {}

    /// A warp instruction issued (executed functionally at issue, as the model does).
    #[inline(always)]
    fn on_issue(&mut self, ev: &IssueEvent) {}

    /// A conditional branch issued (right after its [`GpuHooks::on_issue`]), divergent or
    /// not; the stack has not been updated yet.
    #[inline(always)]
    fn on_branch(&mut self, ev: &BranchEvent) {}

    /// One register of a warp read from or written to its register-file bank (the accesses
    /// the `sm<i>.rf.bank<b>.reads` / `.writes` counters count, at the cycle they happen).
    #[inline(always)]
    fn on_rf_access(&mut self, ev: &RfAccess) {}

    /// A tag lookup missed (loads and atomics; at L2 also stores, which allocate).
    #[inline(always)]
    fn on_cache_miss(&mut self, ev: &CacheMiss) {}

    /// A line was written into a tag array: a fill from the next level, or (L2) a store
    /// allocating its line.
    #[inline(always)]
    fn on_cache_fill(&mut self, ev: &CacheFill) {}

    /// A valid line left a tag array: replaced by a fill, or invalidated by a store (L1's
    /// write-evict).
    #[inline(always)]
    fn on_cache_evict(&mut self, ev: &CacheEvict) {}
}

/// No unit attached: every hook is a no-op (the default of [`crate::gpu::Gpu`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NoHooks;

impl GpuHooks for NoHooks {}

impl<H: GpuHooks + ?Sized> GpuHooks for &mut H {
    #[inline(always)]
    fn on_cycle_start(&mut self, sm: usize, cycle: u64, now: u64) {
        (**self).on_cycle_start(sm, cycle, now)
    }
    #[inline(always)]
    fn on_interval(&mut self, now: u64, counters: &Counters, clocks: &mut Clocks) {
        (**self).on_interval(now, counters, clocks)
    }
    #[inline(always)]
    fn on_cta_dispatch(&mut self, ev: &CtaDispatch) {
        (**self).on_cta_dispatch(ev)
    }
    #[inline(always)]
    fn on_issue(&mut self, ev: &IssueEvent) {
        (**self).on_issue(ev)
    }
    #[inline(always)]
    fn on_branch(&mut self, ev: &BranchEvent) {
        (**self).on_branch(ev)
    }
    #[inline(always)]
    fn on_rf_access(&mut self, ev: &RfAccess) {
        (**self).on_rf_access(ev)
    }
    #[inline(always)]
    fn on_cache_miss(&mut self, ev: &CacheMiss) {
        (**self).on_cache_miss(ev)
    }
    #[inline(always)]
    fn on_cache_fill(&mut self, ev: &CacheFill) {
        (**self).on_cache_fill(ev)
    }
    #[inline(always)]
    fn on_cache_evict(&mut self, ev: &CacheEvict) {
        (**self).on_cache_evict(ev)
    }
}

/// Two sets of hooks attached together: `A`'s hook runs first, then `B`'s.
impl<A: GpuHooks, B: GpuHooks> GpuHooks for (A, B) {
    #[inline(always)]
    fn on_cycle_start(&mut self, sm: usize, cycle: u64, now: u64) {
        self.0.on_cycle_start(sm, cycle, now);
        self.1.on_cycle_start(sm, cycle, now);
    }
    #[inline(always)]
    fn on_interval(&mut self, now: u64, counters: &Counters, clocks: &mut Clocks) {
        self.0.on_interval(now, counters, clocks);
        self.1.on_interval(now, counters, clocks);
    }
    #[inline(always)]
    fn on_cta_dispatch(&mut self, ev: &CtaDispatch) {
        self.0.on_cta_dispatch(ev);
        self.1.on_cta_dispatch(ev);
    }
    #[inline(always)]
    fn on_issue(&mut self, ev: &IssueEvent) {
        self.0.on_issue(ev);
        self.1.on_issue(ev);
    }
    #[inline(always)]
    fn on_branch(&mut self, ev: &BranchEvent) {
        self.0.on_branch(ev);
        self.1.on_branch(ev);
    }
    #[inline(always)]
    fn on_rf_access(&mut self, ev: &RfAccess) {
        self.0.on_rf_access(ev);
        self.1.on_rf_access(ev);
    }
    #[inline(always)]
    fn on_cache_miss(&mut self, ev: &CacheMiss) {
        self.0.on_cache_miss(ev);
        self.1.on_cache_miss(ev);
    }
    #[inline(always)]
    fn on_cache_fill(&mut self, ev: &CacheFill) {
        self.0.on_cache_fill(ev);
        self.1.on_cache_fill(ev);
    }
    #[inline(always)]
    fn on_cache_evict(&mut self, ev: &CacheEvict) {
        self.0.on_cache_evict(ev);
        self.1.on_cache_evict(ev);
    }
}

/// A block placed on an SM ([`GpuHooks::on_cta_dispatch`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CtaDispatch {
    pub sm: u32,
    /// The block's linear index in the grid.
    pub cta: u32,
    /// Its warps.
    pub warps: u32,
    /// The SM's cycle, and the base tick.
    pub cycle: u64,
    pub now: u64,
}

/// A warp instruction issued ([`GpuHooks::on_issue`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IssueEvent {
    pub sm: u32,
    /// The SM's cycle.
    pub cycle: u64,
    /// Warp slot in the SM, and the warp's global id in the launch.
    pub warp: u32,
    pub global_warp: u32,
    /// The path it issued from (0, or under DPE 0 = L and 1 = R).
    pub side: u8,
    pub pc: u32,
    /// The threads that issued it (the path's active mask).
    pub active: u32,
    pub class: InstClass,
}

/// A conditional branch issued ([`GpuHooks::on_branch`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BranchEvent {
    pub sm: u32,
    pub cycle: u64,
    pub warp: u32,
    pub side: u8,
    pub pc: u32,
    /// The threads that executed it, and those of them that took it.
    pub active: u32,
    pub taken: u32,
    /// The branch target and the reconvergence point (immediate post-dominator).
    pub target: u32,
    pub reconverge: u32,
}

impl BranchEvent {
    /// Some threads took the branch and others did not (the model's
    /// `divergent_branches` counts these).
    pub fn divergent(&self) -> bool {
        self.taken != 0 && self.taken != self.active
    }
}

/// One register-file bank access ([`GpuHooks::on_rf_access`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RfAccess {
    pub sm: u32,
    /// The SM cycle of the access: the issue cycle for reads (with `sm.rf_bank_conflicts`,
    /// the k-th read of one bank by one instruction is k cycles later), the writeback cycle
    /// for writes.
    pub cycle: u64,
    pub bank: u32,
    pub warp: u32,
    /// The register slot.
    pub reg: u16,
    pub write: bool,
}

/// Which cache a cache hook concerns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheId {
    /// The L1 data cache of an SM.
    L1 { sm: u32 },
    /// An L2 bank (memory sub-partition).
    L2 { bank: u32 },
}

/// What became of a missing access ([`CacheMiss::kind`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MissKind {
    /// It took a new MSHR: a fill of the line follows.
    NewMshr,
    /// It merged into the MSHR of a fill already on its way.
    Merged,
    /// L1 only: no MSHR could be spared (an instruction needing more than the table holds),
    /// the request goes to L2 without allocating in L1.
    Bypass,
    /// L2 only: a store allocating its line at once (write-validate, no fetch); its
    /// [`GpuHooks::on_cache_fill`] follows immediately.
    WriteAllocate,
}

/// A tag lookup that missed ([`GpuHooks::on_cache_miss`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheMiss {
    pub cache: CacheId,
    /// Base tick.
    pub now: u64,
    pub line_addr: u64,
    pub set: u32,
    pub kind: MissKind,
}

/// A line written into a tag array ([`GpuHooks::on_cache_fill`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheFill {
    pub cache: CacheId,
    pub now: u64,
    pub line_addr: u64,
    pub set: u32,
    pub way: u32,
    /// The sectors that became valid.
    pub sectors: u32,
    /// The line was allocated (false: it was present and only gained sectors).
    pub allocated: bool,
}

/// Why a line left a tag array ([`CacheEvict::cause`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EvictCause {
    /// Replaced by a fill into its set (the fill's [`GpuHooks::on_cache_fill`] follows).
    Replaced,
    /// Invalidated by a store (L1 write-evict).
    Invalidated,
}

/// A valid line leaving a tag array ([`GpuHooks::on_cache_evict`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheEvict {
    pub cache: CacheId,
    pub now: u64,
    pub line_addr: u64,
    pub set: u32,
    pub way: u32,
    /// Its dirty sectors (written back to DRAM, at L2).
    pub dirty: u32,
    pub cause: EvictCause,
}
