//! The co-simulation harness's tests, in one binary.
//!
//! One test binary per package, each former test file a module (`cargo test --test
//! integration <module>::` runs one of them): cargo runs test binaries one after another,
//! so a binary with one long test (a synthesis baseline, a Verilator model build) left the
//! second core idle, and each binary linked the whole workspace again.

mod common;

mod build_cache;
mod failures;
mod gatesim;
mod lockstep;
mod mutants;
mod ram;
mod spe;
mod testbench;
