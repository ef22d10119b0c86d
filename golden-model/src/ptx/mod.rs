//! PTX front end: text to a runnable [`ir::Module`].
//!
//! Pipeline, one module per job:
//! - [`lexer`]: tokens with line:column;
//! - [`parser`]: recursive descent to an AST;
//! - [`lower`]: AST to IR (opcodes and modifiers, symbols and their layout, labels,
//!   immediates), with virtual registers;
//! - [`cfg`]: basic blocks, post-dominators, the reconvergence PC of every branch;
//! - [`regalloc`]: liveness-based allocation of physical register slots.
//!
//! Conventions of the lowered IR that the executor relies on:
//! - Operand counts are validated per opcode, so `srcs`/`dsts` can be indexed directly.
//! - `mov` with several sources packs them (first = lowest bits, e.g. `mov.b64 %rd, {%r1,
//!   %r2}`); with several destinations it unpacks (`mov.b64 {%r1, %r2}, %rd`).
//! - `setp.CMP.TYPE`: `ty` is the comparison type; `set.CMP.DTYPE.STYPE`: `ty` = DTYPE,
//!   `ty2` = STYPE; `selp.T`: `ty` = `ty2` = T; `cvt.D.S`: `ty` = D, `ty2` = S;
//!   `mul.wide`/`mad.wide`: `ty` is the source type (the destination is twice as wide).
//! - `div.full.f32` is `approx == false` with no rounding; `div.rn.f32` has `Rn`.
//! - Immediates are raw bits of the operand's type: shift amounts, bfe/bfi positions and
//!   shfl lane/clamp/mask operands are `.u32`; the third operand of `selp`/`setp.BOOL` and
//!   the first of `vote` is `.pred`; the addend of `mad.wide` is double width.
//! - Vector `ld`/`st` have `mods.vec` destinations/sources; `ld`/`st`/`atom`/`red` without a
//!   state space have `mods.space == Some(Generic)`.
//! - A kernel that may fall off its end (or has a label at its end) gets an implicit final
//!   `ret` located at the closing `}`; every branch target is a valid instruction index.
//! - Registers read before any write hold 0 (slots must start zeroed).
//! - An instruction with several destinations never shares a slot between a destination and
//!   any of its sources, so destinations may be written one at a time.
//!
//! Every failure is a [`PtxError`] with file, line, column and the construct; no input
//! panics (a property test feeds mutated PTX).

pub mod cfg;
pub mod emit;
pub mod ir;
pub mod lexer;
pub mod lower;
pub mod parser;
pub mod regalloc;

use std::collections::HashMap;

use crate::error::PtxError;

/// Parses and lowers one PTX file. `file` is the name used in error messages.
pub fn parse_module(file: &str, src: &str) -> Result<ir::Module, PtxError> {
    let lowered = parse_virtual(file, src)?;
    let mut kernels = Vec::with_capacity(lowered.kernels.len());
    for vk in lowered.kernels {
        let mut k = vk.kernel;
        let cfg = cfg::Cfg::build(&k.insts);
        cfg.set_branch_rpcs(&mut k.insts);
        let alloc = regalloc::allocate(&mut k.insts, &vk.vregs, &cfg).map_err(|m| PtxError {
            file: file.to_string(),
            line: k.loc.line,
            col: k.loc.col,
            message: m,
        })?;
        k.num_regs = alloc.num_regs;
        k.regs_per_thread = alloc.regs_per_thread;
        k.preds_per_thread = alloc.preds_per_thread;
        kernels.push(k);
    }
    let kernel_index: HashMap<String, usize> = kernels
        .iter()
        .enumerate()
        .map(|(i, k)| (k.name.clone(), i))
        .collect();
    Ok(ir::Module {
        file: file.to_string(),
        kernels,
        symbols: lowered.symbols,
        global_bytes: lowered.global_bytes,
        const_bytes: lowered.const_bytes,
        kernel_index,
    })
}

/// Parses and lowers without register allocation: instructions use virtual register ids
/// (indices into `VirtualKernel::vregs`) and `rpc` is not yet set. For tests and tools.
pub fn parse_virtual(file: &str, src: &str) -> Result<lower::Lowered, PtxError> {
    let toks = lexer::lex(file, src)?;
    let ast = parser::parse(file, &toks)?;
    lower::lower(file, &ast)
}
