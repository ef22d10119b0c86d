//! The simulated GPU's address map: one 64-bit generic address space shared by the host API,
//! the functional model and the timing model.
//!
//! Global memory allocations start well above zero so that null and small garbage pointers
//! fault. Shared and local memory are separate state spaces addressed from 0; generic
//! addresses reach them through fixed windows (what `cvta` converts to and from).

/// First byte of device (global) memory handed out by the allocator.
pub const GLOBAL_BASE: u64 = 0x1000_0000;
/// Alignment of every device allocation (and of module-scope .global images).
pub const ALLOC_ALIGN: u64 = 256;
/// Device memory is mapped, and backed by host memory, in pages of this many bytes (64 KiB,
/// the small page of NVIDIA GPUs since Pascal): an allocation maps every page it overlaps, a
/// page is backed (zero-filled) the first time it is written. See `exec::memory`.
pub const DEVICE_PAGE_BYTES: u64 = 1 << 16;
/// The page just below [`GLOBAL_BASE`] is mapped for the whole life of the GPU and belongs
/// to no allocation: the context's own memory (on a real GPU the driver's heap, printf
/// buffer and module data lie below the first `cudaMalloc`). A read a little before the
/// first buffer lands there, as on a real GPU (outside `--strict-bounds`).
pub const CONTEXT_PAGE: u64 = GLOBAL_BASE - DEVICE_PAGE_BYTES;
/// Generic-address window onto the executing CTA's shared memory.
pub const SHARED_WINDOW: u64 = 0x7f00_0000_0000;
/// Generic-address window onto the executing thread's local memory.
pub const LOCAL_WINDOW: u64 = 0x7e00_0000_0000;
/// Size of each window (larger than any shared or local segment).
pub const WINDOW_SIZE: u64 = 0x0100_0000_0000;

/// Which state space a generic address falls into, with the space-relative offset.
pub fn classify_generic(addr: u64) -> (crate::ptx::ir::StateSpace, u64) {
    use crate::ptx::ir::StateSpace;
    if (SHARED_WINDOW..SHARED_WINDOW + WINDOW_SIZE).contains(&addr) {
        (StateSpace::Shared, addr - SHARED_WINDOW)
    } else if (LOCAL_WINDOW..LOCAL_WINDOW + WINDOW_SIZE).contains(&addr) {
        (StateSpace::Local, addr - LOCAL_WINDOW)
    } else {
        (StateSpace::Global, addr)
    }
}
