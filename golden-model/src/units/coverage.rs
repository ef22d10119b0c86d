//! Functional coverage of a unit's ports (design.md §4: coverage decides when random
//! stimulus is enough).
//!
//! Each unit declares its bins with the unit ([`UnitDesc::coverage`]) as a short list of
//! [`Cover`] items over its port names: every stack depth up to full, overflow, every event,
//! inputs that can coincide in one cycle, back-to-back events, reset in mid-operation. The
//! co-simulator samples them on the model side every cycle of any run (random, directed,
//! workload traces), reports the bins never hit, and steers its random stimulus towards
//! them. Bins are named (`depth=16`, `ev_pop back-to-back`, `launch_valid & upd_valid`) so
//! that reports, JSON and stimulus steering speak the same language.

use super::contract::{eval_width, Bits, Params, Role, UnitDesc};
use super::declare::{WordSlot, RST_N};

/// The values of a cycle's ports as coverage reads them: each port's words, low word
/// first, with no bits above its width.
pub trait PortWords {
    /// Port `port`'s words (at least one).
    fn words(&self, port: usize) -> &[u64];
    /// Its low word.
    #[inline]
    fn low(&self, port: usize) -> u64 {
        self.words(port)[0]
    }
    /// Whether any of its bits is set.
    #[inline]
    fn nonzero(&self, port: usize) -> bool {
        self.words(port).iter().any(|&w| w != 0)
    }
}

impl PortWords for [Bits] {
    #[inline]
    fn words(&self, port: usize) -> &[u64] {
        self[port].words()
    }
    #[inline]
    fn low(&self, port: usize) -> u64 {
        self[port].to_u64()
    }
}

/// A cycle's ports as a frame of words (the co-simulation's hand-over from the model
/// side to the RTL side), port `p` at `slots[p]`.
pub struct FramePortWords<'a> {
    pub words: &'a [u64],
    pub slots: &'a [WordSlot],
}

impl PortWords for FramePortWords<'_> {
    #[inline]
    fn words(&self, port: usize) -> &[u64] {
        let s = self.slots[port];
        &self.words[s.at as usize..(s.at + s.len) as usize]
    }
    #[inline]
    fn low(&self, port: usize) -> u64 {
        self.words[self.slots[port].at as usize]
    }
    #[inline]
    fn nonzero(&self, port: usize) -> bool {
        let s = self.slots[port];
        if s.len == 1 {
            self.words[s.at as usize] != 0
        } else {
            self.words(port).iter().any(|&w| w != 0)
        }
    }
}

/// One kind of coverage a unit declares; each expands into one or more named bins.
#[derive(Debug, Clone, Copy)]
pub enum Cover {
    /// Each value `0..=max` of `port` (`max` an expression over the parameters, e.g.
    /// `"DEPTH"`): bins `port=0` ... `port=max`.
    Values {
        port: &'static str,
        max: &'static str,
    },
    /// Each value `0..=max` of `port` in cycles where `when` is not 0: bins
    /// `port=v when when`.
    ValuesWhen {
        port: &'static str,
        max: &'static str,
        when: &'static str,
    },
    /// Each named port not 0 in some cycle (an error flag raised, an input used): one bin
    /// per port, named like it.
    Raised(&'static [&'static str]),
    /// Every combinational (event) output not 0 in some cycle: one bin per event port.
    EveryEvent,
    /// Every bit of `port` set in some cycle (each reserve port used, each query port's
    /// hazard): bins `port[i]`.
    EveryBit(&'static str),
    /// Each number `0..=max` of set bits of `port` in one cycle (`max` an expression):
    /// bins `popcount(port)=n`.
    Popcount {
        port: &'static str,
        max: &'static str,
    },
    /// Every named port not 0 in the same cycle (inputs that can coincide): one bin,
    /// `a & b`.
    Together(&'static [&'static str]),
    /// `port` not 0 in two consecutive cycles: bin `port back-to-back`.
    BackToBack(&'static str),
    /// Reset (`rst_n` low) while `port` is not 0, i.e. in mid-operation: bin
    /// `reset while port`.
    ResetWhile(&'static str),
    /// The bins of `cover`, counted only in cycles where every condition holds (a stall at
    /// each position of an output stream: `out_seq` values when `out_valid & !out_ready`);
    /// each bin's name gets ` when <conditions>`. A [`Cond::Param`] that is 0 at the
    /// parameters declares no bins (logic that parameter value removes).
    If {
        when: &'static [Cond],
        cover: &'static Cover,
    },
}

/// A condition of [`Cover::If`].
#[derive(Debug, Clone, Copy)]
pub enum Cond {
    /// The port is not 0.
    Set(&'static str),
    /// The port is 0.
    Clear(&'static str),
    /// The port equals the value of an expression over the parameters (`"NW-1"`).
    Eq(&'static str, &'static str),
    /// The parameter is not 0 (checked once, at the parameters).
    Param(&'static str),
}

/// How one [`Cover`] item is sampled: port positions resolved, and the index of its first
/// bin.
#[derive(Debug, Clone)]
enum Probe {
    Values {
        port: usize,
        max: u64,
        first: usize,
    },
    ValuesWhen {
        port: usize,
        when: usize,
        max: u64,
        first: usize,
    },
    Raised {
        port: usize,
        bin: usize,
    },
    EveryBit {
        port: usize,
        width: u32,
        first: usize,
    },
    Popcount {
        port: usize,
        max: u64,
        first: usize,
    },
    Together {
        ports: Vec<usize>,
        bin: usize,
    },
    BackToBack {
        port: usize,
        bin: usize,
        last: bool,
    },
    ResetWhile {
        port: usize,
        bin: usize,
    },
    If {
        /// (port, `None`: not 0 / `Some(false)`: 0 / `Some(true)`: equals `value`, value).
        conds: Vec<(usize, Option<bool>, u64)>,
        inner: Box<Probe>,
    },
}

impl Probe {
    /// The ports the probe reads.
    fn ports_read(&self) -> Vec<usize> {
        match self {
            Probe::Values { port, .. }
            | Probe::Raised { port, .. }
            | Probe::EveryBit { port, .. }
            | Probe::Popcount { port, .. }
            | Probe::BackToBack { port, .. }
            | Probe::ResetWhile { port, .. } => vec![*port],
            Probe::ValuesWhen { port, when, .. } => vec![*port, *when],
            Probe::Together { ports, .. } => ports.clone(),
            Probe::If { conds, inner } => {
                let mut v: Vec<usize> = conds.iter().map(|c| c.0).collect();
                v.extend(inner.ports_read());
                v
            }
        }
    }
}

/// The bins of one unit at one parameter set and how often each was hit.
#[derive(Debug, Clone)]
pub struct Coverage {
    names: Vec<String>,
    hits: Vec<u64>,
    probes: Vec<Probe>,
    /// When the bins read a debug-state port (the unit's internal state, which a
    /// co-simulation packs only now and then).
    state_reads: StateReads,
    /// The probes bound to a frame layout ([`Coverage::bind_frame`]), if any.
    frame_plan: Option<FramePlan>,
}

/// The probes of a [`Coverage`] bound to one frame layout: the common probes of one-word
/// ports grouped by kind with their words' positions resolved, so that sampling a frame
/// ([`Coverage::sample_frame`]) reads each word directly and dispatches once per kind
/// rather than once per probe; every other probe (multi-word ports, `If`, `BackToBack`...)
/// is sampled as [`Coverage::sample_from`] samples it. The counts do not depend on the
/// order in which probes are sampled, so both give the same counts for the same frame.
#[derive(Debug, Clone, Default)]
struct FramePlan {
    /// `Raised`: (word, bin).
    raised: Vec<(u32, u32)>,
    /// `ResetWhile`: (word, bin).
    reset_while: Vec<(u32, u32)>,
    /// `Values`: (word, max, first bin).
    values: Vec<(u32, u64, u32)>,
    /// `Popcount`: (word, max, first bin).
    popcount: Vec<(u32, u64, u32)>,
    /// `EveryBit`: (word, width, first bin).
    every_bit: Vec<(u32, u32, u32)>,
    /// `Together`: (first of its words in `together_words`, how many, bin).
    together: Vec<(u32, u32, u32)>,
    together_words: Vec<u32>,
    /// Indices of the other probes.
    other: Vec<usize>,
}

/// When a unit's bins read its debug-state ports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum StateReads {
    Never,
    /// Only [`Cover::ResetWhile`] reads one: in reset cycles.
    InReset,
    Always,
}

impl Coverage {
    /// The bins `desc` declares at `params`. A declaration naming a port the unit does not
    /// have, or a bound that does not evaluate, is a programming error in the unit: it is
    /// reported, naming the unit and the item.
    pub fn new(desc: &UnitDesc, params: &Params) -> Result<Coverage, String> {
        let mut c = Coverage {
            names: vec![],
            hits: vec![],
            probes: vec![],
            state_reads: StateReads::Never,
            frame_plan: None,
        };
        let widths = desc.widths(params);
        for item in desc.coverage {
            c.declare(desc, params, &widths, item)?;
        }
        let debug = |p: usize| desc.ports[p].role == Role::Debug;
        for probe in &c.probes {
            let reads = match probe {
                Probe::ResetWhile { port, .. } if debug(*port) => StateReads::InReset,
                p if p.ports_read().into_iter().any(debug) => StateReads::Always,
                _ => StateReads::Never,
            };
            c.state_reads = c.state_reads.max(reads);
        }
        Ok(c)
    }

    /// Adds the bins and probes of one item.
    fn declare(
        &mut self,
        desc: &UnitDesc,
        params: &Params,
        widths: &[u32],
        item: &Cover,
    ) -> Result<(), String> {
        let c = self;
        let port = |name: &str| {
            desc.port_index(name)
                .ok_or_else(|| format!("{}: coverage names unknown port `{name}`", desc.name))
        };
        let bound = |expr: &str| {
            eval_width(expr, params)
                .map(u64::from)
                .map_err(|e| format!("{}: coverage bound `{expr}`: {e}", desc.name))
        };
        match *item {
            Cover::Values { port: p, max } => {
                let (port, max) = (port(p)?, bound(max)?);
                let first = c.bins((0..=max).map(|v| format!("{p}={v}")));
                c.probes.push(Probe::Values { port, max, first });
            }
            Cover::ValuesWhen { port: p, max, when } => {
                let (port, max, w) = (port(p)?, bound(max)?, port(when)?);
                let first = c.bins((0..=max).map(|v| format!("{p}={v} when {when}")));
                c.probes.push(Probe::ValuesWhen {
                    port,
                    when: w,
                    max,
                    first,
                });
            }
            Cover::Raised(names) => {
                for &n in names {
                    let port = port(n)?;
                    let bin = c.bins([n.to_string()]);
                    c.probes.push(Probe::Raised { port, bin });
                }
            }
            Cover::EveryEvent => {
                for (i, spec) in desc.ports.iter().enumerate() {
                    if spec.role == Role::Combinational {
                        let bin = c.bins([spec.name.to_string()]);
                        c.probes.push(Probe::Raised { port: i, bin });
                    }
                }
            }
            Cover::EveryBit(p) => {
                let port = port(p)?;
                let width = widths[port];
                let first = c.bins((0..width).map(|i| format!("{p}[{i}]")));
                c.probes.push(Probe::EveryBit { port, width, first });
            }
            Cover::Popcount { port: p, max } => {
                let (port, max) = (port(p)?, bound(max)?);
                let first = c.bins((0..=max).map(|n| format!("popcount({p})={n}")));
                c.probes.push(Probe::Popcount { port, max, first });
            }
            Cover::Together(names) => {
                let ports = names.iter().map(|n| port(n)).collect::<Result<_, _>>()?;
                let bin = c.bins([names.join(" & ")]);
                c.probes.push(Probe::Together { ports, bin });
            }
            Cover::BackToBack(p) => {
                let port = port(p)?;
                let bin = c.bins([format!("{p} back-to-back")]);
                c.probes.push(Probe::BackToBack {
                    port,
                    bin,
                    last: false,
                });
            }
            Cover::ResetWhile(p) => {
                let port = port(p)?;
                let bin = c.bins([format!("reset while {p}")]);
                c.probes.push(Probe::ResetWhile { port, bin });
            }
            Cover::If { when, cover } => {
                let mut conds = vec![];
                let mut names = vec![];
                for cond in when {
                    match *cond {
                        Cond::Set(p) => {
                            conds.push((port(p)?, None, 0));
                            names.push(p.to_string());
                        }
                        Cond::Clear(p) => {
                            conds.push((port(p)?, Some(false), 0));
                            names.push(format!("!{p}"));
                        }
                        Cond::Eq(p, e) => {
                            let v = bound(e)?;
                            conds.push((port(p)?, Some(true), v));
                            names.push(format!("{p}={v}"));
                        }
                        Cond::Param(name) => {
                            if params.get(name) == 0 {
                                return Ok(());
                            }
                        }
                    }
                }
                let (first_bin, first_probe) = (c.names.len(), c.probes.len());
                c.declare(desc, params, widths, cover)?;
                let suffix = if names.is_empty() {
                    String::new()
                } else {
                    format!(" when {}", names.join(" & "))
                };
                c.names[first_bin..]
                    .iter_mut()
                    .for_each(|n| n.push_str(&suffix));
                for inner in c.probes.split_off(first_probe) {
                    c.probes.push(Probe::If {
                        conds: conds.clone(),
                        inner: Box::new(inner),
                    });
                }
            }
        }
        Ok(())
    }

    /// Adds bins; returns the index of the first.
    fn bins(&mut self, names: impl IntoIterator<Item = String>) -> usize {
        let first = self.names.len();
        self.names.extend(names);
        self.hits.resize(self.names.len(), 0);
        first
    }

    /// Samples one cycle: `ports` holds the cycle's inputs and every output the model
    /// computed for them (registered outputs: the state at the start of the cycle).
    #[inline]
    pub fn sample(&mut self, ports: &[Bits]) {
        self.sample_from(ports)
    }

    /// [`Coverage::sample`] from any holder of the cycle's port values: the `Bits` of the
    /// port list, or a frame of words ([`FramePortWords`]). The bins only see each port's
    /// words, so both give the same counts for the same values.
    #[inline]
    pub fn sample_from<P: PortWords + ?Sized>(&mut self, ports: &P) {
        let reset = ports.low(RST_N) == 0;
        for probe in &mut self.probes {
            Self::sample_probe(&mut self.hits, probe, ports, reset);
        }
    }

    /// Binds the probes to a frame layout, `slots[p]` the words of port `p` (every port a
    /// probe reads, `rst_n` included, must have some), for [`Coverage::sample_frame`].
    pub fn bind_frame(&mut self, slots: &[WordSlot]) {
        let mut plan = FramePlan::default();
        let one_word = |port: usize| (slots[port].len == 1).then_some(slots[port].at);
        for (i, probe) in self.probes.iter().enumerate() {
            match *probe {
                Probe::Raised { port, bin } if one_word(port).is_some() => {
                    plan.raised.push((slots[port].at, bin as u32));
                }
                Probe::ResetWhile { port, bin } if one_word(port).is_some() => {
                    plan.reset_while.push((slots[port].at, bin as u32));
                }
                Probe::Values { port, max, first } if one_word(port).is_some() => {
                    plan.values.push((slots[port].at, max, first as u32));
                }
                Probe::Popcount { port, max, first } if one_word(port).is_some() => {
                    plan.popcount.push((slots[port].at, max, first as u32));
                }
                Probe::EveryBit { port, width, first } if one_word(port).is_some() => {
                    plan.every_bit.push((slots[port].at, width, first as u32));
                }
                Probe::Together { ref ports, bin }
                    if ports.iter().all(|&p| one_word(p).is_some()) =>
                {
                    let start = plan.together_words.len() as u32;
                    plan.together_words
                        .extend(ports.iter().map(|&p| slots[p].at));
                    plan.together.push((start, ports.len() as u32, bin as u32));
                }
                _ => plan.other.push(i),
            }
        }
        self.frame_plan = Some(plan);
    }

    /// [`Coverage::sample_from`] a frame of words laid out as [`Coverage::bind_frame`]
    /// was told (`slots`), through the bound plan (one call of `bind_frame` first).
    #[inline]
    pub fn sample_frame(&mut self, words: &[u64], slots: &[WordSlot]) {
        let plan = self
            .frame_plan
            .as_ref()
            .expect("Coverage::bind_frame before sample_frame");
        let hits = &mut self.hits;
        let reset = words[slots[RST_N].at as usize] == 0;
        for &(at, bin) in &plan.raised {
            hits[bin as usize] += (words[at as usize] != 0) as u64;
        }
        if reset {
            for &(at, bin) in &plan.reset_while {
                hits[bin as usize] += (words[at as usize] != 0) as u64;
            }
        }
        for &(at, max, first) in &plan.values {
            let v = words[at as usize];
            if v <= max {
                hits[first as usize + v as usize] += 1;
            }
        }
        for &(at, max, first) in &plan.popcount {
            let n = words[at as usize].count_ones() as u64;
            if n <= max {
                hits[first as usize + n as usize] += 1;
            }
        }
        for &(at, width, first) in &plan.every_bit {
            // (A frame has no bits above a port's width; the mask keeps a stray one out
            // of the next probe's bins, as `sample_from`'s bound does.)
            let mut w = words[at as usize] & (u64::MAX >> (64 - width));
            while w != 0 {
                hits[first as usize + w.trailing_zeros() as usize] += 1;
                w &= w - 1;
            }
        }
        for &(start, n, bin) in &plan.together {
            let ats = &plan.together_words[start as usize..(start + n) as usize];
            hits[bin as usize] += ats.iter().all(|&at| words[at as usize] != 0) as u64;
        }
        let ports = FramePortWords { words, slots };
        for &i in &plan.other {
            Self::sample_probe(hits, &mut self.probes[i], &ports, reset);
        }
    }

    /// The ports the bins read (every port a probe names, `rst_n` included).
    pub fn ports_read(&self) -> Vec<usize> {
        let mut out = vec![RST_N];
        self.probes.iter().for_each(|p| out.extend(p.ports_read()));
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Whether sampling a cycle (`reset`: `rst_n` low in it) reads the unit's debug-state
    /// ports: the caller must then pack the current state into them first (the state
    /// before the cycle's clock edge). Only a reset cycle, when the bins read the state
    /// only to see what a reset meets (`reset while dbg_P`).
    #[inline]
    pub fn needs_state(&self, reset: bool) -> bool {
        match self.state_reads {
            StateReads::Never => false,
            StateReads::InReset => reset,
            StateReads::Always => true,
        }
    }

    #[inline]
    fn sample_probe<P: PortWords + ?Sized>(
        hits: &mut [u64],
        probe: &mut Probe,
        ports: &P,
        reset: bool,
    ) {
        let nonzero = |p: usize| ports.nonzero(p);
        let this = hits;
        match probe {
            Probe::Values { port, max, first } => {
                let v = ports.low(*port);
                if v <= *max {
                    this[*first + v as usize] += 1;
                }
            }
            Probe::ValuesWhen {
                port,
                when,
                max,
                first,
            } => {
                let v = ports.low(*port);
                if v <= *max && nonzero(*when) {
                    this[*first + v as usize] += 1;
                }
            }
            Probe::Raised { port, bin } => {
                if nonzero(*port) {
                    this[*bin] += 1;
                }
            }
            Probe::EveryBit { port, width, first } => {
                for (k, &w) in ports.words(*port).iter().enumerate() {
                    let mut w = w;
                    while w != 0 {
                        let i = k * 64 + w.trailing_zeros() as usize;
                        w &= w - 1;
                        if i < *width as usize {
                            this[*first + i] += 1;
                        }
                    }
                }
            }
            Probe::Popcount { port, max, first } => {
                let n: u64 = ports
                    .words(*port)
                    .iter()
                    .map(|w| w.count_ones() as u64)
                    .sum();
                if n <= *max {
                    this[*first + n as usize] += 1;
                }
            }
            Probe::Together { ports: ps, bin } => {
                if ps.iter().all(|&p| nonzero(p)) {
                    this[*bin] += 1;
                }
            }
            Probe::BackToBack { port, bin, last } => {
                let now = !reset && nonzero(*port);
                if now && *last {
                    this[*bin] += 1;
                }
                *last = now;
            }
            Probe::ResetWhile { port, bin } => {
                if reset && nonzero(*port) {
                    this[*bin] += 1;
                }
            }
            Probe::If { conds, inner } => {
                let holds = conds.iter().all(|&(p, kind, v)| match kind {
                    None => nonzero(p),
                    Some(false) => !nonzero(p),
                    Some(true) => {
                        let w = ports.words(p);
                        w[0] == v && w[1..].iter().all(|&w| w == 0)
                    }
                });
                if holds {
                    Self::sample_probe(this, inner, ports, reset);
                }
            }
        }
    }

    /// Adds the hits of `other` (the same unit at the same parameters).
    pub fn absorb(&mut self, other: &Coverage) {
        debug_assert_eq!(self.names, other.names);
        for (h, o) in self.hits.iter_mut().zip(&other.hits) {
            *h += o;
        }
    }

    /// Every bin with its hit count, in declaration order.
    pub fn bins_hit(&self) -> impl Iterator<Item = (&str, u64)> {
        self.names
            .iter()
            .map(String::as_str)
            .zip(self.hits.iter().copied())
    }

    /// The bins never hit.
    pub fn unhit(&self) -> Vec<&str> {
        self.bins_hit()
            .filter(|&(_, n)| n == 0)
            .map(|(b, _)| b)
            .collect()
    }

    /// Whether bin `name` was never hit (`false` for a bin the unit does not declare).
    pub fn is_unhit(&self, name: &str) -> bool {
        self.names
            .iter()
            .position(|n| n == name)
            .is_some_and(|i| self.hits[i] == 0)
    }

    /// Bins hit at least once.
    pub fn hit(&self) -> usize {
        self.hits.iter().filter(|&&n| n > 0).count()
    }

    pub fn total(&self) -> usize {
        self.names.len()
    }

    /// Percentage of bins hit (100 for a unit without bins).
    pub fn percent(&self) -> f64 {
        if self.names.is_empty() {
            100.0
        } else {
            100.0 * self.hit() as f64 / self.total() as f64
        }
    }
}

impl std::fmt::Display for Coverage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}/{} bins ({:.0}%)",
            self.hit(),
            self.total(),
            self.percent().floor()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::declare::PortGroup;
    use crate::units::simt_stack::{SpeInputs, SPE_DESC};

    #[test]
    fn bins_expand_at_the_parameters_and_count_what_they_see() {
        let p = SPE_DESC
            .params(&[("WARP_SIZE", 8u64), ("DEPTH", 4)])
            .unwrap();
        let mut c = Coverage::new(&SPE_DESC, &p).unwrap();
        let names: Vec<&str> = c.bins_hit().map(|(n, _)| n).collect();
        for want in ["depth=0", "depth=4", "ev_pop", "launch_valid & upd_valid"] {
            assert!(names.contains(&want), "{want} in {names:?}");
        }
        assert!(!names.contains(&"depth=5"), "DEPTH=4 has no depth=5 bin");
        assert_eq!(c.hit(), 0);
        let mut ports = SPE_DESC.zero_ports(&p);
        ports[0].set_u64(1);
        SpeInputs {
            launch_valid: true,
            upd_valid: true,
            ..Default::default()
        }
        .write_ports(&mut ports);
        let depth = SPE_DESC.port_index("depth").unwrap();
        let pop = SPE_DESC.port_index("ev_pop").unwrap();
        ports[depth].set_u64(4);
        ports[pop].set_u64(1);
        c.sample(&ports);
        assert!(!c.is_unhit("depth=4") && c.is_unhit("depth=3"));
        assert!(!c.is_unhit("launch_valid & upd_valid"));
        assert!(c.is_unhit("ev_pop back-to-back"), "one pop is not two");
        c.sample(&ports);
        assert!(!c.is_unhit("ev_pop back-to-back"));
        assert!(c.is_unhit("reset while depth"));
        ports[0].set_u64(0);
        c.sample(&ports);
        assert!(!c.is_unhit("reset while depth"));
        let before = c.hit();
        let other = c.clone();
        c.absorb(&other);
        assert_eq!(c.hit(), before, "absorbing adds counts, not bins");
        assert!(c.unhit().contains(&"depth=3"));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(24))]

        /// The frame sampler (`bind_frame` + `sample_frame`, the typed co-simulation's) and
        /// the port sampler (`sample`) count the same bins for the same cycles, for every
        /// unit at every standard parameter set: values mostly 0 or small so that bins of
        /// every kind are hit, resets now and then.
        #[test]
        fn the_frame_sampler_counts_as_the_port_sampler(seed: u64) {
            let mut rng = crate::units::random_program::SplitMix64::new(seed);
            let mut next = move || rng.next_u64();
            for desc in crate::units::ALL {
                for params in desc.standard_params() {
                    let widths = desc.widths(&params);
                    let mut slots = vec![];
                    let mut at = 0;
                    for &w in &widths {
                        let len = w.div_ceil(64).max(1);
                        slots.push(WordSlot { at, len, width: crate::units::declare::PortWidth::of(w) });
                        at += len;
                    }
                    let mut by_port = Coverage::new(desc, &params).unwrap();
                    let mut by_frame = by_port.clone();
                    by_frame.bind_frame(&slots);
                    let mut ports = desc.zero_ports(&params);
                    let mut frame = vec![0u64; at as usize];
                    for _ in 0..48 {
                        for (p, port) in ports.iter_mut().enumerate() {
                            let words: Vec<u64> = (0..slots[p].len)
                                .map(|_| match next() % 4 {
                                    0 | 1 => 0,
                                    2 => next() % 5,
                                    _ => next(),
                                })
                                .collect();
                            port.set_words(&words);
                        }
                        ports[RST_N].set_u64((next() % 8 != 0) as u64);
                        for (p, port) in ports.iter().enumerate() {
                            let s = slots[p];
                            frame[s.at as usize..(s.at + s.len) as usize]
                                .copy_from_slice(port.words());
                        }
                        by_port.sample(&ports);
                        by_frame.sample_frame(&frame, &slots);
                    }
                    let a: Vec<_> = by_port.bins_hit().collect();
                    let b: Vec<_> = by_frame.bins_hit().collect();
                    proptest::prop_assert_eq!(a, b, "{} ({})", desc.name, params);
                }
            }
        }
    }
}
