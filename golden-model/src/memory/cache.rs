//! Set-associative tag array with a pluggable replacement policy (true LRU, FIFO), and an
//! MSHR table with request merging.
//! Used for both the per-SM L1 and the L2 banks. Timing-only: no data is stored.
//!
//! - Lines are identified by their line address (byte address aligned to the line size);
//!   the set is chosen by the caller from a *set key* (`set_of(key) = key % sets`), so the
//!   L2 can index with the bank-local line number (the bank-select bits removed) while the L1
//!   indexes with the global line number.
//! - Each line keeps a valid-sector mask and a dirty-sector mask (32-byte sectors), so
//!   partial writes can allocate without fetching (write-validate, GPGPU-Sim's
//!   `lazy_fetch_on_read`) and reads of sectors not present miss.
//! - Replacement: the victim is the first invalid way; among valid ways a
//!   [`ReplacementPolicy`] chooses. The tag array tells the policy about hits (`touch`),
//!   fills (`inserted`) and invalidations, and asks it for a victim in a full set. A policy
//!   is a type parameter, so the per-access calls are static and inlined (the memory
//!   hierarchy uses [`Policy`], the configured one of the built-in policies, `l1.replacement`
//!   / `l2.replacement`). Policies must be deterministic.
//! - [`Lru`]: a per-line stamp from a per-array counter, renewed on hits and fills; the victim
//!   has the smallest stamp (ties impossible). [`Fifo`]: the same stamp, renewed on fills only.

/// Location of a line in the tag array (flat index set * assoc + way).
pub type LineIdx = usize;

const INVALID: u64 = u64::MAX;

/// A line evicted to make room.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Victim {
    pub line_addr: u64,
    pub valid: u32,
    pub dirty: u32,
}

/// Which valid line of a full set a cache evicts. The tag array handles invalid ways itself
/// (they are always used first) and reports every hit, fill and invalidation.
pub trait ReplacementPolicy: Clone + std::fmt::Debug {
    /// Line `idx` was hit (read or a write that keeps the line).
    fn touch(&mut self, idx: LineIdx);
    /// Line `idx` was just filled with a new line.
    fn inserted(&mut self, idx: LineIdx);
    /// Line `idx` was invalidated.
    fn invalidated(&mut self, idx: LineIdx);
    /// The line to evict among the `assoc` valid lines `base..base + assoc` of a full set.
    fn victim(&self, base: LineIdx, assoc: usize) -> LineIdx;
}

/// True LRU: a stamp per line from a per-array counter, renewed on hits and fills.
#[derive(Debug, Clone)]
pub struct Lru {
    stamp: Vec<u64>,
    clock: u64,
}

impl Lru {
    pub fn new(lines: usize) -> Lru {
        Lru {
            stamp: vec![0; lines],
            clock: 0,
        }
    }

    #[inline]
    fn renew(&mut self, idx: LineIdx) {
        self.clock += 1;
        self.stamp[idx] = self.clock;
    }

    /// The line of `base..base + assoc` with the smallest stamp (the first one on a tie).
    #[inline]
    fn oldest(&self, base: LineIdx, assoc: usize) -> LineIdx {
        let stamps = &self.stamp[base..base + assoc];
        let mut best = 0;
        for (w, &st) in stamps.iter().enumerate() {
            if st < stamps[best] {
                best = w;
            }
        }
        base + best
    }
}

impl ReplacementPolicy for Lru {
    #[inline]
    fn touch(&mut self, idx: LineIdx) {
        self.renew(idx);
    }
    #[inline]
    fn inserted(&mut self, idx: LineIdx) {
        self.renew(idx);
    }
    #[inline]
    fn invalidated(&mut self, idx: LineIdx) {
        self.stamp[idx] = 0;
    }
    #[inline]
    fn victim(&self, base: LineIdx, assoc: usize) -> LineIdx {
        self.oldest(base, assoc)
    }
}

/// FIFO: the oldest fill is evicted, hits change nothing.
#[derive(Debug, Clone)]
pub struct Fifo(Lru);

impl Fifo {
    pub fn new(lines: usize) -> Fifo {
        Fifo(Lru::new(lines))
    }
}

impl ReplacementPolicy for Fifo {
    #[inline]
    fn touch(&mut self, _idx: LineIdx) {}
    #[inline]
    fn inserted(&mut self, idx: LineIdx) {
        self.0.renew(idx);
    }
    #[inline]
    fn invalidated(&mut self, idx: LineIdx) {
        self.0.invalidated(idx);
    }
    #[inline]
    fn victim(&self, base: LineIdx, assoc: usize) -> LineIdx {
        self.0.oldest(base, assoc)
    }
}

/// The built-in policies, chosen by configuration (`l1.replacement`, `l2.replacement`).
#[derive(Debug, Clone)]
pub enum Policy {
    Lru(Lru),
    Fifo(Fifo),
}

impl Policy {
    pub fn new(kind: crate::config::Replacement, lines: usize) -> Policy {
        match kind {
            crate::config::Replacement::Lru => Policy::Lru(Lru::new(lines)),
            crate::config::Replacement::Fifo => Policy::Fifo(Fifo::new(lines)),
        }
    }
}

impl ReplacementPolicy for Policy {
    #[inline]
    fn touch(&mut self, idx: LineIdx) {
        match self {
            Policy::Lru(p) => p.touch(idx),
            Policy::Fifo(p) => p.touch(idx),
        }
    }
    #[inline]
    fn inserted(&mut self, idx: LineIdx) {
        match self {
            Policy::Lru(p) => p.inserted(idx),
            Policy::Fifo(p) => p.inserted(idx),
        }
    }
    #[inline]
    fn invalidated(&mut self, idx: LineIdx) {
        match self {
            Policy::Lru(p) => p.invalidated(idx),
            Policy::Fifo(p) => p.invalidated(idx),
        }
    }
    #[inline]
    fn victim(&self, base: LineIdx, assoc: usize) -> LineIdx {
        match self {
            Policy::Lru(p) => p.victim(base, assoc),
            Policy::Fifo(p) => p.victim(base, assoc),
        }
    }
}

#[derive(Debug, Clone)]
pub struct TagArray<P: ReplacementPolicy = Lru> {
    sets: usize,
    assoc: usize,
    tags: Vec<u64>,
    valid: Vec<u32>,
    dirty: Vec<u32>,
    policy: P,
}

impl TagArray<Lru> {
    /// An LRU tag array; `sets` must be a power of two.
    pub fn new(sets: usize, assoc: usize) -> TagArray<Lru> {
        TagArray::with_policy(sets, assoc, Lru::new(sets * assoc))
    }
}

impl<P: ReplacementPolicy> TagArray<P> {
    /// A tag array with replacement `policy` (sized for `sets * assoc` lines); `sets` must be
    /// a power of two.
    pub fn with_policy(sets: usize, assoc: usize, policy: P) -> TagArray<P> {
        assert!(sets.is_power_of_two() && assoc > 0);
        let n = sets * assoc;
        TagArray {
            sets,
            assoc,
            tags: vec![INVALID; n],
            valid: vec![0; n],
            dirty: vec![0; n],
            policy,
        }
    }

    pub fn sets(&self) -> usize {
        self.sets
    }

    pub fn assoc(&self) -> usize {
        self.assoc
    }

    /// Set of a set key (global or bank-local line number).
    pub fn set_of(&self, key: u64) -> usize {
        (key as usize) & (self.sets - 1)
    }

    /// The way of a line within its set.
    #[inline]
    pub fn way_of(&self, idx: LineIdx) -> usize {
        idx % self.assoc
    }

    /// Find a line (valid tag) in `set`. Does not update LRU.
    pub fn probe(&self, set: usize, line_addr: u64) -> Option<LineIdx> {
        let base = set * self.assoc;
        // (One slice of the set: one bounds check, not one per way.)
        self.tags[base..base + self.assoc]
            .iter()
            .position(|&t| t == line_addr)
            .map(|w| base + w)
    }

    /// A hit on a line (LRU: now most recently used).
    #[inline]
    pub fn touch(&mut self, idx: LineIdx) {
        self.policy.touch(idx);
    }

    pub fn valid_sectors(&self, idx: LineIdx) -> u32 {
        self.valid[idx]
    }

    pub fn dirty_sectors(&self, idx: LineIdx) -> u32 {
        self.dirty[idx]
    }

    /// Add valid sectors (fill) and dirty sectors (write) to a present line.
    pub fn update(&mut self, idx: LineIdx, valid: u32, dirty: u32) {
        self.valid[idx] |= valid | dirty;
        self.dirty[idx] |= dirty;
    }

    /// The way to evict from `set`: the first invalid way, else the policy's victim.
    pub fn victim_way(&self, set: usize) -> LineIdx {
        let base = set * self.assoc;
        match self.tags[base..base + self.assoc]
            .iter()
            .position(|&t| t == INVALID)
        {
            Some(w) => base + w,
            None => self.policy.victim(base, self.assoc),
        }
    }

    /// Allocate `line_addr` in `set` (must not be present) with the given sectors, evicting
    /// the victim way (LRU: the new line is most recently used). Returns its index and the evicted
    /// line, if a valid one was replaced.
    pub fn insert(
        &mut self,
        set: usize,
        line_addr: u64,
        valid: u32,
        dirty: u32,
    ) -> (LineIdx, Option<Victim>) {
        debug_assert!(self.probe(set, line_addr).is_none());
        let i = self.victim_way(set);
        let victim = (self.tags[i] != INVALID).then(|| Victim {
            line_addr: self.tags[i],
            valid: self.valid[i],
            dirty: self.dirty[i],
        });
        self.tags[i] = line_addr;
        self.valid[i] = valid | dirty;
        self.dirty[i] = dirty;
        self.policy.inserted(i);
        (i, victim)
    }

    /// Drop a line (write-evict).
    pub fn invalidate(&mut self, idx: LineIdx) {
        self.tags[idx] = INVALID;
        self.valid[idx] = 0;
        self.dirty[idx] = 0;
        self.policy.invalidated(idx);
    }
}

/// Index of an MSHR entry.
pub type MshrIdx = u16;

/// Line address of a free MSHR entry (never an aligned line address in use).
const FREE: u64 = u64::MAX;

/// Miss status holding registers: one entry per outstanding line, each holding up to
/// `max_merge` requests (the first miss plus merged ones). Lookup is a scan of a compact
/// array of line addresses (tables are small: 32 on Fermi), skipped when a per-bucket count
/// of the entries' line hashes shows no entry can match (the common miss to a new line).
/// Entries are allocated lowest free index first.
#[derive(Debug, Clone)]
pub struct MshrTable<W> {
    /// Line address per entry, `FREE` when unused.
    lines: Vec<u64>,
    /// Waiters per entry, `max_merge` slots each (flat).
    waiters: Vec<W>,
    /// Number of waiters per entry.
    count: Vec<u16>,
    max_merge: usize,
    used: usize,
    /// Entries in use per hash bucket of their line address (see [`bucket`]).
    buckets: [u16; 64],
}

/// The hash bucket of a line address (Fibonacci hashing: all address bits matter).
#[inline(always)]
fn bucket(line_addr: u64) -> usize {
    (line_addr.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 58) as usize
}

impl<W: Copy + Default> MshrTable<W> {
    pub fn new(entries: usize, max_merge: usize) -> MshrTable<W> {
        assert!(entries > 0 && entries <= MshrIdx::MAX as usize && max_merge > 0);
        assert!(max_merge <= u16::MAX as usize);
        MshrTable {
            lines: vec![FREE; entries],
            waiters: vec![W::default(); entries * max_merge],
            count: vec![0; entries],
            max_merge,
            used: 0,
            buckets: [0; 64],
        }
    }

    #[inline]
    pub fn find(&self, line_addr: u64) -> Option<MshrIdx> {
        if self.buckets[bucket(line_addr)] == 0 {
            return None;
        }
        debug_assert!(line_addr != FREE);
        self.lines
            .iter()
            .position(|&l| l == line_addr)
            .map(|i| i as MshrIdx)
    }

    /// Entries in use.
    pub fn used(&self) -> usize {
        self.used
    }

    pub fn free(&self) -> usize {
        self.lines.len() - self.used
    }

    pub fn is_full(&self) -> bool {
        self.used == self.lines.len()
    }

    /// Can one more request merge into entry `idx`?
    #[inline]
    pub fn can_merge(&self, idx: MshrIdx) -> bool {
        (self.count[idx as usize] as usize) < self.max_merge
    }

    pub fn merge(&mut self, idx: MshrIdx, w: W) {
        let i = idx as usize;
        let n = self.count[i] as usize;
        assert!(
            self.lines[i] != FREE && n < self.max_merge,
            "MSHR merge over capacity"
        );
        self.waiters[i * self.max_merge + n] = w;
        self.count[i] += 1;
    }

    /// Allocate an entry for `line_addr` (caller checked `!is_full()` and `find` is None).
    pub fn allocate(&mut self, line_addr: u64, w: W) -> MshrIdx {
        debug_assert!(line_addr != FREE);
        let i = self
            .lines
            .iter()
            .position(|&l| l == FREE)
            .expect("MSHR table full");
        self.lines[i] = line_addr;
        self.waiters[i * self.max_merge] = w;
        self.count[i] = 1;
        self.used += 1;
        self.buckets[bucket(line_addr)] += 1;
        i as MshrIdx
    }

    pub fn line_of(&self, idx: MshrIdx) -> u64 {
        self.lines[idx as usize]
    }

    /// Free entry `idx`, appending its waiters (in arrival order) to `out`.
    pub fn release(&mut self, idx: MshrIdx, out: &mut Vec<W>) {
        let i = idx as usize;
        assert!(self.lines[i] != FREE, "release of a free MSHR");
        self.buckets[bucket(self.lines[i])] -= 1;
        self.lines[i] = FREE;
        let base = i * self.max_merge;
        out.extend_from_slice(&self.waiters[base..base + self.count[i] as usize]);
        self.count[i] = 0;
        self.used -= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_indexing_and_lru_replacement() {
        // 4 sets x 2 ways, 128 B lines: lines 0, 4, 8 (x128) map to set 0.
        let mut t = TagArray::new(4, 2);
        let line = |n: u64| n * 128;
        assert_eq!(t.set_of(5), 1);
        assert_eq!(t.set_of(8), 0);
        let (a, v) = t.insert(0, line(0), 0xf, 0);
        assert!(v.is_none());
        let (_b, v) = t.insert(0, line(4), 0xf, 0);
        assert!(v.is_none());
        // A line in another set does not disturb set 0.
        t.insert(1, line(1), 0xf, 0);
        // Touch line 0 so line 4 becomes LRU.
        t.touch(a);
        let (_, v) = t.insert(0, line(8), 0xf, 0);
        assert_eq!(v.unwrap().line_addr, line(4));
        assert!(t.probe(0, line(0)).is_some());
        assert!(t.probe(0, line(4)).is_none());
        assert!(t.probe(1, line(1)).is_some());
        // Now line 0 is LRU (line 8 just inserted).
        let (_, v) = t.insert(0, line(12), 0xf, 0b0011);
        assert_eq!(v.unwrap().line_addr, line(0));
        let i = t.probe(0, line(12)).unwrap();
        assert_eq!((t.valid_sectors(i), t.dirty_sectors(i)), (0xf, 0b0011));
        // Evicting a dirty line reports its dirty sectors.
        t.touch(i);
        let (_, v) = t.insert(0, line(16), 0xf, 0);
        assert_eq!(v.unwrap().line_addr, line(8));
        let (_, v) = t.insert(0, line(20), 0xf, 0);
        assert_eq!(
            v,
            Some(Victim {
                line_addr: line(12),
                valid: 0xf,
                dirty: 0b0011
            })
        );
    }

    #[test]
    fn fifo_ignores_hits() {
        let mut t = TagArray::with_policy(1, 2, Fifo::new(2));
        let (a, _) = t.insert(0, 0, 1, 0);
        t.insert(0, 128, 1, 0);
        t.touch(a); // LRU would now evict line 128; FIFO still evicts the older fill
        let (_, v) = t.insert(0, 256, 1, 0);
        assert_eq!(v.unwrap().line_addr, 0);
        let mut l = TagArray::new(1, 2);
        let (a, _) = l.insert(0, 0, 1, 0);
        l.insert(0, 128, 1, 0);
        l.touch(a);
        let (_, v) = l.insert(0, 256, 1, 0);
        assert_eq!(v.unwrap().line_addr, 128);
    }

    #[test]
    fn invalidated_way_is_reused_first() {
        let mut t = TagArray::new(1, 2);
        let (a, _) = t.insert(0, 0, 1, 0);
        t.insert(0, 128, 1, 0);
        t.invalidate(a);
        let (c, v) = t.insert(0, 256, 1, 0);
        assert_eq!((c, v), (a, None));
    }

    #[test]
    fn mshr_merge_and_full() {
        let mut m: MshrTable<u32> = MshrTable::new(2, 3);
        assert_eq!(m.find(0x80), None);
        let i = m.allocate(0x80, 1);
        assert_eq!(m.find(0x80), Some(i));
        assert!(m.can_merge(i));
        m.merge(i, 2);
        m.merge(i, 3);
        assert!(!m.can_merge(i), "merge limit counts the first request");
        let j = m.allocate(0x100, 9);
        assert!(m.is_full());
        assert_eq!(m.free(), 0);
        let mut out = Vec::new();
        m.release(i, &mut out);
        assert_eq!(out, vec![1, 2, 3]);
        assert_eq!(m.find(0x80), None);
        assert!(!m.is_full());
        assert_eq!(m.allocate(0x180, 4), i, "lowest free entry reused");
        assert_eq!(m.line_of(j), 0x100);
    }
}
