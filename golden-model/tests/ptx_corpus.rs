//! The PTX front end on the clang-14 corpus (tests/ptx-corpus): every file parses, and the
//! lowered modules have the expected shape.

use warpforge_model::ptx::ir::*;
use warpforge_model::ptx::parse_module;

const CORPUS: &[(&str, &str)] = &[
    ("control.ptx", include_str!("ptx-corpus/control.ptx")),
    ("memory.ptx", include_str!("ptx-corpus/memory.ptx")),
    ("arith.ptx", include_str!("ptx-corpus/arith.ptx")),
    ("warp.ptx", include_str!("ptx-corpus/warp.ptx")),
    ("misc.ptx", include_str!("ptx-corpus/misc.ptx")),
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
