//! The generic host of a unit's instances in the GPU model (design.md §3): validated
//! construction, optional port-trace recording, and activity counters of every event port
//! of every instance (what power models read).
//!
//! A host holds every instance of one unit kind at one parameter set (every warp's stack of
//! an SM, an SM's scoreboard). The SM clocks an instance through [`UnitHost::tick`] with the
//! unit's typed inputs; the host records the inputs when a trace is on, applies the edge and
//! counts the combinational outputs' set bits. Units whose inputs the SM stages over a cycle
//! (the scoreboard's reserve/release/copy ports) use [`UnitHost::instance_mut`] to stage and
//! [`UnitHost::edge_with`] to record and count the edge.

use super::contract::Bits;
use super::declare::{PortGroup, Unit, UnitParams};
use super::trace::TraceRecorder;

/// Every instance of one unit kind in the GPU model.
pub struct UnitHost<U: Unit> {
    params: U::Params,
    instances: Vec<U>,
    /// Per instance: `U::Events::NAMES.len()` counters of set bits of each event port,
    /// then one counter of clock edges with non-idle inputs.
    activity: Vec<u64>,
    trace: Option<TraceRecorder>,
}

/// Activity of one unit kind, summed over its instances (or of one instance).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct UnitActivity {
    pub unit: &'static str,
    pub instances: usize,
    /// Clock edges with non-idle inputs.
    pub active_cycles: u64,
    /// Per combinational (event) output port: the number of set bits over all cycles.
    pub events: Vec<(&'static str, u64)>,
}

impl UnitActivity {
    /// Adds `other` (the same unit kind) into `self`.
    pub fn absorb(&mut self, other: &UnitActivity) {
        debug_assert_eq!(self.unit, other.unit);
        self.instances += other.instances;
        self.active_cycles += other.active_cycles;
        for ((_, a), (_, b)) in self.events.iter_mut().zip(&other.events) {
            *a += b;
        }
    }

    /// The count of event port `name`, if the unit has one.
    pub fn event(&self, name: &str) -> Option<u64> {
        self.events
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, c)| *c)
    }
}

impl<U: Unit> UnitHost<U> {
    const COUNTERS: usize = <U::Events as PortGroup>::NAMES.len() + 1;

    /// `count` instances at `params`, checked against the unit's declared ranges and
    /// cross-parameter rules (the error names the unit and the parameter).
    pub fn new(params: U::Params, count: usize) -> Result<UnitHost<U>, String> {
        params.to_params()?;
        Ok(UnitHost {
            params,
            instances: (0..count).map(|_| U::new(params)).collect(),
            activity: vec![0; count * Self::COUNTERS],
            trace: None,
        })
    }

    /// New instances at `params` (validated), all from reset; the activity counters and
    /// the trace go on (a trace at other parameters is the caller's to re-encode).
    pub fn reconfigure(&mut self, params: U::Params) -> Result<(), String> {
        params.to_params()?;
        self.params = params;
        self.instances.iter_mut().for_each(|u| *u = U::new(params));
        Ok(())
    }

    pub fn params(&self) -> U::Params {
        self.params
    }

    pub fn len(&self) -> usize {
        self.instances.len()
    }

    pub fn is_empty(&self) -> bool {
        self.instances.is_empty()
    }

    #[inline]
    pub fn instance(&self, i: usize) -> &U {
        &self.instances[i]
    }

    /// For units whose inputs are staged during a cycle (see [`UnitHost::edge_with`]).
    #[inline]
    pub fn instance_mut(&mut self, i: usize) -> &mut U {
        &mut self.instances[i]
    }

    /// Start recording every instance's port traffic into `trace` (which must be of this
    /// unit; instance `i` of the trace is instance `i` of the host).
    pub fn record(&mut self, trace: TraceRecorder) {
        debug_assert!(std::ptr::eq(trace.desc(), U::desc()));
        self.trace = Some(trace);
    }

    pub fn recording(&self) -> bool {
        self.trace.is_some()
    }

    pub fn trace_mut(&mut self) -> Option<&mut TraceRecorder> {
        self.trace.as_mut()
    }

    /// The recorded traffic (recording stops).
    pub fn take_trace(&mut self) -> Option<TraceRecorder> {
        self.trace.take()
    }

    /// One clock edge of instance `i` at `cycle` with inputs `inp`: recorded when a trace is
    /// on and the inputs are not idle, counted, applied. Returns the cycle's combinational
    /// outputs.
    #[inline]
    pub fn tick(&mut self, i: usize, cycle: u64, inp: &U::Inputs) -> U::Events {
        let idle = inp.is_idle();
        if !idle {
            if let Some(rec) = self.trace.as_mut() {
                rec.record(i, cycle, |ports| inp.write_ports(ports));
            }
        }
        let ev = self.instances[i].tick(inp);
        let n = Self::COUNTERS;
        let counts = &mut self.activity[i * n..(i + 1) * n];
        ev.count_ones(counts);
        counts[n - 1] += !idle as u64;
        ev
    }

    /// A clock edge of instance `i` at `cycle` whose inputs were staged on the instance:
    /// `active` says whether they are non-idle, `fill` writes them as port values when a
    /// trace is on, `edge` applies the edge.
    #[inline]
    pub fn edge_with(
        &mut self,
        i: usize,
        cycle: u64,
        active: bool,
        fill: impl FnOnce(&U, &mut [Bits]),
        edge: impl FnOnce(&mut U),
    ) {
        if active {
            if let Some(rec) = self.trace.as_mut() {
                let unit = &self.instances[i];
                rec.record(i, cycle, |ports| fill(unit, ports));
            }
            let n = Self::COUNTERS;
            self.activity[i * n + n - 1] += 1;
        }
        edge(&mut self.instances[i]);
    }

    /// The activity of instance `i`.
    pub fn instance_activity(&self, i: usize) -> UnitActivity {
        let n = Self::COUNTERS;
        self.activity_of(&self.activity[i * n..(i + 1) * n], 1)
    }

    /// The activity of every instance, summed.
    pub fn activity(&self) -> UnitActivity {
        let n = Self::COUNTERS;
        let mut sum = vec![0u64; n];
        for counts in self.activity.chunks(n) {
            for (s, c) in sum.iter_mut().zip(counts) {
                *s += c;
            }
        }
        self.activity_of(&sum, self.instances.len())
    }

    fn activity_of(&self, counts: &[u64], instances: usize) -> UnitActivity {
        let names = <U::Events as PortGroup>::NAMES;
        UnitActivity {
            unit: U::desc().name,
            instances,
            active_cycles: counts[names.len()],
            events: names.iter().copied().zip(counts.iter().copied()).collect(),
        }
    }
}
