//! The PTX front end on the clang-14 corpus (tests/ptx-corpus): every file parses, and the
//! lowered modules have the expected shape.

use warpforge_model::ptx::ir::*;
use warpforge_model::ptx::parse_module;

const CORPUS: &[(&str, &str)] = &[
    ("control.ptx", include_str!("../ptx-corpus/control.ptx")),
    ("memory.ptx", include_str!("../ptx-corpus/memory.ptx")),
    ("arith.ptx", include_str!("../ptx-corpus/arith.ptx")),
    ("warp.ptx", include_str!("../ptx-corpus/warp.ptx")),
    ("misc.ptx", include_str!("../ptx-corpus/misc.ptx")),
];

#[test]
fn whole_corpus_parses() {
    for (name, src) in CORPUS {
        let m = parse_module(name, src).unwrap_or_else(|e| panic!("{e}"));
        assert!(!m.kernels.is_empty(), "{name}");
        for k in &m.kernels {
            eprintln!(
                "{name} {}: {} insts, {} regs/thread, {} preds, {} slots",
                k.name,
                k.insts.len(),
                k.regs_per_thread,
                k.preds_per_thread,
                k.num_regs
            );
        }
    }
}

fn module(name: &str) -> Module {
    let src = CORPUS.iter().find(|(n, _)| *n == name).unwrap().1;
    parse_module(name, src).unwrap()
}

fn sym<'m>(m: &'m Module, name: &str) -> &'m Symbol {
    m.symbols.iter().find(|s| s.name == name).unwrap()
}

#[test]
fn every_branch_has_target_and_rpc_in_range() {
    for (name, src) in CORPUS {
        let m = parse_module(name, src).unwrap();
        for k in &m.kernels {
            let n = k.insts.len() as u32;
            assert!(matches!(
                k.insts.last().unwrap().op,
                Opcode::Ret | Opcode::Exit | Opcode::Bra
            ));
            for i in &k.insts {
                assert!(i.loc.line > 0 && i.loc.col > 0);
                if i.op == Opcode::Bra {
                    assert!(i.target.unwrap() < n);
                    let r = i.rpc.unwrap();
                    assert!(r == END_PC || r < n);
                } else {
                    assert!(i.target.is_none() && i.rpc.is_none());
                }
                for o in i.dsts.iter().chain(&i.srcs) {
                    if let Operand::Reg(r) = o {
                        assert!(*r < k.num_regs);
                    }
                }
            }
            assert_eq!(
                m.kernel_index[&k.name],
                m.kernels.iter().position(|x| x.name == k.name).unwrap()
            );
        }
    }
}

#[test]
fn params_and_kernel_location() {
    let m = module("control.ptx");
    let k = m.kernel("_Z7if_elsePiPKii").unwrap();
    let offs: Vec<(u64, u64)> = k
        .params
        .iter()
        .map(|&p| (m.symbols[p as usize].offset, m.symbols[p as usize].size))
        .collect();
    assert_eq!(offs, vec![(0, 8), (8, 8), (16, 4)]);
    assert_eq!(k.param_bytes, 20);
    assert!(k
        .params
        .iter()
        .all(|&p| m.symbols[p as usize].space == StateSpace::Param));
    // `ld.param.u32 %r6, [_Z7if_elsePiPKii_param_2]` is the first instruction.
    let i0 = &k.insts[0];
    assert_eq!(
        (i0.op, i0.ty, i0.mods.space),
        (Opcode::Ld, ScalarType::U32, Some(StateSpace::Param))
    );
    assert_eq!(i0.addr.unwrap().base, AddrBase::Symbol(k.params[2]));
    let line = CORPUS[0]
        .1
        .lines()
        .position(|l| l.contains(".entry _Z7if_elsePiPKii"))
        .unwrap()
        + 1;
    assert_eq!(
        k.loc,
        SrcLoc {
            line: line as u32,
            col: 10
        }
    );
    assert_eq!(i0.loc.line, line as u32 + 10);
}

#[test]
fn globals_consts_shared_local_layout() {
    let m = module("memory.ptx");
    let g = sym(&m, "g_counter");
    assert_eq!(
        (g.space, g.offset, g.size, g.init.clone()),
        (StateSpace::Global, 0, 4, vec![5, 0, 0, 0])
    );
    let t = sym(&m, "g_table");
    assert_eq!((t.offset, t.size), (4, 16));
    assert_eq!(t.init, vec![1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0]);
    assert_eq!(sym(&m, "g_scale").init, 1.5f32.to_le_bytes().to_vec());
    let d = sym(&m, "g_d");
    assert_eq!((d.offset, d.align), (24, 8));
    assert_eq!(&d.init[..8], &2.5f64.to_le_bytes());
    assert_eq!(m.global_bytes, 40);
    let c = sym(&m, "c_coef");
    assert_eq!((c.space, c.offset, c.size), (StateSpace::Const, 0, 32));
    assert_eq!(sym(&m, "c_f").offset, 32);
    assert_eq!(m.const_bytes, 40);
    // Module-scope shared first (256 bytes), then the kernel's tile[128].
    assert_eq!(sym(&m, "s_module").offset, 0);
    let tile = sym(&m, "_ZZ14shared_reversePiPKiE4tile");
    assert_eq!(
        (tile.space, tile.offset, tile.size),
        (StateSpace::Shared, 256, 512)
    );
    assert_eq!(
        m.kernel("_Z14shared_reversePiPKi").unwrap().shared_bytes,
        768
    );
    assert_eq!(m.kernel("_Z13module_sharedPi").unwrap().shared_bytes, 256);
    assert_eq!(m.kernel("_Z7atomicsPiPfPj").unwrap().shared_bytes, 256 + 8);
    let k = m.kernel("_Z11local_arrayPiPKii").unwrap();
    assert_eq!(k.local_bytes, 64);
    let depot = sym(&m, "__local_depot4");
    assert_eq!((depot.space, depot.offset), (StateSpace::Local, 0));
    // `mov.u64 %SPL, __local_depot4` -> SymbolAddr.
    let id = m
        .symbols
        .iter()
        .position(|s| s.name == "__local_depot4")
        .unwrap() as SymbolId;
    assert!(k
        .insts
        .iter()
        .any(|i| i.op == Opcode::Mov && i.srcs == vec![Operand::SymbolAddr(id)]));
    // Dynamic shared memory starts at the end of the kernel's static segment.
    let m = module("misc.ptx");
    let k = m.kernel("_Z10dyn_sharedPiPKi").unwrap();
    assert_eq!(k.shared_bytes, 0);
    assert!(m
        .symbols
        .iter()
        .any(|s| s.name == "dyn_smem" && s.space == StateSpace::Shared));
}

#[test]
fn immediates_and_types() {
    let m = module("arith.ptx");
    let k = m.kernel("_Z9selp_testPiPKiPf").unwrap();
    let selps: Vec<&Instruction> = k.insts.iter().filter(|i| i.op == Opcode::Selp).collect();
    assert_eq!(
        selps[0].srcs[..2],
        [Operand::Imm(17), Operand::Imm(0xFFFF_FFFD)]
    );
    assert_eq!(selps[1].ty, ScalarType::F32);
    assert_eq!(
        selps[1].srcs[..2],
        [Operand::Imm(0x4020_0000), Operand::Imm(0x3F80_0000)]
    );
    let k = m.kernel("_Z11double_mathPdPKd").unwrap();
    let div = k.insts.iter().find(|i| i.op == Opcode::Div).unwrap();
    assert_eq!(div.srcs[1], Operand::Imm(7.0f64.to_bits()));
    assert_eq!(
        (div.class, div.mods.rounding),
        (InstClass::Div, Some(Rounding::Rn))
    );
    let k = m.kernel("_Z11conversionsPKiPcPsPxPfPdPhPtPy").unwrap();
    let cvts: Vec<(ScalarType, Option<ScalarType>)> = k
        .insts
        .iter()
        .filter(|i| i.op == Opcode::Cvt)
        .map(|i| (i.ty, i.ty2))
        .collect();
    assert!(cvts.contains(&(ScalarType::F32, Some(ScalarType::S32))));
    assert!(cvts.contains(&(ScalarType::S64, Some(ScalarType::F64))));
    let k = m.kernel("_Z5sregsPj").unwrap();
    let specials: Vec<SpecialReg> = k
        .insts
        .iter()
        .flat_map(|i| i.srcs.iter())
        .filter_map(|o| {
            if let Operand::Special(s) = o {
                Some(*s)
            } else {
                None
            }
        })
        .collect();
    for s in [
        SpecialReg::Tid(2),
        SpecialReg::Nctaid(1),
        SpecialReg::LaneMaskGt,
        SpecialReg::Clock64,
        SpecialReg::GridId,
    ] {
        assert!(specials.contains(&s), "{s:?}");
    }
    let m = module("warp.ptx");
    let k = &m.kernels[0];
    let shfl = k.insts.iter().find(|i| i.op == Opcode::Shfl).unwrap();
    assert_eq!(shfl.mods.shfl, Some(ShflMode::Down));
    assert_eq!(
        shfl.srcs[1..],
        [
            Operand::Imm(16),
            Operand::Imm(31),
            Operand::Imm(0xFFFF_FFFF)
        ]
    );
    assert_eq!(shfl.class, InstClass::Ctrl);
    let ballot = k
        .insts
        .iter()
        .find(|i| i.mods.vote == Some(VoteMode::Ballot))
        .unwrap();
    assert_eq!((ballot.ty, ballot.srcs.len()), (ScalarType::B32, 2));
}

#[test]
fn instruction_classes() {
    let m = module("arith.ptx");
    let k = m.kernel("_Z16float_ftz_approxPfPKf").unwrap();
    for i in &k.insts {
        let want = match (i.op, i.ty) {
            (Opcode::Ld | Opcode::St, _) => InstClass::Mem,
            (Opcode::Ret, _) => InstClass::Ctrl,
            (Opcode::Rcp, ScalarType::F64) => InstClass::Dp,
            (Opcode::Cvt, _) if i.ty2 == Some(ScalarType::F64) || i.ty == ScalarType::F64 => {
                InstClass::Dp
            }
            (Opcode::Div, ScalarType::F32) if i.mods.approx => InstClass::Sfu,
            (Opcode::Div, ScalarType::F32) => InstClass::Div,
            (
                Opcode::Rsqrt
                | Opcode::Rcp
                | Opcode::Sqrt
                | Opcode::Sin
                | Opcode::Lg2
                | Opcode::Ex2,
                _,
            ) => InstClass::Sfu,
            (Opcode::Fma, ScalarType::F32) => InstClass::Fma,
            _ => InstClass::Alu,
        };
        assert_eq!(i.class, want, "{:?} {:?}", i.op, i.ty);
    }
    let m = module("memory.ptx");
    let k = m.kernel("_Z7atomicsPiPfPj").unwrap();
    let atoms: Vec<_> = k.insts.iter().filter(|i| i.op == Opcode::Atom).collect();
    assert!(atoms
        .iter()
        .all(|a| a.class == InstClass::Mem && a.dsts.len() == 1));
    let cas = atoms
        .iter()
        .find(|a| a.mods.atom == Some(AtomOp::Cas))
        .unwrap();
    assert_eq!(
        (cas.srcs.len(), cas.mods.space),
        (2, Some(StateSpace::Global))
    );
    assert!(atoms
        .iter()
        .any(|a| a.mods.space == Some(StateSpace::Generic) && a.mods.atom == Some(AtomOp::Inc)));
    assert!(atoms
        .iter()
        .any(|a| a.mods.space == Some(StateSpace::Shared) && a.ty == ScalarType::F32));
    let bar = k.insts.iter().find(|i| i.op == Opcode::BarSync).unwrap();
    assert_eq!(
        (bar.srcs.clone(), bar.class),
        (vec![Operand::Imm(0)], InstClass::Ctrl)
    );
    let k = m.kernel("_Z7vectorsP7float4_PKS_P5int2_PKS3_").unwrap();
    let ld4 = k
        .insts
        .iter()
        .find(|i| i.op == Opcode::Ld && i.mods.vec == 4)
        .unwrap();
    assert_eq!(ld4.dsts.len(), 4);
    let st2 = k
        .insts
        .iter()
        .find(|i| i.op == Opcode::St && i.mods.vec == 2)
        .unwrap();
    assert_eq!(st2.srcs.len(), 2);
}
