//! Per-kernel-launch statistics reported by `warpforge run`.

use serde::Serialize;

use crate::counters::{CounterValues, Intervals};

/// Why a scheduler issued nothing in a cycle (one count per scheduler per cycle).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct StallBreakdown {
    /// No warp assigned to the scheduler.
    pub idle: u64,
    /// Warps present but their instruction buffers are empty (fetch / control hazard).
    pub fetch: u64,
    /// Warps waiting at a barrier.
    pub barrier: u64,
    /// Operand not ready: waiting on a load or atomic from memory.
    pub memory_data: u64,
    /// Operand not ready: waiting on an ALU/SFU result.
    pub alu_data: u64,
    /// Functional unit busy (initiation interval).
    pub pipe_busy: u64,
    /// Load/store unit busy or memory system not accepting (MSHRs, queues).
    pub lsu_busy: u64,
}

impl StallBreakdown {
    pub fn total(&self) -> u64 {
        self.idle
            + self.fetch
            + self.barrier
            + self.memory_data
            + self.alu_data
            + self.pipe_busy
            + self.lsu_busy
    }
    pub fn add(&mut self, o: &StallBreakdown) {
        self.idle += o.idle;
        self.fetch += o.fetch;
        self.barrier += o.barrier;
        self.memory_data += o.memory_data;
        self.alu_data += o.alu_data;
        self.pipe_busy += o.pipe_busy;
        self.lsu_busy += o.lsu_busy;
    }
    /// (name, count) pairs in a fixed order, for tables.
    pub fn items(&self) -> [(&'static str, u64); 7] {
        [
            ("idle", self.idle),
            ("fetch", self.fetch),
            ("barrier", self.barrier),
            ("mem_data", self.memory_data),
            ("alu_data", self.alu_data),
            ("pipe_busy", self.pipe_busy),
            ("lsu_busy", self.lsu_busy),
        ]
    }
}

/// CTA-wide paths that came out of branches where at least one warp diverged, of one
/// branch kind (spec §3.1, Eq 4.1): the warps each would take without compaction
/// (`NW_NoTBC`: slots that put a thread into the path), with lane-preserving compaction
/// (`NW_TBC`: the most threads in one lane) and with ideal compaction (`NW_ideal`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct PathCounts {
    pub paths: u64,
    /// Paths with `NW_TBC < NW_NoTBC` (compactable as they are).
    pub compactable: u64,
    /// Paths with `NW_ideal < NW_NoTBC` (compactable if threads could change lanes).
    pub ideal_compactable: u64,
    pub nw_notbc: u64,
    pub nw_tbc: u64,
    pub nw_ideal: u64,
}

impl PathCounts {
    pub fn add(&mut self, o: &PathCounts) {
        self.paths += o.paths;
        self.compactable += o.compactable;
        self.ideal_compactable += o.ideal_compactable;
        self.nw_notbc += o.nw_notbc;
        self.nw_tbc += o.nw_tbc;
        self.nw_ideal += o.nw_ideal;
    }
    /// The compaction rate: the share of paths that are compactable (§3.1, L1219).
    pub fn rate(&self) -> Option<f64> {
        ratio(self.compactable, self.paths)
    }
    pub fn ideal_rate(&self) -> Option<f64> {
        ratio(self.ideal_compactable, self.paths)
    }
}

/// Thread-block compaction figures of one launch (zero without `sm.compaction`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct CompactionStats {
    /// Per warp and conditional branch: the decision (stall for compaction, or bypass)
    /// against the oracle, the adequacy the evaluator found for the path when the CTA's
    /// branch completed (spec §5.2: graded per dynamic branch).
    pub stall_adequate: u64,
    pub stall_inadequate: u64,
    pub bypass_adequate: u64,
    pub bypass_inadequate: u64,
    pub capt_lookups: u64,
    pub capt_hits: u64,
    /// Requests served by the warp compaction unit, and the warps it produced.
    pub wcu_requests: u64,
    pub wcu_warps: u64,
    /// Paths out of divergent branches: [programmatic (P), data-dependent (D)].
    pub paths: [PathCounts; 2],
}

impl CompactionStats {
    pub fn add(&mut self, o: &CompactionStats) {
        self.stall_adequate += o.stall_adequate;
        self.stall_inadequate += o.stall_inadequate;
        self.bypass_adequate += o.bypass_adequate;
        self.bypass_inadequate += o.bypass_inadequate;
        self.capt_lookups += o.capt_lookups;
        self.capt_hits += o.capt_hits;
        self.wcu_requests += o.wcu_requests;
        self.wcu_warps += o.wcu_warps;
        for (a, b) in self.paths.iter_mut().zip(&o.paths) {
            a.add(b);
        }
    }
    pub fn decisions(&self) -> u64 {
        self.stall_adequate + self.stall_inadequate + self.bypass_adequate + self.bypass_inadequate
    }
    /// Correct decisions (stall when adequate, bypass when not) per decision (§5.4).
    pub fn accuracy(&self) -> Option<f64> {
        ratio(
            self.stall_adequate + self.bypass_inadequate,
            self.decisions(),
        )
    }
    pub fn capt_hit_rate(&self) -> Option<f64> {
        ratio(self.capt_hits, self.capt_lookups)
    }
}

/// Memory-hierarchy figures of one launch.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct MemFigures {
    pub l1_accesses: u64,
    pub l1_hits: u64,
    pub l2_accesses: u64,
    pub l2_hits: u64,
    pub dram_read_bytes: u64,
    pub dram_write_bytes: u64,
    pub shared_accesses: u64,
    /// Extra cycles spent on shared-memory bank conflicts.
    pub shared_conflict_cycles: u64,
}

impl MemFigures {
    pub fn l1_hit_rate(&self) -> Option<f64> {
        ratio(self.l1_hits, self.l1_accesses)
    }
    pub fn l2_hit_rate(&self) -> Option<f64> {
        ratio(self.l2_hits, self.l2_accesses)
    }
    pub fn dram_bytes(&self) -> u64 {
        self.dram_read_bytes + self.dram_write_bytes
    }
}

fn ratio(a: u64, b: u64) -> Option<f64> {
    if b == 0 {
        None
    } else {
        Some(a as f64 / b as f64)
    }
}

/// Statistics of one kernel launch.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct KernelStats {
    pub kernel: String,
    /// "timing" or "functional".
    pub mode: &'static str,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub regs_per_thread: u32,
    pub shared_bytes_per_cta: u64,
    /// Resident CTAs per SM allowed by the occupancy limits.
    pub ctas_per_sm: u32,
    /// Simulated core cycles (0 in functional mode).
    pub cycles: u64,
    pub warp_instructions: u64,
    pub thread_instructions: u64,
    pub divergent_branches: u64,
    pub max_stack_depth: u32,
    /// Sum over issued warp instructions of the schedulable paths at the warp's TOS when it
    /// issued (spec §4.8, [L698-700]); `avg_path()` divides by `warp_instructions`.
    pub issued_paths: u64,
    pub stalls: StallBreakdown,
    /// Thread-block compaction (`sm.compaction`).
    pub compaction: CompactionStats,
    /// Scoreboard releases that waited for a free writeback port (more than `NWB` in one
    /// cycle); each waits one cycle or more.
    pub deferred_releases: u64,
    pub mem: MemFigures,
    /// Every counter of the memory hierarchy for this launch (timing mode).
    pub memory_detail: crate::memory::MemStats,
    /// Host wall-clock seconds spent simulating this launch.
    pub wall_seconds: f64,
    /// Simulated time of the launch in nanoseconds (`cycles` base ticks at the base clock;
    /// 0 in functional mode).
    pub time_ns: f64,
    /// Frequency of the time base `cycles` counts, MHz (the fastest SM / icnt / L2 clock).
    pub base_mhz: f64,
    /// Each SM's own figures (timing mode).
    pub per_sm: Vec<SmStats>,
    /// Every named counter's value in this launch (timing mode; see `counters`).
    pub counters: CounterValues,
    /// Interval snapshots (`sim.interval_cycles`; empty when off).
    pub intervals: Intervals,
}

/// One SM's figures in one launch.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SmStats {
    pub sm: u32,
    /// The SM's clock at the end of the launch, MHz.
    pub mhz: f64,
    /// Cycles of the SM's own clock during the launch.
    pub cycles: u64,
    pub warp_instructions: u64,
    pub thread_instructions: u64,
    pub divergent_branches: u64,
    pub issued_paths: u64,
    pub deferred_releases: u64,
    pub max_stack_depth: u32,
    pub stalls: StallBreakdown,
    pub shared_accesses: u64,
    pub shared_conflict_cycles: u64,
    /// L1 load transactions and hits of this SM.
    pub l1_accesses: u64,
    pub l1_hits: u64,
}

impl SmStats {
    /// Thread instructions per cycle of the SM's own clock.
    pub fn ipc(&self) -> Option<f64> {
        ratio(self.thread_instructions, self.cycles)
    }

    fn accumulate(&mut self, o: &SmStats) {
        self.mhz = o.mhz;
        self.cycles += o.cycles;
        self.warp_instructions += o.warp_instructions;
        self.thread_instructions += o.thread_instructions;
        self.divergent_branches += o.divergent_branches;
        self.issued_paths += o.issued_paths;
        self.deferred_releases += o.deferred_releases;
        self.max_stack_depth = self.max_stack_depth.max(o.max_stack_depth);
        self.stalls.add(&o.stalls);
        self.shared_accesses += o.shared_accesses;
        self.shared_conflict_cycles += o.shared_conflict_cycles;
        self.l1_accesses += o.l1_accesses;
        self.l1_hits += o.l1_hits;
    }
}

impl KernelStats {
    /// Thread instructions per cycle (GPGPU-Sim's IPC convention).
    pub fn ipc(&self) -> Option<f64> {
        ratio(self.thread_instructions, self.cycles)
    }
    /// Avg_Path: mean schedulable paths per issued warp instruction (SPE: 1; timing mode).
    pub fn avg_path(&self) -> Option<f64> {
        ratio(self.issued_paths, self.warp_instructions)
    }
    /// Warp instructions per cycle.
    pub fn warp_ipc(&self) -> Option<f64> {
        ratio(self.warp_instructions, self.cycles)
    }
    /// Average fraction of SIMD lanes doing useful work per issued warp instruction.
    pub fn simd_utilisation(&self) -> Option<f64> {
        ratio(self.thread_instructions, self.warp_instructions * 32)
    }

    /// Accumulate another launch (for per-workload totals).
    pub fn accumulate(&mut self, o: &KernelStats) {
        self.cycles += o.cycles;
        self.warp_instructions += o.warp_instructions;
        self.thread_instructions += o.thread_instructions;
        self.divergent_branches += o.divergent_branches;
        self.max_stack_depth = self.max_stack_depth.max(o.max_stack_depth);
        self.issued_paths += o.issued_paths;
        self.regs_per_thread = self.regs_per_thread.max(o.regs_per_thread);
        self.stalls.add(&o.stalls);
        self.compaction.add(&o.compaction);
        self.deferred_releases += o.deferred_releases;
        let (m, n) = (&mut self.mem, &o.mem);
        m.l1_accesses += n.l1_accesses;
        m.l1_hits += n.l1_hits;
        m.l2_accesses += n.l2_accesses;
        m.l2_hits += n.l2_hits;
        m.dram_read_bytes += n.dram_read_bytes;
        m.dram_write_bytes += n.dram_write_bytes;
        m.shared_accesses += n.shared_accesses;
        m.shared_conflict_cycles += n.shared_conflict_cycles;
        self.wall_seconds += o.wall_seconds;
        self.time_ns += o.time_ns;
        self.base_mhz = o.base_mhz;
        if self.per_sm.len() < o.per_sm.len() {
            self.per_sm.resize_with(o.per_sm.len(), Default::default);
        }
        for (i, (a, b)) in self.per_sm.iter_mut().zip(&o.per_sm).enumerate() {
            a.sm = i as u32;
            a.accumulate(b);
        }
        self.counters.accumulate(&o.counters);
    }
}
