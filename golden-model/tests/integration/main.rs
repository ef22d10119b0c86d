//! The golden model's tests, in one binary.
//!
//! One test binary per package, each former test file a module (`cargo test --test
//! integration <module>::` runs one of them): cargo runs test binaries one after another,
//! so a binary with one long test (a synthesis baseline, a Verilator model build) left the
//! second core idle, and each binary linked the whole workspace again.

mod dpe_vs_spe;
mod fault_recovery;
mod ptx_builtins;
mod ptx_calls;
mod ptx_corpus;
mod ptx_frontend;
mod runtime_api;
mod simt_stack_random;
mod sm_scoreboard;
