//! `warpforge bench --host-instructions`: the host instructions each workload's run executes
//! inside its kernel launches, counted by valgrind's callgrind, instead of its time.
//!
//! Why: on a shared host whose speed moves by tens of percent from minute to minute, timed
//! runs compare the host's moments as much as the builds (README, "Speed"): two timed
//! benches of the same two builds an hour apart gave medians 5-7 points apart. An
//! instruction count is the same on every run and under any load, so one run per workload
//! and variant is enough and the runs can share the cores. It is not time: it leaves out
//! cache misses and stalls (most of what trace recording costs is memory traffic), so it
//! complements the timed bench and does not replace it.
//!
//! Only the kernel launches are counted (`--collect-atstart=no`, collection toggled on and
//! off by the model's `Host::launch`, through which every launch goes in this build and in
//! the 2026-11 releases): input generation, PTX parsing and the reference check are left
//! out, as the timed bench leaves them out.

use anyhow::{bail, Context, Result};
use serde::Serialize;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use crate::bench::{run_child, run_command, write_json, BenchArgs, RunFigures, UNKNOWN_WORKLOAD};
use crate::bench_stats::median;

/// The function whose calls are counted (a callgrind `--toggle-collect` pattern).
const LAUNCH_FN: &str = "*warpforge_model::host::Host>::launch";

/// One way of running the workloads: an executable, with or without trace recording.
struct Variant<'a> {
    label: &'static str,
    exe: &'a Path,
    record: bool,
}

/// One counted run.
struct Counted {
    figures: RunFigures,
    instructions: u64,
}

#[derive(Debug, Serialize)]
struct Row {
    workload: String,
    /// Per variant, in the order of `variants` in the JSON document.
    cycles: Vec<u64>,
    host_instructions: Vec<u64>,
    /// Host instructions per simulated cycle of the second variant over the first's, minus
    /// 1, in percent (absent with one variant).
    change_percent: Option<f64>,
    verified: bool,
}

pub fn host_instructions(exe: &Path, tmp: &Path, names: &[&str], a: &BenchArgs) -> Result<u8> {
    let probe = Command::new("valgrind").arg("--version").output();
    if !probe.is_ok_and(|o| o.status.success()) {
        bail!(
            "--host-instructions needs valgrind on the PATH (scripts/install-tools.sh installs \
             it; Debian package `valgrind`)"
        );
    }
    let variants = match &a.against {
        Some(old) => {
            if !old.is_file() {
                bail!("--against {}: no such executable", old.display());
            }
            vec![
                Variant {
                    label: "against",
                    exe: old,
                    record: a.record_traces,
                },
                Variant {
                    label: "this build",
                    exe,
                    record: a.record_traces,
                },
            ]
        }
        None if a.recording_overhead => vec![
            Variant {
                label: "simulation",
                exe,
                record: false,
            },
            Variant {
                label: "recording",
                exe,
                record: true,
            },
        ],
        None => vec![Variant {
            label: "this build",
            exe,
            record: a.record_traces,
        }],
    };
    // A workload the other build (`--against`) does not have is skipped and named: a tiny
    // run of it there, not counted, says so at once ("unknown workload").
    let mut skipped = Vec::new();
    let names: Vec<&str> = match &a.against {
        Some(old) => names
            .iter()
            .copied()
            .filter(|&name| {
                let known = !unknown_to(old, name);
                if !known {
                    skipped.push(name);
                }
                known
            })
            .collect(),
        None => names.to_vec(),
    };
    let nv = variants.len();
    let jobs: Vec<(usize, usize)> = (0..names.len())
        .flat_map(|w| (0..nv).map(move |v| (w, v)))
        .collect();
    let results: Vec<Mutex<Option<Result<Counted>>>> =
        jobs.iter().map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(jobs.len());
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let j = next.fetch_add(1, Ordering::Relaxed);
                let Some(&(w, v)) = jobs.get(j) else { break };
                let r = count(tmp, names[w], a, &variants[v], j);
                if let Ok(c) = &r {
                    eprintln!(
                        "{} ({}): {:.1}M host instructions in the launches",
                        names[w],
                        variants[v].label,
                        c.instructions as f64 / 1e6
                    );
                }
                *results[w * nv + v].lock().unwrap() = Some(r);
            });
        }
    });
    let mut counted = results
        .into_iter()
        .map(|r| r.into_inner().unwrap().expect("every job ran"));
    let mut rows = Vec::new();
    for name in &names {
        let runs: Vec<Result<Counted>> = counted.by_ref().take(nv).collect();
        let mut ok = Vec::new();
        for (r, v) in runs.into_iter().zip(&variants) {
            ok.push(r.with_context(|| format!("{name}: its run ({}) failed", v.label))?);
        }
        let per_cycle = |c: &Counted| c.instructions as f64 / c.figures.cycles.max(1.0);
        rows.push(Row {
            workload: name.to_string(),
            cycles: ok.iter().map(|c| c.figures.cycles as u64).collect(),
            host_instructions: ok.iter().map(|c| c.instructions).collect(),
            change_percent: (ok.len() == 2)
                .then(|| 100.0 * (per_cycle(&ok[1]) / per_cycle(&ok[0]) - 1.0)),
            verified: ok.iter().all(|c| c.figures.verified),
        });
    }
    if let (true, Some(old)) = (rows.is_empty(), &a.against) {
        bail!(
            "--against {}: it has none of the selected workloads (not in it: {})",
            old.display(),
            skipped.join(", ")
        );
    }
    print_rows(&rows, &variants);
    let changes: Vec<f64> = rows.iter().filter_map(|r| r.change_percent).collect();
    let median_change = (!changes.is_empty()).then(|| median(changes.clone()));
    match (median_change, variants.len()) {
        (Some(m), _) if a.against.is_some() => println!(
            "\nmedian change of host instructions per simulated cycle, this build against {}: \
             {m:+.2}% (below 0: this build executes fewer; counted inside the kernel \
             launches, valgrind --tool=callgrind)",
            variants[0].exe.display()
        ),
        (Some(m), _) => println!(
            "\nmedian host instructions that recording adds inside the kernel launches: \
             {m:+.2}% (valgrind --tool=callgrind)"
        ),
        _ => {
            let per_cycle: Vec<f64> = rows
                .iter()
                .map(|r| r.host_instructions[0] as f64 / r.cycles[0].max(1) as f64)
                .collect();
            println!(
                "\nmedian {:.0} host instructions per simulated cycle inside the kernel launches \
                 (valgrind --tool=callgrind)",
                median(per_cycle)
            );
        }
    }
    if !skipped.is_empty() {
        println!(
            "not in {}: {}",
            variants[0].exe.display(),
            skipped.join(", ")
        );
    }
    if let Some(p) = &a.json {
        let doc = serde_json::json!({"config": a.config, "size": a.size.to_string(),
            "measure": "host instructions inside kernel launches (valgrind --tool=callgrind)",
            "variants": variants.iter().map(|v| serde_json::json!({"label": v.label,
                "exe": v.exe.display().to_string(), "recording_traces": v.record}))
                .collect::<Vec<_>>(),
            "median_change_percent": median_change, "skipped": skipped, "workloads": rows});
        write_json(p, &doc)?;
    }
    Ok(if rows.iter().all(|r| r.verified) {
        0
    } else {
        1
    })
}

/// Whether `exe` refuses workload `name` as unknown (a tiny run, not counted).
fn unknown_to(exe: &Path, name: &str) -> bool {
    Command::new(exe)
        .args([
            "run",
            "--quiet",
            "--size",
            "tiny",
            "--no-compare",
            "--no-cosim",
        ])
        .args(["--workload", name])
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stderr).contains(UNKNOWN_WORKLOAD))
}

/// Runs workload `name` in variant `v` under callgrind (job `tag`'s own files in `tmp`).
fn count(tmp: &Path, name: &str, a: &BenchArgs, v: &Variant, tag: usize) -> Result<Counted> {
    let json = tmp.join(format!("{name}-{tag}.json"));
    let out = tmp.join(format!("{name}-{tag}.callgrind"));
    let inner = run_command(v.exe, name, a, v.record, &json);
    let mut cmd = Command::new("valgrind");
    cmd.args([
        "--tool=callgrind",
        "--collect-atstart=no",
        &format!("--toggle-collect={LAUNCH_FN}"),
        &format!("--callgrind-out-file={}", out.display()),
    ])
    .arg(inner.get_program())
    .args(inner.get_args());
    let figures = run_child(cmd, name, &json)?;
    let text = std::fs::read_to_string(&out)
        .with_context(|| format!("{name}: callgrind wrote no {}", out.display()))?;
    let _ = std::fs::remove_file(&out);
    let instructions = total_of(&text)
        .with_context(|| format!("{name}: no total in callgrind's {}", out.display()))?;
    if instructions == 0 && figures.cycles > 0.0 {
        bail!(
            "{name}: callgrind counted no host instruction inside the kernel launches ({} has \
             no function matching `{LAUNCH_FN}`?)",
            v.exe.display()
        );
    }
    Ok(Counted {
        figures,
        instructions,
    })
}

/// The event total of a callgrind output file (`summary:` or `totals:`, instructions first).
fn total_of(text: &str) -> Option<u64> {
    text.lines()
        .find_map(|l| {
            l.strip_prefix("summary:")
                .or_else(|| l.strip_prefix("totals:"))
        })
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
}

fn print_rows(rows: &[Row], variants: &[Variant]) {
    let mut header = vec!["workload".to_string()];
    for v in variants {
        header.push(format!("cycles ({})", v.label));
    }
    for v in variants {
        header.push(format!("M instr ({})", v.label));
    }
    header.push(if variants.len() == 2 {
        "change".into()
    } else {
        "instr/cycle".into()
    });
    header.push("verified".into());
    let table: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let mut row = vec![r.workload.clone()];
            row.extend(r.cycles.iter().map(u64::to_string));
            row.extend(
                r.host_instructions
                    .iter()
                    .map(|&n| format!("{:.1}", n as f64 / 1e6)),
            );
            row.push(match r.change_percent {
                Some(c) => format!("{c:+.2}%"),
                None => format!(
                    "{:.0}",
                    r.host_instructions[0] as f64 / r.cycles[0].max(1) as f64
                ),
            });
            row.push(if r.verified { "yes" } else { "NO" }.into());
            row
        })
        .collect();
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    print!("{}", crate::report::table(&header, &table));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_total_is_read_from_either_line() {
        assert_eq!(total_of("events: Ir\nsummary: 1234\n"), Some(1234));
        assert_eq!(total_of("events: Ir\ntotals: 77 5\n"), Some(77));
        assert_eq!(total_of("events: Ir\n"), None);
    }
}
