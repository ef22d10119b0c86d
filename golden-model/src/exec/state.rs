//! Architectural state of a launch, a CTA and a warp.

use super::WARP_SIZE;
use crate::host::Dim3;
use crate::ptx::ir::Kernel;

/// Everything fixed for one kernel launch.
#[derive(Debug, Clone)]
pub struct LaunchInfo {
    pub grid: Dim3,
    pub block: Dim3,
    /// The param buffer (kernel arguments laid out at their `.param` offsets).
    pub params: Vec<u8>,
    /// The module's `.const` bank image.
    pub consts: Vec<u8>,
    /// Device address of the module's `.global` variable image.
    pub global_base: u64,
    /// Static + dynamic shared bytes per CTA.
    pub shared_bytes: u64,
    /// Local bytes per thread.
    pub local_bytes: u64,
    /// Warps per CTA.
    pub warps_per_cta: u32,
}

impl LaunchInfo {
    pub fn threads_per_cta(&self) -> u32 {
        self.block.count() as u32
    }
}

/// One CTA's state: its index and its shared memory.
#[derive(Debug, Clone)]
pub struct CtaState {
    pub ctaid: [u32; 3],
    /// Row-major linear index of the CTA in the grid.
    pub linear_id: u32,
    pub shared: Vec<u8>,
}

impl CtaState {
    pub fn new(launch: &LaunchInfo, linear_id: u32) -> CtaState {
        let g = launch.grid;
        let x = linear_id % g.x;
        let y = (linear_id / g.x) % g.y;
        let z = linear_id / (g.x * g.y);
        CtaState {
            ctaid: [x, y, z],
            linear_id,
            shared: vec![0; launch.shared_bytes as usize],
        }
    }
}

/// One warp's registers and local memory.
#[derive(Debug, Clone)]
pub struct WarpState {
    /// `num_regs * WARP_SIZE` raw register values, register-major: `regs[r * 32 + lane]`.
    pub regs: Vec<u64>,
    /// `local_bytes * WARP_SIZE`, lane-major: lane `l`'s frame is
    /// `local[l * local_bytes .. (l + 1) * local_bytes]`.
    pub local: Vec<u8>,
    pub local_bytes: u64,
    /// Thread index within the CTA of each lane.
    pub tid: [[u32; 3]; WARP_SIZE],
    /// Lanes that hold a thread (the last warp of a CTA may be partial).
    pub valid_lanes: u32,
    /// Warp index inside its CTA, and its global id within the launch.
    pub warp_in_cta: u32,
    pub global_warp_id: u32,
    /// `vprintf` calls the warp has executed (orders its printf records).
    pub printf_calls: u32,
}

impl WarpState {
    pub fn new(
        kernel: &Kernel,
        launch: &LaunchInfo,
        cta: &CtaState,
        warp_in_cta: u32,
    ) -> WarpState {
        let mut w = WarpState::empty();
        w.reinit(kernel, launch, cta, warp_in_cta);
        w
    }

    /// A state holding no thread and no storage (a free warp slot).
    pub fn empty() -> WarpState {
        WarpState {
            regs: Vec::new(),
            local: Vec::new(),
            local_bytes: 0,
            tid: [[0; 3]; WARP_SIZE],
            valid_lanes: 0,
            warp_in_cta: 0,
            global_warp_id: 0,
            printf_calls: 0,
        }
    }

    /// Make this the fresh state of warp `warp_in_cta` of `cta`: registers and local memory
    /// zeroed (their storage is reused: the timing model reinitialises a warp slot for
    /// every CTA it hosts, and allocating per warp showed in its profile).
    pub fn reinit(
        &mut self,
        kernel: &Kernel,
        launch: &LaunchInfo,
        cta: &CtaState,
        warp_in_cta: u32,
    ) {
        let b = launch.block;
        let threads = launch.threads_per_cta();
        let mut valid_lanes = 0u32;
        for (lane, t) in self.tid.iter_mut().enumerate() {
            let linear = warp_in_cta * WARP_SIZE as u32 + lane as u32;
            *t = if linear < threads {
                valid_lanes |= 1 << lane;
                [linear % b.x, (linear / b.x) % b.y, linear / (b.x * b.y)]
            } else {
                [0; 3]
            };
        }
        self.regs.clear();
        self.regs.resize(kernel.num_regs as usize * WARP_SIZE, 0);
        self.local.clear();
        self.local
            .resize(launch.local_bytes as usize * WARP_SIZE, 0);
        self.local_bytes = launch.local_bytes;
        self.valid_lanes = valid_lanes;
        self.warp_in_cta = warp_in_cta;
        self.global_warp_id = cta.linear_id * launch.warps_per_cta + warp_in_cta;
        self.printf_calls = 0;
    }

    #[inline]
    pub fn reg(&self, r: u16, lane: usize) -> u64 {
        self.regs[r as usize * WARP_SIZE + lane]
    }
    #[inline]
    pub fn set_reg(&mut self, r: u16, lane: usize, v: u64) {
        self.regs[r as usize * WARP_SIZE + lane] = v;
    }
}
