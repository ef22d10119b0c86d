//! One DRAM channel: a bounded scheduler queue, banks with an open row each, and one
//! command per DRAM clock.
//!
//! All times in this module are DRAM clock cycles (the caller converts to core cycles).
//!
//! Per DRAM cycle the controller issues at most one command, chosen as follows:
//! 1. Column (READ/WRITE): the oldest queued request whose row is open in its bank, with
//!    `tRCD` elapsed since the activate, `tCCD` since the previous column command, and the
//!    data bus free when its data would start (`now + tCL` for reads, `now + tWL` for
//!    writes). With FR-FCFS any queued request is eligible (row hits first, then oldest);
//!    with FCFS only the oldest request.
//! 2. Otherwise a row command for the oldest request (FCFS: only the oldest) that needs one:
//!    PRECHARGE if another row is open and `tRAS` has elapsed since its activate (FR-FCFS
//!    does not close a row that still has queued hits); ACTIVATE if the bank is closed,
//!    `tRP` has elapsed since the precharge and `tRRD` since the channel's last activate.
//!
//! A burst moves `bytes` over the data bus in `ceil(bytes / bytes_per_cycle)` cycles. A read
//! completes when its last data beat is on the bus (`column + tCL + burst`). Not modelled:
//! refresh, tWR/tWTR/tRTP turnarounds, tFAW, bank groups (ignored by the seed, [L1862]).
//!
//! Address mapping (inside a channel, the channel bits already removed by the L2 address
//! map): `col = a % row_bytes`, `bank = (a / row_bytes) % banks`,
//! `row = a / (row_bytes * banks)`; consecutive rows of one bank are `row_bytes * banks`
//! apart, so a streaming access sweeps all banks before reopening one.

use std::collections::VecDeque;

use crate::config::DramConfig;

const NO_ROW: u32 = u32::MAX;

/// DRAM timing parameters in DRAM clocks.
#[derive(Debug, Clone, Copy)]
pub struct DramTiming {
    pub t_rcd: u64,
    pub t_rp: u64,
    pub t_ras: u64,
    pub t_cl: u64,
    pub t_wl: u64,
    pub t_ccd: u64,
    pub t_rrd: u64,
    pub bytes_per_cycle: u32,
}

impl DramTiming {
    pub fn from_config(d: &DramConfig) -> DramTiming {
        DramTiming {
            t_rcd: d.t_rcd as u64,
            t_rp: d.t_rp as u64,
            t_ras: d.t_ras as u64,
            t_cl: d.t_cl as u64,
            t_wl: d.t_wl as u64,
            t_ccd: d.t_ccd as u64,
            t_rrd: d.t_rrd as u64,
            bytes_per_cycle: d.bytes_per_cycle,
        }
    }

    /// Data-bus cycles of a burst of `bytes`.
    pub fn burst(&self, bytes: u32) -> u64 {
        bytes.max(1).div_ceil(self.bytes_per_cycle) as u64
    }
}

/// One request in a channel queue. `owner`/`tag` are opaque to the channel and returned
/// with a completed read (the L2 bank and its MSHR).
#[derive(Debug, Clone, Copy)]
pub struct DramReq {
    pub write: bool,
    pub bytes: u32,
    pub bank: u16,
    pub row: u32,
    pub owner: u16,
    pub tag: u16,
    activated: bool,
}

impl DramReq {
    pub fn new(write: bool, bytes: u32, bank: u16, row: u32, owner: u16, tag: u16) -> DramReq {
        DramReq {
            write,
            bytes,
            bank,
            row,
            owner,
            tag,
            activated: false,
        }
    }
}

/// Per-request outcome counters, added to the hierarchy's stats by the caller.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DramCounters {
    pub reads: u64,
    pub writes: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub row_hits: u64,
    pub row_misses: u64,
    pub activates: u64,
    pub precharges: u64,
}

#[derive(Debug, Clone, Copy)]
struct Bank {
    open: u32,
    /// Earliest ACT (precharge done).
    act_ready: u64,
    /// Earliest column command (ACT + tRCD).
    col_ready: u64,
    /// Earliest PRE (ACT + tRAS).
    pre_ready: u64,
}

#[derive(Debug, Clone)]
pub struct Channel {
    t: DramTiming,
    fr_fcfs: bool,
    cap: usize,
    row_bytes: u64,
    nbanks: u64,
    queue: Vec<DramReq>,
    banks: Vec<Bank>,
    next_act: u64,
    next_col: u64,
    bus_free: u64,
    /// Reads whose data is on the bus: (last data cycle, owner, tag); non-decreasing.
    returns: VecDeque<(u64, u16, u16)>,
    /// Per DRAM bank: queued requests for its open row (FR-FCFS row-hit candidates).
    open_hits: Vec<u16>,
    /// Lower bound on the next DRAM cycle at which `schedule` can issue a command (the
    /// eligibility conditions are all `now >= x` on state that only commands and pushes
    /// change); `u64::MAX` when nothing can issue until the next push.
    wake: u64,
    pub counters: DramCounters,
}

impl Channel {
    pub fn new(d: &DramConfig) -> Channel {
        let cap = d.queue as usize;
        Channel {
            t: DramTiming::from_config(d),
            fr_fcfs: d.scheduler == "fr_fcfs",
            cap,
            row_bytes: d.row_bytes as u64,
            nbanks: d.banks as u64,
            queue: Vec::with_capacity(cap),
            banks: vec![
                Bank {
                    open: NO_ROW,
                    act_ready: 0,
                    col_ready: 0,
                    pre_ready: 0
                };
                d.banks as usize
            ],
            next_act: 0,
            next_col: 0,
            bus_free: 0,
            returns: VecDeque::with_capacity(cap * 2),
            open_hits: vec![0; d.banks as usize],
            wake: 0,
            counters: DramCounters::default(),
        }
    }

    /// (bank, row) of a channel-local byte address.
    pub fn map(&self, local_addr: u64) -> (u16, u32) {
        let page = local_addr / self.row_bytes;
        ((page % self.nbanks) as u16, (page / self.nbanks) as u32)
    }

    pub fn timing(&self) -> &DramTiming {
        &self.t
    }

    pub fn can_accept(&self) -> bool {
        self.queue.len() < self.cap
    }

    /// Queue a request (caller checked `can_accept`).
    pub fn push(&mut self, r: DramReq) {
        debug_assert!(self.can_accept());
        let b = &self.banks[r.bank as usize];
        if b.open == r.row {
            self.open_hits[r.bank as usize] += 1;
        }
        // Only the new request can have become eligible (a new row hit only delays a PRE).
        if self.fr_fcfs || self.queue.is_empty() {
            let w = self.ready_at(&r);
            self.wake = self.wake.min(w);
        }
        self.queue.push(r);
    }

    /// Earliest DRAM cycle at which `r` could get a command, the current state unchanged.
    #[inline]
    fn ready_at(&self, r: &DramReq) -> u64 {
        let t = &self.t;
        let b = &self.banks[r.bank as usize];
        if b.open == r.row {
            let lat = if r.write { t.t_wl } else { t.t_cl };
            self.next_col
                .max(b.col_ready)
                .max(self.bus_free.saturating_sub(lat))
        } else if b.open != NO_ROW {
            if self.fr_fcfs && self.open_hits[r.bank as usize] > 0 {
                u64::MAX
            } else {
                b.pre_ready
            }
        } else {
            b.act_ready.max(self.next_act)
        }
    }

    fn recompute_wake(&mut self, now: u64) {
        let limit = if self.fr_fcfs { self.queue.len() } else { 1 };
        let mut w = u64::MAX;
        for r in &self.queue[..limit.min(self.queue.len())] {
            w = w.min(self.ready_at(r));
        }
        self.wake = w.max(now + 1);
    }

    /// The next DRAM cycle at which `tick` has something to do (`u64::MAX`: idle).
    #[inline]
    pub fn next_event(&self) -> u64 {
        let w = if self.queue.is_empty() {
            u64::MAX
        } else {
            self.wake
        };
        match self.returns.front() {
            Some(&(t, _, _)) => w.min(t),
            None => w,
        }
    }

    /// [`tick`](Self::tick) every DRAM cycle `from ..= to`, skipping cycles with nothing to
    /// do. Same outcome as the per-cycle loop.
    pub fn tick_range(&mut self, from: u64, to: u64, done: &mut Vec<(u16, u16)>) {
        let mut d = from.max(self.wake);
        while d <= to && !self.queue.is_empty() {
            self.schedule(d);
            d = (d + 1).max(self.wake);
        }
        while let Some(&(t, o, g)) = self.returns.front() {
            if t > to {
                break;
            }
            self.returns.pop_front();
            done.push((o, g));
        }
    }

    /// Anything queued or on the bus?
    pub fn busy(&self) -> bool {
        !self.queue.is_empty() || !self.returns.is_empty()
    }

    pub fn queued(&self) -> usize {
        self.queue.len()
    }

    /// Advance to DRAM cycle `now`: issue at most one command, then append the (owner, tag)
    /// of every read whose data has fully arrived by `now` to `done`.
    pub fn tick(&mut self, now: u64, done: &mut Vec<(u16, u16)>) {
        if !self.queue.is_empty() && now >= self.wake {
            self.schedule(now);
        }
        while let Some(&(t, o, g)) = self.returns.front() {
            if t > now {
                break;
            }
            self.returns.pop_front();
            done.push((o, g));
        }
    }

    fn schedule(&mut self, now: u64) {
        self.schedule_inner(now);
        self.recompute_wake(now);
    }

    fn schedule_inner(&mut self, now: u64) {
        let t = self.t;
        // 1. column command
        if now >= self.next_col {
            let limit = if self.fr_fcfs { self.queue.len() } else { 1 };
            for i in 0..limit {
                let r = self.queue[i];
                let b = &self.banks[r.bank as usize];
                let lat = if r.write { t.t_wl } else { t.t_cl };
                if b.open == r.row && now >= b.col_ready && now + lat >= self.bus_free {
                    self.queue.remove(i);
                    self.open_hits[r.bank as usize] -= 1;
                    let start = now + lat;
                    let end = start + t.burst(r.bytes);
                    self.bus_free = end;
                    self.next_col = now + t.t_ccd;
                    let c = &mut self.counters;
                    if r.activated {
                        c.row_misses += 1;
                    } else {
                        c.row_hits += 1;
                    }
                    if r.write {
                        c.writes += 1;
                        c.write_bytes += r.bytes as u64;
                    } else {
                        c.reads += 1;
                        c.read_bytes += r.bytes as u64;
                        self.returns.push_back((end, r.owner, r.tag));
                    }
                    return;
                }
            }
        }
        // 2. row command
        let limit = if self.fr_fcfs { self.queue.len() } else { 1 };
        for i in 0..limit {
            let r = self.queue[i];
            let b = self.banks[r.bank as usize];
            if b.open == r.row {
                continue; // waiting on tRCD / bus: nothing to do for this one
            }
            if b.open != NO_ROW {
                if now < b.pre_ready {
                    continue;
                }
                if self.fr_fcfs && self.open_hits[r.bank as usize] > 0 {
                    continue;
                }
                self.open_hits[r.bank as usize] = 0;
                let bank = &mut self.banks[r.bank as usize];
                bank.open = NO_ROW;
                bank.act_ready = now + t.t_rp;
                self.counters.precharges += 1;
                return;
            }
            if now >= b.act_ready && now >= self.next_act {
                let (bk, row) = (r.bank, r.row);
                self.open_hits[bk as usize] = self
                    .queue
                    .iter()
                    .filter(|q| q.bank == bk && q.row == row)
                    .count() as u16;
                let bank = &mut self.banks[r.bank as usize];
                bank.open = r.row;
                bank.col_ready = now + t.t_rcd;
                bank.pre_ready = now + t.t_ras;
                self.next_act = now + t.t_rrd;
                self.queue[i].activated = true;
                self.counters.activates += 1;
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::GpuConfig;

    fn chan(sched: &str) -> Channel {
        let mut d = GpuConfig::preset("gtx480", &[]).unwrap().dram;
        d.scheduler = sched.into();
        Channel::new(&d)
    }

    /// Run until the queue drains; returns the DRAM cycle each read completed, by tag.
    fn run(c: &mut Channel, start: u64) -> Vec<(u16, u64)> {
        let mut out = Vec::new();
        let mut done = Vec::new();
        let mut now = start;
        while c.busy() {
            c.tick(now, &mut done);
            for (_, tag) in done.drain(..) {
                out.push((tag, now));
            }
            now += 1;
            assert!(now < start + 100_000);
        }
        out
    }

    #[test]
    fn address_mapping() {
        let c = chan("fr_fcfs");
        assert_eq!(c.map(0), (0, 0));
        assert_eq!(c.map(2048), (1, 0));
        assert_eq!(c.map(16 * 2048 + 5), (0, 1));
    }

    #[test]
    fn cold_read_latency_and_row_hit_faster_than_miss() {
        let t = chan("fr_fcfs").t;
        // Closed bank: ACT at 0, READ at tRCD, data end at tRCD + tCL + burst.
        let mut c = chan("fr_fcfs");
        c.push(DramReq::new(false, 128, 0, 7, 0, 1));
        let r = run(&mut c, 0);
        let miss_closed = t.t_rcd + t.t_cl + 4;
        assert_eq!(r, vec![(1, miss_closed)]);
        assert_eq!(
            (
                c.counters.activates,
                c.counters.row_misses,
                c.counters.read_bytes
            ),
            (1, 1, 128)
        );
        // Row hit on the now open row.
        let s = 1000;
        c.push(DramReq::new(false, 128, 0, 7, 0, 2));
        let r = run(&mut c, s);
        assert_eq!(r, vec![(2, s + t.t_cl + 4)]);
        assert_eq!(c.counters.row_hits, 1);
        // Row conflict: PRE + ACT + READ.
        let s = 2000;
        c.push(DramReq::new(false, 128, 0, 9, 0, 3));
        let r = run(&mut c, s);
        assert_eq!(r, vec![(3, s + t.t_rp + t.t_rcd + t.t_cl + 4)]);
        assert!(t.t_cl + 4 < miss_closed && miss_closed < t.t_rp + t.t_rcd + t.t_cl + 4);
        assert_eq!(c.counters.precharges, 1);
    }

    #[test]
    fn fr_fcfs_serves_younger_row_hit_before_older_miss() {
        for (sched, hit_first) in [("fr_fcfs", true), ("fcfs", false)] {
            let mut c = chan(sched);
            // Open row 1 in bank 0.
            c.push(DramReq::new(false, 128, 0, 1, 0, 0));
            run(&mut c, 0);
            // Older request: row 2 (conflict); younger: row 1 (hit).
            c.push(DramReq::new(false, 128, 0, 2, 0, 10));
            c.push(DramReq::new(false, 128, 0, 1, 0, 11));
            let r = run(&mut c, 500);
            let order: Vec<u16> = r.iter().map(|x| x.0).collect();
            if hit_first {
                assert_eq!(order, vec![11, 10], "{sched}");
            } else {
                assert_eq!(order, vec![10, 11], "{sched}");
            }
        }
    }

    #[test]
    fn streaming_row_hits_saturate_the_bus() {
        let mut c = chan("fr_fcfs");
        let mut done = Vec::new();
        let mut finished = 0u64;
        let mut next = 0u64;
        let n = 2000u64;
        let mut now = 0;
        let mut last = 0;
        while finished < n {
            while next < n && c.can_accept() {
                let (b, row) = c.map(next * 128);
                c.push(DramReq::new(false, 128, b, row, 0, 0));
                next += 1;
            }
            c.tick(now, &mut done);
            finished += done.len() as u64;
            if !done.is_empty() {
                last = now;
            }
            done.clear();
            now += 1;
        }
        // 4 bus cycles per 128 B line at 32 B/cycle.
        let ideal = n * 4;
        assert!(last >= ideal);
        let eff = ideal as f64 / last as f64;
        assert!(eff > 0.9, "bus efficiency {eff}");
        assert!(c.counters.row_hits > c.counters.row_misses * 10);
    }

    #[test]
    fn writes_count_bytes_and_do_not_return() {
        let mut c = chan("fr_fcfs");
        c.push(DramReq::new(true, 96, 3, 0, 0, 0));
        assert!(run(&mut c, 0).is_empty());
        assert_eq!((c.counters.writes, c.counters.write_bytes), (1, 96));
    }
}
