//! Named counters with interval snapshots: what power and DVFS models read, by name, without
//! reaching into an SM's, a cache's or a unit's internals.
//!
//! A counter is a `u64` with a dotted name (`sm3.warp_instructions`, `sm3.stall.fetch`,
//! `l2.bank5.hits`, `dram.ch2.read_bytes`, `mem.l2_misses`). Values count within the current
//! kernel launch (every counter is 0 when a launch starts), so `KernelStats::counters` holds
//! the final values of a launch.
//!
//! Two kinds, one namespace:
//! - **Built-in** counters mirror the model's own statistics. They are *sampled*: copied from
//!   the SMs' `KernelStats` and register-file bank counters (`sm3.rf.bank5.reads`), the unit hosts' activity counters of every unit instance
//!   (`sm3.simt_stack_spe.ev_div`, `sm3.dpe_scoreboard.active_cycles`), the memory
//!   hierarchy's per-SM / per-bank / per-channel counters and the SM clock domains at each
//!   interval boundary and at the end of a launch. The hot
//!   loop pays nothing for them: the model keeps counting in its plain structs.
//! - **Owned** counters belong to code outside the model's core (a power model's events). The producer registers a name once
//!   ([`Counters::register`] -> [`CounterId`]) and increments by index ([`Counters::add`]): no
//!   string lookup per cycle.
//!
//! Interval snapshots (`sim.interval_cycles` base ticks, 0 = off): at every boundary the
//! counters are sampled and the delta of every counter since the previous boundary is stored
//! ([`Intervals`]); a last, shorter interval ends with the launch, so the deltas of every
//! counter sum to its final value. The interval hook (a DVFS controller) runs right after
//! each snapshot and may change SM clocks (`timing::IntervalHook`).

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::ser::{SerializeMap, SerializeStruct};
use serde::{Serialize, Serializer};

use crate::memory::MemoryHierarchy;
use crate::stats::KernelStats;
use crate::timing::clock::Clocks;
use crate::timing::sm::Sm;

/// Index of a counter in its registry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CounterId(u32);

/// A named field of a statistics struct: (name, getter).
type Field<T> = (&'static str, fn(&T) -> u64);

/// The fields of each SM's built-in counters `sm<i>.<name>`, read from its per-launch stats.
const SM_FIELDS: &[Field<KernelStats>] = &[
    ("warp_instructions", |s| s.warp_instructions),
    ("thread_instructions", |s| s.thread_instructions),
    ("divergent_branches", |s| s.divergent_branches),
    ("issued_paths", |s| s.issued_paths),
    ("deferred_releases", |s| s.deferred_releases),
    ("shared_accesses", |s| s.mem.shared_accesses),
    ("shared_conflict_cycles", |s| s.mem.shared_conflict_cycles),
    ("stall.idle", |s| s.stalls.idle),
    ("stall.fetch", |s| s.stalls.fetch),
    ("stall.barrier", |s| s.stalls.barrier),
    ("stall.mem_data", |s| s.stalls.memory_data),
    ("stall.alu_data", |s| s.stalls.alu_data),
    ("stall.pipe_busy", |s| s.stalls.pipe_busy),
    ("stall.lsu_busy", |s| s.stalls.lsu_busy),
];

/// Per-SM counters kept by the memory hierarchy: `sm<i>.l1.<name>`.
const SM_MEM_FIELDS: &[Field<crate::memory::SmMemCounters>] = &[
    ("load_accesses", |c| c.l1_load_accesses),
    ("load_hits", |c| c.l1_load_hits),
    ("transactions", |c| c.transactions),
];

/// Per L2 bank: `l2.bank<b>.<name>`.
const BANK_FIELDS: &[Field<crate::memory::MemStats>] = &[
    ("accesses", |s| s.l2_accesses),
    ("hits", |s| s.l2_hits),
    ("misses", |s| s.l2_misses),
    ("mshr_merges", |s| s.l2_mshr_merges),
    ("writebacks", |s| s.l2_writebacks),
    ("stall_cycles", |s| s.l2_stall_cycles),
];

/// Per DRAM channel: `dram.ch<c>.<name>`.
const CHANNEL_FIELDS: &[Field<crate::memory::dram::DramCounters>] = &[
    ("reads", |c| c.reads),
    ("writes", |c| c.writes),
    ("read_bytes", |c| c.read_bytes),
    ("write_bytes", |c| c.write_bytes),
    ("row_hits", |c| c.row_hits),
    ("row_misses", |c| c.row_misses),
    ("activates", |c| c.activates),
    ("precharges", |c| c.precharges),
];

/// The model's statistics, visited in the one fixed order that both the built-in names and
/// their sampled values follow (so names and values cannot drift apart).
fn visit_builtin(
    sms: &[Sm],
    mem: &MemoryHierarchy,
    clocks: &Clocks,
    f: &mut dyn FnMut(&dyn Fn() -> String, u64),
) {
    for (i, sm) in sms.iter().enumerate() {
        // Ticks of the SM's own clock (its cycles, at its frequency).
        f(&|| format!("sm{i}.cycles"), clocks.sms[i].cycles);
        for (n, get) in SM_FIELDS {
            f(&|| format!("sm{i}.{n}"), get(&sm.stats));
        }
        // Register-file banks (`timing::rf`). A bank's idle cycles are the SM's cycles
        // without an access to it: sampled as (the SM's clock) - (its busy cycles), which the
        // launch base and the interval deltas turn into the cycles of the launch/interval.
        let rf = &sm.rf;
        f(&|| format!("sm{i}.rf.reads"), rf.total_reads());
        f(&|| format!("sm{i}.rf.writes"), rf.total_writes());
        f(&|| format!("sm{i}.rf.conflict_cycles"), rf.conflict_cycles);
        for b in 0..rf.num_banks() {
            f(&|| format!("sm{i}.rf.bank{b}.reads"), rf.reads(b));
            f(&|| format!("sm{i}.rf.bank{b}.writes"), rf.writes(b));
            f(
                &|| format!("sm{i}.rf.bank{b}.idle_cycles"),
                clocks.sms[i].cycles.wrapping_sub(rf.busy_cycles(b)),
            );
        }
        let c = mem.sm_counters(i);
        for (n, get) in SM_MEM_FIELDS {
            f(&|| format!("sm{i}.l1.{n}"), get(&c));
        }
        // The unit host's activity counters of every unit instance of the SM, per unit kind:
        // edges with non-idle inputs and each event port's set bits.
        for a in sm.unit_activity() {
            let u = a.unit;
            f(&|| format!("sm{i}.{u}.active_cycles"), a.active_cycles);
            for (e, v) in &a.events {
                f(&|| format!("sm{i}.{u}.{e}"), *v);
            }
        }
    }
    for b in 0..mem.num_banks() {
        let s = mem.bank_stats(b);
        for (n, get) in BANK_FIELDS {
            f(&|| format!("l2.bank{b}.{n}"), get(s));
        }
    }
    for ch in 0..mem.num_channels() {
        let c = mem.channel_counters(ch);
        for (n, get) in CHANNEL_FIELDS {
            f(&|| format!("dram.ch{ch}.{n}"), get(c));
        }
    }
    mem.stats().for_each(|n, v| f(&|| format!("mem.{n}"), v));
}

/// The registry: every counter's name and value in the current launch.
#[derive(Debug, Clone, Default)]
pub struct Counters {
    names: Vec<String>,
    index: BTreeMap<String, u32>,
    values: Vec<u64>,
    /// Counters `0..builtin` are the sampled built-in ones.
    builtin: usize,
    /// Raw built-in values when the launch started (the memory's counters are cumulative).
    launch_base: Vec<u64>,
    /// Every counter's value at the last interval boundary.
    last_snapshot: Vec<u64>,
    last_boundary: u64,
    intervals: Intervals,
    scratch: Vec<u64>,
}

impl Counters {
    /// A registry holding the built-in counters of this model instance.
    pub fn new(sms: &[Sm], mem: &MemoryHierarchy, clocks: &Clocks) -> Counters {
        let mut c = Counters::default();
        visit_builtin(sms, mem, clocks, &mut |name, _| {
            c.insert(name());
        });
        c.builtin = c.names.len();
        c
    }

    fn insert(&mut self, name: String) -> CounterId {
        let id = self.names.len() as u32;
        self.index.insert(name.clone(), id);
        self.names.push(name);
        self.values.push(0);
        CounterId(id)
    }

    /// Register an owned counter (or find the owned counter already registered under this
    /// name). A built-in name is refused: its value is overwritten at every sample.
    pub fn register(&mut self, name: &str) -> Result<CounterId, String> {
        match self.index.get(name) {
            Some(&i) if (i as usize) < self.builtin => Err(format!(
                "counter `{name}` is a built-in (sampled) counter; choose another name"
            )),
            Some(&i) => Ok(CounterId(i)),
            None => {
                let id = self.insert(name.to_string());
                self.last_snapshot.push(0);
                Ok(id)
            }
        }
    }

    /// Add `n` to an owned counter (cheap: one indexed add).
    #[inline]
    pub fn add(&mut self, id: CounterId, n: u64) {
        self.values[id.0 as usize] += n;
    }

    /// The id of a counter by name.
    pub fn id(&self, name: &str) -> Option<CounterId> {
        self.index.get(name).map(|&i| CounterId(i))
    }

    /// A counter's value in the current launch, as of the last sample (built-in counters are
    /// sampled at interval boundaries and at the end of a launch).
    pub fn value(&self, id: CounterId) -> u64 {
        self.values[id.0 as usize]
    }

    /// A counter's value by name.
    pub fn get(&self, name: &str) -> Option<u64> {
        self.id(name).map(|i| self.value(i))
    }

    pub fn name(&self, id: CounterId) -> &str {
        &self.names[id.0 as usize]
    }

    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// (name, value) of every counter, in registration order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, u64)> {
        self.names
            .iter()
            .map(|n| n.as_str())
            .zip(self.values.iter().copied())
    }

    /// The snapshots of the current launch.
    pub fn intervals(&self) -> &Intervals {
        &self.intervals
    }

    fn raw(&mut self, sms: &[Sm], mem: &MemoryHierarchy, clocks: &Clocks) {
        let mut raw = std::mem::take(&mut self.scratch);
        raw.clear();
        visit_builtin(sms, mem, clocks, &mut |_, v| raw.push(v));
        debug_assert_eq!(raw.len(), self.builtin);
        self.scratch = raw;
    }

    /// A launch starts at base tick `now` (after the SMs reset their per-launch statistics):
    /// every counter restarts from 0.
    pub fn begin_launch(&mut self, now: u64, sms: &[Sm], mem: &MemoryHierarchy, clocks: &Clocks) {
        self.raw(sms, mem, clocks);
        self.launch_base.clone_from(&self.scratch);
        self.values.iter_mut().for_each(|v| *v = 0);
        self.last_snapshot.clear();
        self.last_snapshot.resize(self.names.len(), 0);
        self.last_boundary = now;
        self.intervals = Intervals {
            names: self.intervals.names.clone(),
            ..Intervals::default()
        };
        if self.intervals.names.len() != self.names.len() {
            self.intervals.names = Arc::new(self.names.clone());
        }
    }

    /// Bring the built-in counters up to date.
    pub fn sample(&mut self, sms: &[Sm], mem: &MemoryHierarchy, clocks: &Clocks) {
        self.raw(sms, mem, clocks);
        for ((v, &r), &b) in self
            .values
            .iter_mut()
            .zip(&self.scratch)
            .zip(&self.launch_base)
        {
            *v = r.wrapping_sub(b);
        }
    }

    /// Sample, then close the interval ending at base tick `now`: store every counter's
    /// delta since the previous boundary.
    pub fn snapshot(&mut self, now: u64, sms: &[Sm], mem: &MemoryHierarchy, clocks: &Clocks) {
        self.sample(sms, mem, clocks);
        if self.intervals.names.len() != self.names.len() {
            // an owned counter was registered during the launch: earlier intervals lack it
            self.intervals.names = Arc::new(self.names.clone());
            for d in &mut self.intervals.deltas {
                d.resize(self.names.len(), 0);
            }
        }
        let deltas: Vec<u64> = self
            .values
            .iter()
            .zip(&self.last_snapshot)
            .map(|(&v, &l)| v.wrapping_sub(l))
            .collect();
        self.last_snapshot.clone_from(&self.values);
        self.intervals.start.push(self.last_boundary);
        self.intervals.end.push(now);
        self.intervals.deltas.push(deltas);
        self.last_boundary = now;
    }

    /// Base tick of the last interval boundary (or of the launch start).
    pub fn last_boundary(&self) -> u64 {
        self.last_boundary
    }

    /// The final values of the launch, for `KernelStats`.
    pub fn values_snapshot(&self) -> CounterValues {
        CounterValues {
            names: if self.intervals.names.len() == self.names.len() {
                self.intervals.names.clone()
            } else {
                Arc::new(self.names.clone())
            },
            values: self.values.clone(),
        }
    }
}

/// Counter values by name; serialised as a JSON object `{name: value}` in registration order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CounterValues {
    pub names: Arc<Vec<String>>,
    pub values: Vec<u64>,
}

impl CounterValues {
    pub fn get(&self, name: &str) -> Option<u64> {
        self.names
            .iter()
            .position(|n| n == name)
            .map(|i| self.values[i])
    }

    /// Add another launch's values (same counters) for per-workload totals; values of a
    /// launch with other counters are added by name.
    pub fn accumulate(&mut self, o: &CounterValues) {
        if self.names.is_empty() {
            *self = o.clone();
        } else if self.names == o.names {
            for (a, b) in self.values.iter_mut().zip(&o.values) {
                *a += b;
            }
        } else {
            for (n, v) in o.names.iter().zip(&o.values) {
                match self.names.iter().position(|m| m == n) {
                    Some(i) => self.values[i] += v,
                    None => {
                        Arc::make_mut(&mut self.names).push(n.clone());
                        self.values.push(*v);
                    }
                }
            }
        }
    }
}

impl Serialize for CounterValues {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.values.len()))?;
        for (n, v) in self.names.iter().zip(&self.values) {
            m.serialize_entry(n, v)?;
        }
        m.end()
    }
}

/// The interval snapshots of one launch, by column: interval `j` covers base ticks
/// `[start[j], end[j])`, and `deltas[j][c]` is how much counter `c` (`names[c]`) grew in it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Intervals {
    pub names: Arc<Vec<String>>,
    pub start: Vec<u64>,
    pub end: Vec<u64>,
    pub deltas: Vec<Vec<u64>>,
}

impl Intervals {
    pub fn len(&self) -> usize {
        self.start.len()
    }

    pub fn is_empty(&self) -> bool {
        self.start.is_empty()
    }

    /// The per-interval deltas of one counter, by name.
    pub fn series(&self, name: &str) -> Option<Vec<u64>> {
        let c = self.names.iter().position(|n| n == name)?;
        Some(self.deltas.iter().map(|d| d[c]).collect())
    }
}

/// JSON: `{"start": [...], "end": [...], "counters": {name: [delta per interval]}}` (empty
/// when intervals are off).
impl Serialize for Intervals {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        struct Series<'a>(&'a Intervals);
        impl Serialize for Series<'_> {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let iv = self.0;
                let n = if iv.deltas.is_empty() {
                    0
                } else {
                    iv.names.len()
                };
                let mut m = s.serialize_map(Some(n))?;
                for c in 0..n {
                    let col: Vec<u64> = iv.deltas.iter().map(|d| d[c]).collect();
                    m.serialize_entry(&iv.names[c], &col)?;
                }
                m.end()
            }
        }
        let mut st = s.serialize_struct("Intervals", 3)?;
        st.serialize_field("start", &self.start)?;
        st.serialize_field("end", &self.end)?;
        st.serialize_field("counters", &Series(self))?;
        st.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::GpuConfig;

    #[test]
    fn owned_counters_register_once_and_add_by_index() {
        let cfg = GpuConfig::preset("gtx480", &["sm.count=2".into()]).unwrap();
        let sms: Vec<Sm> = (0..2).map(|i| Sm::new(i, &cfg)).collect();
        let mem = MemoryHierarchy::new(&cfg);
        let clocks = Clocks::new(&cfg);
        let mut c = Counters::new(&sms, &mem, &clocks);
        assert!(c.get("sm1.stall.fetch").is_some());
        assert!(c.get("l2.bank11.hits").is_some());
        assert!(c.get("dram.ch5.read_bytes").is_some());
        assert!(c.get("mem.l2_misses").is_some());
        assert!(c.register("sm0.warp_instructions").is_err());
        let a = c.register("unit.simt_stack.push").unwrap();
        assert_eq!(c.register("unit.simt_stack.push").unwrap(), a);
        c.begin_launch(0, &sms, &mem, &clocks);
        c.add(a, 3);
        c.add(a, 4);
        assert_eq!(c.get("unit.simt_stack.push"), Some(7));
        c.snapshot(100, &sms, &mem, &clocks);
        c.add(a, 1);
        c.snapshot(150, &sms, &mem, &clocks);
        let iv = c.intervals();
        assert_eq!(iv.series("unit.simt_stack.push").unwrap(), vec![7, 1]);
        assert_eq!(
            (iv.start.clone(), iv.end.clone()),
            (vec![0, 100], vec![100, 150])
        );
        assert_eq!(c.values_snapshot().get("unit.simt_stack.push"), Some(8));
        // a new launch starts every counter from 0
        c.begin_launch(150, &sms, &mem, &clocks);
        assert_eq!(c.value(a), 0);
        assert!(c.intervals().is_empty());
    }
}
