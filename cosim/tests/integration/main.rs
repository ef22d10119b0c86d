//! The co-simulation harness's tests, in one binary.
//! (One binary per package: why in the tool's `tests/integration/main.rs`.)

mod common;

mod build_cache;
mod failures;
mod gatesim;
mod lockstep;
mod mutants;
mod ram;
mod spe;
mod testbench;
