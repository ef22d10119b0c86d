//! Cycle-level timing model: the CTA dispatcher and the GPU cycle loop over the SMs and the
//! memory hierarchy.

pub mod decode;
pub mod scheduler;
pub mod sm;

use crate::config::GpuConfig;
use crate::error::{FaultKind, GuestFault, SimError};
use crate::exec::GlobalMemory;
use crate::memory::MemoryHierarchy;
use sm::{CtaFootprint, KernelCtx, Sm};

/// Progress callback: called every `PROGRESS_INTERVAL` cycles with the cycle count and
/// the number of CTAs completed so far.
pub type Progress<'a> = &'a mut dyn FnMut(u64, u64);
pub const PROGRESS_INTERVAL: u64 = 1 << 16;

/// Run one kernel launch to completion on the timing model, starting at GPU cycle `start`
/// (the clock runs on across launches: the memory hierarchy and the pipelines hold absolute
/// times). Returns the cycle at which the launch finished; the per-SM statistics stay in
/// `sms` for the caller to collect.
pub fn run_kernel(
    k: &KernelCtx,
    sms: &mut [Sm],
    mem: &mut MemoryHierarchy,
    global: &mut GlobalMemory,
    start: u64,
    mut progress: Option<Progress>,
) -> Result<u64, SimError> {
    let cfg: &GpuConfig = k.cfg;
    let footprint = CtaFootprint::of(cfg, k.kernel, k.launch);
    let total_ctas = k.launch.grid.count();
    let num_sms = sms.len() as u32;
    for sm in sms.iter_mut() {
        sm.begin_kernel(k);
    }
    let mut next_cta: u64 = 0;
    let mut dispatch_rr = 0usize;
    let mut now: u64 = start;
    loop {
        // Dispatcher: at most one CTA per SM per cycle, SMs visited round robin.
        if next_cta < total_ctas {
            for i in 0..sms.len() {
                if next_cta >= total_ctas {
                    break;
                }
                let s = (dispatch_rr + i) % sms.len();
                if sms[s].can_accept(&footprint, cfg) {
                    sms[s].launch_cta(k, next_cta as u32, footprint);
                    next_cta += 1;
                    dispatch_rr = (s + 1) % sms.len();
                }
            }
        }
        // The memory hierarchy advances first, so that completions due at `now` are seen by
        // the SMs this cycle (its calling convention).
        mem.cycle(now);
        let mut all_idle = true;
        for sm in sms.iter_mut() {
            sm.cycle(now, k, global, mem, num_sms)
                .map_err(SimError::Fault)?;
            all_idle &= sm.is_idle();
        }
        now += 1;
        if all_idle && next_cta >= total_ctas && !mem.busy() {
            break;
        }
        if now - start >= cfg.sim.max_cycles {
            if std::env::var_os("WARPFORGE_DEBUG").is_some() {
                for sm in sms.iter() {
                    for l in sm.describe_stuck().iter().take(8) {
                        eprintln!("{l}");
                    }
                }
                eprintln!("memory busy: {}", mem.busy());
            }
            return Err(GuestFault {
                kind: FaultKind::Watchdog,
                kernel: k.kernel.name.clone(),
                file: k.module.file.clone(),
                pc: 0,
                line: k.kernel.loc.line,
                warp: 0,
                cta: [0; 3],
                thread: [0; 3],
                detail: format!(
                    "the launch ran past sim.max_cycles = {} cycles ({} of {} blocks dispatched); \
                     raise it with --set sim.max_cycles=N if the kernel is merely long",
                    cfg.sim.max_cycles, next_cta, total_ctas
                ),
            }
            .into());
        }
        if (now - start).is_multiple_of(PROGRESS_INTERVAL) {
            if let Some(p) = progress.as_mut() {
                p(now - start, next_cta);
            }
        }
    }
    Ok(now)
}
