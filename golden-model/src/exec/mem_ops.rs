//! Memory instructions: `ld`, `st`, `atom`, `red` in every state space.
//!
//! Each instruction first computes and checks every executed lane's address (alignment to
//! the access size — element size × vector width — then bounds), so a faulting instruction
//! has no side effects; then it performs the accesses in ascending lane order.
//!
//! Bounds: global = inside one device allocation (the module `.global` image is an
//! allocation too); shared = inside the CTA's shared bytes; local = inside the lane's frame;
//! const/param = inside the launch's const bank / param buffer (read-only).
//! Generic addresses are classified through [`crate::address_map::classify_generic`]; when
//! the lanes of one instruction resolve to different spaces, the reported
//! [`MemAccess::space`] is `Generic` and its `addrs` hold the generic addresses.

use super::float as fl;
use super::int::ext;
use super::memory::{load_le, store_le};
use super::semantics::{lanes, Exec, Lanes};
use super::*;
use crate::address_map::classify_generic;
use crate::error::{FaultKind, GuestFault};
use crate::ptx::ir::{AtomOp, Opcode, ScalarType, StateSpace};

type Res<T> = Result<T, GuestFault>;

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

/// Per-lane resolved addresses of one memory instruction.
struct Resolved {
    acc: MemAccess,
    /// Space of each lane (index into `SPACES`).
    lane_space: [u8; WARP_SIZE],
    /// The generic addresses, when the instruction was generic.
    generic: Option<Lanes>,
}

impl Exec<'_, '_> {
    /// Compute, classify and check the address of every executed lane.
    fn resolve(&self, kind: MemKind, bytes: u32, align: u32) -> Res<Resolved> {
        let inst = self.inst();
        let space = inst.mods.space.unwrap_or(StateSpace::Generic);
        let m = self.executed;
        let addr = inst
            .addr
            .ok_or_else(|| self.unsupported("memory instruction without address"))?;
        let mut acc = MemAccess {
            space,
            kind,
            bytes,
            mask: m,
            addrs: [0; WARP_SIZE],
        };
        let mut lane_space = [space_index(space); WARP_SIZE];
        if m == 0 {
            return Ok(Resolved {
                acc,
                lane_space,
                generic: None,
            });
        }
        let base = self.addr_base(addr.base, space)?;
        let off = addr.offset as u64;
        let raw: Lanes = match base {
            Some(b) => {
                let mut r = [0u64; WARP_SIZE];
                lanes(m, |l| r[l] = b[l].wrapping_add(off));
                r
            }
            None => [off; WARP_SIZE],
        };
        let mut first: Option<StateSpace> = None;
        let mut mixed = false;
        for l in 0..WARP_SIZE {
            if m & (1 << l) == 0 {
                continue;
            }
            let (sp, a) = if space == StateSpace::Generic {
                classify_generic(raw[l])
            } else {
                (space, raw[l])
            };
            match first {
                None => first = Some(sp),
                Some(f) if f != sp => mixed = true,
                _ => {}
            }
            self.check(sp, l, a, bytes, align, kind, raw[l])?;
            lane_space[l] = space_index(sp);
            acc.addrs[l] = a;
        }
        let generic = (space == StateSpace::Generic).then_some(raw);
        acc.space = if mixed {
            StateSpace::Generic
        } else {
            first.unwrap_or(space)
        };
        Ok(Resolved {
            acc,
            lane_space,
            generic,
        })
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
        let what = match kind {
            MemKind::Load => "load",
            MemKind::Store => "store",
            MemKind::Atomic => "atomic",
        };
        let describe = || {
            let mut s = format!(
                "{what} of {bytes} bytes at {} address {a:#x}",
                space_name(sp)
            );
            if self.inst().mods.space.unwrap_or(StateSpace::Generic) == StateSpace::Generic {
                s.push_str(&format!(" (generic address {raw:#x})"));
            }
            s.push_str(&format!(", lane {lane}"));
            s
        };
        if align > 1 && a & (align as u64 - 1) != 0 {
            return Err(self.fault(
                FaultKind::Misaligned,
                Some(lane),
                format!("{} is not aligned to {align} bytes", describe()),
            ));
        }
        let b = bytes as u64;
        let within = |len: u64| a.checked_add(b).is_some_and(|e| e <= len);
        let ok = match sp {
            StateSpace::Global => self.env.global.contains(a, b),
            StateSpace::Shared => within(self.cta.shared.len() as u64),
            StateSpace::Local => within(self.warp.local_bytes),
            StateSpace::Const | StateSpace::Param => {
                if kind != MemKind::Load {
                    return Err(self.fault(
                        FaultKind::Unsupported,
                        Some(lane),
                        format!("{} in read-only space", describe()),
                    ));
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
            let limit = match sp {
                StateSpace::Shared => format!(" (shared size {})", self.cta.shared.len()),
                StateSpace::Local => format!(" (local frame size {})", self.warp.local_bytes),
                StateSpace::Const => format!(" (const bank size {})", self.env.launch.consts.len()),
                StateSpace::Param => format!(" (param size {})", self.env.launch.params.len()),
                _ => String::new(),
            };
            return Err(self.fault(
                FaultKind::OutOfBounds,
                Some(lane),
                format!("{} is out of bounds{limit}", describe()),
            ));
        }
        Ok(())
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

    fn finish(&self, r: Resolved) -> MemAccess {
        let mut acc = r.acc;
        if acc.space == StateSpace::Generic {
            if let Some(g) = r.generic {
                acc.addrs = g;
            }
        }
        acc
    }

    /// `ld` / `st`, scalar or vector.
    pub(super) fn ld_st(&mut self) -> Res<MemAccess> {
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
        let r = self.resolve(kind, bytes, bytes)?;
        let m = self.executed;
        if m == 0 {
            return Ok(r.acc);
        }
        let mut vals = [[0u64; WARP_SIZE]; 4];
        if load {
            if inst.dsts.len() != vec {
                return Err(self.unsupported("destination count does not match vector width"));
            }
            lanes(m, |l| {
                for (k, v) in vals.iter_mut().enumerate().take(vec) {
                    let x = self.mem_read(
                        r.lane_space[l],
                        l,
                        r.acc.addrs[l] + (k as u64) * esize as u64,
                        esize,
                    );
                    v[l] = ext(ty, x);
                }
            });
            for (k, v) in vals.iter().enumerate().take(vec) {
                self.put(k, v, m, ty)?;
            }
        } else {
            if inst.srcs.len() != vec {
                return Err(self.unsupported("source count does not match vector width"));
            }
            for (k, v) in vals.iter_mut().enumerate().take(vec) {
                *v = self.src(k)?;
            }
            lanes(m, |l| {
                for (k, v) in vals.iter().enumerate().take(vec) {
                    let a = r.acc.addrs[l] + (k as u64) * esize as u64;
                    self.mem_write(r.lane_space[l], l, a, esize, v[l]);
                }
            });
        }
        Ok(self.finish(r))
    }

    /// `atom` / `red`: lanes apply in ascending lane order; `atom`'s destination receives the
    /// old value.
    pub(super) fn atom(&mut self) -> Res<MemAccess> {
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
        let r = self.resolve(MemKind::Atomic, size, size)?;
        let m = self.executed;
        if m == 0 {
            return Ok(r.acc);
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
                    r.acc.addrs[l]
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
            (AtomOp::Min, _) => |o, b, _, s, bits| {
                let (x, y) = (
                    super::int::read_int_bits(o, bits, s),
                    super::int::read_int_bits(b, bits, s),
                );
                if s {
                    (x as i64).min(y as i64) as u64
                } else {
                    x.min(y)
                }
            },
            (AtomOp::Max, _) => |o, b, _, s, bits| {
                let (x, y) = (
                    super::int::read_int_bits(o, bits, s),
                    super::int::read_int_bits(b, bits, s),
                );
                if s {
                    (x as i64).max(y as i64) as u64
                } else {
                    x.max(y)
                }
            },
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
            let (sp, a) = (r.lane_space[l], r.acc.addrs[l]);
            let o = self.mem_read(sp, l, a, size);
            let n = f(o, b[l], c[l], signed, bits);
            self.mem_write(sp, l, a, size, n);
            old[l] = o;
        }
        if inst.op == Opcode::Atom && !inst.dsts.is_empty() {
            self.put(0, &old, m, ty)?;
        }
        Ok(self.finish(r))
    }
}
