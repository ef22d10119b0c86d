//! Text tables and JSON of `warpforge run` results.

use serde::Serialize;
use warpforge_model::stats::KernelStats;
use warpforge_model::units::host::UnitActivity;

/// Results of one workload (or user kernel) run.
#[derive(Debug, Clone, Serialize)]
pub struct RunResult {
    pub workload: String,
    /// `Some(true/false)` for workloads with a reference check; `None` for user kernels.
    pub verified: Option<bool>,
    pub detail: String,
    pub launches: Vec<KernelStats>,
    /// Activity counters of every hardware unit instance the GPU model ran (timing mode),
    /// summed per unit kind over the whole run.
    pub unit_activity: Vec<UnitActivity>,
    /// Error that ended the run (guest fault, launch error), if any.
    pub error: Option<String>,
    /// Wall time after the last launch until the recorded unit traces were complete (the
    /// encoding runs beside the simulation and may lag it; 0 without recording).
    pub trace_finish_seconds: f64,
}

impl RunResult {
    /// Launch statistics summed per kernel name, in first-launch order, with launch counts.
    pub fn per_kernel(&self) -> Vec<(KernelStats, usize)> {
        let mut out: Vec<(KernelStats, usize)> = Vec::new();
        for l in &self.launches {
            match out.iter_mut().find(|(k, _)| k.kernel == l.kernel) {
                Some((k, n)) => {
                    k.accumulate(l);
                    *n += 1;
                }
                None => out.push((l.clone(), 1)),
            }
        }
        out
    }
}

fn pct(x: Option<f64>) -> String {
    x.map(|v| format!("{:.1}%", v * 100.0))
        .unwrap_or_else(|| "-".into())
}

fn num(x: Option<f64>) -> String {
    x.map(|v| format!("{v:.2}")).unwrap_or_else(|| "-".into())
}

fn num3(x: Option<f64>) -> String {
    x.map(|v| format!("{v:.3}")).unwrap_or_else(|| "-".into())
}

fn bytes(b: u64) -> String {
    if b >= 1 << 20 {
        format!("{:.1}M", b as f64 / (1 << 20) as f64)
    } else if b >= 1 << 10 {
        format!("{:.1}K", b as f64 / 1024.0)
    } else {
        b.to_string()
    }
}

/// Render rows as an aligned text table (first two columns left-aligned, the rest right).
pub fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    table_left(header, rows, 2)
}

/// Render rows as an aligned text table, the first `left` columns left-aligned.
pub fn table_left(header: &[&str], rows: &[Vec<String>], left: usize) -> String {
    let mut w: Vec<usize> = header.iter().map(|h| h.len()).collect();
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            w[i] = w[i].max(c.chars().count());
        }
    }
    let line = |cells: Vec<String>| -> String {
        cells
            .iter()
            .enumerate()
            .map(|(i, c)| {
                if i < left {
                    format!("{c:<width$}", width = w[i])
                } else {
                    format!("{c:>width$}", width = w[i])
                }
            })
            .collect::<Vec<_>>()
            .join("  ")
            .trim_end()
            .to_string()
    };
    let mut out = line(header.iter().map(|s| s.to_string()).collect());
    out.push('\n');
    out.push_str(
        &w.iter()
            .map(|n| "-".repeat(*n))
            .collect::<Vec<_>>()
            .join("  "),
    );
    out.push('\n');
    for r in rows {
        out.push_str(&line(r.clone()));
        out.push('\n');
    }
    out
}

/// The per-kernel performance table.
pub fn kernel_table(results: &[RunResult], timing: bool) -> String {
    let mut rows = Vec::new();
    for r in results {
        let verified = match (&r.error, r.verified) {
            (Some(_), _) => "ERROR".to_string(),
            (None, Some(true)) => "yes".to_string(),
            (None, Some(false)) => "NO".to_string(),
            (None, None) => "n/a".to_string(),
        };
        for (k, n) in r.per_kernel() {
            let mut row = vec![r.workload.clone(), k.kernel.clone(), n.to_string()];
            if timing {
                row.push(k.cycles.to_string());
            }
            row.extend([
                k.warp_instructions.to_string(),
                k.thread_instructions.to_string(),
            ]);
            if timing {
                row.push(num(k.ipc()));
                row.push(num3(k.avg_path()));
            }
            row.push(pct(k.simd_utilisation()));
            if timing {
                row.extend([
                    pct(k.mem.l1_hit_rate()),
                    pct(k.mem.l2_hit_rate()),
                    bytes(k.mem.dram_bytes()),
                ]);
            }
            row.extend([
                k.max_stack_depth.to_string(),
                k.regs_per_thread.to_string(),
                verified.clone(),
            ]);
            rows.push(row);
        }
        if r.launches.is_empty() {
            let mut row = vec![r.workload.clone(), "-".into(), "0".into()];
            let blanks = if timing { 11 } else { 5 };
            row.extend(std::iter::repeat_n("-".to_string(), blanks));
            row.push(verified);
            rows.push(row);
        }
    }
    let header: Vec<&str> = if timing {
        vec![
            "workload",
            "kernel",
            "launches",
            "cycles",
            "warp_insts",
            "thread_insts",
            "IPC",
            "Avg_Path",
            "SIMD_util",
            "L1_hit",
            "L2_hit",
            "DRAM",
            "max_depth",
            "regs",
            "verified",
        ]
    } else {
        vec![
            "workload",
            "kernel",
            "launches",
            "warp_insts",
            "thread_insts",
            "SIMD_util",
            "max_depth",
            "regs",
            "verified",
        ]
    };
    table(&header, &rows)
}

/// Stall breakdown per kernel: share of scheduler-cycles with no issue, by reason.
pub fn stall_table(results: &[RunResult]) -> String {
    let mut rows = Vec::new();
    for r in results {
        for (k, _) in r.per_kernel() {
            let issue_slots = k.stalls.total() + k.warp_instructions;
            let share = |v: u64| {
                pct(if issue_slots == 0 {
                    None
                } else {
                    Some(v as f64 / issue_slots as f64)
                })
            };
            let mut row = vec![
                r.workload.clone(),
                k.kernel.clone(),
                share(k.warp_instructions),
            ];
            row.extend(k.stalls.items().iter().map(|(_, v)| share(*v)));
            rows.push(row);
        }
    }
    let mut header = vec!["workload", "kernel", "issued"];
    header.extend(
        warpforge_model::stats::StallBreakdown::default()
            .items()
            .iter()
            .map(|(n, _)| *n),
    );
    table(&header, &rows)
}

/// Thread-block compaction per kernel (spec tbc-capri-slp.md §5): SIMD utilisation, idle
/// scheduler cycles, CAPRI's decisions against the evaluator's oracle, the CAPT's hit
/// rate, the compaction unit's work, and the compaction rate of the paths out of
/// divergent programmatic (P) and data-dependent (D) branches, with the ideal's.
pub fn compaction_table(results: &[RunResult]) -> String {
    let mut rows = Vec::new();
    for r in results {
        for (k, _) in r.per_kernel() {
            let c = &k.compaction;
            let [p, d] = &c.paths;
            rows.push(vec![
                r.workload.clone(),
                k.kernel.clone(),
                pct(k.simd_utilisation()),
                k.stalls.total().to_string(),
                c.decisions().to_string(),
                format!(
                    "{}/{}/{}/{}",
                    c.stall_adequate, c.stall_inadequate, c.bypass_adequate, c.bypass_inadequate
                ),
                pct(c.accuracy()),
                pct(c.capt_hit_rate()),
                format!("{}/{}", c.wcu_requests, c.wcu_warps),
                format!("{} {}", p.paths, pct(p.rate())),
                pct(p.ideal_rate()),
                format!("{} {}", d.paths, pct(d.rate())),
                pct(d.ideal_rate()),
            ]);
        }
    }
    table(
        &[
            "workload",
            "kernel",
            "SIMD_util",
            "idle",
            "decisions",
            "S+A/S-A/B+A/B-A",
            "accuracy",
            "CAPT_hit",
            "WCU_req/warps",
            "P_paths rate",
            "P_ideal",
            "D_paths rate",
            "D_ideal",
        ],
        &rows,
    )
}

/// One workload under SPE and under DPE (spec reconvergence-dpe.md §7.2: IPC speedup and
/// Avg_Path, [L698-756]).
#[derive(Debug, Clone, Serialize)]
pub struct ReconvergenceComparison {
    pub workload: String,
    pub spe_cycles: u64,
    pub dpe_cycles: u64,
    pub spe_ipc: Option<f64>,
    pub dpe_ipc: Option<f64>,
    /// DPE IPC over SPE IPC, minus one.
    pub dpe_speedup: Option<f64>,
    pub dpe_avg_path: Option<f64>,
    pub spe_max_depth: u32,
    pub dpe_max_depth: u32,
    /// Set when either run faulted or failed verification, or when they executed different
    /// instruction counts (DPE must issue the same warp instructions as SPE).
    pub problem: Option<String>,
}

fn totals(r: &RunResult) -> KernelStats {
    let mut t = KernelStats::default();
    for l in &r.launches {
        t.accumulate(l);
    }
    t
}

/// Pair up the SPE and DPE runs of the same workloads (same order).
pub fn compare_reconvergence(
    spe: &[&RunResult],
    dpe: &[&RunResult],
) -> Vec<ReconvergenceComparison> {
    spe.iter()
        .zip(dpe)
        .map(|(s, d)| {
            let (ts, td) = (totals(s), totals(d));
            let failed = |r: &RunResult, which: &str| {
                r.error
                    .as_ref()
                    .map(|e| format!("{which}: {e}"))
                    .or_else(|| {
                        (r.verified == Some(false))
                            .then(|| format!("{which}: verification failed: {}", r.detail))
                    })
            };
            let problem = failed(s, "SPE").or_else(|| failed(d, "DPE")).or_else(|| {
                (ts.warp_instructions != td.warp_instructions
                    || ts.thread_instructions != td.thread_instructions)
                    .then(|| {
                        format!(
                            "DPE issued {} warp / {} thread instructions, SPE {} / {}",
                            td.warp_instructions,
                            td.thread_instructions,
                            ts.warp_instructions,
                            ts.thread_instructions
                        )
                    })
            });
            let (si, di) = (ts.ipc(), td.ipc());
            ReconvergenceComparison {
                workload: s.workload.clone(),
                spe_cycles: ts.cycles,
                dpe_cycles: td.cycles,
                spe_ipc: si,
                dpe_ipc: di,
                dpe_speedup: si.zip(di).map(|(a, b)| b / a - 1.0),
                dpe_avg_path: td.avg_path(),
                spe_max_depth: ts.max_stack_depth,
                dpe_max_depth: td.max_stack_depth,
                problem,
            }
        })
        .collect()
}

/// The SPE/DPE table printed by `warpforge run`.
pub fn comparison_table(rows: &[ReconvergenceComparison]) -> String {
    let body: Vec<Vec<String>> = rows
        .iter()
        .map(|c| {
            vec![
                c.workload.clone(),
                c.spe_cycles.to_string(),
                c.dpe_cycles.to_string(),
                num(c.spe_ipc),
                num(c.dpe_ipc),
                c.dpe_speedup
                    .map(|v| format!("{:+.1}%", v * 100.0))
                    .unwrap_or_else(|| "-".into()),
                num3(c.dpe_avg_path),
                format!("{}/{}", c.spe_max_depth, c.dpe_max_depth),
                if c.problem.is_some() { "NO" } else { "yes" }.to_string(),
            ]
        })
        .collect();
    table_left(
        &[
            "workload",
            "SPE_cycles",
            "DPE_cycles",
            "SPE_IPC",
            "DPE_IPC",
            "DPE_vs_SPE",
            "Avg_Path",
            "depth_SPE/DPE",
            "both_ok",
        ],
        &body,
        1,
    )
}
