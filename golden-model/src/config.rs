//! GPU configuration: TOML presets embedded from `configs/`, with per-key overrides.
//!
//! Every key of a preset is a real knob of the model; `--set a.b=v` may only change a key that
//! exists (unknown keys and mistyped values are errors naming the key).

use crate::error::SimError;
use serde::{Deserialize, Serialize};

/// The presets shipped with warpforge, embedded at build time (name, TOML text).
pub const PRESETS: &[(&str, &str)] = &[
    ("gtx480", include_str!("../../configs/gtx480.toml")),
    ("fx5800", include_str!("../../configs/fx5800.toml")),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SchedulerPolicy {
    /// Loose round robin.
    Lrr,
    /// Greedy-then-oldest.
    Gto,
    /// Two-level: a small active set scheduled round robin; warps that stall on a long
    /// latency operation are demoted to the pending set.
    TwoLevel,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reconvergence {
    /// Single-path execution stack (baseline PDOM stack, `simt_stack_spe`).
    Spe,
    /// Dual-path execution (`simt_stack_dpe` + the shadow-bit `dpe_scoreboard`): both sides
    /// of a divergent branch are schedulable (spec reconvergence-dpe.md §4).
    Dpe,
}

/// Thread-block compaction (spec tbc-capri-slp.md §1-§2): the per-warp SPE stacks are
/// replaced by one CTA-wide stack per CTA whose paths the warp compaction unit regroups.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Compaction {
    /// No compaction: per-warp stacks (No_TBC).
    #[default]
    #[serde(rename = "none")]
    None,
    /// TBC: every branch (and every reconvergence) is a CTA-wide synchronisation point.
    #[serde(rename = "tbc")]
    Tbc,
    /// TBC+: no synchronisation at unconditional branches nor at `.uni` ones (A22).
    #[serde(rename = "tbc+")]
    TbcPlus,
    /// CAPRI: warps that did not diverge, or that the CAPT predicts inadequate, bypass.
    #[serde(rename = "capri")]
    Capri,
}

/// The CAPT's history (spec §2.2; the `capri_capt` unit's `HIST`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum CapriHistory {
    /// 1b-Latest: the last adequacy result (the seed's default, L1457).
    #[default]
    #[serde(rename = "1bl")]
    Latest,
    /// 1b-Sticky: adequate once diverged, until the kernel ends.
    #[serde(rename = "1bs")]
    Sticky,
    /// 2-bit saturating counter (A12).
    #[serde(rename = "2bit")]
    TwoBit,
}

/// SIMD lane permutation at warp launch (spec §3; the `slp_perm` unit's modes).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LanePermutation {
    #[default]
    None,
    Balanced,
    OddEven,
    XorOddHalf,
    RevWid,
    FlipOdd,
    #[serde(rename = "rotate_odd_1")]
    RotateOdd1,
    Wid,
}

/// How the extra selection level picks one of a DPE warp's two paths (spec A9).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PathPolicy {
    /// Both paths compete every cycle; the side that did not issue last goes first.
    Alt,
    /// Constrained variant (§4.10, A10): only the selected side is considered; it rotates
    /// when it issues a long-latency operation (global/local load, SFU) or loses its path.
    Constrained,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpuConfig {
    /// Preset name (informational).
    pub name: String,
    /// Where the figures come from (informational).
    pub source: String,
    pub clocks: ClockConfig,
    pub sm: SmConfig,
    pub pipeline: PipelineConfig,
    pub l1: CacheConfig,
    pub l2: CacheConfig,
    pub icnt: IcntConfig,
    pub dram: DramConfig,
    pub sim: SimLimits,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClockConfig {
    /// SM (core) clock of every SM without an entry in `sm_mhz`.
    pub core_mhz: f64,
    /// Interconnect clock: `icnt.latency` and `icnt.bytes_per_cycle` are per icnt cycle.
    pub icnt_mhz: f64,
    /// L2 clock: a bank serves one request per L2 cycle; `l2.hit_latency` and
    /// `dram.ctrl_latency` are L2 cycles.
    pub l2_mhz: f64,
    /// DRAM command clock: the `dram.t_*` timings and `dram.bytes_per_cycle`.
    pub dram_mhz: f64,
    /// Per-SM clock overrides: SM `i` runs at `sm_mhz[i]` for `i < sm_mhz.len()` (empty: every
    /// SM at `core_mhz`). The time base is the fastest of these, `core_mhz`, `icnt_mhz` and
    /// `l2_mhz` (see `timing::clock`).
    #[serde(default)]
    pub sm_mhz: Vec<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SmConfig {
    pub count: u32,
    pub max_threads: u32,
    pub max_warps: u32,
    pub max_ctas: u32,
    pub registers: u32,
    /// Register allocation granularity per warp (registers are allocated per warp in units
    /// of this many registers × 32 lanes).
    pub register_alloc_unit: u32,
    pub shared_bytes: u32,
    /// Shared memory allocation granularity per CTA, bytes.
    pub shared_alloc_unit: u32,
    pub schedulers: u32,
    pub scheduler: SchedulerPolicy,
    /// Active-set size per scheduler for the two-level policy.
    pub two_level_active: u32,
    /// Instruction-buffer entries per warp.
    pub ibuffer_entries: u32,
    /// Instructions fetched per cycle per SM (one warp's I-buffer is filled per fetch).
    pub fetch_width: u32,
    /// Cycles from fetch to the instruction being in the I-buffer (I-cache hit).
    pub fetch_latency: u32,
    pub shared_banks: u32,
    /// Latency of a conflict-free shared memory access.
    pub shared_latency: u32,
    pub reconvergence: Reconvergence,
    /// Path selection of DPE warps (ignored under SPE).
    pub dpe_path_policy: PathPolicy,
    /// SIMT stack entries per warp (spec reconvergence-dpe.md A11); under compaction, the
    /// entries of each CTA-wide stack.
    pub stack_depth: u32,
    /// Thread-block compaction: "none", "tbc", "tbc+" or "capri" (SPE only).
    #[serde(default)]
    pub compaction: Compaction,
    /// CAPRI's CAPT entries (the `capri_capt` unit's ENTRIES, 2..=64; 64 stands for the
    /// seed's "unlimited": no benchmark needed more than 24, L1023).
    #[serde(default = "default_capt_entries")]
    pub capt_entries: u32,
    /// CAPRI's history: "1bl", "1bs" or "2bit".
    #[serde(default)]
    pub capri_history: CapriHistory,
    /// Cycles from a compaction request to the first compacted warp (the `wcu`'s FIRST_LAT).
    #[serde(default = "default_wcu_latency")]
    pub wcu_latency: u32,
    /// SIMD lane permutation at warp launch (needs compaction): "none", "balanced",
    /// "odd_even", "xor_odd_half", "rev_wid", "flip_odd", "rotate_odd_1", "wid".
    #[serde(default)]
    pub lane_permutation: LanePermutation,
    /// Register-file banks per SM (a power of two, 1..=64): register `r` of warp slot `w` is
    /// in bank `(r + w) % rf_banks` (`timing::rf`).
    #[serde(default = "default_rf_banks")]
    pub rf_banks: u32,
    /// Model register-bank conflicts: the sources of one instruction that share a bank are
    /// read one per cycle, delaying its dispatch (`timing::rf`). Off: counting only.
    #[serde(default)]
    pub rf_bank_conflicts: bool,
}

fn default_rf_banks() -> u32 {
    16
}

fn default_capt_entries() -> u32 {
    32
}

fn default_wcu_latency() -> u32 {
    1
}

/// Latency (cycles until the result is written back) and initiation interval (cycles the
/// unit is busy before it accepts the next warp instruction) per instruction class, and the
/// number of units of each kind per SM.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PipelineConfig {
    pub sp_units: u32,
    pub sfu_units: u32,
    pub dp_units: u32,
    pub alu_latency: u32,
    pub alu_ii: u32,
    pub fma_latency: u32,
    pub fma_ii: u32,
    pub dp_latency: u32,
    pub dp_ii: u32,
    pub sfu_latency: u32,
    pub sfu_ii: u32,
    pub div_latency: u32,
    pub div_ii: u32,
    /// Cycles the LSU is busy per memory transaction generated by one warp instruction.
    pub lsu_ii: u32,
    /// Branch / control instruction latency.
    pub ctrl_latency: u32,
}

/// Cache replacement policy (`memory::cache::ReplacementPolicy`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Replacement {
    /// True least recently used.
    #[default]
    Lru,
    /// First in, first out (hits do not renew a line).
    Fifo,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CacheConfig {
    pub size_bytes: u32,
    pub assoc: u32,
    pub line_bytes: u32,
    pub mshrs: u32,
    /// Requests that may merge into one MSHR entry.
    pub mshr_merge: u32,
    pub hit_latency: u32,
    /// Replacement policy: "lru" or "fifo".
    #[serde(default)]
    pub replacement: Replacement,
    /// L1: tag/data banks, line-interleaved; the transactions of one warp instruction that
    /// fall in one bank take one L1 access each (the LSU is busy for the most any bank gets),
    /// different banks work in parallel. L2: banks (memory sub-partitions), each with its own
    /// tag array, MSHRs and network port.
    pub banks: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IcntConfig {
    /// One-way latency SM <-> L2 bank, icnt cycles (`clocks.icnt_mhz`).
    pub latency: u32,
    /// Bytes per cycle each SM port and each L2 bank port can move.
    pub bytes_per_cycle: u32,
    /// Request queue depth per SM towards the network.
    pub queue: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DramConfig {
    pub channels: u32,
    pub banks: u32,
    /// Row (page) size per bank, bytes.
    pub row_bytes: u32,
    /// Bytes moved per DRAM-clock cycle per channel (bus width × data rate).
    pub bytes_per_cycle: u32,
    /// Scheduler queue entries per channel.
    pub queue: u32,
    /// "fr_fcfs" or "fcfs".
    pub scheduler: String,
    /// Timing in DRAM clocks.
    pub t_rcd: u32,
    pub t_rp: u32,
    pub t_ras: u32,
    pub t_cl: u32,
    pub t_wl: u32,
    pub t_ccd: u32,
    pub t_rrd: u32,
    /// Fixed extra latency of the memory controller path, L2 cycles (`clocks.l2_mhz`).
    pub ctrl_latency: u32,
    /// Address interleaving granularity across channels, bytes.
    pub interleave_bytes: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SimLimits {
    /// A launch that runs longer than this many cycles is stopped as a watchdog fault.
    pub max_cycles: u64,
    /// Functional mode: maximum warp instructions per launch before a watchdog fault.
    pub max_warp_instructions: u64,
    /// The warp schedulers' shortcuts: cached blockers, passing warps that wait for an
    /// event, sleeping after a failed scan. They change no result (a test runs every
    /// workload both ways); `false` re-evaluates every path every cycle, only slower.
    pub scan_shortcuts: bool,
    /// Length of a counter interval in base ticks: every `interval_cycles` ticks of a launch
    /// the value of every named counter is snapshotted (per-interval deltas in
    /// `KernelStats::intervals`, and the interval hook is called). 0: no intervals.
    #[serde(default)]
    pub interval_cycles: u64,
}

impl GpuConfig {
    /// Load a preset by name and apply `key=value` overrides in order.
    pub fn preset(name: &str, overrides: &[String]) -> Result<GpuConfig, SimError> {
        let text = PRESETS
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, t)| *t)
            .ok_or_else(|| {
                let names: Vec<&str> = PRESETS.iter().map(|(n, _)| *n).collect();
                SimError::Config(format!(
                    "unknown preset `{name}` (available: {})",
                    names.join(", ")
                ))
            })?;
        Self::from_toml(&format!("preset {name}"), text, overrides)
    }

    /// Parse a configuration from TOML text (`origin` names it in errors), then apply
    /// overrides.
    pub fn from_toml(
        origin: &str,
        text: &str,
        overrides: &[String],
    ) -> Result<GpuConfig, SimError> {
        let mut value: toml::Value =
            toml::from_str(text).map_err(|e| SimError::Config(format!("{origin}: {e}")))?;
        for ov in overrides {
            apply_override(&mut value, ov)?;
        }
        let cfg: GpuConfig = value
            .try_into()
            .map_err(|e: toml::de::Error| SimError::Config(format!("{origin}: {e}")))?;
        cfg.validate()?;
        Ok(cfg)
    }

    /// Reject values the model cannot simulate.
    pub fn validate(&self) -> Result<(), SimError> {
        let bad = |k: &str, why: &str| Err(SimError::Config(format!("`{k}` {why}")));
        // Every integer key's own range first (nothing below may size anything from an
        // unchecked value), then the rules between keys.
        crate::config_limits::check(self)?;
        let s = &self.sm;
        if s.count == 0 || s.count > 1024 {
            return bad("sm.count", "must be between 1 and 1024");
        }
        if s.max_warps == 0 || s.max_threads == 0 || s.max_ctas == 0 {
            return bad("sm.max_warps/max_threads/max_ctas", "must be positive");
        }
        if s.max_warps > 64 {
            // The SM keeps per-warp state in 64-bit masks.
            return bad("sm.max_warps", "must be at most 64");
        }
        if s.schedulers == 0 || s.schedulers > s.max_warps {
            return bad("sm.schedulers", "must be between 1 and sm.max_warps");
        }
        if s.ibuffer_entries == 0 || s.fetch_width == 0 {
            return bad("sm.ibuffer_entries/fetch_width", "must be positive");
        }
        if s.shared_banks == 0 || !s.shared_banks.is_power_of_two() {
            return bad("sm.shared_banks", "must be a power of two");
        }
        if s.rf_banks == 0
            || !s.rf_banks.is_power_of_two()
            || s.rf_banks > crate::timing::rf::MAX_RF_BANKS
        {
            return bad(
                "sm.rf_banks",
                "must be a power of two between 1 and 64 (register-file banks per SM)",
            );
        }
        if s.stack_depth < 2 {
            return bad("sm.stack_depth", "must be at least 2");
        }
        if s.compaction != Compaction::None && s.reconvergence != Reconvergence::Spe {
            return bad(
                "sm.compaction",
                "needs sm.reconvergence = \"spe\": thread-block compaction replaces the \
                 per-warp stacks with a CTA-wide single-path stack (DPE + compaction is not \
                 modelled)",
            );
        }
        if s.lane_permutation != LanePermutation::None && s.compaction == Compaction::None {
            return bad(
                "sm.lane_permutation",
                "needs sm.compaction: a permutation only changes which threads can share a \
                 compacted warp",
            );
        }
        if s.register_alloc_unit == 0 || s.shared_alloc_unit == 0 {
            return bad(
                "sm.register_alloc_unit/shared_alloc_unit",
                "must be positive",
            );
        }
        if s.two_level_active == 0 {
            return bad("sm.two_level_active", "must be positive");
        }
        let p = &self.pipeline;
        if p.sp_units == 0 || p.sfu_units == 0 || p.dp_units == 0 {
            return bad("pipeline.*_units", "must be positive");
        }
        for (k, v) in [
            ("pipeline.alu_ii", p.alu_ii),
            ("pipeline.fma_ii", p.fma_ii),
            ("pipeline.dp_ii", p.dp_ii),
            ("pipeline.sfu_ii", p.sfu_ii),
            ("pipeline.div_ii", p.div_ii),
            ("pipeline.lsu_ii", p.lsu_ii),
        ] {
            if v == 0 {
                return bad(k, "must be at least 1");
            }
        }
        for (name, c) in [("l1", &self.l1), ("l2", &self.l2)] {
            if c.line_bytes < 32 || !c.line_bytes.is_power_of_two() {
                return bad(
                    &format!("{name}.line_bytes"),
                    "must be a power of two >= 32",
                );
            }
            if c.assoc == 0 || c.size_bytes % (c.assoc * c.line_bytes) != 0 {
                return bad(
                    &format!("{name}.size_bytes"),
                    "must be a multiple of assoc * line_bytes",
                );
            }
            // L2: the per-bank set count is checked below (768 KB / 12 banks is 64 sets each,
            // but 768 sets in total is not a power of two).
            let sets = c.size_bytes / (c.assoc * c.line_bytes);
            if name == "l1" && (sets == 0 || !sets.is_power_of_two()) {
                return bad(
                    &format!("{name}.size_bytes"),
                    "must give a power-of-two number of sets",
                );
            }
            if c.mshrs == 0 || c.mshr_merge == 0 {
                return bad(&format!("{name}.mshrs"), "must be positive");
            }
            // memory model limits: MSHR ids are 16-bit, sector masks 32-bit (32 B sectors)
            if c.mshrs > 4096 {
                return bad(&format!("{name}.mshrs"), "must be at most 4096");
            }
            if c.line_bytes > 1024 {
                return bad(&format!("{name}.line_bytes"), "must be at most 1024");
            }
        }
        if self.l1.banks == 0
            || !self.l1.banks.is_power_of_two()
            || self.l1.banks as usize > crate::memory::MAX_L1_BANKS
        {
            return bad(
                "l1.banks",
                "must be a power of two between 1 and 32 (line-interleaved L1 banks)",
            );
        }
        if self.l1.line_bytes != self.l2.line_bytes {
            return bad(
                "l1.line_bytes",
                "must equal l2.line_bytes (the memory model moves whole lines)",
            );
        }
        if self.l2.banks > 4096 || self.dram.channels > 4096 {
            return bad("l2.banks/dram.channels", "must be at most 4096");
        }
        if self.l2.banks == 0 || !self.l2.size_bytes.is_multiple_of(self.l2.banks) {
            return bad("l2.banks", "must be positive and divide l2.size_bytes");
        }
        let l2_bank = self.l2.size_bytes / self.l2.banks;
        if !l2_bank.is_multiple_of(self.l2.assoc * self.l2.line_bytes)
            || !(l2_bank / (self.l2.assoc * self.l2.line_bytes)).is_power_of_two()
        {
            return bad(
                "l2.banks",
                "each bank must hold a power-of-two number of sets",
            );
        }
        if self.icnt.bytes_per_cycle == 0 || self.icnt.queue == 0 {
            return bad("icnt.bytes_per_cycle/queue", "must be positive");
        }
        let d = &self.dram;
        if d.channels == 0 || d.banks == 0 || d.bytes_per_cycle == 0 || d.queue == 0 {
            return bad(
                "dram.channels/banks/bytes_per_cycle/queue",
                "must be positive",
            );
        }
        if d.row_bytes == 0 || !d.row_bytes.is_power_of_two() {
            return bad("dram.row_bytes", "must be a power of two");
        }
        if d.interleave_bytes < self.l2.line_bytes || !d.interleave_bytes.is_power_of_two() {
            return bad(
                "dram.interleave_bytes",
                "must be a power of two >= l2.line_bytes",
            );
        }
        if d.scheduler != "fr_fcfs" && d.scheduler != "fcfs" {
            return bad("dram.scheduler", "must be \"fr_fcfs\" or \"fcfs\"");
        }
        let c = &self.clocks;
        let sm_keys = (0..c.sm_mhz.len()).map(|i| (format!("clocks.sm_mhz[{i}]"), c.sm_mhz[i]));
        for (k, v) in [
            ("clocks.core_mhz".to_string(), c.core_mhz),
            ("clocks.icnt_mhz".to_string(), c.icnt_mhz),
            ("clocks.l2_mhz".to_string(), c.l2_mhz),
            ("clocks.dram_mhz".to_string(), c.dram_mhz),
        ]
        .into_iter()
        .chain(sm_keys)
        {
            // 1 MHz ..= 100 GHz (`timing::clock::{MIN_KHZ, MAX_KHZ}`): catches a frequency
            // given in Hz or GHz, and keeps every tick * kHz product inside u64.
            if !(v.is_finite() && (1.0..=100_000.0).contains(&v)) {
                return bad(
                    &k,
                    &format!("must be a frequency between 1 and 100000 MHz (got {v})"),
                );
            }
        }
        if c.sm_mhz.len() > s.count as usize {
            return bad(
                "clocks.sm_mhz",
                &format!(
                    "has {} entries but the GPU has sm.count = {} SMs",
                    c.sm_mhz.len(),
                    s.count
                ),
            );
        }
        if self.sim.max_cycles == 0 || self.sim.max_warp_instructions == 0 {
            return bad("sim.max_cycles/max_warp_instructions", "must be positive");
        }
        let iv = self.sim.interval_cycles;
        if iv != 0 && !(100..=self.sim.max_cycles).contains(&iv) {
            return bad(
                "sim.interval_cycles",
                &format!(
                    "must be 0 (no intervals) or between 100 and sim.max_cycles = {} (got {iv})",
                    self.sim.max_cycles
                ),
            );
        }
        // Every hardware unit the configuration instantiates must accept the parameters
        // it derives from the configuration (the unit's registry entry names the key).
        for unit in crate::units::ALL {
            unit.gpu_params(self).map_err(SimError::Config)?;
        }
        Ok(())
    }

    /// Peak DRAM bandwidth in GB/s implied by the configuration (for reports).
    pub fn dram_bandwidth_gbs(&self) -> f64 {
        self.dram.channels as f64 * self.dram.bytes_per_cycle as f64 * self.clocks.dram_mhz * 1e6
            / 1e9
    }
}

/// Apply one `a.b.c=value` override to a parsed preset. The key must exist; the value is
/// parsed as a TOML literal (falling back to a string for bare words like `gto`), and must
/// have the same TOML type as the value it replaces (integers may replace floats).
fn apply_override(root: &mut toml::Value, ov: &str) -> Result<(), SimError> {
    let (key, raw) = ov
        .split_once('=')
        .ok_or_else(|| SimError::Config(format!("override `{ov}` is not of the form key=value")))?;
    let key = key.trim();
    let raw = raw.trim();
    if key.is_empty() {
        return Err(SimError::Config(format!(
            "override `{ov}` has an empty key"
        )));
    }
    let parts: Vec<&str> = key.split('.').collect();
    let mut cur = root;
    for (i, part) in parts.iter().enumerate() {
        let table = cur.as_table_mut().ok_or_else(|| {
            SimError::Config(format!(
                "unknown key `{key}`: `{}` is not a table",
                parts[..i].join(".")
            ))
        })?;
        if !table.contains_key(*part) {
            let mut known: Vec<String> = table.keys().cloned().collect();
            known.sort();
            let prefix = if i == 0 {
                String::new()
            } else {
                format!("{}.", parts[..i].join("."))
            };
            return Err(SimError::Config(format!(
                "unknown key `{key}` (keys here: {})",
                known
                    .iter()
                    .map(|k| format!("{prefix}{k}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        cur = table.get_mut(*part).expect("checked above");
    }
    if cur.is_table() {
        return Err(SimError::Config(format!(
            "key `{key}` is a table, not a value"
        )));
    }
    let parsed: toml::Value = match toml::from_str::<toml::Table>(&format!("v = {raw}")) {
        Ok(mut t) => t.remove("v").expect("parsed key v"),
        Err(_) => toml::Value::String(raw.to_string()),
    };
    let new = match (&*cur, parsed) {
        (toml::Value::Float(_), toml::Value::Integer(i)) => toml::Value::Float(i as f64),
        (old, new) if std::mem::discriminant(old) == std::mem::discriminant(&new) => new,
        (old, new) => {
            return Err(SimError::Config(format!(
                "key `{key}` expects a {}, got `{raw}` ({})",
                old.type_str(),
                new.type_str()
            )))
        }
    };
    *cur = new;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_load_and_validate() {
        for (name, _) in PRESETS {
            let c = GpuConfig::preset(name, &[]).unwrap();
            assert_eq!(&c.name, name);
        }
    }

    #[test]
    fn gtx480_matches_seed_table() {
        let c = GpuConfig::preset("gtx480", &[]).unwrap();
        assert_eq!(c.sm.count, 15);
        assert_eq!(c.sm.max_threads, 1536);
        assert_eq!(c.sm.max_warps, 48);
        assert_eq!(c.sm.registers, 32768);
        assert_eq!(c.sm.shared_bytes, 48 * 1024);
        assert_eq!(c.sm.schedulers, 2);
        assert_eq!(
            (c.l1.size_bytes, c.l1.assoc, c.l1.line_bytes),
            (16384, 4, 128)
        );
        assert_eq!(
            (c.l2.size_bytes, c.l2.assoc, c.l2.line_bytes),
            (786432, 8, 128)
        );
        assert_eq!(c.dram.scheduler, "fr_fcfs");
        // 177.6 GB/s [seed 001 L598]
        assert!(
            (c.dram_bandwidth_gbs() - 177.4).abs() < 1.0,
            "{}",
            c.dram_bandwidth_gbs()
        );
    }

    #[test]
    fn overrides_apply_and_type_check() {
        let c =
            GpuConfig::preset("gtx480", &["sm.count=4".into(), "sm.scheduler=lrr".into()]).unwrap();
        assert_eq!(c.sm.count, 4);
        assert_eq!(c.sm.scheduler, SchedulerPolicy::Lrr);
        let e = GpuConfig::preset("gtx480", &["sm.cuont=4".into()])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("unknown key `sm.cuont`") && e.contains("sm.count"),
            "{e}"
        );
        let e = GpuConfig::preset("gtx480", &["sm.count=many".into()])
            .unwrap_err()
            .to_string();
        assert!(e.contains("sm.count") && e.contains("integer"), "{e}");
        let e = GpuConfig::preset("gtx480", &["sm=3".into()])
            .unwrap_err()
            .to_string();
        assert!(e.contains("is a table"), "{e}");
        let e = GpuConfig::preset("gtx480", &["sm.count".into()])
            .unwrap_err()
            .to_string();
        assert!(e.contains("key=value"), "{e}");
        let e = GpuConfig::preset("gtx480", &["sm.scheduler=fifo".into()])
            .unwrap_err()
            .to_string();
        assert!(e.contains("fifo"), "{e}");
        let e = GpuConfig::preset("gtx480", &["sm.count=0".into()])
            .unwrap_err()
            .to_string();
        assert!(e.contains("sm.count"), "{e}");
        let e = GpuConfig::preset("nope", &[]).unwrap_err().to_string();
        assert!(e.contains("gtx480"), "{e}");
    }
}
