//! Stimulus of `wcu` (specs/tbc-capri-slp.md §7.5): seeded random compaction requests
//! steered towards the unhit coverage bins, and the spec's directed vectors (T1, T2, the
//! WCU part of T3, T5, T13, T14, T15). Both drive requests through the handshake the SM
//! would use — a request is held until `req_ready` takes it — with an `out_ready` pattern
//! per request.

use crate::lockstep::typed_side::typed_stimulus_methods;
use crate::lockstep::{Stimulus, TypedStimulus};
use crate::mutants::{DirectedMutant, KnownEquivalent};
use crate::stimulus::SplitMix64;
use warpforge_model::units::contract::{Params, UnitDesc};
use warpforge_model::units::coverage::Coverage;
use warpforge_model::units::wcu::{set_thread, CtaMask, Wcu, WcuInputs, WcuRegs, WCU_DESC};

/// How `out_ready` behaves while a request's warps stream out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ready {
    Always,
    /// Ready with probability 1/2 each cycle.
    Random,
    /// Ready one cycle in five.
    Rarely,
    /// Ready every other cycle.
    Toggle,
}

/// One scripted request.
#[derive(Debug, Clone, Copy)]
pub struct Request {
    pub inputs: WcuInputs,
    pub ready: Ready,
    /// Idle cycles before it is presented (0: back to back with the previous one).
    pub gap: u32,
    /// Reset this many cycles after it is taken (a reset in mid-compaction).
    pub reset_after: Option<u32>,
}

/// The `wcu` stimulus: random (with `script` empty) or the directed vectors.
#[derive(Debug, Clone)]
pub struct WcuStimulus {
    seed: u64,
    rng: SplitMix64,
    cycles: u64,
    s: u32,
    nw: u32,
    script: Vec<Request>,
    next: usize,
    /// The request presented or waiting, and the cycles before it is presented.
    cur: Option<Request>,
    wait: u32,
    /// Cycles until a scheduled reset (`reset_after` of the request taken last).
    reset_in: Option<u32>,
    ready: Ready,
    toggle: bool,
    /// Steering: warp counts (`done_count` values) not seen yet, stalls wanted, full
    /// columns wanted, resets in mid-compaction wanted.
    want_counts: u64,
    want_stalls: bool,
    want_full: bool,
    want_reset: bool,
    drain: u32,
}

impl WcuStimulus {
    fn with_script(p: &Params, seed: u64, cycles: u64, script: Vec<Request>) -> WcuStimulus {
        WcuStimulus {
            seed,
            rng: SplitMix64::new(seed),
            cycles,
            s: p.get("S") as u32,
            nw: p.get("NW") as u32,
            script,
            next: 0,
            cur: None,
            wait: 0,
            reset_in: None,
            ready: Ready::Always,
            toggle: false,
            want_counts: 0,
            want_stalls: false,
            want_full: false,
            want_reset: false,
            drain: 0,
        }
    }

    /// Random requests for `cycles` cycles.
    pub fn random(p: &Params, seed: u64, cycles: u64) -> WcuStimulus {
        WcuStimulus::with_script(p, seed, cycles, vec![])
    }

    /// The directed vectors of §7.5 at these parameters.
    pub fn directed(p: &Params) -> WcuStimulus {
        let script = directed_script(
            p.get("S") as u32,
            p.get("NW") as u32,
            p.get("FIRST_LAT") as u32,
        );
        WcuStimulus::with_script(p, 1, u64::MAX, script)
    }

    fn all_rows(&self) -> u32 {
        low32(self.nw)
    }

    /// A mask whose largest column has exactly `c` threads (each column 0..=c, one lane
    /// forced to `c`; with `full`, every lane at `c`).
    fn mask_with_count(&mut self, c: u32, full: bool) -> CtaMask {
        let mut m = [0u64; 16];
        let forced = self.rng.below(self.s as u64) as u32;
        for l in 0..self.s {
            let k = if l == forced || full || self.rng.one_in(2) {
                c
            } else {
                self.rng.below(c as u64 + 1) as u32
            };
            let mut rows: [u8; 32] = std::array::from_fn(|i| i as u8);
            for i in 0..k as usize {
                let j = i + self.rng.below((self.nw as usize - i) as u64) as usize;
                rows.swap(i, j);
                set_thread(&mut m, self.s, rows[i] as u32, l);
            }
        }
        m
    }

    /// Every thread with probability `num/den`.
    fn dense(&mut self, num: u64, den: u64) -> CtaMask {
        let mut m = [0u64; 16];
        for w in 0..self.nw {
            for l in 0..self.s {
                if self.rng.below(den) < num {
                    set_thread(&mut m, self.s, w, l);
                }
            }
        }
        m
    }

    /// Whole rows (aligned divergence) or half rows (half-warp patterns).
    fn rows_pattern(&mut self, half: bool) -> CtaMask {
        let mut m = [0u64; 16];
        for w in 0..self.nw {
            let (lo, hi) = match (half, self.rng.below(4)) {
                (_, 0) => (0, 0),
                (true, 1) => (0, self.s / 2),
                (true, 2) => (self.s / 2, self.s),
                _ => (0, self.s),
            };
            for l in lo..hi {
                set_thread(&mut m, self.s, w, l);
            }
        }
        m
    }

    fn random_request(&mut self) -> Request {
        let (s, nw) = (self.s, self.nw);
        let counts = self.want_counts;
        let mask = if counts != 0 && self.rng.one_in(2) {
            // Steer: a warp count not produced yet.
            let n = counts.count_ones() as u64;
            let mut pick = self.rng.below(n);
            let mut c = counts;
            while pick > 0 {
                c &= c - 1;
                pick -= 1;
            }
            self.mask_with_count(c.trailing_zeros(), false)
        } else if (self.want_full || self.want_stalls) && self.rng.one_in(3) {
            let c = nw - self.rng.below(nw as u64 / 2 + 1) as u32;
            let full = self.want_full && self.rng.one_in(2);
            self.mask_with_count(c, full)
        } else {
            match self.rng.below(10) {
                0 => self.dense(1, 10),
                1 | 2 => self.dense(1, 2),
                3 | 4 => self.dense(9, 10),
                5 => self.rows_pattern(false),
                6 => self.rows_pattern(true),
                7 => [u64::MAX; 16],
                8 => [0; 16],
                _ => {
                    let c = self.rng.below(nw as u64 + 1) as u32;
                    self.mask_with_count(c, false)
                }
            }
        };
        let rows_with_bits = (0..nw)
            .filter(|&w| (0..s).any(|l| warpforge_model::units::wcu::thread_bit(&mask, s, w, l)))
            .fold(0u32, |r, w| r | 1 << w);
        // Bypassed warps: whole rows excluded, the rest waited (UMask).
        let (excl, umask) = match self.rng.below(10) {
            0..=5 => (
                [0u64; 16],
                if self.rng.one_in(2) {
                    self.all_rows()
                } else {
                    rows_with_bits
                },
            ),
            6..=8 => {
                let bypassed = self.rng.next_u64() as u32 & self.all_rows();
                let mut x = [0u64; 16];
                for w in (0..nw).filter(|w| bypassed >> w & 1 == 1) {
                    for l in 0..s {
                        set_thread(&mut x, s, w, l);
                    }
                }
                (x, !bypassed & self.all_rows())
            }
            _ => (self.dense(1, 2), self.rng.next_u64() as u32),
        };
        let contrib = if self.rng.one_in(4) {
            self.rng.next_u64() as u32
        } else {
            rows_with_bits
        };
        let ready = if self.want_stalls && self.rng.one_in(2) {
            Ready::Random
        } else {
            match self.rng.below(4) {
                0 => Ready::Always,
                1 => Ready::Random,
                2 => Ready::Rarely,
                _ => Ready::Toggle,
            }
        };
        let reset_rate = if self.want_reset { 8 } else { 200 };
        Request {
            inputs: WcuInputs::request(mask, excl, contrib, umask, self.rng.one_in(2)),
            ready,
            gap: if self.rng.one_in(2) {
                0
            } else {
                self.rng.below(6) as u32
            },
            reset_after: self.rng.one_in(reset_rate).then(|| {
                // Half of them in the cycle after the start (while pred_valid is high).
                if self.rng.one_in(2) {
                    0
                } else {
                    self.rng.below(2 * nw as u64 + 4) as u32
                }
            }),
        }
    }
}

/// The low `n` bits of a `u32`.
fn low32(n: u32) -> u32 {
    if n >= 32 {
        u32::MAX
    } else {
        (1 << n) - 1
    }
}

/// A mask of the paper's 3 x 4 examples (§1.4, §2.7), embedded in lanes 0..4 and warps
/// 0..3 of any larger CTA: thread id `t` (hex digit) is warp `t / 4`, lane `t % 4`.
fn paper_mask(s: u32, threads: &str) -> CtaMask {
    let mut m = [0u64; 16];
    for c in threads.chars().filter_map(|c| c.to_digit(16)) {
        set_thread(&mut m, s, c / 4, c % 4);
    }
    m
}

/// The directed vectors (§7.5) at S, NW (every standard set has S >= 4, NW >= 3, so the
/// paper's examples fit).
fn directed_script(s: u32, nw: u32, first_lat: u32) -> Vec<Request> {
    let none = [0u64; 16];
    let all = low32(nw);
    let pm = |t: &str| paper_mask(s, t);
    let req = |inputs: WcuInputs, ready: Ready, gap: u32| Request {
        inputs,
        ready,
        gap,
        reset_after: None,
    };
    let mut v = vec![];
    for ready in [Ready::Always, Ready::Toggle, Ready::Rarely] {
        // T1: Fig 4.2 path B `---- ---7 --A-`: one warp `--A7`, src (-, -, 2, 1).
        v.push(req(
            WcuInputs::request(pm("7A"), none, 0b110, all, true),
            ready,
            2,
        ));
        // T2: Fig 4.2 path C `0123 456- 89-B`: `0123`, `456B`, `89--`.
        v.push(req(
            WcuInputs::request(pm("0123456 89B"), none, 0b111, all, true),
            ready,
            0,
        ));
        // T3 (WCU part): Fig 4.8(c)-(d): path B `0123 4--7 89--`, W0 bypassed (UMask 011):
        // `49-7` to slot 1, `8---` to slot 2; lane counts (3, 2, 1, 2), not adequate.
        v.push(req(
            WcuInputs::request(pm("012347 89"), pm("0123"), 0b111, 0b110, true),
            ready,
            1,
        ));
        // T5: W1 `4--7`, W2 `-9A-`: counts (1, 1, 1, 1), nw_after 1 < 2: adequate.
        v.push(req(
            WcuInputs::request(pm("479A"), none, 0b110, 0b110, true),
            ready,
            0,
        ));
        // T13: every warp bypassed: no warps, done at t + FIRST_LAT, still evaluated.
        v.push(req(
            WcuInputs::request(pm("012347 89"), pm("012347 89"), 0b111, 0, true),
            ready,
            0,
        ));
    }
    // T14: extremes at the full size: all ones (the identity), one lane column full (NW
    // single-thread warps; the first and the last lane), the diagonal (one warp), empty.
    let mut col0 = [0u64; 16];
    let mut col_last = [0u64; 16];
    let mut diag = [0u64; 16];
    for w in 0..nw {
        set_thread(&mut col0, s, w, 0);
        set_thread(&mut col_last, s, w, s - 1);
        set_thread(&mut diag, s, w, w % s);
    }
    for (mask, ready) in [
        ([u64::MAX; 16], Ready::Always),
        ([u64::MAX; 16], Ready::Random),
        (col0, Ready::Always),
        (col_last, Ready::Toggle),
        (diag, Ready::Always),
        (none, Ready::Always),
    ] {
        v.push(req(
            WcuInputs::request(mask, none, all, all, true),
            ready,
            1,
        ));
    }
    // T15: back-to-back requests under toggling out_ready (req_ready low until done), a
    // request that does not evaluate, and a reset in mid-compaction.
    for ready in [Ready::Toggle, Ready::Random, Ready::Always] {
        v.push(req(
            WcuInputs::request(pm("0123456 89B"), none, 0b111, all, false),
            ready,
            0,
        ));
    }
    v.push(Request {
        reset_after: Some(first_lat),
        ..req(
            WcuInputs::request([u64::MAX; 16], none, all, all, true),
            Ready::Rarely,
            0,
        )
    });
    v.push(req(
        WcuInputs::request(pm("7A"), none, 0b110, all, true),
        Ready::Always,
        0,
    ));
    v
}

impl TypedStimulus<Wcu> for WcuStimulus {
    fn next_inputs(&mut self, cycle: u64, regs: &WcuRegs, inputs: &mut WcuInputs) -> Option<bool> {
        if cycle >= self.cycles {
            return None;
        }
        let scripted = !self.script.is_empty();
        if self.cur.is_none() {
            if scripted {
                match self.script.get(self.next) {
                    Some(r) => self.cur = Some(*r),
                    None if self.drain < 64 => self.drain += 1,
                    None => return None,
                }
                self.next += 1;
            } else {
                self.cur = Some(self.random_request());
            }
            if let Some(r) = self.cur {
                self.wait = r.gap;
            }
        }
        let req_ready = regs.req_ready;
        let mut rst = cycle < 2 || (!scripted && self.rng.one_in(20_000));
        // A reset scheduled in mid-compaction.
        match self.reset_in {
            Some(0) => {
                rst = true;
                self.reset_in = None;
            }
            Some(n) => self.reset_in = Some(n - 1),
            None => {}
        }
        let mut inp = WcuInputs::default();
        if let Some(r) = self.cur {
            if self.wait > 0 {
                self.wait -= 1;
                // Junk on the request fields while req_valid is low: must be ignored.
                inp = WcuInputs {
                    req_valid: false,
                    ..r.inputs
                };
            } else {
                inp = r.inputs;
                if req_ready && !rst {
                    // Taken this cycle: its out_ready pattern starts.
                    self.ready = r.ready;
                    self.reset_in = r.reset_after;
                    self.cur = None;
                }
            }
        }
        self.toggle = !self.toggle;
        inp.out_ready = match self.ready {
            Ready::Always => true,
            Ready::Random => self.rng.one_in(2),
            Ready::Rarely => self.rng.one_in(5),
            Ready::Toggle => self.toggle,
        };
        *inputs = inp;
        Some(!rst)
    }
}

impl Stimulus for WcuStimulus {
    typed_stimulus_methods!(Wcu);

    fn can_rewind(&self) -> bool {
        true
    }

    fn rewind(&mut self) {
        let script = std::mem::take(&mut self.script);
        let params = WCU_DESC
            .params(&[("S", self.s as u64), ("NW", self.nw as u64)])
            .expect("wcu parameters");
        *self = WcuStimulus::with_script(&params, self.seed, self.cycles, script);
    }

    fn steer(&mut self, coverage: &Coverage) {
        self.want_counts = (0..=self.nw)
            .filter(|c| coverage.is_unhit(&format!("done_count={c} when done")))
            .fold(0, |m, c| m | 1 << c);
        let unhit = coverage.unhit();
        self.want_stalls = unhit.iter().any(|b| b.contains("!out_ready"));
        self.want_full = unhit.iter().any(|b| b.starts_with("out_lanes["));
        self.want_reset = coverage.is_unhit("reset while out_valid")
            || coverage.is_unhit("reset while pred_valid");
    }
}

/// The kit's random stimulus.
pub fn random(
    _: &'static UnitDesc,
    p: &Params,
    seed: u64,
    cycles: u64,
) -> crate::kits::BoxedStimulus {
    Box::new(WcuStimulus::random(p, seed, cycles))
}

/// The kit's directed vectors.
pub fn directed(_: &'static UnitDesc, p: &Params) -> crate::kits::BoxedStimulus {
    Box::new(WcuStimulus::directed(p))
}

/// Hand-written mutants of the template (§7.4's failure modes).
pub static MUTANTS: [DirectedMutant; 8] = [
    DirectedMutant {
        description: "priority encoder goes on in the wrong half (the half holding the \
                      lowest thread is dropped at every level)",
        from: "if (lowest[b]) begin",
        to: "if (!lowest[b]) begin",
        only_if: None,
    },
    DirectedMutant {
        description: "an empty column's encoder reads NP-1 (all index bits set) instead of 0",
        from: "lowest = {WW{1'b0}};",
        to: "lowest = lowest;",
        only_if: None,
    },
    DirectedMutant {
        description: "the emitted thread is not removed from its column",
        from: "work  <= work_rest;",
        to: "work  <= work;",
        only_if: None,
    },
    DirectedMutant {
        description: "out_last one warp early (a column with two threads left reads as last)",
        from: "assign lane_more[l]   = |rest;",
        to: "assign lane_more[l]   = |(rest & (rest - 1'b1));",
        only_if: None,
    },
    DirectedMutant {
        description: "done_count off by one (the offered warp's k, not k + 1)",
        from: "? (seq + 1'b1) : {CW{1'b0}};",
        to: "? seq : {CW{1'b0}};",
        only_if: None,
    },
    DirectedMutant {
        description: "req_excl ignored (bypassed warps compacted)",
        from: "work  <= lane_major(req_mask & ~req_excl);",
        to: "work  <= lane_major(req_mask);",
        only_if: None,
    },
    DirectedMutant {
        description: "the evaluator counts only the waiting warps' threads (excl applied)",
        from: "ev_after_q  <= ev_column_max(req_mask);",
        to: "ev_after_q  <= ev_column_max(req_mask & ~req_excl);",
        only_if: Some(("PRED_EN", 1)),
    },
    DirectedMutant {
        description: "FIRST_LAT ignored (warp 0 one cycle after the start)",
        from: "lat   <= LAT_INIT;",
        to: "lat   <= {LAT_W{1'b0}};",
        only_if: Some(("FIRST_LAT", 3)),
    },
];

/// Generated mutants of the template that no input can tell from the original.
pub static EQUIVALENTS: [KnownEquivalent; 6] = [
    KnownEquivalent {
        line: "t[NW-1:0] = v;",
        edit: "`- 1` → `- 2`",
        reason: "dropping the encoder's top input (warp NW-1): a column whose only thread is \
                 that warp then reads as no set bit, and the halving answers NP-1, which is \
                 NW-1 when NW is a power of two; caught at NW=3",
        when: |p| p.get("NW").is_power_of_two(),
    },
    KnownEquivalent {
        line: "ev_t[ev_i*CW +: CW] = { {(CW - 1){1'b0}}, ev_v[ev_i] };",
        edit: "`- 1` → `- 2`",
        reason: "the leaf is one bit zero-extended to CW bits: one zero fewer in the \
                 concatenation is zero-extended by the assignment to the same value",
        when: |_| true,
    },
    KnownEquivalent {
        line: "lat <= lat - 1'b1;",
        edit: "",
        reason: "with FIRST_LAT=1 the latency counter is loaded with 0 at every start, so the \
                 decrement (only while lat != 0) never runs; caught at FIRST_LAT=2 and 3",
        when: |p| p.get("FIRST_LAT") == 1,
    },
    KnownEquivalent {
        line: "lat   <= LAT_INIT;",
        edit: "swapped",
        reason: "with FIRST_LAT=2 the start loads busy and lat (one bit) with the same value \
                 1 (LAT_INIT = 1), so swapping the targets changes nothing; caught at \
                 FIRST_LAT=1 and 3",
        when: |p| p.get("FIRST_LAT") == 2,
    },
    KnownEquivalent {
        line: "ev_",
        edit: "",
        reason: "the evaluator (every name ev_*, generate block g_pred) is not elaborated with \
                 PRED_EN=0; its mutants are caught at the PRED_EN=1 sets",
        when: |p| p.get("PRED_EN") == 0,
    },
    KnownEquivalent {
        line: "NO_EV",
        edit: "",
        reason: "NO_EV drives the pred_* outputs only in g_no_pred, which is not elaborated \
                 with PRED_EN=1; its mutants are caught at PRED_EN=0",
        when: |p| p.get("PRED_EN") == 1,
    },
];
