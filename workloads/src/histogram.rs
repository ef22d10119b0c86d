//! histogram: 256-bin histogram of skewed bytes; per-block shared-memory atomics, then one
//! global atomic add per non-empty bin.

use crate::rng::SplitMix64;
use crate::{check_exact, Category, Dim3, Host, KernelArg, Size, Verification, Workload};
use warpforge_model::error::SimError;

crate::workload!(
    Histogram,
    "histogram",
    Category::IrregularMemory,
    "256-bin histogram of skewed bytes: contended shared-memory atomics, then global atomics"
);

const BLOCK: u32 = 256;
const BINS: usize = 256;

/// (n, grid): a grid-stride loop covers n.
pub(crate) fn params(size: Size) -> (usize, u32) {
    size.pick((4096, 4), (64 * 1024, 32), (2 << 20, 240))
}

/// Skewed bytes: 40% fall in 4 hot bins, 30% in 32 warm bins, 30% uniform.
pub(crate) fn inputs(n: usize, seed: u64) -> Vec<u8> {
    let mut g = SplitMix64::for_stream(seed, "histogram.data");
    (0..n)
        .map(|_| {
            let class = g.below(10);
            (if class < 4 {
                g.below(4) * 17
            } else if class < 7 {
                64 + g.below(32)
            } else {
                g.below(256)
            }) as u8
        })
        .collect()
}

pub(crate) fn reference(data: &[u8]) -> Vec<i32> {
    let mut h = vec![0i32; BINS];
    for &b in data {
        h[b as usize] += 1;
    }
    h
}

fn run_impl(
    w: &Histogram,
    host: &mut dyn Host,
    size: Size,
    seed: u64,
) -> Result<Verification, SimError> {
    let (n, grid) = params(size);
    let data = inputs(n, seed);
    let m = host.load_module(w.ptx_file(), w.ptx())?;
    let ddata = host.alloc(n as u64)?;
    host.write_bytes(ddata, &data)?;
    let dhist = host.alloc((BINS * 4) as u64)?; // zero-filled
    host.launch(
        m,
        "histogram",
        Dim3::x(grid),
        Dim3::x(BLOCK),
        0,
        &[
            KernelArg::Ptr(ddata),
            KernelArg::S32(n as i32),
            KernelArg::Ptr(dhist),
        ],
    )?;
    let got = host.read_i32(dhist, BINS)?;
    Ok(check_exact("bin", &reference(&data), &got))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_counts() {
        let h = reference(&[0, 3, 3, 255]);
        assert_eq!((h[0], h[3], h[255], h.iter().sum::<i32>()), (1, 2, 1, 4));
    }

    #[test]
    fn inputs_are_deterministic_and_skewed() {
        assert_eq!(inputs(100, 9), inputs(100, 9));
        assert_ne!(inputs(100, 9), inputs(100, 10));
        let h = reference(&inputs(100_000, 1));
        // Each hot bin gets ~10% of the data, a uniform bin ~0.1%.
        assert!(h[17] > 5_000 && h[200] < 1_000, "{} {}", h[17], h[200]);
    }
}
