//! Coalescer: turns the per-lane addresses of one warp memory instruction into cache-line
//! transactions.
//!
//! Rule (Fermi / GPGPU-Sim "L1 line" coalescing, seed 001 [L388-L394]): every active lane
//! touches the bytes `addr .. addr + bytes`; lanes are grouped by the cache line those bytes
//! fall in, and one transaction is generated per distinct line. A lane whose access straddles
//! a line boundary (misaligned) contributes to both lines. For each transaction the 32-byte
//! sectors that were touched are recorded (bit `s` = sector `s` of the line, i.e.
//! `(addr % line_bytes) / 32`) so that L2 and DRAM byte accounting, and a future sector
//! cache (LAMAR), can use them.
//!
//! Transactions are listed in the order their line is first touched by the lowest lane, so
//! the result is deterministic. The result lives in a fixed-size array: no heap allocation.

use crate::exec::{MemAccess, WARP_SIZE};

/// Sector size in bytes (the smallest request the coalescer produces, seed [L1767]).
pub const SECTOR_BYTES: u32 = 32;

/// The most transactions one warp instruction can produce: every lane straddling two lines.
pub const MAX_TRANSACTIONS: usize = 2 * WARP_SIZE;

/// One memory transaction: one cache line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Transaction {
    /// Byte address of the line (aligned to `line_bytes`).
    pub line_addr: u64,
    /// Touched 32-byte sectors of the line (bit s = sector s).
    pub sectors: u32,
    /// Number of lanes that touch this line.
    pub lanes: u32,
}

impl Transaction {
    /// Bytes of the touched sectors.
    pub fn sector_bytes(&self) -> u32 {
        self.sectors.count_ones() * SECTOR_BYTES
    }
}

/// The transactions of one warp instruction (fixed capacity, no allocation).
#[derive(Debug, Clone, Copy)]
pub struct Coalesced {
    n: usize,
    tx: [Transaction; MAX_TRANSACTIONS],
}

impl Coalesced {
    pub fn len(&self) -> usize {
        self.n
    }
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }
    pub fn as_slice(&self) -> &[Transaction] {
        &self.tx[..self.n]
    }
    pub fn iter(&self) -> std::slice::Iter<'_, Transaction> {
        self.as_slice().iter()
    }

    /// Store the accumulated state of transaction `cur` (none when `usize::MAX`).
    #[inline(always)]
    fn write_back(&mut self, cur: usize, sectors: u32, lanes: u32) {
        if let Some(t) = self.tx.get_mut(cur) {
            t.sectors = sectors;
            t.lanes = lanes;
        }
    }

    fn add(&mut self, line_addr: u64, sectors: u32) {
        // Fast path: consecutive lanes usually touch the line added last.
        if self.n > 0 && self.tx[self.n - 1].line_addr == line_addr {
            let t = &mut self.tx[self.n - 1];
            t.sectors |= sectors;
            t.lanes += 1;
            return;
        }
        let (i, sectors, lanes) = self.open(line_addr, sectors);
        self.write_back(i, sectors, lanes);
    }

    /// The index of line `line_addr`'s transaction (appended if new) and its sectors and
    /// lane count once one more lane touching `sectors` is counted, for the caller to
    /// write back (an appended transaction already holds them).
    #[inline]
    fn open(&mut self, line_addr: u64, sectors: u32) -> (usize, u32, u32) {
        // Newest first: a line seen again is usually a recent one.
        if let Some(i) = self.tx[..self.n]
            .iter()
            .rposition(|t| t.line_addr == line_addr)
        {
            let t = &self.tx[i];
            return (i, t.sectors | sectors, t.lanes + 1);
        }
        // Cannot overflow: at most 2 lines per lane.
        self.tx[self.n] = Transaction {
            line_addr,
            sectors,
            lanes: 1,
        };
        self.n += 1;
        (self.n - 1, sectors, 1)
    }
}

/// Sector mask of the bytes `[lo, hi]` (inclusive offsets inside one line).
fn sector_mask(lo: u64, hi: u64) -> u32 {
    let s0 = (lo / SECTOR_BYTES as u64) as u32;
    let s1 = (hi / SECTOR_BYTES as u64) as u32;
    let n = s1 - s0 + 1;
    let ones = if n >= 32 { u32::MAX } else { (1u32 << n) - 1 };
    ones << s0
}

/// Coalesce one warp memory access into line transactions. `line_bytes` must be a power of
/// two between 32 and 1024 (at most 32 sectors per line). Lanes not in `access.mask` are
/// ignored; a lane with `bytes == 0` counts as touching one byte.
pub fn coalesce(access: &MemAccess, line_bytes: u32) -> Coalesced {
    let mut out = Coalesced::default();
    coalesce_into(access, line_bytes, &mut out);
    out
}

impl Default for Coalesced {
    fn default() -> Self {
        Coalesced {
            n: 0,
            tx: [Transaction::default(); MAX_TRANSACTIONS],
        }
    }
}

/// [`coalesce`] into an existing buffer (no copy of the result).
pub fn coalesce_into(access: &MemAccess, line_bytes: u32, out: &mut Coalesced) {
    debug_assert!(line_bytes.is_power_of_two() && (32..=1024).contains(&line_bytes));
    out.n = 0;
    let size = access.bytes.max(1) as u64;
    if size > SECTOR_BYTES as u64 {
        coalesce_general(access, line_bytes as u64, size, out);
        return;
    }
    if access.mask == u32::MAX && coalesce_consecutive(access, line_bytes as u64, size, out) {
        return;
    }
    // An access of at most one sector's bytes touches at most two sectors: the one of its
    // first byte and the one of its last. Consecutive lanes usually touch the same line as
    // the lane before; that transaction is accumulated in locals (`cur_*`, entry `cur` of
    // `out`) and written back only when a lane touches another line, so the common lane
    // costs a handful of instructions. Same transactions, same order as `coalesce_general`.
    let line = line_bytes as u64;
    let line_mask = !(line - 1);
    let mut mask = access.mask;
    let (mut cur, mut cur_line, mut cur_sectors, mut cur_lanes) = (usize::MAX, u64::MAX, 0, 0);
    while mask != 0 {
        let lane = mask.trailing_zeros() as usize;
        mask &= mask - 1;
        let first = access.addrs[lane];
        let last = first.saturating_add(size - 1);
        let line_addr = first & line_mask;
        if last - line_addr < line {
            // Offsets inside the line: both sector numbers are below 32.
            let sectors =
                (1u32 << ((first - line_addr) / 32)) | (1u32 << ((last - line_addr) / 32));
            if line_addr == cur_line {
                cur_sectors |= sectors;
                cur_lanes += 1;
                continue;
            }
            out.write_back(cur, cur_sectors, cur_lanes);
            (cur, cur_sectors, cur_lanes) = out.open(line_addr, sectors);
            cur_line = line_addr;
        } else {
            // Straddles: the tail of this line, then the head of the next (`last` is in
            // the next line: an access is at most one line long).
            out.write_back(cur, cur_sectors, cur_lanes);
            out.add(line_addr, sector_mask(first - line_addr, line - 1));
            cur_line = line_addr + line;
            (cur, cur_sectors, cur_lanes) = out.open(cur_line, sector_mask(0, last - cur_line));
        }
    }
    out.write_back(cur, cur_sectors, cur_lanes);
}

/// The full warp accessing consecutive elements (lane `l` at `addrs[0] + l * size`, `size`
/// a power of two), computed line by line instead of lane by lane: the lanes cover one
/// contiguous byte range, so each line's touched sectors are those of the range's part in
/// the line, and its lanes are those from the lane holding the part's first byte to the
/// lane holding its last. Lines come in ascending order, which is also the order of first
/// touch. Returns `false` (having written nothing) when the access is not of that shape.
fn coalesce_consecutive(access: &MemAccess, line: u64, size: u64, out: &mut Coalesced) -> bool {
    if !size.is_power_of_two() {
        return false;
    }
    let a0 = access.addrs[0];
    // The last lane first: most other shapes (a broadcast, a stride) fail here at once.
    if access.addrs[WARP_SIZE - 1] != a0.wrapping_add((WARP_SIZE as u64 - 1) * size) {
        return false;
    }
    // One OR of differences instead of 32 branches.
    let mut diff = 0;
    for (l, &a) in access.addrs.iter().enumerate() {
        diff |= a ^ a0.wrapping_add(l as u64 * size);
    }
    let Some(end) = a0.checked_add(WARP_SIZE as u64 * size) else {
        return false;
    };
    if diff != 0 {
        return false;
    }
    let shift = size.trailing_zeros();
    let last = end - 1;
    let mut line_addr = a0 & !(line - 1);
    loop {
        let lo = a0.max(line_addr);
        let hi = last.min(line_addr + (line - 1));
        out.tx[out.n] = Transaction {
            line_addr,
            sectors: sector_mask(lo - line_addr, hi - line_addr),
            lanes: (((hi - a0) >> shift) - ((lo - a0) >> shift) + 1) as u32,
        };
        out.n += 1;
        if hi == last {
            return true;
        }
        line_addr += line;
    }
}

/// The coalescing rule, lane by lane, for any access size.
fn coalesce_general(access: &MemAccess, line: u64, size: u64, out: &mut Coalesced) {
    let mut mask = access.mask;
    while mask != 0 {
        let lane = mask.trailing_zeros() as usize;
        mask &= mask - 1;
        let first = access.addrs[lane];
        let last = first.saturating_add(size - 1);
        let mut line_addr = first & !(line - 1);
        if last - line_addr < line {
            // common case: the lane stays inside one line
            out.add(line_addr, sector_mask(first - line_addr, last - line_addr));
            continue;
        }
        // A lane touches at most 2 lines while bytes <= line_bytes (always true for PTX:
        // at most 16 bytes per lane); larger spans are clipped to two lines.
        for _ in 0..2 {
            let lo = first.max(line_addr) - line_addr;
            let hi = last.min(line_addr + line - 1) - line_addr;
            out.add(line_addr, sector_mask(lo, hi));
            if last < line_addr + line {
                break;
            }
            line_addr += line;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::MemKind;
    use crate::ptx::ir::StateSpace;

    fn access(bytes: u32, f: impl Fn(usize) -> u64) -> MemAccess {
        let mut a = MemAccess {
            space: StateSpace::Global,
            kind: MemKind::Load,
            bytes,
            mask: u32::MAX,
            ..Default::default()
        };
        for (l, x) in a.addrs.iter_mut().enumerate() {
            *x = f(l);
        }
        a
    }

    #[test]
    fn fully_coalesced_is_one_transaction() {
        let c = coalesce(&access(4, |l| 0x1000 + 4 * l as u64), 128);
        assert_eq!(c.len(), 1);
        assert_eq!(
            c.as_slice()[0],
            Transaction {
                line_addr: 0x1000,
                sectors: 0b1111,
                lanes: 32
            }
        );
        assert_eq!(c.as_slice()[0].sector_bytes(), 128);
    }

    #[test]
    fn stride_128_is_32_transactions() {
        let c = coalesce(&access(4, |l| 0x2000 + 128 * l as u64), 128);
        assert_eq!(c.len(), 32);
        for (i, t) in c.iter().enumerate() {
            assert_eq!(t.line_addr, 0x2000 + 128 * i as u64);
            assert_eq!(t.sectors, 0b0001);
            assert_eq!(t.lanes, 1);
        }
    }

    #[test]
    fn misaligned_spans_two_lines() {
        let c = coalesce(&access(4, |l| 0x1040 + 4 * l as u64), 128);
        assert_eq!(c.len(), 2);
        assert_eq!(
            c.as_slice()[0],
            Transaction {
                line_addr: 0x1000,
                sectors: 0b1100,
                lanes: 16
            }
        );
        assert_eq!(
            c.as_slice()[1],
            Transaction {
                line_addr: 0x1080,
                sectors: 0b0011,
                lanes: 16
            }
        );
    }

    #[test]
    fn lane_straddling_a_line_touches_both() {
        let mut a = access(8, |_| 0x107c);
        a.mask = 1;
        let c = coalesce(&a, 128);
        assert_eq!(c.len(), 2);
        assert_eq!(c.as_slice()[0].sectors, 0b1000);
        assert_eq!(c.as_slice()[1].sectors, 0b0001);
    }

    #[test]
    fn inactive_lanes_and_broadcast() {
        let mut a = access(4, |l| 0x3000 + 4096 * l as u64);
        a.mask = 0b101;
        let c = coalesce(&a, 128);
        assert_eq!(c.len(), 2);
        assert_eq!(c.as_slice()[1].line_addr, 0x3000 + 2 * 4096);
        let b = coalesce(&access(4, |_| 0x40), 128);
        assert_eq!(
            (b.len(), b.as_slice()[0].sectors, b.as_slice()[0].lanes),
            (1, 0b0100, 32)
        );
        let mut z = a;
        z.mask = 0;
        assert!(coalesce(&z, 128).is_empty());
    }

    #[test]
    fn v4_lanes_and_small_lines() {
        // 32 lanes x 16 B contiguous = 512 B = 4 lines of 128 B, 8 lines of 64 B.
        assert_eq!(coalesce(&access(16, |l| 16 * l as u64), 128).len(), 4);
        let c = coalesce(&access(16, |l| 16 * l as u64), 64);
        assert_eq!(c.len(), 8);
        assert!(c.iter().all(|t| t.sectors == 0b11));
    }

    proptest::proptest! {
        /// The fast path gives exactly the lane-by-lane rule's transactions, in its order.
        #[test]
        fn fast_path_matches_general(
            mask in proptest::prelude::any::<u32>(),
            bytes in proptest::sample::select(vec![0u32, 1, 2, 4, 8, 16, 32]),
            line in proptest::sample::select(vec![32u32, 64, 128, 1024]),
            base in 0u64..4096,
            stride in proptest::sample::select(vec![0u64, 1, 2, 4, 8, 12, 16, 32, 100, 128]),
            jitter in proptest::collection::vec(0u64..300, 32),
            scatter in proptest::prelude::any::<bool>(),
        ) {
            let mut a = access(bytes, |l| {
                base + stride * l as u64 + if scatter { jitter[l] } else { 0 }
            });
            a.mask = mask;
            let fast = coalesce(&a, line);
            let mut slow = Coalesced::default();
            coalesce_general(&a, line as u64, a.bytes.max(1) as u64, &mut slow);
            proptest::prop_assert_eq!(fast.as_slice(), slow.as_slice());
        }

        /// The same for full warps of consecutive elements (the line-by-line path).
        #[test]
        fn consecutive_path_matches_general(
            bytes in proptest::sample::select(vec![0u32, 1, 2, 4, 8, 16, 32]),
            line in proptest::sample::select(vec![32u32, 64, 128, 1024]),
            base in 0u64..8192,
        ) {
            let size = bytes.max(1) as u64;
            let a = access(bytes, |l| base.wrapping_add(size * l as u64));
            let fast = coalesce(&a, line);
            let mut slow = Coalesced::default();
            coalesce_general(&a, line as u64, size, &mut slow);
            proptest::prop_assert_eq!(fast.as_slice(), slow.as_slice());
        }
    }
}
