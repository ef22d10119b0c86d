//! The extern "C" entry points: clang's registration calls and the CUDA runtime API.
//!
//! Pointers handed in by the program are trusted as CUDA's are (a bad host pointer crashes
//! the program as it would under CUDA); device pointers are checked by the model.
#![allow(clippy::missing_safety_doc)]

use std::ffi::{c_void, CStr};
use std::os::raw::{c_char, c_int, c_uint};

use warpforge_model::gpu::SymbolPlace;
use warpforge_model::host::{DevPtr, Dim3, Host};

use crate::props;
use crate::state::*;

/// `dim3` / `uint3` as passed by value.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Dim3C {
    pub x: c_uint,
    pub y: c_uint,
    pub z: c_uint,
}

impl From<Dim3C> for Dim3 {
    fn from(d: Dim3C) -> Dim3 {
        Dim3::new(d.x, d.y, d.z)
    }
}

/// clang's fat-binary wrapper: {magic 0x466243b1, version 1, data, unused}.
#[repr(C)]
pub struct FatbinWrapper {
    magic: i32,
    version: i32,
    data: *const c_char,
    unused: *const c_void,
}

const FATBIN_MAGIC: i32 = 0x466243b1;

// ---------------------------------------------------------------- registration

/// Parse the embedded PTX with the model's front end and load it; the handle names the
/// module in the calls that follow.
#[no_mangle]
pub unsafe extern "C" fn __cudaRegisterFatBinary(fatbin: *const c_void) -> *mut *mut c_void {
    let w = &*(fatbin as *const FatbinWrapper);
    if w.magic != FATBIN_MAGIC || w.data.is_null() {
        die(
            "the program's embedded GPU code is not PTX from `warpforge cc` (bad fat-binary wrapper)",
            EXIT_INPUT,
        );
    }
    let bytes = CStr::from_ptr(w.data).to_bytes();
    let text = match std::str::from_utf8(bytes) {
        Ok(t) if t.contains(".version") => t,
        _ => die(
            "the program's embedded GPU code is not PTX text (compile it with `warpforge cc`)",
            EXIT_INPUT,
        ),
    };
    let exe = std::env::current_exe()
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "program".into());
    let id = with(|rt| rt.gpu.load_module(&format!("{exe}.ptx"), text))
        .unwrap_or_else(|e| die(&format!("cannot load the program's PTX: {e}"), EXIT_INPUT));
    Box::into_raw(Box::new(id.0 as *mut c_void))
}

#[no_mangle]
pub unsafe extern "C" fn __cudaRegisterFatBinaryEnd(_handle: *mut *mut c_void) {}

#[no_mangle]
pub unsafe extern "C" fn __cudaUnregisterFatBinary(_handle: *mut *mut c_void) {}

unsafe fn module_of(handle: *mut *mut c_void) -> warpforge_model::host::ModuleId {
    warpforge_model::host::ModuleId(*handle as usize)
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn __cudaRegisterFunction(
    handle: *mut *mut c_void,
    host_fun: *const c_char,
    device_fun: *mut c_char,
    _device_name: *const c_char,
    _thread_limit: c_int,
    _tid: *mut c_void,
    _bid: *mut c_void,
    _bdim: *mut c_void,
    _gdim: *mut c_void,
    _wsize: *mut c_int,
) {
    let module = module_of(handle);
    let name = CStr::from_ptr(device_fun).to_string_lossy().into_owned();
    with(|rt| rt.kernels.insert(host_fun as usize, (module, name)));
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn __cudaRegisterVar(
    handle: *mut *mut c_void,
    host_var: *mut c_char,
    _device_address: *mut c_char,
    device_name: *const c_char,
    _ext: c_int,
    _size: usize,
    _constant: c_int,
    _global: c_int,
) {
    let module = module_of(handle);
    let name = CStr::from_ptr(device_name).to_string_lossy().into_owned();
    with(|rt| rt.vars.insert(host_var as usize, Var { module, name }));
}

#[no_mangle]
pub unsafe extern "C" fn __cudaRegisterManagedVar(
    _handle: *mut *mut c_void,
    _host_var: *mut *mut c_void,
    _device_address: *mut c_char,
    device_name: *const c_char,
    _ext: c_int,
    _size: usize,
    _constant: c_int,
    _global: c_int,
) {
    let name = CStr::from_ptr(device_name).to_string_lossy();
    die(
        &format!("__managed__ variable `{name}`: managed memory is not supported"),
        EXIT_INPUT,
    );
}

/// A texture reference: its PTX `.texref` is a module variable whose device address is the
/// handle kernels fetch through; `cudaBindTexture` binds memory to that handle.
#[no_mangle]
pub unsafe extern "C" fn __cudaRegisterTexture(
    handle: *mut *mut c_void,
    host_var: *const c_void,
    _device_address: *const *const c_void,
    device_name: *const c_char,
    dim: c_int,
    _norm: c_int,
    _ext: c_int,
) {
    let module = module_of(handle);
    let name = CStr::from_ptr(device_name).to_string_lossy().into_owned();
    if dim != 1 {
        eprintln!(
            "warpforge: texture `{name}` has {dim} dimensions; only 1D textures on linear \
             memory (tex1Dfetch) are supported (binding it will fail)"
        );
        return;
    }
    with(|rt| rt.vars.insert(host_var as usize, Var { module, name }));
}

/// `cudaChannelFormatDesc`.
#[repr(C)]
pub struct ChannelFormatDesc {
    x: c_int,
    y: c_int,
    z: c_int,
    w: c_int,
    f: c_int,
}

/// Binds `size` bytes at `dev_ptr` (at most to the end of its allocation: CUDA's C++
/// overload passes `UINT_MAX` for "all of it") to the texture reference `texref`, with the
/// element format `desc`. `*offset` is 0: the model needs no alignment.
#[no_mangle]
pub unsafe extern "C" fn cudaBindTexture(
    offset: *mut usize,
    texref: *const c_void,
    dev_ptr: *const c_void,
    desc: *const ChannelFormatDesc,
    size: usize,
) -> CudaError {
    with(|rt| {
        let Some((_, SymbolPlace::Global(h), _)) = symbol_of(rt, texref) else {
            eprintln!("warpforge: cudaBindTexture of a texture that was not registered");
            return rt.fail(ERR_INVALID_TEXTURE);
        };
        if desc.is_null() {
            return rt.fail(ERR_INVALID_VALUE);
        }
        let d = &*desc;
        let format =
            match warpforge_model::exec::builtins::TexFormat::from_desc(d.x, d.y, d.z, d.w, d.f) {
                Ok(f) => f,
                Err(e) => {
                    eprintln!("warpforge: cudaBindTexture: {e}");
                    return rt.fail(ERR_INVALID_VALUE);
                }
            };
        let p = dev_ptr as u64;
        let Some((start, len)) = rt.gpu.allocation_of(p) else {
            return rt.fail(ERR_INVALID_DEVICE_POINTER);
        };
        let bytes = (size as u64).min(start.0 + len - p);
        if let Err(e) = rt.gpu.bind_texture(h.0, DevPtr(p), bytes, format) {
            eprintln!("warpforge: cudaBindTexture: {e}");
            return rt.fail(ERR_INVALID_VALUE);
        }
        if !offset.is_null() {
            *offset = 0;
        }
        SUCCESS
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaUnbindTexture(texref: *const c_void) -> CudaError {
    with(|rt| match symbol_of(rt, texref) {
        Some((_, SymbolPlace::Global(h), _)) => {
            rt.gpu.unbind_texture(h.0);
            SUCCESS
        }
        _ => rt.fail(ERR_INVALID_TEXTURE),
    })
}

#[no_mangle]
pub unsafe extern "C" fn __cudaRegisterSurface(
    _handle: *mut *mut c_void,
    _host_var: *const c_void,
    _device_address: *const *const c_void,
    device_name: *const c_char,
    _dim: c_int,
    _ext: c_int,
) {
    let name = CStr::from_ptr(device_name).to_string_lossy();
    eprintln!(
        "warpforge: surface `{name}` registered; surfaces are not supported (its use will fail)"
    );
}

// ---------------------------------------------------------------- launches

#[no_mangle]
pub extern "C" fn cudaConfigureCall(
    grid: Dim3C,
    block: Dim3C,
    shared: usize,
    _stream: *mut c_void,
) -> CudaError {
    with(|rt| {
        rt.configs.push(CallConfig {
            grid: grid.into(),
            block: block.into(),
            shared: shared as u32,
        });
        rt.legacy_args.clear();
        SUCCESS
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaSetupArgument(
    arg: *const c_void,
    size: usize,
    offset: usize,
) -> CudaError {
    let src = std::slice::from_raw_parts(arg as *const u8, size);
    with(|rt| {
        if rt.legacy_args.len() < offset + size {
            rt.legacy_args.resize(offset + size, 0);
        }
        rt.legacy_args[offset..offset + size].copy_from_slice(src);
        SUCCESS
    })
}

#[no_mangle]
pub extern "C" fn cudaLaunch(func: *const c_void) -> CudaError {
    with(|rt| {
        let Some(cc) = rt.configs.pop() else {
            return rt.fail(ERR_MISSING_CONFIGURATION);
        };
        let mut params = std::mem::take(&mut rt.legacy_args);
        rt.launch(func as usize, cc, &mut params)
    })
}

#[no_mangle]
pub extern "C" fn __cudaPushCallConfiguration(
    grid: Dim3C,
    block: Dim3C,
    shared: usize,
    _stream: *mut c_void,
) -> c_uint {
    with(|rt| {
        rt.configs.push(CallConfig {
            grid: grid.into(),
            block: block.into(),
            shared: shared as u32,
        })
    });
    0
}

#[no_mangle]
pub unsafe extern "C" fn __cudaPopCallConfiguration(
    grid: *mut Dim3C,
    block: *mut Dim3C,
    shared: *mut usize,
    stream: *mut *mut c_void,
) -> CudaError {
    with(|rt| match rt.configs.pop() {
        Some(cc) => {
            *grid = Dim3C {
                x: cc.grid.x,
                y: cc.grid.y,
                z: cc.grid.z,
            };
            *block = Dim3C {
                x: cc.block.x,
                y: cc.block.y,
                z: cc.block.z,
            };
            *shared = cc.shared as usize;
            if !stream.is_null() {
                *stream = std::ptr::null_mut();
            }
            SUCCESS
        }
        None => rt.fail(ERR_MISSING_CONFIGURATION),
    })
}

/// The new launch API: `args[i]` points at the value of the kernel's parameter `i`; sizes and
/// offsets come from the PTX `.entry` parameter list.
#[no_mangle]
pub unsafe extern "C" fn cudaLaunchKernel(
    func: *const c_void,
    grid: Dim3C,
    block: Dim3C,
    args: *mut *mut c_void,
    shared: usize,
    _stream: *mut c_void,
) -> CudaError {
    with(|rt| {
        let Some((module, name)) = rt.kernel(func as usize) else {
            return rt.fail(ERR_INVALID_DEVICE_FUNCTION);
        };
        let layout: Vec<(usize, usize)> = match rt
            .gpu
            .module(module)
            .and_then(|m| m.kernel(&name).map(|k| (m, k)))
        {
            Some((m, k)) => k
                .params
                .iter()
                .map(|&s| {
                    let sym = &m.symbols[s as usize];
                    (sym.offset as usize, sym.size as usize)
                })
                .collect(),
            None => return rt.fail(ERR_INVALID_DEVICE_FUNCTION),
        };
        let mut params = Vec::new();
        for (i, (off, size)) in layout.into_iter().enumerate() {
            if params.len() < off + size {
                params.resize(off + size, 0);
            }
            let src = std::slice::from_raw_parts(*args.add(i) as *const u8, size);
            params[off..off + size].copy_from_slice(src);
        }
        let cc = CallConfig {
            grid: grid.into(),
            block: block.into(),
            shared: shared as u32,
        };
        rt.launch(func as usize, cc, &mut params)
    })
}

// ---------------------------------------------------------------- memory

#[no_mangle]
pub unsafe extern "C" fn cudaMalloc(ptr: *mut *mut c_void, size: usize) -> CudaError {
    with(|rt| match rt.gpu.alloc(size as u64) {
        Ok(p) => {
            *ptr = p.0 as *mut c_void;
            SUCCESS
        }
        Err(_) => rt.fail(ERR_MEMORY_ALLOCATION),
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaMallocPitch(
    ptr: *mut *mut c_void,
    pitch: *mut usize,
    width: usize,
    height: usize,
) -> CudaError {
    let p = width.div_ceil(256) * 256;
    *pitch = p;
    cudaMalloc(ptr, p * height)
}

#[no_mangle]
pub extern "C" fn cudaFree(ptr: *mut c_void) -> CudaError {
    if ptr.is_null() {
        return SUCCESS;
    }
    with(|rt| match rt.gpu.free(DevPtr(ptr as u64)) {
        Ok(()) => SUCCESS,
        Err(_) => rt.fail(ERR_INVALID_DEVICE_POINTER),
    })
}

extern "C" {
    fn malloc(size: usize) -> *mut c_void;
    fn free(ptr: *mut c_void);
}

#[no_mangle]
pub unsafe extern "C" fn cudaMallocHost(ptr: *mut *mut c_void, size: usize) -> CudaError {
    let p = malloc(size.max(1));
    if p.is_null() {
        return with(|rt| rt.fail(ERR_MEMORY_ALLOCATION));
    }
    *ptr = p;
    with(|rt| rt.host_allocs.insert(p as usize, size));
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn cudaHostAlloc(
    ptr: *mut *mut c_void,
    size: usize,
    _flags: c_uint,
) -> CudaError {
    cudaMallocHost(ptr, size)
}

#[no_mangle]
pub unsafe extern "C" fn cudaFreeHost(ptr: *mut c_void) -> CudaError {
    if with(|rt| rt.host_allocs.remove(&(ptr as usize))).is_some() {
        free(ptr);
        SUCCESS
    } else {
        with(|rt| rt.fail(ERR_INVALID_VALUE))
    }
}

/// Is `p` a device address (inside or at the end of a device allocation)?
fn is_device(rt: &Runtime, p: usize) -> bool {
    rt.gpu.allocation_of(p as u64).is_some()
}

unsafe fn memcpy_impl(
    rt: &mut Runtime,
    dst: *mut c_void,
    src: *const c_void,
    n: usize,
    kind: c_int,
) -> CudaError {
    if n == 0 {
        return SUCCESS;
    }
    let kind = if kind == 4 {
        match (is_device(rt, dst as usize), is_device(rt, src as usize)) {
            (false, false) => 0,
            (true, false) => 1,
            (false, true) => 2,
            (true, true) => 3,
        }
    } else {
        kind
    };
    let r = match kind {
        0 => {
            std::ptr::copy(src as *const u8, dst as *mut u8, n);
            Ok(())
        }
        1 => rt.gpu.write_bytes(
            DevPtr(dst as u64),
            std::slice::from_raw_parts(src as *const u8, n),
        ),
        2 => rt.gpu.read_bytes(
            DevPtr(src as u64),
            std::slice::from_raw_parts_mut(dst as *mut u8, n),
        ),
        3 => rt.gpu.copy_bytes(DevPtr(dst as u64), DevPtr(src as u64), n),
        _ => return rt.fail(ERR_INVALID_MEMCPY_DIRECTION),
    };
    match r {
        Ok(()) => SUCCESS,
        Err(e) => {
            eprintln!("warpforge: cudaMemcpy: {e}");
            rt.fail(ERR_INVALID_VALUE)
        }
    }
}

#[no_mangle]
pub unsafe extern "C" fn cudaMemcpy(
    dst: *mut c_void,
    src: *const c_void,
    n: usize,
    kind: c_int,
) -> CudaError {
    with(|rt| memcpy_impl(rt, dst, src, n, kind))
}

#[no_mangle]
pub unsafe extern "C" fn cudaMemcpyAsync(
    dst: *mut c_void,
    src: *const c_void,
    n: usize,
    kind: c_int,
    _s: *mut c_void,
) -> CudaError {
    cudaMemcpy(dst, src, n, kind)
}

#[no_mangle]
pub unsafe extern "C" fn cudaMemcpy2D(
    dst: *mut c_void,
    dpitch: usize,
    src: *const c_void,
    spitch: usize,
    width: usize,
    height: usize,
    kind: c_int,
) -> CudaError {
    with(|rt| {
        for row in 0..height {
            let r = memcpy_impl(
                rt,
                (dst as *mut u8).wrapping_add(row * dpitch) as *mut c_void,
                (src as *const u8).wrapping_add(row * spitch) as *const c_void,
                width,
                kind,
            );
            if r != SUCCESS {
                return r;
            }
        }
        SUCCESS
    })
}

#[no_mangle]
pub extern "C" fn cudaMemset(ptr: *mut c_void, value: c_int, n: usize) -> CudaError {
    with(
        |rt| match rt.gpu.fill_bytes(DevPtr(ptr as u64), n, value as u8) {
            Ok(()) => SUCCESS,
            Err(e) => {
                eprintln!("warpforge: cudaMemset: {e}");
                rt.fail(ERR_INVALID_VALUE)
            }
        },
    )
}

#[no_mangle]
pub extern "C" fn cudaMemsetAsync(
    ptr: *mut c_void,
    value: c_int,
    n: usize,
    _s: *mut c_void,
) -> CudaError {
    cudaMemset(ptr, value, n)
}

/// Where the variable with host shadow `symbol` lives, and its size.
fn symbol_of(
    rt: &Runtime,
    symbol: *const c_void,
) -> Option<(warpforge_model::host::ModuleId, SymbolPlace, u64)> {
    let v = rt.vars.get(&(symbol as usize))?;
    let (place, size) = rt.gpu.symbol(v.module, &v.name)?;
    Some((v.module, place, size))
}

/// The variable with host shadow `symbol` for an access of `n` bytes at `offset`: its module
/// and place, or the CUDA error (unknown symbol, access past its end).
fn symbol_range(
    rt: &Runtime,
    symbol: *const c_void,
    n: usize,
    offset: usize,
) -> Result<(warpforge_model::host::ModuleId, SymbolPlace), CudaError> {
    let Some((module, place, size)) = symbol_of(rt, symbol) else {
        return Err(ERR_INVALID_SYMBOL);
    };
    if offset as u64 + n as u64 > size {
        return Err(ERR_INVALID_VALUE);
    }
    Ok((module, place))
}

#[no_mangle]
pub unsafe extern "C" fn cudaMemcpyToSymbol(
    symbol: *const c_void,
    src: *const c_void,
    n: usize,
    offset: usize,
    kind: c_int,
) -> CudaError {
    with(|rt| {
        let (module, place) = match symbol_range(rt, symbol, n, offset) {
            Ok(r) => r,
            Err(e) => return rt.fail(e),
        };
        let mut data = vec![0u8; n];
        match kind {
            1 | 4 if !is_device(rt, src as usize) => {
                std::ptr::copy_nonoverlapping(src as *const u8, data.as_mut_ptr(), n)
            }
            3 | 4 => {
                if rt.gpu.read_bytes(DevPtr(src as u64), &mut data).is_err() {
                    return rt.fail(ERR_INVALID_VALUE);
                }
            }
            _ => return rt.fail(ERR_INVALID_MEMCPY_DIRECTION),
        }
        let r = match place {
            SymbolPlace::Global(p) => rt.gpu.write_bytes(p.offset(offset as u64), &data),
            SymbolPlace::Const(o) => rt.gpu.write_const(module, o + offset as u64, &data),
        };
        match r {
            Ok(()) => SUCCESS,
            Err(_) => rt.fail(ERR_INVALID_VALUE),
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaMemcpyFromSymbol(
    dst: *mut c_void,
    symbol: *const c_void,
    n: usize,
    offset: usize,
    kind: c_int,
) -> CudaError {
    with(|rt| {
        let (module, place) = match symbol_range(rt, symbol, n, offset) {
            Ok(r) => r,
            Err(e) => return rt.fail(e),
        };
        let mut data = vec![0u8; n];
        let r = match place {
            SymbolPlace::Global(p) => rt.gpu.read_bytes(p.offset(offset as u64), &mut data),
            SymbolPlace::Const(o) => rt.gpu.read_const(module, o + offset as u64, &mut data),
        };
        if r.is_err() {
            return rt.fail(ERR_INVALID_VALUE);
        }
        match kind {
            2 | 4 if !is_device(rt, dst as usize) => {
                std::ptr::copy_nonoverlapping(data.as_ptr(), dst as *mut u8, n);
                SUCCESS
            }
            3 | 4 => match rt.gpu.write_bytes(DevPtr(dst as u64), &data) {
                Ok(()) => SUCCESS,
                Err(_) => rt.fail(ERR_INVALID_VALUE),
            },
            _ => rt.fail(ERR_INVALID_MEMCPY_DIRECTION),
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaMemcpyToSymbolAsync(
    symbol: *const c_void,
    src: *const c_void,
    n: usize,
    offset: usize,
    kind: c_int,
    _s: *mut c_void,
) -> CudaError {
    cudaMemcpyToSymbol(symbol, src, n, offset, kind)
}

#[no_mangle]
pub unsafe extern "C" fn cudaMemcpyFromSymbolAsync(
    dst: *mut c_void,
    symbol: *const c_void,
    n: usize,
    offset: usize,
    kind: c_int,
    _s: *mut c_void,
) -> CudaError {
    cudaMemcpyFromSymbol(dst, symbol, n, offset, kind)
}

#[no_mangle]
pub unsafe extern "C" fn cudaGetSymbolAddress(
    ptr: *mut *mut c_void,
    symbol: *const c_void,
) -> CudaError {
    with(|rt| match symbol_of(rt, symbol) {
        Some((_, SymbolPlace::Global(p), _)) => {
            *ptr = p.0 as *mut c_void;
            SUCCESS
        }
        // A __constant__ variable has no generic address in the model.
        Some((_, SymbolPlace::Const(_), _)) => rt.fail(ERR_NOT_SUPPORTED),
        None => rt.fail(ERR_INVALID_SYMBOL),
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaGetSymbolSize(size: *mut usize, symbol: *const c_void) -> CudaError {
    with(|rt| match symbol_of(rt, symbol) {
        Some((_, _, s)) => {
            *size = s as usize;
            SUCCESS
        }
        None => rt.fail(ERR_INVALID_SYMBOL),
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaMemGetInfo(free_bytes: *mut usize, total: *mut usize) -> CudaError {
    let cap = warpforge_model::exec::memory::DEFAULT_CAPACITY as usize;
    // The capacity limit counts mapped pages.
    let used = with(|rt| rt.gpu.mapped_bytes()) as usize;
    *free_bytes = cap.saturating_sub(used);
    *total = cap;
    SUCCESS
}

// ---------------------------------------------------------------- device

#[no_mangle]
pub unsafe extern "C" fn cudaGetDeviceCount(count: *mut c_int) -> CudaError {
    *count = 1;
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn cudaGetDevice(dev: *mut c_int) -> CudaError {
    *dev = 0;
    SUCCESS
}

#[no_mangle]
pub extern "C" fn cudaSetDevice(dev: c_int) -> CudaError {
    if dev == 0 {
        SUCCESS
    } else {
        with(|rt| rt.fail(ERR_INVALID_DEVICE))
    }
}

#[no_mangle]
pub extern "C" fn cudaSetDeviceFlags(_flags: c_uint) -> CudaError {
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn cudaChooseDevice(dev: *mut c_int, _prop: *const c_void) -> CudaError {
    *dev = 0;
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn cudaGetDeviceProperties(
    p: *mut props::CudaDeviceProp,
    dev: c_int,
) -> CudaError {
    if dev != 0 {
        return with(|rt| rt.fail(ERR_INVALID_DEVICE));
    }
    with(|rt| props::fill(rt.gpu.config(), &mut *p));
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn cudaDeviceGetAttribute(
    value: *mut c_int,
    attr: c_int,
    dev: c_int,
) -> CudaError {
    with(|rt| {
        if dev != 0 {
            return rt.fail(ERR_INVALID_DEVICE);
        }
        match props::attribute(rt.gpu.config(), attr) {
            Some(v) => {
                *value = v;
                SUCCESS
            }
            None => rt.fail(ERR_INVALID_VALUE),
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaFuncGetAttributes(
    attr: *mut c_void,
    func: *const c_void,
) -> CudaError {
    #[repr(C)]
    struct FuncAttributes {
        shared_size_bytes: usize,
        const_size_bytes: usize,
        local_size_bytes: usize,
        max_threads_per_block: c_int,
        num_regs: c_int,
        ptx_version: c_int,
        binary_version: c_int,
        cache_mode_ca: c_int,
        max_dynamic_shared_size_bytes: c_int,
        preferred_shmem_carveout: c_int,
    }
    with(|rt| {
        let Some((module, name)) = rt.kernel(func as usize) else {
            return rt.fail(ERR_INVALID_DEVICE_FUNCTION);
        };
        let m = rt.gpu.module(module).expect("registered module");
        let k = m.kernel(&name).expect("registered kernel");
        *(attr as *mut FuncAttributes) = FuncAttributes {
            shared_size_bytes: k.shared_bytes as usize,
            const_size_bytes: m.const_bytes as usize,
            local_size_bytes: k.local_bytes as usize,
            max_threads_per_block: 1024,
            num_regs: k.regs_per_thread as c_int,
            ptx_version: 70,
            binary_version: 70,
            cache_mode_ca: 0,
            max_dynamic_shared_size_bytes: 48 << 10,
            preferred_shmem_carveout: -1,
        };
        SUCCESS
    })
}

#[no_mangle]
pub extern "C" fn cudaFuncSetCacheConfig(_func: *const c_void, _c: c_int) -> CudaError {
    SUCCESS
}

#[no_mangle]
pub extern "C" fn cudaDeviceSetCacheConfig(_c: c_int) -> CudaError {
    SUCCESS
}

#[no_mangle]
pub extern "C" fn cudaDeviceSetSharedMemConfig(_c: c_int) -> CudaError {
    SUCCESS
}

/// Launches run to completion when made: synchronisation has nothing to wait for.
#[no_mangle]
pub extern "C" fn cudaDeviceSynchronize() -> CudaError {
    with(|rt| rt.last_error)
}

/// `cudaLimitPrintfFifoSize` (1) sizes the printf buffer (bytes of output kept per launch);
/// the stack and heap limits (0, 2) are accepted and have no effect (the model sizes local
/// memory from the PTX and has no device heap).
#[no_mangle]
pub extern "C" fn cudaDeviceSetLimit(limit: c_int, value: usize) -> CudaError {
    with(|rt| match limit {
        1 => {
            rt.gpu.set_printf_limit(value);
            SUCCESS
        }
        0 | 2 => SUCCESS,
        _ => rt.fail(ERR_INVALID_VALUE),
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaDeviceGetLimit(value: *mut usize, limit: c_int) -> CudaError {
    with(|rt| {
        let v = match limit {
            0 => 16 * 1024,
            1 => rt.gpu.printf_limit(),
            2 => 8 << 20,
            _ => return rt.fail(ERR_INVALID_VALUE),
        };
        if !value.is_null() {
            *value = v;
        }
        SUCCESS
    })
}

#[no_mangle]
pub extern "C" fn cudaThreadSynchronize() -> CudaError {
    cudaDeviceSynchronize()
}

/// Keeps the GPU (and its statistics): device memory stays allocated.
#[no_mangle]
pub extern "C" fn cudaDeviceReset() -> CudaError {
    SUCCESS
}

#[no_mangle]
pub extern "C" fn cudaThreadExit() -> CudaError {
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn cudaDriverGetVersion(v: *mut c_int) -> CudaError {
    *v = 10010;
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn cudaRuntimeGetVersion(v: *mut c_int) -> CudaError {
    *v = 10010;
    SUCCESS
}

#[no_mangle]
pub extern "C" fn cudaProfilerStart() -> CudaError {
    SUCCESS
}

#[no_mangle]
pub extern "C" fn cudaProfilerStop() -> CudaError {
    SUCCESS
}

// ---------------------------------------------------------------- errors

#[no_mangle]
pub extern "C" fn cudaGetLastError() -> CudaError {
    with(|rt| std::mem::replace(&mut rt.last_error, SUCCESS))
}

#[no_mangle]
pub extern "C" fn cudaPeekAtLastError() -> CudaError {
    with(|rt| rt.last_error)
}

fn error_text(e: CudaError) -> (&'static CStr, &'static CStr) {
    match e {
        0 => (c"cudaSuccess", c"no error"),
        1 => (c"cudaErrorInvalidValue", c"invalid argument"),
        2 => (c"cudaErrorMemoryAllocation", c"out of memory"),
        3 => (c"cudaErrorInitializationError", c"initialization error"),
        9 => (
            c"cudaErrorInvalidConfiguration",
            c"invalid configuration argument",
        ),
        13 => (c"cudaErrorInvalidSymbol", c"invalid device symbol"),
        17 => (c"cudaErrorInvalidDevicePointer", c"invalid device pointer"),
        18 => (c"cudaErrorInvalidTexture", c"invalid texture reference"),
        21 => (
            c"cudaErrorInvalidMemcpyDirection",
            c"invalid copy direction for memcpy",
        ),
        52 => (
            c"cudaErrorMissingConfiguration",
            c"__global__ function call is not configured",
        ),
        98 => (
            c"cudaErrorInvalidDeviceFunction",
            c"invalid device function",
        ),
        100 => (c"cudaErrorNoDevice", c"no CUDA-capable device is detected"),
        101 => (c"cudaErrorInvalidDevice", c"invalid device ordinal"),
        209 => (
            c"cudaErrorNoKernelImageForDevice",
            c"no kernel image is available for execution on the device",
        ),
        218 => (c"cudaErrorInvalidPtx", c"a PTX JIT compilation failed"),
        400 => (
            c"cudaErrorInvalidResourceHandle",
            c"invalid resource handle",
        ),
        600 => (c"cudaErrorNotReady", c"device not ready"),
        700 => (
            c"cudaErrorIllegalAddress",
            c"an illegal memory access was encountered",
        ),
        701 => (
            c"cudaErrorLaunchOutOfResources",
            c"too many resources requested for launch",
        ),
        719 => (c"cudaErrorLaunchFailure", c"unspecified launch failure"),
        801 => (c"cudaErrorNotSupported", c"operation not supported"),
        _ => (c"cudaErrorUnknown", c"unknown error"),
    }
}

#[no_mangle]
pub extern "C" fn cudaGetErrorString(e: CudaError) -> *const c_char {
    error_text(e).1.as_ptr()
}

#[no_mangle]
pub extern "C" fn cudaGetErrorName(e: CudaError) -> *const c_char {
    error_text(e).0.as_ptr()
}

// ---------------------------------------------------------------- streams and events

/// Streams are in order with every other stream: one handle value stands for all of them.
#[no_mangle]
pub unsafe extern "C" fn cudaStreamCreate(s: *mut *mut c_void) -> CudaError {
    *s = Box::into_raw(Box::new(0u8)) as *mut c_void;
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn cudaStreamCreateWithFlags(
    s: *mut *mut c_void,
    _flags: c_uint,
) -> CudaError {
    cudaStreamCreate(s)
}

#[no_mangle]
pub unsafe extern "C" fn cudaStreamDestroy(s: *mut c_void) -> CudaError {
    if !s.is_null() {
        drop(Box::from_raw(s as *mut u8));
    }
    SUCCESS
}

#[no_mangle]
pub extern "C" fn cudaStreamSynchronize(_s: *mut c_void) -> CudaError {
    cudaDeviceSynchronize()
}

#[no_mangle]
pub extern "C" fn cudaStreamQuery(_s: *mut c_void) -> CudaError {
    SUCCESS
}

#[no_mangle]
pub extern "C" fn cudaStreamWaitEvent(
    _s: *mut c_void,
    _e: *mut c_void,
    _flags: c_uint,
) -> CudaError {
    SUCCESS
}

/// An event: the simulated time (ns) at which it was recorded.
struct Event {
    at_ns: Option<f64>,
}

#[no_mangle]
pub unsafe extern "C" fn cudaEventCreate(e: *mut *mut c_void) -> CudaError {
    *e = Box::into_raw(Box::new(Event { at_ns: None })) as *mut c_void;
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn cudaEventCreateWithFlags(
    e: *mut *mut c_void,
    _flags: c_uint,
) -> CudaError {
    cudaEventCreate(e)
}

#[no_mangle]
pub unsafe extern "C" fn cudaEventDestroy(e: *mut c_void) -> CudaError {
    if e.is_null() {
        return with(|rt| rt.fail(ERR_INVALID_RESOURCE_HANDLE));
    }
    drop(Box::from_raw(e as *mut Event));
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn cudaEventRecord(e: *mut c_void, _s: *mut c_void) -> CudaError {
    if e.is_null() {
        return with(|rt| rt.fail(ERR_INVALID_RESOURCE_HANDLE));
    }
    (*(e as *mut Event)).at_ns = Some(with(|rt| rt.gpu.now_ns()));
    SUCCESS
}

#[no_mangle]
pub extern "C" fn cudaEventSynchronize(_e: *mut c_void) -> CudaError {
    SUCCESS
}

#[no_mangle]
pub extern "C" fn cudaEventQuery(_e: *mut c_void) -> CudaError {
    SUCCESS
}

/// Milliseconds of simulated time between two recorded events.
#[no_mangle]
pub unsafe extern "C" fn cudaEventElapsedTime(
    ms: *mut f32,
    start: *mut c_void,
    end: *mut c_void,
) -> CudaError {
    if start.is_null() || end.is_null() {
        return with(|rt| rt.fail(ERR_INVALID_RESOURCE_HANDLE));
    }
    match ((*(start as *mut Event)).at_ns, (*(end as *mut Event)).at_ns) {
        (Some(a), Some(b)) => {
            *ms = ((b - a) / 1e6) as f32;
            SUCCESS
        }
        _ => with(|rt| rt.fail(ERR_INVALID_RESOURCE_HANDLE)),
    }
}
