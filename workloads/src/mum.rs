//! mum: MUMmer-like exact matching of short reads against a DNA reference (the irregular
//! shape of MUMmerGPU, MUM in the thread-block-compaction study, with a suffix array built on
//! the host in place of its suffix tree). One thread per read walks it greedily: the longest
//! prefix of read[s..] found anywhere in the reference (binary search over the suffix
//! array, each probe a character loop up to the first mismatch), kept when at least 10 long,
//! then s jumps past the mismatch. Reads are a mix of mutated copies of the reference (few,
//! long matches) and random strings (many short searches), so the walk's trip count, the
//! search's path and every probe's length are data-dependent per lane.

use crate::rng::SplitMix64;
use crate::{check_exact, Category, Dim3, Host, KernelArg, Size, Verification, Workload};
use warpforge_model::error::SimError;

crate::workload!(
    Mum,
    "mum",
    Category::Divergent,
    "MUMmer-like read matching: per-thread greedy walk, suffix-array binary search, data-dependent character loops"
);

const BLOCK: u32 = 64;
pub(crate) const MIN_MATCH: usize = 10;
pub(crate) const MAX_MATCHES: usize = 8;
const READ_LEN: (u32, u32) = (24, 64);

/// (reference length, reads).
pub(crate) fn params(size: Size) -> (usize, usize) {
    size.pick((1024, 64), (16 * 1024, 1024), (64 * 1024, 1024))
}

pub(crate) struct Inputs {
    /// Bases as codes 0..=3.
    pub reference: Vec<u8>,
    /// Suffix array of `reference`.
    pub sa: Vec<u32>,
    /// All reads back to back; read q is `reads[off[q]..off[q + 1]]`.
    pub reads: Vec<u8>,
    pub off: Vec<u32>,
}

pub(crate) fn suffix_array(s: &[u8]) -> Vec<u32> {
    let mut sa: Vec<u32> = (0..s.len() as u32).collect();
    sa.sort_unstable_by(|&a, &b| s[a as usize..].cmp(&s[b as usize..]));
    sa
}

pub(crate) fn inputs(rlen: usize, nreads: usize, seed: u64) -> Inputs {
    let mut g = SplitMix64::for_stream(seed, "mum.reference");
    let reference: Vec<u8> = (0..rlen).map(|_| g.below(4) as u8).collect();
    let mut g = SplitMix64::for_stream(seed, "mum.reads");
    let (mut reads, mut off) = (Vec::new(), vec![0u32]);
    for _ in 0..nreads {
        let len = g.range_i32(READ_LEN.0 as i32, READ_LEN.1 as i32) as usize;
        if g.below(5) < 3 {
            // A copy of the reference with about one substitution in 12 bases.
            let start = g.below((rlen - len) as u32) as usize;
            for &b in &reference[start..start + len] {
                let b = if g.below(12) == 0 {
                    (b + 1 + g.below(3) as u8) % 4
                } else {
                    b
                };
                reads.push(b);
            }
        } else {
            reads.extend((0..len).map(|_| g.below(4) as u8));
        }
        off.push(reads.len() as u32);
    }
    Inputs {
        sa: suffix_array(&reference),
        reference,
        reads,
        off,
    }
}

fn common_prefix(r: &[u8], pos: usize, p: &[u8]) -> usize {
    r[pos..].iter().zip(p).take_while(|(a, b)| a == b).count()
}

/// The longest prefix of `p` occurring in `r`: (length, position), as `mum_match` finds it
/// (of the two suffixes around the insertion point the lower one wins ties).
pub(crate) fn longest_match(r: &[u8], sa: &[u32], p: &[u8]) -> (usize, usize) {
    let (mut lo, mut hi) = (0, r.len());
    while lo < hi {
        let mid = (lo + hi) / 2;
        let pos = sa[mid] as usize;
        let m = common_prefix(r, pos, p);
        let less = m < p.len() && (pos + m == r.len() || r[pos + m] < p[m]);
        if less {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    let (mut best, mut best_pos) = (0, 0);
    if lo < r.len() {
        best_pos = sa[lo] as usize;
        best = common_prefix(r, best_pos, p);
    }
    if lo > 0 {
        let pos = sa[lo - 1] as usize;
        let m = common_prefix(r, pos, p);
        if m > best {
            (best, best_pos) = (m, pos);
        }
    }
    (best, best_pos)
}

/// Per-read results: (count, start, length, position) with MAX_MATCHES slots per read
/// (unused slots 0).
pub(crate) type Matches = (Vec<i32>, Vec<i32>, Vec<i32>, Vec<i32>);

pub(crate) fn reference(inp: &Inputs) -> Matches {
    let nq = inp.off.len() - 1;
    let slots = nq * MAX_MATCHES;
    let (mut count, mut start, mut len, mut pos) =
        (vec![0; nq], vec![0; slots], vec![0; slots], vec![0; slots]);
    for (q, c) in count.iter_mut().enumerate() {
        let read = &inp.reads[inp.off[q] as usize..inp.off[q + 1] as usize];
        let (mut s, mut found) = (0, 0);
        while s + MIN_MATCH <= read.len() && found < MAX_MATCHES {
            let (best, at) = longest_match(&inp.reference, &inp.sa, &read[s..]);
            if best >= MIN_MATCH {
                let slot = q * MAX_MATCHES + found;
                (start[slot], len[slot], pos[slot]) = (s as i32, best as i32, at as i32);
                found += 1;
            }
            s += best + 1;
        }
        *c = found as i32;
    }
    (count, start, len, pos)
}

fn alloc_write_u8(host: &mut dyn Host, data: &[u8]) -> Result<crate::DevPtr, SimError> {
    let p = host.alloc(data.len() as u64)?;
    host.write_bytes(p, data)?;
    Ok(p)
}

fn run_impl(w: &Mum, host: &mut dyn Host, size: Size, seed: u64) -> Result<Verification, SimError> {
    let (rlen, nq) = params(size);
    let inp = inputs(rlen, nq, seed);
    let m = host.load_module(w.ptx_file(), w.ptx())?;
    let dref = alloc_write_u8(host, &inp.reference)?;
    let dsa = host.alloc_write_u32(&inp.sa)?;
    let dreads = alloc_write_u8(host, &inp.reads)?;
    let doff = host.alloc_write_u32(&inp.off)?;
    let slots = nq * MAX_MATCHES;
    let dcount = host.alloc_write_i32(&vec![0; nq])?;
    let zeros = vec![0; slots];
    let (dstart, dlen, dpos) = (
        host.alloc_write_i32(&zeros)?,
        host.alloc_write_i32(&zeros)?,
        host.alloc_write_i32(&zeros)?,
    );
    host.launch(
        m,
        "mum_match",
        Dim3::x(crate::blocks_for(nq, BLOCK)),
        Dim3::x(BLOCK),
        0,
        &[
            KernelArg::Ptr(dref),
            KernelArg::S32(rlen as i32),
            KernelArg::Ptr(dsa),
            KernelArg::Ptr(dreads),
            KernelArg::Ptr(doff),
            KernelArg::S32(nq as i32),
            KernelArg::Ptr(dcount),
            KernelArg::Ptr(dstart),
            KernelArg::Ptr(dlen),
            KernelArg::Ptr(dpos),
        ],
    )?;
    let (count, start, len, pos) = reference(&inp);
    Ok(Verification::all(vec![
        check_exact("count", &count, &host.read_i32(dcount, nq)?),
        check_exact("start", &start, &host.read_i32(dstart, slots)?),
        check_exact("length", &len, &host.read_i32(dlen, slots)?),
        check_exact("position", &pos, &host.read_i32(dpos, slots)?),
    ]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suffix_array_is_sorted() {
        let s = [2u8, 0, 1, 0, 1, 0];
        let sa = suffix_array(&s);
        assert_eq!(sa, vec![5, 3, 1, 4, 2, 0]);
    }

    /// The binary search finds the longest prefix that a brute-force scan finds, and the
    /// position it reports really matches.
    #[test]
    fn longest_match_agrees_with_brute_force() {
        let inp = inputs(1024, 200, 3);
        for q in 0..200 {
            let read = &inp.reads[inp.off[q] as usize..inp.off[q + 1] as usize];
            for s in [0, 5, 13] {
                let p = &read[s..];
                let (best, at) = longest_match(&inp.reference, &inp.sa, p);
                let brute = (0..inp.reference.len())
                    .map(|i| common_prefix(&inp.reference, i, p))
                    .max()
                    .unwrap();
                assert_eq!(best, brute, "read {q} offset {s}");
                assert_eq!(&inp.reference[at..at + best], &p[..best]);
            }
        }
    }

    #[test]
    fn copied_reads_match_long_and_random_reads_do_not() {
        let inp = inputs(4096, 300, 5);
        let (count, _, len, _) = reference(&inp);
        assert!(
            count.iter().filter(|&&c| c == 0).count() > 30,
            "random reads"
        );
        assert!(
            count.iter().filter(|&&c| c >= 2).count() > 30,
            "mutated copies"
        );
        assert!(len.iter().all(|&l| l == 0 || l as usize >= MIN_MATCH));
        assert!(len.iter().any(|&l| l >= 30));
    }

    #[test]
    fn inputs_are_deterministic() {
        assert_eq!(inputs(512, 10, 1).reads, inputs(512, 10, 1).reads);
        assert_ne!(inputs(512, 10, 1).reads, inputs(512, 10, 2).reads);
    }
}
