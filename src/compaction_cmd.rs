//! `warpforge compaction`: the thread-block compaction study of seed 001 chapter 4
//! (specs/tbc-capri-slp.md §5.4, §5.5), reproduced on the workloads and printed next to
//! the seed's figures.
//!
//! Every workload runs (timing mode, verified against its CPU reference) under each
//! variant: no compaction, TBC, TBC+, CAPRI-1bL, CAPRI-1bS, CAPRI-1bL with 2, 4 and 64
//! ("unlimited") CAPT entries, TBC with each lane permutation (the compaction rates of
//! §5.5 are on the TBC baseline), and CAPRI-1bL with Balanced SLP (§5.5's performance).
//! A workload is divergent when its SIMD utilisation without compaction is below 90%
//! (§5.2). Speed-ups are harmonic means of per-workload IPC ratios (the instructions are
//! the same under every variant, so IPC ratios are cycle ratios).

use anyhow::{bail, Context, Result};
use clap::Args;
use rayon::prelude::*;
use serde::Serialize;
use std::path::PathBuf;
use warpforge_model::config::GpuConfig;
use warpforge_model::gpu::{Gpu, Mode};
use warpforge_model::stats::{CompactionStats, PathCounts};
use warpforge_workloads::Size;

#[derive(Args)]
pub struct CompactionArgs {
    /// GPU presets to run (repeatable); the seed's configuration is fx5800 (§5.1).
    #[arg(long = "config", default_values_t = ["fx5800".to_string(), "gtx480".to_string()])]
    configs: Vec<String>,
    /// Input size of every workload.
    #[arg(long, default_value = "small")]
    size: Size,
    /// Seed of the workloads' input generators.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Worker threads (results do not depend on it).
    #[arg(long)]
    threads: Option<usize>,
    /// Write every figure as JSON.
    #[arg(long)]
    json: Option<PathBuf>,
}

/// One variant of the study: its label and configuration overrides.
struct Variant {
    label: &'static str,
    sets: &'static [&'static str],
}

const VARIANTS: &[Variant] = &[
    Variant {
        label: "none",
        sets: &[],
    },
    Variant {
        label: "tbc",
        sets: &["sm.compaction=tbc"],
    },
    Variant {
        label: "tbc+",
        sets: &["sm.compaction=tbc+"],
    },
    Variant {
        label: "capri",
        sets: &["sm.compaction=capri"],
    },
    Variant {
        label: "capri-1bs",
        sets: &["sm.compaction=capri", "sm.capri_history=1bs"],
    },
    Variant {
        label: "capri-capt2",
        sets: &["sm.compaction=capri", "sm.capt_entries=2"],
    },
    Variant {
        label: "capri-capt4",
        sets: &["sm.compaction=capri", "sm.capt_entries=4"],
    },
    Variant {
        label: "capri-capt64",
        sets: &["sm.compaction=capri", "sm.capt_entries=64"],
    },
    Variant {
        label: "capri+balanced",
        sets: &["sm.compaction=capri", "sm.lane_permutation=balanced"],
    },
    Variant {
        label: "tbc+balanced",
        sets: &["sm.compaction=tbc", "sm.lane_permutation=balanced"],
    },
    Variant {
        label: "tbc+odd_even",
        sets: &["sm.compaction=tbc", "sm.lane_permutation=odd_even"],
    },
    Variant {
        label: "tbc+xor_odd_half",
        sets: &["sm.compaction=tbc", "sm.lane_permutation=xor_odd_half"],
    },
    Variant {
        label: "tbc+rev_wid",
        sets: &["sm.compaction=tbc", "sm.lane_permutation=rev_wid"],
    },
    Variant {
        label: "tbc+flip_odd",
        sets: &["sm.compaction=tbc", "sm.lane_permutation=flip_odd"],
    },
    Variant {
        label: "tbc+rotate_odd_1",
        sets: &["sm.compaction=tbc", "sm.lane_permutation=rotate_odd_1"],
    },
    Variant {
        label: "tbc+wid",
        sets: &["sm.compaction=tbc", "sm.lane_permutation=wid"],
    },
];

/// One workload under one variant, summed over its launches.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Figures {
    pub cycles: u64,
    pub warp_instructions: u64,
    pub thread_instructions: u64,
    /// Scheduler cycles without issue.
    pub idle: u64,
    pub compaction: CompactionStats,
}

impl Figures {
    fn simd_util(&self) -> f64 {
        self.thread_instructions as f64 / (self.warp_instructions.max(1) * 32) as f64
    }
}

#[derive(Serialize)]
struct PresetResults {
    config: String,
    workloads: Vec<String>,
    divergent: Vec<String>,
    /// variant label -> per workload (in `workloads` order).
    variants: Vec<(String, Vec<Figures>)>,
}

/// Run `workload` under `cfg` and sum its launches; a workload that fails verification is
/// an error (compaction must never change results).
fn run_one(cfg: &GpuConfig, workload: &str, size: Size, seed: u64) -> Result<Figures> {
    let w = warpforge_workloads::by_name(workload).context("unknown workload")?;
    let mut gpu = Gpu::new(cfg.clone(), Mode::Timing);
    let v = w
        .run(&mut gpu, size, seed)
        .map_err(|e| anyhow::anyhow!("{workload}: {e}"))?;
    if !v.passed {
        bail!("{workload} failed verification: {}", v.detail);
    }
    let mut f = Figures::default();
    for k in &gpu.launches {
        f.cycles += k.cycles;
        f.warp_instructions += k.warp_instructions;
        f.thread_instructions += k.thread_instructions;
        f.idle += k.stalls.total();
        f.compaction.add(&k.compaction);
    }
    Ok(f)
}

/// Harmonic mean over `ws` of `base` cycles / `x` cycles, minus one.
fn speedup(base: &[Figures], x: &[Figures], ws: &[usize]) -> Option<f64> {
    if ws.is_empty() {
        return None;
    }
    let inv: f64 = ws
        .iter()
        .map(|&i| x[i].cycles as f64 / base[i].cycles.max(1) as f64)
        .sum();
    Some(ws.len() as f64 / inv - 1.0)
}

fn summed(x: &[Figures], ws: &[usize]) -> Figures {
    let mut s = Figures::default();
    for &i in ws {
        s.cycles += x[i].cycles;
        s.warp_instructions += x[i].warp_instructions;
        s.thread_instructions += x[i].thread_instructions;
        s.idle += x[i].idle;
        s.compaction.add(&x[i].compaction);
    }
    s
}

fn pct(x: Option<f64>) -> String {
    x.map_or("-".into(), |v| format!("{:.1}%", v * 100.0))
}

fn signed(x: Option<f64>) -> String {
    x.map_or("-".into(), |v| format!("{:+.1}%", v * 100.0))
}

pub fn compaction(a: &CompactionArgs) -> Result<u8> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(a.threads.unwrap_or(0))
        .build()
        .context("cannot start worker threads")?;
    let names: Vec<String> = warpforge_workloads::all()
        .iter()
        .map(|w| w.name().to_string())
        .collect();
    let mut all = Vec::new();
    for preset in &a.configs {
        let cfgs: Vec<GpuConfig> = VARIANTS
            .iter()
            .map(|v| {
                let sets: Vec<String> = v.sets.iter().map(|s| s.to_string()).collect();
                GpuConfig::preset(preset, &sets).map_err(anyhow::Error::from)
            })
            .collect::<Result<_>>()?;
        let jobs: Vec<(usize, usize)> = (0..VARIANTS.len())
            .flat_map(|v| (0..names.len()).map(move |w| (v, w)))
            .collect();
        eprintln!(
            "warpforge compaction: {} runs on {preset} ({} variants x {} workloads, size {:?})",
            jobs.len(),
            VARIANTS.len(),
            names.len(),
            a.size
        );
        let figures: Vec<Figures> = pool.install(|| {
            jobs.par_iter()
                .map(|&(v, w)| {
                    run_one(&cfgs[v], &names[w], a.size, a.seed)
                        .with_context(|| format!("{preset}, {}", VARIANTS[v].label))
                })
                .collect::<Result<_>>()
        })?;
        let per: Vec<Vec<Figures>> = figures.chunks(names.len()).map(|c| c.to_vec()).collect();
        let res = PresetResults {
            config: preset.clone(),
            workloads: names.clone(),
            divergent: (0..names.len())
                .filter(|&i| per[0][i].simd_util() < 0.9)
                .map(|i| names[i].clone())
                .collect(),
            variants: VARIANTS
                .iter()
                .zip(per)
                .map(|(v, f)| (v.label.to_string(), f))
                .collect(),
        };
        print_preset(&res, a.size);
        all.push(res);
    }
    if let Some(path) = &a.json {
        let text = serde_json::to_string_pretty(&all)?;
        std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(0)
}

fn print_preset(r: &PresetResults, size: Size) {
    let v = |label: &str| -> &[Figures] {
        &r.variants
            .iter()
            .find(|(l, _)| l == label)
            .expect("a variant of the study")
            .1
    };
    let div: Vec<usize> = (0..r.workloads.len())
        .filter(|&i| r.divergent.contains(&r.workloads[i]))
        .collect();
    let non: Vec<usize> = (0..r.workloads.len())
        .filter(|i| !div.contains(i))
        .collect();
    let none = v("none");
    let acc = |label: &str, ws: &[usize]| summed(v(label), ws).compaction.accuracy();
    let idle = |label: &str| {
        let (x, b) = (summed(v(label), &div).idle, summed(none, &div).idle);
        (b > 0).then(|| x as f64 / b as f64 - 1.0)
    };
    let named = |ws: &[&str]| -> Vec<usize> {
        (0..r.workloads.len())
            .filter(|&i| ws.contains(&r.workloads[i].as_str()))
            .collect()
    };
    let bfs_mum = named(&["bfs", "mum"]);
    let paths = |label: &str, kind: usize| -> PathCounts {
        let mut p = PathCounts::default();
        v(label)
            .iter()
            .for_each(|f| p.add(&f.compaction.paths[kind]));
        p
    };
    println!(
        "\n== {} (size {size:?}): divergent (SIMD_util < 90% without compaction): {}",
        r.config,
        r.divergent.join(", ")
    );
    let rows: Vec<Vec<String>> = vec![
        vec![
            "CAPRI-1bL accuracy, divergent / non-divergent".into(),
            format!("{} / {}", pct(acc("capri", &div)), pct(acc("capri", &non))),
            "87% / 99% (L1513)".into(),
        ],
        vec![
            "TBC accuracy, divergent / non-divergent".into(),
            format!("{} / {}", pct(acc("tbc", &div)), pct(acc("tbc", &non))),
            "fewest correct; ~0 non-divergent (L1501)".into(),
        ],
        vec![
            "1bS / 1bL accuracy on bfs+mum".into(),
            format!(
                "{} / {}",
                pct(acc("capri-1bs", &bfs_mum)),
                pct(acc("capri", &bfs_mum))
            ),
            "61% / 75% (L1515)".into(),
        ],
        vec![
            "CAPRI-1bL vs no compaction, divergent".into(),
            signed(speedup(none, v("capri"), &div)),
            "+14.9% (L1544)".into(),
        ],
        vec![
            "CAPRI-1bL vs TBC+, divergent".into(),
            signed(speedup(v("tbc+"), v("capri"), &div)),
            "+7.6% (L1544)".into(),
        ],
        vec![
            "CAPRI-1bS vs no compaction, divergent".into(),
            signed(speedup(none, v("capri-1bs"), &div)),
            "below 1bL, above TBC+ (L1544)".into(),
        ],
        vec![
            "TBC / TBC+ vs no compaction, non-divergent".into(),
            format!(
                "{} / {}",
                signed(speedup(none, v("tbc"), &non)),
                signed(speedup(none, v("tbc+"), &non))
            ),
            "-12% / -11% (L1556)".into(),
        ],
        vec![
            "CAPRI-1bL vs no compaction, non-divergent".into(),
            signed(speedup(none, v("capri"), &non)),
            "within ±2% (L1084)".into(),
        ],
        vec![
            "idle cycles vs no compaction, divergent: TBC / TBC+ / CAPRI-1bL".into(),
            format!(
                "{} / {} / {}",
                signed(idle("tbc")),
                signed(idle("tbc+")),
                signed(idle("capri"))
            ),
            "+72% / +63% / +5% (L1535, L1540)".into(),
        ],
        vec![
            "CAPT 2 / 4 / 32 entries, IPC vs 64 (unlimited), divergent".into(),
            format!(
                "{} / {} / {}",
                signed(speedup(v("capri-capt64"), v("capri-capt2"), &div)),
                signed(speedup(v("capri-capt64"), v("capri-capt4"), &div)),
                signed(speedup(v("capri-capt64"), v("capri"), &div))
            ),
            ">= 98.3% of unlimited at 4; MUM 86% at 2 (L1575)".into(),
        ],
        vec![
            "compaction rate, P-branches: TBC / Balanced / ideal".into(),
            format!(
                "{} / {} / {}",
                pct(paths("tbc", 0).rate()),
                pct(paths("tbc+balanced", 0).rate()),
                pct(paths("tbc", 0).ideal_rate())
            ),
            "3.2% / 71.5% / 72.7% (L1598)".into(),
        ],
        vec![
            "compaction rate, P-branches: Odd_Even / Rev_WID".into(),
            format!(
                "{} / {}",
                pct(paths("tbc+odd_even", 0).rate()),
                pct(paths("tbc+rev_wid", 0).rate())
            ),
            "28.9% / 52.8% (L1598)".into(),
        ],
        vec![
            "compaction rate, D-branches: TBC / Balanced / ideal".into(),
            format!(
                "{} / {} / {}",
                pct(paths("tbc", 1).rate()),
                pct(paths("tbc+balanced", 1).rate()),
                pct(paths("tbc", 1).ideal_rate())
            ),
            "42.5% / - / 64.4% (L1607)".into(),
        ],
        vec![
            "CAPRI + Balanced vs no compaction / vs CAPRI, divergent".into(),
            format!(
                "{} / {}",
                signed(speedup(none, v("capri+balanced"), &div)),
                signed(speedup(v("capri"), v("capri+balanced"), &div))
            ),
            "+11.6% / +7% (L1636)".into(),
        ],
    ];
    print!(
        "{}",
        crate::report::table_left(&["figure", "ours", "seed"], &rows, 3)
    );
    let mut rows = Vec::new();
    for (i, w) in r.workloads.iter().enumerate() {
        let s = |label: &str| signed(speedup(none, v(label), &[i]));
        rows.push(vec![
            w.clone(),
            if div.contains(&i) { "yes" } else { "no" }.into(),
            format!("{:.1}%", none[i].simd_util() * 100.0),
            s("tbc"),
            s("tbc+"),
            s("capri"),
            s("capri+balanced"),
            format!("{:.1}%", v("capri+balanced")[i].simd_util() * 100.0),
        ]);
    }
    println!(
        "\nPer workload: IPC vs no compaction (SIMD utilisation without and with CAPRI+Balanced):"
    );
    print!(
        "{}",
        crate::report::table(
            &[
                "workload",
                "divergent",
                "SIMD_util",
                "TBC",
                "TBC+",
                "CAPRI-1bL",
                "CAPRI+Bal",
                "SIMD_util CAPRI+Bal",
            ],
            &rows
        )
    );
}
