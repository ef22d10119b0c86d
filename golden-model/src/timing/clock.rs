//! Clock domains: one per SM, plus the interconnect, the L2 and DRAM, all stepped against one
//! global time base.
//!
//! # The time base
//! The simulation advances in *ticks* of a base clock whose frequency is the fastest of the
//! core (and per-SM) clocks, `clocks.icnt_mhz` and `clocks.l2_mhz` ([`Clocks::base_khz`]).
//! DRAM is excluded: it may run faster than the base and ticks several times per base tick,
//! exactly as it always has. Every figure the model reports in "cycles" (`KernelStats::cycles`,
//! `sim.max_cycles`, `sim.interval_cycles`, memory latencies in `MemStats`) counts base ticks;
//! `time_ns` converts them. At both presets every clock but DRAM runs at the core clock, so a
//! base tick is a core cycle, as before clock domains existed.
//!
//! Why a base clock at the fastest frequency rather than a picosecond time line: every
//! domain then ticks at most once per base tick, so the GPU loop stays one loop over ticks,
//! the memory hierarchy keeps its single integer time axis, and a domain at the base
//! frequency costs one add and one compare per tick. At equal frequencies (the presets) the
//! stepping degenerates exactly to the old single-clock loop.
//!
//! # Stepping
//! A domain at `f` kHz ticks at base tick `t` when its phase accumulator, which gains `f`
//! per base tick, reaches the base frequency `F` (then `F` is subtracted). From phase 0 this
//! is the fractional scheme DRAM uses, `ticks(t) = floor(t * f / F)`, but the accumulator
//! form lets an SM change frequency at any tick ([`Clocks::set_sm_khz`]) without a jump: the
//! phase carries over. Fixed domains (icnt, L2, DRAM) use the closed form.
//!
//! # What runs in which domain
//! - SM `i`: its whole pipeline (fetch, schedulers, functional units, scoreboard, LSU
//!   occupancy) runs on the SM's own cycle counter; its L1 hit latency is converted to base
//!   ticks at the SM's current frequency. The CTA dispatcher offers a CTA to an SM only on
//!   the SM's own edges.
//! - Interconnect: latency and port serialisation (`icnt.latency`, `icnt.bytes_per_cycle`)
//!   are icnt cycles, converted to base ticks (rounded up).
//! - L2: a bank serves at most one request per L2 cycle (it acts only on L2 edges); its
//!   pipeline latency (`l2.hit_latency`) and the memory controller's return latency
//!   (`dram.ctrl_latency`) are L2 cycles, converted to base ticks (rounded up).
//! - DRAM: `clocks.dram_mhz`, `D(t) = floor(t * dram_khz / base_khz)` (see `memory`).

use crate::config::GpuConfig;

/// A frequency in kHz from MHz (the config's unit), as the DRAM scheme always did.
pub fn khz(mhz: f64) -> u64 {
    ((mhz * 1000.0).round() as u64).max(1)
}

/// Lowest and highest frequency a clock may be given, kHz (1 MHz .. 100 GHz): the bounds
/// keep every `ticks * kHz` product of a realistic run inside `u64` and catch unit slips
/// (a frequency given in Hz or GHz).
pub const MIN_KHZ: u64 = 1_000;
pub const MAX_KHZ: u64 = 100_000_000;

/// One clock domain stepped against the base clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClockDomain {
    /// Frequency, kHz (at most the base frequency).
    pub khz: u64,
    /// Phase accumulator, in `[0, base_khz)`.
    phase: u64,
    /// Ticks of this domain so far (its own cycle counter).
    pub cycles: u64,
}

impl ClockDomain {
    pub fn new(khz: u64) -> ClockDomain {
        ClockDomain {
            khz,
            phase: 0,
            cycles: 0,
        }
    }

    /// Advance one base tick; true if this domain ticks in it (then `cycles` has grown by one).
    #[inline(always)]
    pub fn step(&mut self, base_khz: u64) -> bool {
        self.phase += self.khz;
        if self.phase >= base_khz {
            self.phase -= base_khz;
            self.cycles += 1;
            true
        } else {
            false
        }
    }
}

/// `cycles` of a domain at `khz` in base ticks (rounded up): how latencies configured in a
/// domain's own cycles become base ticks. Identity when the domain runs at the base clock.
#[inline]
pub fn to_base_ticks(cycles: u64, khz: u64, base_khz: u64) -> u64 {
    if khz == base_khz {
        cycles
    } else {
        ((cycles as u128 * base_khz as u128).div_ceil(khz as u128)) as u64
    }
}

/// Whether a fixed domain at `khz` has an edge at base tick `t` (closed form of the
/// accumulator from phase 0: `floor(t f / F) > floor((t-1) f / F)`).
#[inline]
pub fn edge_at(t: u64, khz: u64, base_khz: u64) -> bool {
    if khz >= base_khz || t == 0 {
        return true;
    }
    let d = |x: u64| (x as u128 * khz as u128 / base_khz as u128) as u64;
    d(t) > d(t - 1)
}

/// Every clock domain of the GPU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Clocks {
    /// Frequency of the time base, kHz: the fastest of the SM, icnt and L2 clocks.
    pub base_khz: u64,
    pub sms: Vec<ClockDomain>,
    pub icnt_khz: u64,
    pub l2_khz: u64,
    pub dram_khz: u64,
    /// An SM frequency changed since the memory hierarchy last read them.
    pub(crate) changed: bool,
}

impl Clocks {
    /// The domains of a configuration (which `GpuConfig::validate` has checked).
    pub fn new(cfg: &GpuConfig) -> Clocks {
        let c = &cfg.clocks;
        let sms: Vec<ClockDomain> = (0..cfg.sm.count as usize)
            .map(|i| ClockDomain::new(khz(c.sm_mhz.get(i).copied().unwrap_or(c.core_mhz))))
            .collect();
        let icnt_khz = khz(c.icnt_mhz);
        let l2_khz = khz(c.l2_mhz);
        let base_khz = sms
            .iter()
            .map(|d| d.khz)
            .chain([khz(c.core_mhz), icnt_khz, l2_khz])
            .max()
            .expect("at least the core clock");
        Clocks {
            base_khz,
            sms,
            icnt_khz,
            l2_khz,
            dram_khz: khz(c.dram_mhz),
            changed: false,
        }
    }

    /// Change SM `sm`'s frequency from the next base tick on (mid-kernel too: a DVFS
    /// controller calls this at interval boundaries). The SM keeps its phase, so no tick is
    /// lost or doubled. The frequency must lie between 1 MHz and the base frequency (the time
    /// base cannot change during a run: raise `clocks.core_mhz` or give `clocks.sm_mhz` to
    /// allow a faster SM).
    pub fn set_sm_khz(&mut self, sm: usize, khz: u64) -> Result<(), String> {
        if sm >= self.sms.len() {
            return Err(format!(
                "SM {sm} does not exist (the GPU has {} SMs)",
                self.sms.len()
            ));
        }
        if !(MIN_KHZ..=self.base_khz).contains(&khz) {
            return Err(format!(
                "SM {sm}: frequency {} MHz is outside 1 MHz ..= {} MHz (the time base, the \
                 fastest configured SM, icnt or L2 clock)",
                khz as f64 / 1000.0,
                self.base_khz as f64 / 1000.0
            ));
        }
        if self.sms[sm].khz != khz {
            self.sms[sm].khz = khz;
            self.changed = true;
        }
        Ok(())
    }

    /// Whether every SM runs at the base frequency (each ticks every base tick).
    pub fn all_sms_at_base(&self) -> bool {
        self.sms.iter().all(|d| d.khz == self.base_khz)
    }

    /// Nanoseconds of `ticks` base ticks.
    pub fn ticks_to_ns(&self, ticks: u64) -> f64 {
        ticks as f64 * 1e6 / self.base_khz as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accumulator_matches_the_closed_form_and_degenerates_at_equal_frequency() {
        for (f, base) in [(700_000, 700_000), (350_000, 700_000), (924_000, 1_000_000)] {
            let mut d = ClockDomain::new(f);
            for t in 1..5000u64 {
                let ticked = d.step(base);
                assert_eq!(ticked, edge_at(t, f, base), "f {f} t {t}");
                assert_eq!(d.cycles, (t as u128 * f as u128 / base as u128) as u64);
                if f == base {
                    assert!(ticked);
                }
            }
        }
    }

    #[test]
    fn frequency_change_keeps_the_phase() {
        let mut d = ClockDomain::new(500);
        let base = 1000;
        for _ in 0..10 {
            d.step(base);
        }
        assert_eq!(d.cycles, 5);
        d.khz = 1000;
        for _ in 0..10 {
            assert!(d.step(base));
        }
        assert_eq!(d.cycles, 15);
    }

    #[test]
    fn conversions() {
        assert_eq!(to_base_ticks(20, 700, 700), 20);
        assert_eq!(to_base_ticks(20, 350, 700), 40);
        assert_eq!(to_base_ticks(3, 600, 700), 4); // 3.5 rounded up
    }
}
