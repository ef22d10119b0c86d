//! Cycle-level timing model: the CTA dispatcher and the GPU cycle loop over the SMs and the
//! memory hierarchy.

pub mod branch_taint;
pub mod clock;
pub mod decode;
pub mod reconv;
pub mod rf;
pub mod scheduler;
pub mod sm;

use crate::config::GpuConfig;
use crate::counters::Counters;
use crate::error::{FaultKind, GuestFault, SimError};
use crate::exec::GlobalMemory;
use crate::hooks::{CtaDispatch, GpuHooks};
use crate::memory::MemoryHierarchy;
use clock::Clocks;
use sm::{CtaFootprint, KernelCtx, Sm};

/// Called at every interval boundary (`sim.interval_cycles`), right after the counters were
/// snapshotted, with the base tick, the counters (read them by name or id) and the clock
/// domains: a DVFS controller changes SM frequencies here (`Clocks::set_sm_khz`), effective
/// from the next tick. The boxed form of [`GpuHooks::on_interval`], for a closure given at
/// run time (`Gpu::set_interval_hook`); a unit with other hooks implements `GpuHooks`.
pub trait IntervalHook: Send {
    fn on_interval(&mut self, now: u64, counters: &Counters, clocks: &mut Clocks);
}

impl<F: FnMut(u64, &Counters, &mut Clocks) + Send> IntervalHook for F {
    fn on_interval(&mut self, now: u64, counters: &Counters, clocks: &mut Clocks) {
        self(now, counters, clocks)
    }
}

/// An optional boxed interval hook is a [`GpuHooks`] with only `on_interval`.
impl GpuHooks for Option<Box<dyn IntervalHook>> {
    #[inline]
    fn on_interval(&mut self, now: u64, counters: &Counters, clocks: &mut Clocks) {
        if let Some(h) = self {
            h.on_interval(now, counters, clocks);
        }
    }
}

/// The clock domains, the counters and the hooks a launch runs with.
pub struct TimingEnv<'a, H: GpuHooks> {
    pub clocks: &'a mut Clocks,
    pub counters: &'a mut Counters,
    pub hooks: &'a mut H,
}

/// Progress callback: called every `PROGRESS_INTERVAL` cycles with the cycle count and
/// the number of CTAs completed so far.
pub type Progress<'a> = &'a mut dyn FnMut(u64, u64);
pub const PROGRESS_INTERVAL: u64 = 1 << 16;

/// Run one kernel launch to completion on the timing model, starting at base tick `start`
/// (time runs on across launches: the memory hierarchy and the pipelines hold absolute
/// times). Returns the base tick at which the launch finished; the per-SM statistics stay in
/// `sms`, the counters' final values in `env.counters`, for the caller to collect.
///
/// Each base tick: every SM clock domain steps (the cycle-start hook of every SM with an
/// edge); the dispatcher offers CTAs to the SMs with an edge; the memory hierarchy advances;
/// every SM with an edge and work runs one of its cycles; at an interval boundary the
/// counters are snapshotted and the interval hook runs. At the presets every SM has an edge
/// every tick and its cycle counter equals the base tick, which is exactly the single-clock
/// loop this replaced.
pub fn run_kernel<H: GpuHooks>(
    k: &KernelCtx,
    sms: &mut [Sm],
    mem: &mut MemoryHierarchy,
    global: &mut GlobalMemory,
    env: TimingEnv<H>,
    start: u64,
    mut progress: Option<Progress>,
) -> Result<u64, SimError> {
    let TimingEnv {
        clocks,
        counters,
        hooks,
    } = env;
    let cfg: &GpuConfig = k.cfg;
    let footprint = CtaFootprint::of(cfg, k.kernel, k.launch);
    let total_ctas = k.launch.grid.count();
    let num_sms = sms.len() as u32;
    for sm in sms.iter_mut() {
        sm.begin_kernel(k);
    }
    counters.begin_launch(start, sms, mem, clocks);
    let interval = cfg.sim.interval_cycles;
    let mut next_boundary = if interval > 0 {
        start + interval
    } else {
        u64::MAX
    };
    // Per SM: has an edge in this tick (stepped only when some SM is off the base clock).
    let mut edge = vec![true; sms.len()];
    // While every SM runs at the base clock (the presets), the domains are not stepped per
    // tick: each ticks every tick, keeps its phase, and SM i's cycle at tick t is
    // `t - lag[i]`; `sync` writes the counters back before anyone reads them. This keeps the
    // loop at the presets what it was before clock domains.
    let mut uniform = clocks.all_sms_at_base();
    let mut lag: Vec<u64> = clocks
        .sms
        .iter()
        .map(|d| start.wrapping_sub(d.cycles))
        .collect();
    // ... and when moreover every SM's cycle is the base tick (lag 0: every SM has run at
    // the base clock since time 0), the loop passes `now` as is.
    let mut zero_lag = uniform && lag.iter().all(|&l| l == 0);
    let sync = |clocks: &mut Clocks, lag: &[u64], uniform: bool, now: u64| {
        if uniform {
            for (d, &l) in clocks.sms.iter_mut().zip(lag) {
                d.cycles = now.wrapping_sub(l);
            }
        }
    };
    let mut next_cta: u64 = 0;
    let mut dispatch_rr = 0usize;
    let mut now: u64 = start;
    loop {
        if !uniform {
            let base_khz = clocks.base_khz;
            for ((e, d), l) in edge
                .iter_mut()
                .zip(clocks.sms.iter_mut())
                .zip(lag.iter_mut())
            {
                *e = d.step(base_khz);
                // this tick's SM cycle (its counter before the step) is `now - lag`
                *l = now.wrapping_sub(d.cycles.wrapping_sub(*e as u64));
            }
        }
        // Every SM's cycle starts, idle or not (no work without a hook attached).
        for (s, (&e, &l)) in edge.iter().zip(&lag).enumerate() {
            if e {
                hooks.on_cycle_start(s, now.wrapping_sub(l), now);
            }
        }
        // Dispatcher: at most one CTA per SM per cycle of the SM, SMs visited round robin.
        if next_cta < total_ctas {
            let mut id = next_cta;
            next_cta += dispatch_round(sms.len(), &mut dispatch_rr, total_ctas - next_cta, |s| {
                if !edge[s] || !sms[s].can_accept(&footprint, cfg) {
                    return false;
                }
                let cycle = now.wrapping_sub(lag[s]);
                sms[s].launch_cta(k, id as u32, footprint, cycle);
                hooks.on_cta_dispatch(&CtaDispatch {
                    sm: s as u32,
                    cta: id as u32,
                    warps: footprint.warps,
                    cycle,
                    now,
                });
                id += 1;
                true
            });
        }
        // The memory hierarchy advances first, so that completions due at `now` are seen by
        // the SMs this cycle (its calling convention).
        mem.cycle_with(now, hooks);
        let mut all_idle = true;
        if zero_lag {
            for sm in sms.iter_mut() {
                // (an SM with nothing resident does nothing in a cycle: no call)
                if !sm.is_idle() {
                    sm.cycle(now, now, k, global, mem, num_sms, hooks)
                        .map_err(SimError::Fault)?;
                    all_idle &= sm.is_idle();
                }
            }
        } else {
            // (every `edge` is true while `uniform`)
            for ((sm, &l), &e) in sms.iter_mut().zip(&lag).zip(&edge) {
                if e && !sm.is_idle() {
                    sm.cycle(now.wrapping_sub(l), now, k, global, mem, num_sms, hooks)
                        .map_err(SimError::Fault)?;
                }
                all_idle &= sm.is_idle();
            }
        }
        now += 1;
        if all_idle && next_cta >= total_ctas && !mem.busy() {
            break;
        }
        if now == next_boundary {
            next_boundary += interval;
            sync(clocks, &lag, uniform, now);
            counters.snapshot(now, sms, mem, clocks);
            hooks.on_interval(now, counters, clocks);
            if clocks.changed {
                clocks.changed = false;
                for (i, d) in clocks.sms.iter().enumerate() {
                    mem.set_sm_clock(i, d.khz);
                }
                uniform = clocks.all_sms_at_base();
                for (l, d) in lag.iter_mut().zip(&clocks.sms) {
                    *l = now.wrapping_sub(d.cycles);
                }
                if uniform {
                    edge.iter_mut().for_each(|e| *e = true);
                }
                zero_lag = uniform && lag.iter().all(|&l| l == 0);
            }
        }
        if now - start >= cfg.sim.max_cycles {
            return Err(watchdog_fault(k, sms, next_cta, total_ctas).into());
        }
        if (now - start).is_multiple_of(PROGRESS_INTERVAL) {
            if let Some(p) = progress.as_mut() {
                p(now - start, next_cta);
            }
        }
    }
    sync(clocks, &lag, uniform, now);
    if interval > 0 && now > counters.last_boundary() {
        // the last, shorter interval: the deltas sum to the launch's totals
        counters.snapshot(now, sms, mem, clocks);
    } else {
        counters.sample(sms, mem, clocks);
    }
    Ok(now)
}

/// One cycle of the CTA dispatcher over `n` SMs: visits every SM once, round robin from
/// `*rr`, offering each at most one of the `pending` CTAs (`try_launch(sm)` places one if
/// the SM has room); `*rr` moves past the last SM that took one. Returns how many were
/// placed.
fn dispatch_round(
    n: usize,
    rr: &mut usize,
    pending: u64,
    mut try_launch: impl FnMut(usize) -> bool,
) -> u64 {
    let start = *rr;
    let mut placed = 0;
    for i in 0..n {
        if placed == pending {
            break;
        }
        // (start + i) modulo n, both below n: no division in the per-cycle loop.
        let s = if start + i >= n {
            start + i - n
        } else {
            start + i
        };
        if try_launch(s) {
            placed += 1;
            *rr = if s + 1 == n { 0 } else { s + 1 };
        }
    }
    placed
}

/// The fault reported when a launch outlives `sim.max_cycles`: it names the oldest warp still
/// running (where a kernel that never ends is spinning) and a few others.
fn watchdog_fault(k: &KernelCtx, sms: &[Sm], dispatched: u64, total_ctas: u64) -> GuestFault {
    let mut resident: Vec<_> = sms.iter().flat_map(|sm| sm.resident_warps()).collect();
    resident.sort_unstable();
    let line_of = |pc: u32| {
        k.kernel
            .insts
            .get(pc as usize)
            .map(|i| i.loc.line)
            .unwrap_or(0)
    };
    let examples: Vec<String> = resident
        .iter()
        .take(4)
        .map(|&(w, _, _, pc)| format!("warp {w} at pc {pc} (line {})", line_of(pc)))
        .collect();
    let (warp, cta, thread, pc) = resident.first().copied().unwrap_or((0, [0; 3], [0; 3], 0));
    GuestFault {
        kind: FaultKind::Watchdog,
        kernel: k.kernel.name.clone(),
        file: k.module.file.clone(),
        pc,
        line: line_of(pc),
        warp,
        cta,
        thread,
        detail: format!(
            "the launch ran past sim.max_cycles = {} cycles ({dispatched} of {total_ctas} blocks \
             dispatched; {} warp(s) still running: {}); raise it with --set sim.max_cycles=N if \
             the kernel is merely long",
            k.cfg.sim.max_cycles,
            resident.len(),
            examples.join(", ")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::dispatch_round;

    /// Every SM with room gets one CTA per cycle, in round-robin order from the pointer,
    /// and the pointer moves past the last SM served (a regression: the visit order used
    /// to follow the moving pointer, skipping SMs and serving one SM twice in a cycle).
    #[test]
    fn dispatcher_gives_each_sm_at_most_one_cta_per_cycle() {
        let mut rr = 0;
        let mut served = vec![];
        assert_eq!(
            dispatch_round(4, &mut rr, 10, |s| {
                served.push(s);
                true
            }),
            4
        );
        assert_eq!(served, [0, 1, 2, 3]);
        assert_eq!(rr, 0);

        // SM 1 full; two CTAs left: SMs 2 and 3 take them, starting after SM 1.
        let (mut rr, mut served) = (1, vec![]);
        assert_eq!(
            dispatch_round(4, &mut rr, 2, |s| {
                if s == 1 {
                    return false;
                }
                served.push(s);
                true
            }),
            2
        );
        assert_eq!(served, [2, 3]);
        assert_eq!(rr, 0);

        // Nobody has room: the pointer stays.
        let mut rr = 2;
        assert_eq!(dispatch_round(4, &mut rr, 5, |_| false), 0);
        assert_eq!(rr, 2);
    }
}
