//! Statistics of the bench's alternating runs: medians, and how far the host's noise lets
//! a median over the workloads be trusted.
//!
//! Why an interval: on the shared hosts this project is measured on, one run's time moves
//! by tens of percent, and the median over 19 workloads of a per-workload median of 5 pairs
//! moved by 3-5 points between two benches of the same build taken minutes apart. A figure
//! compared with a target (recording at most 10%) or with another build needs its spread
//! beside it.

/// The median (the mean of the two middle values for an even count; 0 for none).
pub fn median(mut v: Vec<f64>) -> f64 {
    median_in_place(&mut v)
}

/// [`median`] of a slice it may reorder.
fn median_in_place(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    match v.len() {
        0 => 0.0,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// Bootstrap resamples behind an interval.
const RESAMPLES: usize = 4000;

/// A 95% bootstrap interval of the median over workloads of each workload's median pair
/// figure: `pairs[w]` holds workload `w`'s per-pair figures (already in percent). Each
/// resample keeps every workload and redraws its pairs with replacement: the workloads are
/// the benchmark, fixed, and what is uncertain is what the host's noise did to each one's
/// pairs. (Redrawing the workloads too would answer another question, how the median
/// would move over other workloads, and mostly measure how unlike each other they are.)
/// Deterministic: the same figures give the same interval.
pub fn median_interval<'a>(pairs: impl IntoIterator<Item = &'a [f64]>) -> (f64, f64) {
    let pairs: Vec<&[f64]> = pairs.into_iter().filter(|p| !p.is_empty()).collect();
    if pairs.is_empty() {
        return (0.0, 0.0);
    }
    let mut rng = SplitMix64(0x005e_ed0f_be4c);
    let mut medians = Vec::with_capacity(RESAMPLES);
    let mut per_workload = Vec::with_capacity(pairs.len());
    let mut drawn = Vec::new();
    for _ in 0..RESAMPLES {
        per_workload.clear();
        for p in &pairs {
            drawn.clear();
            drawn.extend((0..p.len()).map(|_| p[rng.below(p.len())]));
            per_workload.push(median_in_place(&mut drawn));
        }
        medians.push(median_in_place(&mut per_workload));
    }
    medians.sort_by(|a, b| a.total_cmp(b));
    let at = |q: f64| medians[((q * (RESAMPLES - 1) as f64).round() as usize).min(RESAMPLES - 1)];
    (at(0.025), at(0.975))
}

/// SplitMix64 (Steele, Lea and Flood 2014): a few lines for a deterministic resampling
/// stream, where a random-number crate would be a dependency for one loop.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform below `n` (the modulo bias is below 2^-50 for the counts used here).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians() {
        assert_eq!(median(vec![]), 0.0);
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0, 3.0, 2.0]), 2.5);
    }

    #[test]
    fn the_interval_holds_the_median_and_widens_with_the_noise() {
        // 19 workloads of 5 pairs around +12%, quiet and noisy.
        let spread = |noise: f64| -> Vec<Vec<f64>> {
            (0..19)
                .map(|w| {
                    (0..5)
                        .map(|p| 12.0 + noise * (((w * 7 + p * 3) % 11) as f64 - 5.0))
                        .collect()
                })
                .collect()
        };
        let (quiet, noisy) = (spread(0.5), spread(5.0));
        let point = median(quiet.iter().map(|p| median(p.clone())).collect());
        let interval = |w: &[Vec<f64>]| median_interval(w.iter().map(Vec::as_slice));
        let (lo, hi) = interval(&quiet);
        assert!(lo <= point && point <= hi, "{lo} {point} {hi}");
        let (nlo, nhi) = interval(&noisy);
        assert!(
            nhi - nlo > 4.0 * (hi - lo),
            "{nlo}..{nhi} against {lo}..{hi}"
        );
        // Deterministic.
        assert_eq!(interval(&noisy), (nlo, nhi));
        // One workload of identical pairs: no spread at all.
        assert_eq!(interval(&[vec![7.0; 5]]), (7.0, 7.0));
        assert_eq!(interval(&[]), (0.0, 0.0));
    }
}
