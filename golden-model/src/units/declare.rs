//! One declaration per unit (design.md §3): [`declare_unit!`](crate::declare_unit) turns a
//! single block — the unit's parameters with defaults, ranges and docs, and its ports by
//! role with width expressions and docs — into everything that used to be written by hand
//! in several places:
//!
//! - the typed parameter struct (with `Default` and the conversions from and to the generic
//!   [`Params`]) and the [`ParamSpec`] list;
//! - a typed struct per port group: inputs, registered outputs, combinational (event)
//!   outputs, each readable from and writable to generic port values ([`PortGroup`]);
//! - the port list ([`PortSpec`]s, `rst_n` first) and a module of port positions, numbered
//!   by the macro rather than by hand;
//! - the unit's [`UnitDesc`] with a by-name adapter ([`Adapter`]) over the typed model;
//! - optionally (`localparams:`), the constants the model and the RTL share (encodings,
//!   storage geometry), computed in Rust from the parameters and rendered by the generator
//!   into the module as `localparam`s, so they are never written twice.
//!
//! The unit author then writes only the model: state, registered outputs, combinational
//! outputs, next state and (optionally) the packing of its debug-state ports, by
//! implementing [`Unit`] for the state struct.

use super::contract::{low_mask, Bits, Params, UnitDesc, UnitModel};

/// A parameter value as the typed parameter struct holds it.
pub trait ParamValue: Copy {
    fn from_u64(v: u64) -> Self;
    fn to_u64(self) -> u64;
}

impl ParamValue for u32 {
    fn from_u64(v: u64) -> u32 {
        v as u32
    }
    fn to_u64(self) -> u64 {
        self as u64
    }
}

impl ParamValue for bool {
    fn from_u64(v: u64) -> bool {
        v != 0
    }
    fn to_u64(self) -> u64 {
        self as u64
    }
}

/// One port's value in a typed port struct.
pub trait PortValue: Default {
    fn read(bits: &Bits) -> Self;
    fn write(&self, bits: &mut Bits);
    /// The value's words into `frame` at `slot`, as [`PortValue::write`] leaves them in a
    /// port's [`Bits`]: bits above the width cleared. A single-word type's port takes one
    /// word.
    #[inline]
    fn put_words(&self, frame: &mut [u64], slot: WordSlot) {
        frame[slot.at as usize] = self.low_word() & slot.width.low_mask;
    }
    /// Cut to `width` bits: the value [`PortValue::read`] gives back after
    /// [`PortValue::write`] into a port of that width.
    fn fit(&mut self, width: PortWidth);
    /// Bits set (an event port's activity this cycle).
    fn ones(&self) -> u32;
    /// Every bit is zero.
    fn is_zero(&self) -> bool {
        self.ones() == 0
    }
    /// The value's lowest 64 bits (all of it for the single-word types).
    fn low_word(&self) -> u64;
    /// The value is not 0 at `width` bits (a trace records it).
    #[inline]
    fn nonzero(&self, width: PortWidth) -> bool {
        self.low_word() & width.low_mask != 0
    }
    /// Unless the value is 0 at `width` bits: its 64-bit words at that width, low word
    /// first, as a trace stores them.
    #[inline]
    fn sparse_words(&self, width: PortWidth, out: &mut impl FnMut(u64)) {
        let w = self.low_word() & width.low_mask;
        if w != 0 {
            out(w);
        }
    }
    /// The raw words a trace sink keeps of a non-zero value (see
    /// [`super::trace_sink::RawRecord`]): its one word; none for a `bool`, whose presence
    /// bit is its value.
    #[inline]
    fn pack_words(&self, out: &mut Vec<u64>) {
        out.push(self.low_word())
    }
    /// The non-zero value [`PortValue::pack_words`] wrote at the front of `words`, and the
    /// words it took.
    fn unpack_words(words: &[u64]) -> (Self, usize);
    /// The count [`PortValue::unpack_words`] returns, without building the value: one word
    /// unless the type says otherwise.
    #[inline]
    fn packed_words(_words: &[u64]) -> usize {
        1
    }
}

/// Where a port's words sit in a frame of words (the co-simulation's hand-over from the
/// model side to the RTL side): the offset of its first, how many, and its width.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WordSlot {
    pub at: u32,
    pub len: u32,
    pub width: PortWidth,
}

/// A port's width as trace encoding uses it: its bits, and the mask of its first word
/// (computed once per trace, not once per recorded value).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PortWidth {
    pub bits: u32,
    pub low_mask: u64,
}

impl PortWidth {
    pub fn of(bits: u32) -> PortWidth {
        PortWidth {
            bits,
            low_mask: low_mask(bits),
        }
    }
}

impl PortValue for bool {
    #[inline]
    fn read(bits: &Bits) -> bool {
        bits.to_u64() != 0
    }
    #[inline]
    fn write(&self, bits: &mut Bits) {
        bits.set_u64(*self as u64)
    }
    #[inline]
    fn fit(&mut self, width: PortWidth) {
        *self &= width.low_mask & 1 != 0;
    }
    #[inline]
    fn ones(&self) -> u32 {
        *self as u32
    }
    #[inline]
    fn low_word(&self) -> u64 {
        *self as u64
    }
    #[inline]
    fn pack_words(&self, _out: &mut Vec<u64>) {}
    #[inline]
    fn unpack_words(_words: &[u64]) -> (bool, usize) {
        (true, 0)
    }
    #[inline]
    fn packed_words(_words: &[u64]) -> usize {
        0
    }
}

macro_rules! int_port_value {
    ($($t:ty),*) => {$(
        impl PortValue for $t {
            #[inline]
            fn read(bits: &Bits) -> $t {
                bits.to_u64() as $t
            }
            #[inline]
            fn write(&self, bits: &mut Bits) {
                bits.set_u64(*self as u64)
            }
            #[inline]
            fn fit(&mut self, width: PortWidth) {
                *self = (*self as u64 & width.low_mask) as $t;
            }
            #[inline]
            fn ones(&self) -> u32 {
                self.count_ones()
            }
            #[inline]
            fn low_word(&self) -> u64 {
                *self as u64
            }
            #[inline]
            fn unpack_words(words: &[u64]) -> ($t, usize) {
                (words[0] as $t, 1)
            }
        }
    )*};
}
int_port_value!(u8, u16, u32, u64);

/// Ports wider than 64 bits (port arrays whose width grows with a parameter).
impl PortValue for Bits {
    fn read(bits: &Bits) -> Bits {
        bits.clone()
    }
    fn write(&self, bits: &mut Bits) {
        bits.set_words(self.words())
    }
    fn put_words(&self, frame: &mut [u64], slot: WordSlot) {
        put_masked_words(self.words(), frame, slot)
    }
    fn fit(&mut self, width: PortWidth) {
        // A value of the port's width holds no bits above it (`Bits` keeps them clear).
        if self.width() != width.bits {
            let mut v = Bits::zero(width.bits);
            v.set_words(self.words());
            *self = v;
        }
    }
    fn ones(&self) -> u32 {
        self.words().iter().map(|w| w.count_ones()).sum()
    }
    /// A value of another width (a default, empty one too) is cut or zero-extended.
    fn low_word(&self) -> u64 {
        self.words().first().copied().unwrap_or(0)
    }
    fn nonzero(&self, width: PortWidth) -> bool {
        (0..width.bits.div_ceil(64).max(1)).any(|k| masked_word(self, width, k) != 0)
    }
    fn sparse_words(&self, width: PortWidth, out: &mut impl FnMut(u64)) {
        if self.nonzero(width) {
            (0..width.bits.div_ceil(64).max(1)).for_each(|k| out(masked_word(self, width, k)));
        }
    }
    /// The width, then the words.
    fn pack_words(&self, out: &mut Vec<u64>) {
        out.push(self.width() as u64);
        out.extend_from_slice(self.words());
    }
    fn unpack_words(words: &[u64]) -> (Bits, usize) {
        let width = words[0] as u32;
        let n = width.div_ceil(64).max(1) as usize;
        let mut b = Bits::zero(width);
        b.set_words(&words[1..1 + n]);
        (b, 1 + n)
    }
    fn packed_words(words: &[u64]) -> usize {
        1 + (words[0] as u32).div_ceil(64).max(1) as usize
    }
}

/// Word `k` of `bits` at `width` (0 past its words), masked to the width.
fn masked_word(bits: &Bits, width: PortWidth, k: u32) -> u64 {
    masked_word_of(bits.words(), width, k)
}

/// `words` into `frame` at `slot` (0 past its words), masked to the slot's width.
fn put_masked_words(words: &[u64], frame: &mut [u64], slot: WordSlot) {
    let out = &mut frame[slot.at as usize..(slot.at + slot.len) as usize];
    for (k, o) in out.iter_mut().enumerate() {
        *o = masked_word_of(words, slot.width, k as u32);
    }
}

/// Word `k` of `words` at `width` (0 past its words), masked to the width.
fn masked_word_of(words: &[u64], width: PortWidth, k: u32) -> u64 {
    words.get(k as usize).copied().unwrap_or(0) & low_mask(width.bits.saturating_sub(64 * k))
}

/// Ports wider than 64 bits with a fixed largest width (`[u64; N]`, low word first):
/// unlike [`Bits`], a `Copy` value that never allocates, so a unit whose inputs are wide (a
/// thread-block-wide mask) keeps a typed fast path without allocation and records its
/// inputs as they are (`records_its_inputs!`). Bits above the port's width are ignored.
macro_rules! wide_port_value {
    ($($n:literal),*) => {$(
        impl PortValue for [u64; $n] {
            fn read(bits: &Bits) -> [u64; $n] {
                let mut v = [0; $n];
                v.iter_mut().zip(bits.words()).for_each(|(d, s)| *d = *s);
                v
            }
            fn write(&self, bits: &mut Bits) {
                bits.set_words(self)
            }
            fn put_words(&self, frame: &mut [u64], slot: WordSlot) {
                put_masked_words(self, frame, slot)
            }
            fn fit(&mut self, width: PortWidth) {
                // The words below the width's last are whole; that one is cut, the rest 0.
                let last = (width.bits / 64) as usize;
                if last < $n {
                    self[last] &= low_mask(width.bits % 64);
                    self[last + 1..].fill(0);
                }
            }
            fn ones(&self) -> u32 {
                self.iter().map(|w| w.count_ones()).sum()
            }
            fn low_word(&self) -> u64 {
                self[0]
            }
            fn nonzero(&self, width: PortWidth) -> bool {
                (0..width.bits.div_ceil(64).max(1)).any(|k| masked_word_of(self, width, k) != 0)
            }
            fn sparse_words(&self, width: PortWidth, out: &mut impl FnMut(u64)) {
                if self.nonzero(width) {
                    (0..width.bits.div_ceil(64).max(1))
                        .for_each(|k| out(masked_word_of(self, width, k)));
                }
            }
            #[inline]
            fn pack_words(&self, out: &mut Vec<u64>) {
                out.extend_from_slice(self)
            }
            #[inline]
            fn unpack_words(words: &[u64]) -> ([u64; $n], usize) {
                let mut v = [0; $n];
                v.copy_from_slice(&words[..$n]);
                (v, $n)
            }
            #[inline]
            fn packed_words(_words: &[u64]) -> usize {
                $n
            }
        }
    )*};
}
wide_port_value!(2, 3, 4, 8, 16);

/// A typed struct of one port group (generated by `declare_unit!`).
pub trait PortGroup: Default + Send {
    /// The group's port names, in field order.
    const NAMES: &'static [&'static str];
    /// The group's positions in the unit's port list, in field order.
    const POSITIONS: &'static [usize];
    /// The group's fields from generic port values (the whole port list).
    fn read_ports(ports: &[Bits]) -> Self;
    /// Write the group's fields into generic port values; other ports are left as they are.
    fn write_ports(&self, ports: &mut [Bits]);
    /// Write the group's fields into a frame of words, port `p` at `slots[p]` (the words
    /// [`PortGroup::write_ports`] would leave in its `Bits`); other words are left as they
    /// are.
    fn put_frame(&self, slots: &[WordSlot], frame: &mut [u64]);
    /// Cut every field to its port's width (`slots[p].width`): the values
    /// [`PortGroup::read_ports`] gives back after [`PortGroup::write_ports`].
    fn fit(&mut self, slots: &[WordSlot]);
    /// One counter per field, by value (`[u64; N]`): a unit host keeps each instance's
    /// next to the instance, which an edge touches anyway.
    type Counts: Copy + Default + Send + AsRef<[u64]> + AsMut<[u64]> + 'static;
    /// Add each field's set bits to `counts` (one counter per field, in field order).
    fn count_ones(&self, counts: &mut [u64]);
    /// Every field is zero (for inputs: an idle cycle, which traces leave implicit).
    fn is_idle(&self) -> bool;
    /// Which fields are not 0 at their widths `widths[f]` (bit `f`): the ones a trace event
    /// records.
    fn present(&self, widths: &[PortWidth]) -> u64;
    /// The words of every non-zero field in field order, field `f` at `widths[f]` bits (see
    /// [`PortValue::sparse_words`]).
    fn encode(&self, widths: &[PortWidth], out: &mut impl FnMut(u64));
}

/// The typed parameters of a unit (generated by `declare_unit!`).
pub trait UnitParams: Copy + Default + Send + 'static {
    /// From a validated generic parameter set of the unit.
    fn from_params(p: &Params) -> Self;
    /// As a generic parameter set, validated against the declared ranges and rules.
    fn to_params(&self) -> Result<Params, String>;
}

/// What `declare_unit!` derives for a unit's model type.
pub trait Declared: Sized + Send + 'static {
    type Params: UnitParams;
    type Inputs: PortGroup;
    type Registered: PortGroup;
    type Events: PortGroup;
    /// The unit's single description.
    fn desc() -> &'static UnitDesc;
}

/// What a unit author writes: the cycle-exact model behind the declared ports.
///
/// Per cycle, `outputs(t) = (registered(state(t)), events(state(t), inputs(t)))` and
/// `state(t+1) = tick(state(t), inputs(t))`; `reset` is the synchronous reset's edge.
pub trait Unit: Declared {
    fn new(params: Self::Params) -> Self;
    fn reset(&mut self);
    /// The registered outputs (a function of the state alone).
    fn registered(&self) -> Self::Registered;
    /// The combinational outputs for this cycle's inputs.
    fn events(&self, inp: &Self::Inputs) -> Self::Events;
    /// The clock edge; returns the cycle's combinational outputs.
    fn tick(&mut self, inp: &Self::Inputs) -> Self::Events;
    /// The clock edge when the caller does not want the cycle's combinational outputs (the
    /// co-simulation's model side has them from [`Self::events`] already). A unit whose
    /// `tick` computes them only to return them overrides this to skip that work.
    #[inline]
    fn advance(&mut self, inp: &Self::Inputs) {
        let _ = self.tick(inp);
    }
    /// Writes the debug-state ports (flattened internal state) into `ports`.
    fn debug_state(&self, _ports: &mut [Bits]) {}
    /// What the unit's host keeps of an active clock edge for a trace: its inputs, or a
    /// cheaper form they are rebuilt from. Kept as raw words until the trace is replayed or
    /// written (see [`super::trace_sink`]).
    type Recorded: super::trace_sink::RawRecord;
    /// The recorded form of inputs given to [`super::host::UnitHost::tick`].
    fn recorded(&self, inp: &Self::Inputs) -> Self::Recorded;
    /// The inputs a recorded value stands for at parameters `params`: the trace's, which
    /// may be wider than the instance's (the scoreboard's trace widens `NUM_REGS` when a
    /// later launch uses more registers).
    fn recorded_inputs(value: &Self::Recorded, params: &Self::Params) -> Self::Inputs;
}

/// The [`Unit`] trace items of a unit whose traces record its inputs as they are (a unit
/// clocked through [`super::host::UnitHost::tick`]): write `records_its_inputs!();` in its
/// `impl Unit`.
#[macro_export]
macro_rules! records_its_inputs {
    () => {
        type Recorded = <Self as $crate::units::declare::Declared>::Inputs;
        #[inline(always)]
        fn recorded(&self, inp: &Self::Inputs) -> Self::Recorded {
            *inp
        }
        #[inline(always)]
        fn recorded_inputs(value: &Self::Recorded, _: &Self::Params) -> Self::Inputs {
            *value
        }
    };
    // Kept in a wrapper of the inputs with a cheaper raw form (`$W(inputs)`).
    (as $W:ident) => {
        type Recorded = $W<<Self as $crate::units::declare::Declared>::Inputs>;
        #[inline(always)]
        fn recorded(&self, inp: &Self::Inputs) -> Self::Recorded {
            $W(*inp)
        }
        #[inline(always)]
        fn recorded_inputs(value: &Self::Recorded, _: &Self::Params) -> Self::Inputs {
            value.0
        }
    };
}

/// Any [`Unit`] behind the generic by-name interface: converts ports and calls the typed
/// model, so there is never a second implementation.
pub struct Adapter<U: Unit> {
    params: Params,
    unit: U,
    /// This cycle's inputs, kept by [`UnitModel::outputs_keeping_inputs`] for
    /// [`UnitModel::tick_kept`].
    kept: Option<U::Inputs>,
}

impl<U: Unit> Adapter<U> {
    pub fn new(params: &Params) -> Adapter<U> {
        Adapter {
            params: params.clone(),
            unit: U::new(U::Params::from_params(params)),
            kept: None,
        }
    }
    pub fn unit(&self) -> &U {
        &self.unit
    }
    /// This cycle's events (all 0 while `rst_n` is low) and the inputs read for them.
    fn events(&self, ports: &[Bits]) -> (U::Events, Option<U::Inputs>) {
        if ports[RST_N].to_u64() == 0 {
            (U::Events::default(), None)
        } else {
            let inputs = U::Inputs::read_ports(ports);
            (self.unit.events(&inputs), Some(inputs))
        }
    }
    /// A boxed by-name model (the [`UnitDesc::build`] of a declared unit).
    pub fn boxed(params: &Params) -> Box<dyn UnitModel> {
        Box::new(Self::new(params))
    }
}

/// Position of `rst_n` in every port list (`declare_unit!` puts it first).
pub const RST_N: usize = 0;

impl<U: Unit> UnitModel for Adapter<U> {
    fn desc(&self) -> &'static UnitDesc {
        U::desc()
    }
    fn params(&self) -> &Params {
        &self.params
    }
    fn outputs(&self, ports: &mut [Bits]) {
        self.registered_outputs(ports);
        self.comb_outputs(ports);
    }
    fn registered_outputs(&self, ports: &mut [Bits]) {
        self.unit.registered().write_ports(ports);
    }
    fn debug_state(&self, ports: &mut [Bits]) {
        self.unit.debug_state(ports);
    }
    /// The combinational outputs only: the registered ports depend on the state alone.
    /// They read 0 while `rst_n` is low.
    fn comb_outputs(&self, ports: &mut [Bits]) {
        self.events(ports).0.write_ports(ports);
    }
    fn tick(&mut self, ports: &[Bits]) {
        self.kept = None;
        if ports[RST_N].to_u64() == 0 {
            self.unit.reset();
        } else {
            self.unit.advance(&U::Inputs::read_ports(ports));
        }
    }
    fn outputs_keeping_inputs(&mut self, ports: &mut [Bits], registered: bool) {
        if registered {
            self.registered_outputs(ports);
        }
        let (ev, inputs) = self.events(ports);
        self.kept = inputs;
        ev.write_ports(ports);
    }
    fn tick_kept(&mut self, ports: &[Bits]) {
        match self.kept.take() {
            Some(inputs) => self.unit.advance(&inputs),
            None => self.tick(ports),
        }
    }
}

/// Declares a hardware unit once; see the [module documentation](self).
///
/// ```ignore
/// declare_unit! {
///     /// doc of the description
///     pub static SPE_DESC: SimtStackSpe = unit "simt_stack_spe" {
///         summary: "...", spec: "...",
///         standard_sets: &[&[], &[("DEPTH", 4)]],
///         check: |_| Ok(()),
///         gpu: |cfg| GpuUse::NotUsed { set: &["sm.reconvergence=spe"] },
///         localparams: |p| vec![LocalParam::int("ENTRY_W", 96, "doc")], // optional
///         coverage: &[Cover::Values { port: "depth", max: "DEPTH" }, Cover::EveryEvent],
///         ports: spe_port,
///     }
///     params SpeParams {
///         warp_size: u32 = WARP_SIZE(32, 8..=64) "threads per warp",
///     }
///     inputs SpeInputs { launch_valid: bool ["1"] "doc", ... }
///     registered SpeRegs { tos_pc: u32 ["PC_W"] "doc", ... }
///     combinational SpeEvents { ev_pop: bool ["1"] "doc", ... }
///     debug {
///         dbg_done ["WARP_SIZE"] "doc",
///         dbg_stack ["DEPTH*(2*PC_W+WARP_SIZE)"] "doc"
///             layout([entry: "DEPTH"] { mask: "WARP_SIZE", rpc: "PC_W", pc: "PC_W" }),
///     }
/// }
/// ```
///
/// The port list is `rst_n`, then the inputs, the registered outputs, the combinational
/// outputs and the debug ports, each in declaration order; the module named by `ports`
/// holds every port's position as a constant named like the port, and the list as `LIST`.
///
/// Any port may end with a field layout ([`Layout`](super::layout::Layout): how its bits
/// are organised, for divergence reports and input listings): `layout([dims] "width")`
/// for repeated elements of one value each (`layout([_: "NRSV"] "$clog2(NUM_REGS)")`:
/// `rsv_reg[1]`), or `layout([dims] { name: "width", ... })` for elements of named fields,
/// LSB first. Dimensions are `name: "count"`, outermost first (`[warp: "NUM_WARPS", side:
/// "2", reg: "NUM_REGS"]`: element `(warp*2 + side)*NUM_REGS + reg`); `_` leaves a
/// dimension or field unnamed.
#[macro_export]
macro_rules! declare_unit {
    (
        $(#[$dmeta:meta])*
        $vis:vis static $DESC:ident : $Model:ty = unit $name:literal {
            summary: $summary:expr,
            spec: $spec:expr,
            standard_sets: $sets:expr,
            check: $check:expr,
            gpu: $gpu:expr,
            $(localparams: $lps:expr,)?
            coverage: $cov:expr,
            $(scaling: $scaling:expr,)?
            $(seed_costs: $seed_costs:expr,)?
            ports: $portmod:ident $(,)?
        }
        $(#[$pmeta:meta])*
        params $Params:ident {
            $( $(#[$pfm:meta])* $pfield:ident : $pty:ty = $PNAME:ident ($pdef:expr, $pmin:literal ..= $pmax:expr) $pdoc:literal ),* $(,)?
        }
        $(#[$imeta:meta])*
        inputs $Inputs:ident {
            $( $(#[$ifm:meta])* $ifield:ident : $ity:ty [$iw:literal] $idoc:literal $(layout $ilay:tt)? ),* $(,)?
        }
        $(#[$rmeta:meta])*
        registered $Regs:ident {
            $( $(#[$rfm:meta])* $rfield:ident : $rty:ty [$rw:literal] $rdoc:literal $(layout $rlay:tt)? ),* $(,)?
        }
        $(#[$emeta:meta])*
        combinational $Events:ident {
            $( $(#[$efm:meta])* $efield:ident : $ety:ty [$ew:literal] $edoc:literal $(layout $elay:tt)? ),* $(,)?
        }
        debug {
            $( $dname:ident [$dw:literal] $ddoc:literal $(layout $dlay:tt)? ),* $(,)?
        }
    ) => {
        $(#[$dmeta])*
        $vis static $DESC: $crate::units::contract::UnitDesc = $crate::units::contract::UnitDesc {
            name: $name,
            summary: $summary,
            spec: $spec,
            params: <$Params>::SPECS,
            ports: $portmod::LIST,
            standard_sets: $sets,
            check: $check,
            build: $crate::units::declare::Adapter::<$Model>::boxed,
            gpu: $gpu,
            localparams: $crate::declare_unit!(@localparams $($lps)?),
            coverage: $cov,
            scaling: $crate::declare_unit!(@or_empty $($scaling)?),
            seed_costs: $crate::declare_unit!(@or_empty $($seed_costs)?),
        };

        /// Positions of the unit's ports in its port list (generated from the declaration).
        #[allow(non_upper_case_globals, dead_code)]
        pub mod $portmod {
            #[allow(non_camel_case_types, clippy::upper_case_acronyms)]
            #[repr(usize)]
            enum Position {
                rst_n,
                $($ifield,)*
                $($rfield,)*
                $($efield,)*
                $($dname,)*
                __End,
            }
            pub const rst_n: usize = Position::rst_n as usize;
            $(pub const $ifield: usize = Position::$ifield as usize;)*
            $(pub const $rfield: usize = Position::$rfield as usize;)*
            $(pub const $efield: usize = Position::$efield as usize;)*
            $(pub const $dname: usize = Position::$dname as usize;)*
            /// Number of ports.
            pub const COUNT: usize = Position::__End as usize;

            use $crate::units::contract::{PortSpec, Role};
            /// The port list, in position order.
            pub const LIST: &[PortSpec] = &[
                PortSpec { name: "rst_n", role: Role::Input, width: "1", doc: "synchronous active-low reset", layout: None },
                $(PortSpec { name: stringify!($ifield), role: Role::Input, width: $iw, doc: $idoc, layout: $crate::declare_unit!(@layout $($ilay)?) },)*
                $(PortSpec { name: stringify!($rfield), role: Role::Registered, width: $rw, doc: $rdoc, layout: $crate::declare_unit!(@layout $($rlay)?) },)*
                $(PortSpec { name: stringify!($efield), role: Role::Combinational, width: $ew, doc: $edoc, layout: $crate::declare_unit!(@layout $($elay)?) },)*
                $(PortSpec { name: stringify!($dname), role: Role::Debug, width: $dw, doc: $ddoc, layout: $crate::declare_unit!(@layout $($dlay)?) },)*
            ];
        }

        $(#[$pmeta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub struct $Params {
            $( $(#[$pfm])* pub $pfield: $pty, )*
        }

        impl $Params {
            /// The parameter list (same names as the Verilog parameters).
            pub const SPECS: &'static [$crate::units::contract::ParamSpec] = &[
                $($crate::units::contract::ParamSpec {
                    name: stringify!($PNAME),
                    default: $pdef,
                    min: $pmin,
                    max: $pmax,
                    doc: $pdoc,
                },)*
            ];
        }

        impl Default for $Params {
            fn default() -> Self {
                $Params {
                    $($pfield: <$pty as $crate::units::declare::ParamValue>::from_u64($pdef),)*
                }
            }
        }

        impl $crate::units::declare::UnitParams for $Params {
            fn from_params(p: &$crate::units::contract::Params) -> Self {
                $Params {
                    $($pfield: <$pty as $crate::units::declare::ParamValue>::from_u64(
                        p.get(stringify!($PNAME)),
                    ),)*
                }
            }
            fn to_params(&self) -> Result<$crate::units::contract::Params, String> {
                $DESC.params(&[
                    $((stringify!($PNAME), $crate::units::declare::ParamValue::to_u64(self.$pfield)),)*
                ])
            }
        }

        $crate::declare_unit!(@group $portmod, $(#[$imeta])* $Inputs { $( $(#[$ifm])* $ifield : $ity ),* });
        $crate::declare_unit!(@group $portmod, $(#[$rmeta])* $Regs { $( $(#[$rfm])* $rfield : $rty ),* });
        $crate::declare_unit!(@group $portmod, $(#[$emeta])* $Events { $( $(#[$efm])* $efield : $ety ),* });

        impl $crate::units::declare::Declared for $Model {
            type Params = $Params;
            type Inputs = $Inputs;
            type Registered = $Regs;
            type Events = $Events;
            fn desc() -> &'static $crate::units::contract::UnitDesc {
                &$DESC
            }
        }
    };

    (@layout) => { None };
    // `[dims] "width"`: each element is one value.
    (@layout ([$($dn:tt : $dc:literal),+ $(,)?] $ew:literal)) => {
        Some(&$crate::units::layout::Layout {
            dims: &[$($crate::units::layout::Dim { name: $crate::declare_unit!(@name $dn), count: $dc }),+],
            fields: &[$crate::units::layout::Field { name: "", width: $ew }],
        })
    };
    // `[dims] { field: "width", ... }`: named fields, LSB first.
    (@layout ([$($dn:tt : $dc:literal),+ $(,)?] { $($fname:tt : $fw:literal),+ $(,)? })) => {
        Some(&$crate::units::layout::Layout {
            dims: &[$($crate::units::layout::Dim { name: $crate::declare_unit!(@name $dn), count: $dc }),+],
            fields: &[$($crate::units::layout::Field { name: $crate::declare_unit!(@name $fname), width: $fw }),+],
        })
    };
    (@name _) => { "" };
    (@name $n:ident) => { stringify!($n) };

    (@or_empty) => { &[] };
    (@or_empty $e:expr) => { $e };
    (@localparams) => { |_| ::std::vec::Vec::new() };
    (@localparams $lps:expr) => { $lps };

    (@group $portmod:ident, $(#[$meta:meta])* $Group:ident { $( $(#[$fm:meta])* $field:ident : $ty:ty ),* }) => {
        $(#[$meta])*
        pub struct $Group {
            $( $(#[$fm])* pub $field: $ty, )*
        }

        impl $crate::units::declare::PortGroup for $Group {
            const NAMES: &'static [&'static str] = &[$(stringify!($field)),*];
            const POSITIONS: &'static [usize] = &[$($portmod::$field),*];
            type Counts = [u64; <[&str]>::len(&[$(stringify!($field)),*])];
            #[inline]
            fn read_ports(_ports: &[$crate::units::contract::Bits]) -> Self {
                $Group {
                    $($field: $crate::units::declare::PortValue::read(&_ports[$portmod::$field]),)*
                }
            }
            #[inline]
            fn write_ports(&self, _ports: &mut [$crate::units::contract::Bits]) {
                $($crate::units::declare::PortValue::write(&self.$field, &mut _ports[$portmod::$field]);)*
            }
            #[inline]
            fn put_frame(
                &self,
                _slots: &[$crate::units::declare::WordSlot],
                _frame: &mut [u64],
            ) {
                // One bounds check here instead of one per field.
                let _slots = &_slots[..$portmod::COUNT];
                $($crate::units::declare::PortValue::put_words(&self.$field, _frame, _slots[$portmod::$field]);)*
            }
            #[inline]
            fn fit(&mut self, _slots: &[$crate::units::declare::WordSlot]) {
                let _slots = &_slots[..$portmod::COUNT];
                $($crate::units::declare::PortValue::fit(&mut self.$field, _slots[$portmod::$field].width);)*
            }
            #[inline]
            #[allow(unused_mut, unused_variables, unused_assignments)]
            fn present(&self, widths: &[$crate::units::declare::PortWidth]) -> u64 {
                // One bounds check here instead of one per field.
                let widths = &widths[..Self::NAMES.len()];
                let mut present = 0u64;
                let mut i = 0;
                $(
                    present |= ($crate::units::declare::PortValue::nonzero(&self.$field, widths[i]) as u64) << i;
                    i += 1;
                )*
                present
            }
            #[inline]
            #[allow(unused_mut, unused_variables, unused_assignments)]
            fn encode(&self, widths: &[$crate::units::declare::PortWidth], out: &mut impl FnMut(u64)) {
                let widths = &widths[..Self::NAMES.len()];
                let mut i = 0;
                $(
                    $crate::units::declare::PortValue::sparse_words(&self.$field, widths[i], out);
                    i += 1;
                )*
            }
            #[inline]
            fn is_idle(&self) -> bool {
                true $(&& $crate::units::declare::PortValue::is_zero(&self.$field))*
            }
            #[inline]
            #[allow(unused_mut, unused_variables, unused_assignments)]
            fn count_ones(&self, counts: &mut [u64]) {
                let mut i = 0;
                $(
                    counts[i] += $crate::units::declare::PortValue::ones(&self.$field) as u64;
                    i += 1;
                )*
            }
        }

        /// As a trace sink keeps it: a word with bit `f` set when field `f` is not zero,
        /// then the words of each such field (none for a `bool`).
        impl $crate::units::trace_sink::RawRecord for $Group {
            #[inline]
            #[allow(unused_mut, unused_variables, unused_assignments)]
            fn pack(&self, out: &mut ::std::vec::Vec<u64>) {
                let at = out.len();
                out.push(0);
                let mut present = 0u64;
                let mut i = 0;
                $(
                    if !$crate::units::declare::PortValue::is_zero(&self.$field) {
                        present |= 1 << i;
                        $crate::units::declare::PortValue::pack_words(&self.$field, out);
                    }
                    i += 1;
                )*
                out[at] = present;
            }
            #[allow(unused_mut, unused_variables, unused_assignments)]
            fn unpack(words: &[u64]) -> (Self, usize) {
                let present = words[0];
                let mut at = 1;
                let mut i = 0;
                let mut g = <$Group as ::std::default::Default>::default();
                $(
                    if present >> i & 1 != 0 {
                        let (v, n) = $crate::units::declare::PortValue::unpack_words(&words[at..]);
                        g.$field = v;
                        at += n;
                    }
                    i += 1;
                )*
                (g, at)
            }
            #[inline]
            #[allow(unused_mut, unused_variables, unused_assignments)]
            fn packed_len(words: &[u64]) -> usize {
                let present = words[0];
                let mut at = 1;
                let mut i = 0;
                $(
                    if present >> i & 1 != 0 {
                        at += <$ty as $crate::units::declare::PortValue>::packed_words(&words[at..]);
                    }
                    i += 1;
                )*
                at
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// `v` cut by `fit` and put into a frame by `put_words` gives what a port of `width`
    /// bits holds after `write`, and what `read` gives back from it.
    fn check<T: PortValue + Clone + PartialEq + std::fmt::Debug>(v: T, width: u32) {
        let w = PortWidth::of(width);
        let mut port = Bits::zero(width);
        v.write(&mut port);
        let mut fitted = v.clone();
        fitted.fit(w);
        assert_eq!(fitted, T::read(&port), "fit at {width} bits");
        let len = width.div_ceil(64).max(1);
        let mut frame = vec![u64::MAX; len as usize + 2];
        v.put_words(
            &mut frame,
            WordSlot {
                at: 1,
                len,
                width: w,
            },
        );
        assert_eq!(
            &frame[1..1 + len as usize],
            port.words(),
            "put_words at {width} bits"
        );
        assert_eq!((frame[0], frame[len as usize + 1]), (u64::MAX, u64::MAX));
    }

    proptest! {
        #[test]
        fn fit_and_put_words_agree_with_a_port(
            v in any::<u64>(),
            words in proptest::array::uniform4(any::<u64>()),
            width in 1u32..=64,
            wide in 1u32..=256,
        ) {
            check(v != 0, 1);
            check(v as u8, width.min(8));
            check(v as u16, width.min(16));
            check(v as u32, width.min(32));
            check(v, width);
            check(words, wide);
            let mut b = Bits::zero(wide);
            b.set_words(&words);
            check(b, wide);
        }
    }
}
