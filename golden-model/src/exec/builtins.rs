//! Execution of the functions and texture fetches the model provides natively: `call`s of
//! `vprintf` and of libdevice's `__nv_*` (see [`super::printf`] and [`super::libdevice`]),
//! and `tex.1d` on linear memory bound to a texture reference.
//!
//! **Textures.** `cudaBindTexture` binds a range of device memory and a channel format to a
//! texture reference, which PTX names by a `.global .texref` variable whose address
//! (`mov.u64 %rd, tex;`) is the handle `tex.1d.v4.DTYPE.s32 {d0, d1, d2, d3}, [%rd, {%x}]`
//! fetches through. The model keeps the bindings in a [`TextureTable`] keyed by that handle
//! (the texref's device address). A fetch of element `x` reads the `x`-th element of the
//! bound range; an `x` outside `[0, bytes / element size)` returns 0 in every component
//! (CUDA: `tex1Dfetch` on linear memory supports only the border and clamp addressing
//! modes and does no filtering; the model takes the border, whose colour is 0, as real GPUs
//! return 0 for out-of-range `tex1Dfetch`es). Components the format lacks are 0. Reading a
//! `.f32` from an 8- or 16-bit integer format gives the normalised value (`x / 255`...,
//! `cudaReadModeNormalizedFloat`); an integer destination gets the integer, and a float
//! format's bits otherwise. A fetch through a handle no texture is bound to is a guest
//! fault. For timing, a fetch is a global load of the elements it reads (the texture cache
//! is not modelled: it goes through L1 like any load).

use std::collections::HashMap;

use super::libdevice::NV_FUNCS;
use super::printf::{self, GuestRead};
use super::semantics::{gen, lanes, Exec, Lanes, Res};
use super::*;
use crate::address_map::classify_generic;
use crate::error::FaultKind;
use crate::ptx::ir::{Builtin, Operand, ScalarType, StateSpace};

/// The kind of a texture's channels (`cudaChannelFormatKind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChannelKind {
    Signed,
    Unsigned,
    Float,
}

/// A texture's element format: 1, 2 or 4 channels of 8, 16 or 32 bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TexFormat {
    pub channels: u8,
    pub bits: u8,
    pub kind: ChannelKind,
}

impl TexFormat {
    /// A format from `cudaChannelFormatDesc`'s bit counts per channel and kind (0 signed, 1
    /// unsigned, 2 float), checked.
    pub fn from_desc(x: i32, y: i32, z: i32, w: i32, kind: i32) -> Result<TexFormat, String> {
        let kind = match kind {
            0 => ChannelKind::Signed,
            1 => ChannelKind::Unsigned,
            2 => ChannelKind::Float,
            k => return Err(format!("channel format kind {k} is not supported")),
        };
        let bits = [x, y, z, w];
        let channels = bits.iter().take_while(|&&b| b != 0).count();
        let ok = matches!(x, 8 | 16 | 32)
            && matches!(channels, 1 | 2 | 4)
            && bits[..channels].iter().all(|&b| b == x)
            && bits[channels..].iter().all(|&b| b == 0)
            && (kind != ChannelKind::Float || x == 32);
        if !ok {
            return Err(format!(
                "channel format ({x}, {y}, {z}, {w}) of kind {kind:?} is not supported (1, 2 \
                 or 4 equal channels of 8, 16 or 32 bits; floats of 32)"
            ));
        }
        Ok(TexFormat {
            channels: channels as u8,
            bits: x as u8,
            kind,
        })
    }
    pub fn element_bytes(&self) -> u64 {
        self.channels as u64 * self.bits as u64 / 8
    }
}

/// Linear memory bound to a texture reference.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TexBinding {
    pub base: u64,
    pub bytes: u64,
    pub format: TexFormat,
}

/// The texture bindings of a GPU, by handle (see the module docs).
#[derive(Debug, Clone, Default)]
pub struct TextureTable {
    map: HashMap<u64, TexBinding>,
}

impl TextureTable {
    pub fn bind(&mut self, handle: u64, b: TexBinding) {
        self.map.insert(handle, b);
    }
    pub fn unbind(&mut self, handle: u64) -> bool {
        self.map.remove(&handle).is_some()
    }
    pub fn get(&self, handle: u64) -> Option<&TexBinding> {
        self.map.get(&handle)
    }
}

/// What one lane of a `vprintf` may read: global memory and its own local and shared
/// windows.
struct LaneMem<'a> {
    global: &'a GlobalMemory,
    local: &'a [u8],
    shared: &'a [u8],
}

impl GuestRead for LaneMem<'_> {
    fn read(&mut self, addr: u64, out: &mut [u8]) -> Result<(), String> {
        let (space, off) = classify_generic(addr);
        let (buf, what) = match space {
            StateSpace::Global => return self.global.read(addr, out),
            StateSpace::Local => (self.local, "the thread's local memory"),
            _ => (self.shared, "the block's shared memory"),
        };
        let src = usize::try_from(off)
            .ok()
            .and_then(|o| buf.get(o..o.checked_add(out.len())?))
            .ok_or_else(|| {
                format!(
                    "{} bytes at offset {off:#x} of {what} ({} bytes)",
                    out.len(),
                    buf.len()
                )
            })?;
        out.copy_from_slice(src);
        Ok(())
    }
}

impl Exec<'_, '_> {
    /// `call` of a built-in function.
    pub(super) fn call(&mut self) -> Res<()> {
        let inst = self.inst();
        match inst.mods.builtin {
            Some(Builtin::Vprintf) => self.vprintf(),
            Some(Builtin::Nv(i)) => {
                let Some(func) = NV_FUNCS.get(i as usize) else {
                    return Err(self.unsupported(format!("built-in function {i}")));
                };
                let n = func.params().len();
                if inst.srcs.len() != n || inst.dsts.len() != 1 {
                    return Err(self.unsupported(format!("call of `{}`", func.name)));
                }
                let m = self.executed;
                let a = self.src(0)?;
                let b = if n > 1 { self.src(1)? } else { [0; WARP_SIZE] };
                let c = if n > 2 { self.src(2)? } else { [0; WARP_SIZE] };
                let d = gen(m, |l| func.eval(a[l], b[l], c[l]));
                self.put(0, &d, m, func.ret())
            }
            None => Err(self.unsupported("call without a built-in function")),
        }
    }

    /// `vprintf(fmt, args)` of every executing lane, in ascending lane order.
    fn vprintf(&mut self) -> Res<()> {
        let m = self.executed;
        let fmt = self.src(0)?;
        let args = self.src(1)?;
        let mut ret = [0u64; WARP_SIZE];
        let mut fault = None;
        let frame = self.warp.local_bytes as usize;
        let call = self.warp.printf_calls;
        self.warp.printf_calls = call.wrapping_add(1);
        let warp_id = self.warp.global_warp_id;
        let limit = self.env.global.printf.limit();
        lanes(m, |l| {
            if fault.is_some() {
                return;
            }
            let mut mem = LaneMem {
                global: self.env.global,
                local: self
                    .warp
                    .local
                    .get(l * frame..(l + 1) * frame)
                    .unwrap_or(&[]),
                shared: &self.cta.shared,
            };
            match printf::vprintf(&mut mem, fmt[l], args[l], limit) {
                Ok(r) => {
                    ret[l] = r.ret as i64 as u64;
                    self.env.global.printf.push(warp_id, call, l as u8, r.text);
                }
                Err(e) => fault = Some((l, e)),
            }
        });
        if let Some((l, e)) = fault {
            return Err(self.fault(FaultKind::OutOfBounds, Some(l), e));
        }
        if let Some(Operand::Reg(_)) = self.inst().dsts.first() {
            self.put(0, &ret, m, ScalarType::S32)?;
        }
        Ok(())
    }

    /// `tex.1d.v4.DTYPE.s32` (see the module docs).
    pub(super) fn tex(&mut self, acc: &mut MemAccess) -> Res<()> {
        let inst = self.inst();
        let m = self.executed;
        let handle = self.src(0)?;
        let x = self.src(1)?;
        let dty = inst.ty;
        let mut out: [Lanes; 4] = [[0; WARP_SIZE]; 4];
        acc.space = StateSpace::Global;
        acc.kind = MemKind::Load;
        acc.mask = 0;
        acc.addrs = [0; WARP_SIZE];
        let mut fault = None;
        lanes(m, |l| {
            if fault.is_some() {
                return;
            }
            let Some(b) = self.env.global.textures.get(handle[l]) else {
                fault = Some((
                    l,
                    format!(
                        "texture fetch through handle {:#x}, to which no texture is bound \
                         (cudaBindTexture)",
                        handle[l]
                    ),
                ));
                return;
            };
            let f = b.format;
            let eb = f.element_bytes();
            acc.bytes = eb as u32;
            let i = x[l] as u32 as i32;
            if i < 0 || i as u64 >= b.bytes / eb {
                return;
            }
            let addr = b.base + i as u64 * eb;
            let mut buf = [0u8; 16];
            if let Err(e) = self.env.global.read(addr, &mut buf[..eb as usize]) {
                fault = Some((l, format!("texture fetch of element {i}: {e}")));
                return;
            }
            acc.mask |= 1 << l;
            acc.addrs[l] = addr;
            let cb = f.bits as usize / 8;
            for (c, o) in out.iter_mut().enumerate().take(f.channels as usize) {
                let mut v = [0u8; 8];
                v[..cb].copy_from_slice(&buf[c * cb..(c + 1) * cb]);
                let raw = u64::from_le_bytes(v);
                let sbits = 64 - f.bits as u32;
                let signed = ((raw << sbits) as i64) >> sbits;
                o[l] = match (dty, f.kind) {
                    (ScalarType::F32, ChannelKind::Float) => raw,
                    (ScalarType::F32, ChannelKind::Unsigned) => {
                        let max = ((1u64 << f.bits) - 1) as f64;
                        ((raw as f64 / max) as f32).to_bits() as u64
                    }
                    (ScalarType::F32, ChannelKind::Signed) => {
                        let max = ((1u64 << (f.bits - 1)) - 1) as f64;
                        ((signed as f64 / max).max(-1.0) as f32).to_bits() as u64
                    }
                    (_, ChannelKind::Signed) => signed as u64,
                    _ => raw,
                };
            }
        });
        if let Some((l, e)) = fault {
            return Err(self.fault(FaultKind::OutOfBounds, Some(l), e));
        }
        for (k, o) in out.iter().enumerate() {
            if k < inst.dsts.len() {
                self.put(k, o, m, dty)?;
            }
        }
        Ok(())
    }
}
