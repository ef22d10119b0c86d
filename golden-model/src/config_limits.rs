//! The stated range of every integer configuration key.
//!
//! Every integer key of a preset has one row here, checked before anything is built from
//! the configuration (so no value can size a host allocation without bound, overflow an
//! index type or trip an assertion deep in the model). The ranges are generous against
//! real GPUs (a GTX 480 has 15 SMs, 32 K registers, 48 KB of shared memory per SM) and
//! tight against what the model's data structures hold: 64-bit warp masks, 16-bit MSHR
//! ids, per-cycle timing wheels as long as the longest latency. Cross-key rules (powers of
//! two, divisibility, one key bounded by another) stay in [`GpuConfig::validate`].
//! `tests` checks that every integer key of every preset has a row, so a new key cannot
//! arrive without its limit; the README's configuration section lists the table.

use crate::config::GpuConfig;
use crate::error::SimError;

/// One integer key's stated range and why it stops there.
pub struct KeyLimit {
    pub key: &'static str,
    pub min: u64,
    pub max: u64,
    pub why: &'static str,
}

const fn lim(key: &'static str, min: u64, max: u64, why: &'static str) -> KeyLimit {
    KeyLimit { key, min, max, why }
}

/// Latencies, initiation intervals and DRAM timings: a timing wheel per SM or channel is
/// as long as the longest of them.
const CYCLES: u64 = 10_000;
const LATENCY: &str = "cycles (the model keeps timing wheels this long)";

/// Shared memory of one SM, and so of one CTA (`gpu::launch` checks launches against it).
pub const MAX_SHARED_BYTES: u64 = 16 << 20;

/// Every integer key, in preset order.
pub const KEY_LIMITS: &[KeyLimit] = &[
    lim("sm.count", 1, 1024, "SMs"),
    lim("sm.max_threads", 1, 2048, "threads per SM (64 warps of 32)"),
    lim(
        "sm.max_warps",
        1,
        64,
        "warps per SM (per-warp state is in 64-bit masks)",
    ),
    lim("sm.max_ctas", 1, 64, "resident CTAs per SM"),
    lim("sm.registers", 1, 1 << 20, "32-bit registers per SM"),
    lim(
        "sm.register_alloc_unit",
        1,
        1 << 20,
        "registers per allocation unit",
    ),
    lim(
        "sm.shared_bytes",
        0,
        MAX_SHARED_BYTES,
        "bytes of shared memory per SM (16 MiB)",
    ),
    lim(
        "sm.shared_alloc_unit",
        1,
        MAX_SHARED_BYTES,
        "bytes per shared-memory allocation unit",
    ),
    lim("sm.schedulers", 1, 64, "warp schedulers per SM"),
    lim(
        "sm.two_level_active",
        1,
        64,
        "active warps of the two-level scheduler",
    ),
    lim(
        "sm.ibuffer_entries",
        1,
        64,
        "instruction-buffer entries per warp",
    ),
    lim("sm.fetch_width", 1, 32, "instructions fetched per cycle"),
    lim("sm.fetch_latency", 0, CYCLES, LATENCY),
    lim("sm.shared_banks", 1, 64, "shared-memory banks"),
    lim("sm.shared_latency", 0, CYCLES, LATENCY),
    lim(
        "sm.stack_depth",
        2,
        1 << 16,
        "SIMT stack entries; the instantiated stack unit's DEPTH range (2..=64) applies on \
         top, and its error names the unit",
    ),
    lim("sm.rf_banks", 1, 64, "register-file banks per SM"),
    lim(
        "sm.capt_entries",
        2,
        64,
        "CAPRI table entries (the capri_capt unit's ENTRIES)",
    ),
    lim(
        "sm.wcu_latency",
        1,
        8,
        "cycles to the first compacted warp (the wcu unit's FIRST_LAT)",
    ),
    lim("pipeline.sp_units", 1, 64, "SP pipelines per SM"),
    lim("pipeline.sfu_units", 1, 64, "SFU pipelines per SM"),
    lim("pipeline.dp_units", 1, 64, "DP pipelines per SM"),
    lim("pipeline.alu_latency", 0, CYCLES, LATENCY),
    lim("pipeline.alu_ii", 1, CYCLES, LATENCY),
    lim("pipeline.fma_latency", 0, CYCLES, LATENCY),
    lim("pipeline.fma_ii", 1, CYCLES, LATENCY),
    lim("pipeline.dp_latency", 0, CYCLES, LATENCY),
    lim("pipeline.dp_ii", 1, CYCLES, LATENCY),
    lim("pipeline.sfu_latency", 0, CYCLES, LATENCY),
    lim("pipeline.sfu_ii", 1, CYCLES, LATENCY),
    lim("pipeline.div_latency", 0, CYCLES, LATENCY),
    lim("pipeline.div_ii", 1, CYCLES, LATENCY),
    lim("pipeline.lsu_ii", 1, CYCLES, LATENCY),
    lim("pipeline.ctrl_latency", 0, CYCLES, LATENCY),
    lim("l1.size_bytes", 1, 4 << 20, "bytes of L1 per SM (4 MiB)"),
    lim("l1.assoc", 1, 256, "ways"),
    lim(
        "l1.line_bytes",
        32,
        1024,
        "bytes per line (sector masks are 32-bit)",
    ),
    lim("l1.mshrs", 1, 4096, "MSHRs (16-bit MSHR ids)"),
    lim("l1.mshr_merge", 1, 1024, "requests merged into one MSHR"),
    lim("l1.hit_latency", 0, CYCLES, LATENCY),
    lim("l1.banks", 1, 32, "line-interleaved L1 banks"),
    lim("l2.size_bytes", 1, 256 << 20, "bytes of L2 (256 MiB)"),
    lim("l2.assoc", 1, 256, "ways"),
    lim(
        "l2.line_bytes",
        32,
        1024,
        "bytes per line (sector masks are 32-bit)",
    ),
    lim("l2.mshrs", 1, 4096, "MSHRs per bank (16-bit MSHR ids)"),
    lim("l2.mshr_merge", 1, 1024, "requests merged into one MSHR"),
    lim("l2.hit_latency", 0, CYCLES, LATENCY),
    lim("l2.banks", 1, 4096, "L2 banks"),
    lim("icnt.latency", 0, CYCLES, LATENCY),
    lim(
        "icnt.bytes_per_cycle",
        1,
        1 << 16,
        "bytes per interconnect cycle",
    ),
    lim("icnt.queue", 1, 1 << 16, "packets queued per port"),
    lim("dram.channels", 1, 1024, "DRAM channels"),
    lim("dram.banks", 1, 64, "banks per channel"),
    lim("dram.row_bytes", 32, 1 << 20, "bytes per DRAM row"),
    lim(
        "dram.bytes_per_cycle",
        1,
        1 << 16,
        "bytes per DRAM cycle per channel",
    ),
    lim("dram.queue", 1, 1 << 16, "requests queued per channel"),
    lim("dram.t_rcd", 0, CYCLES, LATENCY),
    lim("dram.t_rp", 0, CYCLES, LATENCY),
    lim("dram.t_ras", 0, CYCLES, LATENCY),
    lim("dram.t_cl", 0, CYCLES, LATENCY),
    lim("dram.t_wl", 0, CYCLES, LATENCY),
    lim("dram.t_ccd", 0, CYCLES, LATENCY),
    lim("dram.t_rrd", 0, CYCLES, LATENCY),
    lim("dram.ctrl_latency", 0, CYCLES, LATENCY),
    lim(
        "dram.interleave_bytes",
        32,
        1 << 20,
        "bytes per channel interleave",
    ),
    lim(
        "sim.max_cycles",
        1,
        1 << 48,
        "base-clock ticks before a launch is stopped",
    ),
    lim(
        "sim.max_warp_instructions",
        1,
        1 << 56,
        "warp instructions before a launch is stopped",
    ),
    lim(
        "sim.interval_cycles",
        0,
        1 << 48,
        "base-clock ticks per counter interval",
    ),
];

/// Checks every integer key of `cfg` against [`KEY_LIMITS`]; the error names the key, the
/// value and the range.
pub fn check(cfg: &GpuConfig) -> Result<(), SimError> {
    let value = toml::Value::try_from(cfg)
        .map_err(|e| SimError::Config(format!("configuration not serialisable: {e}")))?;
    for l in KEY_LIMITS {
        let Some(v) = lookup(&value, l.key).and_then(toml::Value::as_integer) else {
            continue; // a key this configuration does not have (checked by the tests)
        };
        if v < 0 || (v as u64) < l.min || (v as u64) > l.max {
            return Err(SimError::Config(format!(
                "`{}` = {v} is out of its range {}..={} ({})",
                l.key, l.min, l.max, l.why
            )));
        }
    }
    Ok(())
}

fn lookup<'a>(root: &'a toml::Value, key: &str) -> Option<&'a toml::Value> {
    key.split('.').try_fold(root, |v, part| v.get(part))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::PRESETS;

    /// Every integer key of every preset, as a dotted path.
    fn integer_keys(v: &toml::Value, prefix: &str, out: &mut Vec<String>) {
        match v {
            toml::Value::Table(t) => {
                for (k, v) in t {
                    let key = if prefix.is_empty() {
                        k.clone()
                    } else {
                        format!("{prefix}.{k}")
                    };
                    integer_keys(v, &key, out);
                }
            }
            toml::Value::Integer(_) => out.push(prefix.to_string()),
            _ => {}
        }
    }

    #[test]
    fn every_integer_key_of_every_preset_has_a_stated_range() {
        for (name, _) in PRESETS {
            let cfg = GpuConfig::preset(name, &[]).unwrap();
            let mut keys = vec![];
            integer_keys(&toml::Value::try_from(&cfg).unwrap(), "", &mut keys);
            for k in keys {
                assert!(
                    KEY_LIMITS.iter().any(|l| l.key == k),
                    "preset {name}: integer key `{k}` has no row in KEY_LIMITS"
                );
            }
        }
        for l in KEY_LIMITS {
            assert!(l.min <= l.max, "{}", l.key);
        }
    }

    #[test]
    fn a_value_past_its_range_is_an_error_naming_the_key_and_the_range() {
        let e = GpuConfig::preset("gtx480", &["l1.mshr_merge=65536".into()])
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("`l1.mshr_merge` = 65536") && e.contains("1..=1024"),
            "{e}"
        );
        let e = GpuConfig::preset("gtx480", &["pipeline.div_latency=4000000000".into()])
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("pipeline.div_latency"), "{e}");
        assert!(GpuConfig::preset("gtx480", &["icnt.queue=65536".into()]).is_ok());
    }
}
