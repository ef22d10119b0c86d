//! `cudaDeviceProp` (the layout of runtime/include/cuda_runtime.h) and device attributes,
//! filled from the GPU configuration.

use std::os::raw::{c_char, c_int};
use warpforge_model::config::GpuConfig;

/// Mirror of `struct cudaDeviceProp` in runtime/include/cuda_runtime.h (same field order).
#[repr(C)]
pub struct CudaDeviceProp {
    pub name: [c_char; 256],
    pub total_global_mem: usize,
    pub shared_mem_per_block: usize,
    pub regs_per_block: c_int,
    pub warp_size: c_int,
    pub mem_pitch: usize,
    pub max_threads_per_block: c_int,
    pub max_threads_dim: [c_int; 3],
    pub max_grid_size: [c_int; 3],
    pub clock_rate: c_int,
    pub total_const_mem: usize,
    pub major: c_int,
    pub minor: c_int,
    pub texture_alignment: usize,
    pub device_overlap: c_int,
    pub multi_processor_count: c_int,
    pub kernel_exec_timeout_enabled: c_int,
    pub integrated: c_int,
    pub can_map_host_memory: c_int,
    pub compute_mode: c_int,
    pub concurrent_kernels: c_int,
    pub ecc_enabled: c_int,
    pub pci_bus_id: c_int,
    pub pci_device_id: c_int,
    pub pci_domain_id: c_int,
    pub async_engine_count: c_int,
    pub unified_addressing: c_int,
    pub memory_clock_rate: c_int,
    pub memory_bus_width: c_int,
    pub l2_cache_size: c_int,
    pub max_threads_per_multi_processor: c_int,
    pub shared_mem_per_multiprocessor: usize,
    pub regs_per_multiprocessor: c_int,
    pub managed_memory: c_int,
    pub is_multi_gpu_board: c_int,
    pub multi_gpu_board_group_id: c_int,
    pub shared_mem_per_block_optin: usize,
}

/// Compute capability reported for a preset (the architecture it models).
pub fn compute_capability(cfg: &GpuConfig) -> (i32, i32) {
    match cfg.name.as_str() {
        n if n.contains("fx5800") => (1, 3),
        n if n.contains("gtx480") => (2, 0),
        _ => (2, 0),
    }
}

const TOTAL_GLOBAL_MEM: usize = warpforge_model::exec::memory::DEFAULT_CAPACITY as usize;
const TOTAL_CONST_MEM: usize = 64 << 10;

pub fn fill(cfg: &GpuConfig, p: &mut CudaDeviceProp) {
    // SAFETY: every field is a plain integer or array of them: all-zero is valid.
    *p = unsafe { std::mem::zeroed() };
    let name = format!("warpforge {} (simulated)", cfg.name);
    for (d, s) in p.name.iter_mut().zip(name.bytes().take(255)) {
        *d = s as c_char;
    }
    let (major, minor) = compute_capability(cfg);
    p.total_global_mem = TOTAL_GLOBAL_MEM;
    // CUDA's per-block limit without opt-in, or the whole SM's if smaller.
    p.shared_mem_per_block = (cfg.sm.shared_bytes as usize).min(48 << 10);
    p.regs_per_block = cfg.sm.registers.min(65536) as c_int;
    p.warp_size = 32;
    p.mem_pitch = i32::MAX as usize;
    p.max_threads_per_block = cfg.sm.max_threads.min(1024) as c_int;
    p.max_threads_dim = [1024, 1024, 64];
    p.max_grid_size = [i32::MAX, 65535, 65535];
    p.clock_rate = (cfg.clocks.core_mhz * 1000.0) as c_int;
    p.total_const_mem = TOTAL_CONST_MEM;
    p.major = major;
    p.minor = minor;
    p.texture_alignment = 512;
    p.device_overlap = 0;
    p.multi_processor_count = cfg.sm.count as c_int;
    p.compute_mode = 0;
    p.memory_clock_rate = (cfg.clocks.dram_mhz * 1000.0) as c_int;
    p.memory_bus_width = (cfg.dram.channels * cfg.dram.bytes_per_cycle * 8) as c_int;
    p.l2_cache_size = cfg.l2.size_bytes as c_int;
    p.max_threads_per_multi_processor = cfg.sm.max_threads as c_int;
    p.shared_mem_per_multiprocessor = cfg.sm.shared_bytes as usize;
    p.regs_per_multiprocessor = cfg.sm.registers as c_int;
    p.unified_addressing = 0;
    p.shared_mem_per_block_optin = cfg.sm.shared_bytes as usize;
}

/// `cudaDeviceGetAttribute`: the value of attribute `attr`, if known.
pub fn attribute(cfg: &GpuConfig, attr: i32) -> Option<i32> {
    let mut p: CudaDeviceProp = unsafe { std::mem::zeroed() };
    fill(cfg, &mut p);
    Some(match attr {
        1 => p.max_threads_per_block,
        2..=4 => p.max_threads_dim[(attr - 2) as usize],
        5..=7 => p.max_grid_size[(attr - 5) as usize],
        8 => p.shared_mem_per_block as i32,
        9 => p.total_const_mem as i32,
        10 => 32,
        11 => p.mem_pitch as i32,
        12 => p.regs_per_block,
        13 => p.clock_rate,
        14 => p.texture_alignment as i32,
        15 | 17..=19 | 20 | 32..=34 | 40 | 41 | 83 => 0,
        16 => p.multi_processor_count,
        31 => 0,
        36 => p.memory_clock_rate,
        37 => p.memory_bus_width,
        38 => p.l2_cache_size,
        39 => p.max_threads_per_multi_processor,
        75 => p.major,
        76 => p.minor,
        81 => p.shared_mem_per_multiprocessor as i32,
        82 => p.regs_per_multiprocessor,
        _ => return None,
    })
}
