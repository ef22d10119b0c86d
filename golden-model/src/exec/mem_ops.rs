//! Memory instructions: `ld`, `st`, `atom`, `red` in every state space.
//!
//! Each instruction first computes and checks every executed lane's address (alignment to
//! the access size — element size × vector width — then bounds), so a faulting instruction
//! has no side effects; then it performs the accesses in ascending lane order.
//!
//! Bounds: global = inside mapped device memory, or with strict bounds inside one device
//! allocation (the module `.global` image is an allocation too; see [`super::memory`]); shared = inside the CTA's shared bytes; local = inside the lane's frame;
//! const/param = inside the launch's const bank / param buffer (read-only).
//! Generic addresses are classified through [`crate::address_map::classify_generic`]; when
//! the lanes of one instruction resolve to different spaces, the reported
//! [`MemAccess::space`] is `Generic` and its `addrs` hold the generic addresses.

use super::float as fl;
use super::memory::{load_le, store_le};
use super::semantics::{gen, lanes, Exec, Fault, Lanes, Res};
use super::*;
use crate::address_map::{classify_generic, LOCAL_WINDOW, SHARED_WINDOW, WINDOW_SIZE};
use crate::error::FaultKind;
use crate::ptx::ir::{AddrBase, AtomOp, Opcode, ScalarType, StateSpace};

const SPACES: [StateSpace; 6] = [
    StateSpace::Param,
    StateSpace::Global,
    StateSpace::Shared,
    StateSpace::Local,
    StateSpace::Const,
    StateSpace::Generic,
];

fn space_index(s: StateSpace) -> u8 {
    SPACES.iter().position(|&x| x == s).unwrap_or(5) as u8
}

fn space_name(s: StateSpace) -> &'static str {
    match s {
        StateSpace::Param => ".param",
        StateSpace::Global => ".global",
        StateSpace::Shared => ".shared",
        StateSpace::Local => ".local",
        StateSpace::Const => ".const",
        StateSpace::Generic => "generic",
    }
}

/// Per-lane spaces of one memory instruction (the space-relative addresses themselves are
/// written into the instruction's [`MemAccess`]).
struct Resolved {
    /// Space of each lane (index into `SPACES`).
    lane_space: [u8; WARP_SIZE],
    /// The space of every executed lane when they all agree (always, for a non-generic
    /// instruction); `None` when the lanes of a generic instruction resolved to different
    /// spaces.
    uniform: Option<StateSpace>,
}

/// The generic address of space-relative address `a` in `sp` (inverse of
/// [`classify_generic`]).
fn generic_of(sp: StateSpace, a: u64) -> u64 {
    match sp {
        StateSpace::Shared => a + SHARED_WINDOW,
        StateSpace::Local => a + LOCAL_WINDOW,
        _ => a,
    }
}

/// Write `base[l] + off` (or `off` without a base) into `addrs[l]` for every lane of `m`,
/// and 0 for the other lanes; returns the OR of the executed lanes' offsets from `start`
/// (`address - start`, wrapping) and the OR of their addresses (ORs, no comparisons: a
/// few instructions per lane).
#[inline(always)]
fn addresses(m: u32, base: Option<&Lanes>, off: u64, start: u64, addrs: &mut Lanes) -> (u64, u64) {
    let Some(b) = base else {
        if m == u32::MAX {
            *addrs = [off; WARP_SIZE];
        } else {
            *addrs = [0; WARP_SIZE];
            lanes(m, |l| addrs[l] = off);
        }
        return (off.wrapping_sub(start), off);
    };
    let (mut o, mut any) = (0u64, 0u64);
    if m == u32::MAX {
        // The full warp: a straight loop over all lanes.
        for (a, &x) in addrs.iter_mut().zip(b) {
            let v = x.wrapping_add(off);
            *a = v;
            o |= v.wrapping_sub(start);
            any |= v;
        }
    } else {
        *addrs = [0; WARP_SIZE];
        lanes(m, |l| {
            let v = b[l].wrapping_add(off);
            addrs[l] = v;
            o |= v.wrapping_sub(start);
            any |= v;
        });
    }
    (o, any)
}

// The generic fast path relies on this layout: the local window, then the shared window.
const _: () = assert!(LOCAL_WINDOW + WINDOW_SIZE <= SHARED_WINDOW);

/// Which of the five intervals of the generic address space `a` lies in: global, local
/// window, global, shared window, global. [`classify_generic`] maps every address of one
/// interval to one space, at the address minus one window base: [`interval_space`].
#[inline]
fn generic_interval(a: u64) -> u8 {
    (a >= LOCAL_WINDOW) as u8
        + (a >= LOCAL_WINDOW + WINDOW_SIZE) as u8
        + (a >= SHARED_WINDOW) as u8
        + (a >= SHARED_WINDOW + WINDOW_SIZE) as u8
}

/// The space of the addresses of generic interval `i` and the base subtracted from them.
fn interval_space(i: u8) -> (StateSpace, u64) {
    match i {
        1 => (StateSpace::Local, LOCAL_WINDOW),
        3 => (StateSpace::Shared, SHARED_WINDOW),
        _ => (StateSpace::Global, 0),
    }
}

/// Little-endian load of `N` bytes at `buf[off..]`, zero-extended; 0 when out of range.
#[inline(always)]
fn read_n<const N: usize>(buf: &[u8], off: usize) -> u64 {
    match buf.get(off..off.wrapping_add(N)) {
        Some(b) => {
            let mut x = [0u8; 8];
            x[..N].copy_from_slice(b);
            u64::from_le_bytes(x)
        }
        None => 0,
    }
}

/// Little-endian store of the low `N` bytes of `v` at `buf[off..]`; ignored when out of range.
#[inline(always)]
fn write_n<const N: usize>(buf: &mut [u8], off: usize, v: u64) {
    if let Some(b) = buf.get_mut(off..off.wrapping_add(N)) {
        b.copy_from_slice(&v.to_le_bytes()[..N]);
    }
}

/// Where lane `lane`'s space-relative address `a` lies in a space's byte buffer, given the
/// buffer's `base` address and per-lane `stride` (see [`Exec::space_bytes`]).
#[inline(always)]
fn buf_offset(a: u64, base: u64, stride: usize, lane: usize) -> usize {
    (a.wrapping_sub(base) as usize).wrapping_add(lane.wrapping_mul(stride))
}

/// Gather one `N`-byte element per executed lane: lane `l` gets `buf[addrs[l] + koff]`
/// (lanes that do not execute get 0).
#[inline(always)]
fn gather<const N: usize>(
    buf: &[u8],
    base: u64,
    stride: usize,
    m: u32,
    addrs: &Lanes,
    koff: u64,
) -> Lanes {
    gen(m, |l| {
        read_n::<N>(
            buf,
            buf_offset(addrs[l].wrapping_add(koff), base, stride, l),
        )
    })
}

impl Exec<'_, '_> {
    /// Fill in the fields of `acc` that describe the access before any address is known.
    fn begin_access(&self, acc: &mut MemAccess, kind: MemKind, bytes: u32) {
        acc.space = self.inst().mods.space.unwrap_or(StateSpace::Generic);
        acc.kind = kind;
        acc.bytes = bytes;
        acc.mask = self.executed;
    }

    /// Compute, classify and check the address of every executed lane, writing the
    /// space-relative addresses into `acc.addrs` (set up by [`Exec::begin_access`]; the
    /// lanes that do not execute get 0).
    ///
    /// Fast path: the bounds that hold the first executed lane's access (its allocation, or
    /// the space) are looked up first; the address loop then also ORs every lane's offset
    /// from the start of those bounds, and every address. When that OR does not exceed the
    /// last valid offset, no lane's offset does (each is at most the OR): all lanes are in
    /// bounds. When the OR of the addresses has no bit below the alignment, all lanes are
    /// aligned. Otherwise (a fault, lanes spread over allocations or windows) the exact
    /// checks below run; a `false` from the fast path is never a fault by itself.
    fn resolve(&self, acc: &mut MemAccess, align: u32) -> Res<Resolved> {
        let inst = self.inst();
        let space = acc.space;
        let m = acc.mask;
        let addr = inst
            .addr
            .ok_or_else(|| self.unsupported("memory instruction without address"))?;
        let mut r = Resolved {
            lane_space: [space_index(space); WARP_SIZE],
            uniform: Some(space),
        };
        if m == 0 {
            acc.addrs = [0; WARP_SIZE];
            return Ok(r);
        }
        // The base of every lane (`None`: the same address `off` in every lane: a symbol's
        // address is folded into the offset). A base register is read in place.
        let (base, off): (Option<&Lanes>, u64) = match addr.base {
            AddrBase::Reg(reg) => (Some(self.reg_row(reg)?), addr.offset as u64),
            AddrBase::Absolute => (None, addr.offset as u64),
            AddrBase::Symbol(id) => (
                None,
                self.symbol_base(id, space)?
                    .wrapping_add(addr.offset as u64),
            ),
        };
        let first = m.trailing_zeros() as usize;
        let a0 = base.map_or(off, |b| b[first].wrapping_add(off));
        let misaligned = |any: u64| any & (align.max(1) as u64 - 1) != 0;
        if space != StateSpace::Generic {
            // Space-relative addresses already: straight into `acc.addrs`, which are also
            // the raw addresses for the checks.
            let bounds = self.fast_bounds(space, a0, acc.bytes, acc.kind);
            let start = bounds.map_or(0, |(s, _)| s);
            let (o, any) = addresses(m, base, off, start, &mut acc.addrs);
            if bounds.is_some_and(|(_, last)| o <= last) && !misaligned(any) {
                return Ok(r);
            }
            return self
                .check_all(space, &r, acc, align, &acc.addrs)
                .map(|()| r);
        }
        // Generic: the first lane's window (or global memory) gives the bounds, shifted to
        // generic addresses; bounds inside one window prove every lane is in it.
        let (sp, w) = interval_space(generic_interval(a0));
        let bounds = self
            .fast_bounds(sp, a0.wrapping_sub(w), acc.bytes, acc.kind)
            .map(|(s, last)| (s.wrapping_add(w), last))
            .filter(|&(s, last)| {
                s.checked_add(last)
                    .is_some_and(|e| generic_interval(s) == generic_interval(e))
            });
        // Raw generic address of every executed lane (others 0).
        let mut raw = [0; WARP_SIZE];
        let (o, any) = addresses(m, base, off, bounds.map_or(0, |(s, _)| s), &mut raw);
        if bounds.is_some_and(|(_, last)| o <= last) && !misaligned(any) {
            r.lane_space = [space_index(sp); WARP_SIZE];
            r.uniform = Some(sp);
            acc.space = sp;
            if w == 0 {
                acc.addrs = raw;
            } else {
                for (l, (a, &x)) in acc.addrs.iter_mut().zip(&raw).enumerate() {
                    *a = if m >> l & 1 != 0 { x - w } else { 0 };
                }
            }
            return Ok(r);
        }
        let mut first: Option<StateSpace> = None;
        let mut mixed = false;
        acc.addrs = [0; WARP_SIZE];
        lanes(m, |l| {
            let (sp, a) = classify_generic(raw[l]);
            match first {
                None => first = Some(sp),
                Some(f) if f != sp => mixed = true,
                _ => {}
            }
            r.lane_space[l] = space_index(sp);
            acc.addrs[l] = a;
        });
        r.uniform = if mixed { None } else { first };
        self.check_all(first.unwrap_or(space), &r, acc, align, &raw)?;
        if let Some(sp) = r.uniform {
            acc.space = sp;
        }
        Ok(r)
    }

    /// The bounds of the fast check of [`Exec::resolve`] for an access of `bytes` bytes in
    /// space `sp` whose lane `a0` is one of: `(start, last)` such that the access at `a` is
    /// in bounds when `a - start <= last` (wrapping). `None`: no such bounds (`a0` in no
    /// allocation, a write to a read-only space, a space smaller than one access).
    #[inline]
    fn fast_bounds(
        &self,
        sp: StateSpace,
        a0: u64,
        bytes: u32,
        kind: MemKind,
    ) -> Option<(u64, u64)> {
        let load = kind == MemKind::Load;
        let (start, len) = match sp {
            StateSpace::Global => {
                let (s, e) = self.env.global.access_range(a0)?;
                (s, e - s)
            }
            StateSpace::Shared => (0, self.cta.shared.len() as u64),
            StateSpace::Local => (0, self.warp.local_bytes),
            StateSpace::Const if load => (0, self.env.launch.consts.len() as u64),
            StateSpace::Param if load => (0, self.env.launch.params.len() as u64),
            _ => return None,
        };
        Some((start, len.checked_sub(bytes.max(1) as u64)?))
    }

    /// Check (alignment, bounds) every executed lane's access.
    ///
    /// Fast path, when all lanes are in space `sp`: the accesses all lie between the lowest
    /// and the highest address, so one range check of that span plus one alignment check of
    /// all addresses OR-ed together proves every lane in bounds. Otherwise the lanes are
    /// checked one by one (see [`Exec::check_lanes`]).
    fn check_all(
        &self,
        sp: StateSpace,
        r: &Resolved,
        acc: &MemAccess,
        align: u32,
        raw: &Lanes,
    ) -> Res<()> {
        let (m, bytes, kind) = (acc.mask, acc.bytes, acc.kind);
        if r.uniform.is_some() {
            let (mut lo, mut hi, mut any) = (u64::MAX, 0u64, 0u64);
            lanes(m, |l| {
                let a = acc.addrs[l];
                lo = lo.min(a);
                hi = hi.max(a);
                any |= a;
            });
            if self.span_ok(sp, (lo, hi, any), bytes, align, kind) {
                return Ok(());
            }
        }
        self.check_lanes(r, acc, align, raw)
    }

    /// Check every executed lane's access one by one, in lane order, which reports the
    /// first faulting lane (or passes: e.g. global lanes spread over several allocations).
    #[inline(never)]
    fn check_lanes(&self, r: &Resolved, acc: &MemAccess, align: u32, raw: &Lanes) -> Res<()> {
        let mut res = Ok(());
        lanes(acc.mask, |l| {
            if res.is_ok() {
                let lsp = SPACES[r.lane_space[l] as usize];
                res = self.check(lsp, l, acc.addrs[l], acc.bytes, align, acc.kind, raw[l]);
            }
        });
        res
    }

    /// Are the accesses of `bytes` bytes at every address in `[lo, hi]` (whose OR is `any`)
    /// aligned and inside one allocation / the space's bounds? (A `false` is not a fault:
    /// the caller falls back to per-lane checks.)
    #[inline]
    fn span_ok(
        &self,
        sp: StateSpace,
        (lo, hi, any): (u64, u64, u64),
        bytes: u32,
        align: u32,
        kind: MemKind,
    ) -> bool {
        if align > 1 && any & (align as u64 - 1) != 0 {
            return false;
        }
        let Some(end) = hi.checked_add(bytes as u64) else {
            return false;
        };
        let load = kind == MemKind::Load;
        match sp {
            StateSpace::Global => self.env.global.contains(lo, end - lo),
            StateSpace::Shared => end <= self.cta.shared.len() as u64,
            StateSpace::Local => end <= self.warp.local_bytes,
            StateSpace::Const => load && end <= self.env.launch.consts.len() as u64,
            StateSpace::Param => load && end <= self.env.launch.params.len() as u64,
            StateSpace::Generic => false,
        }
    }

    /// Alignment and bounds check of one lane's access.
    #[allow(clippy::too_many_arguments)]
    fn check(
        &self,
        sp: StateSpace,
        lane: usize,
        a: u64,
        bytes: u32,
        align: u32,
        kind: MemKind,
        raw: u64,
    ) -> Res<()> {
        let fail = |fk: FaultKind, why: &dyn Fn() -> String| {
            Err(self.access_fault(fk, sp, lane, a, bytes, kind, raw, why()))
        };
        if align > 1 && a & (align as u64 - 1) != 0 {
            return fail(FaultKind::Misaligned, &|| {
                format!(" is not aligned to {align} bytes")
            });
        }
        let b = bytes as u64;
        let within = |len: u64| a.checked_add(b).is_some_and(|e| e <= len);
        let ok = match sp {
            StateSpace::Global => self.env.global.contains(a, b),
            StateSpace::Shared => within(self.cta.shared.len() as u64),
            StateSpace::Local => within(self.warp.local_bytes),
            StateSpace::Const | StateSpace::Param => {
                if kind != MemKind::Load {
                    return fail(FaultKind::Unsupported, &|| {
                        String::from(" in read-only space")
                    });
                }
                let len = if sp == StateSpace::Const {
                    self.env.launch.consts.len()
                } else {
                    self.env.launch.params.len()
                };
                within(len as u64)
            }
            StateSpace::Generic => false,
        };
        if !ok {
            return fail(FaultKind::OutOfBounds, &|| {
                let limit = match sp {
                    StateSpace::Shared => format!(" (shared size {})", self.cta.shared.len()),
                    StateSpace::Local => {
                        format!(" (local frame size {})", self.warp.local_bytes)
                    }
                    StateSpace::Const => {
                        format!(" (const bank size {})", self.env.launch.consts.len())
                    }
                    StateSpace::Param => {
                        format!(" (param size {})", self.env.launch.params.len())
                    }
                    StateSpace::Global if self.env.global.strict() => {
                        String::from(" (outside every live allocation; strict bounds)")
                    }
                    StateSpace::Global => String::from(" (no device memory is mapped there)"),
                    _ => String::new(),
                };
                format!(" is out of bounds{limit}")
            });
        }
        Ok(())
    }

    /// The fault of a failed access check: "<describe the access><why>". Cold: only a
    /// faulting instruction gets here.
    #[cold]
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    fn access_fault(
        &self,
        fk: FaultKind,
        sp: StateSpace,
        lane: usize,
        a: u64,
        bytes: u32,
        kind: MemKind,
        raw: u64,
        why: String,
    ) -> Fault {
        let what = match kind {
            MemKind::Load => "load",
            MemKind::Store => "store",
            MemKind::Atomic => "atomic",
        };
        let mut s = format!(
            "{what} of {bytes} bytes at {} address {a:#x}",
            space_name(sp)
        );
        if self.inst().mods.space.unwrap_or(StateSpace::Generic) == StateSpace::Generic {
            s.push_str(&format!(" (generic address {raw:#x})"));
        }
        s.push_str(&format!(", lane {lane}"));
        s.push_str(&why);
        self.fault(fk, Some(lane), s)
    }

    /// The bytes of space `sp` for the uniform-space fast path, with the address of byte 0
    /// and the per-lane stride (the local frame size for `.local`, else 0): lane `l`'s
    /// address `a` is byte `buf_offset(a, base, stride, l)`. Same bytes as `mem_read`.
    fn space_bytes(&self, sp: StateSpace) -> (&[u8], u64, usize) {
        match sp {
            // Global memory is paged: read through `GlobalMemory` (see `load_element`).
            StateSpace::Global => (&[], 0, 0),
            StateSpace::Shared => (&self.cta.shared, 0, 0),
            StateSpace::Local => (&self.warp.local, 0, self.warp.local_bytes as usize),
            StateSpace::Const => (&self.env.launch.consts, 0, 0),
            StateSpace::Param => (&self.env.launch.params, 0, 0),
            StateSpace::Generic => (&[], 0, 0),
        }
    }

    /// Mutable [`Exec::space_bytes`] (read-only spaces give an empty buffer: writes to them
    /// are ignored, as in `mem_write`).
    fn space_bytes_mut(&mut self, sp: StateSpace) -> (&mut [u8], u64, usize) {
        match sp {
            StateSpace::Shared => (&mut self.cta.shared, 0, 0),
            StateSpace::Local => (&mut self.warp.local, 0, self.warp.local_bytes as usize),
            _ => (&mut [], 0, 0),
        }
    }

    /// Read `size` bytes (checked) of lane `lane` in space `sp` at `a`. (Slices are taken
    /// with `get`, so even an inconsistent state reads 0 instead of panicking.)
    #[inline]
    fn mem_read(&self, sp: u8, lane: usize, a: u64, size: u32) -> u64 {
        #[inline(always)]
        fn rd(buf: &[u8], o: usize, n: usize) -> u64 {
            buf.get(o..o.wrapping_add(n)).map_or(0, load_le)
        }
        let n = size as usize;
        match SPACES[sp as usize] {
            StateSpace::Global => self.env.global.load_checked(a, size),
            StateSpace::Shared => rd(&self.cta.shared, a as usize, n),
            StateSpace::Local => {
                let o = (lane * self.warp.local_bytes as usize).wrapping_add(a as usize);
                rd(&self.warp.local, o, n)
            }
            StateSpace::Const => rd(&self.env.launch.consts, a as usize, n),
            StateSpace::Param => rd(&self.env.launch.params, a as usize, n),
            StateSpace::Generic => 0,
        }
    }

    /// Write the low `size` bytes of `v` (checked) for lane `lane` in space `sp` at `a`.
    #[inline]
    fn mem_write(&mut self, sp: u8, lane: usize, a: u64, size: u32, v: u64) {
        #[inline(always)]
        fn wr(buf: &mut [u8], o: usize, n: usize, v: u64) {
            if let Some(b) = buf.get_mut(o..o.wrapping_add(n)) {
                store_le(b, v)
            }
        }
        let n = size as usize;
        match SPACES[sp as usize] {
            StateSpace::Global => self.env.global.store_checked(a, size, v),
            StateSpace::Shared => wr(&mut self.cta.shared, a as usize, n, v),
            StateSpace::Local => {
                let o = (lane * self.warp.local_bytes as usize).wrapping_add(a as usize);
                wr(&mut self.warp.local, o, n, v)
            }
            _ => {}
        }
    }

    /// For a generic instruction whose lanes resolved to different spaces, report the
    /// access as generic with the generic addresses (as the module docs describe).
    fn finish(acc: &mut MemAccess, r: &Resolved) {
        if r.uniform.is_none() {
            acc.space = StateSpace::Generic;
            lanes(acc.mask, |l| {
                acc.addrs[l] = generic_of(SPACES[r.lane_space[l] as usize], acc.addrs[l])
            });
        }
    }

    /// `ld` / `st`, scalar or vector.
    pub(super) fn ld_st(&mut self, acc: &mut MemAccess) -> Res<()> {
        let inst = self.inst();
        let ty = inst.ty;
        let vec = inst.mods.vec.max(1) as usize;
        if !matches!(vec, 1 | 2 | 4) {
            return Err(self.unsupported(format!("vector width {vec}")));
        }
        if ty == ScalarType::Pred {
            return Err(self.unsupported("ld/st of .pred"));
        }
        let esize = ty.size_bytes();
        let bytes = esize * vec as u32;
        let load = inst.op == Opcode::Ld;
        let kind = if load { MemKind::Load } else { MemKind::Store };
        self.begin_access(acc, kind, bytes);
        let r = self.resolve(acc, bytes)?;
        let m = self.executed;
        if m == 0 {
            return Ok(());
        }
        if load {
            if inst.dsts.len() != vec {
                return Err(self.unsupported("destination count does not match vector width"));
            }
            // An element is loaded zero-extended from its own width, which is already the
            // register convention of every type but the signed ones (`put` sign-extends).
            // (Loads read memory only, so each element can be written back as it is loaded.)
            for k in 0..vec {
                let v = self.load_element(&r, acc, k as u64 * esize as u64, esize);
                if ty.is_signed() {
                    self.put(k, &v, m, ty)?;
                } else {
                    self.put_raw(k, &v, m)?;
                }
            }
        } else {
            if inst.srcs.len() != vec {
                return Err(self.unsupported("source count does not match vector width"));
            }
            match vec {
                1 => {
                    let vals = [self.src(0)?];
                    self.store_elements(&r, acc, esize, &vals)
                }
                2 => {
                    let vals = [self.src(0)?, self.src(1)?];
                    self.store_elements(&r, acc, esize, &vals)
                }
                _ => {
                    let vals = [self.src(0)?, self.src(1)?, self.src(2)?, self.src(3)?];
                    self.store_elements(&r, acc, esize, &vals)
                }
            }
        }
        Self::finish(acc, &r);
        Ok(())
    }

    /// Load element `koff / esize` of every executed lane's access into `out`.
    /// (Lanes that do not execute hold 0.)
    fn load_element(&self, r: &Resolved, acc: &MemAccess, koff: u64, esize: u32) -> Lanes {
        let (m, addrs) = (acc.mask, &acc.addrs);
        let Some(sp) = r.uniform else {
            return gen(m, |l| {
                self.mem_read(r.lane_space[l], l, addrs[l] + koff, esize)
            });
        };
        // One space for all lanes: decide the space and the element size once.
        if sp == StateSpace::Global {
            let g = &*self.env.global;
            return match esize {
                1 => gen(m, |l| g.load_n::<1>(addrs[l].wrapping_add(koff))),
                2 => gen(m, |l| g.load_n::<2>(addrs[l].wrapping_add(koff))),
                4 => gen(m, |l| g.load_n::<4>(addrs[l].wrapping_add(koff))),
                _ => gen(m, |l| g.load_n::<8>(addrs[l].wrapping_add(koff))),
            };
        }
        let (buf, base, stride) = self.space_bytes(sp);
        match esize {
            1 => gather::<1>(buf, base, stride, m, addrs, koff),
            2 => gather::<2>(buf, base, stride, m, addrs, koff),
            4 => gather::<4>(buf, base, stride, m, addrs, koff),
            _ => gather::<8>(buf, base, stride, m, addrs, koff),
        }
    }

    /// Store `vals[k]` as element `k` of every executed lane's access, in ascending lane
    /// order (so that the highest lane wins where lanes overlap).
    fn store_elements(&mut self, r: &Resolved, acc: &MemAccess, esize: u32, vals: &[Lanes]) {
        let (m, addrs) = (acc.mask, &acc.addrs);
        let Some(sp) = r.uniform else {
            lanes(m, |l| {
                for (k, v) in vals.iter().enumerate() {
                    let a = addrs[l] + (k as u64) * esize as u64;
                    self.mem_write(r.lane_space[l], l, a, esize, v[l]);
                }
            });
            return;
        };
        if sp == StateSpace::Global {
            fn scatter_global<const N: usize>(
                g: &mut super::GlobalMemory,
                m: u32,
                addrs: &Lanes,
                vals: &[Lanes],
            ) {
                lanes(m, |l| {
                    for (k, v) in vals.iter().enumerate() {
                        g.store_n::<N>(addrs[l].wrapping_add((k * N) as u64), v[l]);
                    }
                });
            }
            let g = &mut *self.env.global;
            match esize {
                1 => scatter_global::<1>(g, m, addrs, vals),
                2 => scatter_global::<2>(g, m, addrs, vals),
                4 => scatter_global::<4>(g, m, addrs, vals),
                _ => scatter_global::<8>(g, m, addrs, vals),
            }
            return;
        }
        let (buf, base, stride) = self.space_bytes_mut(sp);
        fn scatter<const N: usize>(
            buf: &mut [u8],
            base: u64,
            stride: usize,
            m: u32,
            addrs: &Lanes,
            vals: &[Lanes],
        ) {
            lanes(m, |l| {
                for (k, v) in vals.iter().enumerate() {
                    let a = addrs[l].wrapping_add((k * N) as u64);
                    write_n::<N>(buf, buf_offset(a, base, stride, l), v[l]);
                }
            });
        }
        match esize {
            1 => scatter::<1>(buf, base, stride, m, addrs, vals),
            2 => scatter::<2>(buf, base, stride, m, addrs, vals),
            4 => scatter::<4>(buf, base, stride, m, addrs, vals),
            _ => scatter::<8>(buf, base, stride, m, addrs, vals),
        }
    }

    /// `atom` / `red`: lanes apply in ascending lane order; `atom`'s destination receives the
    /// old value.
    pub(super) fn atom(&mut self, acc: &mut MemAccess) -> Res<()> {
        use ScalarType::*;
        let inst = self.inst();
        let ty = inst.ty;
        let op = inst
            .mods
            .atom
            .ok_or_else(|| self.unsupported("atomic without an operation"))?;
        let space = inst.mods.space.unwrap_or(StateSpace::Generic);
        if !matches!(
            space,
            StateSpace::Global | StateSpace::Shared | StateSpace::Generic
        ) {
            return Err(self.unsupported("atomic in this state space"));
        }
        let size = ty.size_bytes();
        let valid = match op {
            AtomOp::Add => matches!(ty, U32 | S32 | U64 | S64 | B32 | B64 | F32 | F64),
            AtomOp::Min | AtomOp::Max => matches!(ty, U32 | S32 | U64 | S64 | B32 | B64),
            AtomOp::Inc | AtomOp::Dec => matches!(ty, U32 | B32),
            AtomOp::Exch => matches!(ty, B32 | B64 | U32 | S32 | U64 | S64 | F32 | F64),
            AtomOp::Cas | AtomOp::And | AtomOp::Or | AtomOp::Xor => {
                matches!(ty, B32 | B64 | U32 | S32 | U64 | S64)
            }
        };
        if !valid {
            return Err(self.unsupported("this atomic operation/type combination"));
        }
        self.begin_access(acc, MemKind::Atomic, size);
        let r = self.resolve(acc, size)?;
        let m = self.executed;
        if m == 0 {
            return Ok(());
        }
        // Generic atomics must land in global or shared memory.
        let local_idx = space_index(StateSpace::Local);
        if let Some(l) = (0..WARP_SIZE).find(|&l| m & (1 << l) != 0 && r.lane_space[l] == local_idx)
        {
            return Err(self.fault(
                FaultKind::Unsupported,
                Some(l),
                format!(
                    "atomic on .local memory at address {:#x}, lane {l}",
                    acc.addrs[l]
                ),
            ));
        }
        let b = self.src(0)?;
        let c = if op == AtomOp::Cas {
            self.src(1)?
        } else {
            [0; WARP_SIZE]
        };
        let bits = ty.bits();
        let signed = ty.is_signed();
        let f: fn(u64, u64, u64, bool, u32) -> u64 = match (op, ty) {
            (AtomOp::Add, F32) => |o, b, _, _, _| {
                let (x, y) = (fl::ftz32(fl::f32_of(o)), fl::ftz32(fl::f32_of(b)));
                fl::canon32(fl::ftz32(x + y))
            },
            (AtomOp::Add, F64) => |o, b, _, _, _| fl::canon64(fl::f64_of(o) + fl::f64_of(b)),
            (AtomOp::Add, _) => |o, b, _, _, _| o.wrapping_add(b),
            (AtomOp::Min, _) => |o, b, _, s, bits| int_extreme(o, b, s, bits, false),
            (AtomOp::Max, _) => |o, b, _, s, bits| int_extreme(o, b, s, bits, true),
            (AtomOp::Inc, _) => |o, b, _, _, _| {
                let (o, b) = (o as u32, b as u32);
                (if o >= b { 0 } else { o + 1 }) as u64
            },
            (AtomOp::Dec, _) => |o, b, _, _, _| {
                let (o, b) = (o as u32, b as u32);
                (if o == 0 || o > b { b } else { o - 1 }) as u64
            },
            (AtomOp::Exch, _) => |_, b, _, _, _| b,
            (AtomOp::Cas, _) => |o, b, c, _, bits| {
                let mk = super::int::mask(bits);
                if o & mk == b & mk {
                    c
                } else {
                    o
                }
            },
            (AtomOp::And, _) => |o, b, _, _, _| o & b,
            (AtomOp::Or, _) => |o, b, _, _, _| o | b,
            (AtomOp::Xor, _) => |o, b, _, _, _| o ^ b,
        };
        let mut old = [0u64; WARP_SIZE];
        for l in 0..WARP_SIZE {
            if m & (1 << l) == 0 {
                continue;
            }
            let (sp, a) = (r.lane_space[l], acc.addrs[l]);
            let o = self.mem_read(sp, l, a, size);
            let n = f(o, b[l], c[l], signed, bits);
            self.mem_write(sp, l, a, size, n);
            old[l] = o;
        }
        if inst.op == Opcode::Atom && !inst.dsts.is_empty() {
            self.put(0, &old, m, ty)?;
        }
        Self::finish(acc, &r);
        Ok(())
    }
}

/// The smaller (or, with `max`, the larger) of two `bits`-wide integers, compared signed or
/// unsigned (atom.min / atom.max).
fn int_extreme(o: u64, b: u64, signed: bool, bits: u32, max: bool) -> u64 {
    let (x, y) = (
        super::int::read_int_bits(o, bits, signed),
        super::int::read_int_bits(b, bits, signed),
    );
    let x_first = if signed {
        (x as i64) <= (y as i64)
    } else {
        x <= y
    };
    // Ties return either operand: they are equal.
    if x_first != max {
        x
    } else {
        y
    }
}
