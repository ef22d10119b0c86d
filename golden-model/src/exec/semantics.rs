//! Instruction semantics. (Placeholder: lands next.)
use super::*;
use crate::error::GuestFault;
/// Execute the instruction at `pc` for the `active` lanes of `warp`.
pub fn execute(
    _pc: u32,
    _active: u32,
    _warp: &mut WarpState,
    _cta: &mut CtaState,
    _env: &mut ExecEnv,
) -> Result<StepResult, GuestFault> {
    unimplemented!("semantics land in the next commit")
}
