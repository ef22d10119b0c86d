//! spmv: `y = A x` for a seeded random CSR matrix, one thread per row (scalar CSR). Row
//! lengths are skewed (most rows short, some long), so warps diverge on the trip count and
//! gather `x` at random columns.

use crate::rng::SplitMix64;
use crate::{
    blocks_for, check_f32, Category, Dim3, Host, KernelArg, Size, Tolerance, Verification, Workload,
};
use warpforge_model::error::SimError;

crate::workload!(
    Spmv,
    "spmv",
    Category::IrregularMemory,
    "CSR sparse matrix-vector product, one thread per row, skewed row lengths, random gathers"
);

const BLOCK: u32 = 128;
/// The reference repeats the kernel's fma chain in column order: bit-identical expected.
const TOL: Tolerance = Tolerance {
    rel: 1e-5,
    abs: 1e-5,
};

pub(crate) fn rows(size: Size) -> usize {
    size.pick(256, 4096, 64 * 1024)
}

pub(crate) struct Csr {
    pub row_ptr: Vec<i32>,
    pub cols: Vec<i32>,
    pub vals: Vec<f32>,
}

/// Square matrix: 90% of rows have 0-7 entries, 10% have 16-63; sorted distinct columns.
pub(crate) fn inputs(n: usize, seed: u64) -> (Csr, Vec<f32>) {
    let mut g = SplitMix64::for_stream(seed, "spmv.matrix");
    let mut row_ptr = vec![0i32];
    let (mut cols, mut vals) = (Vec::new(), Vec::new());
    for _ in 0..n {
        let len = if g.below(10) == 0 {
            16 + g.below(48)
        } else {
            g.below(8)
        } as usize;
        let mut row: Vec<i32> = (0..len.min(n)).map(|_| g.below(n as u32) as i32).collect();
        row.sort_unstable();
        row.dedup();
        for c in row {
            cols.push(c);
            vals.push(g.range_f32(-1.0, 1.0));
        }
        row_ptr.push(cols.len() as i32);
    }
    let mut gx = SplitMix64::for_stream(seed, "spmv.x");
    let x = (0..n).map(|_| gx.range_f32(-1.0, 1.0)).collect();
    (
        Csr {
            row_ptr,
            cols,
            vals,
        },
        x,
    )
}

pub(crate) fn reference(a: &Csr, x: &[f32]) -> Vec<f32> {
    (0..a.row_ptr.len() - 1)
        .map(|r| {
            let mut sum = 0.0f32;
            for j in a.row_ptr[r] as usize..a.row_ptr[r + 1] as usize {
                sum = a.vals[j].mul_add(x[a.cols[j] as usize], sum);
            }
            sum
        })
        .collect()
}

fn run_impl(
    w: &Spmv,
    host: &mut dyn Host,
    size: Size,
    seed: u64,
) -> Result<Verification, SimError> {
    let n = rows(size);
    let (a, x) = inputs(n, seed);
    let m = host.load_module(w.ptx_file(), w.ptx())?;
    let drp = host.alloc_write_i32(&a.row_ptr)?;
    let dcols = host.alloc_write_i32(&a.cols)?;
    let dvals = host.alloc_write_f32(&a.vals)?;
    let dx = host.alloc_write_f32(&x)?;
    let dy = host.alloc(n as u64 * 4)?;
    host.launch(
        m,
        "spmv_csr",
        Dim3::x(blocks_for(n, BLOCK)),
        Dim3::x(BLOCK),
        0,
        &[
            KernelArg::S32(n as i32),
            KernelArg::Ptr(drp),
            KernelArg::Ptr(dcols),
            KernelArg::Ptr(dvals),
            KernelArg::Ptr(dx),
            KernelArg::Ptr(dy),
        ],
    )?;
    let got = host.read_f32(dy, n)?;
    Ok(check_f32("y", &reference(&a, &x), &got, TOL))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_multiplies() {
        // [[2, 0, 1], [0, 0, 0], [0, 3, 0]] * [1, 2, 3] = [5, 0, 6]
        let a = Csr {
            row_ptr: vec![0, 2, 2, 3],
            cols: vec![0, 2, 1],
            vals: vec![2.0, 1.0, 3.0],
        };
        assert_eq!(reference(&a, &[1.0, 2.0, 3.0]), vec![5.0, 0.0, 6.0]);
    }

    #[test]
    fn inputs_are_deterministic_and_valid() {
        let (a, x) = inputs(500, 4);
        let (b, y) = inputs(500, 4);
        assert_eq!(
            (&a.row_ptr, &a.cols, &a.vals, &x),
            (&b.row_ptr, &b.cols, &b.vals, &y)
        );
        assert_ne!(a.cols, inputs(500, 5).0.cols);
        assert_eq!(a.row_ptr.len(), 501);
        assert!(a.row_ptr.windows(2).all(|w| w[0] <= w[1]));
        assert!(a.cols.iter().all(|&c| (0..500).contains(&c)));
        let longest = a.row_ptr.windows(2).map(|w| w[1] - w[0]).max().unwrap();
        assert!(longest >= 16, "skewed rows expected");
    }
}
