//! Validation of a launch request and construction of its [`LaunchInfo`].

use crate::error::SimError;
use crate::exec::{LaunchInfo, WARP_SIZE};
use crate::host::{Dim3, KernelArg};
use crate::ptx::ir::{Kernel, Module, ScalarType, Symbol};

/// Hardware limits on a launch (CUDA's for compute capability 2.x-7.x).
const MAX_BLOCK_THREADS: u64 = 1024;
const MAX_BLOCK_DIM: [u32; 3] = [1024, 1024, 64];
const MAX_GRID_DIM: [u32; 3] = [2_147_483_647, 65535, 65535];
/// Shared memory of one CTA, static and dynamic: the largest `sm.shared_bytes` the
/// configuration accepts (16 MiB; 48-228 KB on real GPUs).
pub const MAX_SHARED_BYTES_PER_CTA: u64 = crate::config_limits::MAX_SHARED_BYTES;
/// Local memory (the `.local` frame) of one thread. The model keeps every resident warp's
/// frames (32 per warp) in host memory, so this bounds them: 16 KiB is 512 KiB per warp.
/// CUDA allows up to 512 KiB per thread; kernels spill far less.
pub const MAX_LOCAL_BYTES_PER_THREAD: u64 = 16 << 10;
/// A module's `.const` variables: the constant memory of every CUDA GPU (64 KiB).
pub const MAX_CONST_BYTES: u64 = 64 << 10;
/// A kernel's parameters (the param buffer): CUDA's limit since 12.1 (4 KiB before).
pub const MAX_PARAM_BYTES: u64 = 32_764;

/// Grid, block and dynamic shared memory of a launch.
#[derive(Debug, Clone, Copy)]
pub struct LaunchShape {
    pub grid: Dim3,
    pub block: Dim3,
    pub dynamic_shared: u32,
}

/// A launch's parameters: typed arguments in `.param` order, or the param buffer itself.
#[derive(Debug, Clone, Copy)]
pub enum Params<'a> {
    Args(&'a [KernelArg]),
    /// The bytes of the param buffer, laid out as the kernel's `.param` list (offsets and
    /// alignment of [`Kernel::params`]); exactly `Kernel::param_bytes` long. This is what a
    /// CUDA runtime hands over (`cudaLaunchKernel`'s argument pointers copied into place).
    Raw(&'a [u8]),
}

/// Check the launch shape against the hardware limits and the kernel's shared, local and
/// parameter memory against the model's (before anything is sized from them).
pub fn check_shape(kernel: &Kernel, shape: LaunchShape) -> Result<(), SimError> {
    let LaunchShape {
        grid,
        block,
        dynamic_shared,
    } = shape;
    let name = &kernel.name;
    let err = |m: String| Err(SimError::Launch(format!("kernel `{name}`: {m}")));
    for (i, (axis, v)) in [("x", grid.x), ("y", grid.y), ("z", grid.z)]
        .iter()
        .enumerate()
    {
        if *v == 0 || *v > MAX_GRID_DIM[i] {
            return err(format!(
                "grid.{axis} = {v} is out of range 1..={}",
                MAX_GRID_DIM[i]
            ));
        }
    }
    for (i, (axis, v)) in [("x", block.x), ("y", block.y), ("z", block.z)]
        .iter()
        .enumerate()
    {
        if *v == 0 || *v > MAX_BLOCK_DIM[i] {
            return err(format!(
                "block.{axis} = {v} is out of range 1..={}",
                MAX_BLOCK_DIM[i]
            ));
        }
    }
    if block.count() > MAX_BLOCK_THREADS {
        return err(format!(
            "a block of {} threads exceeds {MAX_BLOCK_THREADS}",
            block.count()
        ));
    }
    let shared_bytes = kernel.shared_bytes + dynamic_shared as u64;
    if shared_bytes > MAX_SHARED_BYTES_PER_CTA {
        return err(format!(
            "needs {shared_bytes} bytes of shared memory per block ({} static, {dynamic_shared} \
             dynamic), more than the model's limit of {MAX_SHARED_BYTES_PER_CTA}",
            kernel.shared_bytes
        ));
    }
    if kernel.local_bytes > MAX_LOCAL_BYTES_PER_THREAD {
        return err(format!(
            "needs {} bytes of local memory per thread, more than the model's limit of \
             {MAX_LOCAL_BYTES_PER_THREAD}",
            kernel.local_bytes
        ));
    }
    if kernel.param_bytes > MAX_PARAM_BYTES {
        return err(format!(
            "its parameters take {} bytes, more than the limit of {MAX_PARAM_BYTES}",
            kernel.param_bytes
        ));
    }
    Ok(())
}

/// Check the launch shape and arguments against the kernel and lay out the param buffer.
pub fn prepare(
    module: &Module,
    kernel: &Kernel,
    shape: LaunchShape,
    params: Params<'_>,
    consts: Vec<u8>,
    global_base: u64,
) -> Result<LaunchInfo, SimError> {
    check_shape(kernel, shape)?;
    let name = &kernel.name;
    let err = |m: String| Err(SimError::Launch(format!("kernel `{name}`: {m}")));
    let args = match params {
        Params::Args(args) => args,
        Params::Raw(bytes) => {
            if bytes.len() as u64 != kernel.param_bytes {
                return err(format!(
                    "its parameters take {} bytes but {} were given",
                    kernel.param_bytes,
                    bytes.len()
                ));
            }
            return Ok(info(shape, kernel, bytes.to_vec(), consts, global_base));
        }
    };
    if args.len() != kernel.params.len() {
        return err(format!(
            "expects {} parameter(s) but {} were given",
            kernel.params.len(),
            args.len()
        ));
    }
    let mut params = vec![0u8; kernel.param_bytes as usize];
    for (i, (arg, &sym)) in args.iter().zip(&kernel.params).enumerate() {
        let p = &module.symbols[sym as usize];
        if let Err(m) = check_arg(arg, p) {
            return err(format!("parameter {i} {m}"));
        }
        let bytes = arg.to_bytes();
        let off = p.offset as usize;
        params[off..off + bytes.len()].copy_from_slice(&bytes);
    }
    Ok(info(shape, kernel, params, consts, global_base))
}

fn info(
    shape: LaunchShape,
    kernel: &Kernel,
    params: Vec<u8>,
    consts: Vec<u8>,
    global_base: u64,
) -> LaunchInfo {
    let threads = shape.block.count() as u32;
    LaunchInfo {
        grid: shape.grid,
        block: shape.block,
        params,
        consts,
        global_base,
        shared_bytes: kernel.shared_bytes + shape.dynamic_shared as u64,
        local_bytes: kernel.local_bytes,
        warps_per_cta: threads.div_ceil(WARP_SIZE as u32),
    }
}

/// Can `arg` be passed as the kernel parameter `p`? (Its type must match a typed `.param`,
/// its size an untyped one such as a by-value struct.) The message starts with the
/// parameter's name and type.
pub fn check_arg(arg: &KernelArg, p: &Symbol) -> Result<(), String> {
    if let Some(ty) = p.ty {
        check_arg_type(arg, ty).map_err(|m| format!("(`{}`, .{}) {m}", p.name, type_name(ty)))
    } else if arg.size_bytes() as u64 != p.size {
        Err(format!(
            "(`{}`) is {} bytes but a {} argument was given",
            p.name,
            p.size,
            arg.type_name()
        ))
    } else {
        Ok(())
    }
}

fn check_arg_type(arg: &KernelArg, ty: ScalarType) -> Result<(), String> {
    use ScalarType::*;
    let ok = match arg {
        KernelArg::U8(_) | KernelArg::S8(_) => matches!(ty, U8 | S8 | B8),
        KernelArg::U16(_) | KernelArg::S16(_) => matches!(ty, U16 | S16 | B16),
        KernelArg::U32(_) | KernelArg::S32(_) => matches!(ty, U32 | S32 | B32),
        KernelArg::U64(_) | KernelArg::S64(_) | KernelArg::Ptr(_) => matches!(ty, U64 | S64 | B64),
        KernelArg::F32(_) => matches!(ty, F32 | B32),
        KernelArg::F64(_) => matches!(ty, F64 | B64),
    };
    if ok {
        Ok(())
    } else {
        Err(format!("cannot take a {} argument", arg.type_name()))
    }
}

/// PTX spelling of a type, for messages.
pub fn type_name(ty: ScalarType) -> &'static str {
    use ScalarType::*;
    match ty {
        B8 => "b8",
        B16 => "b16",
        B32 => "b32",
        B64 => "b64",
        U8 => "u8",
        U16 => "u16",
        U32 => "u32",
        U64 => "u64",
        S8 => "s8",
        S16 => "s16",
        S32 => "s32",
        S64 => "s64",
        F16 => "f16",
        F32 => "f32",
        F64 => "f64",
        Pred => "pred",
    }
}
