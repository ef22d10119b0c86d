//! Device global memory: allocations in a sparse, lazily backed page table.
//!
//! **Addresses.** Allocations are placed upward from [`GLOBAL_BASE`], each aligned to
//! [`ALLOC_ALIGN`] (256 bytes), first fit: with no `free` in between, every allocation
//! follows the previous one (the addresses of a program that never frees are those of a
//! bump allocator); the address space a freed allocation leaves is reused by the first
//! later allocation that fits in it. The device address space ends `2 × capacity` bytes
//! above `GLOBAL_BASE`.
//!
//! **Pages.** Memory is mapped in pages of [`DEVICE_PAGE_BYTES`] (64 KiB): a page is mapped
//! while a live allocation overlaps it (several small allocations share a page, as they
//! share a 2 MiB page under the CUDA driver), and the page just below `GLOBAL_BASE`
//! ([`CONTEXT_PAGE`], the context's own memory) is always mapped. A mapped page is backed by
//! host memory only from its first write (zero-filled then; reads of an unwritten page give
//! zeros), so a 4 GiB allocation that touches one page holds 64 KiB of host memory
//! ([`GlobalMemory::resident_bytes`]). When a `free` leaves a page with no live allocation,
//! the page is unmapped and its backing dropped. The capacity limit counts mapped pages.
//!
//! **Guest bounds.** By default, as on a real GPU, a guest access faults only outside mapped
//! memory: a read a little past the end of a buffer (or before the first one) reads whatever
//! is there. In strict mode ([`GlobalMemory::set_strict`], `--strict-bounds`), as
//! compute-sanitizer reports, every access outside a live allocation faults (alignment
//! padding, freed allocations, the context page). Either way the valid ranges are one sorted
//! table ([`GlobalMemory::access_range`]): mapped runs, or allocations. The per-lane check is
//! one look-up of the most recently used range (a binary search when it misses) and two
//! compares. Host copies (`cudaMemcpy`) must lie inside one allocation in both modes.
//!
//! The module-scope `.global` image is expected to be allocated here too (by the launcher,
//! e.g. [`GlobalMemory::alloc_init`]).

use crate::address_map::{ALLOC_ALIGN, CONTEXT_PAGE, DEVICE_PAGE_BYTES, GLOBAL_BASE};
use crate::host::DevPtr;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Default cap on the mapped bytes of device memory (guards the host against a guest or a
/// workload asking for absurd sizes).
pub const DEFAULT_CAPACITY: u64 = 8 << 30;

const PAGE: usize = DEVICE_PAGE_BYTES as usize;
const PAGE_SHIFT: u32 = DEVICE_PAGE_BYTES.trailing_zeros();
const PAGE_MASK: u64 = DEVICE_PAGE_BYTES - 1;
const _: () = assert!(DEVICE_PAGE_BYTES.is_power_of_two() && GLOBAL_BASE & PAGE_MASK == 0);

/// The backing of one page.
type Page = Box<[u8; PAGE]>;

fn new_page() -> Page {
    // Built on the heap (a `[0; PAGE]` temporary would pass through the stack).
    match vec![0u8; PAGE].into_boxed_slice().try_into() {
        Ok(p) => p,
        Err(_) => unreachable!("a PAGE-byte slice is a page"),
    }
}

/// First byte of the page holding `a`.
#[inline]
fn page_floor(a: u64) -> u64 {
    a & !PAGE_MASK
}

/// `a` rounded up to a page boundary (`a` is far below `u64::MAX`: see `try_alloc`).
#[inline]
fn page_ceil(a: u64) -> u64 {
    page_floor(a + PAGE_MASK)
}

/// Index in the page table of the page holding `a` (huge, hence absent, below the table).
#[inline(always)]
fn page_index(a: u64) -> usize {
    (a.wrapping_sub(CONTEXT_PAGE) >> PAGE_SHIFT) as usize
}

/// One allocation: `[start, end)` is what was asked for; `[start, reserved)` the address
/// space it holds (at least one byte, so that every allocation has its own address).
#[derive(Debug, Clone, Copy)]
struct Alloc {
    start: u64,
    end: u64,
    reserved: u64,
}

impl Alloc {
    /// The pages it maps, `[first, end)`.
    fn pages(&self) -> (u64, u64) {
        (page_floor(self.start), page_ceil(self.reserved))
    }
}

/// Device memory with an allocation table for bounds checks.
pub struct GlobalMemory {
    /// `pages[i]` backs device addresses `CONTEXT_PAGE + i × PAGE ..`; `None`: not written
    /// since it was mapped (reads zero), or not mapped. Covers every mapped page.
    pages: Vec<Option<Page>>,
    /// The live allocations, sorted by address.
    allocs: Vec<Alloc>,
    /// Runs of mapped pages `[start, end)`, sorted, disjoint and not touching.
    mapped: Vec<(u64, u64)>,
    /// The ranges guest accesses may touch: `mapped`, or in strict mode the allocations.
    ranges: Vec<(u64, u64)>,
    /// Index of the range that satisfied the last bounds check (fast path; an atomic only so
    /// that the memory stays `Sync`).
    last: AtomicUsize,
    strict: bool,
    capacity: u64,
    /// The device-side `printf` buffer (on a real GPU a FIFO in device memory).
    pub printf: crate::exec::printf::PrintfFifo,
    /// The texture bindings (`cudaBindTexture`), by handle.
    pub textures: crate::exec::builtins::TextureTable,
    mapped_bytes: u64,
    resident_pages: u64,
    /// A `free` left a hole below the highest allocation (allocation then searches first fit).
    holes: bool,
}

impl std::fmt::Debug for GlobalMemory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GlobalMemory")
            .field("allocations", &self.allocs.len())
            .field("mapped_bytes", &self.mapped_bytes)
            .field("resident_bytes", &self.resident_bytes())
            .field("strict", &self.strict)
            .field("capacity", &self.capacity)
            .finish()
    }
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

    /// Device memory that refuses allocations that would map more than `capacity` bytes
    /// (whole pages, the context page included).
    pub fn with_capacity_limit(capacity: u64) -> GlobalMemory {
        let mut m = GlobalMemory {
            pages: Vec::new(),
            allocs: Vec::new(),
            mapped: Vec::new(),
            ranges: Vec::new(),
            last: AtomicUsize::new(0),
            strict: false,
            capacity,
            printf: Default::default(),
            textures: Default::default(),
            mapped_bytes: 0,
            resident_pages: 0,
            holes: false,
        };
        m.remap();
        m
    }

    /// Strict bounds: every guest access outside a live allocation faults (see the module
    /// documentation). Off by default.
    pub fn set_strict(&mut self, strict: bool) {
        self.strict = strict;
        self.remap();
    }

    pub fn strict(&self) -> bool {
        self.strict
    }

    /// Where an allocation of `size` (> 0) bytes goes: its index in `allocs` and its address,
    /// the first fit at or above `GLOBAL_BASE` that ends at or below `limit`.
    fn place(&self, size: u64, limit: u64) -> Option<(usize, u64)> {
        let fits = |start: u64, next: u64| start.checked_add(size).is_some_and(|e| e <= next);
        if self.holes {
            let mut cursor = GLOBAL_BASE;
            for (i, a) in self.allocs.iter().enumerate() {
                let s = cursor.checked_next_multiple_of(ALLOC_ALIGN)?;
                if fits(s, a.start) {
                    return Some((i, s));
                }
                cursor = a.reserved;
            }
        }
        let cursor = self.allocs.last().map_or(GLOBAL_BASE, |a| a.reserved);
        let s = cursor.checked_next_multiple_of(ALLOC_ALIGN)?;
        fits(s, limit).then_some((self.allocs.len(), s))
    }

    /// Is the page starting at `p` mapped?
    fn page_mapped(&self, p: u64) -> bool {
        let i = self.mapped.partition_point(|&(s, _)| s <= p);
        i > 0 && p < self.mapped[i - 1].1
    }

    /// Rebuild the mapped runs and the guest ranges from the allocation table.
    fn remap(&mut self) {
        self.mapped.clear();
        self.mapped.push((CONTEXT_PAGE, GLOBAL_BASE));
        for a in &self.allocs {
            let (p0, p1) = a.pages();
            match self.mapped.last_mut() {
                Some(run) if p0 <= run.1 => run.1 = run.1.max(p1),
                _ => self.mapped.push((p0, p1)),
            }
        }
        self.mapped_bytes = self.mapped.iter().map(|&(s, e)| e - s).sum();
        self.ranges = if self.strict {
            self.allocs.iter().map(|a| (a.start, a.end)).collect()
        } else {
            self.mapped.clone()
        };
        self.last.store(0, Ordering::Relaxed);
    }

    /// Allocate `bytes` zero-filled bytes (0 is allowed: a distinct pointer to nothing).
    /// Fails (without changing anything) if the mapped pages would exceed the capacity
    /// limit or the allocation does not fit in the device address space.
    pub fn try_alloc(&mut self, bytes: u64) -> Result<DevPtr, String> {
        let size = bytes.max(1);
        let limit = GLOBAL_BASE.saturating_add(self.capacity.saturating_mul(2));
        let refuse = |why: &str| {
            format!(
                "device allocation of {bytes} bytes exceeds the device memory limit \
                 ({} bytes, {} mapped in {DEVICE_PAGE_BYTES}-byte pages{why})",
                self.capacity, self.mapped_bytes
            )
        };
        if size > self.capacity {
            return Err(refuse(""));
        }
        let (idx, start) = self.place(size, limit).ok_or_else(|| {
            format!(
                "device allocation of {bytes} bytes does not fit in the device address space \
                 ({:#x} to {limit:#x}; the live allocations fragment it)",
                GLOBAL_BASE
            )
        })?;
        let a = Alloc {
            start,
            end: start + bytes,
            reserved: start + size,
        };
        let (p0, p1) = a.pages();
        let mut new = p1 - p0;
        if self.page_mapped(p0) {
            new -= DEVICE_PAGE_BYTES;
        }
        if p1 - DEVICE_PAGE_BYTES != p0 && self.page_mapped(p1 - DEVICE_PAGE_BYTES) {
            new -= DEVICE_PAGE_BYTES;
        }
        if self.mapped_bytes + new > self.capacity {
            return Err(refuse(""));
        }
        self.allocs.insert(idx, a);
        let need = page_index(p1 - 1) + 1;
        if self.pages.len() < need {
            self.pages.resize_with(need, || None);
        }
        // Only the first and last page can be shared with other allocations, hence written
        // before: clear what a freed allocation left in this one's bytes.
        self.fill_resident(start, (p0 + DEVICE_PAGE_BYTES).min(a.reserved), 0);
        self.fill_resident(page_floor(a.reserved - 1).max(start), a.reserved, 0);
        self.remap();
        Ok(DevPtr(start))
    }

    /// Set the backed bytes of `[from, to)` (inside one page) to `v`.
    fn fill_resident(&mut self, from: u64, to: u64, v: u8) {
        let to = to.min(page_floor(from) + DEVICE_PAGE_BYTES);
        if let Some(Some(p)) = self.pages.get_mut(page_index(from)) {
            let o = (from & PAGE_MASK) as usize;
            let n = to.saturating_sub(from) as usize;
            if let Some(b) = p.get_mut(o..o + n) {
                b.fill(v);
            }
        }
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

    /// Release the allocation that starts at `addr`: it leaves the allocation table (in
    /// strict mode later accesses to it fault), the pages no live allocation shares are
    /// unmapped (accesses to them fault in every mode) and their backing is dropped, and its
    /// address space is free for later allocations.
    pub fn free(&mut self, addr: u64) -> Result<(), String> {
        let i = self
            .allocs
            .binary_search_by_key(&addr, |a| a.start)
            .map_err(|_| {
                format!("free of device address {addr:#x}, which is not the start of an allocation")
            })?;
        let a = self.allocs.remove(i);
        self.holes = i < self.allocs.len() || (self.holes && !self.allocs.is_empty());
        self.remap();
        let (mut p, p1) = a.pages();
        while p < p1 {
            if !self.page_mapped(p) {
                if let Some(slot) = self.pages.get_mut(page_index(p)) {
                    if slot.take().is_some() {
                        self.resident_pages -= 1;
                    }
                }
            }
            p += DEVICE_PAGE_BYTES;
        }
        // The table covers the mapped pages only (those above are unmapped, hence dropped).
        let need = self
            .mapped
            .last()
            .map_or(0, |&(_, e)| page_index(e - 1) + 1);
        self.pages.truncate(need);
        Ok(())
    }

    /// Total bytes handed out (sum of allocation sizes, excluding alignment padding).
    pub fn allocated_bytes(&self) -> u64 {
        self.allocs.iter().map(|a| a.end - a.start).sum()
    }

    /// Bytes of mapped device memory (whole pages, the context page included): what the
    /// capacity limit counts.
    pub fn mapped_bytes(&self) -> u64 {
        self.mapped_bytes
    }

    /// Bytes of host memory backing device memory (written pages).
    pub fn resident_bytes(&self) -> u64 {
        self.resident_pages * DEVICE_PAGE_BYTES
    }

    /// Number of allocations.
    pub fn num_allocations(&self) -> usize {
        self.allocs.len()
    }

    /// The guest range `[start, end)` (a mapped run, or in strict mode an allocation) that
    /// holds byte `addr`, if any.
    #[inline]
    pub fn access_range(&self, addr: u64) -> Option<(u64, u64)> {
        let last = self.last.load(Ordering::Relaxed);
        if let Some(&(s, e)) = self.ranges.get(last) {
            if addr >= s && addr < e {
                return Some((s, e));
            }
        }
        self.access_range_slow(addr)
    }

    #[inline(never)]
    fn access_range_slow(&self, addr: u64) -> Option<(u64, u64)> {
        let idx = self.ranges.partition_point(|&(s, _)| s <= addr);
        let (s, e) = *self.ranges.get(idx.checked_sub(1)?)?;
        if addr < e {
            self.last.store(idx - 1, Ordering::Relaxed);
            Some((s, e))
        } else {
            None
        }
    }

    /// May a guest access `[addr, addr + len)`? (Inside one mapped run, or in strict mode
    /// one allocation; `len` > 0.)
    #[inline]
    pub fn contains(&self, addr: u64, len: u64) -> bool {
        let Some(end) = addr.checked_add(len) else {
            return false;
        };
        let last = self.last.load(Ordering::Relaxed);
        if let Some(&(s, e)) = self.ranges.get(last) {
            if addr >= s && end <= e {
                return true;
            }
        }
        self.contains_slow(addr, end)
    }

    #[inline(never)]
    fn contains_slow(&self, addr: u64, end: u64) -> bool {
        let idx = self.ranges.partition_point(|&(s, _)| s <= addr);
        if idx == 0 {
            return false;
        }
        let (s, e) = self.ranges[idx - 1];
        if addr >= s && end <= e && end > addr {
            self.last.store(idx - 1, Ordering::Relaxed);
            true
        } else {
            false
        }
    }

    /// The allocation `(start, size)` holding `addr`, if any.
    pub fn allocation_of(&self, addr: u64) -> Option<(DevPtr, u64)> {
        let idx = self.allocs.partition_point(|a| a.start <= addr);
        let a = *self.allocs.get(idx.checked_sub(1)?)?;
        (addr < a.end).then_some((DevPtr(a.start), a.end - a.start))
    }

    /// Check a host copy of `len` bytes at `addr`: inside one allocation (an empty copy may
    /// also start at an allocation's end).
    fn host_range(&self, addr: u64, len: usize, what: &str) -> Result<(), String> {
        let inside = if len == 0 {
            self.allocation_of(addr).is_some() || self.allocs.iter().any(|a| addr == a.end)
        } else {
            let idx = self.allocs.partition_point(|a| a.start <= addr);
            idx > 0
                && addr
                    .checked_add(len as u64)
                    .is_some_and(|e| e <= self.allocs[idx - 1].end)
        };
        if inside {
            Ok(())
        } else {
            Err(format!(
                "{what} of {len} bytes at device address {addr:#x} is not inside one allocation"
            ))
        }
    }

    /// Visit `[addr, addr + len)` page by page: `f(page slot, offset in page, offset in the
    /// copy, bytes)`.
    fn chunks(
        &mut self,
        addr: u64,
        len: usize,
        mut f: impl FnMut(&mut Option<Page>, &mut u64, usize, usize, usize),
    ) {
        let (mut a, mut done) = (addr, 0usize);
        while done < len {
            let o = (a & PAGE_MASK) as usize;
            let n = (PAGE - o).min(len - done);
            if let Some(slot) = self.pages.get_mut(page_index(a)) {
                f(slot, &mut self.resident_pages, o, done, n);
            }
            a += n as u64;
            done += n;
        }
    }

    /// Host write (cudaMemcpy host-to-device): must lie entirely inside one allocation.
    /// (Zeros written to a page never written are not stored: it reads zero already.)
    pub fn write(&mut self, addr: u64, data: &[u8]) -> Result<(), String> {
        self.host_range(addr, data.len(), "write")?;
        self.chunks(addr, data.len(), |slot, resident, o, at, n| {
            let src = &data[at..at + n];
            backed(slot, resident, src.iter().any(|&b| b != 0), |p| {
                p[o..o + n].copy_from_slice(src)
            });
        });
        Ok(())
    }

    /// Host fill (cudaMemset): `len` bytes of value `v` at `addr`, inside one allocation.
    pub fn fill(&mut self, addr: u64, len: usize, v: u8) -> Result<(), String> {
        self.host_range(addr, len, "fill")?;
        self.chunks(addr, len, |slot, resident, o, _, n| {
            backed(slot, resident, v != 0, |p| p[o..o + n].fill(v));
        });
        Ok(())
    }

    /// Host read (cudaMemcpy device-to-host): must lie entirely inside one allocation.
    pub fn read(&self, addr: u64, out: &mut [u8]) -> Result<(), String> {
        self.host_range(addr, out.len(), "read")?;
        let (mut a, mut done) = (addr, 0usize);
        while done < out.len() {
            let o = (a & PAGE_MASK) as usize;
            let n = (PAGE - o).min(out.len() - done);
            let dst = &mut out[done..done + n];
            match self.pages.get(page_index(a)) {
                Some(Some(p)) => dst.copy_from_slice(&p[o..o + n]),
                _ => dst.fill(0),
            }
            a += n as u64;
            done += n;
        }
        Ok(())
    }

    /// Device-to-device copy of `len` bytes (each side inside one allocation; the ranges
    /// may overlap, as with memmove), a page at a time.
    pub fn copy(&mut self, dst: u64, src: u64, len: usize) -> Result<(), String> {
        self.host_range(src, len, "read")?;
        self.host_range(dst, len, "write")?;
        let mut buf = vec![0u8; len.min(PAGE)];
        let step = |i: usize| i * PAGE;
        let n = len.div_ceil(PAGE);
        // Copy backwards when the destination lies above the source (overlap-safe).
        let order: Box<dyn Iterator<Item = usize>> = if dst > src {
            Box::new((0..n).rev())
        } else {
            Box::new(0..n)
        };
        for i in order {
            let k = (len - step(i)).min(PAGE);
            self.read(src + step(i) as u64, &mut buf[..k])?;
            self.write(dst + step(i) as u64, &buf[..k])?;
        }
        Ok(())
    }

    // ---- guest accessors: the caller has checked `contains(addr, size)` ----

    /// Little-endian load of `N` (1, 2, 4 or 8) bytes at `a`, zero-extended, of an access
    /// already checked (aligned, so inside one page): 0 from a page never written (or, for
    /// an unchecked address, from no page).
    #[inline(always)]
    pub(crate) fn load_n<const N: usize>(&self, a: u64) -> u64 {
        match self.pages.get(page_index(a)) {
            Some(Some(p)) => {
                let o = (a & PAGE_MASK) as usize;
                match p.get(o..o + N) {
                    Some(b) => {
                        let mut x = [0u8; 8];
                        x[..N].copy_from_slice(b);
                        u64::from_le_bytes(x)
                    }
                    None => 0,
                }
            }
            _ => 0,
        }
    }

    /// Little-endian store of the low `N` bytes of `v` at `a`, an access already checked
    /// (the page is backed on its first write; an unchecked address outside the table is
    /// ignored rather than panicking).
    #[inline(always)]
    pub(crate) fn store_n<const N: usize>(&mut self, a: u64, v: u64) {
        let Some(slot) = self.pages.get_mut(page_index(a)) else {
            return;
        };
        let o = (a & PAGE_MASK) as usize;
        backed(slot, &mut self.resident_pages, true, |p| {
            if let Some(b) = p.get_mut(o..o + N) {
                b.copy_from_slice(&v.to_le_bytes()[..N]);
            }
        });
    }

    /// Little-endian load of `size` (1, 2, 4 or 8) bytes, zero-extended. `None` when the
    /// access is not allowed (see [`GlobalMemory::contains`]).
    #[inline]
    pub fn load(&self, addr: u64, size: u32) -> Option<u64> {
        if !self.contains(addr, size as u64) {
            return None;
        }
        Some(self.load_checked(addr, size))
    }

    /// Little-endian store of the low `size` bytes of `value`. `false` when not allowed.
    #[inline]
    pub fn store(&mut self, addr: u64, size: u32, value: u64) -> bool {
        if !self.contains(addr, size as u64) {
            return false;
        }
        self.store_checked(addr, size, value);
        true
    }

    /// Load of an access already checked with [`GlobalMemory::contains`] (no second table
    /// lookup; an unchecked address reads 0 rather than panicking).
    #[inline]
    pub fn load_checked(&self, addr: u64, size: u32) -> u64 {
        match size {
            1 => self.load_n::<1>(addr),
            2 => self.load_n::<2>(addr),
            4 => self.load_n::<4>(addr),
            _ => self.load_n::<8>(addr),
        }
    }

    /// Store of an access already checked with [`GlobalMemory::contains`].
    #[inline]
    pub fn store_checked(&mut self, addr: u64, size: u32, value: u64) {
        match size {
            1 => self.store_n::<1>(addr, value),
            2 => self.store_n::<2>(addr, value),
            4 => self.store_n::<4>(addr, value),
            _ => self.store_n::<8>(addr, value),
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

/// Apply `f` to the page in `slot`, backing it first (zero-filled, counted in `resident`)
/// when it has none, unless `needed` is false (the write would leave it all zeros).
#[inline(always)]
fn backed(
    slot: &mut Option<Page>,
    resident: &mut u64,
    needed: bool,
    f: impl FnOnce(&mut [u8; PAGE]),
) {
    if slot.is_none() {
        if !needed {
            return;
        }
        *slot = Some(new_page());
        *resident += 1;
    }
    if let Some(p) = slot {
        f(p);
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

    const P: u64 = DEVICE_PAGE_BYTES;

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
        // Packed as a bump allocator would: a + 256, + 256.
        assert_eq!((z.0, b.0), (a.0 + 256, a.0 + 512));
        assert_eq!(m.allocated_bytes(), 310);
        let mut out = [1u8; 300];
        m.read(b.0, &mut out).unwrap();
        assert!(out.iter().all(|&x| x == 0));
        // Three small allocations share one page, next to the context page.
        assert_eq!(m.mapped_bytes(), 2 * P);
        assert_eq!(m.resident_bytes(), 0);
    }

    #[test]
    fn host_copies_must_stay_in_one_allocation() {
        for strict in [false, true] {
            let mut m = GlobalMemory::new();
            m.set_strict(strict);
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
            assert!(m.fill(a.0 + 4, 8, 1).is_err());
        }
    }

    #[test]
    fn strict_bounds_are_the_allocations() {
        let mut m = GlobalMemory::new();
        m.set_strict(true);
        let a = m.alloc(16);
        let b = m.alloc(4);
        assert!(m.contains(a.0, 16));
        assert!(!m.contains(a.0, 17));
        assert!(!m.contains(a.0 + 16, 1));
        assert!(m.contains(b.0, 4));
        assert!(!m.contains(b.0 + 1, 4));
        assert!(!m.contains(0, 4));
        assert!(!m.contains(u64::MAX, 4));
        assert!(!m.contains(GLOBAL_BASE - 4, 4)); // the context page
        assert!(m.store(a.0 + 8, 8, 0x0102_0304_0506_0708));
        assert_eq!(m.load(a.0 + 8, 8), Some(0x0102_0304_0506_0708));
        assert_eq!(m.load(a.0 + 8, 2), Some(0x0708));
        assert_eq!(m.load(a.0 + 12, 8), None);
        assert!(!m.store(b.0 + 2, 4, 1));
        assert_eq!(m.allocation_of(a.0 + 3), Some((a, 16)));
        assert_eq!(m.allocation_of(a.0 + 16), None);
        assert_eq!(m.access_range(a.0 + 3), Some((a.0, a.0 + 16)));
        // A freed allocation faults at once, even though its page stays mapped for `b`.
        m.free(a.0).unwrap();
        assert!(!m.contains(a.0, 4));
        assert!(m.contains(b.0, 4));
    }

    #[test]
    fn default_bounds_are_the_mapped_pages() {
        let mut m = GlobalMemory::new();
        let a = m.alloc(16);
        let b = m.alloc(4);
        // Past the end of `a`, in the padding, past `b`: all mapped (one page).
        assert!(m.contains(a.0 + 16, 4));
        assert!(m.contains(b.0 + 4, 4));
        assert!(m.contains(GLOBAL_BASE + P - 8, 8));
        assert!(!m.contains(GLOBAL_BASE + P - 4, 8)); // runs off the mapped run
        assert!(!m.contains(GLOBAL_BASE + P, 4));
        // Before the first allocation: the context page.
        assert!(m.contains(GLOBAL_BASE - 512, 4));
        assert!(m.contains(CONTEXT_PAGE, 4));
        assert!(!m.contains(CONTEXT_PAGE - 4, 4));
        assert!(!m.contains(0, 4));
        assert!(!m.contains(u64::MAX - 1, 4));
        assert_eq!(
            m.access_range(a.0 + 100),
            Some((CONTEXT_PAGE, GLOBAL_BASE + P))
        );
        // Stray bytes past an allocation are real memory: what is stored there stays.
        assert!(m.store(b.0 + 64, 4, 0xabcd));
        assert_eq!(m.load(b.0 + 64, 4), Some(0xabcd));
        assert_eq!(m.load(GLOBAL_BASE - 8, 8), Some(0));
    }

    #[test]
    fn free_unmaps_unshared_pages_and_reuses_the_space() {
        let mut m = GlobalMemory::new();
        let a = m.alloc(3 * P); // pages 0..3 of the heap
        let b = m.alloc(100); // a ends on a page boundary: b starts the next page
        assert_eq!(b.0, GLOBAL_BASE + 3 * P);
        assert!(m.store(a.0 + P, 4, 7));
        assert!(m.store(a.0 + 3 * P - 4, 4, 9));
        assert_eq!(m.resident_bytes(), 2 * P);
        m.free(a.0).unwrap();
        // a's pages are unmapped (fault in default mode too) and their backing dropped.
        assert!(!m.contains(a.0 + P, 4));
        assert!(!m.contains(a.0, 4));
        assert_eq!(m.resident_bytes(), 0);
        assert!(m.contains(b.0, 4));
        // The context page is mapped still, but no longer joined to the heap.
        assert!(m.contains(GLOBAL_BASE - 4, 4));
        // The next allocation that fits takes the freed space, zero-filled.
        let c = m.alloc(P);
        assert_eq!(c.0, GLOBAL_BASE);
        assert_eq!(m.load(c.0 + P - 4, 4), Some(0));
        assert!(m.store(c.0, 4, 1));
        // One that does not fit goes above the highest allocation.
        let d = m.alloc(3 * P);
        assert!(d.0 > b.0);
        // A page shared with a live allocation stays mapped after a free.
        let e = m.alloc(64);
        let f = m.alloc(64);
        assert_eq!(f.0, e.0 + 256);
        m.free(e.0).unwrap();
        assert!(m.contains(e.0, 4)); // default mode: still mapped, for `f`
        m.set_strict(true);
        assert!(!m.contains(e.0, 4));
        assert!(m.contains(f.0, 4));
        // Reusing e's bytes gives zeros even though f's page holds data.
        assert!(m.store(f.0, 4, 5));
        m.set_strict(false);
        assert!(m.store(e.0, 4, 0x1234));
        let g = m.alloc(64);
        assert_eq!(g.0, e.0);
        assert_eq!(m.load(g.0, 4), Some(0));
        assert_eq!(m.load(f.0, 4), Some(5));
        assert!(m.free(g.0 + 4).is_err());
    }

    #[test]
    fn a_huge_allocation_is_backed_only_where_written() {
        let mut m = GlobalMemory::new();
        let big = m.alloc(4 << 30);
        assert_eq!(m.allocated_bytes(), 4 << 30);
        assert_eq!(m.mapped_bytes(), (4 << 30) + P);
        assert_eq!(m.resident_bytes(), 0);
        assert!(m.store(big.0 + (3 << 30) + 12, 4, 42));
        assert_eq!(m.load(big.0 + (3 << 30) + 12, 4), Some(42));
        assert_eq!(m.resident_bytes(), P);
        // Reading and zero-filling the rest back nothing more.
        let mut out = vec![1u8; 1 << 20];
        m.read(big.0 + (1 << 30), &mut out).unwrap();
        assert!(out.iter().all(|&b| b == 0));
        m.fill(big.0, 1 << 30, 0).unwrap();
        m.write(big.0 + 4096, &[0; 4096]).unwrap();
        assert_eq!(m.resident_bytes(), P);
        m.fill(big.0 + 8, 3, 0xff).unwrap();
        assert_eq!(m.resident_bytes(), 2 * P);
        m.free(big.0).unwrap();
        assert_eq!((m.resident_bytes(), m.mapped_bytes()), (0, P));
    }

    #[test]
    fn capacity_counts_mapped_pages() {
        let mut m = GlobalMemory::with_capacity_limit(4 * P);
        assert!(m.try_alloc(512).is_ok()); // context page + 1
        assert!(m.try_alloc(512).is_ok()); // same page
        assert!(m.try_alloc(P).is_ok()); // straddles: 1 more page
        let e = m.try_alloc(2 * P).unwrap_err();
        assert!(e.contains("device memory limit"), "{e}");
        assert!(m.try_alloc(u64::MAX).is_err());
        assert!(m.try_alloc(u64::MAX - GLOBAL_BASE).is_err());
        assert_eq!(m.allocated_bytes(), 1024 + P);
        assert!(m.try_alloc(P / 2).is_ok()); // inside the last page mapped
        assert_eq!(m.mapped_bytes(), 3 * P);
        assert!(m.try_alloc(P).is_ok()); // the rest of that page and one more
        assert_eq!(m.mapped_bytes(), 4 * P);
    }

    #[test]
    fn device_copies_move_data_and_overlap_like_memmove() {
        let mut m = GlobalMemory::new();
        let a = m.alloc(3 * P);
        let data: Vec<u8> = (0..2 * P as usize).map(|i| (i % 251) as u8).collect();
        m.write(a.0, &data).unwrap();
        m.copy(a.0 + 100, a.0, data.len()).unwrap();
        let mut out = vec![0u8; data.len()];
        m.read(a.0 + 100, &mut out).unwrap();
        assert_eq!(out, data);
        m.copy(a.0, a.0 + 100, data.len()).unwrap();
        m.read(a.0, &mut out).unwrap();
        assert_eq!(out, data);
        assert!(m.copy(a.0, a.0 + P, 2 * P as usize + 1).is_err());
    }

    use proptest::prelude::*;

    proptest! {
        /// Random allocations, frees, host writes and guest stores against a reference (each
        /// live allocation's bytes): contents survive, allocations never overlap and are
        /// zero-filled, every byte of a live allocation is a valid guest access in both modes,
        /// the counters stay consistent, and backing is dropped with the last live page.
        #[test]
        fn allocator_matches_a_reference(
            ops in prop::collection::vec((0u8..6, any::<u32>(), any::<u32>()), 1..60),
        ) {
            let mut m = GlobalMemory::with_capacity_limit(64 * P);
            let mut live: Vec<(u64, Vec<u8>)> = Vec::new();
            for (op, a, b) in ops {
                match op {
                    0 | 1 => {
                        let size = [0u64, 1, 100, 256, 4000, P - 8, P, 3 * P + 5][a as usize % 8];
                        if let Ok(p) = m.try_alloc(size) {
                            let mut out = vec![1u8; size as usize];
                            m.read(p.0, &mut out).unwrap();
                            prop_assert!(out.iter().all(|&x| x == 0), "zero-filled");
                            for (q, d) in &live {
                                let (qe, pe) = (q + (d.len() as u64).max(1), p.0 + size.max(1));
                                prop_assert!(p.0 >= qe || *q >= pe, "no overlap");
                            }
                            live.push((p.0, vec![0; size as usize]));
                        }
                    }
                    2 if !live.is_empty() => {
                        let (p, _) = live.swap_remove(a as usize % live.len());
                        m.free(p).unwrap();
                    }
                    3 | 4 if !live.is_empty() => {
                        let k = a as usize % live.len();
                        let (p, d) = &mut live[k];
                        if !d.is_empty() {
                            let at = b as usize % d.len();
                            let v = (a >> 8) as u8 | 1;
                            if op == 3 {
                                m.write(*p + at as u64, &[v]).unwrap();
                            } else {
                                prop_assert!(m.store(*p + at as u64, 1, v as u64));
                            }
                            d[at] = v;
                        }
                    }
                    _ => m.set_strict(a % 2 == 0),
                }
                for (p, d) in &live {
                    let mut out = vec![0u8; d.len()];
                    m.read(*p, &mut out).unwrap();
                    prop_assert_eq!(&out, d);
                    if !d.is_empty() {
                        prop_assert!(m.contains(*p, d.len() as u64));
                    }
                }
                prop_assert!(m.resident_bytes() <= m.mapped_bytes());
                prop_assert!(m.mapped_bytes() <= 64 * P);
                prop_assert_eq!(m.allocated_bytes(), live.iter().map(|(_, d)| d.len() as u64).sum::<u64>());
            }
            for (p, _) in live.drain(..) {
                m.free(p).unwrap();
            }
            prop_assert_eq!((m.resident_bytes(), m.mapped_bytes()), (0, P));
        }
    }

    #[test]
    fn alloc_init_copies_image() {
        let mut m = GlobalMemory::new();
        let p = m.alloc_init(8, &[9, 8, 7]).unwrap();
        assert_eq!(m.load(p.0, 4), Some(0x00_07_08_09));
    }
}
