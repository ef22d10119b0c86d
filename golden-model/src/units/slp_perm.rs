//! `slp_perm`: SIMD lane permutation (SLP; spec `tbc-capri-slp.md` §3, A18, A19, A23,
//! §7.3).
//!
//! A thread's home (physical) lane is permuted when its warp is launched and stays fixed
//! until the warp ends (L1250): logical position `lpos = t mod S` of warp `wid` (the warp's
//! index within its CTA, A18) runs in physical lane `lane(mode, wid, lpos)`. Every mode
//! but Rotate_odd_1 XORs the position with a mask `M(wid)` of `m = wid mod S`
//! (`b = log2 S`):
//!
//! | mode | name | M(wid) / mapping | source |
//! |---|---|---|---|
//! | 0 | ident | 0 | |
//! | 1 | Balanced | `m` even: `m/2`; odd: `(S-1) ^ (m/2)` = `{m[0], m[b-1:1] ^ {(b-1){m[0]}}}` | Eq 4.2, L1354-L1361, L1386-L1390 |
//! | 2 | Odd_Even | odd: 1 | Fig 4.19(b,c) |
//! | 3 | XOR-odd-half | odd: S/2 | L1289, L1336 |
//! | 4 | Rev_WID | the bit reversal of `m` over b bits | Fig 4.19(b,c) |
//! | 5 | FLIP_odd | odd: S-1 | L1598, L1636 (by its name) |
//! | 6 | Rotate_odd_1 | odd warps: `lane = (lpos + 1) mod S` (M = 0) | L1640 (by its name) |
//! | 7 | WID | `m` | L1338 (by its name) |
//!
//! The XOR maps are involutions, so the inverse (physical lane -> logical position, to
//! restore the intra-warp arbitration order, L1668) is the same map; only Rotate_odd_1's
//! inverse differs (`lane - 1`). Random (an LFSR-seeded XOR, A19) is not a mode: the
//! 3-bit `mode` has room for the eight above, and the seed's hardware is the XOR table.
//!
//! This file is the one implementation: the GPU model calls [`lane`], [`permute_mask`] and
//! friends at warp launch (and to write branch outcomes at the permuted lanes, A23); the
//! unit's model below calls the same functions for its ports.
//!
//! Decisions:
//! - `en` = 0 (the per-kernel disable bit, L1650) is the identity map, with `xor_mask` = 0.
//! - Vertical balance: the seed promises it "for any CTA (with fewer than SIMD_width warps)"
//!   (L1344), but its own 8-warp table for S = 8 (L1354-L1361) is balanced too, so the
//!   tests check it for every CTA of up to S warps (the spec's reading, §3.3).
//! - `wid` is `WIDW` bits; `M` reads `wid mod S` (its low `log2 S` bits, zero-extended when
//!   `WIDW < log2 S`), so the masks repeat every S warps (T9).
//! - `vec_out` applies the same map as `lane_out` to a whole warp mask: forward, bit
//!   `lane(l)` of `vec_out` is bit `l` of `vec_in` (logical -> physical); with `inverse`,
//!   bit `l` of `vec_out` is bit `lane(l)` of `vec_in`.
//! - The unit is combinational (no register stage, no state), like every combinational
//!   output of the platform it reads 0 while `rst_n` is low. The spec's optional `TABLE`
//!   (a stored S x log2 S mask table, L1648) and `MODE_FIXED` synthesis parameter are not
//!   implemented: the closed form needs `log2 S - 1` XOR gates and no table, and Yosys
//!   removes the logic of the other modes when `mode` is tied to a constant.

use super::contract::{low_mask, GpuUse, Scaling};
use super::coverage::Cover;
use super::declare::Unit;

/// The permutation modes of the `mode` port (§7.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlpMode {
    Ident = 0,
    Balanced = 1,
    OddEven = 2,
    XorOddHalf = 3,
    RevWid = 4,
    FlipOdd = 5,
    RotateOdd1 = 6,
    Wid = 7,
}

impl SlpMode {
    pub const ALL: [SlpMode; 8] = [
        SlpMode::Ident,
        SlpMode::Balanced,
        SlpMode::OddEven,
        SlpMode::XorOddHalf,
        SlpMode::RevWid,
        SlpMode::FlipOdd,
        SlpMode::RotateOdd1,
        SlpMode::Wid,
    ];

    /// The mode of a `mode` port value (its low 3 bits).
    #[inline]
    pub fn from_code(code: u8) -> SlpMode {
        SlpMode::ALL[(code & 7) as usize]
    }
}

/// The XOR mask `M(wid)` of `mode` for warp size `s` (a power of two): 0 for ident and
/// Rotate_odd_1.
#[inline]
pub fn xor_mask(mode: SlpMode, wid: u32, s: u32) -> u32 {
    let all = s - 1;
    let m = wid & all;
    let odd = m & 1 != 0;
    let if_odd = |v: u32| if odd { v } else { 0 };
    match mode {
        SlpMode::Ident | SlpMode::RotateOdd1 => 0,
        SlpMode::Balanced => if_odd(all) ^ (m >> 1),
        SlpMode::OddEven => if_odd(1),
        SlpMode::XorOddHalf => if_odd(s / 2),
        SlpMode::RevWid => m.reverse_bits() >> (32 - s.trailing_zeros()),
        SlpMode::FlipOdd => if_odd(all),
        SlpMode::Wid => m,
    }
}

/// The physical lane of logical position `lpos` (`< s`) of warp `wid`.
#[inline]
pub fn lane(mode: SlpMode, wid: u32, lpos: u32, s: u32) -> u32 {
    match mode {
        SlpMode::RotateOdd1 if wid & 1 != 0 => (lpos + 1) & (s - 1),
        _ => lpos ^ xor_mask(mode, wid, s),
    }
}

/// The logical position that runs in physical lane `lane` of warp `wid`: the inverse of
/// [`lane`].
#[inline]
pub fn lane_inverse(mode: SlpMode, wid: u32, lane: u32, s: u32) -> u32 {
    match mode {
        SlpMode::RotateOdd1 if wid & 1 != 0 => lane.wrapping_sub(1) & (s - 1),
        _ => lane ^ xor_mask(mode, wid, s),
    }
}

/// A warp's logical mask in physical lanes: bit `lane(l)` of the result is bit `l` of
/// `mask` (bits at or above `s` are ignored).
#[inline]
pub fn permute_mask(mode: SlpMode, wid: u32, mask: u64, s: u32) -> u64 {
    let mask = mask & low_mask(s);
    match mode {
        SlpMode::RotateOdd1 if wid & 1 != 0 => rotate_within(mask, s, 1),
        _ => xor_lanes(mask, xor_mask(mode, wid, s)),
    }
}

/// The inverse of [`permute_mask`]: bit `l` of the result is bit `lane(l)` of `mask`.
#[inline]
pub fn unpermute_mask(mode: SlpMode, wid: u32, mask: u64, s: u32) -> u64 {
    let mask = mask & low_mask(s);
    match mode {
        SlpMode::RotateOdd1 if wid & 1 != 0 => rotate_within(mask, s, s - 1),
        // XOR with a constant is its own inverse.
        _ => xor_lanes(mask, xor_mask(mode, wid, s)),
    }
}

/// Bit `i ^ m` of the result is bit `i` of `mask`: one swap of bit blocks per set bit of
/// `m` (at most 6), where moving each set bit of the mask on its own took up to 64 steps
/// (the co-simulation's model side spent ~290 host instructions a cycle in `permute` at
/// S=32).
#[inline]
fn xor_lanes(mut mask: u64, m: u32) -> u64 {
    // Bits whose index has bit k clear, for k = 0..6.
    const LOW_HALVES: [u64; 6] = [
        0x5555_5555_5555_5555,
        0x3333_3333_3333_3333,
        0x0f0f_0f0f_0f0f_0f0f,
        0x00ff_00ff_00ff_00ff,
        0x0000_ffff_0000_ffff,
        0x0000_0000_ffff_ffff,
    ];
    debug_assert!(m < 64);
    for (k, low) in LOW_HALVES.iter().enumerate() {
        if m >> k & 1 != 0 {
            let d = 1 << k;
            mask = (mask & low) << d | (mask >> d) & low;
        }
    }
    mask
}

/// Bit `(i + by) % s` of the result is bit `i` of `mask` (below 2^s; `0 < by < s`).
#[inline]
fn rotate_within(mask: u64, s: u32, by: u32) -> u64 {
    (mask << by | mask >> (s - by)) & low_mask(s)
}

/// The per-kernel SLP setting the GPU model applies at warp launch: the enable bit and
/// the mode (disabled is the identity).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slp {
    pub enabled: bool,
    pub mode: SlpMode,
}

impl Slp {
    /// The mode in effect (ident when disabled).
    #[inline]
    pub fn effective(&self) -> SlpMode {
        if self.enabled {
            self.mode
        } else {
            SlpMode::Ident
        }
    }
    #[inline]
    pub fn lane(&self, wid: u32, lpos: u32, s: u32) -> u32 {
        lane(self.effective(), wid, lpos, s)
    }
    #[inline]
    pub fn permute_mask(&self, wid: u32, mask: u64, s: u32) -> u64 {
        permute_mask(self.effective(), wid, mask, s)
    }
    /// Physical lanes back to logical positions (the inverse of [`Slp::permute_mask`]).
    #[inline]
    pub fn unpermute_mask(&self, wid: u32, mask: u64, s: u32) -> u64 {
        unpermute_mask(self.effective(), wid, mask, s)
    }
}

/// Functional coverage: every mode enabled, every lane and every mask produced, the
/// inverse with SLP on, every `wid` bit, every output.
static SLP_COVERAGE: [Cover; 6] = [
    Cover::ValuesWhen {
        port: "mode",
        max: "7",
        when: "en",
    },
    Cover::Values {
        port: "lane_out",
        max: "S-1",
    },
    Cover::Values {
        port: "xor_mask",
        max: "S-1",
    },
    Cover::Together(&["en", "inverse"]),
    Cover::EveryBit("wid"),
    Cover::EveryEvent,
];

crate::declare_unit! {
    /// The single description of `slp_perm`.
    pub static SLP_DESC: SlpPerm = unit "slp_perm" {
        summary: "SIMD lane permutation (combinational): logical thread position -> physical lane",
        spec: "specs/tbc-capri-slp.md §3, A18, A19, A23, §7.3, §7.4, §7.5 T6-T9",
        // The paper's warp (32 lanes, 32 warps per CTA); 8 lanes with a wid wider than
        // log2 S (masks repeat every S warps, T9); 4 lanes with a 1-bit wid (zero-extended).
        standard_sets: &[
            &[],
            &[("S", 8), ("WIDW", 4)],
            &[("S", 4), ("WIDW", 1)],
        ],
        check: |p| {
            let s = p.get("S");
            if s.is_power_of_two() {
                Ok(())
            } else {
                Err(format!("slp_perm: S={s} is not a power of two"))
            }
        },
        // Under thread-block compaction with a permutation: the launch mask of every warp
        // slot goes through it (replicated per slot, as a launch path that starts a CTA's
        // warps together would be).
        gpu: |cfg| {
            use crate::config::{Compaction, LanePermutation};
            if cfg.sm.compaction == Compaction::None
                || cfg.sm.lane_permutation == LanePermutation::None
            {
                return GpuUse::NotUsed {
                    set: &["sm.compaction=tbc", "sm.lane_permutation=balanced"],
                };
            }
            GpuUse::Instantiated {
                instances: "every warp slot of every SM (its warp's launch mask)",
                params: vec![("S", crate::exec::WARP_SIZE as u64, ""), ("WIDW", 5, "")],
            }
        },
        coverage: &SLP_COVERAGE,
        scaling: &[Scaling { param: "S", values: &[4, 8, 16, 32, 64], base: &[] }],
        ports: slp_port,
    }
    /// Parameters of `slp_perm` (spec §7.3; same names as the Verilog parameters).
    params SlpParams {
        s: u32 = S(32, 4..=64) "warp size = SIMD width (a power of two)",
        widw: u32 = WIDW(5, 1..=8) "width of wid (warp index within the CTA, A18)",
    }
    /// Inputs of one cycle (spec §7.3).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
    inputs SlpInputs {
        en: bool ["1"] "per-kernel enable (L1650); 0: identity",
        mode: u8 ["3"] "0 ident, 1 Balanced, 2 Odd_Even, 3 XOR-odd-half, 4 Rev_WID, 5 FLIP_odd, 6 Rotate_odd_1, 7 WID",
        inverse: bool ["1"] "physical -> logical (L1668); differs from forward only for mode 6",
        wid: u32 ["WIDW"] "warp index within the CTA (A18)",
        lane_in: u32 ["$clog2(S)"] "logical position (physical lane with inverse)",
        vec_in: u64 ["S"] "a whole warp mask, logical (physical with inverse)",
    }
    /// No registered outputs (no state).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
    registered SlpRegs {}
    /// The permutation of this cycle's inputs.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
    combinational SlpOutputs {
        lane_out: u32 ["$clog2(S)"] "physical lane (logical position with inverse)",
        xor_mask: u32 ["$clog2(S)"] "the M(wid) used (0 for ident, Rotate_odd_1 and en=0)",
        vec_out: u64 ["S"] "vec_in permuted like lane_in",
    }
    debug {}
}

/// `slp_perm` has no state: the model is its parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlpPerm {
    params: SlpParams,
}

impl SlpPerm {
    /// The outputs for `inp` (a pure function of the inputs).
    #[inline]
    pub fn permute(&self, inp: &SlpInputs) -> SlpOutputs {
        let s = self.params.s;
        let slp = Slp {
            enabled: inp.en,
            mode: SlpMode::from_code(inp.mode),
        };
        let mode = slp.effective();
        let wid = inp.wid & low_mask(self.params.widw) as u32;
        let lane_in = inp.lane_in & (s - 1);
        let (lane_out, vec_out) = if inp.inverse {
            (
                lane_inverse(mode, wid, lane_in, s),
                unpermute_mask(mode, wid, inp.vec_in, s),
            )
        } else {
            (
                lane(mode, wid, lane_in, s),
                permute_mask(mode, wid, inp.vec_in, s),
            )
        };
        SlpOutputs {
            lane_out,
            xor_mask: xor_mask(mode, wid, s),
            vec_out,
        }
    }
}

impl Unit for SlpPerm {
    fn new(params: SlpParams) -> SlpPerm {
        SlpPerm { params }
    }
    fn reset(&mut self) {}
    fn registered(&self) -> SlpRegs {
        SlpRegs {}
    }
    fn events(&self, inp: &SlpInputs) -> SlpOutputs {
        self.permute(inp)
    }
    fn tick(&mut self, inp: &SlpInputs) -> SlpOutputs {
        self.permute(inp)
    }
    /// No state: an edge without its outputs does nothing.
    fn advance(&mut self, _inp: &SlpInputs) {}
    crate::records_its_inputs!();
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The definition of the mask permutations: each set bit moved on its own.
    fn map_bits(mut mask: u64, to: impl Fn(u32) -> u32) -> u64 {
        let mut out = 0u64;
        while mask != 0 {
            let i = mask.trailing_zeros();
            mask &= mask - 1;
            out |= 1 << to(i);
        }
        out
    }

    /// The block swaps and rotations give what moving each lane's bit gives, at every
    /// warp size, mode and warp id, for masks of every density.
    #[test]
    fn mask_permutations_move_each_lane_as_lane_does() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for s in [2u32, 4, 8, 16, 32, 64] {
            for mode in SlpMode::ALL {
                for wid in 0..2 * s + 3 {
                    for _ in 0..24 {
                        // xorshift; AND/OR of draws gives sparse and dense masks.
                        let mut draw = || {
                            x ^= x << 13;
                            x ^= x >> 7;
                            x ^= x << 17;
                            x
                        };
                        let mask = match wid % 3 {
                            0 => draw() & draw(),
                            1 => draw() | draw(),
                            _ => draw(),
                        };
                        let live = mask & low_mask(s);
                        let want = map_bits(live, |l| lane(mode, wid, l, s));
                        assert_eq!(
                            permute_mask(mode, wid, mask, s),
                            want,
                            "{mode:?} s={s} wid={wid}"
                        );
                        let back = map_bits(live, |p| lane_inverse(mode, wid, p, s));
                        assert_eq!(
                            unpermute_mask(mode, wid, mask, s),
                            back,
                            "{mode:?} s={s} wid={wid}"
                        );
                    }
                }
            }
        }
    }

    /// Physical lanes of the active logical positions `active` of each warp, as masks.
    fn physical(mode: SlpMode, warps: &[u64], s: u32) -> Vec<u64> {
        warps
            .iter()
            .enumerate()
            .map(|(w, &m)| permute_mask(mode, w as u32, m, s))
            .collect()
    }

    /// The warps TBC's compactor forms: the largest per-lane count (§1.5).
    fn nw_tbc(masks: &[u64], s: u32) -> u32 {
        (0..s)
            .map(|l| masks.iter().filter(|&&m| m >> l & 1 != 0).count() as u32)
            .max()
            .unwrap_or(0)
    }

    fn warps_after(mode: SlpMode, warps: &[u64], s: u32) -> u32 {
        nw_tbc(&physical(mode, warps, s), s)
    }

    const EVEN8: u64 = 0b0101_0101;
    const FIRST_HALF8: u64 = 0b0000_1111;

    /// The exhaustive sweep of §7.4 on the model: every (en, mode, inverse, wid, lane) for
    /// S = 4..32: a bijection per warp, the inverse undoes the forward map, whole masks
    /// agree with single lanes, and the XOR mask is what the lane map applies.
    #[test]
    fn exhaustive_sweep_bijection_and_inverse() {
        for s in [4u32, 8, 16, 32] {
            let widw = s.trailing_zeros() + 1;
            let unit = SlpPerm {
                params: SlpParams { s, widw },
            };
            for en in [false, true] {
                for code in 0..8u8 {
                    for wid in 0..1u32 << widw {
                        let mut seen = 0u64;
                        for l in 0..s {
                            let inp = |inverse, lane_in| SlpInputs {
                                en,
                                mode: code,
                                inverse,
                                wid,
                                lane_in,
                                vec_in: 1 << lane_in,
                            };
                            let f = unit.permute(&inp(false, l));
                            assert!(f.lane_out < s);
                            seen |= 1 << f.lane_out;
                            assert_eq!(f.vec_out, 1 << f.lane_out);
                            let b = unit.permute(&inp(true, f.lane_out));
                            assert_eq!(b.lane_out, l, "inverse undoes forward");
                            assert_eq!(b.vec_out, 1 << l);
                            let mode = SlpMode::from_code(code);
                            if !en || mode == SlpMode::Ident {
                                assert_eq!(f.lane_out, l, "identity");
                            }
                            if en && mode != SlpMode::RotateOdd1 {
                                assert_eq!(f.lane_out, l ^ f.xor_mask);
                            } else {
                                assert_eq!(f.xor_mask, 0);
                            }
                            if mode != SlpMode::RotateOdd1 {
                                assert_eq!(f.lane_out, b.lane_out ^ f.xor_mask);
                            }
                        }
                        assert_eq!(seen, low_mask(s), "a bijection (S={s} wid={wid})");
                    }
                }
            }
        }
    }

    /// §7.4 and L1344: with Balanced, in a CTA of up to S warps each physical lane holds
    /// each logical position at most once (vertical balance); the masks of W0..W(S-1) are a
    /// permutation of 0..S-1 and repeat from wid = S (T9).
    #[test]
    fn balanced_vertical_balance_and_t9() {
        for s in [4u32, 8, 16, 32, 64] {
            for nw in 1..=s {
                for l in 0..s {
                    let lanes: u64 = (0..nw)
                        .map(|w| 1u64 << lane(SlpMode::Balanced, w, l, s))
                        .fold(0, |a, b| {
                            assert_eq!(a & b, 0, "S={s} NW={nw} position {l} twice in a lane");
                            a | b
                        });
                    assert_eq!(lanes.count_ones(), nw);
                }
            }
            let masks: Vec<u32> = (0..2 * s)
                .map(|w| xor_mask(SlpMode::Balanced, w, s))
                .collect();
            let mut sorted = masks[..s as usize].to_vec();
            sorted.sort();
            assert_eq!(sorted, (0..s).collect::<Vec<_>>());
            assert_eq!(
                masks[..s as usize],
                masks[s as usize..],
                "repeats at wid = S"
            );
            // The closed form {m[0], m[b-1:1] ^ m[0]} of the spec.
            for m in 0..s {
                let k = m >> 1;
                let want = if m & 1 == 0 { k } else { (s - 1) ^ k };
                assert_eq!(masks[m as usize], want);
            }
        }
        let t9: Vec<u32> = (0..8).map(|w| xor_mask(SlpMode::Balanced, w, 8)).collect();
        assert_eq!(t9, [0, 7, 1, 6, 2, 5, 3, 4]);
    }

    /// T6: Fig 4.19(b) (even lanes) and (c) (first half), S = 8, 4 warps.
    #[test]
    fn t6_fig_4_19() {
        use SlpMode::*;
        let modes = [Ident, Balanced, OddEven, RevWid];
        let b: Vec<u32> = modes
            .iter()
            .map(|&m| warps_after(m, &[EVEN8; 4], 8))
            .collect();
        assert_eq!(b, [4, 2, 2, 4]);
        let c: Vec<u32> = modes
            .iter()
            .map(|&m| warps_after(m, &[FIRST_HALF8; 4], 8))
            .collect();
        assert_eq!(c, [4, 2, 4, 2]);
        // The Balanced rows of the figure: W1 `-E-C-A-8` = threads 6, 4, 2, 0 of W1 in
        // lanes 1, 3, 5, 7.
        assert_eq!(permute_mask(Balanced, 1, EVEN8, 8), 0b1010_1010);
        assert_eq!(lane(Balanced, 1, 6, 8), 1);
        assert_eq!(lane(Balanced, 3, 6, 8), 0, "W3 `U-S-Q-O-`");
        assert_eq!(lane(RevWid, 1, 0, 8), 4, "W1 `C-E-8-A-`");
    }

    /// T7: Fig 4.18(b), 64 threads, S = 16 (4 warps), even lanes active.
    #[test]
    fn t7_fig_4_18_b() {
        use SlpMode::*;
        let even16 = 0x5555u64;
        let got: Vec<u32> = [Ident, Balanced, OddEven, RevWid]
            .iter()
            .map(|&m| warps_after(m, &[even16; 4], 16))
            .collect();
        assert_eq!(got, [4, 2, 2, 4]);
    }

    /// T8: Fig 4.18(a), 8x16 CTA, S = 16 (8 warps): power_two = 2 (every warp's first half
    /// active) compacts to the ideal 4 under Balanced; power_two = 4 (even warps only) is
    /// not compacted by any mode (4 warps, ideal 2).
    #[test]
    fn t8_fig_4_18_a() {
        let half = 0x00ffu64;
        let p2: Vec<u64> = vec![half; 8];
        assert_eq!(warps_after(SlpMode::Balanced, &p2, 16), 4);
        assert_eq!(warps_after(SlpMode::XorOddHalf, &p2, 16), 4);
        assert_eq!(warps_after(SlpMode::RevWid, &p2, 16), 4);
        assert_eq!(warps_after(SlpMode::OddEven, &p2, 16), 8);
        let p4: Vec<u64> = (0..8).map(|w| if w % 2 == 0 { half } else { 0 }).collect();
        for m in SlpMode::ALL {
            assert_eq!(warps_after(m, &p4, 16), 4, "{m:?}");
        }
    }

    #[test]
    fn rotate_odd_is_the_only_mode_with_a_different_inverse() {
        for m in SlpMode::ALL {
            let differs = (0..8).any(|l| lane(m, 1, l, 8) != lane_inverse(m, 1, l, 8));
            assert_eq!(differs, m == SlpMode::RotateOdd1, "{m:?}");
        }
        assert_eq!(lane(SlpMode::RotateOdd1, 3, 7, 8), 0);
        assert_eq!(
            lane(SlpMode::RotateOdd1, 2, 7, 8),
            7,
            "even warps unchanged"
        );
    }
}
