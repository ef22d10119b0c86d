//! Random structured programs and a per-warp driver, the stimulus of the reconvergence
//! stacks' property tests and co-simulation (spec §10 "Random").
//!
//! - [`Program::random`] draws a structured control-flow program — nested if/else,
//!   if-only, loops with per-thread trip counts, guarded early exits, guarded jumps
//!   straight to the enclosing join (`if (c) goto join` / `break`), degenerate branches —
//!   and lowers it to a PC-indexed list of [`Op`]s, each with the `(kind, target, rpc)` a
//!   stack update needs. PC = index, one instruction per PC, and the last op is an
//!   unconditional `EXIT`. RPCs are the immediate post-dominators, known by construction.
//! - [`WarpDriver`] plays the warp's threads: given the PC being issued and the active
//!   mask, it decides every active thread's outcome and returns the `upd_*` inputs
//!   ([`Update`]). A thread's outcome depends only on the seed, the thread and its own
//!   history (how often it has run that PC, its loop counters), never on the issue order,
//!   so SPE, DPE with any side choice and stalls, and a thread running alone
//!   ([`Program::thread_path`]) must all see every thread take the same path.
//!
//! No external dependencies: randomness is a small [`SplitMix64`] written here, so the same
//! seed gives the same programs everywhere (tests, co-simulation, trace files).

use super::contract::low_mask;
use super::simt_stack::{SpeInputs, UpdKind};
use super::simt_stack_dpe::DpeInputs;

/// SplitMix64 (Steele, Lea, Flood 2014): a tiny, fast, seedable generator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64 { state: seed }
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        mix64(self.state)
    }

    /// Uniform in `0..n` (`n > 0`; the modulo bias is irrelevant for test stimulus).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }

    /// True with probability `num/den`.
    #[inline]
    pub fn chance(&mut self, num: u64, den: u64) -> bool {
        self.below(den) < num
    }
}

/// The SplitMix64 output function: a stateless 64-bit mix, used for per-thread decisions.
#[inline]
pub fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A structured statement (the program before lowering).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stmt {
    /// `n` sequential instructions.
    Basic(u8),
    /// `if (c) { then } else { else }`: fall-through to `then`, taken to `else`.
    IfElse(Vec<Stmt>, Vec<Stmt>),
    /// `if (c) { body }`: the branch skips the body.
    IfOnly(Vec<Stmt>),
    /// `i = 0; do { body } while (++i < trips)`, `trips` per thread and per loop entry.
    Loop(Vec<Stmt>),
    /// Guarded exit: some threads retire.
    Exit,
    /// Guarded branch straight to the join of the innermost enclosing construct (the
    /// loop exit for a loop: `break`). Its IPDOM is that join, so it exercises the
    /// IPDOM == TOS RPC rules (SPE reuse, DPE in-place and arrive-and-push).
    SkipToJoin,
    /// A branch whose target is its own fall-through.
    Degenerate,
}

/// How a conditional branch decides per thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cond {
    /// Each thread takes it with probability `bias/8` (0 and 8 make it uniform).
    Random { bias: u8 },
    /// Loop back edge: taken while the thread has iterations left of this loop entry.
    LoopBack,
}

/// One instruction of a lowered program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Seq,
    /// Loop entry (`i = 0`, sequential for the stack): draws each thread's trip count for
    /// the loop whose back edge is at `back_edge`.
    LoopInit {
        back_edge: u32,
    },
    Branch {
        target: u32,
        rpc: u32,
        cond: Cond,
    },
    Jump {
        target: u32,
    },
    /// Each thread exits with probability `bias/8`: 8 for the final op and for an early
    /// `return` that every thread of the path takes.
    Exit {
        bias: u8,
    },
}

impl Op {
    /// The `upd_kind`, `upd_target` and `upd_rpc` of this op (0 where unused).
    pub fn upd_fields(&self) -> (UpdKind, u32, u32) {
        match *self {
            Op::Seq | Op::LoopInit { .. } => (UpdKind::Seq, 0, 0),
            Op::Branch { target, rpc, .. } => (UpdKind::Branch, target, rpc),
            Op::Jump { target } => (UpdKind::Jump, target, 0),
            Op::Exit { .. } => (UpdKind::Exit, 0, 0),
        }
    }
}

/// Knobs of [`Program::random`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GenParams {
    /// Deepest nesting of constructs (at most 8).
    pub max_nesting: u32,
    /// Most statements per block.
    pub max_block: u32,
    /// Most statements in the whole program (keeps deep programs small).
    pub budget: u32,
    /// Most iterations of a loop per thread and entry (at least 1).
    pub max_trips: u8,
    /// Generate guarded early exits.
    pub exits: bool,
}

impl Default for GenParams {
    fn default() -> Self {
        GenParams {
            max_nesting: 4,
            max_block: 3,
            budget: 40,
            max_trips: 3,
            exits: true,
        }
    }
}

/// A lowered program: `ops[pc]`, ending with an unconditional exit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Program {
    pub stmts: Vec<Stmt>,
    pub ops: Vec<Op>,
    /// Most loop iterations per thread and entry.
    pub max_trips: u8,
}

impl Program {
    /// A random program drawn with `rng`.
    pub fn random(rng: &mut SplitMix64, params: &GenParams) -> Program {
        let mut source = Recorder::new(Generator::new(rng, params));
        let mut ops = vec![];
        lower_program(&mut source, &mut ops);
        let stmts = source.finish();
        let rng = source.inner.rng;
        Program {
            stmts,
            ops,
            max_trips: params.max_trips.max(1),
        }
        .with_biases(&mut SplitMix64::new(rng.next_u64()))
    }

    /// The ops [`Program::random`] draws with the same `rng` and `params` (the same draws,
    /// so `rng` ends in the same state), into `ops`, without building the statements: the
    /// co-simulation's stimulus launches a program every few dozen cycles and only runs
    /// its ops. Returns its `max_trips`.
    pub fn random_ops(rng: &mut SplitMix64, params: &GenParams, ops: &mut Vec<Op>) -> u8 {
        ops.clear();
        lower_program(&mut Generator::new(rng, params), ops);
        set_biases(ops, &mut SplitMix64::new(rng.next_u64()));
        params.max_trips.max(1)
    }

    /// Lowers `stmts`; every random branch gets bias 4 (each thread takes it with
    /// probability 1/2), every early exit bias 1 (1/8), and loops run 1..=`max_trips`
    /// times per thread and entry.
    pub fn from_stmts(stmts: Vec<Stmt>, max_trips: u8) -> Program {
        let mut ops = vec![];
        lower_program(&mut Tree::new(&stmts), &mut ops);
        Program {
            stmts,
            ops,
            max_trips: max_trips.max(1),
        }
    }

    /// Random biases ([`set_biases`]).
    fn with_biases(mut self, rng: &mut SplitMix64) -> Program {
        set_biases(&mut self.ops, rng);
        self
    }

    pub fn len(&self) -> usize {
        self.ops.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    /// The op at `pc`; past the end, an unconditional exit (a wrong PC never panics).
    pub fn op(&self, pc: u32) -> Op {
        self.ops
            .get(pc as usize)
            .copied()
            .unwrap_or(Op::Exit { bias: 8 })
    }

    /// Deepest nesting of constructs (if/else, if-only, loop): what
    /// [`GenParams::max_nesting`] bounds.
    pub fn nesting(&self) -> u32 {
        fn depth(stmts: &[Stmt]) -> u32 {
            stmts
                .iter()
                .map(|s| match s {
                    Stmt::IfElse(a, b) => 1 + depth(a).max(depth(b)),
                    Stmt::IfOnly(a) | Stmt::Loop(a) => 1 + depth(a),
                    _ => 0,
                })
                .max()
                .unwrap_or(0)
        }
        depth(&self.stmts)
    }

    /// Deepest nesting of conditional branches: constructs count one level for their
    /// bodies, a `Degenerate` branch one level, and a `SkipToJoin` one level around the
    /// rest of its block (its structured equivalent: `if (c) goto join; rest` is
    /// `if (!c) { rest }`). With `n` levels SPE needs at most `2n + 1` entries and DPE
    /// `n + 1` (spec §2.7).
    pub fn branch_depth(&self) -> u32 {
        fn depth(stmts: &[Stmt]) -> u32 {
            let mut deepest = 0;
            for (i, s) in stmts.iter().enumerate() {
                let d = match s {
                    Stmt::IfElse(a, b) => 1 + depth(a).max(depth(b)),
                    Stmt::IfOnly(a) | Stmt::Loop(a) => 1 + depth(a),
                    Stmt::SkipToJoin => return deepest.max(1 + depth(&stmts[i + 1..])),
                    Stmt::Degenerate => 1,
                    Stmt::Basic(_) | Stmt::Exit => 0,
                };
                deepest = deepest.max(d);
            }
            deepest
        }
        depth(&self.stmts)
    }

    /// The PCs thread `thread` runs when it runs alone (the reference for every stack),
    /// at most `max_steps` of them.
    pub fn thread_path(&self, seed: u64, thread: u32, max_steps: usize) -> Vec<u32> {
        let mut driver = WarpDriver::new(self, seed, thread + 1);
        let (mut pc, mut path) = (0u32, vec![]);
        while path.len() < max_steps {
            path.push(pc);
            let u = driver.issue(pc, 1 << thread);
            let taken = u.taken >> thread & 1 == 1;
            pc = match u.kind {
                UpdKind::Exit if taken => break,
                UpdKind::Jump => u.target,
                UpdKind::Branch if taken => u.target,
                _ => u.next,
            };
        }
        path
    }
}

/// Random biases: a fifth of the branches are uniform (never or always taken), the rest
/// split threads with probability 1/8..7/8; a third of the early exits are taken by every
/// thread that reaches them (a `return`), the rest by 1/8..3/8 of them. The last op is the
/// program's unconditional exit and keeps its bias.
fn set_biases(ops: &mut [Op], rng: &mut SplitMix64) {
    let (last, early) = ops.split_last_mut().expect("ends with an exit");
    debug_assert_eq!(*last, Op::Exit { bias: 8 });
    for op in early {
        match op {
            Op::Branch {
                cond: Cond::Random { bias },
                ..
            } => {
                *bias = if rng.chance(1, 5) {
                    8 * rng.below(2) as u8
                } else {
                    1 + rng.below(7) as u8
                };
            }
            Op::Exit { bias } => {
                *bias = if rng.chance(1, 3) {
                    8
                } else {
                    1 + rng.below(3) as u8
                };
            }
            _ => {}
        }
    }
}

/// A statement without its bodies: what [`lower`] reads from a [`Source`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Head {
    Basic(u8),
    Exit,
    SkipToJoin,
    Degenerate,
    IfElse,
    IfOnly,
    Loop,
}

/// A program's statements as [`lower`] reads them, one at a time, a construct's bodies as
/// nested blocks (an if/else's then-block before its else-block). One lowering serves a
/// written program ([`Tree`]) and the random generator ([`Generator`]), which decides each
/// statement as it is lowered instead of building the statements first.
trait Source {
    /// The next statement of the current block; `None` at its end.
    fn next(&mut self) -> Option<Head>;
    /// The next body of the construct [`Source::next`] returned last begins.
    fn enter(&mut self);
    /// That body has ended.
    fn leave(&mut self);
}

/// The statements of a written program.
struct Tree<'a> {
    /// The blocks being read, innermost last.
    blocks: Vec<std::slice::Iter<'a, Stmt>>,
    /// Bodies of the constructs being lowered not entered yet, the next one last.
    bodies: Vec<&'a [Stmt]>,
}

impl<'a> Tree<'a> {
    fn new(stmts: &'a [Stmt]) -> Tree<'a> {
        Tree {
            blocks: vec![stmts.iter()],
            bodies: vec![],
        }
    }
}

impl Source for Tree<'_> {
    fn next(&mut self) -> Option<Head> {
        let stmt = self.blocks.last_mut()?.next()?;
        Some(match stmt {
            Stmt::Basic(n) => Head::Basic(*n),
            Stmt::Exit => Head::Exit,
            Stmt::SkipToJoin => Head::SkipToJoin,
            Stmt::Degenerate => Head::Degenerate,
            Stmt::IfElse(then, els) => {
                self.bodies.extend([els.as_slice(), then.as_slice()]);
                Head::IfElse
            }
            Stmt::IfOnly(body) => {
                self.bodies.push(body);
                Head::IfOnly
            }
            Stmt::Loop(body) => {
                self.bodies.push(body);
                Head::Loop
            }
        })
    }
    fn enter(&mut self) {
        let body = self.bodies.pop().expect("a construct's body");
        self.blocks.push(body.iter());
    }
    fn leave(&mut self) {
        self.blocks.pop();
    }
}

/// The random statements of [`Program::random`], drawn as they are read.
struct Generator<'r> {
    rng: &'r mut SplitMix64,
    params: GenParams,
    budget: u32,
    /// Per block being drawn, innermost last: its nesting level and the statements it has
    /// still to draw.
    blocks: Vec<(u32, u32)>,
}

impl<'r> Generator<'r> {
    /// Draws the size of the program's outer block.
    fn new(rng: &'r mut SplitMix64, params: &GenParams) -> Generator<'r> {
        let mut g = Generator {
            rng,
            params: GenParams {
                max_nesting: params.max_nesting.min(8),
                ..*params
            },
            budget: params.budget,
            blocks: vec![],
        };
        g.open(0);
        g
    }

    /// A block at `level` of 1..=`max_block` statements.
    fn open(&mut self, level: u32) {
        let n = 1 + self.rng.below(self.params.max_block.max(1) as u64) as u32;
        self.blocks.push((level, n));
    }
}

impl Source for Generator<'_> {
    fn next(&mut self) -> Option<Head> {
        let (level, left) = self.blocks.last_mut()?;
        if *left == 0 {
            return None;
        }
        *left -= 1;
        let level = *level;
        self.budget = self.budget.saturating_sub(1);
        if level < self.params.max_nesting && self.budget > 0 && self.rng.chance(1, 2) {
            return Some(match self.rng.below(4) {
                0 | 1 => Head::IfElse,
                2 => Head::IfOnly,
                _ => Head::Loop,
            });
        }
        Some(match self.rng.below(10) {
            0 if self.params.exits => Head::Exit,
            1 | 2 if level > 0 => Head::SkipToJoin,
            3 => Head::Degenerate,
            _ => Head::Basic(1 + self.rng.below(2) as u8),
        })
    }
    fn enter(&mut self) {
        let level = self.blocks.last().map_or(0, |b| b.0 + 1);
        self.open(level);
    }
    fn leave(&mut self) {
        self.blocks.pop();
    }
}

/// Passes a [`Source`] through, building the statements it yields.
struct Recorder<S> {
    inner: S,
    /// The blocks being built, innermost last (the outer block first).
    blocks: Vec<Vec<Stmt>>,
}

impl<S: Source> Recorder<S> {
    fn new(inner: S) -> Recorder<S> {
        Recorder {
            inner,
            blocks: vec![vec![]],
        }
    }

    /// The statements read (call after the whole program was read).
    fn finish(&mut self) -> Vec<Stmt> {
        debug_assert_eq!(self.blocks.len(), 1, "every body left");
        self.blocks.pop().unwrap_or_default()
    }
}

impl<S: Source> Source for Recorder<S> {
    fn next(&mut self) -> Option<Head> {
        let head = self.inner.next()?;
        let stmt = match head {
            Head::Basic(n) => Stmt::Basic(n),
            Head::Exit => Stmt::Exit,
            Head::SkipToJoin => Stmt::SkipToJoin,
            Head::Degenerate => Stmt::Degenerate,
            // Bodies are attached as they end (`leave`); a body is never empty.
            Head::IfElse => Stmt::IfElse(vec![], vec![]),
            Head::IfOnly => Stmt::IfOnly(vec![]),
            Head::Loop => Stmt::Loop(vec![]),
        };
        self.blocks.last_mut().expect("a block").push(stmt);
        Some(head)
    }
    fn enter(&mut self) {
        self.inner.enter();
        self.blocks.push(vec![]);
    }
    fn leave(&mut self) {
        self.inner.leave();
        let body = self.blocks.pop().expect("a body");
        match self.blocks.last_mut().and_then(|b| b.last_mut()) {
            Some(Stmt::IfElse(then, els)) => {
                if then.is_empty() {
                    *then = body;
                } else {
                    *els = body;
                }
            }
            Some(Stmt::IfOnly(b) | Stmt::Loop(b)) => *b = body,
            _ => unreachable!("a body belongs to a construct"),
        }
    }
}

/// Appends the ops of the whole program of `src` and its final unconditional exit.
fn lower_program(src: &mut impl Source, ops: &mut Vec<Op>) {
    lower(src, ops, &mut vec![]);
    ops.push(Op::Exit { bias: 8 });
}

/// Appends the ops of the current block of `src`; the PCs of `SkipToJoin` branches
/// directly in this block go to `skips`, patched by the enclosing construct once its join
/// is known.
fn lower(src: &mut impl Source, ops: &mut Vec<Op>, skips: &mut Vec<usize>) {
    let pc = |ops: &Vec<Op>| ops.len() as u32;
    let patch = |ops: &mut Vec<Op>, skips: &[usize], join: u32| {
        for &s in skips {
            ops[s] = Op::Branch {
                target: join,
                rpc: join,
                cond: Cond::Random { bias: 4 },
            };
        }
    };
    // A construct's body into `ops`, its skips into `inner`.
    let body = |src: &mut _, ops: &mut Vec<Op>, inner: &mut Vec<usize>| {
        Source::enter(src);
        lower(src, ops, inner);
        Source::leave(src);
    };
    while let Some(head) = src.next() {
        match head {
            Head::Basic(n) => (0..n).for_each(|_| ops.push(Op::Seq)),
            Head::Exit => ops.push(Op::Exit { bias: 1 }),
            Head::SkipToJoin => {
                skips.push(ops.len());
                ops.push(Op::Seq); // patched by the construct
            }
            Head::Degenerate => {
                let next = pc(ops) + 1;
                ops.push(Op::Branch {
                    target: next,
                    rpc: next,
                    cond: Cond::Random { bias: 4 },
                });
            }
            Head::IfOnly => {
                let br = ops.len();
                ops.push(Op::Seq);
                let mut inner = vec![];
                body(src, ops, &mut inner);
                let join = pc(ops);
                ops[br] = Op::Branch {
                    target: join,
                    rpc: join,
                    cond: Cond::Random { bias: 4 },
                };
                patch(ops, &inner, join);
            }
            Head::IfElse => {
                // Fall-through -> then part, which jumps over the else part; taken -> else.
                let br = ops.len();
                ops.push(Op::Seq);
                let mut inner = vec![];
                body(src, ops, &mut inner);
                let jmp = ops.len();
                ops.push(Op::Seq);
                let else_start = pc(ops);
                body(src, ops, &mut inner);
                let join = pc(ops);
                ops[br] = Op::Branch {
                    target: else_start,
                    rpc: join,
                    cond: Cond::Random { bias: 4 },
                };
                ops[jmp] = Op::Jump { target: join };
                patch(ops, &inner, join);
            }
            Head::Loop => {
                let init = ops.len();
                ops.push(Op::Seq);
                let start = pc(ops);
                let mut inner = vec![];
                body(src, ops, &mut inner);
                let back = pc(ops);
                ops.push(Op::Branch {
                    target: start,
                    rpc: back + 1,
                    cond: Cond::LoopBack,
                });
                ops[init] = Op::LoopInit { back_edge: back };
                patch(ops, &inner, back + 1);
            }
        }
    }
}

/// The `upd_*` inputs of one issued instruction (without side and valid).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Update {
    pub pc: u32,
    pub kind: UpdKind,
    /// Taken lanes of a branch, exiting lanes of an exit; 0 otherwise.
    pub taken: u64,
    pub target: u32,
    pub next: u32,
    pub rpc: u32,
}

impl Update {
    pub fn spe_inputs(&self) -> SpeInputs {
        SpeInputs {
            upd_valid: true,
            upd_pc: self.pc,
            upd_kind: self.kind as u8,
            upd_taken: self.taken,
            upd_target: self.target,
            upd_next: self.next,
            upd_rpc: self.rpc,
            ..Default::default()
        }
    }

    pub fn dpe_inputs(&self, side: u8) -> DpeInputs {
        DpeInputs {
            upd_valid: true,
            upd_side: side,
            upd_pc: self.pc,
            upd_kind: self.kind as u8,
            upd_taken: self.taken,
            upd_target: self.target,
            upd_next: self.next,
            upd_rpc: self.rpc,
            ..Default::default()
        }
    }
}

/// The threads of one warp running a [`Program`]: per-thread visit counts, loop trip
/// counters and exited lanes. Allocates in [`WarpDriver::new`]; [`WarpDriver::restart`]
/// reuses the allocations for the next program.
#[derive(Debug, Clone)]
pub struct WarpDriver {
    /// The driver's own copy of the program's ops (small), so a stimulus can own program
    /// and driver together; past the end, an unconditional exit (as [`Program::op`]).
    ops: Vec<Op>,
    max_trips: u8,
    seed: u64,
    lanes: u32,
    /// `visits[pc * lanes + lane]`: how often the lane has run `pc`.
    visits: Vec<u32>,
    /// `trips_left[back_edge * lanes + lane]`: further iterations of the current loop entry.
    trips_left: Vec<u8>,
    /// Whether PC row `pc` of `visits` and `trips_left` belongs to this program. A restart
    /// clears these flags, not the counters: a row is zeroed when first touched
    /// ([`WarpDriver::row`]), so a launch costs a row per PC the warp reaches instead of
    /// zeroing every lane of every PC (the co-simulation launches a program every few
    /// dozen cycles).
    row_live: Vec<bool>,
    exited: u64,
    /// Peel mode: a data-dependent branch is taken by exactly the lowest active lane (when
    /// two or more are active), so that every level of a nest diverges and a warp of N
    /// threads nests N-1 levels deep (random predicates halve the group at each level and
    /// run out of threads after about log2(N) levels).
    peel: bool,
}

impl WarpDriver {
    /// A warp of `lanes` threads (at most 64) at the start of `prog`.
    pub fn new(prog: &Program, seed: u64, lanes: u32) -> WarpDriver {
        WarpDriver::from_ops(&prog.ops, prog.max_trips, seed, lanes)
    }

    /// [`WarpDriver::new`] at a program given by its ops and `max_trips` (as
    /// [`Program::random_ops`] draws them).
    pub fn from_ops(ops: &[Op], max_trips: u8, seed: u64, lanes: u32) -> WarpDriver {
        let mut d = WarpDriver {
            ops: vec![],
            max_trips: 1,
            seed,
            lanes,
            visits: vec![],
            trips_left: vec![],
            row_live: vec![],
            exited: 0,
            peel: false,
        };
        d.restart(ops, max_trips, seed, lanes);
        d
    }

    /// Start over as [`WarpDriver::from_ops`] would, reusing this driver's allocations.
    pub fn restart(&mut self, ops: &[Op], max_trips: u8, seed: u64, lanes: u32) {
        let lanes = lanes.min(64);
        let cells = lanes as usize * ops.len();
        self.ops.clear();
        self.ops.extend_from_slice(ops);
        self.max_trips = max_trips.max(1);
        self.seed = seed;
        self.lanes = lanes;
        if self.visits.len() < cells {
            self.visits.resize(cells, 0);
            self.trips_left.resize(cells, 0);
        }
        self.row_live.clear();
        self.row_live.resize(ops.len(), false);
        self.exited = 0;
        self.peel = false;
    }

    /// Switch peel mode on or off (see the field); [`WarpDriver::restart`] turns it off.
    pub fn set_peel(&mut self, peel: bool) {
        self.peel = peel;
    }

    #[inline]
    fn op(&self, pc: u32) -> Op {
        self.ops
            .get(pc as usize)
            .copied()
            .unwrap_or(Op::Exit { bias: 8 })
    }

    /// Lanes that have exited.
    pub fn exited(&self) -> u64 {
        self.exited
    }

    /// The first cell of PC row `pc` (inside the program), zeroed if this program has not
    /// touched it yet.
    #[inline]
    fn row(&mut self, pc: usize) -> usize {
        let lanes = self.lanes as usize;
        let first = pc * lanes;
        if !self.row_live[pc] {
            self.row_live[pc] = true;
            self.visits[first..first + lanes].fill(0);
            self.trips_left[first..first + lanes].fill(0);
        }
        first
    }

    /// A per-thread random value for the `visit`-th run of `pc` by `lane`.
    fn roll(&self, lane: u32, pc: u32, visit: u32) -> u64 {
        mix64(self.seed ^ mix64((lane as u64) << 40 ^ (pc as u64) << 20 ^ visit as u64))
    }

    /// The warp issues the instruction at `pc` with `mask`: every active thread decides,
    /// and the stack update is returned. Lanes beyond the warp are ignored.
    pub fn issue(&mut self, pc: u32, mask: u64) -> Update {
        let op = self.op(pc);
        let (kind, target, rpc) = op.upd_fields();
        let len = self.ops.len();
        // Per-lane counters exist for PCs inside the program only (a PC past the end is an
        // exit and must not touch another lane's counters).
        let inside = (pc as usize) < len;
        let mut active = mask & low_mask(self.lanes);
        let mut taken = 0u64;
        // The active lanes in increasing order, one set bit at a time.
        let mut next_lane = || {
            (active != 0).then(|| {
                let lane = active.trailing_zeros();
                active &= active - 1;
                lane
            })
        };
        match op {
            // No per-thread decision: nobody takes it, and the visit counts of this PC
            // (which only feed the rolls of this PC) are never read, so none is kept.
            Op::Seq | Op::Jump { .. } => {}
            Op::Branch {
                cond: Cond::Random { .. },
                ..
            } if self.peel => {
                if active.count_ones() >= 2 {
                    taken = active & active.wrapping_neg();
                }
            }
            Op::Branch {
                cond: Cond::LoopBack,
                ..
            } => {
                let row = inside.then(|| self.row(pc as usize));
                while let Some(lane) = next_lane() {
                    let cell = row.map(|r| r + lane as usize);
                    if let Some(left) = cell.map(|c| &mut self.trips_left[c]) {
                        if *left > 0 {
                            *left -= 1;
                            taken |= 1 << lane;
                        }
                    }
                }
            }
            _ => {
                let row = inside.then(|| self.row(pc as usize));
                let back_row = match op {
                    Op::LoopInit { back_edge } if (back_edge as usize) < len => {
                        Some(self.row(back_edge as usize))
                    }
                    _ => None,
                };
                while let Some(lane) = next_lane() {
                    let cell = row.map(|r| r + lane as usize);
                    let visit = cell.map_or(0, |c| {
                        self.visits[c] += 1;
                        self.visits[c] - 1
                    });
                    let r = self.roll(lane, pc, visit);
                    let t = match op {
                        Op::LoopInit { .. } => {
                            let extra = (r % self.max_trips as u64) as u8;
                            if let Some(back) = back_row {
                                self.trips_left[back + lane as usize] = extra;
                            }
                            false
                        }
                        Op::Branch {
                            cond: Cond::Random { bias },
                            ..
                        }
                        | Op::Exit { bias } => (r % 8) < bias as u64,
                        Op::Seq | Op::Jump { .. } | Op::Branch { .. } => false,
                    };
                    taken |= (t as u64) << lane;
                }
            }
        }
        if kind == UpdKind::Exit {
            self.exited |= taken;
        }
        Update {
            pc,
            kind,
            taken,
            target,
            next: pc.wrapping_add(1),
            rpc,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix_matches_the_reference_sequence() {
        // First outputs of SplitMix64 seeded with 1234567 (the reference C code).
        let mut r = SplitMix64::new(1234567);
        assert_eq!(r.next_u64(), 6457827717110365317);
        assert_eq!(r.next_u64(), 3203168211198807973);
    }

    #[test]
    fn lowering_gives_ipdoms_and_patched_skips() {
        use Stmt::*;
        let prog = Program::from_stmts(
            vec![
                IfElse(
                    vec![Basic(1), SkipToJoin, Basic(1)],
                    vec![Loop(vec![Basic(1), SkipToJoin])],
                ),
                Degenerate,
            ],
            3,
        );
        let rnd = Cond::Random { bias: 4 };
        let br = |target, rpc| Op::Branch {
            target,
            rpc,
            cond: rnd,
        };
        assert_eq!(
            prog.ops,
            [
                br(5, 9), // if/else: else at 5, join 9
                Op::Seq,
                br(9, 9), // goto join
                Op::Seq,
                Op::Jump { target: 9 },
                Op::LoopInit { back_edge: 8 },
                Op::Seq,
                br(9, 9), // break: the loop exit (also the if/else join)
                Op::Branch {
                    target: 6,
                    rpc: 9,
                    cond: Cond::LoopBack
                },
                br(10, 10), // degenerate
                Op::Exit { bias: 8 },
            ]
        );
        assert_eq!((prog.nesting(), prog.branch_depth()), (2, 3));
    }

    #[test]
    fn random_ops_are_the_random_programs_ops_and_the_statements_lower_to_them() {
        let unbiased = |ops: &[Op]| -> Vec<Op> {
            ops.iter()
                .map(|op| match *op {
                    Op::Branch {
                        target,
                        rpc,
                        cond: Cond::Random { .. },
                    } => Op::Branch {
                        target,
                        rpc,
                        cond: Cond::Random { bias: 0 },
                    },
                    Op::Exit { .. } => Op::Exit { bias: 0 },
                    op => op,
                })
                .collect()
        };
        let mut ops = vec![];
        for seed in 0..400u64 {
            let params = GenParams {
                max_nesting: 1 + (seed % 9) as u32,
                max_block: 1 + (seed % 4) as u32,
                budget: 4 + (seed % 60) as u32,
                max_trips: (seed % 5) as u8,
                exits: seed % 3 != 0,
            };
            let (mut a, mut b) = (SplitMix64::new(seed), SplitMix64::new(seed));
            let prog = Program::random(&mut a, &params);
            let trips = Program::random_ops(&mut b, &params, &mut ops);
            assert_eq!(ops, prog.ops, "seed {seed}");
            assert_eq!((a, trips), (b, prog.max_trips), "seed {seed}: same draws");
            let relowered = Program::from_stmts(prog.stmts.clone(), params.max_trips);
            assert_eq!(unbiased(&relowered.ops), unbiased(&prog.ops), "seed {seed}");
        }
    }

    #[test]
    fn random_programs_respect_the_knobs() {
        let mut rng = SplitMix64::new(7);
        let mut deepest = 0;
        for _ in 0..200 {
            let params = GenParams {
                max_nesting: 8,
                budget: 60,
                ..Default::default()
            };
            let prog = Program::random(&mut rng, &params);
            assert!(prog.nesting() <= 8);
            assert!(prog.branch_depth() >= prog.nesting());
            deepest = deepest.max(prog.nesting());
            assert_eq!(prog.ops.last(), Some(&Op::Exit { bias: 8 }));
            for (pc, op) in prog.ops.iter().enumerate() {
                if let Op::Branch { target, rpc, cond } = *op {
                    assert!((rpc as usize) < prog.len() && (target as usize) < prog.len());
                    match cond {
                        Cond::LoopBack => assert!(target <= pc as u32 && rpc == pc as u32 + 1),
                        Cond::Random { bias } => {
                            assert!(target > pc as u32 && bias <= 8);
                        }
                    }
                }
            }
        }
        assert_eq!(deepest, 8, "the deepest nesting is drawn");
    }

    #[test]
    fn loops_run_each_thread_its_own_trip_count() {
        let prog = Program::from_stmts(vec![Stmt::Loop(vec![Stmt::Basic(1)])], 4);
        // 0: init; 1: body; 2: back edge; 3: exit.
        let mut counts = [0usize; 4];
        for seed in 0..50 {
            for t in 0..8 {
                let path = prog.thread_path(seed, t, 100);
                let iters = path.iter().filter(|&&pc| pc == 1).count();
                assert!((1..=4).contains(&iters));
                counts[iters - 1] += 1;
                assert_eq!(path.last(), Some(&3));
            }
        }
        assert!(
            counts.iter().all(|&c| c > 0),
            "all trip counts occur: {counts:?}"
        );
    }

    #[test]
    fn driver_outcomes_depend_only_on_each_threads_history() {
        let mut rng = SplitMix64::new(99);
        let prog = Program::random(&mut rng, &GenParams::default());
        // Lane 3 alone, or with the whole warp: same decisions.
        let mut alone = WarpDriver::new(&prog, 5, 8);
        let mut warp = WarpDriver::new(&prog, 5, 8);
        for pc in 0..prog.len() as u32 {
            let a = alone.issue(pc, 1 << 3);
            let w = warp.issue(pc, 0xff);
            assert_eq!(a.taken, w.taken & 1 << 3);
            assert_eq!(
                (a.kind, a.target, a.rpc, a.next),
                (w.kind, w.target, w.rpc, w.next)
            );
        }
        // A wrong PC never panics.
        let u = warp.issue(10_000, u64::MAX);
        assert_eq!(u.kind, UpdKind::Exit);
    }
}
