//! The host-side API a workload (or a launch file) uses to drive the simulated GPU: a tiny
//! CUDA-runtime-like interface. `Gpu` implements it; workloads are written against the
//! trait so they run unchanged in functional and timing mode.

use crate::error::SimError;

/// A device (global memory) address returned by [`Host::alloc`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DevPtr(pub u64);

impl DevPtr {
    /// The address `bytes` past this one.
    pub fn offset(self, bytes: u64) -> DevPtr {
        DevPtr(self.0 + bytes)
    }
}

/// Grid or block dimensions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Dim3 {
    pub x: u32,
    pub y: u32,
    pub z: u32,
}

impl Dim3 {
    pub const fn new(x: u32, y: u32, z: u32) -> Dim3 {
        Dim3 { x, y, z }
    }
    pub const fn x(x: u32) -> Dim3 {
        Dim3 { x, y: 1, z: 1 }
    }
    pub const fn xy(x: u32, y: u32) -> Dim3 {
        Dim3 { x, y, z: 1 }
    }
    /// Number of elements (threads or blocks), as u64 to avoid overflow.
    pub fn count(&self) -> u64 {
        self.x as u64 * self.y as u64 * self.z as u64
    }
}

/// A kernel argument, in `.param` declaration order.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum KernelArg {
    U8(u8),
    S8(i8),
    U16(u16),
    S16(i16),
    U32(u32),
    S32(i32),
    U64(u64),
    S64(i64),
    F32(f32),
    F64(f64),
    Ptr(DevPtr),
}

impl KernelArg {
    /// Little-endian bytes as they are placed in the param buffer.
    pub fn to_bytes(&self) -> Vec<u8> {
        match *self {
            KernelArg::U8(v) => vec![v],
            KernelArg::S8(v) => v.to_le_bytes().to_vec(),
            KernelArg::U16(v) => v.to_le_bytes().to_vec(),
            KernelArg::S16(v) => v.to_le_bytes().to_vec(),
            KernelArg::U32(v) => v.to_le_bytes().to_vec(),
            KernelArg::S32(v) => v.to_le_bytes().to_vec(),
            KernelArg::U64(v) => v.to_le_bytes().to_vec(),
            KernelArg::S64(v) => v.to_le_bytes().to_vec(),
            KernelArg::F32(v) => v.to_le_bytes().to_vec(),
            KernelArg::F64(v) => v.to_le_bytes().to_vec(),
            KernelArg::Ptr(p) => p.0.to_le_bytes().to_vec(),
        }
    }
    pub fn size_bytes(&self) -> u32 {
        match self {
            KernelArg::U8(_) | KernelArg::S8(_) => 1,
            KernelArg::U16(_) | KernelArg::S16(_) => 2,
            KernelArg::U32(_) | KernelArg::S32(_) | KernelArg::F32(_) => 4,
            _ => 8,
        }
    }
    /// Short type name used in error messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            KernelArg::U8(_) => "u8",
            KernelArg::S8(_) => "s8",
            KernelArg::U16(_) => "u16",
            KernelArg::S16(_) => "s16",
            KernelArg::U32(_) => "u32",
            KernelArg::S32(_) => "s32",
            KernelArg::U64(_) => "u64",
            KernelArg::S64(_) => "s64",
            KernelArg::F32(_) => "f32",
            KernelArg::F64(_) => "f64",
            KernelArg::Ptr(_) => "pointer",
        }
    }
}

/// Handle of a loaded PTX module.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ModuleId(pub usize);

/// What a workload needs from the GPU.
pub trait Host {
    /// Parse and load a PTX module. `file` names it in error messages.
    fn load_module(&mut self, file: &str, ptx: &str) -> Result<ModuleId, SimError>;
    /// Allocate zero-filled device memory.
    fn alloc(&mut self, bytes: u64) -> Result<DevPtr, SimError>;
    fn write_bytes(&mut self, dst: DevPtr, data: &[u8]) -> Result<(), SimError>;
    fn read_bytes(&mut self, src: DevPtr, out: &mut [u8]) -> Result<(), SimError>;
    /// Run a kernel to completion (functionally or cycle by cycle, as the GPU is configured).
    fn launch(
        &mut self,
        module: ModuleId,
        kernel: &str,
        grid: Dim3,
        block: Dim3,
        dynamic_shared_bytes: u32,
        args: &[KernelArg],
    ) -> Result<(), SimError>;

    // ---- typed conveniences (little-endian, as on the device) ----

    fn alloc_write_u32(&mut self, data: &[u32]) -> Result<DevPtr, SimError> {
        let p = self.alloc((data.len() as u64 * 4).max(4))?;
        self.write_u32(p, data)?;
        Ok(p)
    }
    fn alloc_write_i32(&mut self, data: &[i32]) -> Result<DevPtr, SimError> {
        let p = self.alloc((data.len() as u64 * 4).max(4))?;
        self.write_i32(p, data)?;
        Ok(p)
    }
    fn alloc_write_f32(&mut self, data: &[f32]) -> Result<DevPtr, SimError> {
        let p = self.alloc((data.len() as u64 * 4).max(4))?;
        self.write_f32(p, data)?;
        Ok(p)
    }
    fn write_u32(&mut self, dst: DevPtr, data: &[u32]) -> Result<(), SimError> {
        let bytes: Vec<u8> = data.iter().flat_map(|v| v.to_le_bytes()).collect();
        self.write_bytes(dst, &bytes)
    }
    fn write_i32(&mut self, dst: DevPtr, data: &[i32]) -> Result<(), SimError> {
        let bytes: Vec<u8> = data.iter().flat_map(|v| v.to_le_bytes()).collect();
        self.write_bytes(dst, &bytes)
    }
    fn write_f32(&mut self, dst: DevPtr, data: &[f32]) -> Result<(), SimError> {
        let bytes: Vec<u8> = data.iter().flat_map(|v| v.to_le_bytes()).collect();
        self.write_bytes(dst, &bytes)
    }
    fn read_u32(&mut self, src: DevPtr, n: usize) -> Result<Vec<u32>, SimError> {
        let mut b = vec![0u8; n * 4];
        self.read_bytes(src, &mut b)?;
        Ok(b.chunks_exact(4)
            .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
            .collect())
    }
    fn read_i32(&mut self, src: DevPtr, n: usize) -> Result<Vec<i32>, SimError> {
        let mut b = vec![0u8; n * 4];
        self.read_bytes(src, &mut b)?;
        Ok(b.chunks_exact(4)
            .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
            .collect())
    }
    fn read_f32(&mut self, src: DevPtr, n: usize) -> Result<Vec<f32>, SimError> {
        let mut b = vec![0u8; n * 4];
        self.read_bytes(src, &mut b)?;
        Ok(b.chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect())
    }
}
