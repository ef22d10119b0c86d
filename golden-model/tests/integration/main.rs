//! The golden model's tests, in one binary.
//! (One binary per package: why in the tool's `tests/integration/main.rs`.)

mod dpe_vs_spe;
mod fault_recovery;
mod ptx_builtins;
mod ptx_calls;
mod ptx_corpus;
mod ptx_frontend;
mod runtime_api;
mod simt_stack_random;
mod sm_scoreboard;
