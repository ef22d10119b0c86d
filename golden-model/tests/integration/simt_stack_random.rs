//! Property test of the SPE reconvergence stack: on random structured programs (nested
//! if/else, if-only, loops with per-thread trip counts, guarded early exits) the warp driven
//! by the stack must run, for every thread, exactly the path the thread takes on its own,
//! reconverge at every join (full masks again after each construct) and stay within the
//! depth bound of spec §2.7 — the SIMT stack is transparent to the program.

use proptest::prelude::*;
use warpforge_model::ptx::ir::END_PC;
use warpforge_model::units::simt_stack::{SimtStackSpe, SpeInputs, SpeParams, UpdKind};

const LANES: u32 = 8;

#[derive(Debug, Clone)]
enum Stmt {
    Basic(u8),
    IfElse(Vec<Stmt>, Vec<Stmt>),
    IfOnly(Vec<Stmt>),
    /// do { body } while (per-thread trip count not reached)
    Loop(Vec<Stmt>),
    /// Guarded exit of some threads.
    Exit,
}

#[derive(Debug, Clone, Copy)]
enum Op {
    Seq,
    Branch {
        target: u32,
        rpc: u32,
    },
    Jump {
        target: u32,
    },
    /// Guarded (per-thread) or unconditional exit.
    Exit {
        all: bool,
    },
}

fn stmt() -> impl Strategy<Value = Stmt> {
    let leaf = prop_oneof![4 => (1u8..3).prop_map(Stmt::Basic), 1 => Just(Stmt::Exit)];
    leaf.prop_recursive(4, 24, 3, |inner| {
        let block = prop::collection::vec(inner, 1..3);
        prop_oneof![
            (block.clone(), block.clone()).prop_map(|(a, b)| Stmt::IfElse(a, b)),
            block.clone().prop_map(Stmt::IfOnly),
            block.prop_map(Stmt::Loop),
        ]
    })
}

fn lower(stmts: &[Stmt], ops: &mut Vec<Op>) {
    for s in stmts {
        match s {
            Stmt::Basic(n) => (0..*n).for_each(|_| ops.push(Op::Seq)),
            Stmt::Exit => ops.push(Op::Exit { all: false }),
            Stmt::IfOnly(body) => {
                let br = ops.len();
                ops.push(Op::Seq);
                lower(body, ops);
                let join = ops.len() as u32;
                ops[br] = Op::Branch {
                    target: join,
                    rpc: join,
                };
            }
            Stmt::IfElse(then, els) => {
                // taken -> else part; fall-through -> then part, which jumps over the else.
                let br = ops.len();
                ops.push(Op::Seq);
                lower(then, ops);
                let jmp = ops.len();
                ops.push(Op::Seq);
                let else_start = ops.len() as u32;
                lower(els, ops);
                let join = ops.len() as u32;
                ops[br] = Op::Branch {
                    target: else_start,
                    rpc: join,
                };
                ops[jmp] = Op::Jump { target: join };
            }
            Stmt::Loop(body) => {
                let start = ops.len() as u32;
                lower(body, ops);
                let back = ops.len();
                ops.push(Op::Seq);
                ops[back] = Op::Branch {
                    target: start,
                    rpc: back as u32 + 1,
                };
            }
        }
    }
}

/// Per-thread outcome of the `visit`-th execution of the branch/exit at `pc`.
fn taken(seed: u64, thread: u32, pc: u32, visit: u32, op: Op) -> bool {
    let mut h = seed ^ (thread as u64) << 40 ^ (pc as u64) << 20 ^ visit as u64;
    h = h.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    h ^= h >> 29;
    h = h.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    h ^= h >> 32;
    match op {
        // Back edges: a per-thread trip count of 1..=3 iterations.
        Op::Branch { target, .. } if target <= pc => visit % 3 < (h % 3) as u32,
        // Exits are rare so that most threads reach the end.
        Op::Exit { all: false } => h.is_multiple_of(8),
        _ => h & 1 == 1,
    }
}

/// The path of one thread running alone.
fn scalar_path(ops: &[Op], seed: u64, thread: u32) -> Vec<u32> {
    let mut visits = vec![0u32; ops.len()];
    let (mut pc, mut path) = (0u32, vec![]);
    loop {
        path.push(pc);
        let op = ops[pc as usize];
        let v = visits[pc as usize];
        visits[pc as usize] += 1;
        pc = match op {
            Op::Seq => pc + 1,
            Op::Jump { target } => target,
            Op::Branch { target, .. } => {
                if taken(seed, thread, pc, v, op) {
                    target
                } else {
                    pc + 1
                }
            }
            Op::Exit { all } => {
                if all || taken(seed, thread, pc, v, op) {
                    return path;
                }
                pc + 1
            }
        };
    }
}

/// Nesting depth of if/else constructs (bounds the stack depth, spec §2.7).
fn nesting(stmts: &[Stmt]) -> u32 {
    stmts
        .iter()
        .map(|s| match s {
            Stmt::IfElse(a, b) => 1 + nesting(a).max(nesting(b)),
            Stmt::IfOnly(a) | Stmt::Loop(a) => 1 + nesting(a),
            _ => 0,
        })
        .max()
        .unwrap_or(0)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    #[test]
    fn stack_preserves_every_threads_path(prog in prop::collection::vec(stmt(), 1..4), seed in any::<u64>()) {
        let mut ops = vec![];
        lower(&prog, &mut ops);
        ops.push(Op::Exit { all: true });
        let depth = 2 * nesting(&prog) + 2;
        let mut stack = SimtStackSpe::new(SpeParams { warp_size: LANES, depth, pc_w: 32, ram_rd_reg: seed % 2 == 0 });
        stack.launch(0, (1 << LANES) - 1);
        let mut visits = vec![vec![0u32; ops.len()]; LANES as usize];
        let mut paths = vec![vec![]; LANES as usize];
        for _step in 0..100_000 {
            if stack.is_empty() {
                break;
            }
            if !stack.tos_valid() {
                stack.tick(&SpeInputs::default());
                continue;
            }
            let pc = stack.tos_pc();
            let mask = stack.tos_mask();
            let op = ops[pc as usize];
            let mut taken_mask = 0u64;
            for t in 0..LANES {
                if mask >> t & 1 == 1 {
                    paths[t as usize].push(pc);
                    let v = visits[t as usize][pc as usize];
                    visits[t as usize][pc as usize] += 1;
                    let all_exit = matches!(op, Op::Exit { all: true });
                    if all_exit || taken(seed, t, pc, v, op) {
                        taken_mask |= 1 << t;
                    }
                }
            }
            let (kind, target, rpc) = match op {
                Op::Seq => (UpdKind::Seq, 0, 0),
                Op::Jump { target } => (UpdKind::Jump, target, 0),
                Op::Branch { target, rpc } => (UpdKind::Branch, target, rpc),
                Op::Exit { .. } => (UpdKind::Exit, 0, 0),
            };
            stack.tick(&SpeInputs {
                upd_valid: true,
                upd_pc: pc,
                upd_kind: kind as u8,
                upd_taken: taken_mask,
                upd_target: target,
                upd_next: pc + 1,
                upd_rpc: rpc,
                ..Default::default()
            });
            prop_assert!(!stack.err_pc(), "pc mismatch at {pc}");
            prop_assert!(!stack.err_overflow(), "overflow at pc {pc} (bound {depth})");
            // Every entry's threads come from the warp's, and sibling paths (pushed by one
            // divergence: the same rpc) never share a thread.
            let e = &stack.entries();
            for en in e {
                prop_assert_eq!(en.mask & !e[0].mask, 0, "{:?}", e);
            }
            for pair in e.windows(2) {
                if pair[0].rpc == pair[1].rpc {
                    prop_assert_eq!(pair[0].mask & pair[1].mask, 0, "{:?}", e);
                }
            }
            for en in e {
                prop_assert!(en.pc != en.rpc || en.rpc == END_PC, "entry at its own rpc: {:?}", e);
            }
        }
        prop_assert!(stack.is_empty(), "warp did not finish");
        for t in 0..LANES {
            prop_assert_eq!(&paths[t as usize], &scalar_path(&ops, seed, t), "thread {}", t);
        }
    }
}
