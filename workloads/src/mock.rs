//! A host that checks, but does not execute: memory with bounds checks, kernel names and
//! argument types checked against the PTX `.entry` signatures, launches recorded. The GPU
//! model is developed separately; this lets the test suite run every workload's host code
//! (input generation, launch schedule, read-back, reference, comparison) without it.

use std::collections::HashMap;

use warpforge_model::error::SimError;
use warpforge_model::host::{DevPtr, Dim3, Host, KernelArg, ModuleId};

#[derive(Clone, Debug)]
pub struct LaunchRecord {
    pub kernel: String,
    pub grid: Dim3,
    pub block: Dim3,
}

#[derive(Default)]
pub struct MockHost {
    /// Allocations: base address -> bytes.
    mem: Vec<(u64, Vec<u8>)>,
    next: u64,
    /// Per module: kernel name -> PTX parameter types (e.g. ".u64").
    modules: Vec<HashMap<String, Vec<String>>>,
    pub launches: Vec<LaunchRecord>,
}

/// `.entry` names and their parameter types, from PTX text.
pub fn entry_signatures(ptx: &str) -> HashMap<String, Vec<String>> {
    let mut out = HashMap::new();
    let mut current: Option<String> = None;
    for line in ptx.lines() {
        let t = line.trim();
        if let Some(rest) = t.strip_prefix(".visible .entry ") {
            let name = rest.trim_end_matches('(').trim().to_string();
            out.insert(name.clone(), Vec::new());
            current = Some(name);
        } else if let (Some(name), Some(rest)) = (&current, t.strip_prefix(".param ")) {
            let ty = rest.split_whitespace().next().unwrap_or("").to_string();
            out.get_mut(name).unwrap().push(ty);
        } else if t == ")" || t == "{" {
            current = None;
        }
    }
    out
}

impl MockHost {
    pub fn new() -> MockHost {
        MockHost {
            next: 0x1000_0000,
            ..Default::default()
        }
    }

    fn find(&mut self, addr: u64, len: usize) -> Result<&mut [u8], SimError> {
        for (base, bytes) in &mut self.mem {
            if addr >= *base && addr + len as u64 <= *base + bytes.len() as u64 {
                let off = (addr - *base) as usize;
                return Ok(&mut bytes[off..off + len]);
            }
        }
        Err(SimError::HostMemory(format!(
            "{len} bytes at {addr:#x} are not inside one allocation"
        )))
    }

    fn is_device_ptr(&self, p: DevPtr) -> bool {
        self.mem
            .iter()
            .any(|(b, v)| p.0 >= *b && p.0 < *b + v.len() as u64)
    }
}

impl Host for MockHost {
    fn load_module(&mut self, _file: &str, ptx: &str) -> Result<ModuleId, SimError> {
        let sigs = entry_signatures(ptx);
        if sigs.is_empty() {
            return Err(SimError::Launch("module has no .entry".into()));
        }
        self.modules.push(sigs);
        Ok(ModuleId(self.modules.len() - 1))
    }

    fn alloc(&mut self, bytes: u64) -> Result<DevPtr, SimError> {
        let base = self.next;
        self.next += bytes.div_ceil(256) * 256 + 256;
        self.mem.push((base, vec![0; bytes as usize]));
        Ok(DevPtr(base))
    }

    fn write_bytes(&mut self, dst: DevPtr, data: &[u8]) -> Result<(), SimError> {
        self.find(dst.0, data.len())?.copy_from_slice(data);
        Ok(())
    }

    fn read_bytes(&mut self, src: DevPtr, out: &mut [u8]) -> Result<(), SimError> {
        out.copy_from_slice(self.find(src.0, out.len())?);
        Ok(())
    }

    fn launch(
        &mut self,
        module: ModuleId,
        kernel: &str,
        grid: Dim3,
        block: Dim3,
        dynamic_shared_bytes: u32,
        args: &[KernelArg],
    ) -> Result<(), SimError> {
        let sig = self
            .modules
            .get(module.0)
            .and_then(|m| m.get(kernel))
            .ok_or_else(|| SimError::Launch(format!("no kernel `{kernel}`")))?
            .clone();
        if sig.len() != args.len() {
            return Err(SimError::Launch(format!(
                "`{kernel}` takes {} arguments, got {}",
                sig.len(),
                args.len()
            )));
        }
        for (i, (ty, arg)) in sig.iter().zip(args).enumerate() {
            let ok = match arg {
                KernelArg::U8(_) | KernelArg::S8(_) => {
                    matches!(ty.as_str(), ".u8" | ".s8" | ".b8")
                }
                KernelArg::U16(_) | KernelArg::S16(_) => {
                    matches!(ty.as_str(), ".u16" | ".s16" | ".b16")
                }
                KernelArg::U32(_) | KernelArg::S32(_) => {
                    matches!(ty.as_str(), ".u32" | ".s32" | ".b32")
                }
                KernelArg::F32(_) => ty == ".f32",
                KernelArg::F64(_) => ty == ".f64",
                KernelArg::U64(_) | KernelArg::S64(_) => {
                    matches!(ty.as_str(), ".u64" | ".s64" | ".b64")
                }
                KernelArg::Ptr(p) => ty == ".u64" && self.is_device_ptr(*p),
            };
            if !ok {
                return Err(SimError::Launch(format!(
                    "`{kernel}` argument {i}: PTX type {ty}, got {arg:?}"
                )));
            }
        }
        if grid.count() == 0 || block.count() == 0 || block.count() > 1024 {
            return Err(SimError::Launch(format!(
                "`{kernel}`: bad dims {grid:?} {block:?}"
            )));
        }
        if dynamic_shared_bytes != 0 {
            return Err(SimError::Launch(
                "no workload uses dynamic shared memory".into(),
            ));
        }
        self.launches.push(LaunchRecord {
            kernel: kernel.to_string(),
            grid,
            block,
        });
        Ok(())
    }
}
