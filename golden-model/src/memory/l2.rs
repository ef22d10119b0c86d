//! L2 banks (memory sub-partitions) and the address map.
//!
//! Address map (GPGPU-Sim style): the address is cut in `dram.interleave_bytes` chunks;
//! chunk `c` goes to channel `c % channels`, and within the channel to sub-partition
//! `(c / channels) % subs` where `subs = l2.banks / channels`; L2 bank =
//! `channel * subs + sub`, so bank `b` is served by DRAM channel `b / subs`. The
//! channel-local address (for DRAM bank/row) drops the channel bits; the bank-local line
//! number (for the L2 set index) drops channel and sub-partition bits, so every set is used.
//! If `l2.banks` is not a multiple of `dram.channels`, chunks are spread over banks
//! (`c % banks`) and bank `b` uses channel `b % channels`.
//!
//! Each bank: `l2.size_bytes / l2.banks` bytes, `l2.assoc` ways, true LRU, write-back,
//! write-allocate without fetch (sector valid/dirty bits, GPGPU-Sim `lazy_fetch_on_read`).
//! A request delivered by the network enters the bank pipeline and reaches the tag array
//! `l2.hit_latency` cycles later (GPGPU-Sim's `rop_latency`); the tag array serves one
//! request per cycle in arrival order (head-of-line blocking when it cannot proceed):
//! - load/atomic hit (line present with the requested sectors valid): reply queued now;
//! - miss: merge into the line's MSHR (up to `l2.mshr_merge` requests) or allocate one and
//!   queue a DRAM read of the line's invalid sectors; stalls if the MSHRs, the merge slots or
//!   the DRAM queue are full;
//! - store: hit or allocate, sectors marked dirty; no reply;
//! - atomics are performed at L2: they behave as loads and dirty their sectors.
//!
//! Dirty victims (from a store allocation or a fill) become DRAM writes of their dirty
//! sectors. The bank's reply queue and DRAM-request queue are soft-bounded: lookups stall
//! while either is at its bound, but fills (which cannot wait) may exceed it.

use std::collections::VecDeque;

use super::cache::{MshrIdx, MshrTable, Policy, TagArray, Victim};
use super::coalescer::SECTOR_BYTES;
use super::dram::DramReq;
use super::icnt::{Packet, PacketKind};
use super::stats::MemStats;
use crate::hooks::{CacheEvict, CacheFill, CacheId, CacheMiss, EvictCause, GpuHooks, MissKind};

/// Address -> (L2 bank, DRAM channel, DRAM bank/row) mapping.
#[derive(Debug, Clone)]
pub struct AddrMap {
    /// log2 of `interleave` / `line_bytes` / `row_bytes` / `dram_banks` when a power of
    /// two (all are on the presets), else `u32::MAX` (divide).
    il_shift: u32,
    line_shift: u32,
    row_shift: u32,
    dbank_shift: u32,
    interleave: u64,
    channels: u64,
    banks: u64,
    subs: u64,
    line_bytes: u64,
    row_bytes: u64,
    dram_banks: u64,
}

impl AddrMap {
    pub fn new(cfg: &crate::config::GpuConfig) -> AddrMap {
        let channels = cfg.dram.channels as u64;
        let banks = cfg.l2.banks as u64;
        let shift = |x: u64| {
            if x.is_power_of_two() {
                x.trailing_zeros()
            } else {
                u32::MAX
            }
        };
        AddrMap {
            il_shift: shift(cfg.dram.interleave_bytes as u64),
            line_shift: shift(cfg.l2.line_bytes as u64),
            row_shift: shift(cfg.dram.row_bytes as u64),
            dbank_shift: shift(cfg.dram.banks as u64),
            interleave: cfg.dram.interleave_bytes as u64,
            channels,
            banks,
            // (written without `%` so clippy does not ask for `is_multiple_of`, newer than
            // the workspace MSRV)
            subs: if banks / channels * channels == banks {
                banks / channels
            } else {
                0
            },
            line_bytes: cfg.l2.line_bytes as u64,
            row_bytes: cfg.dram.row_bytes as u64,
            dram_banks: cfg.dram.banks as u64,
        }
    }

    /// `x / d` where `shift` is log2(d) or `u32::MAX`.
    #[inline]
    fn div(x: u64, d: u64, shift: u32) -> u64 {
        if shift != u32::MAX {
            x >> shift
        } else {
            x / d
        }
    }

    /// `x % d` where `shift` is log2(d) or `u32::MAX`.
    #[inline]
    fn rem(x: u64, d: u64, shift: u32) -> u64 {
        if shift != u32::MAX {
            x & (d - 1)
        } else {
            x % d
        }
    }

    /// (chunk number, offset in chunk) of a byte address.
    #[inline]
    fn chunk(&self, addr: u64) -> (u64, u64) {
        (
            Self::div(addr, self.interleave, self.il_shift),
            Self::rem(addr, self.interleave, self.il_shift),
        )
    }

    /// L2 bank of a byte address.
    pub fn bank(&self, addr: u64) -> usize {
        let c = self.chunk(addr).0;
        if self.subs == 0 {
            return (c % self.banks) as usize;
        }
        let ch = c % self.channels;
        let sub = (c / self.channels) % self.subs;
        (ch * self.subs + sub) as usize
    }

    /// DRAM channel serving L2 bank `bank`.
    pub fn channel_of_bank(&self, bank: usize) -> usize {
        if self.subs == 0 {
            bank % self.channels as usize
        } else {
            bank / self.subs as usize
        }
    }

    /// Line number inside the bank (set-index key).
    pub fn bank_key(&self, addr: u64) -> u64 {
        let (c, off) = self.chunk(addr);
        let per = if self.subs == 0 {
            self.banks
        } else {
            self.channels * self.subs
        };
        Self::div(
            (c / per) * self.interleave + off,
            self.line_bytes,
            self.line_shift,
        )
    }

    /// (DRAM bank, row) of a byte address inside its channel.
    pub fn dram_bank_row(&self, addr: u64) -> (u16, u32) {
        let (c, off) = self.chunk(addr);
        let local = (c / self.channels) * self.interleave + off;
        let page = Self::div(local, self.row_bytes, self.row_shift);
        (
            Self::rem(page, self.dram_banks, self.dbank_shift) as u16,
            Self::div(page, self.dram_banks, self.dbank_shift) as u32,
        )
    }
}

/// One L2 bank.
#[derive(Debug, Clone)]
pub struct L2Bank {
    pub id: u16,
    pub tags: TagArray<Policy>,
    pub mshr: MshrTable<Packet>,
    /// Sectors being fetched per MSHR entry.
    fetch: Vec<u32>,
    /// Requests from the network: (cycle they reach the tag array, packet); non-decreasing.
    pub input: VecDeque<(u64, Packet)>,
    /// Replies waiting for the bank's output port.
    pub replies: VecDeque<Packet>,
    /// DRAM requests waiting for room in the channel queue.
    pub to_dram: VecDeque<DramReq>,
    /// The head request stalled and nothing it depends on has changed since (the caller
    /// clears this when it pops `replies` or `to_dram`).
    pub stalled: bool,
    full: u32,
}

/// Outcome of one tag-array cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Nothing ready.
    Idle,
    /// The head request was consumed.
    Done,
    /// The head request is ready but blocked.
    Stalled,
}

impl L2Bank {
    pub fn new(id: u16, cfg: &crate::config::GpuConfig) -> L2Bank {
        let c = &cfg.l2;
        let sets = (c.size_bytes / c.banks / (c.assoc * c.line_bytes)) as usize;
        let q = cfg.icnt.queue as usize + c.hit_latency as usize;
        let sectors = c.line_bytes / SECTOR_BYTES;
        L2Bank {
            id,
            tags: TagArray::with_policy(
                sets,
                c.assoc as usize,
                Policy::new(c.replacement, sets * c.assoc as usize),
            ),
            mshr: MshrTable::new(c.mshrs as usize, c.mshr_merge as usize),
            fetch: vec![0; c.mshrs as usize],
            input: VecDeque::with_capacity(q + 1),
            replies: VecDeque::with_capacity(q + c.mshrs as usize * c.mshr_merge as usize),
            to_dram: VecDeque::with_capacity(cfg.dram.queue as usize + c.mshrs as usize + 1),
            stalled: false,
            full: if sectors >= 32 {
                u32::MAX
            } else {
                (1 << sectors) - 1
            },
        }
    }

    /// Anything queued or outstanding in this bank?
    pub fn busy(&self) -> bool {
        !self.input.is_empty()
            || !self.replies.is_empty()
            || !self.to_dram.is_empty()
            || self.mshr.used() > 0
    }

    /// The cache hooks' name of this bank.
    #[inline]
    fn cache_id(&self) -> CacheId {
        CacheId::L2 {
            bank: self.id as u32,
        }
    }

    /// Allocate `line_addr` in `set` with the given sectors (a fill, or a store's write
    /// allocation), calling the eviction and fill hooks. Returns the line and the victim.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn allocate<H: GpuHooks>(
        &mut self,
        set: usize,
        line_addr: u64,
        valid: u32,
        dirty: u32,
        now: u64,
        hooks: &mut H,
    ) -> (usize, Option<Victim>) {
        let (i, v) = self.tags.insert(set, line_addr, valid, dirty);
        let way = self.tags.way_of(i) as u32;
        if let Some(v) = v {
            hooks.on_cache_evict(&CacheEvict {
                cache: self.cache_id(),
                now,
                line_addr: v.line_addr,
                set: set as u32,
                way,
                dirty: v.dirty,
                cause: EvictCause::Replaced,
            });
        }
        hooks.on_cache_fill(&CacheFill {
            cache: self.cache_id(),
            now,
            line_addr,
            set: set as u32,
            way,
            sectors: valid | dirty,
            allocated: true,
        });
        (i, v)
    }

    fn writeback(&mut self, v: Victim, map: &AddrMap, stats: &mut MemStats) -> bool {
        if v.dirty == 0 {
            return false;
        }
        let (b, row) = map.dram_bank_row(v.line_addr);
        let bytes = v.dirty.count_ones() * SECTOR_BYTES;
        self.to_dram
            .push_back(DramReq::new(true, bytes, b, row, self.id, 0));
        stats.l2_writebacks += 1;
        true
    }

    /// One tag-array cycle: serve the head request if it has reached the tag array.
    /// `reply_cap`/`dram_cap` bound the reply and DRAM queues. Returns what happened and how
    /// many queue items were created (replies + DRAM requests), for liveness accounting.
    pub fn step<H: GpuHooks>(
        &mut self,
        now: u64,
        map: &AddrMap,
        reply_cap: usize,
        dram_cap: usize,
        stats: &mut MemStats,
        hooks: &mut H,
    ) -> (Step, u32) {
        let Some(&(ready, p)) = self.input.front() else {
            return (Step::Idle, 0);
        };
        if ready > now {
            return (Step::Idle, 0);
        }
        if self.stalled {
            // same head, same tags / MSHRs / queue lengths: same verdict
            stats.l2_stall_cycles += 1;
            return (Step::Stalled, 0);
        }
        // (the stall checks below read no tag state: test them before the lookup)
        let mut created = 0;
        if p.kind == PacketKind::Store {
            if self.to_dram.len() >= dram_cap {
                stats.l2_stall_cycles += 1;
                self.stalled = true;
                return (Step::Stalled, 0);
            }
            let set = self.tags.set_of(map.bank_key(p.line_addr));
            let line = self.tags.probe(set, p.line_addr);
            stats.l2_accesses += 1;
            match line {
                Some(i) => {
                    stats.l2_hits += 1;
                    self.tags.update(i, 0, p.sectors);
                    self.tags.touch(i);
                }
                None => {
                    stats.l2_misses += 1;
                    hooks.on_cache_miss(&CacheMiss {
                        cache: self.cache_id(),
                        now,
                        line_addr: p.line_addr,
                        set: set as u32,
                        kind: MissKind::WriteAllocate,
                    });
                    let (_, v) = self.allocate(set, p.line_addr, 0, p.sectors, now, hooks);
                    if let Some(v) = v {
                        created += self.writeback(v, map, stats) as u32;
                    }
                }
            }
            self.input.pop_front();
            return (Step::Done, created);
        }
        // load / atomic
        if self.replies.len() >= reply_cap {
            stats.l2_stall_cycles += 1;
            self.stalled = true;
            return (Step::Stalled, 0);
        }
        let set = self.tags.set_of(map.bank_key(p.line_addr));
        let line = self.tags.probe(set, p.line_addr);
        let valid = line.map_or(0, |i| self.tags.valid_sectors(i));
        if let Some(i) = line.filter(|_| valid & p.sectors == p.sectors) {
            stats.l2_accesses += 1;
            stats.l2_hits += 1;
            self.tags.touch(i);
            if p.kind == PacketKind::Atomic {
                self.tags.update(i, 0, p.sectors);
            }
            self.replies.push_back(p);
            self.input.pop_front();
            return (Step::Done, 1);
        }
        let kind = match self.mshr.find(p.line_addr) {
            Some(m) if self.mshr.can_merge(m) => {
                self.mshr.merge(m, p);
                stats.l2_mshr_merges += 1;
                MissKind::Merged
            }
            None if !self.mshr.is_full() && self.to_dram.len() < dram_cap => {
                let m = self.mshr.allocate(p.line_addr, p);
                let fetch = self.full & !valid;
                self.fetch[m as usize] = fetch;
                let (b, row) = map.dram_bank_row(p.line_addr);
                let bytes = fetch.count_ones() * SECTOR_BYTES;
                self.to_dram
                    .push_back(DramReq::new(false, bytes, b, row, self.id, m));
                created += 1;
                MissKind::NewMshr
            }
            _ => {
                stats.l2_stall_cycles += 1;
                self.stalled = true;
                return (Step::Stalled, 0);
            }
        };
        stats.l2_accesses += 1;
        stats.l2_misses += 1;
        hooks.on_cache_miss(&CacheMiss {
            cache: self.cache_id(),
            now,
            line_addr: p.line_addr,
            set: set as u32,
            kind,
        });
        self.input.pop_front();
        (Step::Done, created)
    }

    /// DRAM data for MSHR `m` arrived: fill the line, queue replies for every waiter.
    /// Returns the number of queue items created (replies + writebacks).
    pub fn fill<H: GpuHooks>(
        &mut self,
        m: MshrIdx,
        map: &AddrMap,
        scratch: &mut Vec<Packet>,
        stats: &mut MemStats,
        now: u64,
        hooks: &mut H,
    ) -> u32 {
        self.stalled = false;
        let line_addr = self.mshr.line_of(m);
        let fetch = self.fetch[m as usize];
        let set = self.tags.set_of(map.bank_key(line_addr));
        let mut created = 0;
        let i = match self.tags.probe(set, line_addr) {
            Some(i) => {
                self.tags.update(i, fetch, 0);
                hooks.on_cache_fill(&CacheFill {
                    cache: self.cache_id(),
                    now,
                    line_addr,
                    set: set as u32,
                    way: self.tags.way_of(i) as u32,
                    sectors: fetch,
                    allocated: false,
                });
                i
            }
            None => {
                let (i, v) = self.allocate(set, line_addr, fetch, 0, now, hooks);
                if let Some(v) = v {
                    created += self.writeback(v, map, stats) as u32;
                }
                i
            }
        };
        scratch.clear();
        self.mshr.release(m, scratch);
        for p in scratch.iter() {
            if p.kind == PacketKind::Atomic {
                self.tags.update(i, 0, p.sectors);
            }
            self.replies.push_back(*p);
            created += 1;
        }
        created
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::GpuConfig;

    #[test]
    fn address_map_gtx480() {
        let cfg = GpuConfig::preset("gtx480", &[]).unwrap();
        let m = AddrMap::new(&cfg);
        // 256 B chunks: channel = chunk % 6, sub = (chunk / 6) % 2, bank = 2 * ch + sub.
        assert_eq!(m.bank(0), 0);
        assert_eq!(m.bank(128), 0, "two lines per chunk");
        assert_eq!(m.bank(256), 2);
        assert_eq!(m.bank(5 * 256), 10);
        assert_eq!(m.bank(6 * 256), 1);
        assert_eq!(m.bank(12 * 256), 0);
        assert_eq!(m.channel_of_bank(1), 0);
        assert_eq!(m.channel_of_bank(11), 5);
        // All 12 banks used evenly by a linear sweep.
        let mut count = [0; 12];
        for a in (0..12 * 256 * 10).step_by(128) {
            count[m.bank(a)] += 1;
        }
        assert!(count.iter().all(|&c| c == 20), "{count:?}");
        // Bank-local keys are dense: chunk 12 (bank 0) is bank-local lines 2, 3.
        assert_eq!(m.bank_key(12 * 256), 2);
        assert_eq!(m.bank_key(12 * 256 + 128), 3);
        // DRAM: channel-local address drops the channel bits.
        assert_eq!(m.dram_bank_row(0), (0, 0));
        assert_eq!(m.dram_bank_row(6 * 256 * 8), (1, 0));
        assert_eq!(m.dram_bank_row(6 * 256 * 8 * 16), (0, 1));
    }
}
