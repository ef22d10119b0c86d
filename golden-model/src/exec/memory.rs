//! Device global memory: one contiguous byte vector holding every allocation.
//!
//! Allocations are bump-allocated upward from [`GLOBAL_BASE`], each aligned to
//! [`ALLOC_ALIGN`]; byte `i` of the vector is device address `GLOBAL_BASE + i`. The gaps that
//! alignment leaves between allocations exist in the vector but belong to no allocation, so
//! a guest access that strays into one faults. The allocation table is sorted by construction
//! (addresses only grow), so the per-lane bounds check is one binary search — preceded by a
//! check of the most recently used allocation, which is the common case.
//!
//! The module-scope `.global` image is expected to be allocated here too (by the launcher,
//! e.g. [`GlobalMemory::alloc_init`]); guest accesses are valid exactly inside allocations.

use crate::address_map::{ALLOC_ALIGN, GLOBAL_BASE};
use crate::host::DevPtr;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Default cap on the total bytes of device memory (guards the host against a guest or a
/// workload asking for absurd sizes).
pub const DEFAULT_CAPACITY: u64 = 8 << 30;

/// Device memory with an allocation table for bounds checks.
#[derive(Debug)]
pub struct GlobalMemory {
    /// Backing store: `data[i]` is device address `GLOBAL_BASE + i`.
    data: Vec<u8>,
    /// `(start, end)` device addresses of each allocation, sorted, end exclusive.
    allocs: Vec<(u64, u64)>,
    /// Index of the allocation that satisfied the last bounds check (fast path; an atomic only so that the memory stays `Sync`).
    last: AtomicUsize,
    capacity: u64,
    /// The device-side `printf` buffer (on a real GPU a FIFO in device memory).
    pub printf: crate::exec::printf::PrintfFifo,
    /// The texture bindings (`cudaBindTexture`), by handle.
    pub textures: crate::exec::builtins::TextureTable,
}

impl Default for GlobalMemory {
    fn default() -> Self {
        Self::new()
    }
}

impl GlobalMemory {
    pub fn new() -> GlobalMemory {
        GlobalMemory::with_capacity_limit(DEFAULT_CAPACITY)
    }

    /// Device memory that refuses allocations beyond `capacity` bytes in total.
    pub fn with_capacity_limit(capacity: u64) -> GlobalMemory {
        GlobalMemory {
            data: Vec::new(),
            allocs: Vec::new(),
            last: AtomicUsize::new(0),
            capacity,
            printf: Default::default(),
            textures: Default::default(),
        }
    }

    /// Allocate `bytes` zero-filled bytes (0 is allowed: a distinct pointer to nothing).
    /// Fails (without changing anything) if the total would exceed the capacity limit.
    pub fn try_alloc(&mut self, bytes: u64) -> Result<DevPtr, String> {
        let used = self.data.len() as u64;
        let start_off = used.div_ceil(ALLOC_ALIGN) * ALLOC_ALIGN;
        // Reserve at least one byte so that every allocation has a distinct address.
        let end_off = start_off
            .checked_add(bytes.max(1))
            .filter(|&e| e <= self.capacity)
            .ok_or_else(|| {
                format!(
                    "device allocation of {bytes} bytes exceeds the device memory limit \
                     ({} bytes, {} in use)",
                    self.capacity, used
                )
            })?;
        self.data.resize(end_off as usize, 0);
        let start = GLOBAL_BASE + start_off;
        self.allocs.push((start, start + bytes));
        Ok(DevPtr(start))
    }

    /// Allocate `bytes` zero-filled bytes. Panics only if the capacity limit is exceeded; the
    /// host API should use [`GlobalMemory::try_alloc`].
    pub fn alloc(&mut self, bytes: u64) -> DevPtr {
        self.try_alloc(bytes).expect("device memory exhausted")
    }

    /// Allocate `bytes` bytes and copy `init` to their start (module `.global` images).
    pub fn alloc_init(&mut self, bytes: u64, init: &[u8]) -> Result<DevPtr, String> {
        let p = self.try_alloc(bytes.max(init.len() as u64))?;
        if !init.is_empty() {
            self.write(p.0, init)?;
        }
        Ok(p)
    }

    /// Release the allocation that starts at `addr`: it leaves the allocation table, so
    /// later accesses to it fault; its bytes are not reused (the allocator only grows).
    pub fn free(&mut self, addr: u64) -> Result<(), String> {
        match self.allocs.binary_search_by_key(&addr, |&(s, _)| s) {
            Ok(i) => {
                self.allocs.remove(i);
                self.last.store(0, Ordering::Relaxed);
                Ok(())
            }
            Err(_) => Err(format!(
                "free of device address {addr:#x}, which is not the start of an allocation"
            )),
        }
    }

    /// Total bytes handed out (sum of allocation sizes, excluding alignment padding).
    pub fn allocated_bytes(&self) -> u64 {
        self.allocs.iter().map(|&(s, e)| e - s).sum()
    }

    /// Number of allocations.
    pub fn num_allocations(&self) -> usize {
        self.allocs.len()
    }

    /// The allocation `[start, end)` that holds byte `addr`, if any.
    #[inline]
    pub fn allocation_range(&self, addr: u64) -> Option<(u64, u64)> {
        let last = self.last.load(Ordering::Relaxed);
        if let Some(&(s, e)) = self.allocs.get(last) {
            if addr >= s && addr < e {
                return Some((s, e));
            }
        }
        self.allocation_range_slow(addr)
    }

    #[inline(never)]
    fn allocation_range_slow(&self, addr: u64) -> Option<(u64, u64)> {
        let idx = self.allocs.partition_point(|&(s, _)| s <= addr);
        let (s, e) = *self.allocs.get(idx.checked_sub(1)?)?;
        if addr < e {
            self.last.store(idx - 1, Ordering::Relaxed);
            Some((s, e))
        } else {
            None
        }
    }

    /// Is `[addr, addr + len)` entirely inside one allocation? (`len` > 0.)
    #[inline]
    pub fn contains(&self, addr: u64, len: u64) -> bool {
        let Some(end) = addr.checked_add(len) else {
            return false;
        };
        let last = self.last.load(Ordering::Relaxed);
        if let Some(&(s, e)) = self.allocs.get(last) {
            if addr >= s && end <= e {
                return true;
            }
        }
        self.contains_slow(addr, end)
    }

    #[inline(never)]
    fn contains_slow(&self, addr: u64, end: u64) -> bool {
        let idx = self.allocs.partition_point(|&(s, _)| s <= addr);
        if idx == 0 {
            return false;
        }
        let (s, e) = self.allocs[idx - 1];
        if addr >= s && end <= e && end > addr {
            self.last.store(idx - 1, Ordering::Relaxed);
            true
        } else {
            false
        }
    }

    /// `contains` under the name the brief uses.
    #[inline]
    pub fn allocation_containing(&self, addr: u64, len: u64) -> bool {
        self.contains(addr, len)
    }

    /// The allocation `(start, size)` holding `addr`, if any.
    pub fn allocation_of(&self, addr: u64) -> Option<(DevPtr, u64)> {
        let idx = self.allocs.partition_point(|&(s, _)| s <= addr);
        let (s, e) = *self.allocs.get(idx.checked_sub(1)?)?;
        (addr < e).then_some((DevPtr(s), e - s))
    }

    fn host_range(&self, addr: u64, len: usize, what: &str) -> Result<usize, String> {
        if len == 0 {
            // An empty copy is fine anywhere inside (or at the end of) an allocation.
            if self.allocation_of(addr).is_some()
                || self.allocs.iter().any(|&(s, e)| addr == e || addr == s)
            {
                return Ok(0);
            }
        } else if self.contains(addr, len as u64) {
            return Ok((addr - GLOBAL_BASE) as usize);
        }
        Err(format!(
            "{what} of {len} bytes at device address {addr:#x} is not inside one allocation"
        ))
    }

    /// Host write (cudaMemcpy host-to-device): must lie entirely inside one allocation.
    pub fn write(&mut self, addr: u64, data: &[u8]) -> Result<(), String> {
        let off = self.host_range(addr, data.len(), "write")?;
        self.data[off..off + data.len()].copy_from_slice(data);
        Ok(())
    }

    /// Host read (cudaMemcpy device-to-host): must lie entirely inside one allocation.
    pub fn read(&self, addr: u64, out: &mut [u8]) -> Result<(), String> {
        let off = self.host_range(addr, out.len(), "read")?;
        out.copy_from_slice(&self.data[off..off + out.len()]);
        Ok(())
    }

    // ---- guest accessors: the caller has checked `contains(addr, size)` ----

    /// The backing store (byte `i` is device address `GLOBAL_BASE + i`), for the guest
    /// access fast path, whose accesses have been checked with [`GlobalMemory::contains`].
    #[inline]
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.data
    }

    /// Mutable [`GlobalMemory::bytes`].
    #[inline]
    pub(crate) fn bytes_mut(&mut self) -> &mut [u8] {
        &mut self.data
    }

    /// Little-endian load of `size` (1, 2, 4 or 8) bytes, zero-extended. `None` when the
    /// access is not inside an allocation.
    #[inline]
    pub fn load(&self, addr: u64, size: u32) -> Option<u64> {
        if !self.contains(addr, size as u64) {
            return None;
        }
        let off = (addr - GLOBAL_BASE) as usize;
        Some(load_le(&self.data[off..off + size as usize]))
    }

    /// Little-endian store of the low `size` bytes of `value`. `false` when out of bounds.
    #[inline]
    pub fn store(&mut self, addr: u64, size: u32, value: u64) -> bool {
        if !self.contains(addr, size as u64) {
            return false;
        }
        let off = (addr - GLOBAL_BASE) as usize;
        store_le(&mut self.data[off..off + size as usize], value);
        true
    }

    /// Load of an access already checked with [`GlobalMemory::contains`] (no second table
    /// lookup; an unchecked address reads 0 rather than panicking).
    #[inline]
    pub fn load_checked(&self, addr: u64, size: u32) -> u64 {
        let off = addr.wrapping_sub(GLOBAL_BASE) as usize;
        match self.data.get(off..off.wrapping_add(size as usize)) {
            Some(b) => load_le(b),
            None => 0,
        }
    }

    /// Store of an access already checked with [`GlobalMemory::contains`] (an unchecked
    /// address outside the backing store is ignored rather than panicking).
    #[inline]
    pub fn store_checked(&mut self, addr: u64, size: u32, value: u64) {
        let off = addr.wrapping_sub(GLOBAL_BASE) as usize;
        if let Some(b) = self.data.get_mut(off..off.wrapping_add(size as usize)) {
            store_le(b, value);
        }
    }

    pub fn load_u32(&self, addr: u64) -> Option<u32> {
        self.load(addr, 4).map(|v| v as u32)
    }
    pub fn load_u64(&self, addr: u64) -> Option<u64> {
        self.load(addr, 8)
    }
    pub fn store_u32(&mut self, addr: u64, v: u32) -> bool {
        self.store(addr, 4, v as u64)
    }
    pub fn store_u64(&mut self, addr: u64, v: u64) -> bool {
        self.store(addr, 8, v)
    }
}

/// Little-endian value of up to 8 bytes, zero-extended.
#[inline]
pub fn load_le(b: &[u8]) -> u64 {
    match b.len() {
        1 => b[0] as u64,
        2 => u16::from_le_bytes([b[0], b[1]]) as u64,
        4 => u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as u64,
        8 => u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]),
        _ => {
            let mut v = 0u64;
            for (i, &x) in b.iter().enumerate().take(8) {
                v |= (x as u64) << (8 * i);
            }
            v
        }
    }
}

/// Store the low `b.len()` bytes of `v`, little-endian.
#[inline]
pub fn store_le(b: &mut [u8], v: u64) {
    let bytes = v.to_le_bytes();
    let n = b.len().min(8);
    b[..n].copy_from_slice(&bytes[..n]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alloc_is_aligned_zeroed_and_distinct() {
        let mut m = GlobalMemory::new();
        let a = m.alloc(10);
        let z = m.alloc(0);
        let b = m.alloc(300);
        assert_eq!(a.0, GLOBAL_BASE);
        assert_eq!(a.0 % ALLOC_ALIGN, 0);
        assert_eq!(z.0 % ALLOC_ALIGN, 0);
        assert_eq!(b.0 % ALLOC_ALIGN, 0);
        assert!(a != z && z != b && a.0 < z.0 && z.0 < b.0);
        assert_eq!(m.allocated_bytes(), 310);
        let mut out = [1u8; 300];
        m.read(b.0, &mut out).unwrap();
        assert!(out.iter().all(|&x| x == 0));
    }

    #[test]
    fn host_copies_must_stay_in_one_allocation() {
        let mut m = GlobalMemory::new();
        let a = m.alloc(8);
        let b = m.alloc(8);
        assert!(m.write(a.0, &[1; 8]).is_ok());
        assert!(m.write(a.0 + 1, &[1; 8]).is_err()); // runs past the end
        assert!(m.write(a.0 + 8, &[1]).is_err()); // padding
        assert!(m.write(GLOBAL_BASE - 4, &[1; 4]).is_err());
        assert!(m.write(b.0 + 4, &[2; 4]).is_ok());
        let mut o = [0u8; 8];
        m.read(b.0, &mut o).unwrap();
        assert_eq!(o, [0, 0, 0, 0, 2, 2, 2, 2]);
        assert!(m.read(u64::MAX - 2, &mut o).is_err());
        assert!(m.write(a.0, &[]).is_ok());
    }

    #[test]
    fn guest_bounds_checks() {
        let mut m = GlobalMemory::new();
        let a = m.alloc(16);
        let b = m.alloc(4);
        assert!(m.contains(a.0, 16));
        assert!(!m.contains(a.0, 17));
        assert!(!m.contains(a.0 + 16, 1));
        assert!(m.contains(b.0, 4));
        assert!(!m.contains(b.0 + 1, 4));
        assert!(!m.contains(0, 4));
        assert!(!m.contains(u64::MAX, 4));
        assert!(m.store(a.0 + 8, 8, 0x0102_0304_0506_0708));
        assert_eq!(m.load(a.0 + 8, 8), Some(0x0102_0304_0506_0708));
        assert_eq!(m.load(a.0 + 8, 2), Some(0x0708));
        assert_eq!(m.load(a.0 + 12, 8), None);
        assert!(!m.store(b.0 + 2, 4, 1));
        assert_eq!(m.allocation_of(a.0 + 3), Some((a, 16)));
        assert_eq!(m.allocation_of(a.0 + 16), None);
    }

    #[test]
    fn capacity_limit_is_an_error_not_a_crash() {
        let mut m = GlobalMemory::with_capacity_limit(1024);
        assert!(m.try_alloc(512).is_ok());
        assert!(m.try_alloc(1024).is_err());
        assert!(m.try_alloc(u64::MAX).is_err());
        assert_eq!(m.allocated_bytes(), 512);
    }

    #[test]
    fn alloc_init_copies_image() {
        let mut m = GlobalMemory::new();
        let p = m.alloc_init(8, &[9, 8, 7]).unwrap();
        assert_eq!(m.load(p.0, 4), Some(0x00_07_08_09));
    }
}
