//! The whole simulated GPU behind the [`Host`] API: loaded modules, device memory, the SMs
//! and the memory hierarchy, and the statistics of every launch.

pub mod functional;
pub mod launch;

use crate::address_map::ALLOC_ALIGN;
use crate::config::GpuConfig;
use crate::counters::Counters;
use crate::error::SimError;
use crate::exec::GlobalMemory;
use crate::hooks::{GpuHooks, NoHooks};
use crate::host::{DevPtr, Dim3, Host, KernelArg, ModuleId};
use crate::memory::MemoryHierarchy;
use crate::ptx::{self, ir::Module, ir::StateSpace};
use crate::stats::{KernelStats, MemFigures, SmStats};
use crate::timing::clock::{khz, Clocks};
use crate::timing::{self, decode::decode_kernel, sm::CtaFootprint, sm::KernelCtx, sm::Sm};
use crate::timing::{IntervalHook, TimingEnv};
use crate::units::contract::GpuUse;
use crate::units::host::UnitActivity;
use crate::units::trace::TraceRecorder;
use std::time::Instant;

/// Functional only, or cycle-level timing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Functional,
    Timing,
}

struct LoadedModule {
    module: Module,
    /// Device address of the module's `.global` image, and its `.const` bank.
    global_base: u64,
    consts: Vec<u8>,
}

/// Called during long launches with (kernel, unit, count so far): the unit is "cycles" in
/// timing mode and "warp instructions" in functional mode.
pub type ProgressFn = Box<dyn FnMut(&str, &'static str, u64) + Send>;

/// The GPU, with the hooks `H` of the units attached to its timing model (none by default;
/// see [`crate::hooks`]).
pub struct Gpu<H: GpuHooks = NoHooks> {
    cfg: GpuConfig,
    mode: Mode,
    global: GlobalMemory,
    modules: Vec<LoadedModule>,
    sms: Vec<Sm>,
    mem: Option<MemoryHierarchy>,
    /// The clock domains (timing mode; see `timing::clock`).
    clocks: Clocks,
    /// The named counters (timing mode; see `counters`).
    counters: Counters,
    /// The hooks of the attached units, lent to the timing loop of every launch.
    hooks: H,
    /// Called at every interval boundary after `hooks` (a DVFS controller given as a
    /// closure).
    interval_hook: Option<Box<dyn IntervalHook>>,
    /// Base tick at which the next launch starts (time runs on across launches).
    now: u64,
    /// Statistics of every launch, in order.
    pub launches: Vec<KernelStats>,
    progress: Option<ProgressFn>,
}

impl Gpu {
    /// A GPU with no unit attached to its hook points.
    pub fn new(cfg: GpuConfig, mode: Mode) -> Gpu {
        Gpu::with_hooks(cfg, mode, NoHooks)
    }
}

impl<H: GpuHooks> Gpu<H> {
    /// After a timing launch that ended early (a guest fault, the watchdog): everything the
    /// launch had in flight is dropped, so that the next launch starts clean: the SMs'
    /// pipelines, writebacks, memory instructions and resident blocks, and the memory
    /// hierarchy (caches start cold, queued requests are gone). Device memory, simulated
    /// time, the units' recorded traces and activity counters are kept.
    fn abandon_launch(&mut self) {
        for sm in &mut self.sms {
            sm.abandon_launch(&self.cfg);
        }
        self.mem = Some(MemoryHierarchy::new(&self.cfg));
    }

    /// A GPU whose timing model calls `hooks` at its hook points (see [`crate::hooks`]).
    pub fn with_hooks(cfg: GpuConfig, mode: Mode, hooks: H) -> Gpu<H> {
        let (sms, mem) = match mode {
            Mode::Timing => (
                (0..cfg.sm.count).map(|i| Sm::new(i, &cfg)).collect(),
                Some(MemoryHierarchy::new(&cfg)),
            ),
            Mode::Functional => (Vec::new(), None),
        };
        let clocks = Clocks::new(&cfg);
        let counters = match &mem {
            Some(m) => Counters::new(&sms, m, &clocks),
            None => Counters::default(),
        };
        Gpu {
            cfg,
            mode,
            global: GlobalMemory::new(),
            modules: Vec::new(),
            sms,
            mem,
            clocks,
            counters,
            hooks,
            interval_hook: None,
            now: 0,
            launches: Vec::new(),
            progress: None,
        }
    }

    pub fn config(&self) -> &GpuConfig {
        &self.cfg
    }
    /// The attached hooks (with what they gathered).
    pub fn hooks(&self) -> &H {
        &self.hooks
    }
    pub fn hooks_mut(&mut self) -> &mut H {
        &mut self.hooks
    }
    pub fn mode(&self) -> Mode {
        self.mode
    }
    pub fn set_progress(&mut self, f: ProgressFn) {
        self.progress = Some(f);
    }

    /// The clock domains (each SM's frequency and cycle count, the base clock).
    pub fn clocks(&self) -> &Clocks {
        &self.clocks
    }

    /// Set SM `sm`'s clock from the next launch on (to change it during a launch, use an
    /// interval hook). `mhz` must lie between 1 MHz and the base clock.
    pub fn set_sm_frequency(&mut self, sm: usize, mhz: f64) -> Result<(), String> {
        if !(mhz.is_finite() && mhz > 0.0) {
            return Err(format!("SM {sm}: {mhz} MHz is not a frequency"));
        }
        self.clocks.set_sm_khz(sm, khz(mhz))?;
        self.clocks.changed = false;
        if let Some(m) = self.mem.as_mut() {
            m.set_sm_clock(sm, self.clocks.sms[sm].khz);
        }
        Ok(())
    }

    /// Call `hook` at every interval boundary of every launch (`sim.interval_cycles` must be
    /// set): it reads the counters and may change SM clocks mid-kernel.
    pub fn set_interval_hook(&mut self, hook: Box<dyn IntervalHook>) {
        self.interval_hook = Some(hook);
    }

    /// The named counters: the values of the last launch, and the registry where owned
    /// counters are registered.
    pub fn counters(&mut self) -> &mut Counters {
        &mut self.counters
    }

    /// Record the port traffic of every instance of hardware unit `unit` from now on
    /// (timing mode only), for co-simulation against its RTL.
    pub fn record_unit(&mut self, unit: &str) -> Result<(), String> {
        let desc = crate::units::find(unit)?;
        if self.mode != Mode::Timing {
            return Err("unit traces are recorded by the timing model (drop --functional)".into());
        }
        match (desc.gpu)(&self.cfg) {
            GpuUse::Instantiated { .. } => {}
            GpuUse::NotUsed { set } => {
                return Err(format!(
                    "{unit} is not instantiated by the GPU model under this configuration: it needs --set {}",
                    set.join(" --set ")
                ))
            }
            GpuUse::Standalone => {
                return Err(format!("{unit} has no place in the GPU model (co-simulate it alone)"))
            }
        }
        for sm in &mut self.sms {
            sm.record_unit(desc, &self.cfg)?;
        }
        Ok(())
    }

    /// The activity counters of every unit the GPU model instantiates, summed over every
    /// instance of every SM (one entry per unit kind), since the GPU was built.
    pub fn unit_activity(&self) -> Vec<UnitActivity> {
        let mut all: Vec<UnitActivity> = Vec::new();
        for sm in &self.sms {
            for a in sm.unit_activity() {
                match all.iter_mut().find(|b| b.unit == a.unit) {
                    Some(b) => b.absorb(&a),
                    None => all.push(a),
                }
            }
        }
        all
    }

    /// The recorded traffic of every instance, all SMs together, one recorder per unit
    /// being recorded (recording stops).
    pub fn take_traces(&mut self) -> Vec<TraceRecorder> {
        let mut all: Vec<TraceRecorder> = Vec::new();
        for sm in &mut self.sms {
            for rec in sm.take_traces() {
                match all.iter_mut().find(|a| a.desc().name == rec.desc().name) {
                    Some(a) => a.absorb(rec),
                    None => all.push(rec),
                }
            }
        }
        all
    }

    /// The recorded traffic of the one unit being recorded (see [`Gpu::take_traces`]).
    pub fn take_trace(&mut self) -> Option<TraceRecorder> {
        self.take_traces().into_iter().next()
    }

    pub fn module(&self, id: ModuleId) -> Option<&Module> {
        self.modules.get(id.0).map(|m| &m.module)
    }
    /// Bytes of device memory allocated so far.
    pub fn allocated_bytes(&self) -> u64 {
        self.global.allocated_bytes()
    }

    /// Everything the kernels printed since the last call (device `printf`; see
    /// [`crate::exec::printf`]), in print order, with the count of records the full buffer
    /// dropped. The host prints it after each launch.
    pub fn take_printf(&mut self) -> crate::exec::printf::PrintfOutput {
        self.global.printf.take()
    }

    /// The size of the printf buffer in bytes (`cudaLimitPrintfFifoSize`, 1 MiB by default).
    pub fn printf_limit(&self) -> usize {
        self.global.printf.limit()
    }
    pub fn set_printf_limit(&mut self, bytes: usize) {
        self.global.printf.set_limit(bytes);
    }

    /// Bind `bytes` bytes of device memory at `base`, of element format `format`, to the
    /// texture whose handle is `handle` (a `.texref`'s device address; `cudaBindTexture`).
    /// The range must lie inside one allocation.
    pub fn bind_texture(
        &mut self,
        handle: u64,
        base: DevPtr,
        bytes: u64,
        format: crate::exec::builtins::TexFormat,
    ) -> Result<(), SimError> {
        let inside = |(start, size): (DevPtr, u64)| {
            base.0
                .checked_add(bytes)
                .is_some_and(|end| end <= start.0 + size)
        };
        if bytes > 0 && !self.global.allocation_of(base.0).is_some_and(inside) {
            return Err(SimError::HostMemory(format!(
                "texture binding of {bytes} bytes at {:#x}: not inside one device allocation",
                base.0
            )));
        }
        self.global.textures.bind(
            handle,
            crate::exec::builtins::TexBinding {
                base: base.0,
                bytes,
                format,
            },
        );
        Ok(())
    }

    /// Remove the binding of texture `handle` (`cudaUnbindTexture`); whether there was one.
    pub fn unbind_texture(&mut self, handle: u64) -> bool {
        self.global.textures.unbind(handle)
    }

    /// Bytes of device memory mapped (whole pages; what the capacity limit counts).
    pub fn mapped_bytes(&self) -> u64 {
        self.global.mapped_bytes()
    }
    /// Bytes of host memory backing device memory (the pages written so far).
    pub fn resident_bytes(&self) -> u64 {
        self.global.resident_bytes()
    }

    /// Strict bounds (`--strict-bounds`): every guest access outside a live allocation is a
    /// fault, as compute-sanitizer reports. By default only accesses outside mapped device
    /// memory fault, as on a real GPU (see [`crate::exec::memory`]).
    pub fn set_strict_bounds(&mut self, strict: bool) {
        self.global.set_strict(strict);
    }
    pub fn strict_bounds(&self) -> bool {
        self.global.strict()
    }

    /// cudaMemset: `len` bytes of value `v` at `dst`, inside one allocation.
    pub fn fill_bytes(&mut self, dst: DevPtr, len: usize, v: u8) -> Result<(), SimError> {
        self.global
            .fill(dst.0, len, v)
            .map_err(SimError::HostMemory)
    }

    /// Device-to-device copy (each side inside one allocation; overlap as memmove).
    pub fn copy_bytes(&mut self, dst: DevPtr, src: DevPtr, len: usize) -> Result<(), SimError> {
        self.global
            .copy(dst.0, src.0, len)
            .map_err(SimError::HostMemory)
    }
}

/// Where a module-scope variable lives (see [`Gpu::symbol`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SymbolPlace {
    /// A `.global` variable: its device address.
    Global(DevPtr),
    /// A `.const` variable: its byte offset in the module's constant bank.
    Const(u64),
}

impl<H: GpuHooks> Gpu<H> {
    /// A module-scope `.global` or `.const` variable of module `module` by name: where it
    /// lives and its size in bytes.
    pub fn symbol(&self, module: ModuleId, name: &str) -> Option<(SymbolPlace, u64)> {
        let lm = self.modules.get(module.0)?;
        lm.module
            .symbols
            .iter()
            .find(|s| s.name == name && matches!(s.space, StateSpace::Global | StateSpace::Const))
            .map(|s| match s.space {
                StateSpace::Global => (
                    SymbolPlace::Global(DevPtr(lm.global_base + s.offset)),
                    s.size,
                ),
                _ => (SymbolPlace::Const(s.offset), s.size),
            })
    }

    /// Write `data` at byte `offset` of module `module`'s constant bank (what the next
    /// launches of its kernels read; cudaMemcpyToSymbol on a `__constant__` variable).
    pub fn write_const(
        &mut self,
        module: ModuleId,
        offset: u64,
        data: &[u8],
    ) -> Result<(), SimError> {
        let bank = self.const_bank(module, offset, data.len())?;
        bank.copy_from_slice(data);
        Ok(())
    }

    /// Read `out.len()` bytes at byte `offset` of module `module`'s constant bank.
    pub fn read_const(
        &mut self,
        module: ModuleId,
        offset: u64,
        out: &mut [u8],
    ) -> Result<(), SimError> {
        let bank = self.const_bank(module, offset, out.len())?;
        out.copy_from_slice(bank);
        Ok(())
    }

    fn const_bank(
        &mut self,
        module: ModuleId,
        offset: u64,
        len: usize,
    ) -> Result<&mut [u8], SimError> {
        let lm = self
            .modules
            .get_mut(module.0)
            .ok_or_else(|| SimError::HostMemory(format!("unknown module handle {}", module.0)))?;
        let size = lm.consts.len() as u64;
        match offset.checked_add(len as u64) {
            Some(end) if end <= size => Ok(&mut lm.consts[offset as usize..end as usize]),
            _ => Err(SimError::HostMemory(format!(
                "{len} bytes at offset {offset} of the constant bank of {} ({size} bytes)",
                lm.module.file
            ))),
        }
    }

    /// Release the device allocation that starts at `ptr` (cudaFree): later accesses to it
    /// fault in strict mode, and in every mode where no live allocation shares its pages;
    /// later allocations may reuse its address space.
    pub fn free(&mut self, ptr: DevPtr) -> Result<(), SimError> {
        self.global.free(ptr.0).map_err(SimError::HostMemory)
    }

    /// The allocation `(start, size)` that holds device address `addr`, if any.
    pub fn allocation_of(&self, addr: u64) -> Option<(DevPtr, u64)> {
        self.global.allocation_of(addr)
    }

    /// Simulated time since the GPU was built, in nanoseconds at the base clock (time runs
    /// on across launches; 0 in functional mode).
    pub fn now_ns(&self) -> f64 {
        self.clocks.ticks_to_ns(self.now)
    }

    /// Run kernel `kernel_name` of `module` with its param buffer given as bytes (see
    /// [`launch::Params::Raw`]).
    pub fn launch_raw(
        &mut self,
        module: ModuleId,
        kernel_name: &str,
        shape: launch::LaunchShape,
        params: &[u8],
    ) -> Result<(), SimError> {
        self.launch_with(module, kernel_name, shape, launch::Params::Raw(params))
    }
}

impl<H: GpuHooks> Host for Gpu<H> {
    fn load_module(&mut self, file: &str, text: &str) -> Result<ModuleId, SimError> {
        let module = ptx::parse_module(file, text)?;
        if module.const_bytes > launch::MAX_CONST_BYTES {
            let first = module
                .symbols
                .iter()
                .filter(|s| s.space == StateSpace::Const)
                .find(|s| s.offset + s.size > launch::MAX_CONST_BYTES)
                .map_or(String::new(), |s| format!(" (from `{}` on)", s.name));
            return Err(SimError::Launch(format!(
                "{file}: its .const variables take {} bytes{first}, more than the {} bytes of \
                 constant memory",
                module.const_bytes,
                launch::MAX_CONST_BYTES
            )));
        }
        let global_base = self
            .global
            .try_alloc(module.global_bytes.max(ALLOC_ALIGN))
            .map_err(SimError::HostMemory)?
            .0;
        let mut consts = vec![0u8; module.const_bytes as usize];
        for sym in &module.symbols {
            if sym.init.is_empty() {
                continue;
            }
            match sym.space {
                StateSpace::Global => self
                    .global
                    .write(global_base + sym.offset, &sym.init)
                    .map_err(SimError::HostMemory)?,
                StateSpace::Const => {
                    let o = sym.offset as usize;
                    consts[o..o + sym.init.len()].copy_from_slice(&sym.init);
                }
                _ => {}
            }
        }
        self.modules.push(LoadedModule {
            module,
            global_base,
            consts,
        });
        Ok(ModuleId(self.modules.len() - 1))
    }

    fn alloc(&mut self, bytes: u64) -> Result<DevPtr, SimError> {
        self.global.try_alloc(bytes).map_err(SimError::HostMemory)
    }

    fn write_bytes(&mut self, dst: DevPtr, data: &[u8]) -> Result<(), SimError> {
        self.global.write(dst.0, data).map_err(SimError::HostMemory)
    }

    fn read_bytes(&mut self, src: DevPtr, out: &mut [u8]) -> Result<(), SimError> {
        self.global.read(src.0, out).map_err(SimError::HostMemory)
    }

    fn launch(
        &mut self,
        module: ModuleId,
        kernel_name: &str,
        grid: Dim3,
        block: Dim3,
        dynamic_shared: u32,
        args: &[KernelArg],
    ) -> Result<(), SimError> {
        let shape = launch::LaunchShape {
            grid,
            block,
            dynamic_shared,
        };
        self.launch_with(module, kernel_name, shape, launch::Params::Args(args))
    }
}

impl<H: GpuHooks> Gpu<H> {
    fn launch_with(
        &mut self,
        module: ModuleId,
        kernel_name: &str,
        shape: launch::LaunchShape,
        params: launch::Params<'_>,
    ) -> Result<(), SimError> {
        let launch::LaunchShape {
            grid,
            block,
            dynamic_shared: _,
        } = shape;
        let lm = self
            .modules
            .get(module.0)
            .ok_or_else(|| SimError::Launch(format!("unknown module handle {}", module.0)))?;
        let kernel = lm.module.kernel(kernel_name).ok_or_else(|| {
            let names: Vec<&str> = lm.module.kernels.iter().map(|k| k.name.as_str()).collect();
            SimError::Launch(format!(
                "no kernel `{kernel_name}` in {} (kernels: {})",
                lm.module.file,
                names.join(", ")
            ))
        })?;
        let info = launch::prepare(
            &lm.module,
            kernel,
            shape,
            params,
            lm.consts.clone(),
            lm.global_base,
        )?;
        let footprint = CtaFootprint::of(&self.cfg, kernel, &info);
        let ctas_per_sm = footprint.ctas_per_sm(&self.cfg);
        if ctas_per_sm == 0 {
            let s = &self.cfg.sm;
            return Err(SimError::Launch(format!(
                "kernel `{kernel_name}`: one block needs {} threads, {} warps, {} registers ({} per thread) and {} bytes of \
                 shared memory, but an SM has {} threads, {} warps, {} registers and {} bytes",
                footprint.threads,
                footprint.warps,
                footprint.registers,
                kernel.regs_per_thread,
                footprint.shared,
                s.max_threads,
                s.max_warps,
                s.registers,
                s.shared_bytes
            )));
        }
        let mut stats = KernelStats {
            kernel: kernel_name.to_string(),
            mode: match self.mode {
                Mode::Functional => "functional",
                Mode::Timing => "timing",
            },
            grid: [grid.x, grid.y, grid.z],
            block: [block.x, block.y, block.z],
            regs_per_thread: kernel.regs_per_thread,
            shared_bytes_per_cta: info.shared_bytes,
            ctas_per_sm,
            ..Default::default()
        };
        // The timing model's per-kernel facts; a kernel it cannot hold fails here.
        let timing_prep = match self.mode {
            Mode::Functional => None,
            Mode::Timing => {
                let decoded = decode_kernel(kernel);
                let sb = timing::sm::scoreboard_params(&self.cfg, kernel, &decoded)
                    .map_err(SimError::Launch)?;
                Some((decoded, sb))
            }
        };
        let started = Instant::now();
        self.global.printf.next_launch();
        let name = kernel_name.to_string();
        let mut progress = self.progress.take();
        let unit = match self.mode {
            Mode::Functional => "warp instructions",
            Mode::Timing => "cycles",
        };
        let mut report = |n: u64, _blocks: u64| {
            if let Some(p) = progress.as_mut() {
                p(&name, unit, n)
            }
        };
        let result = match self.mode {
            Mode::Functional => functional::run_kernel(
                &self.cfg,
                &lm.module,
                kernel,
                &info,
                &mut self.global,
                &mut stats,
                &mut report,
            ),
            Mode::Timing => {
                let (decoded, sb) = timing_prep.expect("prepared for timing mode");
                let ctx = KernelCtx {
                    cfg: &self.cfg,
                    module: &lm.module,
                    kernel,
                    launch: &info,
                    decoded: &decoded,
                    sb,
                };
                let mem = self
                    .mem
                    .as_mut()
                    .expect("timing mode has a memory hierarchy");
                let before = mem.stats();
                let start = self.now;
                let sm_cycles_before: Vec<u64> = self.clocks.sms.iter().map(|d| d.cycles).collect();
                let sm_mem_before: Vec<_> =
                    (0..self.sms.len()).map(|i| mem.sm_counters(i)).collect();
                let env = TimingEnv {
                    clocks: &mut self.clocks,
                    counters: &mut self.counters,
                    hooks: &mut (&mut self.hooks, &mut self.interval_hook),
                };
                let r = timing::run_kernel(
                    &ctx,
                    &mut self.sms,
                    mem,
                    &mut self.global,
                    env,
                    start,
                    Some(&mut report),
                );
                let after = mem.stats();
                r.map(|end| {
                    self.now = end;
                    stats.cycles = end - start;
                    stats.base_mhz = self.clocks.base_khz as f64 / 1000.0;
                    stats.time_ns = self.clocks.ticks_to_ns(stats.cycles);
                    stats.counters = self.counters.values_snapshot();
                    stats.intervals = self.counters.intervals().clone();
                    for (i, sm) in self.sms.iter().enumerate() {
                        let s = &sm.stats;
                        let m = mem.sm_counters(i);
                        stats.per_sm.push(SmStats {
                            sm: i as u32,
                            mhz: self.clocks.sms[i].khz as f64 / 1000.0,
                            cycles: self.clocks.sms[i].cycles - sm_cycles_before[i],
                            warp_instructions: s.warp_instructions,
                            thread_instructions: s.thread_instructions,
                            divergent_branches: s.divergent_branches,
                            issued_paths: s.issued_paths,
                            deferred_releases: s.deferred_releases,
                            max_stack_depth: s.max_stack_depth,
                            stalls: s.stalls,
                            shared_accesses: s.mem.shared_accesses,
                            shared_conflict_cycles: s.mem.shared_conflict_cycles,
                            l1_accesses: m.l1_load_accesses - sm_mem_before[i].l1_load_accesses,
                            l1_hits: m.l1_load_hits - sm_mem_before[i].l1_load_hits,
                        });
                        stats.warp_instructions += s.warp_instructions;
                        stats.thread_instructions += s.thread_instructions;
                        stats.divergent_branches += s.divergent_branches;
                        stats.max_stack_depth = stats.max_stack_depth.max(s.max_stack_depth);
                        stats.issued_paths += s.issued_paths;
                        stats.stalls.add(&s.stalls);
                        stats.compaction.add(&s.compaction);
                        stats.deferred_releases += s.deferred_releases;
                        stats.mem.shared_accesses += s.mem.shared_accesses;
                        stats.mem.shared_conflict_cycles += s.mem.shared_conflict_cycles;
                    }
                    let d = after.delta(&before);
                    stats.memory_detail = d;
                    stats.mem = MemFigures {
                        l1_accesses: d.l1_load_accesses,
                        l1_hits: d.l1_load_hits,
                        l2_accesses: d.l2_accesses,
                        l2_hits: d.l2_hits,
                        dram_read_bytes: d.dram_read_bytes,
                        dram_write_bytes: d.dram_write_bytes,
                        ..stats.mem
                    };
                })
            }
        };
        self.progress = progress;
        stats.wall_seconds = started.elapsed().as_secs_f64();
        if result.is_err() && self.mode == Mode::Timing {
            self.abandon_launch();
        }
        result?;
        self.launches.push(stats);
        Ok(())
    }
}
