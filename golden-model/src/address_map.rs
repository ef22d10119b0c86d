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
