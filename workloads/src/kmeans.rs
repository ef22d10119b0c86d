//! kmeans: Rodinia-style k-means. Each launch assigns every point to its nearest centroid
//! (a loop over clusters and features per thread); the host recomputes the centroids from
//! the device's assignment between launches.

use crate::rng::SplitMix64;
use crate::{
    blocks_for, check_exact, Category, Dim3, Host, KernelArg, Size, Verification, Workload,
};
use warpforge_model::error::SimError;

crate::workload!(
    Kmeans,
    "kmeans",
    Category::IrregularMemory,
    "k-means assignment (nearest of 5 centroids over 8 features), host centroid update, several launches"
);

const BLOCK: u32 = 256;
pub(crate) const CLUSTERS: usize = 5;
pub(crate) const FEATURES: usize = 8;

/// (points, iterations).
pub(crate) fn params(size: Size) -> (usize, usize) {
    size.pick((512, 2), (4096, 3), (32 * 1024, 3))
}

/// Points around CLUSTERS random centres, stored transposed: `f[d * npoints + p]`.
pub(crate) fn inputs(npoints: usize, seed: u64) -> Vec<f32> {
    let mut g = SplitMix64::for_stream(seed, "kmeans.points");
    let centres: Vec<f32> = (0..CLUSTERS * FEATURES)
        .map(|_| g.range_f32(-10.0, 10.0))
        .collect();
    let mut f = vec![0.0f32; npoints * FEATURES];
    for p in 0..npoints {
        let c = g.below(CLUSTERS as u32) as usize;
        for d in 0..FEATURES {
            f[d * npoints + p] = centres[c * FEATURES + d] + g.range_f32(-4.0, 4.0);
        }
    }
    f
}

/// Nearest centroid per point, exactly as the kernel computes it (fma accumulation in
/// feature order, strict `<` so the first of equal distances wins).
pub(crate) fn assign(features: &[f32], centroids: &[f32], npoints: usize) -> Vec<i32> {
    (0..npoints)
        .map(|p| {
            let (mut best, mut best_dist) = (0i32, 3.0e38f32);
            for c in 0..CLUSTERS {
                let mut dist = 0.0f32;
                for d in 0..FEATURES {
                    let diff = features[d * npoints + p] - centroids[c * FEATURES + d];
                    dist = diff.mul_add(diff, dist);
                }
                if dist < best_dist {
                    best_dist = dist;
                    best = c as i32;
                }
            }
            best
        })
        .collect()
}

/// Host-side centroid update: the mean of the members (f64 sums); empty clusters keep
/// their centroid.
pub(crate) fn update(features: &[f32], membership: &[i32], old: &[f32]) -> Vec<f32> {
    let npoints = membership.len();
    let mut sums = vec![0.0f64; CLUSTERS * FEATURES];
    let mut counts = [0usize; CLUSTERS];
    for (p, &c) in membership.iter().enumerate() {
        let c = (c.max(0) as usize).min(CLUSTERS - 1);
        counts[c] += 1;
        for d in 0..FEATURES {
            sums[c * FEATURES + d] += features[d * npoints + p] as f64;
        }
    }
    (0..CLUSTERS * FEATURES)
        .map(|i| {
            let n = counts[i / FEATURES];
            if n == 0 {
                old[i]
            } else {
                (sums[i] / n as f64) as f32
            }
        })
        .collect()
}

/// Initial centroids: the first CLUSTERS points (as Rodinia does).
pub(crate) fn initial_centroids(features: &[f32], npoints: usize) -> Vec<f32> {
    (0..CLUSTERS * FEATURES)
        .map(|i| features[(i % FEATURES) * npoints + i / FEATURES])
        .collect()
}

fn run_impl(
    w: &Kmeans,
    host: &mut dyn Host,
    size: Size,
    seed: u64,
) -> Result<Verification, SimError> {
    let (npoints, iterations) = params(size);
    let features = inputs(npoints, seed);
    let m = host.load_module(w.ptx_file(), w.ptx())?;
    let dfeat = host.alloc_write_f32(&features)?;
    let mut centroids = initial_centroids(&features, npoints);
    let dcent = host.alloc_write_f32(&centroids)?;
    let dmember = host.alloc(npoints as u64 * 4)?;
    let mut checks = Vec::new();
    for it in 0..iterations {
        host.write_f32(dcent, &centroids)?;
        host.launch(
            m,
            "kmeans_assign",
            Dim3::x(blocks_for(npoints, BLOCK)),
            Dim3::x(BLOCK),
            0,
            &[
                KernelArg::Ptr(dfeat),
                KernelArg::Ptr(dcent),
                KernelArg::Ptr(dmember),
                KernelArg::S32(npoints as i32),
                KernelArg::S32(CLUSTERS as i32),
                KernelArg::S32(FEATURES as i32),
            ],
        )?;
        let got = host.read_i32(dmember, npoints)?;
        let expected = assign(&features, &centroids, npoints);
        let check = check_exact(&format!("iteration {it} membership"), &expected, &got);
        let failed = !check.passed;
        checks.push(check);
        if failed {
            break;
        }
        centroids = update(&features, &got, &centroids);
    }
    Ok(Verification::all(checks))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assign_picks_nearest_and_first_on_ties() {
        // Two points (transposed layout), centroids 0 at origin, 1 at all-ones, others far.
        let npoints = 2;
        let mut f = vec![0.0f32; npoints * FEATURES];
        for d in 0..FEATURES {
            f[d * npoints] = 0.9; // point 0: nearer centroid 1
            f[d * npoints + 1] = 0.5; // point 1: equidistant from 0 and 1 -> 0
        }
        let mut cent = vec![100.0f32; CLUSTERS * FEATURES];
        cent[..FEATURES].fill(0.0);
        cent[FEATURES..2 * FEATURES].fill(1.0);
        assert_eq!(assign(&f, &cent, npoints), vec![1, 0]);
    }

    #[test]
    fn update_takes_means_and_keeps_empty() {
        let npoints = 2;
        let f: Vec<f32> = (0..npoints * FEATURES)
            .map(|i| (i % 2) as f32 * 2.0)
            .collect();
        let old = vec![7.0f32; CLUSTERS * FEATURES];
        let new = update(&f, &[3, 3], &old);
        assert_eq!(new[3 * FEATURES], 1.0); // mean of 0 and 2
        assert_eq!(new[0], 7.0);
    }

    #[test]
    fn inputs_are_deterministic_and_clusters_separate() {
        assert_eq!(inputs(100, 2), inputs(100, 2));
        assert_ne!(inputs(100, 2), inputs(100, 3));
        let f = inputs(1000, 2);
        let mut c = initial_centroids(&f, 1000);
        let mut m = assign(&f, &c, 1000);
        for _ in 0..5 {
            c = update(&f, &m, &c);
            m = assign(&f, &c, 1000);
        }
        let used: std::collections::BTreeSet<_> = m.iter().collect();
        assert!(used.len() >= 2);
    }
}
