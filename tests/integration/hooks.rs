//! The hook points (`warpforge_model::hooks`): a counting unit attached to every hook runs
//! real workloads, and what each hook saw is checked against the statistics and counters the
//! model keeps independently of the hooks (per SM cycles, warp instructions, divergent
//! branches, register-file bank counters, L1/L2 miss and writeback counts, blocks launched,
//! interval boundaries). Attaching it changes no simulated figure.

use std::collections::BTreeMap;

use warpforge_model::config::GpuConfig;
use warpforge_model::counters::Counters;
use warpforge_model::gpu::{Gpu, Mode};
use warpforge_model::hooks::{
    BranchEvent, CacheEvict, CacheFill, CacheId, CacheMiss, CtaDispatch, EvictCause, GpuHooks,
    IssueEvent, MissKind, RfAccess,
};
use warpforge_model::stats::KernelStats;
use warpforge_model::timing::clock::Clocks;
use warpforge_workloads::Size;

/// What one cache's hooks saw.
#[derive(Debug, Default, Clone)]
struct CacheSeen {
    misses: BTreeMap<&'static str, u64>,
    fills: u64,
    fills_allocating: u64,
    replaced: u64,
    /// Replaced lines with dirty sectors (each an L2 writeback).
    replaced_dirty: u64,
    invalidated: u64,
    /// Largest set and way named.
    max_set: u32,
    max_way: u32,
}

/// Register-file accesses of one bank, and its busy cycles rebuilt from the accesses'
/// cycles as `timing::rf` books them.
#[derive(Debug, Default, Clone, Copy)]
struct BankSeen {
    reads: u64,
    writes: u64,
    busy: u64,
    busy_until: u64,
}

/// A unit that counts everything every hook reports.
#[derive(Debug, Default)]
struct Counting {
    /// Per SM: cycle-start calls, and whether each SM's cycles came one after the other.
    cycle_starts: Vec<u64>,
    last_cycle: Vec<Option<u64>>,
    cycles_in_order: bool,
    /// Base ticks of the interval calls, and a counter read there.
    intervals: Vec<u64>,
    interval_reads_ok: bool,
    /// (SM, block) of every dispatch, and the warps they brought.
    ctas: Vec<(u32, u32)>,
    cta_warps: u64,
    /// Per SM.
    issues: Vec<u64>,
    threads: u64,
    branches: u64,
    divergent: Vec<u64>,
    branch_events_consistent: bool,
    /// Per SM, per bank.
    rf: Vec<Vec<BankSeen>>,
    l1: Vec<CacheSeen>,
    l2: Vec<CacheSeen>,
    /// Per SM, L1 misses.
    l1_misses_per_sm: Vec<u64>,
}

impl Counting {
    fn new(sms: usize, banks: usize, l2_banks: usize) -> Counting {
        Counting {
            cycle_starts: vec![0; sms],
            last_cycle: vec![None; sms],
            cycles_in_order: true,
            interval_reads_ok: true,
            issues: vec![0; sms],
            divergent: vec![0; sms],
            branch_events_consistent: true,
            rf: vec![vec![BankSeen::default(); banks]; sms],
            l1: vec![CacheSeen::default(); sms],
            l2: vec![CacheSeen::default(); l2_banks],
            l1_misses_per_sm: vec![0; sms],
            ..Default::default()
        }
    }

    fn cache(&mut self, c: CacheId) -> &mut CacheSeen {
        match c {
            CacheId::L1 { sm } => &mut self.l1[sm as usize],
            CacheId::L2 { bank } => &mut self.l2[bank as usize],
        }
    }
}

fn total(caches: &[CacheSeen], f: impl Fn(&CacheSeen) -> u64) -> u64 {
    caches.iter().map(f).sum()
}

fn misses(caches: &[CacheSeen], kind: &str) -> u64 {
    total(caches, |c| c.misses.get(kind).copied().unwrap_or(0))
}

impl GpuHooks for Counting {
    fn on_cycle_start(&mut self, sm: usize, cycle: u64, _now: u64) {
        self.cycle_starts[sm] += 1;
        if let Some(last) = self.last_cycle[sm] {
            self.cycles_in_order &= cycle == last + 1;
        }
        self.last_cycle[sm] = Some(cycle);
    }

    fn on_interval(&mut self, now: u64, counters: &Counters, _clocks: &mut Clocks) {
        self.intervals.push(now);
        self.interval_reads_ok &= counters.get("sm0.warp_instructions").is_some();
    }

    fn on_cta_dispatch(&mut self, ev: &CtaDispatch) {
        self.ctas.push((ev.sm, ev.cta));
        self.cta_warps += ev.warps as u64;
    }

    fn on_issue(&mut self, ev: &IssueEvent) {
        self.issues[ev.sm as usize] += 1;
        self.threads += ev.active.count_ones() as u64;
    }

    fn on_branch(&mut self, ev: &BranchEvent) {
        self.branches += 1;
        self.branch_events_consistent &= ev.taken & !ev.active == 0 && ev.active != 0;
        if ev.divergent() {
            self.divergent[ev.sm as usize] += 1;
        }
    }

    fn on_rf_access(&mut self, ev: &RfAccess) {
        let b = &mut self.rf[ev.sm as usize][ev.bank as usize];
        if ev.write {
            b.writes += 1;
        } else {
            b.reads += 1;
        }
        let end = ev.cycle + 1;
        if end > b.busy_until {
            b.busy += end - ev.cycle.max(b.busy_until);
            b.busy_until = end;
        }
    }

    fn on_cache_miss(&mut self, ev: &CacheMiss) {
        if let CacheId::L1 { sm } = ev.cache {
            self.l1_misses_per_sm[sm as usize] += 1;
        }
        let kind = match ev.kind {
            MissKind::NewMshr => "new",
            MissKind::Merged => "merged",
            MissKind::Bypass => "bypass",
            MissKind::WriteAllocate => "write_allocate",
        };
        let c = self.cache(ev.cache);
        *c.misses.entry(kind).or_default() += 1;
        c.max_set = c.max_set.max(ev.set);
    }

    fn on_cache_fill(&mut self, ev: &CacheFill) {
        let c = self.cache(ev.cache);
        c.fills += 1;
        c.fills_allocating += ev.allocated as u64;
        c.max_set = c.max_set.max(ev.set);
        c.max_way = c.max_way.max(ev.way);
    }

    fn on_cache_evict(&mut self, ev: &CacheEvict) {
        let c = self.cache(ev.cache);
        match ev.cause {
            EvictCause::Replaced => {
                c.replaced += 1;
                c.replaced_dirty += (ev.dirty != 0) as u64;
            }
            EvictCause::Invalidated => c.invalidated += 1,
        }
        c.max_set = c.max_set.max(ev.set);
        c.max_way = c.max_way.max(ev.way);
    }
}

fn cfg(sets: &[&str]) -> GpuConfig {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    GpuConfig::preset("gtx480", &sets).unwrap()
}

/// Run `name` with a counting unit attached; also without, to check that attaching it
/// changed nothing.
fn run(name: &str, size: Size, c: &GpuConfig) -> Gpu<Counting> {
    let w = warpforge_workloads::by_name(name).unwrap();
    let counting = Counting::new(
        c.sm.count as usize,
        c.sm.rf_banks as usize,
        c.l2.banks as usize,
    );
    let mut gpu = Gpu::with_hooks(c.clone(), Mode::Timing, counting);
    let v = w.run(&mut gpu, size, 7).unwrap();
    assert!(v.passed, "{name}: {}", v.detail);
    let mut plain = Gpu::new(c.clone(), Mode::Timing);
    w.run(&mut plain, size, 7).unwrap();
    let figures = |g: &[KernelStats]| -> Vec<KernelStats> {
        g.iter()
            .map(|l| KernelStats {
                wall_seconds: 0.0,
                ..l.clone()
            })
            .collect()
    };
    assert_eq!(
        figures(&gpu.launches),
        figures(&plain.launches),
        "{name}: hooks changed the simulation"
    );
    gpu
}

fn sum(g: &Gpu<Counting>, f: impl Fn(&KernelStats) -> u64) -> u64 {
    g.launches.iter().map(f).sum()
}

fn counter(g: &Gpu<Counting>, name: &str) -> u64 {
    g.launches
        .iter()
        .map(|l| l.counters.get(name).unwrap_or_else(|| panic!("no {name}")))
        .sum()
}

/// Cycle start, issue, branch and register-file hooks against the SMs' own figures.
fn check_sm_hooks(g: &Gpu<Counting>, check_busy: bool) {
    let h = g.hooks();
    let sms = g.config().sm.count as usize;
    assert!(h.cycles_in_order, "an SM's cycles were skipped or repeated");
    for i in 0..sms {
        let cycles = sum(g, |l| l.per_sm[i].cycles);
        assert_eq!(h.cycle_starts[i], cycles, "cycle starts of SM {i}");
        assert_eq!(
            h.issues[i],
            sum(g, |l| l.per_sm[i].warp_instructions),
            "issues of SM {i}"
        );
        assert_eq!(
            h.divergent[i],
            sum(g, |l| l.per_sm[i].divergent_branches),
            "divergent branches of SM {i}"
        );
        for (b, seen) in h.rf[i].iter().enumerate() {
            let n = |what: &str| counter(g, &format!("sm{i}.rf.bank{b}.{what}"));
            assert_eq!(seen.reads, n("reads"), "reads of SM {i} bank {b}");
            assert_eq!(seen.writes, n("writes"), "writes of SM {i} bank {b}");
            if check_busy {
                assert_eq!(
                    cycles - seen.busy,
                    n("idle_cycles"),
                    "idle cycles of SM {i} bank {b}"
                );
            }
        }
        assert_eq!(
            h.l1_misses_per_sm[i],
            counter(g, &format!("sm{i}.l1.load_accesses"))
                - counter(g, &format!("sm{i}.l1.load_hits")),
            "L1 misses of SM {i}"
        );
    }
    assert_eq!(h.threads, sum(g, |l| l.thread_instructions));
    assert!(h.branch_events_consistent);
    // Every block once per launch, each where the dispatcher put it.
    let blocks: u64 = g
        .launches
        .iter()
        .map(|l| l.grid.iter().map(|&x| x as u64).product::<u64>())
        .sum();
    assert_eq!(h.ctas.len() as u64, blocks);
    assert!(h.ctas.iter().all(|&(sm, _)| (sm as usize) < sms));
}

/// Miss, fill and eviction hooks against the memory statistics and the caches' geometry.
fn check_cache_hooks(g: &Gpu<Counting>) {
    let h = g.hooks();
    let c = g.config();
    let d = |f: fn(&warpforge_model::memory::MemStats) -> u64| sum(g, |l| f(&l.memory_detail));
    // L1: every load miss, the merged ones among them; a fill per miss that took an MSHR.
    let l1_misses = total(&h.l1, |c| c.misses.values().sum());
    assert_eq!(l1_misses, d(|m| m.l1_load_misses));
    assert_eq!(misses(&h.l1, "merged"), d(|m| m.l1_mshr_merges));
    assert_eq!(total(&h.l1, |c| c.fills), misses(&h.l1, "new"));
    assert!(total(&h.l1, |c| c.replaced) <= total(&h.l1, |c| c.fills_allocating));
    // Every L1 store hit evicts its line (global stores write-evict; a local store hit would
    // update the line instead, and none of these workloads has local memory).
    assert_eq!(total(&h.l1, |c| c.invalidated), d(|m| m.l1_store_hits));
    // A line leaves only after it came: what is still valid fits in the cache.
    let l1_sets = c.l1.size_bytes / (c.l1.assoc * c.l1.line_bytes);
    for l1 in &h.l1 {
        let resident = l1.fills_allocating - l1.replaced - l1.invalidated;
        assert!(resident <= (l1_sets * c.l1.assoc) as u64);
        assert!(l1.max_set < l1_sets && l1.max_way < c.l1.assoc);
    }
    // L2: loads' misses (new or merged) and stores' allocations; a fill per allocation;
    // a dirty victim per writeback.
    let l2_misses = total(&h.l2, |c| c.misses.values().sum());
    assert_eq!(l2_misses, d(|m| m.l2_misses));
    assert_eq!(misses(&h.l2, "merged"), d(|m| m.l2_mshr_merges));
    assert_eq!(misses(&h.l2, "bypass"), 0);
    assert_eq!(
        total(&h.l2, |c| c.fills),
        misses(&h.l2, "new") + misses(&h.l2, "write_allocate")
    );
    assert_eq!(total(&h.l2, |c| c.replaced_dirty), d(|m| m.l2_writebacks));
    assert_eq!(total(&h.l2, |c| c.invalidated), 0);
    let l2_sets = c.l2.size_bytes / c.l2.banks / (c.l2.assoc * c.l2.line_bytes);
    for l2 in &h.l2 {
        assert!(l2.fills_allocating - l2.replaced <= (l2_sets * c.l2.assoc) as u64);
        assert!(l2.max_set < l2_sets && l2.max_way < c.l2.assoc);
    }
}

#[test]
fn every_hook_agrees_with_the_model_on_a_divergent_workload() {
    let g = run("bfs", Size::Tiny, &cfg(&[]));
    check_sm_hooks(&g, true);
    check_cache_hooks(&g);
    let h = g.hooks();
    assert!(h.divergent.iter().sum::<u64>() > 0, "bfs diverges");
    assert!(h.branches > h.divergent.iter().sum::<u64>());
    assert!(misses(&h.l1, "new") > 0 && misses(&h.l2, "new") > 0);
    assert!(
        total(&h.l1, |c| c.invalidated) > 0,
        "bfs stores to lines it read"
    );
    assert!(
        h.intervals.is_empty(),
        "no interval without sim.interval_cycles"
    );
}

#[test]
fn vecadd_never_diverges_and_streams_through_the_caches() {
    // Small enough L1 and L2 that lines are replaced, and L2 writes back dirty ones.
    let c = cfg(&["l2.size_bytes=49152"]);
    let g = run("vecadd", Size::Small, &c);
    check_sm_hooks(&g, true);
    check_cache_hooks(&g);
    let h = g.hooks();
    assert_eq!(h.divergent.iter().sum::<u64>(), 0);
    assert!(total(&h.l2, |c| c.replaced) > 0, "{:?}", h.l2[0]);
    assert!(total(&h.l2, |c| c.replaced_dirty) > 0);
    assert!(misses(&h.l2, "write_allocate") > 0);
}

#[test]
fn register_file_hooks_follow_bank_conflicts() {
    // With conflicts, a bank's serialised reads are reported at the cycles they occupy it.
    let g = run(
        "sgemm",
        Size::Tiny,
        &cfg(&["sm.rf_bank_conflicts=true", "sm.rf_banks=2"]),
    );
    check_sm_hooks(&g, false);
    let reads: u64 = g.hooks().rf.iter().flatten().map(|b| b.reads).sum();
    assert!(reads > 0);
    assert!(counter(&g, "sm0.rf.conflict_cycles") > 0);
}

#[test]
fn cycle_start_reaches_every_sm_at_its_own_clock_and_intervals_come_on_time() {
    // SM 0 at half the clock: every SM still gets one call per cycle of its own clock, the
    // idle ones too, through the loop that steps clock domains.
    let c = cfg(&["clocks.sm_mhz=[350.0, 700.0]", "sim.interval_cycles=500"]);
    let g = run("mandelbrot", Size::Tiny, &c);
    check_sm_hooks(&g, true);
    let h = g.hooks();
    let ticks = sum(&g, |l| l.cycles);
    assert!(h.cycle_starts[0].abs_diff(ticks / 2) <= g.launches.len() as u64);
    assert_eq!(h.cycle_starts[1], ticks);
    // One call per boundary strictly inside each launch (time runs on across launches).
    let mut want = Vec::new();
    let mut start = 0;
    for l in &g.launches {
        want.extend(
            (1..)
                .map(|k| start + k * 500)
                .take_while(|&t| t < start + l.cycles),
        );
        start += l.cycles;
    }
    assert_eq!(h.intervals, want);
    assert!(h.interval_reads_ok);
}

/// A DVFS-like unit on the static interval hook: it halves every SM's clock at the first
/// boundary, and the SMs then count half a cycle per tick.
#[derive(Default)]
struct Slowdown {
    at: Option<u64>,
    starts_after: u64,
}

impl GpuHooks for Slowdown {
    fn on_interval(&mut self, now: u64, _counters: &Counters, clocks: &mut Clocks) {
        if self.at.is_none() {
            self.at = Some(now);
            for sm in 0..clocks.sms.len() {
                clocks.set_sm_khz(sm, 350_000).unwrap();
            }
        }
    }
    fn on_cycle_start(&mut self, sm: usize, _cycle: u64, _now: u64) {
        if sm == 0 && self.at.is_some() {
            self.starts_after += 1;
        }
    }
}

#[test]
fn an_interval_hook_changes_sm_clocks_and_several_units_attach_together() {
    let c = cfg(&["sim.interval_cycles=1000"]);
    let w = warpforge_workloads::by_name("mandelbrot").unwrap();
    let counting = Counting::new(15, c.sm.rf_banks as usize, c.l2.banks as usize);
    let mut gpu = Gpu::with_hooks(c, Mode::Timing, (Slowdown::default(), counting));
    assert!(w.run(&mut gpu, Size::Tiny, 7).unwrap().passed);
    let (slow, counting) = gpu.hooks();
    assert_eq!(gpu.launches.len(), 1);
    let l = &gpu.launches[0];
    assert_eq!(slow.at, Some(1000));
    // 1000 cycles at the base clock, then one every other tick
    assert_eq!(slow.starts_after, l.per_sm[0].cycles - 1000);
    assert!(slow.starts_after.abs_diff((l.cycles - 1000) / 2) <= 1);
    assert_eq!(counting.intervals[0], 1000);
    assert_eq!(counting.cycle_starts[0], l.per_sm[0].cycles);
}
