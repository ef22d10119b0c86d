//! The unit contract (design.md §3): every hardware unit is described once — parameters,
//! ports with parameter-dependent widths, which outputs are registered — and that
//! description drives the RTL generator, the co-simulator and the trace files.
//!
//! Two ways into the same model code:
//! - the typed fast path: each unit's own struct (`SimtStackSpe::tick(&SpeInputs)` ...),
//!   used by the GPU model in its hot loop;
//! - the generic by-name path: [`UnitModel`], which reads and writes every port as a
//!   [`Bits`] value of any width, used by the generator, the co-simulator and trace files.
//!   Each unit's `UnitModel` impl is a thin adapter that converts [`Bits`] to its typed
//!   inputs and calls the typed functions, so there is never a second implementation.
//!
//! Semantics shared by every unit: one clock `clk` (implicit, not in the port list) and a
//! synchronous active-low reset `rst_n` (always the first input port). Per cycle,
//! `outputs(t) = g(state(t), inputs(t))` and `state(t+1) = f(state(t), inputs(t))`.
//! Registered outputs depend on the state only; combinational outputs also on the inputs.
//! While `rst_n` is low every combinational output reads 0 and the edge resets the state.

use std::fmt;

/// A bit vector of a fixed width, little-endian 64-bit words (bit 0 is bit 0 of word 0).
/// Bits above `width` are always zero.
#[derive(Default)]
pub struct Bits {
    width: u32,
    words: Vec<u64>,
}

impl Clone for Bits {
    fn clone(&self) -> Bits {
        Bits {
            width: self.width,
            words: self.words.clone(),
        }
    }
    /// Reuses the allocation (the per-cycle paths copy port values into existing ones).
    #[inline]
    fn clone_from(&mut self, source: &Bits) {
        self.width = source.width;
        match (self.words.as_mut_slice(), source.words.as_slice()) {
            ([d], [s]) => *d = *s,
            _ => self.words.clone_from(&source.words),
        }
    }
}

impl PartialEq for Bits {
    /// Same width and value; a word loop without a `memcmp` call (compared per cycle).
    #[inline]
    fn eq(&self, other: &Bits) -> bool {
        self.width == other.width && self.same_words(&other.words)
    }
}

impl Eq for Bits {}

impl std::hash::Hash for Bits {
    /// Consistent with `eq`: the width and the words.
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.width.hash(state);
        self.words.hash(state);
    }
}

impl Bits {
    pub fn zero(width: u32) -> Bits {
        Bits {
            width,
            words: vec![0; width.div_ceil(64).max(1) as usize],
        }
    }

    /// A value of at most 64 bits (truncated to `width`).
    pub fn from_u64(width: u32, value: u64) -> Bits {
        let mut b = Bits::zero(width);
        b.set_u64(value);
        b
    }

    pub fn width(&self) -> u32 {
        self.width
    }

    pub fn words(&self) -> &[u64] {
        &self.words
    }

    /// Whether the words are exactly `words` (same count, same values).
    #[inline]
    pub fn same_words(&self, words: &[u64]) -> bool {
        self.words.len() == words.len()
            && self
                .words
                .iter()
                .zip(words)
                .fold(0u64, |d, (a, b)| d | (a ^ b))
                == 0
    }

    /// Overwrite from raw words (extra bits above `width` are cleared).
    pub fn set_words(&mut self, words: &[u64]) {
        if let [w] = self.words.as_mut_slice() {
            *w = words.first().copied().unwrap_or(0) & low_mask(self.width);
            return;
        }
        for (i, w) in self.words.iter_mut().enumerate() {
            *w = words.get(i).copied().unwrap_or(0);
        }
        self.clear_above_width();
    }

    /// The low 64 bits.
    #[inline]
    pub fn to_u64(&self) -> u64 {
        self.words[0]
    }

    /// Set the whole value from at most 64 bits (truncated to `width`).
    #[inline]
    pub fn set_u64(&mut self, value: u64) {
        if let [w] = self.words.as_mut_slice() {
            // One word (every port of at most 64 bits): no loops on the per-cycle paths.
            *w = value & low_mask(self.width);
            return;
        }
        self.words[0] = value;
        for w in &mut self.words[1..] {
            *w = 0;
        }
        self.clear_above_width();
    }

    /// A writer of consecutive fields from bit 0 up (a flattened vector such as a
    /// `dbg_stack`), word at a time; [`FieldWriter::finish`] clears the bits after the last
    /// field. Same result as [`Bits::clear`] followed by [`Bits::set_field`] per field.
    #[inline]
    pub fn field_writer(&mut self) -> FieldWriter<'_> {
        FieldWriter {
            width: self.width,
            words: &mut self.words,
            next: 0,
            acc: 0,
            fill: 0,
        }
    }

    pub fn bit(&self, i: u32) -> bool {
        i < self.width && (self.words[(i / 64) as usize] >> (i % 64)) & 1 == 1
    }

    pub fn set_bit(&mut self, i: u32, v: bool) {
        if i >= self.width {
            return;
        }
        let (w, b) = ((i / 64) as usize, i % 64);
        if v {
            self.words[w] |= 1 << b;
        } else {
            self.words[w] &= !(1 << b);
        }
    }

    /// Write `width` (at most 64) bits of `value` at bit offset `lsb` (a field of a
    /// flattened vector); bits beyond the vector's width are dropped.
    #[inline]
    pub fn set_field(&mut self, lsb: u32, width: u32, value: u64) {
        if lsb >= self.width {
            return;
        }
        set_words_field(
            &mut self.words,
            lsb,
            width.min(64).min(self.width - lsb),
            value,
        )
    }

    /// Read `width` (at most 64) bits at bit offset `lsb`.
    #[inline]
    pub fn field(&self, lsb: u32, width: u32) -> u64 {
        if lsb >= self.width {
            return 0;
        }
        words_field(&self.words, lsb, width.min(64))
    }

    /// The `width` bits at bit offset `lsb` as a value of their own (any width; bits past
    /// the vector read 0).
    pub fn slice(&self, lsb: u32, width: u32) -> Bits {
        let mut out = Bits::zero(width);
        let mut k = 0;
        while k < width {
            let n = (width - k).min(64);
            out.set_field(k, n, self.field(lsb.saturating_add(k), n));
            k += n;
        }
        out
    }

    #[inline]
    pub fn clear(&mut self) {
        match self.words.as_mut_slice() {
            [w] => *w = 0,
            words => words.fill(0),
        }
    }

    fn clear_above_width(&mut self) {
        let full = (self.width / 64) as usize;
        let rem = self.width % 64;
        for (i, w) in self.words.iter_mut().enumerate() {
            if i > full || (i == full && rem == 0) {
                *w = 0;
            } else if i == full {
                *w &= (1u64 << rem) - 1;
            }
        }
    }

    /// Bit positions where `self` and `other` differ.
    pub fn diff_bits(&self, other: &Bits) -> Vec<u32> {
        (0..self.width.max(other.width))
            .filter(|&i| self.bit(i) != other.bit(i))
            .collect()
    }

    /// Hexadecimal, most significant digit first, `width.div_ceil(4)` digits.
    pub fn to_hex(&self) -> String {
        let digits = self.width.div_ceil(4).max(1);
        (0..digits)
            .rev()
            .map(|d| {
                let nib = self.field(d * 4, 4);
                char::from_digit(nib as u32, 16).unwrap()
            })
            .collect()
    }

    /// Parse the output of [`Bits::to_hex`] (an optional `0x` prefix is accepted).
    pub fn from_hex(width: u32, hex: &str) -> Result<Bits, String> {
        let hex = hex.trim().trim_start_matches("0x");
        let mut b = Bits::zero(width);
        for (d, c) in hex.chars().rev().enumerate() {
            let nib = c
                .to_digit(16)
                .ok_or_else(|| format!("`{c}` is not a hexadecimal digit in `{hex}`"))?;
            let lsb = d as u32 * 4;
            if lsb >= width {
                if nib != 0 {
                    return Err(format!("value 0x{hex} does not fit in {width} bits"));
                }
                continue;
            }
            b.set_field(lsb, 4, nib as u64);
            if b.field(lsb, 4) != nib as u64 {
                return Err(format!("value 0x{hex} does not fit in {width} bits"));
            }
        }
        Ok(b)
    }
}

/// Packs fields of at most 64 bits each into a [`Bits`], lowest first (see
/// [`Bits::field_writer`]). Bits beyond the vector's width are dropped.
pub struct FieldWriter<'a> {
    width: u32,
    words: &'a mut [u64],
    /// The next word to store.
    next: usize,
    /// Bits of word `next` gathered so far (`fill` of them).
    acc: u64,
    fill: u32,
}

impl FieldWriter<'_> {
    /// Append the low `width` (1..=64) bits of `value`.
    #[inline(always)]
    pub fn push(&mut self, value: u64, width: u32) {
        debug_assert!((1..=64).contains(&width));
        let value = value & low_mask(width);
        self.acc |= value << self.fill;
        let end = self.fill + width;
        if end >= 64 {
            self.store(self.acc);
            // The bits of `value` that did not fit (none when the word ended exactly).
            self.acc = if self.fill == 0 {
                0
            } else {
                value >> (64 - self.fill)
            };
            self.fill = end - 64;
        } else {
            self.fill = end;
        }
    }

    /// Append `width` zero bits (any width).
    #[inline]
    pub fn skip(&mut self, mut width: u32) {
        while width > 0 {
            let n = width.min(64);
            self.push(0, n);
            width -= n;
        }
    }

    #[inline(always)]
    fn store(&mut self, w: u64) {
        if let Some(slot) = self.words.get_mut(self.next) {
            *slot = w;
        }
        self.next += 1;
    }

    /// Store the last partial word and clear every bit after the last field.
    #[inline]
    pub fn finish(mut self) {
        if self.fill > 0 {
            let acc = self.acc;
            self.store(acc);
        }
        let n = self.words.len();
        for w in &mut self.words[self.next.min(n)..] {
            *w = 0;
        }
        // Fields that ran past the width: bits above it must stay zero.
        let full = (self.width / 64) as usize;
        let rem = self.width % 64;
        if rem != 0 && full < n {
            self.words[full] &= low_mask(rem);
        }
    }
}

impl fmt::Debug for Bits {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}'h{}", self.width, self.to_hex())
    }
}

/// What a port is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// An input port.
    Input,
    /// An output that is a function of the state alone.
    Registered,
    /// An output that is a function of the state and this cycle's inputs.
    Combinational,
    /// Flattened internal state exposed for co-simulation (registered).
    Debug,
}

impl Role {
    pub fn is_input(self) -> bool {
        self == Role::Input
    }
}

/// One port: its name (same in the model, the Verilog and the traces), role and width.
/// `width` is a Verilog constant expression over the unit's parameters (`+ - * / ( )`,
/// integer literals, parameter names and `$clog2(...)`), rendered into the Verilog as
/// written and evaluated in Rust by [`eval_width`], so the two cannot drift.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PortSpec {
    pub name: &'static str,
    pub role: Role,
    pub width: &'static str,
    pub doc: &'static str,
    /// How the port's bits are organised (repeated elements, named fields), when it is more
    /// than one value: divergence reports and input listings name the differing fields
    /// with it (see [`super::layout`]).
    pub layout: Option<&'static super::layout::Layout>,
}

/// A parameter with its valid range (same name as the Verilog parameter).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParamSpec {
    pub name: &'static str,
    pub default: u64,
    pub min: u64,
    pub max: u64,
    pub doc: &'static str,
}

/// Concrete parameter values of one unit instance, in the unit's declaration order.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Params {
    values: Vec<(&'static str, u64)>,
}

impl Params {
    /// Every parameter at its default.
    pub fn defaults(specs: &[ParamSpec]) -> Params {
        Params {
            values: specs.iter().map(|p| (p.name, p.default)).collect(),
        }
    }

    /// The value of parameter `name`; panics on a name the unit does not declare (a bug in
    /// the unit's own code, never user input: user overrides go through [`UnitDesc::params`]).
    pub fn get(&self, name: &str) -> u64 {
        self.values
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| *v)
            .unwrap_or_else(|| panic!("unit has no parameter {name}"))
    }

    pub fn iter(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        self.values.iter().copied()
    }

    fn set(&mut self, name: &str, value: u64) -> bool {
        match self.values.iter_mut().find(|(n, _)| *n == name) {
            Some(slot) => {
                slot.1 = value;
                true
            }
            None => false,
        }
    }
}

impl fmt::Display for Params {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self
            .values
            .iter()
            .map(|(n, v)| format!("{n}={v}"))
            .collect();
        write!(f, "{}", parts.join(","))
    }
}

/// The generic by-name interface of a unit model. Port values are passed as one slice in
/// port-list order (inputs are read from input positions, outputs written to the others).
pub trait UnitModel: Send {
    fn desc(&self) -> &'static UnitDesc;
    fn params(&self) -> &Params;
    /// `outputs(t) = g(state(t), inputs(t))`: writes every registered and combinational
    /// output of `ports` (not the debug-state ports: see [`UnitModel::debug_state`]).
    fn outputs(&self, ports: &mut [Bits]);
    /// Writes the debug-state ports (the flattened internal state(t)). Separate from
    /// `outputs` because packing the whole state costs far more than the outputs: the
    /// co-simulation compares state every N cycles, not every cycle. The default writes
    /// nothing (a unit without debug ports).
    fn debug_state(&self, _ports: &mut [Bits]) {}
    /// [`UnitModel::outputs`] and [`UnitModel::debug_state`]: every non-input port.
    fn all_outputs(&self, ports: &mut [Bits]) {
        self.outputs(ports);
        self.debug_state(ports);
    }
    /// The clock edge: `state(t+1) = f(state(t), inputs(t))` (reads the input ports only).
    fn tick(&mut self, ports: &[Bits]);
    /// The first half of [`UnitModel::outputs`]: writes at least the registered outputs,
    /// state(t), which do not depend on this cycle's inputs. For a caller that reads them
    /// before it decides the inputs (a stimulus reacting to the unit), then calls
    /// [`UnitModel::comb_outputs`]: computing the combinational outputs before the inputs
    /// are known would be wasted. The default writes every output.
    fn registered_outputs(&self, ports: &mut [Bits]) {
        self.outputs(ports)
    }
    /// The second half of [`UnitModel::outputs`] for callers that already hold state(t):
    /// writes at least the combinational outputs for this cycle's inputs, given that the
    /// registered ports of `ports` were written by `outputs` or `registered_outputs` since
    /// the last `tick` (so they need not be rebuilt). The default writes every output.
    fn comb_outputs(&self, ports: &mut [Bits]) {
        self.outputs(ports)
    }
    /// [`UnitModel::comb_outputs`] (with `registered`, [`UnitModel::outputs`]) that also
    /// keeps this cycle's inputs for [`UnitModel::tick_kept`], for a caller that does not
    /// change the input ports between the two (the co-simulation's model side): the inputs
    /// are then read from the ports once a cycle instead of twice. The default keeps
    /// nothing.
    fn outputs_keeping_inputs(&mut self, ports: &mut [Bits], registered: bool) {
        if registered {
            self.outputs(ports)
        } else {
            self.comb_outputs(ports)
        }
    }
    /// The clock edge with the inputs [`UnitModel::outputs_keeping_inputs`] kept this
    /// cycle (`ports` must still hold them; they are read when nothing was kept, e.g. in
    /// reset). The default is [`UnitModel::tick`].
    fn tick_kept(&mut self, ports: &[Bits]) {
        self.tick(ports)
    }
}

/// The single description of a unit.
pub struct UnitDesc {
    /// The RTL module name.
    pub name: &'static str,
    pub summary: &'static str,
    /// Where the unit is specified (shown in the generated Verilog header).
    pub spec: &'static str,
    pub params: &'static [ParamSpec],
    pub ports: &'static [PortSpec],
    /// Parameter sets every test and `cosim --all` covers (overrides of the defaults).
    pub standard_sets: &'static [&'static [(&'static str, u64)]],
    /// Cross-parameter rules beyond each parameter's range.
    pub check: fn(&Params) -> Result<(), String>,
    pub build: fn(&Params) -> Box<dyn UnitModel>,
    /// How the GPU model instantiates the unit under a configuration.
    pub gpu: fn(&crate::config::GpuConfig) -> GpuUse,
    /// Constants the model and the RTL share, computed here and emitted into the Verilog as
    /// `localparam`s (design.md §3: never written twice): encodings, storage geometry.
    pub localparams: fn(&Params) -> Vec<LocalParam>,
    /// The unit's functional coverage bins (see [`super::coverage`]), sampled by every
    /// co-simulation run.
    pub coverage: &'static [super::coverage::Cover],
    /// How its cost scales: the parameters `warpforge report estimates` sweeps.
    pub scaling: &'static [Scaling],
    /// The cost figures its seed document gives, for the estimates report to compare with.
    pub seed_costs: &'static [SeedCost],
}

/// One parameter sweep of the estimates report: `param` at each of `values`, every other
/// parameter at its default but for `base`.
#[derive(Debug, Clone, Copy)]
pub struct Scaling {
    pub param: &'static str,
    pub values: &'static [u64],
    /// Overrides of the defaults the sweep runs around (a smaller base keeps a unit whose
    /// default set takes minutes in synthesis cheap to sweep).
    pub base: &'static [(&'static str, u64)],
}

/// Which figure of a unit's synthesis a seed cost figure compares with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CostFigure {
    /// Flip-flops (storage bits).
    Flops,
    /// Yosys' estimated transistor count (`stat -tech cmos`).
    Transistors,
    /// NAND2-equivalent gates: the transistor estimate over 4 (a static-CMOS NAND2).
    Nand2Eq,
}

impl CostFigure {
    pub fn name(self) -> &'static str {
        match self {
            CostFigure::Flops => "flip-flops",
            CostFigure::Transistors => "transistors (est.)",
            CostFigure::Nand2Eq => "NAND2-eq (est.)",
        }
    }
}

/// A cost figure the seed document gives for the unit, as the estimates report compares
/// it: ours is `figure` of the unit at `params` (over the same figure at `relative_to`,
/// when the seed gives a ratio).
#[derive(Debug, Clone, Copy)]
pub struct SeedCost {
    /// What is compared, e.g. "CAPT, 8 entries".
    pub label: &'static str,
    pub params: &'static [(&'static str, u64)],
    pub relative_to: Option<&'static [(&'static str, u64)]>,
    pub figure: CostFigure,
    /// The seed's figure (a ratio when `relative_to` is set).
    pub seed: f64,
    /// What the seed's figure is and how it was obtained, with the citation.
    pub seed_basis: &'static str,
}

/// A constant shared by a unit's model and its RTL: computed in Rust from the parameters and
/// rendered into the generated module as `localparam integer NAME = VALUE;` (or, with a
/// width, `localparam [WIDTH-1:0] NAME = WIDTH'dVALUE;`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LocalParam {
    pub name: &'static str,
    pub value: u64,
    /// `Some(w)`: a sized constant of `w` bits; `None`: an `integer`.
    pub width: Option<u32>,
    pub doc: &'static str,
}

impl LocalParam {
    /// An `integer` constant.
    pub const fn int(name: &'static str, value: u64, doc: &'static str) -> LocalParam {
        LocalParam {
            name,
            value,
            width: None,
            doc,
        }
    }

    /// A sized constant of `width` bits.
    pub const fn sized(
        name: &'static str,
        width: u32,
        value: u64,
        doc: &'static str,
    ) -> LocalParam {
        LocalParam {
            name,
            value,
            width: Some(width),
            doc,
        }
    }

    /// The Verilog declaration (without the trailing comment).
    pub fn verilog(&self) -> String {
        match self.width {
            None => format!("localparam integer {} = {};", self.name, self.value),
            Some(w) => format!(
                "localparam [{}:0] {} = {w}'d{};",
                w.saturating_sub(1),
                self.name,
                self.value
            ),
        }
    }
}

/// How the GPU model uses a unit under one configuration (a unit's registry entry).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GpuUse {
    /// Instantiated: `instances` says where (e.g. "every warp slot of every SM"); each
    /// parameter's value with the configuration key it comes from (`""`: fixed by the
    /// model; a value a launch may widen says so in the key's text).
    Instantiated {
        instances: &'static str,
        params: Vec<(&'static str, u64, &'static str)>,
    },
    /// Not instantiated; the configuration overrides (`KEY=VALUE`, as `--set` takes them)
    /// that would instantiate it.
    NotUsed { set: &'static [&'static str] },
    /// The GPU model has no place for the unit (it is co-simulated on its own).
    Standalone,
}

impl fmt::Debug for UnitDesc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "UnitDesc({})", self.name)
    }
}

impl UnitDesc {
    /// Parameters from the defaults plus `overrides` (`NAME=VALUE` pairs), validated.
    pub fn params<S: AsRef<str>>(&'static self, overrides: &[(S, u64)]) -> Result<Params, String> {
        let mut p = Params::defaults(self.params);
        for (name, value) in overrides {
            let name = name.as_ref();
            if !p.set(name, *value) {
                let known: Vec<&str> = self.params.iter().map(|s| s.name).collect();
                return Err(format!(
                    "unit {} has no parameter {name} (its parameters: {})",
                    self.name,
                    known.join(", ")
                ));
            }
        }
        for spec in self.params {
            let v = p.get(spec.name);
            if v < spec.min || v > spec.max {
                return Err(format!(
                    "{}: parameter {}={v} is out of range {}..={} ({})",
                    self.name, spec.name, spec.min, spec.max, spec.doc
                ));
            }
        }
        (self.check)(&p).map_err(|e| format!("{}: {e}", self.name))?;
        Ok(p)
    }

    /// The parameters the GPU model instantiates this unit with under `cfg` (`Ok(None)`:
    /// not instantiated), validated: a value out of range is an error naming the
    /// configuration key it comes from.
    pub fn gpu_params(
        &'static self,
        cfg: &crate::config::GpuConfig,
    ) -> Result<Option<Params>, String> {
        let GpuUse::Instantiated { params, .. } = (self.gpu)(cfg) else {
            return Ok(None);
        };
        for &(name, value, key) in &params {
            let spec = self
                .params
                .iter()
                .find(|p| p.name == name)
                .unwrap_or_else(|| panic!("unit {}: GPU use names no parameter {name}", self.name));
            if value < spec.min || value > spec.max {
                let from = if key.is_empty() {
                    "the GPU model's fixed value".to_string()
                } else {
                    format!("`{key}`")
                };
                return Err(format!(
                    "{from} = {value} gives unit {} parameter {name}={value}, out of its range {}..={} ({})",
                    self.name, spec.min, spec.max, spec.doc
                ));
            }
        }
        let values: Vec<(&str, u64)> = params.iter().map(|&(n, v, _)| (n, v)).collect();
        self.params(&values).map(Some)
    }

    /// The standard parameter sets, validated.
    pub fn standard_params(&'static self) -> Vec<Params> {
        self.standard_sets
            .iter()
            .map(|set| {
                self.params(set)
                    .unwrap_or_else(|e| panic!("bad standard parameter set: {e}"))
            })
            .collect()
    }

    /// Port widths for concrete parameters, in port-list order.
    pub fn widths(&self, params: &Params) -> Vec<u32> {
        self.ports
            .iter()
            .map(|p| {
                eval_width(p.width, params).unwrap_or_else(|e| {
                    panic!(
                        "unit {} port {}: bad width expression: {e}",
                        self.name, p.name
                    )
                })
            })
            .collect()
    }

    /// Zeroed port values for concrete parameters, in port-list order.
    pub fn zero_ports(&self, params: &Params) -> Vec<Bits> {
        self.widths(params).into_iter().map(Bits::zero).collect()
    }

    pub fn port_index(&self, name: &str) -> Option<usize> {
        self.ports.iter().position(|p| p.name == name)
    }
}

/// Evaluate a width expression (see [`PortSpec::width`]) for concrete parameters.
pub fn eval_width(expr: &str, params: &Params) -> Result<u32, String> {
    let mut p = ExprParser {
        s: expr.as_bytes(),
        i: 0,
        params,
    };
    let v = p.sum()?;
    p.skip_ws();
    if p.i != p.s.len() {
        return Err(format!("unexpected text at column {} of `{expr}`", p.i + 1));
    }
    u32::try_from(v).map_err(|_| format!("`{expr}` = {v} is not a valid width"))
}

struct ExprParser<'a> {
    s: &'a [u8],
    i: usize,
    params: &'a Params,
}

impl ExprParser<'_> {
    fn skip_ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }
    fn eat(&mut self, c: u8) -> bool {
        self.skip_ws();
        if self.s.get(self.i) == Some(&c) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn sum(&mut self) -> Result<i64, String> {
        let mut v = self.product()?;
        loop {
            if self.eat(b'+') {
                v += self.product()?;
            } else if self.eat(b'-') {
                v -= self.product()?;
            } else {
                return Ok(v);
            }
        }
    }
    fn product(&mut self) -> Result<i64, String> {
        let mut v = self.atom()?;
        loop {
            if self.eat(b'*') {
                v *= self.atom()?;
            } else if self.eat(b'/') {
                let d = self.atom()?;
                if d == 0 {
                    return Err("division by zero".into());
                }
                v /= d;
            } else {
                return Ok(v);
            }
        }
    }
    fn atom(&mut self) -> Result<i64, String> {
        self.skip_ws();
        if self.eat(b'(') {
            let v = self.sum()?;
            return if self.eat(b')') {
                Ok(v)
            } else {
                Err("missing `)`".into())
            };
        }
        let start = self.i;
        while self.i < self.s.len()
            && (self.s[self.i].is_ascii_alphanumeric() || b"_$".contains(&self.s[self.i]))
        {
            self.i += 1;
        }
        let word = std::str::from_utf8(&self.s[start..self.i]).unwrap();
        if word.is_empty() {
            return Err(format!("expected a value at column {}", start + 1));
        }
        if word == "$clog2" {
            if !self.eat(b'(') {
                return Err("`$clog2` needs `(`".into());
            }
            let v = self.sum()?;
            if !self.eat(b')') {
                return Err("missing `)`".into());
            }
            return Ok(clog2(v.max(0) as u64) as i64);
        }
        if word.as_bytes()[0].is_ascii_digit() {
            return word.parse().map_err(|_| format!("bad number `{word}`"));
        }
        self.params
            .iter()
            .find(|(n, _)| *n == word)
            .map(|(_, v)| v as i64)
            .ok_or_else(|| format!("unknown parameter `{word}`"))
    }
}

/// Verilog `$clog2`: the number of bits needed to index `n` items (0 for n <= 1).
pub fn clog2(n: u64) -> u32 {
    if n <= 1 {
        0
    } else {
        64 - (n - 1).leading_zeros()
    }
}

/// Bits `[lsb, lsb + width)` (`width` at most 64) of a little-endian word array, as a
/// flattened vector holds them; bits past the array's end read 0. The one implementation
/// of a field read: [`Bits::field`] uses it, and so do port values kept as word arrays
/// (`[u64; N]`).
#[inline]
pub fn words_field(words: &[u64], lsb: u32, width: u32) -> u64 {
    let (k, at) = ((lsb / 64) as usize, lsb % 64);
    let low = words.get(k).map_or(0, |w| w >> at);
    let high = match (at, words.get(k + 1)) {
        (0, _) | (_, None) => 0,
        (_, Some(w)) => w << (64 - at),
    };
    (low | high) & low_mask(width)
}

/// Writes the low `width` (at most 64) bits of `value` to bits `[lsb, lsb + width)` of a
/// little-endian word array whose word `lsb / 64` exists; bits past its end are dropped.
/// The one implementation of a field write (see [`words_field`]).
#[inline]
pub fn set_words_field(words: &mut [u64], lsb: u32, width: u32, value: u64) {
    if width == 0 {
        return;
    }
    let value = value & low_mask(width);
    let (w, b) = ((lsb / 64) as usize, lsb % 64);
    words[w] = (words[w] & !(low_mask(width) << b)) | (value << b);
    if b + width > 64 && w + 1 < words.len() {
        let hi = b + width - 64;
        words[w + 1] = (words[w + 1] & !low_mask(hi)) | (value >> (64 - b));
    }
}

/// A mask of the low `n` bits (n <= 64).
#[inline]
pub fn low_mask(n: u32) -> u64 {
    if n >= 64 {
        u64::MAX
    } else {
        (1u64 << n) - 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: &[ParamSpec] = &[
        ParamSpec {
            name: "WARP_SIZE",
            default: 32,
            min: 8,
            max: 64,
            doc: "",
        },
        ParamSpec {
            name: "DEPTH",
            default: 16,
            min: 2,
            max: 64,
            doc: "",
        },
    ];

    #[test]
    fn width_expressions() {
        let p = Params::defaults(P);
        assert_eq!(eval_width("WARP_SIZE", &p), Ok(32));
        assert_eq!(eval_width("DEPTH*(2*32+WARP_SIZE)", &p), Ok(16 * 96));
        assert_eq!(eval_width("$clog2(DEPTH+1)", &p), Ok(5));
        assert_eq!(eval_width(" 1 ", &p), Ok(1));
        assert!(eval_width("FOO", &p).is_err());
        assert!(eval_width("(1", &p).is_err());
        assert!(eval_width("1 2", &p).is_err());
    }

    #[test]
    fn clog2_matches_verilog() {
        assert_eq!(
            [0, 1, 2, 3, 4, 5, 16, 17].map(clog2),
            [0, 0, 1, 2, 2, 3, 4, 5]
        );
    }

    #[test]
    fn bits_hex_round_trip_and_diff() {
        let mut b = Bits::zero(70);
        b.set_field(60, 8, 0xab);
        b.set_bit(0, true);
        let hex = b.to_hex();
        assert_eq!(hex.len(), 18);
        assert_eq!(Bits::from_hex(70, &hex).unwrap(), b);
        let mut c = b.clone();
        c.set_bit(65, false);
        assert_eq!(b.diff_bits(&c), vec![65]);
        assert!(Bits::from_hex(4, "1f").is_err());
        assert_eq!(Bits::from_u64(4, 0xff).to_u64(), 0xf);
    }

    #[test]
    fn field_writer_matches_set_field() {
        // Fields of every width 1..=64 at every alignment, vectors with and without a
        // partial top word, fields that run past the width, stale bits to be cleared.
        let mut rng = 0x1234_5678_9abc_def0u64;
        let mut next = || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        for width in [1u32, 5, 63, 64, 65, 96, 128, 200, 1536] {
            for _ in 0..200 {
                let mut a = Bits::zero(width);
                let mut b = Bits::zero(width);
                let junk: Vec<u64> = (0..a.words().len()).map(|_| next()).collect();
                a.set_words(&junk);
                b.set_words(&junk);
                b.clear();
                let mut w = a.field_writer();
                let mut lsb = 0u32;
                while lsb < width + 70 {
                    let fw = 1 + (next() % 64) as u32;
                    let v = next();
                    if next() % 5 == 0 {
                        w.skip(fw + 64);
                        lsb += fw + 64;
                        continue;
                    }
                    w.push(v, fw);
                    b.set_field(lsb, fw, v);
                    lsb += fw;
                    if next() % 7 == 0 {
                        break;
                    }
                }
                w.finish();
                assert_eq!(a, b, "width {width}");
            }
        }
    }
}
