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

use super::declare::{PortGroup, Unit, UnitParams};
use super::trace::TraceRecorder;
use super::trace_sink::RawRecord;
use super::trace_sink::TraceSink;
use std::collections::BTreeMap;

/// Every instance of one unit kind in the GPU model.
pub struct UnitHost<U: Unit> {
    params: U::Params,
    instances: Vec<Hosted<U>>,
    trace: Option<TraceSink<U>>,
}

/// One instance and its activity counters, side by side: an edge touches both, and with
/// the SMs simulated in turn a separate counter array was one more cold cache line per
/// edge (measured: ~2% of the host's L1 misses on mandelbrot).
struct Hosted<U: Unit> {
    unit: U,
    /// Clock edges with non-idle inputs.
    active: u64,
    /// The set bits of each event port.
    events: <U::Events as PortGroup>::Counts,
}

impl<U: Unit> Hosted<U> {
    fn new(params: U::Params) -> Hosted<U> {
        Hosted {
            unit: U::new(params),
            active: 0,
            events: Default::default(),
        }
    }

    /// A clock edge with non-idle inputs: applied and counted.
    #[inline(always)]
    fn apply(&mut self, inp: &U::Inputs) -> U::Events {
        let ev = self.unit.tick(inp);
        self.active += 1;
        self.count(&ev);
        ev
    }

    /// Most edges raise no event: only those that do pay for the per-port counts.
    #[inline(always)]
    fn count(&mut self, ev: &U::Events) {
        if !ev.is_idle() {
            ev.count_ones(self.events.as_mut());
        }
    }
}

/// Activity of one unit kind, summed over its instances (or of one instance).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct UnitActivity {
    pub unit: &'static str,
    pub instances: usize,
    /// Clock edges with non-idle inputs.
    pub active_cycles: u64,
    /// Per combinational (event) output port: the number of set bits over all cycles.
    pub events: BTreeMap<&'static str, u64>,
}

impl UnitActivity {
    /// Adds `other` (the same unit kind) into `self`.
    pub fn absorb(&mut self, other: &UnitActivity) {
        debug_assert_eq!(self.unit, other.unit);
        self.instances += other.instances;
        self.active_cycles += other.active_cycles;
        for (name, n) in &other.events {
            *self.events.entry(name).or_default() += n;
        }
    }

    /// The count of event port `name`, if the unit has one.
    pub fn event(&self, name: &str) -> Option<u64> {
        self.events.get(name).copied()
    }
}

impl<U: Unit> UnitHost<U> {
    /// `count` instances at `params`, checked against the unit's declared ranges and
    /// cross-parameter rules (the error names the unit and the parameter).
    pub fn new(params: U::Params, count: usize) -> Result<UnitHost<U>, String> {
        params.to_params()?;
        Ok(UnitHost {
            params,
            instances: (0..count).map(|_| Hosted::new(params)).collect(),
            trace: None,
        })
    }

    /// New instances at `params` (validated), all from reset; the activity counters and
    /// the trace go on (a trace at other parameters is the caller's to re-encode).
    pub fn reconfigure(&mut self, params: U::Params) -> Result<(), String> {
        params.to_params()?;
        self.params = params;
        self.instances
            .iter_mut()
            .for_each(|h| h.unit = U::new(params));
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

    #[inline(always)]
    pub fn instance(&self, i: usize) -> &U {
        &self.instances[i].unit
    }

    /// For units whose inputs are staged during a cycle (see [`UnitHost::edge_with`]).
    #[inline(always)]
    pub fn instance_mut(&mut self, i: usize) -> &mut U {
        &mut self.instances[i].unit
    }

    /// Start recording every instance's port traffic into `trace` (which must be of this
    /// unit; instance `i` of the trace is instance `i` of the host).
    pub fn record(&mut self, trace: TraceRecorder) {
        self.trace = Some(TraceSink::new(trace));
    }

    /// The parameters of the trace being recorded, if one is.
    pub fn trace_params(&self) -> Option<&super::contract::Params> {
        self.trace.as_ref().map(TraceSink::params)
    }

    /// Changes the trace being recorded (see [`TraceSink::change_recorder`]). Nothing
    /// happens when no trace is on.
    pub fn change_trace(&mut self, change: impl FnOnce(&mut TraceRecorder)) {
        if let Some(sink) = self.trace.as_mut() {
            sink.change_recorder(change)
        }
    }

    /// The recorded traffic (recording stops).
    pub fn take_trace(&mut self) -> Option<TraceRecorder> {
        self.trace.take().map(TraceSink::finish)
    }

    /// One clock edge of instance `i` at `cycle` with non-idle inputs `inp` (a cycle in
    /// which the instance is driven: see [`UnitHost::idle_tick`] for the others): recorded
    /// when a trace is on, counted, applied. Returns the cycle's combinational outputs.
    #[inline]
    pub fn tick(&mut self, i: usize, cycle: u64, inp: &U::Inputs) -> U::Events {
        debug_assert!(
            !inp.is_idle(),
            "UnitHost::tick with idle inputs: use idle_tick"
        );
        let h = &mut self.instances[i];
        if let Some(sink) = self.trace.as_mut() {
            sink.push(i, cycle, &h.unit.recorded(inp));
        }
        h.apply(inp)
    }

    /// [`UnitHost::tick`] of inputs whose recorded form the caller knows to be compact, with
    /// that payload ([`RawRecord::compact`]): a stack's sequential update, which the SM knows
    /// it issued. Recording then costs a word's copy, not the comparison of every input port
    /// that finds out whether the value is compact (~40 host instructions per edge on kmeans).
    #[inline]
    pub fn tick_compact(
        &mut self,
        i: usize,
        cycle: u64,
        inp: &U::Inputs,
        payload: u64,
    ) -> U::Events {
        debug_assert!(!inp.is_idle(), "UnitHost::tick_compact with idle inputs");
        let h = &mut self.instances[i];
        if let Some(sink) = self.trace.as_mut() {
            debug_assert_eq!(
                h.unit.recorded(inp).compact(),
                Some(payload),
                "UnitHost::tick_compact: not the compact form of these inputs"
            );
            sink.push_compact(i, cycle, payload, || h.unit.recorded(inp));
        }
        h.apply(inp)
    }

    /// One clock edge of instance `i` with idle inputs (every input 0, `rst_n` high): not
    /// recorded (a trace leaves idle cycles implicit) and not an active cycle; its events
    /// (an auto-pop) are counted.
    #[inline]
    pub fn idle_tick(&mut self, i: usize) -> U::Events {
        let h = &mut self.instances[i];
        let ev = h.unit.tick(&U::Inputs::default());
        h.count(&ev);
        ev
    }

    /// A clock edge of instance `i` at `cycle` whose inputs were staged on the instance:
    /// `active` says whether they are non-idle, `recorded` gives them in the unit's recorded
    /// form when a trace is on, `edge` applies the edge.
    #[inline]
    pub fn edge_with(
        &mut self,
        i: usize,
        cycle: u64,
        active: bool,
        recorded: impl FnOnce(&U) -> &U::Recorded,
        edge: impl FnOnce(&mut U),
    ) {
        let h = &mut self.instances[i];
        if active {
            if let Some(sink) = self.trace.as_mut() {
                sink.push(i, cycle, recorded(&h.unit));
            }
            h.active += 1;
        }
        edge(&mut h.unit);
    }

    /// The activity of instance `i`.
    pub fn instance_activity(&self, i: usize) -> UnitActivity {
        let h = &self.instances[i];
        Self::activity_of(h.active, h.events.as_ref(), 1)
    }

    /// The activity of every instance, summed.
    pub fn activity(&self) -> UnitActivity {
        let mut events = <U::Events as PortGroup>::Counts::default();
        let mut active = 0;
        for h in &self.instances {
            active += h.active;
            for (s, c) in events.as_mut().iter_mut().zip(h.events.as_ref()) {
                *s += c;
            }
        }
        Self::activity_of(active, events.as_ref(), self.instances.len())
    }

    /// From the active edges and the event ports' counts.
    fn activity_of(active: u64, events: &[u64], instances: usize) -> UnitActivity {
        let names = <U::Events as PortGroup>::NAMES;
        UnitActivity {
            unit: U::desc().name,
            instances,
            active_cycles: active,
            events: names.iter().copied().zip(events.iter().copied()).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::simt_stack::{SimtStackSpe, SpeInputs, SpeParams, UpdKind, SPE_DESC};

    fn branch(pc: u32, taken: u64, target: u32, rpc: u32) -> SpeInputs {
        SpeInputs {
            upd_valid: true,
            upd_pc: pc,
            upd_kind: UpdKind::Branch as u8,
            upd_taken: taken,
            upd_target: target,
            upd_next: pc + 1,
            upd_rpc: rpc,
            ..Default::default()
        }
    }

    #[test]
    fn construction_checks_the_declared_ranges() {
        let bad = SpeParams {
            depth: 65,
            ..SpeParams::default()
        };
        let e = UnitHost::<SimtStackSpe>::new(bad, 4).err().unwrap();
        assert!(e.contains("DEPTH=65") && e.contains("2..=64"), "{e}");
        assert_eq!(
            UnitHost::<SimtStackSpe>::new(SpeParams::default(), 4)
                .unwrap()
                .len(),
            4
        );
    }

    #[test]
    fn every_event_and_every_non_idle_edge_is_counted_per_instance_and_recorded() {
        let p = SpeParams {
            warp_size: 8,
            depth: 4,
            pc_w: 32,
            ..SpeParams::default()
        };
        let mut host = UnitHost::<SimtStackSpe>::new(p, 2).unwrap();
        let mut rec = TraceRecorder::new(&SPE_DESC, p.to_params().unwrap());
        rec.add_instance("a".into());
        rec.add_instance("b".into());
        host.record(rec);
        host.tick(0, 1, &SpeInputs::launch(0, 0xff));
        host.tick(1, 1, &SpeInputs::launch(0, 0xff));
        // Instance 0 diverges (two groups, new reconvergence entry: two pushes), instance 1
        // takes a uniform branch; idle cycles are neither active nor recorded.
        let ev = host.tick(0, 2, &branch(0, 0x0f, 5, 9));
        assert!(ev.ev_div && ev.ev_push2);
        host.tick(1, 2, &branch(0, 0xff, 5, 9));
        host.idle_tick(0);
        let a = host.instance_activity(0);
        assert_eq!(
            (a.active_cycles, a.event("ev_div"), a.event("ev_push2")),
            (2, Some(1), Some(1))
        );
        let b = host.instance_activity(1);
        assert_eq!((b.active_cycles, b.event("ev_div")), (2, Some(0)));
        let all = host.activity();
        assert_eq!(
            (all.instances, all.active_cycles, all.event("ev_div")),
            (2, 4, Some(1))
        );
        assert_eq!(all.events.len(), 4, "one counter per event port");
        let trace = host.take_trace().unwrap().into_trace("test");
        let events: Vec<u64> = trace.header.instances.iter().map(|i| i.events).collect();
        assert_eq!(events, vec![2, 2]);
    }
}
