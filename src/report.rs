//! Text tables and JSON of `warpforge run` results.

use serde::Serialize;
use warpforge_model::stats::KernelStats;

/// Results of one workload (or user kernel) run.
#[derive(Debug, Clone, Serialize)]
pub struct RunResult {
    pub workload: String,
    /// `Some(true/false)` for workloads with a reference check; `None` for user kernels.
    pub verified: Option<bool>,
    pub detail: String,
    pub launches: Vec<KernelStats>,
    /// Error that ended the run (guest fault, launch error), if any.
    pub error: Option<String>,
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

fn bytes(b: u64) -> String {
    if b >= 1 << 20 {
        format!("{:.1}M", b as f64 / (1 << 20) as f64)
    } else if b >= 1 << 10 {
        format!("{:.1}K", b as f64 / 1024.0)
    } else {
        b.to_string()
    }
}

/// Render rows as an aligned text table (first column left-aligned, the rest right).
pub fn table(header: &[&str], rows: &[Vec<String>]) -> String {
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
                if i < 2 {
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
            let blanks = if timing { 10 } else { 5 };
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
