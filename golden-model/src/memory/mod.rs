//! Timing model of the memory hierarchy: coalescer, per-SM L1, SM <-> L2 crossbar, L2 banks
//! (memory sub-partitions) and DRAM channels. Timing only: the functional model has already
//! moved the data; this model decides when each warp memory instruction completes.
//!
//! Modules, one job each: [`coalescer`] (lanes -> line transactions), [`cache`] (tag array
//! with LRU, MSHR table), [`icnt`] (port bandwidth + latency, packet format), [`l2`] (address
//! map, L2 bank), [`dram`] (channel controller), [`stats`] (counters).
//!
//! # Calling convention
//! Per core cycle `t`: `cycle(t)` first, then for each SM `pop_completed` until `None` and
//! `issue(t, ..)` for new instructions. An event due at `t` is processed by `cycle(t)`, so an
//! L1 hit issued at `t` is popped after `cycle(t + l1.hit_latency)`: its latency is exactly
//! `hit_latency`. Cycles may be skipped while `busy()` is false.
//!
//! # L1 (per SM, Fermi-like)
//! - Global and local loads allocate on miss. A miss merges into an outstanding MSHR for the
//!   same line (up to `l1.mshr_merge` requests per entry) or takes a new entry. The fetch
//!   granularity is the whole line (seed 001 [L392]: an L1 miss sends a full-block fill
//!   request); the transaction's touched sectors decide a hit (all touched sectors valid).
//! - Global stores: write-through, write-no-allocate, write-evict on hit. Local stores:
//!   write-through, no allocate, a hit updates the line (it stays valid). No write-back L1.
//! - Atomics bypass L1 (no lookup, no invalidate) and are performed at L2.
//! - `issue` is all-or-nothing: it fails with [`MemStall::L1MshrMergeFull`] if a missing line's
//!   MSHR has no merge slot, [`MemStall::L1MshrFull`] if there are not enough free MSHRs for
//!   the new missing lines, [`MemStall::MissQueueFull`] if the SM's injection queue
//!   (`icnt.queue` packets) has no room for all new packets. Exceptions so that no
//!   instruction can be rejected forever: an empty injection queue accepts any number of
//!   packets, and an instruction needing more new MSHRs than the table holds is accepted when
//!   the table is empty, its excess misses going to L2 without L1 allocation (only possible
//!   with misaligned lane accesses or `l1.mshrs < 32`).
//! - An instruction with no active lane completes at once (`transactions == 0`).
//!
//! # Network, L2, DRAM
//! See [`icnt`], [`l2`], [`dram`]. Requests are 8 B (+ data for stores and atomics),
//! replies 8 B + the requested sectors. An L2 bank's input queue holds at most
//! `icnt.queue + l2.hit_latency` requests (in flight or in the L2 pipeline); an SM whose head
//! packet targets a full bank waits (head-of-line). DRAM runs at `clocks.dram_mhz`: the DRAM
//! cycles due by base tick `t` are `D(t) = floor(t * dram_khz / base_khz)` (integer kHz),
//! and `cycle(t)` ticks DRAM cycles `D(t-1)+1 ..= D(t)`. A read whose last data beat is at
//! DRAM cycle `e` returns in the first base tick `c` with `D(c) >= e`; the L2 fill happens
//! `dram.ctrl_latency` L2 cycles later.
//!
//! # Clocks
//! All times here are base ticks (`timing::clock`; a core cycle at the presets, where every
//! clock but DRAM runs at the core clock and nothing below converts). Latencies configured in
//! a domain's own cycles are converted to base ticks, rounded up: the L1 hit latency at each
//! SM's clock (`set_sm_clock` when it changes), the crossbar's latency and serialisation at
//! the icnt clock, `l2.hit_latency` and `dram.ctrl_latency` at the L2 clock; and the L2 banks
//! act only on the L2 clock's edges. Why conversion rather than a time axis per domain: one
//! integer time axis keeps the event wheel, the port-free times and the wake-up bounds as
//! they are, and at equal clocks the model is exactly the single-clock one.
//!
//! # Cold-miss load latency (idle system, 1 transaction, issued at `t0`)
//! ```text
//! deliver = t0 + 1 + icnt.latency + ceil(8 / icnt.bytes_per_cycle)       (depart next cycle)
//! R       = deliver + l2.hit_latency                                     (L2 tag lookup: miss)
//! a       = D(R) + 1                                                      (ACT, DRAM clock)
//! e       = a + tRCD + tCL + ceil(line_bytes / dram.bytes_per_cycle)     (last data beat)
//! c       = min { c : D(c) >= e }
//! done    = c + dram.ctrl_latency + icnt.latency + ceil((8 + line_bytes) / icnt.bytes_per_cycle)
//! ```
//! (in base ticks; the formula assumes every clock but DRAM at the base clock.)
//! On gtx480 that is 265 core cycles (±1 with the DRAM clock phase): 10 to reach the L2
//! bank, 120 L2 pipeline, 28 DRAM clocks (~22 core) for ACT-tRCD-READ-tCL-burst, 100
//! controller, 13 back. An L2 hit is `1 + 9 + 120 + 13 = 143`, an L1 hit `l1.hit_latency`.
//! Stores complete when their last packet is delivered to its L2 bank (`1 + 8 + ser`).
//!
//! # Determinism and speed
//! No hash maps; events are ordered by (cycle, sequence number) (a timing wheel with a heap
//! for far-future events). Queues are preallocated; `cycle` returns at once when nothing is
//! in flight and only visits SM injection queues / L2 banks that hold something (bitmasks),
//! an L2 bank only from the cycle it can next act (head out of the pipeline, reply port
//! free), and a DRAM channel only from its next possible command or data return (each
//! channel keeps a lower bound on its next command cycle and per-bank counts of queued
//! open-row hits). A rejected instruction's coalescing is reused on retry, and so is its
//! verdict while the SM's L1 / MSHR / injection-queue state is unchanged; a stalled L2 head
//! likewise. None of this changes any timing or counter.
//!
//! # Limitations (not modelled)
//! - L1 port conflicts beyond `l1.banks` (the SM charges `l1_passes * lsu_ii` LSU cycles:
//!   the most transactions one line-interleaved bank gets); the SM reply port never
//!   back-pressures L2.
//! - No write acknowledgements, no coherence (atomics do not invalidate L1; a fill may
//!   re-insert a line a store evicted while the fill was in flight).
//! - DRAM: no refresh, tWR/tWTR/tRTP/tFAW, read/write turnaround or bank groups; the
//!   controller latency is charged on the return path only.

pub mod cache;
pub mod coalescer;
pub mod dram;
pub mod icnt;
pub mod l2;
pub mod stats;

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use crate::config::GpuConfig;
use crate::exec::{MemAccess, MemKind};
use crate::hooks::{
    CacheEvict, CacheFill, CacheId, CacheMiss, EvictCause, GpuHooks, MissKind, NoHooks,
};
use crate::ptx::ir::StateSpace;

use cache::{MshrIdx, MshrTable, Policy, TagArray};
use coalescer::{coalesce_into, SECTOR_BYTES};
use dram::Channel;
use icnt::{Crossbar, Packet, PacketKind};
use l2::{AddrMap, L2Bank};
pub use stats::MemStats;

/// What `issue` accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IssueInfo {
    /// Line transactions generated (the LSU is busy `transactions * lsu_ii` cycles).
    pub transactions: u32,
    /// Of those, L1 hits.
    pub l1_hits: u32,
    /// L1 bank passes the transactions need (the most any one of `l1.banks` banks gets; equal
    /// to `transactions` with one bank): the LSU is busy `l1_passes * lsu_ii` SM cycles.
    pub l1_passes: u32,
}

/// Upper bound of `l1.banks` (checked by the configuration).
pub const MAX_L1_BANKS: usize = 32;

/// Why `issue` refused an instruction (nothing was changed; retry later).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemStall {
    /// Not enough free L1 MSHR entries for the instruction's new missing lines.
    L1MshrFull,
    /// A missing line's L1 MSHR entry has no merge slot left.
    L1MshrMergeFull,
    /// The SM's injection queue to the network has no room for the instruction's packets.
    MissQueueFull,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Event {
    /// One transaction of instruction `slot` of SM `sm` is done.
    TxDone { sm: u16, slot: u32 },
    /// A fill reply reached L1 MSHR `mshr` of SM `sm`.
    L1Fill { sm: u16, mshr: MshrIdx },
    /// DRAM data for MSHR `mshr` of L2 bank `bank` reaches the bank.
    L2Fill { bank: u16, mshr: MshrIdx },
}

/// Log2 of the timing-wheel size (events at most this far ahead avoid the heap).
const WHEEL_BITS: u32 = 9;
const WHEEL: u64 = 1 << WHEEL_BITS;
const WHEEL_MASK: u64 = WHEEL - 1;

/// Pending events, delivered in (cycle, schedule order) order, exactly as a heap keyed by
/// (cycle, sequence number) would. Events due in `[cursor, cursor + WHEEL)` sit in a timing
/// wheel (one FIFO per cycle, in schedule order); the others ("far", or "late": due before
/// `cursor`) in a heap. Far events move into the wheel as soon as their cycle enters the
/// window, before any event of that cycle can be scheduled directly into it, so each wheel
/// slot stays in schedule order.
#[derive(Debug, Clone)]
struct EventQueue {
    /// The next cycle whose wheel slot has not been processed.
    cursor: u64,
    slots: Vec<Vec<Event>>,
    in_wheel: usize,
    far: BinaryHeap<Reverse<(u64, u64, Event)>>,
    seq: u64,
}

impl EventQueue {
    fn new() -> EventQueue {
        EventQueue {
            cursor: 0,
            slots: (0..WHEEL).map(|_| Vec::with_capacity(8)).collect(),
            in_wheel: 0,
            far: BinaryHeap::with_capacity(64),
            seq: 0,
        }
    }

    #[inline]
    fn push(&mut self, t: u64, e: Event) {
        self.seq += 1;
        if t >= self.cursor && t - self.cursor < WHEEL {
            self.slots[(t & WHEEL_MASK) as usize].push(e);
            self.in_wheel += 1;
        } else {
            self.far.push(Reverse((t, self.seq, e)));
        }
    }

    fn is_empty(&self) -> bool {
        self.in_wheel == 0 && self.far.is_empty()
    }

    /// Move far events whose cycle entered the window into the wheel.
    #[inline]
    fn migrate(&mut self) {
        while let Some(&Reverse((t, _, e))) = self.far.peek() {
            if t >= self.cursor + WHEEL || t < self.cursor {
                break;
            }
            self.far.pop();
            self.slots[(t & WHEEL_MASK) as usize].push(e);
            self.in_wheel += 1;
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Instr {
    token: u32,
    remaining: u32,
    issued: u64,
    kind: MemKind,
}

#[derive(Debug, Clone)]
struct SmMem {
    l1: TagArray<Policy>,
    mshr: MshrTable<u32>,
    inject: VecDeque<Packet>,
    instrs: Vec<Instr>,
    free_slots: Vec<u32>,
    completed: VecDeque<u32>,
    /// The last rejected access and its transactions (always `Some` between calls).
    retry: Option<Box<Retry>>,
    /// Bumped on every change to the state `issue`'s feasibility check reads (L1 tags,
    /// MSHRs, injection queue), so that an unchanged retry can repeat its verdict.
    version: u64,
    /// Bumped on every change to the L1 tags / valid sectors or the MSHRs only (not on
    /// injection-queue departures), so that a retried load whose L1 and MSHRs are unchanged
    /// re-checks only the injection queue.
    l1_version: u64,
    /// This SM's L1 hit latency in base ticks (`l1.hit_latency` SM cycles at the SM's clock).
    l1_hit_ticks: u64,
    /// Per-SM counters (the named counters `sm<i>.l1.*`).
    pub counters: SmMemCounters,
}

/// Memory counters of one SM (the aggregate ones are in [`MemStats`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SmMemCounters {
    pub l1_load_accesses: u64,
    pub l1_load_hits: u64,
    /// Line transactions of this SM's accepted instructions.
    pub transactions: u64,
}

/// The part of a load's feasibility check that reads only the L1 and the MSHRs.
#[derive(Debug, Clone, Copy)]
enum LoadCheck {
    /// A missing line's MSHR has no merge slot left.
    MergeFull,
    /// Not enough free MSHRs for the new missing lines.
    MshrFull,
    /// Feasible as far as L1 and MSHRs go, with this many new missing lines (packets).
    NewLines(usize),
}

#[derive(Debug, Clone, Default)]
struct Retry {
    valid: bool,
    /// The verdict of the last attempt and the SM `version` it was taken at.
    stall: Option<(MemStall, u64)>,
    /// A load's L1/MSHR check and the SM `l1_version` it was taken at.
    load_check: Option<(LoadCheck, u64)>,
    access: MemAccess,
    co: coalescer::Coalesced,
}

fn same_access(a: &MemAccess, b: &MemAccess) -> bool {
    a.mask == b.mask
        && a.bytes == b.bytes
        && a.kind == b.kind
        && a.space == b.space
        && a.addrs == b.addrs
}

/// The memory hierarchy of the whole GPU (all SMs' L1s, the network, L2 and DRAM).
#[derive(Debug, Clone)]
pub struct MemoryHierarchy {
    line_bytes: u32,
    line_shift: u32,
    full_sectors: u32,
    l2_latency: u64,
    inject_cap: usize,
    bank_in_cap: usize,
    reply_cap: usize,
    dram_cap: usize,
    ctrl_latency: u64,
    l1_hit_cycles: u64,
    /// The time base and the L2 clock, kHz (see `timing::clock`).
    base_khz: u64,
    l2_khz: u64,
    dram_khz: u64,
    /// `l1.banks - 1` (a power of two): an instruction's transactions to one bank serialise.
    l1_bank_mask: u64,
    dram_now: u64,
    map: AddrMap,
    xbar: Crossbar,
    sms: Vec<SmMem>,
    banks: Vec<L2Bank>,
    bank_channel: Vec<u16>,
    channels: Vec<Channel>,
    events: EventQueue,
    /// Bit per SM: injection queue not empty.
    inject_mask: Vec<u64>,
    /// Bit per L2 bank: input, reply or DRAM-request queue not empty.
    bank_mask: Vec<u64>,
    /// Per L2 bank: no cycle before this one has anything to do (head request still in
    /// the pipeline, reply port busy).
    bank_wake: Vec<u64>,
    /// Warp instructions accepted and not completed.
    pending_instrs: u64,
    /// Packets in SM injection queues.
    injected: u64,
    /// Items in L2 banks' queues (input, replies, to_dram) plus busy L2 MSHRs' fetches.
    l2_items: u64,
    stats: MemStats,
    /// The L2 counters of each bank (summed into `stats()`).
    bank_stats: Vec<MemStats>,
    scratch_done: Vec<(u16, u16)>,
    scratch_l1: Vec<u32>,
    scratch_l2: Vec<Packet>,
}

use crate::timing::clock::{edge_at, to_base_ticks, Clocks};

impl MemoryHierarchy {
    pub fn new(cfg: &GpuConfig) -> MemoryHierarchy {
        let nsm = cfg.sm.count as usize;
        let nbanks = cfg.l2.banks as usize;
        let l1 = &cfg.l1;
        let line_bytes = l1.line_bytes;
        assert!(
            line_bytes <= 1024,
            "l1.line_bytes above 1024 is not supported"
        );
        assert_eq!(
            cfg.l2.line_bytes, line_bytes,
            "L1 and L2 line sizes must match"
        );
        let l1_sets = (l1.size_bytes / (l1.assoc * l1.line_bytes)) as usize;
        let inject_cap = cfg.icnt.queue as usize;
        let clocks = Clocks::new(cfg);
        let base = clocks.base_khz;
        let sms = (0..nsm)
            .map(|i| SmMem {
                l1_hit_ticks: to_base_ticks(l1.hit_latency as u64, clocks.sms[i].khz, base),
                counters: SmMemCounters::default(),
                l1: TagArray::with_policy(
                    l1_sets,
                    l1.assoc as usize,
                    Policy::new(l1.replacement, l1_sets * l1.assoc as usize),
                ),
                mshr: MshrTable::new(l1.mshrs as usize, l1.mshr_merge as usize),
                inject: VecDeque::with_capacity(inject_cap.max(coalescer::MAX_TRANSACTIONS)),
                instrs: Vec::with_capacity(64),
                free_slots: Vec::with_capacity(64),
                completed: VecDeque::with_capacity(64),
                retry: Some(Box::default()),
                version: 0,
                l1_version: 0,
            })
            .collect();
        let map = AddrMap::new(cfg);
        let banks: Vec<L2Bank> = (0..nbanks).map(|b| L2Bank::new(b as u16, cfg)).collect();
        let bank_channel = (0..nbanks).map(|b| map.channel_of_bank(b) as u16).collect();
        let sectors = line_bytes / SECTOR_BYTES;
        MemoryHierarchy {
            line_bytes,
            line_shift: line_bytes.trailing_zeros(),
            full_sectors: if sectors >= 32 {
                u32::MAX
            } else {
                (1 << sectors) - 1
            },
            l2_latency: to_base_ticks(cfg.l2.hit_latency as u64, clocks.l2_khz, base),
            inject_cap,
            bank_in_cap: cfg.icnt.queue as usize + cfg.l2.hit_latency as usize,
            reply_cap: cfg.icnt.queue as usize,
            dram_cap: cfg.dram.queue as usize,
            ctrl_latency: to_base_ticks(cfg.dram.ctrl_latency as u64, clocks.l2_khz, base),
            l1_hit_cycles: l1.hit_latency as u64,
            base_khz: base,
            l2_khz: clocks.l2_khz,
            dram_khz: clocks.dram_khz,
            l1_bank_mask: cfg.l1.banks as u64 - 1,
            dram_now: 0,
            map,
            xbar: Crossbar::new(nsm, nbanks, cfg.icnt.latency, cfg.icnt.bytes_per_cycle)
                .clocked(clocks.icnt_khz, base),
            sms,
            banks,
            bank_channel,
            channels: (0..cfg.dram.channels)
                .map(|_| Channel::new(&cfg.dram))
                .collect(),
            events: EventQueue::new(),
            inject_mask: vec![0; nsm.div_ceil(64)],
            bank_mask: vec![0; nbanks.div_ceil(64)],
            bank_wake: vec![u64::MAX; nbanks],
            pending_instrs: 0,
            injected: 0,
            l2_items: 0,
            stats: MemStats::default(),
            bank_stats: vec![MemStats::default(); nbanks],
            scratch_done: Vec::with_capacity(16),
            scratch_l1: Vec::with_capacity(l1.mshr_merge as usize),
            scratch_l2: Vec::with_capacity(cfg.l2.mshr_merge as usize),
        }
    }

    /// DRAM cycles due by the end of base tick `t`.
    pub fn dram_cycles_at(&self, t: u64) -> u64 {
        match t.checked_mul(self.dram_khz) {
            Some(x) => x / self.base_khz,
            None => ((t as u128 * self.dram_khz as u128) / self.base_khz as u128) as u64,
        }
    }

    /// SM `sm` now runs at `khz` (its L1 hit latency, in SM cycles, is converted again).
    /// Instructions already accepted keep the completion time they were given.
    pub fn set_sm_clock(&mut self, sm: usize, khz: u64) {
        self.sms[sm].l1_hit_ticks = to_base_ticks(self.l1_hit_cycles, khz, self.base_khz);
    }

    /// The per-SM memory counters of SM `sm`.
    pub fn sm_counters(&self, sm: usize) -> SmMemCounters {
        self.sms[sm].counters
    }

    /// The L2 counters of bank `bank` (cumulative, `l2_*` fields only).
    pub fn bank_stats(&self, bank: usize) -> &MemStats {
        &self.bank_stats[bank]
    }

    /// The counters of DRAM channel `ch` (cumulative).
    pub fn channel_counters(&self, ch: usize) -> &dram::DramCounters {
        &self.channels[ch].counters
    }

    pub fn num_banks(&self) -> usize {
        self.banks.len()
    }

    pub fn num_channels(&self) -> usize {
        self.channels.len()
    }

    #[inline]
    fn schedule(&mut self, t: u64, e: Event) {
        self.events.push(t, e);
    }

    fn alloc_instr(&mut self, sm: usize, ins: Instr) -> u32 {
        self.pending_instrs += 1;
        let s = &mut self.sms[sm];
        match s.free_slots.pop() {
            Some(i) => {
                s.instrs[i as usize] = ins;
                i
            }
            None => {
                s.instrs.push(ins);
                (s.instrs.len() - 1) as u32
            }
        }
    }

    fn tx_done(&mut self, now: u64, sm: usize, slot: u32) {
        let s = &mut self.sms[sm];
        let ins = &mut s.instrs[slot as usize];
        ins.remaining -= 1;
        if ins.remaining > 0 {
            return;
        }
        let ins = *ins;
        s.free_slots.push(slot);
        s.completed.push_back(ins.token);
        self.pending_instrs -= 1;
        match ins.kind {
            MemKind::Load => {
                self.stats.loads_completed += 1;
                self.stats.load_latency_sum += now - ins.issued;
            }
            MemKind::Atomic => {
                self.stats.atomics_completed += 1;
                self.stats.load_latency_sum += now - ins.issued;
            }
            MemKind::Store => self.stats.stores_completed += 1,
        }
    }

    fn packet(&self, kind: PacketKind, sm: usize, line_addr: u64, sectors: u32, id: u32) -> Packet {
        Packet {
            kind,
            sm: sm as u16,
            bank: self.map.bank(line_addr) as u16,
            line_addr,
            sectors,
            id,
        }
    }

    /// Try to start one warp memory instruction of SM `sm` (space Global or Local; any other
    /// space is treated as Global). All-or-nothing: either every transaction is accepted this
    /// cycle (`Ok`) or none is and the SM retries later (`Err`).
    pub fn issue(
        &mut self,
        now: u64,
        sm: usize,
        token: u32,
        access: &MemAccess,
    ) -> Result<IssueInfo, MemStall> {
        self.issue_with(now, sm, token, access, &mut NoHooks)
    }

    /// [`MemoryHierarchy::issue`] calling the L1 cache hooks (misses, and lines a store
    /// invalidates) of an accepted instruction.
    #[inline]
    pub fn issue_with<H: GpuHooks>(
        &mut self,
        now: u64,
        sm: usize,
        token: u32,
        access: &MemAccess,
        hooks: &mut H,
    ) -> Result<IssueInfo, MemStall> {
        // A rejected instruction is usually retried unchanged every cycle: keep its
        // coalescing result (boxed, so taking it out and back is a pointer move).
        let mut retry = self.sms[sm].retry.take().expect("retry buffer present");
        let again = retry.valid && same_access(&retry.access, access);
        if !again {
            retry.stall = None;
            retry.load_check = None;
            coalesce_into(access, self.line_bytes, &mut retry.co);
        }
        let version = self.sms[sm].version;
        let r = match retry.stall {
            // Nothing the check reads has changed: same verdict, same counter.
            Some((st, v)) if v == version => {
                match st {
                    MemStall::L1MshrFull => self.stats.stall_l1_mshr_full += 1,
                    MemStall::L1MshrMergeFull => self.stats.stall_l1_merge_full += 1,
                    MemStall::MissQueueFull => self.stats.stall_miss_queue_full += 1,
                }
                Err(st)
            }
            _ => self.issue_coalesced(
                now,
                sm,
                token,
                access,
                &retry.co,
                &mut retry.load_check,
                hooks,
            ),
        };
        match r {
            Ok(_) => {
                retry.valid = false;
                retry.stall = None;
            }
            Err(st) => {
                // Most instructions are accepted at once: the access is copied only here.
                if !again {
                    retry.access = *access;
                }
                retry.valid = true;
                retry.stall = Some((st, self.sms[sm].version));
            }
        }
        self.sms[sm].retry = Some(retry);
        r
    }

    #[allow(clippy::too_many_arguments)]
    fn issue_coalesced<H: GpuHooks>(
        &mut self,
        now: u64,
        sm: usize,
        token: u32,
        access: &MemAccess,
        co: &coalescer::Coalesced,
        load_check: &mut Option<(LoadCheck, u64)>,
        hooks: &mut H,
    ) -> Result<IssueInfo, MemStall> {
        let n = co.len() as u32;
        if co.is_empty() {
            self.stats.instructions += 1;
            self.sms[sm].completed.push_back(token);
            return Ok(IssueInfo {
                transactions: 0,
                l1_hits: 0,
                l1_passes: 0,
            });
        }
        let s = &self.sms[sm];
        let queue_room =
            |new: usize| s.inject.is_empty() || s.inject.len() + new <= self.inject_cap;
        match access.kind {
            MemKind::Load => {
                // feasibility (no mutation); the L1/MSHR part is reused while they are
                // unchanged (a retry after injection-queue departures only)
                let check = match *load_check {
                    Some((c, v)) if v == s.l1_version => c,
                    _ => {
                        let c = self.load_check(s, co);
                        *load_check = Some((c, s.l1_version));
                        c
                    }
                };
                let new_lines = match check {
                    LoadCheck::MergeFull => {
                        self.stats.stall_l1_merge_full += 1;
                        return Err(MemStall::L1MshrMergeFull);
                    }
                    LoadCheck::MshrFull => {
                        self.stats.stall_l1_mshr_full += 1;
                        return Err(MemStall::L1MshrFull);
                    }
                    LoadCheck::NewLines(n) => n,
                };
                if !queue_room(new_lines) {
                    self.stats.stall_miss_queue_full += 1;
                    return Err(MemStall::MissQueueFull);
                }
                // commit
                let slot = self.alloc_instr(
                    sm,
                    Instr {
                        token,
                        remaining: n,
                        issued: now,
                        kind: MemKind::Load,
                    },
                );
                let mut hits = 0;
                let passes = self.l1_bank_passes(co);
                for t in co.iter() {
                    self.stats.l1_load_accesses += 1;
                    let s = &mut self.sms[sm];
                    s.counters.l1_load_accesses += 1;
                    let set = s.l1.set_of(t.line_addr >> self.line_shift);
                    if let Some(i) = s.l1.probe(set, t.line_addr) {
                        if s.l1.valid_sectors(i) & t.sectors == t.sectors {
                            s.l1.touch(i);
                            hits += 1;
                            self.stats.l1_load_hits += 1;
                            s.counters.l1_load_hits += 1;
                            let at = now + s.l1_hit_ticks;
                            self.schedule(
                                at,
                                Event::TxDone {
                                    sm: sm as u16,
                                    slot,
                                },
                            );
                            continue;
                        }
                    }
                    self.stats.l1_load_misses += 1;
                    let miss = |kind| CacheMiss {
                        cache: CacheId::L1 { sm: sm as u32 },
                        now,
                        line_addr: t.line_addr,
                        set: set as u32,
                        kind,
                    };
                    if let Some(m) = s.mshr.find(t.line_addr) {
                        s.mshr.merge(m, slot);
                        self.stats.l1_mshr_merges += 1;
                        hooks.on_cache_miss(&miss(MissKind::Merged));
                    } else if !s.mshr.is_full() {
                        hooks.on_cache_miss(&miss(MissKind::NewMshr));
                        let m = s.mshr.allocate(t.line_addr, slot);
                        let p = self.packet(
                            PacketKind::Load,
                            sm,
                            t.line_addr,
                            self.full_sectors,
                            m as u32,
                        );
                        self.enqueue_packet(sm, p);
                    } else {
                        hooks.on_cache_miss(&miss(MissKind::Bypass));
                        let p =
                            self.packet(PacketKind::LoadBypass, sm, t.line_addr, t.sectors, slot);
                        self.enqueue_packet(sm, p);
                    }
                }
                Ok(self.accepted(sm, n, hits, passes))
            }
            MemKind::Store | MemKind::Atomic => {
                if !queue_room(co.len()) {
                    self.stats.stall_miss_queue_full += 1;
                    return Err(MemStall::MissQueueFull);
                }
                let kind = access.kind;
                let slot = self.alloc_instr(
                    sm,
                    Instr {
                        token,
                        remaining: n,
                        issued: now,
                        kind,
                    },
                );
                let local = access.space == StateSpace::Local;
                let passes = self.l1_bank_passes(co);
                for t in co.iter() {
                    let pk = if kind == MemKind::Store {
                        self.stats.l1_store_accesses += 1;
                        let s = &mut self.sms[sm];
                        let set = s.l1.set_of(t.line_addr >> self.line_shift);
                        if let Some(i) = s.l1.probe(set, t.line_addr) {
                            self.stats.l1_store_hits += 1;
                            if local {
                                s.l1.touch(i);
                            } else {
                                hooks.on_cache_evict(&CacheEvict {
                                    cache: CacheId::L1 { sm: sm as u32 },
                                    now,
                                    line_addr: t.line_addr,
                                    set: set as u32,
                                    way: s.l1.way_of(i) as u32,
                                    dirty: s.l1.dirty_sectors(i),
                                    cause: EvictCause::Invalidated,
                                });
                                s.l1.invalidate(i);
                            }
                        }
                        PacketKind::Store
                    } else {
                        self.stats.atomic_transactions += 1;
                        PacketKind::Atomic
                    };
                    let p = self.packet(pk, sm, t.line_addr, t.sectors, slot);
                    self.enqueue_packet(sm, p);
                }
                Ok(self.accepted(sm, n, 0, passes))
            }
        }
    }

    /// The L1/MSHR part of a load's feasibility check (reads SM `s`'s L1 and MSHRs only).
    fn load_check(&self, s: &SmMem, co: &coalescer::Coalesced) -> LoadCheck {
        let mut new_lines = 0usize;
        for t in co.iter() {
            let set = s.l1.set_of(t.line_addr >> self.line_shift);
            if let Some(i) = s.l1.probe(set, t.line_addr) {
                if s.l1.valid_sectors(i) & t.sectors == t.sectors {
                    continue;
                }
            }
            match s.mshr.find(t.line_addr) {
                Some(m) if !s.mshr.can_merge(m) => return LoadCheck::MergeFull,
                Some(_) => {}
                None => new_lines += 1,
            }
        }
        if new_lines > s.mshr.free() && s.mshr.used() > 0 {
            return LoadCheck::MshrFull;
        }
        LoadCheck::NewLines(new_lines)
    }

    /// Queue a packet on SM `sm`'s injection port.
    #[inline]
    fn enqueue_packet(&mut self, sm: usize, p: Packet) {
        self.sms[sm].inject.push_back(p);
        self.injected += 1;
    }

    /// Count an accepted warp instruction of `n` transactions and describe it to the SM.
    #[inline]
    fn accepted(&mut self, sm: usize, n: u32, l1_hits: u32, l1_passes: u32) -> IssueInfo {
        self.stats.instructions += 1;
        self.stats.transactions += n as u64;
        self.sms[sm].counters.transactions += n as u64;
        self.committed(sm);
        IssueInfo {
            transactions: n,
            l1_hits,
            l1_passes,
        }
    }

    /// L1 accesses an instruction's transactions need when those to one bank (`l1.banks`
    /// banks, line-interleaved) serialise and different banks work in parallel: the most
    /// transactions any one bank gets. With one bank (the presets) that is every transaction.
    #[inline]
    fn l1_bank_passes(&self, co: &coalescer::Coalesced) -> u32 {
        if self.l1_bank_mask == 0 {
            return co.len() as u32;
        }
        let mut per_bank = [0u32; MAX_L1_BANKS];
        let mut most = 0;
        for t in co.iter() {
            let b = ((t.line_addr >> self.line_shift) & self.l1_bank_mask) as usize;
            per_bank[b] += 1;
            most = most.max(per_bank[b]);
        }
        most
    }

    /// After an accepted instruction changed SM `sm`'s L1 / MSHR / injection queue.
    #[inline]
    fn committed(&mut self, sm: usize) {
        let s = &mut self.sms[sm];
        s.version += 1;
        s.l1_version += 1;
        if !s.inject.is_empty() {
            self.inject_mask[sm / 64] |= 1 << (sm % 64);
        }
    }

    /// Anything still in flight anywhere?
    pub fn busy(&self) -> bool {
        self.pending_instrs > 0
            || !self.events.is_empty()
            || self.injected > 0
            || self.l2_items > 0
            || self.channels.iter().any(|c| c.busy())
    }

    /// Pop the token of a warp instruction that has completed (loads/atomics: all data back;
    /// stores: all transactions accepted by L2). Call until `None` each cycle.
    pub fn pop_completed(&mut self, sm: usize) -> Option<u32> {
        self.sms[sm].completed.pop_front()
    }

    /// Cumulative statistics.
    pub fn stats(&self) -> MemStats {
        let mut s = self.stats;
        for b in &self.bank_stats {
            s += *b;
        }
        for c in &self.channels {
            let d = &c.counters;
            s.dram_reads += d.reads;
            s.dram_writes += d.writes;
            s.dram_read_bytes += d.read_bytes;
            s.dram_write_bytes += d.write_bytes;
            s.dram_row_hits += d.row_hits;
            s.dram_row_misses += d.row_misses;
            s.dram_activates += d.activates;
            s.dram_precharges += d.precharges;
        }
        s
    }

    /// Advance one core cycle.
    pub fn cycle(&mut self, now: u64) {
        self.cycle_with(now, &mut NoHooks)
    }

    /// [`MemoryHierarchy::cycle`] calling the cache hooks of the fills (and the evictions
    /// they cause) at L1 and L2 and of the L2 misses.
    #[inline]
    pub fn cycle_with<H: GpuHooks>(&mut self, now: u64, hooks: &mut H) {
        let target = self.dram_cycles_at(now);
        if !self.busy() {
            self.dram_now = self.dram_now.max(target);
            // nothing scheduled: the wheel may restart at the next cycle
            self.events.cursor = self.events.cursor.max(now + 1);
            return;
        }
        self.dram(now, target);
        self.process_events(now, hooks);
        // The L2 banks act on the L2 clock's edges only (every tick at the presets).
        if self.l2_items > 0
            && (self.l2_khz == self.base_khz || edge_at(now, self.l2_khz, self.base_khz))
        {
            self.l2_banks(now, hooks);
        }
        if self.injected > 0 {
            self.inject(now);
        }
    }

    fn dram(&mut self, now: u64, target: u64) {
        let from = self.dram_now + 1;
        self.dram_now = self.dram_now.max(target);
        if from > target {
            return;
        }
        let mut done = std::mem::take(&mut self.scratch_done);
        for ch in self.channels.iter_mut() {
            if ch.next_event() > target {
                continue;
            }
            ch.tick_range(from, target, &mut done);
        }
        for &(bank, mshr) in &done {
            self.schedule(now + self.ctrl_latency, Event::L2Fill { bank, mshr });
        }
        done.clear();
        self.scratch_done = done;
    }

    fn process_events<H: GpuHooks>(&mut self, now: u64, hooks: &mut H) {
        // late events (scheduled for a cycle already processed) come first
        while let Some(&Reverse((t, _, e))) = self.events.far.peek() {
            if t >= self.events.cursor || t > now {
                break;
            }
            self.events.far.pop();
            self.handle(now, e, hooks);
        }
        while self.events.cursor <= now {
            let far_due = matches!(self.events.far.peek(), Some(&Reverse((t, _, _))) if t <= now);
            if self.events.in_wheel == 0 && !far_due {
                self.events.cursor = now + 1;
                self.events.migrate();
                break;
            }
            let slot = (self.events.cursor & WHEEL_MASK) as usize;
            if !self.events.slots[slot].is_empty() {
                let mut v = std::mem::take(&mut self.events.slots[slot]);
                self.events.in_wheel -= v.len();
                for &e in &v {
                    self.handle(now, e, hooks);
                }
                v.clear();
                self.events.slots[slot] = v;
            }
            self.events.cursor += 1;
            self.events.migrate();
        }
    }

    fn handle<H: GpuHooks>(&mut self, now: u64, e: Event, hooks: &mut H) {
        match e {
            Event::TxDone { sm, slot } => self.tx_done(now, sm as usize, slot),
            Event::L1Fill { sm, mshr } => {
                let sm = sm as usize;
                let mut w = std::mem::take(&mut self.scratch_l1);
                w.clear();
                let s = &mut self.sms[sm];
                s.version += 1;
                s.l1_version += 1;
                let line = s.mshr.line_of(mshr);
                let set = s.l1.set_of(line >> self.line_shift);
                let cache = CacheId::L1 { sm: sm as u32 };
                let (i, allocated) = match s.l1.probe(set, line) {
                    Some(i) => {
                        s.l1.update(i, self.full_sectors, 0);
                        (i, false)
                    }
                    None => {
                        // L1 is write-through: victims are never dirty.
                        let (i, victim) = s.l1.insert(set, line, self.full_sectors, 0);
                        if let Some(v) = victim {
                            hooks.on_cache_evict(&CacheEvict {
                                cache,
                                now,
                                line_addr: v.line_addr,
                                set: set as u32,
                                way: s.l1.way_of(i) as u32,
                                dirty: v.dirty,
                                cause: EvictCause::Replaced,
                            });
                        }
                        (i, true)
                    }
                };
                hooks.on_cache_fill(&CacheFill {
                    cache,
                    now,
                    line_addr: line,
                    set: set as u32,
                    way: s.l1.way_of(i) as u32,
                    sectors: self.full_sectors,
                    allocated,
                });
                s.mshr.release(mshr, &mut w);
                for &slot in &w {
                    self.tx_done(now, sm, slot);
                }
                self.scratch_l1 = w;
            }
            Event::L2Fill { bank, mshr } => {
                let mut w = std::mem::take(&mut self.scratch_l2);
                let created = self.banks[bank as usize].fill(
                    mshr,
                    &self.map,
                    &mut w,
                    &mut self.bank_stats[bank as usize],
                    now,
                    hooks,
                );
                self.scratch_l2 = w;
                // the DRAM read (counted while queued) is replaced by what the fill created
                self.l2_items = self.l2_items - 1 + created as u64;
                let b = bank as usize;
                self.bank_mask[b / 64] |= 1 << (b % 64);
                self.bank_wake[b] = 0;
            }
        }
    }

    fn l2_banks<H: GpuHooks>(&mut self, now: u64, hooks: &mut H) {
        let mut from = 0;
        while let Some(b) = next_set(&self.bank_mask, from) {
            from = b + 1;
            if self.bank_wake[b] > now {
                continue;
            }
            self.l2_bank(now, b, hooks);
            let bank = &self.banks[b];
            let mut wake = u64::MAX;
            if let Some(&(ready, _)) = bank.input.front() {
                wake = ready.max(now + 1);
            }
            if !bank.replies.is_empty() {
                wake = wake.min(self.xbar.bank_free_at(b).max(now + 1));
            }
            if !bank.to_dram.is_empty() {
                wake = now + 1;
            }
            self.bank_wake[b] = wake;
            if wake == u64::MAX {
                self.bank_mask[b / 64] &= !(1 << (b % 64));
            }
        }
    }

    /// One cycle of L2 bank `b` (which has something queued).
    #[inline]
    fn l2_bank<H: GpuHooks>(&mut self, now: u64, b: usize, hooks: &mut H) {
        let bank = &mut self.banks[b];
        let (step, created) = bank.step(
            now,
            &self.map,
            self.reply_cap,
            self.dram_cap,
            &mut self.bank_stats[b],
            hooks,
        );
        if step == l2::Step::Done {
            // the request is consumed; a load miss keeps one item for its DRAM read
            self.l2_items = self.l2_items - 1 + created as u64;
        }
        // reply port
        if self.xbar.bank_can_send(now, b) {
            if let Some(p) = bank.replies.pop_front() {
                bank.stalled = false;
                self.l2_items -= 1;
                let bytes = p.reply_bytes();
                self.stats.icnt_reply_packets += 1;
                self.stats.icnt_reply_bytes += bytes as u64;
                let t = self.xbar.send_reply(now, b, p.sm as usize, bytes);
                let e = match p.kind {
                    PacketKind::Load => Event::L1Fill {
                        sm: p.sm,
                        mshr: p.id as MshrIdx,
                    },
                    _ => Event::TxDone {
                        sm: p.sm,
                        slot: p.id,
                    },
                };
                self.schedule(t, e);
            }
        }
        // DRAM request queue -> channel
        let bank = &mut self.banks[b];
        if let Some(&r) = bank.to_dram.front() {
            let ch = &mut self.channels[self.bank_channel[b] as usize];
            if ch.can_accept() {
                bank.to_dram.pop_front();
                bank.stalled = false;
                ch.push(r);
                if r.write {
                    // writes leave the L2 accounting here; reads stay until their fill
                    self.l2_items -= 1;
                }
            }
        }
    }

    fn inject(&mut self, now: u64) {
        // SMs with a queued packet, round robin from `now % n`
        let n = self.sms.len();
        let start = (now % n as u64) as usize;
        let mut from = start;
        let mut wrapped = false;
        loop {
            let sm = match next_set(&self.inject_mask, from) {
                Some(sm) if !wrapped || sm < start => sm,
                _ if !wrapped => {
                    wrapped = true;
                    from = 0;
                    continue;
                }
                _ => break,
            };
            from = sm + 1;
            self.inject_sm(now, sm);
            if self.sms[sm].inject.is_empty() {
                self.inject_mask[sm / 64] &= !(1 << (sm % 64));
            }
        }
    }

    #[inline]
    fn inject_sm(&mut self, now: u64, sm: usize) {
        let Some(&p) = self.sms[sm].inject.front() else {
            return;
        };
        if !self.xbar.sm_can_send(now, sm) {
            return;
        }
        let bank = p.bank as usize;
        if self.banks[bank].input.len() >= self.bank_in_cap {
            self.stats.icnt_stall_cycles += 1;
            return;
        }
        let s = &mut self.sms[sm];
        s.inject.pop_front();
        s.version += 1;
        self.injected -= 1;
        let bytes = p.request_bytes();
        self.stats.icnt_req_packets += 1;
        self.stats.icnt_req_bytes += bytes as u64;
        let t = self.xbar.send_request(now, sm, bank, bytes);
        self.banks[bank].input.push_back((t + self.l2_latency, p));
        self.bank_mask[bank / 64] |= 1 << (bank % 64);
        self.bank_wake[bank] = self.bank_wake[bank].min(t + self.l2_latency);
        self.l2_items += 1;
        if p.kind == PacketKind::Store {
            self.schedule(
                t,
                Event::TxDone {
                    sm: sm as u16,
                    slot: p.id,
                },
            );
        }
    }
}

/// The first set bit at index `from` or above.
#[inline]
fn next_set(mask: &[u64], from: usize) -> Option<usize> {
    let mut w = from / 64;
    if w >= mask.len() {
        return None;
    }
    let mut bits = mask[w] & (u64::MAX << (from % 64));
    loop {
        if bits != 0 {
            return Some(w * 64 + bits.trailing_zeros() as usize);
        }
        w += 1;
        if w >= mask.len() {
            return None;
        }
        bits = mask[w];
    }
}

#[cfg(test)]
mod tests;
