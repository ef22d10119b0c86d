//! backprop: one back-propagation step of an n -> 16 layer (the shape of Rodinia's
//! backprop, BACKP in the thread-block-compaction study). `backprop_forward` (16x16 CTAs,
//! one per 16 input units) multiplies weights by inputs and sums the 16 rows with a
//! shared-memory tree; its `tx == 0` load and `ty % 2^i == 0` tree levels are the
//! programmatic, compaction-ineffective branches of seed 001 Fig. 4.4. The host adds the
//! per-CTA partial sums, squashes them into the hidden layer and derives the hidden deltas
//! (on the CPU, as the original does); `backprop_adjust` then updates the weights with
//! momentum, the bias row by the `ty == 0` threads of CTA 0 only.

use crate::rng::SplitMix64;
use crate::{check_f32, Category, Dim3, Host, KernelArg, Size, Tolerance, Verification, Workload};
use warpforge_model::error::SimError;

crate::workload!(
    Backprop,
    "backprop",
    Category::Divergent,
    "back-propagation layer: tx == 0 loads, ty % 2^i shared-memory tree, momentum weight update (Rodinia BACKP shape)"
);

/// Hidden units = CTA width = CTA height.
pub(crate) const H: usize = 16;
const ETA: f32 = 0.3;
const MOMENTUM: f32 = 0.3;
/// The reference repeats the kernels' operations in the same order (the tree's additions,
/// the unfused product feeding the update's fma), so results should be bit-identical.
const TOL: Tolerance = Tolerance {
    rel: 1e-6,
    abs: 1e-7,
};

/// Input units n (a multiple of 16).
pub(crate) fn len(size: Size) -> usize {
    size.pick(64, 1024, 24 * 1024)
}

pub(crate) struct Inputs {
    /// n + 1 input units; unit 0 is the bias (1.0).
    pub input: Vec<f32>,
    /// (n + 1) x (H + 1) weights, row = input unit, column = hidden unit (0: unused bias
    /// column, as in the original layout).
    pub weights: Vec<f32>,
    /// Previous weight steps, same shape.
    pub oldw: Vec<f32>,
    /// Target value of each hidden unit (index 1..=H) for the error term.
    pub target: Vec<f32>,
}

pub(crate) fn inputs(n: usize, seed: u64) -> Inputs {
    let mut g = SplitMix64::for_stream(seed, "backprop.input");
    let mut input: Vec<f32> = (0..=n).map(|_| g.unit_f32()).collect();
    input[0] = 1.0;
    let mut g = SplitMix64::for_stream(seed, "backprop.weights");
    let cells = (n + 1) * (H + 1);
    let weights = (0..cells).map(|_| g.range_f32(-0.1, 0.1)).collect();
    let oldw = (0..cells).map(|_| g.range_f32(-0.01, 0.01)).collect();
    let target = (0..=H).map(|_| g.unit_f32()).collect();
    Inputs {
        input,
        weights,
        oldw,
        target,
    }
}

/// What `backprop_forward` writes: partial[by * H + j] = sum over the CTA's 16 input rows
/// of weight * input for hidden unit j + 1, summed by the kernel's tree.
pub(crate) fn forward_partials(input: &[f32], weights: &[f32], n: usize) -> Vec<f32> {
    let mut out = vec![0.0f32; n];
    for by in 0..n / H {
        for j in 0..H {
            let mut prod: Vec<f32> = (0..H)
                .map(|ty| {
                    let row = H * by + ty + 1;
                    weights[row * (H + 1) + j + 1] * input[row]
                })
                .collect();
            let mut step = 2;
            while step <= H {
                for ty in (0..H).step_by(step) {
                    prod[ty] += prod[ty + step / 2];
                }
                step *= 2;
            }
            out[by * H + j] = prod[0];
        }
    }
    out
}

/// The host's CPU part: hidden unit j = squash(bias weight + sum of the CTAs' partials),
/// delta[j] = h (1 - h) (target - h); delta[0] is unused (0).
pub(crate) fn hidden_deltas(partials: &[f32], weights: &[f32], target: &[f32]) -> Vec<f32> {
    let mut delta = vec![0.0f32; H + 1];
    for j in 1..=H {
        let mut sum = weights[j];
        for p in partials.chunks(H) {
            sum += p[j - 1];
        }
        let h = 1.0 / (1.0 + (-sum).exp());
        delta[j] = h * (1.0 - h) * (target[j] - h);
    }
    delta
}

/// What `backprop_adjust` leaves in (weights, oldw).
pub(crate) fn adjust(inp: &Inputs, delta: &[f32], n: usize) -> (Vec<f32>, Vec<f32>) {
    let (mut w, mut old) = (inp.weights.clone(), inp.oldw.clone());
    // Hidden unit j's delta is delta[j], j = 1..=H; column 0 is never updated.
    for row in 1..=n {
        for (col, &d) in delta.iter().enumerate().skip(1) {
            let i = row * (H + 1) + col;
            let step = MOMENTUM.mul_add(old[i], ETA * d * inp.input[row]);
            w[i] += step;
            old[i] = step;
        }
    }
    for (col, &d) in delta.iter().enumerate().skip(1) {
        let step = MOMENTUM.mul_add(old[col], ETA * d);
        w[col] += step;
        old[col] = step;
    }
    (w, old)
}

fn run_impl(
    wl: &Backprop,
    host: &mut dyn Host,
    size: Size,
    seed: u64,
) -> Result<Verification, SimError> {
    let n = len(size);
    let inp = inputs(n, seed);
    let m = host.load_module(wl.ptx_file(), wl.ptx())?;
    let dinput = host.alloc_write_f32(&inp.input)?;
    let dweights = host.alloc_write_f32(&inp.weights)?;
    let doldw = host.alloc_write_f32(&inp.oldw)?;
    let dpartial = host.alloc((n * 4) as u64)?;
    let grid = Dim3::xy(1, (n / H) as u32);
    let block = Dim3::xy(H as u32, H as u32);
    host.launch(
        m,
        "backprop_forward",
        grid,
        block,
        0,
        &[
            KernelArg::Ptr(dinput),
            KernelArg::Ptr(dweights),
            KernelArg::Ptr(dpartial),
        ],
    )?;
    let partials = host.read_f32(dpartial, n)?;
    let delta = hidden_deltas(&partials, &inp.weights, &inp.target);
    let ddelta = host.alloc_write_f32(&delta)?;
    host.launch(
        m,
        "backprop_adjust",
        grid,
        block,
        0,
        &[
            KernelArg::Ptr(ddelta),
            KernelArg::Ptr(dinput),
            KernelArg::Ptr(dweights),
            KernelArg::Ptr(doldw),
            KernelArg::F32(ETA),
            KernelArg::F32(MOMENTUM),
        ],
    )?;
    let cells = (n + 1) * (H + 1);
    let got_w = host.read_f32(dweights, cells)?;
    let got_old = host.read_f32(doldw, cells)?;
    let want_partials = forward_partials(&inp.input, &inp.weights, n);
    let want_delta = hidden_deltas(&want_partials, &inp.weights, &inp.target);
    let (want_w, want_old) = adjust(&inp, &want_delta, n);
    Ok(Verification::all(vec![
        check_f32("partial", &want_partials, &partials, TOL),
        check_f32("weight", &want_w, &got_w, TOL),
        check_f32("oldw", &want_old, &got_old, TOL),
    ]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partials_sum_to_the_plain_dot_products() {
        let n = 64;
        let inp = inputs(n, 3);
        let p = forward_partials(&inp.input, &inp.weights, n);
        for j in 0..H {
            let tree: f64 = p.chunks(H).map(|c| c[j] as f64).sum();
            let plain: f64 = (1..=n)
                .map(|r| inp.weights[r * (H + 1) + j + 1] as f64 * inp.input[r] as f64)
                .sum();
            assert!((tree - plain).abs() < 1e-5, "{j}: {tree} vs {plain}");
        }
    }

    #[test]
    fn adjust_moves_weights_by_the_step_it_records() {
        let n = 32;
        let inp = inputs(n, 5);
        let delta: Vec<f32> = (0..=H).map(|j| j as f32 * 0.01).collect();
        let (w, old) = adjust(&inp, &delta, n);
        // Column 0 (unused) stays; every other cell moves by exactly its new step.
        for row in 0..=n {
            assert_eq!(w[row * (H + 1)], inp.weights[row * (H + 1)]);
        }
        let i = 3 * (H + 1) + 2;
        let step = MOMENTUM.mul_add(inp.oldw[i], ETA * delta[2] * inp.input[3]);
        assert_eq!(old[i], step);
        assert_eq!(w[i], inp.weights[i] + step);
        // The bias row uses an input of 1.
        assert_eq!(old[2], MOMENTUM.mul_add(inp.oldw[2], ETA * delta[2]));
    }

    #[test]
    fn inputs_are_deterministic() {
        assert_eq!(inputs(32, 1).weights, inputs(32, 1).weights);
        assert_ne!(inputs(32, 1).weights, inputs(32, 2).weights);
        assert_eq!(inputs(32, 1).input[0], 1.0);
    }
}
