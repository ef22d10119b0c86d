//! End-to-end tests of the memory hierarchy.

use super::*;
use crate::exec::WARP_SIZE;

fn cfg(overrides: &[&str]) -> GpuConfig {
    let ov: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    GpuConfig::preset("gtx480", &ov).unwrap()
}

fn acc(
    space: StateSpace,
    kind: MemKind,
    bytes: u32,
    mask: u32,
    f: impl Fn(usize) -> u64,
) -> MemAccess {
    let mut a = MemAccess {
        space,
        kind,
        bytes,
        mask,
        addrs: [0; WARP_SIZE],
    };
    for (l, x) in a.addrs.iter_mut().enumerate() {
        *x = f(l);
    }
    a
}

/// Fully coalesced 32 x 4 B global load of the line at `base`.
fn line_load(base: u64) -> MemAccess {
    acc(StateSpace::Global, MemKind::Load, 4, u32::MAX, |l| {
        base + 4 * l as u64
    })
}

/// One lane, 4 bytes.
fn one(kind: MemKind, space: StateSpace, addr: u64) -> MemAccess {
    acc(space, kind, 4, 1, |_| addr)
}

struct Sim {
    m: MemoryHierarchy,
    now: u64,
    /// (sm, token, completion cycle)
    done: Vec<(usize, u32, u64)>,
    nsm: usize,
}

impl Sim {
    fn new(c: &GpuConfig) -> Sim {
        Sim {
            m: MemoryHierarchy::new(c),
            now: 0,
            done: Vec::new(),
            nsm: c.sm.count as usize,
        }
    }
    fn step(&mut self) {
        self.now += 1;
        self.m.cycle(self.now);
        for sm in 0..self.nsm {
            while let Some(t) = self.m.pop_completed(sm) {
                self.done.push((sm, t, self.now));
            }
        }
    }
    fn issue(&mut self, sm: usize, token: u32, a: &MemAccess) -> Result<IssueInfo, MemStall> {
        self.m.issue(self.now, sm, token, a)
    }
    fn drain(&mut self) {
        let limit = self.now + 1_000_000;
        while self.m.busy() {
            self.step();
            assert!(self.now < limit, "memory never drained");
        }
    }
    fn finished(&self, sm: usize, token: u32) -> Option<u64> {
        self.done
            .iter()
            .find(|d| d.0 == sm && d.1 == token)
            .map(|d| d.2)
    }
    /// Issue at the current cycle, run to idle, return the latency.
    fn latency(&mut self, sm: usize, token: u32, a: &MemAccess) -> u64 {
        let t0 = self.now;
        self.issue(sm, token, a).expect("issue accepted");
        self.drain();
        self.finished(sm, token).expect("completed") - t0
    }
}

/// The documented cold-miss formula (module docs of `memory`).
fn cold_miss_expected(m: &MemoryHierarchy, c: &GpuConfig, t0: u64) -> u64 {
    let lat = c.icnt.latency as u64;
    let ser = |b: u32| b.div_ceil(c.icnt.bytes_per_cycle) as u64;
    let deliver = t0 + 1 + lat + ser(8);
    let r = deliver + c.l2.hit_latency as u64;
    let a = m.dram_cycles_at(r) + 1;
    let e = a
        + c.dram.t_rcd as u64
        + c.dram.t_cl as u64
        + c.l2.line_bytes.div_ceil(c.dram.bytes_per_cycle) as u64;
    let mut cc = r;
    while m.dram_cycles_at(cc) < e {
        cc += 1;
    }
    cc + c.dram.ctrl_latency as u64 + lat + ser(8 + c.l2.line_bytes) - t0
}

#[test]
fn cold_miss_then_l1_hit_then_l2_hit() {
    let c = cfg(&[]);
    let mut s = Sim::new(&c);
    for _ in 0..5 {
        s.step();
    }
    let t0 = s.now;
    let expected = cold_miss_expected(&s.m, &c, t0);
    let l = s.latency(0, 1, &line_load(0x10000));
    assert_eq!(l, expected);
    assert!(
        (250..=290).contains(&l),
        "gtx480 cold miss ~265 cycles, got {l}"
    );
    assert!(!s.m.busy());
    // Second load to the same line: L1 hit, exactly hit_latency.
    let info = s.m.issue(s.now, 0, 2, &line_load(0x10000)).unwrap();
    assert_eq!(
        info,
        IssueInfo {
            transactions: 1,
            l1_hits: 1,
            l1_passes: 1
        }
    );
    let t0 = s.now;
    s.drain();
    assert_eq!(s.finished(0, 2).unwrap() - t0, c.l1.hit_latency as u64);
    // Another SM: L1 miss, L2 hit.
    let l2 = s.latency(3, 3, &line_load(0x10000));
    assert_eq!(l2, 1 + 8 + 1 + 120 + 8 + 5);
    let st = s.m.stats();
    assert_eq!(
        (st.l1_load_accesses, st.l1_load_hits, st.l1_load_misses),
        (3, 1, 2)
    );
    assert_eq!((st.l2_accesses, st.l2_hits, st.l2_misses), (2, 1, 1));
    assert_eq!(
        (st.dram_reads, st.dram_read_bytes, st.dram_activates),
        (1, 128, 1)
    );
    assert_eq!(st.loads_completed, 3);
    assert_eq!(st.load_latency_sum, l + 20 + l2);
    assert_eq!((st.icnt_req_packets, st.icnt_req_bytes), (2, 16));
    assert_eq!((st.icnt_reply_packets, st.icnt_reply_bytes), (2, 2 * 136));
}

#[test]
fn row_hit_is_faster_than_row_miss() {
    let c = cfg(&[]);
    let mut s = Sim::new(&c);
    // A: channel 0, sub 0, DRAM bank 0, row 0 (chunk 0).
    let a = s.latency(0, 1, &line_load(0));
    // B: chunk 12 -> L2 bank 0 again, channel-local 512: same DRAM row (open).
    assert_eq!(
        (s.m.map.bank(12 * 256), s.m.map.dram_bank_row(12 * 256)),
        (0, (0, 0))
    );
    let b = s.latency(0, 2, &line_load(12 * 256));
    // C: channel-local page 16 -> DRAM bank 0, row 1 (conflict with the open row 0).
    let caddr = 6 * 256 * 8 * 16;
    assert_eq!(
        (s.m.map.bank(caddr), s.m.map.dram_bank_row(caddr)),
        (0, (0, 1))
    );
    let cl = s.latency(0, 3, &line_load(caddr));
    assert!(b < a && a < cl, "hit {b} closed {a} conflict {cl}");
    // Differences in DRAM clocks converted to core clocks (+-1 for phase).
    let to_core = |d: u32| d as f64 * c.clocks.core_mhz / c.clocks.dram_mhz;
    assert!(((a - b) as f64 - to_core(c.dram.t_rcd)).abs() <= 1.0);
    assert!(((cl - b) as f64 - to_core(c.dram.t_rp + c.dram.t_rcd)).abs() <= 1.0);
    let st = s.m.stats();
    assert_eq!(
        (st.dram_row_hits, st.dram_row_misses, st.dram_precharges),
        (1, 2, 1)
    );
    assert!((st.row_buffer_hit_rate() - 1.0 / 3.0).abs() < 1e-9);
}

#[test]
fn mshr_merge_and_full_stalls() {
    let c = cfg(&["l1.mshrs=2", "l1.mshr_merge=2"]);
    let mut s = Sim::new(&c);
    s.step();
    // Two lines miss: 2 MSHRs.
    let two = acc(StateSpace::Global, MemKind::Load, 4, 0b11, |l| {
        0x8000 + 4096 * l as u64
    });
    assert_eq!(
        s.issue(0, 1, &two).unwrap(),
        IssueInfo {
            transactions: 2,
            l1_hits: 0,
            l1_passes: 2
        }
    );
    // A third line: no MSHR.
    assert_eq!(
        s.issue(0, 2, &line_load(0x20000)),
        Err(MemStall::L1MshrFull)
    );
    // Merge into line 0x8000: allowed once (merge limit 2 counts the first request).
    assert!(s.issue(0, 3, &line_load(0x8000)).is_ok());
    assert_eq!(
        s.issue(0, 4, &line_load(0x8000)),
        Err(MemStall::L1MshrMergeFull)
    );
    // Other SMs are unaffected.
    assert!(s.issue(1, 5, &line_load(0x20000)).is_ok());
    s.drain();
    // The merged request completes with line 0x8000, no later than token 1 (two lines).
    assert!(s.finished(0, 3).unwrap() <= s.finished(0, 1).unwrap());
    let st = s.m.stats();
    assert_eq!(
        (
            st.stall_l1_mshr_full,
            st.stall_l1_merge_full,
            st.l1_mshr_merges
        ),
        (1, 1, 1)
    );
    // After the fill, a retry hits.
    assert_eq!(s.issue(0, 4, &line_load(0x8000)).unwrap().l1_hits, 1);
    assert_eq!(s.issue(0, 2, &line_load(0x20000)).unwrap().l1_hits, 0);
    s.drain();
    assert!(s.finished(0, 2).is_some() && s.finished(0, 4).is_some());
}

#[test]
fn injection_queue_full_stall_and_oversized_instruction() {
    let c = cfg(&["icnt.queue=4"]);
    let mut s = Sim::new(&c);
    s.step();
    let stride = |k: u64| {
        acc(StateSpace::Global, MemKind::Store, 4, u32::MAX, move |l| {
            k + 128 * l as u64
        })
    };
    // 32 packets into an empty 4-entry queue: accepted (no instruction can starve).
    assert_eq!(s.issue(0, 1, &stride(0)).unwrap().transactions, 32);
    assert_eq!(
        s.issue(0, 2, &one(MemKind::Store, StateSpace::Global, 0x9000)),
        Err(MemStall::MissQueueFull)
    );
    assert_eq!(s.m.stats().stall_miss_queue_full, 1);
    s.drain();
    assert!(s.finished(0, 1).is_some());
    // An instruction needing more MSHRs than the table has is accepted when it is empty.
    let c = cfg(&["l1.mshrs=4"]);
    let mut s = Sim::new(&c);
    s.step();
    let ld = acc(StateSpace::Global, MemKind::Load, 4, u32::MAX, |l| {
        0x40000 + 128 * l as u64
    });
    assert_eq!(s.issue(0, 7, &ld).unwrap().transactions, 32);
    s.drain();
    assert!(s.finished(0, 7).is_some());
    assert_eq!(s.m.stats().l2_misses, 32);
}

#[test]
fn stores_complete_at_l2_acceptance_and_global_store_evicts() {
    let c = cfg(&[]);
    let mut s = Sim::new(&c);
    s.latency(0, 1, &line_load(0x1000));
    // Global store hitting L1: write-through, completes when delivered to L2 (1 + 8 + ser).
    let st = acc(StateSpace::Global, MemKind::Store, 4, u32::MAX, |l| {
        0x1000 + 4 * l as u64
    });
    let l = s.latency(0, 2, &st);
    assert_eq!(l, 1 + 8 + (8u32 + 128).div_ceil(32) as u64);
    // Write-evict: the next load misses L1 (and hits L2, where the store allocated/dirtied).
    let info = s.m.issue(s.now, 0, 3, &line_load(0x1000)).unwrap();
    assert_eq!(info.l1_hits, 0);
    s.drain();
    // Local store hit keeps the line.
    let lo = acc(StateSpace::Local, MemKind::Load, 4, u32::MAX, |l| {
        0x2000 + 4 * l as u64
    });
    s.latency(0, 4, &lo);
    let mut lst = lo;
    lst.kind = MemKind::Store;
    s.latency(0, 5, &lst);
    assert_eq!(s.m.issue(s.now, 0, 6, &lo).unwrap().l1_hits, 1);
    s.drain();
    let stt = s.m.stats();
    assert_eq!(
        (
            stt.stores_completed,
            stt.l1_store_accesses,
            stt.l1_store_hits
        ),
        (2, 2, 2)
    );
    assert!(!s.m.busy());
}

#[test]
fn dirty_l2_eviction_writes_dram() {
    // 12 banks x 1 set x 1 way: two lines of one bank conflict.
    let c = cfg(&["l2.size_bytes=1536", "l2.assoc=1"]);
    let mut s = Sim::new(&c);
    s.latency(0, 1, &one(MemKind::Store, StateSpace::Global, 0x0));
    s.latency(0, 2, &one(MemKind::Store, StateSpace::Global, 0x4));
    assert_eq!(
        s.m.stats().dram_write_bytes,
        0,
        "write-back: nothing written yet"
    );
    // Same bank (chunk 12), different line: evicts the dirty line (1 dirty sector).
    assert_eq!(s.m.map.bank(12 * 256), 0);
    s.latency(
        0,
        3,
        &one(MemKind::Store, StateSpace::Global, 12 * 256 + 64),
    );
    let st = s.m.stats();
    assert_eq!(
        (st.l2_writebacks, st.dram_writes, st.dram_write_bytes),
        (1, 1, 32)
    );
    // A load that misses and evicts the second dirty line: read 128 B, write 32 B more.
    s.latency(0, 4, &line_load(24 * 256));
    let st = s.m.stats();
    assert_eq!(
        (st.dram_read_bytes, st.dram_write_bytes, st.l2_writebacks),
        (128, 64, 2)
    );
    // Partial line from a store: a load of its other sectors fetches only those.
    s.latency(0, 5, &one(MemKind::Store, StateSpace::Global, 36 * 256));
    s.latency(1, 6, &line_load(36 * 256));
    let st = s.m.stats();
    assert_eq!(st.dram_read_bytes, 128 + 96);
    assert!(!s.m.busy());
}

#[test]
fn atomics_bypass_l1_and_dirty_l2() {
    let c = cfg(&[]);
    let mut s = Sim::new(&c);
    s.step();
    let t0 = s.now;
    let expected_miss = cold_miss_expected(&s.m, &c, t0);
    let at = acc(StateSpace::Global, MemKind::Atomic, 4, u32::MAX, |_| 0x5000);
    let l = s.latency(0, 1, &at);
    // Atomic request carries 1 sector (8 + 32 B: 2 cycles), reply 8 + 32 B.
    assert_eq!(l, expected_miss - 1 - 5 + 2 + 2);
    let l2 = s.latency(0, 2, &at);
    assert_eq!(l2, 1 + 8 + 2 + 120 + 8 + 2);
    let st = s.m.stats();
    assert_eq!(
        (
            st.atomics_completed,
            st.atomic_transactions,
            st.l1_load_accesses
        ),
        (2, 2, 0)
    );
    assert_eq!((st.l2_hits, st.l2_misses), (1, 1));
}

#[test]
fn fx5800_preset_runs_and_bad_line_sizes_are_rejected() {
    let c = GpuConfig::preset("fx5800", &[]).unwrap();
    let mut s = Sim::new(&c);
    s.step();
    let expected = cold_miss_expected(&s.m, &c, s.now);
    // 64 B lines: a 128 B warp access is 2 transactions on 2 L2 banks, both cold.
    let l = s.latency(0, 1, &line_load(0x4000));
    assert!(l >= expected, "{l} < {expected}");
    let st = s.m.stats();
    assert_eq!(
        (st.transactions, st.l2_misses, st.dram_read_bytes),
        (2, 2, 128)
    );
    let e = GpuConfig::preset("gtx480", &["l1.line_bytes=64".into()]).unwrap_err();
    assert!(e.to_string().contains("l1.line_bytes"), "{e}");
}

#[test]
fn empty_mask_completes_immediately() {
    let c = cfg(&[]);
    let mut s = Sim::new(&c);
    let mut a = line_load(0);
    a.mask = 0;
    assert_eq!(
        s.issue(2, 9, &a).unwrap(),
        IssueInfo {
            transactions: 0,
            l1_hits: 0,
            l1_passes: 0
        }
    );
    assert_eq!(s.m.pop_completed(2), Some(9));
    assert!(!s.m.busy());
}

/// Streams distinct lines from every SM; returns (stats, cycles from the first to the last
/// completion, completions).
fn stream(c: &GpuConfig, per_sm: u32) -> (MemStats, u64, Vec<(usize, u32, u64)>) {
    let mut s = Sim::new(c);
    let nsm = c.sm.count as u64;
    let mut next = vec![0u32; nsm as usize];
    let start = s.now + 1;
    let total = per_sm as usize * nsm as usize;
    while s.done.len() < total {
        s.step();
        for (sm, k) in next.iter_mut().enumerate() {
            if *k < per_sm {
                let a = line_load((*k as u64 * nsm + sm as u64) * 128);
                if s.issue(sm, *k, &a).is_ok() {
                    *k += 1;
                }
            }
        }
        assert!(s.now < 10_000_000);
    }
    s.drain();
    // Steady state: from the first completion (the pipeline is full) to the last one.
    let first = s.done.iter().map(|d| d.2).min().unwrap();
    let end = s.done.iter().map(|d| d.2).max().unwrap();
    assert!(first > start);
    (s.m.stats(), end - first, s.done)
}

#[test]
fn streaming_misses_saturate_dram_bandwidth() {
    let c = cfg(&[]);
    let (st, cycles, _) = stream(&c, 400);
    let lines = 400 * 15;
    assert_eq!(st.dram_read_bytes, lines * 128);
    let peak = c.dram.channels as f64 * c.dram.bytes_per_cycle as f64 * c.clocks.dram_mhz
        / c.clocks.core_mhz;
    let got = st.dram_read_bytes as f64 / cycles as f64;
    let eff = got / peak;
    eprintln!(
        "DRAM {got:.1} B/cycle of {peak:.1} ({:.1}%), row hit {:.3}, avg lat {:.1}",
        eff * 100.0,
        st.row_buffer_hit_rate(),
        st.avg_load_latency()
    );
    assert!(eff <= 1.0 + 1e-9, "faster than the bus: {eff}");
    assert!(eff > 0.8, "DRAM efficiency {eff}");
    assert!(st.row_buffer_hit_rate() > 0.8);
}

#[test]
fn streaming_with_more_mshrs_approaches_peak() {
    // With enough misses in flight (Little's law) the DRAM bus, not the L1 MSHRs, limits.
    let c = cfg(&["l1.mshrs=64"]);
    let (st, cycles, _) = stream(&c, 400);
    let peak = c.dram.channels as f64 * c.dram.bytes_per_cycle as f64 * c.clocks.dram_mhz
        / c.clocks.core_mhz;
    let eff = st.dram_read_bytes as f64 / cycles as f64 / peak;
    eprintln!("64 MSHRs: DRAM efficiency {:.1}%", eff * 100.0);
    assert!(eff > 0.9 && eff <= 1.0, "DRAM efficiency {eff}");
}

#[test]
fn deterministic() {
    let c = cfg(&[]);
    let a = stream(&c, 60);
    let b = stream(&c, 60);
    assert_eq!(a.0, b.0);
    assert_eq!(a.1, b.1);
    assert_eq!(a.2, b.2);
    assert!(a.0.loads_completed == 900);
}

/// Throughput of the model itself (not a pass/fail test): `cargo test -p warpforge-model
/// memory_speed -- --ignored --nocapture`.
#[test]
#[ignore]
fn memory_speed() {
    let c = cfg(&[]);
    let t = std::time::Instant::now();
    let (st, cycles, done) = stream(&c, 4000);
    let secs = t.elapsed().as_secs_f64();
    let total = done.iter().map(|d| d.2).max().unwrap();
    eprintln!(
        "{} loads, {total} cycles ({cycles} steady) in {secs:.3}s: {:.0} cycles/s",
        st.loads_completed,
        total as f64 / secs
    );
}

#[test]
#[ignore]
fn memory_speed_idle() {
    let c = cfg(&[]);
    let mut m = MemoryHierarchy::new(&c);
    let t = std::time::Instant::now();
    for now in 0..10_000_000 {
        m.cycle(now);
    }
    eprintln!(
        "idle: {:.1} ns/cycle",
        t.elapsed().as_secs_f64() * 1e9 / 1e7
    );
}

/// Random mix of loads, stores and atomics (global and local, coalesced, strided and
/// scattered) on small caches and queues: every instruction completes exactly once, the
/// hierarchy drains, and the counters are consistent. Overflow checks catch any
/// miscounted in-flight item.
#[test]
fn random_mix_drains_and_completes_everything() {
    for (seed, ov) in [
        (
            1u64,
            vec![
                "l2.size_bytes=12288",
                "l2.mshrs=4",
                "l1.mshrs=8",
                "icnt.queue=4",
                "dram.queue=4",
            ],
        ),
        (
            7,
            vec!["l2.mshr_merge=1", "l1.mshr_merge=1", "dram.scheduler=fcfs"],
        ),
        (42, vec![]),
    ] {
        let c = cfg(&ov);
        let mut s = Sim::new(&c);
        let mut rng = seed;
        let mut rand = move |n: u64| {
            rng = rng
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (rng >> 33) % n
        };
        let nsm = c.sm.count as usize;
        let mut pending: Vec<Option<MemAccess>> = vec![None; nsm];
        let mut issued = 0u32;
        let mut next_token = 0u32;
        while issued < 3000 {
            s.step();
            for (sm, slot) in pending.iter_mut().enumerate() {
                if slot.is_none() && rand(3) == 0 {
                    let kind = [
                        MemKind::Load,
                        MemKind::Load,
                        MemKind::Store,
                        MemKind::Atomic,
                    ][rand(4) as usize];
                    let space = if rand(4) == 0 && kind != MemKind::Atomic {
                        StateSpace::Local
                    } else {
                        StateSpace::Global
                    };
                    let base = rand(1 << 14) * 4;
                    let pattern = rand(3);
                    let stride = [4u64, 128, 0][pattern as usize];
                    let mask = if rand(2) == 0 {
                        u32::MAX
                    } else {
                        rand(1 << 32) as u32
                    };
                    let scatter: Vec<u64> = (0..32).map(|_| rand(1 << 16) * 4).collect();
                    *slot = Some(acc(space, kind, 4, mask, |l| {
                        if stride == 0 {
                            scatter[l]
                        } else {
                            base + stride * l as u64
                        }
                    }));
                }
                if let Some(a) = slot {
                    if s.issue(sm, next_token, a).is_ok() {
                        *slot = None;
                        next_token += 1;
                        issued += 1;
                    }
                }
            }
        }
        s.drain();
        let mut tokens: Vec<u32> = s.done.iter().map(|d| d.1).collect();
        tokens.sort();
        assert_eq!(tokens, (0..next_token).collect::<Vec<_>>(), "seed {seed}");
        let st = s.m.stats();
        assert_eq!(st.instructions, next_token as u64);
        assert_eq!(st.l1_load_hits + st.l1_load_misses, st.l1_load_accesses);
        assert_eq!(st.l2_hits + st.l2_misses, st.l2_accesses);
        assert_eq!(st.dram_read_bytes % 32, 0);
        assert_eq!(
            st.dram_row_hits + st.dram_row_misses,
            st.dram_reads + st.dram_writes
        );
        assert!(!s.m.busy());
        for _ in 0..10 {
            s.step();
        }
        assert_eq!(s.m.stats(), st, "idle cycles change nothing");
    }
}
