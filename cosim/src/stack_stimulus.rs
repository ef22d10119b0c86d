//! Constrained-random stimulus for the reconvergence stacks (`simt_stack_spe`,
//! `simt_stack_dpe`): warps running random structured programs (nested if/else, if-only,
//! loops with per-thread trip counts, guarded early exits, jumps to the join; see
//! `warpforge_model::units::random_program`) with random per-thread predicates, random
//! stall cycles, random side choice (DPE), occasional illegal updates and resets.
//!
//! Each cycle it reads the stack's registered outputs (the TOS paths) and issues the next
//! instruction of a live path as the GPU model would, so the stack sees realistic traffic
//! (deep nesting, pops, auto-pops) rather than noise. When the warp finishes it launches a
//! new random program with a random (possibly partial) launch mask.
//!
//! Steered by coverage ([`Stimulus::steer`]): while a stack depth or the overflow has not
//! been seen, half the launches run a nest one level deeper than the stack with peeling
//! predicates (one thread leaves at each level, so every level diverges: random predicates
//! run out of threads after about log2(WARP_SIZE) levels and never fill a 16-deep stack);
//! while no launch has coincided with an update, a warp is sometimes abandoned mid-program
//! by a launch in the same cycle as its next legal update (the launch must win); while a
//! reset has not met a raised error flag, errors are left by reset rather than by launch.

use crate::lockstep::typed_side::{drive_typed, typed_side};
use crate::lockstep::{FrameSetup, FrameSide, Stimulus, TypedStimulus};
use warpforge_model::ptx::ir::END_PC;
use warpforge_model::units::contract::{low_mask, Bits, Params, UnitDesc};
use warpforge_model::units::coverage::Coverage;
use warpforge_model::units::random_program::{
    GenParams, Op, Program, SplitMix64, Stmt, WarpDriver,
};
use warpforge_model::units::simt_stack::{SimtStackSpe, SpeInputs, SpeRegs, SPE_DESC};
use warpforge_model::units::simt_stack_dpe::{DpeInputs, DpeRegs, SimtStackDpe, DPE_DESC};

/// Which stack the stimulus drives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Spe,
    Dpe,
}

/// What the stimulus reads of a stack's registered outputs.
struct StackRegs {
    /// (valid, pc, mask) per side (SPE: side 0 only).
    paths: [(bool, u32, u64); 2],
    sides: usize,
    depth: u32,
    /// A sticky error flag is raised.
    errored: bool,
}

impl StackRegs {
    fn spe(r: &SpeRegs) -> StackRegs {
        let tos = (r.tos_valid, r.tos_pc, r.tos_mask);
        StackRegs {
            paths: [tos, tos],
            sides: 1,
            depth: r.depth,
            errored: r.err_overflow || r.err_pc,
        }
    }
    fn dpe(r: &DpeRegs) -> StackRegs {
        StackRegs {
            paths: [(r.l_valid, r.l_pc, r.l_mask), (r.r_valid, r.r_pc, r.r_mask)],
            sides: 2,
            depth: r.depth,
            errored: r.err_overflow || r.err_pc || r.err_side,
        }
    }
}

/// A cycle's inputs in the single-path stack's terms, and the side an update is issued
/// from (the dual-path stack's inputs are [`dpe_inputs`] of them).
type Cycle = (bool, u8, SpeInputs);

/// The dual-path stack's inputs for `spe` issued from `side` (launch fields as they are).
fn dpe_inputs(side: u8, spe: &SpeInputs) -> DpeInputs {
    DpeInputs {
        launch_valid: spe.launch_valid,
        launch_pc: spe.launch_pc,
        launch_rpc: spe.launch_rpc,
        launch_mask: spe.launch_mask,
        ..DpeInputs::update_from(side, spe)
    }
}

pub struct CfgStimulus {
    kind: Kind,
    seed: u64,
    cycles: u64,
    warp_size: u32,
    pc_w: u32,
    depth_param: u32,
    rng: SplitMix64,
    driver: Option<WarpDriver>,
    /// Launch the next program on the next cycle.
    relaunch: bool,
    /// Cycles since the last launch (a program that runs too long is abandoned).
    age: u64,
    /// Directed mode: these programs in order, full warps, no stalls, no noise, sides
    /// alternating (the spec's ALT policy, which reproduces the §4.7 walk-through).
    script: Option<Vec<Program>>,
    next_program: usize,
    last_side: usize,
    /// Directed mode: assert reset this many cycles into the current program.
    reset_in: Option<u64>,
    /// Coverage steering: some depth or the overflow not hit yet.
    steer_deep: bool,
    /// Coverage steering: no launch coincided with an update yet.
    steer_coincide: bool,
    /// Coverage steering: a reset has not yet met every error flag raised (and illegal
    /// updates, which raise them, come ten times as often).
    steer_reset_err: bool,
    /// The legal update (side, inputs) the next launch drives in the same cycle.
    coinciding: Option<(u8, SpeInputs)>,
    /// The ops of the random program being launched (reused: a launch every few dozen
    /// cycles).
    ops: Vec<Op>,
}

impl CfgStimulus {
    /// A stimulus for `desc` (`simt_stack_spe` or `simt_stack_dpe`) running `cycles` cycles.
    pub fn new(desc: &'static UnitDesc, params: &Params, seed: u64, cycles: u64) -> CfgStimulus {
        let kind = if std::ptr::eq(desc, &SPE_DESC) {
            Kind::Spe
        } else if std::ptr::eq(desc, &DPE_DESC) {
            Kind::Dpe
        } else {
            panic!("CfgStimulus drives the stacks, not {}", desc.name)
        };
        let mut s = CfgStimulus {
            kind,
            seed,
            cycles,
            warp_size: params.get("WARP_SIZE") as u32,
            pc_w: params.get("PC_W") as u32,
            depth_param: params.get("DEPTH") as u32,
            rng: SplitMix64::new(seed),
            driver: None,
            relaunch: true,
            age: 0,
            script: None,
            next_program: 0,
            last_side: 1,
            reset_in: None,
            steer_deep: false,
            steer_coincide: false,
            steer_reset_err: false,
            coinciding: None,
            ops: vec![],
        };
        s.rewind();
        s
    }

    /// The directed vectors of spec §10 for the stacks: each program runs to completion
    /// with updates on every cycle; the stimulus ends after the last one.
    pub fn directed(desc: &'static UnitDesc, params: &Params) -> CfgStimulus {
        let mut s = CfgStimulus::new(desc, params, 0x5eed, u64::MAX);
        s.script = Some(directed_programs(s.depth_param));
        s
    }

    fn gen_params(&mut self) -> GenParams {
        // Mostly programs that fit the stack; sometimes deeper ones that overflow it.
        let nesting = if self.rng.chance(1, 16) {
            8
        } else {
            1 + self.rng.below(self.depth_param.min(8) as u64) as u32
        };
        GenParams {
            max_nesting: nesting,
            max_block: 2 + self.rng.below(3) as u32,
            budget: 8 + self.rng.below(48) as u32,
            max_trips: 1 + self.rng.below(4) as u8,
            exits: self.rng.chance(3, 4),
        }
    }

    /// Launch the next program; `None` when a directed script is over.
    fn launch(&mut self) -> Option<Cycle> {
        let lanes = low_mask(self.warp_size);
        if let Some(script) = &self.script {
            let prog = script.get(self.next_program).cloned()?;
            self.next_program += 1;
            // The reset case: the Fig 2.6 program again, reset in the middle of it.
            self.reset_in = (self.next_program == 2).then_some(7);
            let seed = self.next_program as u64;
            self.start_program(&prog, seed);
            return Some(self.launch_inputs(lanes));
        }
        if self.steer_deep && self.rng.chance(1, 2) {
            let seed = self.rng.next_u64();
            let levels = self.depth_param + 1;
            let prog = Program::from_stmts(deep_nest(levels, Some(&mut self.rng)), 3);
            self.start_program(&prog, seed);
            self.driver.as_mut().expect("started").set_peel(true);
            return Some(self.launch_inputs(lanes));
        }
        let gp = self.gen_params();
        let max_trips = Program::random_ops(&mut self.rng, &gp, &mut self.ops);
        let mask = if self.rng.chance(1, 4) {
            self.rng.next_u64() & lanes
        } else {
            lanes
        };
        let mask = if mask == 0 { 1 } else { mask };
        let seed = self.rng.next_u64();
        start_driver(&mut self.driver, &self.ops, max_trips, seed, self.warp_size);
        Some(self.launch_inputs(mask))
    }

    /// The warp's threads at the start of a written program `prog`.
    fn start_program(&mut self, prog: &Program, seed: u64) {
        let lanes = self.warp_size;
        start_driver(&mut self.driver, &prog.ops, prog.max_trips, seed, lanes);
    }

    /// The launch inputs, with the coinciding update if one is pending (the launch must
    /// discard it).
    fn launch_inputs(&mut self, mask: u64) -> Cycle {
        let end = END_PC as u64 & low_mask(self.pc_w);
        let (side, update) = self.coinciding.take().unwrap_or_default();
        let spe = SpeInputs {
            launch_valid: true,
            launch_pc: 0,
            launch_rpc: end as u32,
            launch_mask: mask,
            ..update
        };
        (true, side, spe)
    }

    /// A cycle without an update (`rst_n` as given).
    fn idle(rst_n: bool) -> Cycle {
        (rst_n, 0, SpeInputs::default())
    }

    /// Random values on every update port (mostly rejected by the stack as `err_pc`).
    fn noise(&mut self) -> Cycle {
        let pcm = low_mask(self.pc_w);
        let r = &mut self.rng;
        let spe = SpeInputs {
            upd_valid: true,
            upd_pc: (r.next_u64() & pcm) as u32,
            upd_kind: r.below(4) as u8,
            upd_taken: r.next_u64(),
            upd_target: (r.next_u64() & pcm) as u32,
            upd_next: (r.next_u64() & pcm) as u32,
            upd_rpc: (r.next_u64() & pcm) as u32,
            ..Default::default()
        };
        let side = match self.kind {
            Kind::Spe => 0,
            Kind::Dpe => r.below(2) as u8,
        };
        (true, side, spe)
    }

    /// The inputs of `cycle` given the stack's registered outputs `regs` (the one place
    /// the stimulus decides; both stacks' typed and by-name paths come here).
    fn next(&mut self, cycle: u64, regs: &StackRegs) -> Option<Cycle> {
        if cycle >= self.cycles {
            return None;
        }
        let directed = self.script.is_some();
        if let Some(n) = self.reset_in.as_mut() {
            if *n == 0 {
                self.reset_in = None;
                self.relaunch = true;
                return Some(Self::idle(false));
            }
            *n -= 1;
        }
        if !directed && self.rng.chance(1, 20_000) {
            // Reset in the middle of a run.
            self.relaunch = true;
            return Some(Self::idle(false));
        }
        // A stack that overflowed (the push was dropped) or saw an illegal update no longer
        // matches the program's threads: start a new warp (launch clears the errors).
        let errored = regs.errored;
        self.age += 1;
        if errored && !directed && (self.steer_reset_err || self.rng.chance(1, 4)) {
            // Leave the error state by reset rather than by a launch (both must clear the
            // sticky flags), and sometimes idle in it first (the flags must hold).
            if !self.steer_reset_err && self.rng.chance(1, 2) {
                return Some(Self::idle(true));
            }
            self.relaunch = true;
            return Some(Self::idle(false));
        }
        if self.relaunch || regs.depth == 0 || errored || self.age > 50_000 {
            self.relaunch = false;
            self.age = 0;
            return self.launch();
        }
        let noise_in = if self.steer_reset_err { 200 } else { 2_000 };
        if !directed && self.rng.chance(1, noise_in) {
            // The stack may now hold an error or a mangled state: start afresh next cycle.
            self.relaunch = true;
            return Some(self.noise());
        }
        // Stall cycles (the warp waits on a hazard); also give auto-pops their idle cycle.
        if !directed && self.rng.chance(1, 4) {
            return Some(Self::idle(true));
        }
        // The live sides, without allocating (design.md §7: nothing allocated per cycle).
        let mut live = [0usize; 2];
        let mut n_live = 0;
        for s in 0..regs.sides {
            if regs.paths[s].0 {
                live[n_live] = s;
                n_live += 1;
            }
        }
        let live = &live[..n_live];
        if live.is_empty() {
            return Some(Self::idle(true));
        }
        let side = if directed {
            // ALT: the side that did not issue last, when both are live.
            let s = if live.len() == 2 {
                1 - self.last_side
            } else {
                live[0]
            };
            self.last_side = s;
            s
        } else {
            live[self.rng.below(live.len() as u64) as usize]
        };
        let (_, pc, mask) = regs.paths[side];
        let driver = self.driver.as_mut().expect("launched");
        let upd = driver.issue(pc, mask);
        if self.steer_coincide && !directed && self.rng.chance(1, 64) {
            // Abandon the warp: a launch in the same cycle as its next legal update.
            self.coinciding = Some((side as u8, upd.spe_inputs()));
            self.age = 0;
            return self.launch();
        }
        Some((true, side as u8, upd.spe_inputs()))
    }
}

impl TypedStimulus<SimtStackSpe> for CfgStimulus {
    #[inline]
    fn next_inputs(&mut self, cycle: u64, regs: &SpeRegs, inputs: &mut SpeInputs) -> Option<bool> {
        let (rst_n, _, spe) = self.next(cycle, &StackRegs::spe(regs))?;
        *inputs = spe;
        Some(rst_n)
    }
}

impl TypedStimulus<SimtStackDpe> for CfgStimulus {
    #[inline]
    fn next_inputs(&mut self, cycle: u64, regs: &DpeRegs, inputs: &mut DpeInputs) -> Option<bool> {
        let (rst_n, side, spe) = self.next(cycle, &StackRegs::dpe(regs))?;
        *inputs = dpe_inputs(side, &spe);
        Some(rst_n)
    }
}

impl Stimulus for CfgStimulus {
    fn drive(&mut self, cycle: u64, ports: &mut [Bits]) -> bool {
        match self.kind {
            Kind::Spe => drive_typed::<SimtStackSpe, _>(self, cycle, ports),
            Kind::Dpe => drive_typed::<SimtStackDpe, _>(self, cycle, ports),
        }
    }

    fn frame_side<'a>(&'a mut self, setup: FrameSetup<'a>) -> Box<dyn FrameSide + 'a> {
        match self.kind {
            Kind::Spe => typed_side::<SimtStackSpe, _>(self, setup),
            Kind::Dpe => typed_side::<SimtStackDpe, _>(self, setup),
        }
    }

    fn has_typed_side(&self) -> bool {
        true
    }

    fn can_rewind(&self) -> bool {
        true
    }

    fn rewind(&mut self) {
        self.rng = SplitMix64::new(self.seed);
        self.driver = None;
        self.relaunch = true;
        self.age = 0;
        self.next_program = 0;
        self.last_side = 1;
        self.reset_in = None;
        self.steer_deep = false;
        self.steer_coincide = false;
        self.steer_reset_err = false;
        self.coinciding = None;
    }

    fn steer(&mut self, coverage: &Coverage) {
        if self.script.is_some() {
            return; // the directed vectors are fixed
        }
        self.steer_deep = coverage.is_unhit("err_overflow")
            || (0..=self.depth_param).any(|d| coverage.is_unhit(&format!("depth={d}")));
        self.steer_coincide = coverage.is_unhit("launch_valid & upd_valid");
        self.steer_reset_err = ["err_overflow", "err_pc", "err_side"]
            .iter()
            .any(|e| coverage.is_unhit(&format!("reset while {e}")));
    }
}

/// The warp's threads at the start of the program of `ops` (reusing the last driver's
/// buffers).
fn start_driver(driver: &mut Option<WarpDriver>, ops: &[Op], max_trips: u8, seed: u64, lanes: u32) {
    match driver.as_mut() {
        Some(d) => d.restart(ops, max_trips, seed, lanes),
        None => *driver = Some(WarpDriver::from_ops(ops, max_trips, seed, lanes)),
    }
}

/// `levels` constructs nested in their fall-through sides: if/else with one instruction
/// on the taken side, or (with `rng`, at random) if-only. Under peeling predicates every
/// level diverges: an if/else pushes both paths (the stack grows by two, then the taken
/// side's single thread pops), an if-only pushes only the body (its taken path is already
/// at the join), so a mix of both reaches every depth, not only every other one.
fn deep_nest(levels: u32, mut rng: Option<&mut SplitMix64>) -> Vec<Stmt> {
    let b = Stmt::Basic;
    let mut deep = vec![b(1)];
    for _ in 0..levels {
        let if_only = rng.as_mut().is_some_and(|r| r.chance(1, 2));
        deep = vec![if if_only {
            Stmt::IfOnly(deep)
        } else {
            Stmt::IfElse(deep, vec![b(1)])
        }];
    }
    deep
}

/// Spec §10's directed cases as structured programs (per-thread predicates from fixed
/// seeds): Fig 2.6 (twice: the second run is reset in the middle), BFS-style nested
/// if-only, LUD-style if/else with a loop on each side, a loop with a divergent exit
/// (in-place rule), a nested branch whose IPDOM is the enclosing RPC while the sibling path
/// is live (arrive-and-push), a jump straight to the RPC, a degenerate branch, guarded
/// exits while diverged, and nesting deeper than the stack (overflow).
pub fn directed_programs(depth: u32) -> Vec<Program> {
    use Stmt::*;
    let b = Basic;
    let fig_2_6 = vec![
        b(3),
        IfElse(vec![b(3)], vec![b(2), IfElse(vec![b(3)], vec![b(3)]), b(1)]),
        b(3),
    ];
    let deep = deep_nest(depth + 1, None);
    let cases = vec![
        fig_2_6.clone(),
        fig_2_6,
        vec![b(1), IfOnly(vec![b(2), IfOnly(vec![b(2)]), b(1)]), b(1)],
        vec![
            IfElse(vec![Loop(vec![b(2)])], vec![Loop(vec![b(1), b(2)])]),
            b(1),
        ],
        vec![Loop(vec![b(1), IfOnly(vec![b(1)])]), b(1)],
        vec![
            IfElse(vec![b(2), IfOnly(vec![b(1), SkipToJoin, b(1)])], vec![b(4)]),
            b(1),
        ],
        vec![IfOnly(vec![b(1), SkipToJoin, b(2)]), b(1)],
        vec![b(1), Degenerate, b(1)],
        vec![IfElse(vec![b(1), Exit, b(1)], vec![Exit, b(2)]), b(1)],
        deep,
    ];
    cases
        .into_iter()
        .map(|stmts| Program::from_stmts(stmts, 3))
        .collect()
}
