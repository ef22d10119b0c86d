//! [`RtlModel`]: a safe wrapper around one instance of a built model library.
//!
//! Ports are addressed by their index in the unit's port list; each port's storage pointer
//! is fetched once when the instance is created, so setting inputs, evaluating and
//! comparing outputs are plain loads/stores and one FFI call per half cycle.

use crate::build::BuiltModel;
use crate::shim::frame_words;
use crate::{CosimError, RtlErrorKind};
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use warpforge_model::units::contract::{Bits, Params, Role, UnitDesc};

#[cfg(not(target_endian = "little"))]
compile_error!(
    "warpforge-cosim maps Verilator's port words directly and needs a little-endian host"
);

type NewFn = unsafe extern "C" fn(c_int) -> *mut c_void;
type HandleFn = unsafe extern "C" fn(*mut c_void);
type StatusFn = unsafe extern "C" fn(*mut c_void) -> c_int;
type PtrFn = unsafe extern "C" fn(*mut c_void, u32) -> *mut c_void;
type ErrFn = unsafe extern "C" fn(*mut c_void) -> *const c_char;
type CycleFn = unsafe extern "C" fn(*mut c_void, u64);
type OpenFn = unsafe extern "C" fn(*mut c_void, *const c_char) -> c_int;
type MutantFn = unsafe extern "C" fn(*mut c_void, u32);
type FramesFn = unsafe extern "C" fn(*mut c_void, *const u64, u64, *mut u64) -> c_int;
type FrameWordsFn = unsafe extern "C" fn() -> u64;

#[derive(Clone, Copy)]
struct Fns {
    new: NewFn,
    free: HandleFn,
    port_ptr: PtrFn,
    failed: StatusFn,
    last_error: ErrFn,
    set_cycle: CycleFn,
    eval: StatusFn,
    edge: StatusFn,
    sample: StatusFn,
    check_frames: FramesFn,
    frame_words: FrameWordsFn,
    trace_open: OpenFn,
    trace_close: HandleFn,
    /// Only in a mutant schema's model (`mutant_schema`).
    set_mutant: Option<MutantFn>,
}

/// One port of the loaded model's table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PortInfo {
    pub name: String,
    pub width: u32,
    pub input: bool,
    /// Bytes of Verilator storage (1, 2, 4, 8, or 4 per word of a wide port).
    pub bytes: u32,
    /// A debug-state port (internal state, compared when sampled: see
    /// [`RtlModel::sample_state`]).
    pub state: bool,
}

/// A loaded model library (shared by all its instances).
pub struct RtlLibrary {
    // Field order: `fns` point into `lib`, which must outlive every instance (instances
    // hold an `Arc<RtlLibrary>`).
    fns: Fns,
    ports: Vec<PortInfo>,
    path: PathBuf,
    _lib: libloading::Library,
}

impl std::fmt::Debug for RtlLibrary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RtlLibrary({})", self.path.display())
    }
}

fn load_err(path: &Path, what: impl std::fmt::Display) -> CosimError {
    CosimError::Load(format!("{}: {what}", path.display()))
}

impl RtlLibrary {
    /// Load a built model and check its port table against `desc` with `params`.
    pub fn load(
        built: &BuiltModel,
        desc: &UnitDesc,
        params: &Params,
    ) -> Result<Arc<RtlLibrary>, CosimError> {
        let path = &built.library;
        // SAFETY: the library is one we generated and compiled: its initialisers are the
        // Verilator runtime's and the model's static constructors.
        let lib = unsafe { libloading::Library::new(path) }.map_err(|e| load_err(path, e))?;
        macro_rules! sym {
            ($name:literal, $t:ty) => {{
                // SAFETY: the shim defines these symbols with exactly these C signatures.
                let s: libloading::Symbol<$t> = unsafe { lib.get(concat!($name, "\0").as_bytes()) }
                    .map_err(|e| load_err(path, e))?;
                *s
            }};
        }
        let version = sym!("wf_shim_version", unsafe extern "C" fn() -> u32);
        // SAFETY: plain C function without arguments.
        let v = unsafe { version() };
        if v != crate::shim::SHIM_VERSION {
            return Err(load_err(
                path,
                format!(
                    "shim version {v}, expected {} (stale cache entry?)",
                    crate::shim::SHIM_VERSION
                ),
            ));
        }
        let count = sym!("wf_port_count", unsafe extern "C" fn() -> u32);
        let name = sym!("wf_port_name", unsafe extern "C" fn(u32) -> *const c_char);
        let width = sym!("wf_port_width", unsafe extern "C" fn(u32) -> u32);
        let input = sym!("wf_port_input", unsafe extern "C" fn(u32) -> c_int);
        let bytes = sym!("wf_port_bytes", unsafe extern "C" fn(u32) -> u32);
        let mut ports = vec![];
        // SAFETY: table accessors return static data for indices below the count.
        unsafe {
            for i in 0..count() {
                let name = CStr::from_ptr(name(i)).to_string_lossy().into_owned();
                let state = desc
                    .port_index(&name)
                    .is_some_and(|k| desc.ports[k].role == Role::Debug);
                ports.push(PortInfo {
                    name,
                    width: width(i),
                    input: input(i) != 0,
                    bytes: bytes(i),
                    state,
                });
            }
        }
        let widths = desc.widths(params);
        let expected: Vec<(String, u32, bool)> = desc
            .ports
            .iter()
            .zip(&widths)
            .map(|(p, &w)| (p.name.to_string(), w, p.role.is_input()))
            .collect();
        let got: Vec<(String, u32, bool)> = ports
            .iter()
            .map(|p| (p.name.clone(), p.width, p.input))
            .collect();
        if expected != got {
            return Err(load_err(
                path,
                format!(
                    "port table {got:?} does not match unit {} ({params}): {expected:?}",
                    desc.name
                ),
            ));
        }
        let fns = Fns {
            new: sym!("wf_new", NewFn),
            free: sym!("wf_free", HandleFn),
            port_ptr: sym!("wf_port_ptr", PtrFn),
            failed: sym!("wf_failed", StatusFn),
            last_error: sym!("wf_last_error", ErrFn),
            set_cycle: sym!("wf_set_cycle", CycleFn),
            eval: sym!("wf_eval", StatusFn),
            edge: sym!("wf_edge", StatusFn),
            sample: sym!("wf_sample_state", StatusFn),
            check_frames: sym!("wf_check_frames", FramesFn),
            frame_words: sym!("wf_frame_words", FrameWordsFn),
            trace_open: sym!("wf_trace_open", OpenFn),
            trace_close: sym!("wf_trace_close", HandleFn),
            // SAFETY: defined with this C signature when the model has the selector input.
            set_mutant: unsafe { lib.get::<MutantFn>(b"wf_set_mutant\0") }
                .ok()
                .map(|s| *s),
        };
        Ok(Arc::new(RtlLibrary {
            fns,
            ports,
            path: path.clone(),
            _lib: lib,
        }))
    }

    pub fn ports(&self) -> &[PortInfo] {
        &self.ports
    }

    /// Whether the model is a mutant schema's (it has the selector input, see
    /// [`RtlModel::set_mutant`]).
    pub fn is_mutant_schema(&self) -> bool {
        self.fns.set_mutant.is_some()
    }

    /// An error naming the model unless it is a mutant schema's.
    pub fn require_mutant_schema(&self) -> Result<(), CosimError> {
        self.mutant_setter().map(|_| ())
    }

    /// The shim's `wf_set_mutant`, or an error naming the model.
    fn mutant_setter(&self) -> Result<MutantFn, CosimError> {
        self.fns.set_mutant.ok_or_else(|| {
            CosimError::Load(format!(
                "{}: not a mutant schema's model (no `{}` input)",
                self.path.display(),
                crate::mutant_schema::SELECTOR
            ))
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Direct access to one port's storage.
#[derive(Debug, Clone, Copy)]
struct RtlPort {
    ptr: *mut u8,
    bytes: u32,
    /// 32-bit words of a wide port.
    n32: usize,
    /// Valid bits of the last 32-bit word of a wide port.
    top_mask32: u32,
    /// Valid bits of a narrow port.
    mask64: u64,
    width: u32,
}

/// Ports grouped by storage size (`CData`, `SData`, `IData`, `QData`, wide): one typed
/// load or store per port in the per-cycle loops, no dispatch on the size.
/// Each narrow entry is (port index, pointer, mask of the port's width).
#[derive(Default)]
struct PortGroups {
    c: Vec<(usize, *mut u8, u64)>,
    s: Vec<(usize, *mut u16, u64)>,
    i: Vec<(usize, *mut u32, u64)>,
    q: Vec<(usize, *mut u64, u64)>,
    wide: Vec<(usize, RtlPort)>,
}

impl PortGroups {
    fn new(indices: &[usize], ports: &[RtlPort]) -> PortGroups {
        let mut g = PortGroups::default();
        for i in crate::shim::frame_order(indices, |i| ports[i].bytes) {
            let p = ports[i];
            match p.bytes {
                1 => g.c.push((i, p.ptr, p.mask64)),
                2 => g.s.push((i, p.ptr as *mut u16, p.mask64)),
                4 => g.i.push((i, p.ptr as *mut u32, p.mask64)),
                8 => g.q.push((i, p.ptr as *mut u64, p.mask64)),
                _ => g.wide.push((i, p)),
            }
        }
        g
    }

    /// The words these ports take in a frame.
    fn frame_words(&self) -> usize {
        self.c.len()
            + self.s.len()
            + self.i.len()
            + self.q.len()
            + self
                .wide
                .iter()
                .map(|(_, p)| frame_words(p.width))
                .sum::<usize>()
    }

    /// The port indices in the order the per-cycle loops visit them (by storage size, then
    /// port-list order): the order of a frame's words (see [`RtlModel::input_frame_order`]).
    fn order(&self) -> Vec<usize> {
        (self.c.iter().map(|&(i, ..)| i))
            .chain(self.s.iter().map(|&(i, ..)| i))
            .chain(self.i.iter().map(|&(i, ..)| i))
            .chain(self.q.iter().map(|&(i, ..)| i))
            .chain(self.wide.iter().map(|&(i, _)| i))
            .collect()
    }
}

/// The ports of one part of a frame, in frame order.
pub struct FramePorts {
    ports: Vec<usize>,
    /// How many of `ports`, from the first, are one word each (a frame order puts every
    /// port of up to 64 bits before the wide ones).
    singles: usize,
    /// The words they take in a frame.
    words: usize,
}

impl FramePorts {
    /// `ports` in frame order ([`RtlModel::input_frame_order`], ...), `widths` every port's
    /// width at the unit's parameters.
    pub fn new(ports: Vec<usize>, widths: &[u32]) -> FramePorts {
        let singles = ports.iter().take_while(|&&i| widths[i] <= 64).count();
        // As many words as each port's `Bits` value holds (at least one).
        let words = ports.iter().map(|&i| frame_words(widths[i]).max(1)).sum();
        FramePorts {
            ports,
            singles,
            words,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.ports.is_empty()
    }

    /// The ports, in frame order.
    pub fn ports(&self) -> &[usize] {
        &self.ports
    }

    /// The words the ports take in a frame.
    pub fn words(&self) -> usize {
        self.words
    }

    /// Load the ports from `words` at `*pos` (written by [`FramePorts::write`] from ports of
    /// the same widths), advancing `*pos` past them.
    pub fn read(&self, ports: &mut [Bits], words: &[u64], pos: &mut usize) {
        for &i in &self.ports {
            let n = ports[i].words().len();
            ports[i].set_words(&words[*pos..*pos + n]);
            *pos += n;
        }
    }

    /// Append the ports' values to `out` as a frame: each port's `Bits` words, as
    /// [`RtlModel::set_inputs_from_words`] and [`RtlModel::outputs_match_words`] read them.
    /// The one-word ports in one `extend` (it reserves once instead of checking the
    /// capacity per word: this runs for every port of every cycle).
    #[inline]
    pub fn write(&self, ports: &[Bits], out: &mut Vec<u64>) {
        let (singles, wide) = self.ports.split_at(self.singles);
        out.extend(singles.iter().map(|&i| ports[i].to_u64()));
        for &i in wide {
            out.extend_from_slice(ports[i].words());
        }
    }
}

/// An error the RTL raised (`$finish`, `$stop`, a Verilator fatal error).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RtlError {
    pub kind: RtlErrorKind,
    pub message: String,
}

/// One live instance of a model: its own Verilator context, state and (optional) trace.
pub struct RtlModel {
    handle: *mut c_void,
    ports: Vec<RtlPort>,
    inputs: Vec<usize>,
    /// The registered and combinational outputs (compared every cycle).
    outputs: Vec<usize>,
    /// The debug-state ports (compared when sampled).
    state: Vec<usize>,
    /// The inputs, the outputs and the state ports grouped by storage size, for the
    /// per-cycle loops.
    in_groups: PortGroups,
    out_groups: PortGroups,
    /// Words of a plain co-simulation frame, its header included (see
    /// [`RtlModel::check_frames`]).
    frame_stride: usize,
    state_groups: PortGroups,
    fns: Fns,
    lib: Arc<RtlLibrary>,
    trace_capable: bool,
    /// No input was written since the last [`RtlModel::eval`]: the shim's clock edge may
    /// skip re-settling the inputs' logic (`edge_eval.rs`), so [`RtlModel::edge`] settles
    /// first when this is false.
    settled: bool,
}

// SAFETY: an instance owns its Verilator context and model exclusively; Verilator models are
// not bound to the thread that created them (the thread context is set on each eval).
unsafe impl Send for RtlModel {}

impl Drop for RtlModel {
    fn drop(&mut self) {
        // SAFETY: `handle` came from `wf_new` of this library and is freed exactly once.
        unsafe { (self.fns.free)(self.handle) }
    }
}

impl std::fmt::Debug for RtlModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RtlModel({})", self.lib.path.display())
    }
}

impl RtlModel {
    /// A new instance. `trace_capable` turns on Verilator's trace bookkeeping
    /// (`traceEverOn`) so a VCD can be opened later; leave it off for full speed.
    pub fn new(lib: &Arc<RtlLibrary>, trace_capable: bool) -> Result<RtlModel, CosimError> {
        let fns = lib.fns;
        // SAFETY: shim constructor; never null (errors are reported through wf_failed).
        let handle = unsafe { (fns.new)(trace_capable as c_int) };
        if handle.is_null() {
            return Err(CosimError::Load("wf_new returned null".into()));
        }
        let mut m = RtlModel {
            handle,
            ports: vec![],
            inputs: vec![],
            outputs: vec![],
            state: vec![],
            in_groups: PortGroups::default(),
            out_groups: PortGroups::default(),
            frame_stride: 1,
            state_groups: PortGroups::default(),
            fns,
            settled: false,
            lib: lib.clone(),
            trace_capable,
        };
        if let Some(e) = m.error() {
            return Err(CosimError::Rtl {
                cycle: 0,
                kind: e.kind,
                message: format!("constructing the model: {}", e.message),
            });
        }
        for (i, p) in lib.ports.iter().enumerate() {
            // SAFETY: index within the port table; the pointer stays valid while the
            // instance lives (Verilator's port members do not move).
            let ptr = unsafe { (fns.port_ptr)(handle, i as u32) } as *mut u8;
            if ptr.is_null() {
                return Err(CosimError::Load(format!("no storage for port {}", p.name)));
            }
            let n32 = p.width.div_ceil(32) as usize;
            let rem = p.width % 32;
            m.ports.push(RtlPort {
                ptr,
                bytes: p.bytes,
                n32,
                top_mask32: if rem == 0 { u32::MAX } else { (1 << rem) - 1 },
                mask64: warpforge_model::units::contract::low_mask(p.width.min(64)),
                width: p.width,
            });
            if p.input {
                m.inputs.push(i);
            } else if p.state {
                m.state.push(i);
            } else {
                m.outputs.push(i);
            }
        }
        m.in_groups = PortGroups::new(&m.inputs, &m.ports);
        m.out_groups = PortGroups::new(&m.outputs, &m.ports);
        m.frame_stride = 1 + m.in_groups.frame_words() + m.out_groups.frame_words();
        // SAFETY: plain C function without arguments.
        let shim_words = unsafe { (fns.frame_words)() } as usize;
        if shim_words != m.frame_stride - 1 {
            return Err(CosimError::Load(format!(
                "the shim's frames are {shim_words} words, the harness's {} (stale cache entry?)",
                m.frame_stride - 1
            )));
        }
        m.state_groups = PortGroups::new(&m.state, &m.ports);
        Ok(m)
    }

    pub fn library(&self) -> &Arc<RtlLibrary> {
        &self.lib
    }

    /// The sticky error, if the model has raised one.
    pub fn error(&self) -> Option<RtlError> {
        // SAFETY: valid handle.
        let code = unsafe { (self.fns.failed)(self.handle) };
        if code == 0 {
            return None;
        }
        // SAFETY: valid handle; returns a NUL-terminated buffer owned by the instance.
        let msg = unsafe { CStr::from_ptr((self.fns.last_error)(self.handle)) }
            .to_string_lossy()
            .into_owned();
        Some(RtlError {
            kind: RtlErrorKind::from_code(code),
            message: msg,
        })
    }

    #[cold]
    fn fail(&self) -> RtlError {
        self.error().unwrap_or(RtlError {
            kind: RtlErrorKind::Fatal,
            message: "unknown error".into(),
        })
    }

    /// Set one input port.
    #[inline]
    pub fn set(&mut self, index: usize, value: &Bits) {
        let p = self.ports[index];
        write_port(&p, value);
        self.settled = false;
    }

    /// Set every input port from a full port vector (unit port-list order).
    #[inline]
    pub fn set_inputs(&mut self, ports: &[Bits]) {
        self.settled = false;
        let g = &self.in_groups;
        // SAFETY: each pointer addresses the port's naturally aligned storage of that size
        // (see `write_port`); a `Bits` value never has bits above its width.
        unsafe {
            for &(i, p, _) in &g.c {
                *p = ports[i].to_u64() as u8;
            }
            for &(i, p, _) in &g.s {
                *p = ports[i].to_u64() as u16;
            }
            for &(i, p, _) in &g.i {
                *p = ports[i].to_u64() as u32;
            }
            for &(i, p, _) in &g.q {
                *p = ports[i].to_u64();
            }
        }
        for (i, p) in &g.wide {
            write_port(p, &ports[*i]);
        }
    }

    /// The input ports in the order [`RtlModel::set_inputs_from_words`] reads them: a frame
    /// written in this order (each port's `Bits` words: one for a port of up to 64 bits)
    /// goes into the model with no per-port `Bits` in between.
    pub fn input_frame_order(&self) -> Vec<usize> {
        self.in_groups.order()
    }

    /// The compared output ports in the order [`RtlModel::outputs_match_words`] reads them.
    pub fn output_frame_order(&self) -> Vec<usize> {
        self.out_groups.order()
    }

    /// Set every input from `words`, the inputs' values in [`RtlModel::input_frame_order`]
    /// (each as its `Bits` words, so no bits above its width); returns the words read.
    /// Panics if `words` is shorter than the inputs.
    #[inline]
    pub fn set_inputs_from_words(&mut self, words: &[u64]) -> usize {
        self.settled = false;
        let g = &self.in_groups;
        let mut k = 0;
        // SAFETY: as in `set_inputs`; a wide port's copy reads its `n32` 32-bit words from
        // its `frame_words` 64-bit words (at least as many bytes), bounds-checked first.
        unsafe {
            // Each group's words split off at once: one bounds check a group, not a port.
            let (w, rest) = words.split_at(g.c.len());
            for (&(_, p, _), &w) in g.c.iter().zip(w) {
                *p = w as u8;
            }
            let (w, rest) = rest.split_at(g.s.len());
            for (&(_, p, _), &w) in g.s.iter().zip(w) {
                *p = w as u16;
            }
            let (w, rest) = rest.split_at(g.i.len());
            for (&(_, p, _), &w) in g.i.iter().zip(w) {
                *p = w as u32;
            }
            let (w, _) = rest.split_at(g.q.len());
            for (&(_, p, _), &w) in g.q.iter().zip(w) {
                *p = w;
            }
            k += g.c.len() + g.s.len() + g.i.len() + g.q.len();
            for (_, p) in &g.wide {
                let src = &words[k..k + frame_words(p.width)];
                std::ptr::copy_nonoverlapping(src.as_ptr() as *const u8, p.ptr, p.n32 * 4);
                *(p.ptr as *mut u32).add(p.n32 - 1) &= p.top_mask32;
                k += src.len();
            }
        }
        k
    }

    /// Whether every compared output equals its value in `words` (in
    /// [`RtlModel::output_frame_order`], as [`RtlModel::set_inputs_from_words`]), and the
    /// words read. Panics if `words` is shorter than the outputs.
    #[inline]
    pub fn outputs_match_words(&self, words: &[u64]) -> (bool, usize) {
        let g = &self.out_groups;
        let mut k = 0;
        let mut diff = 0u64;
        // SAFETY: as in `set_inputs_from_words`, reading.
        unsafe {
            // As in `set_inputs_from_words`: one bounds check a group.
            let (w, rest) = words.split_at(g.c.len());
            for (&(_, p, m), &w) in g.c.iter().zip(w) {
                diff |= (*p as u64 & m) ^ w;
            }
            let (w, rest) = rest.split_at(g.s.len());
            for (&(_, p, m), &w) in g.s.iter().zip(w) {
                diff |= (*p as u64 & m) ^ w;
            }
            let (w, rest) = rest.split_at(g.i.len());
            for (&(_, p, m), &w) in g.i.iter().zip(w) {
                diff |= (*p as u64 & m) ^ w;
            }
            let (w, _) = rest.split_at(g.q.len());
            for (&(_, p, m), &w) in g.q.iter().zip(w) {
                diff |= (*p & m) ^ w;
            }
            k += g.c.len() + g.s.len() + g.i.len() + g.q.len();
            for (_, p) in &g.wide {
                let src = &words[k..k + frame_words(p.width)];
                let n = p.n32;
                let rtl = std::slice::from_raw_parts(p.ptr as *const u32, n);
                let model = std::slice::from_raw_parts(src.as_ptr() as *const u32, n);
                let d = rtl[..n - 1]
                    .iter()
                    .zip(&model[..n - 1])
                    .fold(0u32, |d, (a, b)| d | (a ^ b));
                diff |= (d | ((rtl[n - 1] & p.top_mask32) ^ model[n - 1])) as u64;
                k += src.len();
            }
        }
        (diff == 0, k)
    }

    /// The plain frames of a co-simulation batch from `batch[*pos]` (each a header word 0,
    /// the inputs in [`RtlModel::input_frame_order`], the compared outputs in
    /// [`RtlModel::output_frame_order`]), run in the shim's own loop: per frame what
    /// [`RtlModel::eval`], a comparison of the outputs and [`RtlModel::edge`] do, with no
    /// call across the FFI in between. Stops at a frame whose header is not 0 or at the
    /// end, with `*pos` at it. `Ok(cycles run)`; `Err(cycles run)` when the frame after
    /// them differed (its inputs settled, its edge not taken) or the model failed there
    /// (see [`RtlModel::error`]). A frame that does not fit in `batch` is not run.
    #[inline]
    pub fn check_frames(&mut self, batch: &[u64], pos: &mut usize) -> Result<u64, u64> {
        let start = *pos;
        let mut at = start as u64;
        // SAFETY: valid handle; the shim reads `batch.len()` words at most, whole frames of
        // `frame_stride` words (it checks that a frame fits before reading it).
        let rc = unsafe {
            (self.fns.check_frames)(self.handle, batch.as_ptr(), batch.len() as u64, &mut at)
        };
        self.settled = false;
        *pos = at as usize;
        let cycles = ((*pos - start) / self.frame_stride) as u64;
        if rc == 0 {
            Ok(cycles)
        } else {
            Err(cycles)
        }
    }

    /// Clock low and settle the logic (combinational outputs become valid for the inputs).
    #[inline]
    pub fn eval(&mut self) -> Result<(), RtlError> {
        // SAFETY: valid handle.
        if unsafe { (self.fns.eval)(self.handle) } != 0 {
            return Err(self.fail());
        }
        self.settled = true;
        Ok(())
    }

    /// Latch the internal state into the debug-state ports: a co-simulation wrapper reads
    /// the unit's registers and RAM arrays on the rising edge of its `wf_sample` input, so
    /// between samples the state costs the simulation nothing. Call after [`eval`] (the
    /// ports then hold state(t)); the clock is not touched. A model without `wf_sample`
    /// (its debug ports, if any, are always current) does nothing.
    ///
    /// [`eval`]: RtlModel::eval
    #[inline]
    pub fn sample_state(&mut self) -> Result<(), RtlError> {
        // SAFETY: valid handle.
        if unsafe { (self.fns.sample)(self.handle) } != 0 {
            return Err(self.fail());
        }
        Ok(())
    }

    /// The rising clock edge: the flops take the inputs as set. Inputs written since the
    /// last [`RtlModel::eval`] are settled first (the shim's edge evaluates only the clock's
    /// consequences, see `edge_eval.rs`).
    #[inline]
    pub fn edge(&mut self) -> Result<(), RtlError> {
        if !self.settled {
            self.eval()?;
        }
        // SAFETY: valid handle.
        if unsafe { (self.fns.edge)(self.handle) } != 0 {
            return Err(self.fail());
        }
        Ok(())
    }

    /// Read any port into `out` (its width must be the port's).
    pub fn get(&self, index: usize, out: &mut Bits) {
        let p = &self.ports[index];
        let mut words = vec![0u64; p.width.div_ceil(64) as usize];
        // SAFETY: `ptr` addresses `bytes` bytes of the port's storage.
        unsafe {
            match p.bytes {
                1 => words[0] = *p.ptr as u64 & p.mask64,
                2 => words[0] = *(p.ptr as *const u16) as u64 & p.mask64,
                4 => words[0] = *(p.ptr as *const u32) as u64 & p.mask64,
                8 => words[0] = *(p.ptr as *const u64) & p.mask64,
                _ => {
                    let src = std::slice::from_raw_parts(p.ptr as *const u32, p.n32);
                    for (k, w) in src.iter().enumerate() {
                        words[k / 2] |= (*w as u64) << (32 * (k % 2));
                    }
                }
            }
        }
        out.set_words(&words);
    }

    /// Read every output port (and the state ports as last sampled) into the non-input
    /// positions of `ports`.
    pub fn read_outputs(&self, ports: &mut [Bits]) {
        for &i in self.outputs.iter().chain(&self.state) {
            self.get(i, &mut ports[i]);
        }
    }

    /// Whether output `index` equals `value` (word compares, no per-bit loop).
    #[inline]
    pub fn matches(&self, index: usize, value: &Bits) -> bool {
        port_matches(&self.ports[index], value)
    }

    /// The first registered or combinational output (in port-list order) whose RTL value
    /// differs from `ports`.
    #[inline]
    pub fn first_mismatch(&self, ports: &[Bits]) -> Option<usize> {
        self.first_in(&self.out_groups, &self.outputs, ports)
    }

    /// The first debug-state port whose RTL value differs from `ports` (both sides must
    /// have been sampled for this cycle: [`RtlModel::sample_state`],
    /// `UnitModel::debug_state`).
    #[inline]
    pub fn first_state_mismatch(&self, ports: &[Bits]) -> Option<usize> {
        self.first_in(&self.state_groups, &self.state, ports)
    }

    #[inline]
    fn first_in(&self, g: &PortGroups, order: &[usize], ports: &[Bits]) -> Option<usize> {
        // Every port, OR-ing the differences without early exits (all equal is the
        // per-cycle case); the port-order search only once something differs.
        let mut diff = 0u64;
        // SAFETY: as in `set_inputs`.
        unsafe {
            for &(i, p, m) in &g.c {
                diff |= (*p as u64 & m) ^ ports[i].to_u64();
            }
            for &(i, p, m) in &g.s {
                diff |= (*p as u64 & m) ^ ports[i].to_u64();
            }
            for &(i, p, m) in &g.i {
                diff |= (*p as u64 & m) ^ ports[i].to_u64();
            }
            for &(i, p, m) in &g.q {
                diff |= (*p & m) ^ ports[i].to_u64();
            }
        }
        for (i, p) in &g.wide {
            diff |= !port_matches(p, &ports[*i]) as u64;
        }
        if diff == 0 {
            None
        } else {
            self.first_mismatch_in_order(order, ports)
        }
    }

    #[cold]
    fn first_mismatch_in_order(&self, order: &[usize], ports: &[Bits]) -> Option<usize> {
        order
            .iter()
            .copied()
            .find(|&i| !port_matches(&self.ports[i], &ports[i]))
    }

    /// Every differing non-input port, in port-list order (the state ports as last
    /// sampled).
    pub fn mismatches(&self, ports: &[Bits]) -> Vec<usize> {
        let mut all: Vec<usize> = self.outputs.iter().chain(&self.state).copied().collect();
        all.sort_unstable();
        all.into_iter()
            .filter(|&i| !port_matches(&self.ports[i], &ports[i]))
            .collect()
    }

    /// Input port indices (unit port-list order).
    pub fn input_indices(&self) -> &[usize] {
        &self.inputs
    }

    /// Registered and combinational output indices (compared every cycle).
    pub fn output_indices(&self) -> &[usize] {
        &self.outputs
    }

    /// Debug-state port indices (compared when sampled).
    pub fn state_indices(&self) -> &[usize] {
        &self.state
    }

    /// One reset cycle: `rst_n` (port 0) low, every other input 0, settle, clock edge.
    pub fn reset(&mut self) -> Result<(), RtlError> {
        for k in 0..self.inputs.len() {
            let p = self.ports[self.inputs[k]];
            write_port(&p, &Bits::zero(p.width));
        }
        self.eval()?;
        self.edge()
    }

    /// Switch on mutant `k` of a mutant schema's model (0: the original design), before the
    /// first cycle. An error for a model that is not a schema.
    pub fn set_mutant(&mut self, k: u32) -> Result<(), CosimError> {
        let f = self.lib.mutant_setter()?;
        // SAFETY: valid handle; the shim only stores the value into the input.
        unsafe { f(self.handle, k) };
        self.settled = false;
        Ok(())
    }

    /// Number the following cycles from `cycle` (VCD timestamps are `10*cycle` for the
    /// settled clock-low values and `10*cycle + 5` after the rising edge).
    pub fn set_cycle(&mut self, cycle: u64) {
        // SAFETY: valid handle.
        unsafe { (self.fns.set_cycle)(self.handle, cycle) }
    }

    /// Start writing a VCD of the live model (needs a trace-capable instance).
    pub fn trace_open(&mut self, path: &Path) -> Result<(), CosimError> {
        if !self.trace_capable {
            return Err(CosimError::Io(
                "trace_open on an instance created without trace_capable".into(),
            ));
        }
        let c = CString::new(path.to_string_lossy().as_bytes())
            .map_err(|_| CosimError::Io(format!("bad path {}", path.display())))?;
        // SAFETY: valid handle and NUL-terminated path.
        if unsafe { (self.fns.trace_open)(self.handle, c.as_ptr()) } != 0 {
            // SAFETY: valid handle; the shim wrote why into the instance's error buffer.
            let why = unsafe { CStr::from_ptr((self.fns.last_error)(self.handle)) }
                .to_string_lossy()
                .into_owned();
            return Err(CosimError::Io(format!(
                "cannot open VCD {}: {why}",
                path.display()
            )));
        }
        Ok(())
    }

    /// Flush and close the VCD.
    pub fn trace_close(&mut self) {
        // SAFETY: valid handle.
        unsafe { (self.fns.trace_close)(self.handle) }
    }
}

#[inline(always)]
fn write_port(p: &RtlPort, b: &Bits) {
    let v = b.to_u64();
    // SAFETY: `ptr` addresses the port's `bytes`-byte, naturally aligned storage; the wide
    // copy reads at most the Bits' own words (checked) on a little-endian host, where the
    // bytes of 64-bit words are the bytes of Verilator's 32-bit `EData` words.
    unsafe {
        match p.bytes {
            1 => *p.ptr = v as u8,
            2 => *(p.ptr as *mut u16) = v as u16,
            4 => *(p.ptr as *mut u32) = v as u32,
            8 => *(p.ptr as *mut u64) = v,
            n => {
                let w = b.words();
                let avail = w.len() * 8;
                let n = n as usize;
                std::ptr::copy_nonoverlapping(w.as_ptr() as *const u8, p.ptr, n.min(avail));
                if avail < n {
                    std::ptr::write_bytes(p.ptr.add(avail), 0, n - avail);
                }
                // Verilator expects the unused bits of the top word clear.
                let top = (p.ptr as *mut u32).add(p.n32 - 1);
                *top &= p.top_mask32;
            }
        }
    }
}

#[inline(always)]
fn port_matches(p: &RtlPort, b: &Bits) -> bool {
    // SAFETY: as in `write_port`; the model side is read only within its own words.
    unsafe {
        match p.bytes {
            1 => (*p.ptr as u64) & p.mask64 == b.to_u64(),
            2 => (*(p.ptr as *const u16) as u64) & p.mask64 == b.to_u64(),
            4 => (*(p.ptr as *const u32) as u64) & p.mask64 == b.to_u64(),
            8 => *(p.ptr as *const u64) & p.mask64 == b.to_u64(),
            _ => {
                let w = b.words();
                let n = p.n32;
                if w.len() * 2 < n {
                    return false;
                }
                let rtl = std::slice::from_raw_parts(p.ptr as *const u32, n);
                let model = std::slice::from_raw_parts(w.as_ptr() as *const u32, n);
                // XOR-OR over every word, no early exit: vectorised, no `memcmp` call
                // (the wide debug ports are compared every cycle).
                let diff = rtl[..n - 1]
                    .iter()
                    .zip(&model[..n - 1])
                    .fold(0u32, |d, (a, b)| d | (a ^ b));
                diff == 0 && rtl[n - 1] & p.top_mask32 == model[n - 1]
            }
        }
    }
}
