//! The command-line tool's end-to-end tests, in one binary.
//!
//! One test binary per package, each former test file a module (`cargo test --test
//! integration <module>::` runs one of them): cargo runs test binaries one after another,
//! so a binary with one long test (a synthesis baseline, a Verilator model build) left the
//! second core idle, and each binary linked the whole workspace again.

mod common;

// The CLI's bounded file readers, which the fuzz tests drive directly (`launch_file` names
// `crate::input_file`, so both sit at the crate root).
#[allow(dead_code)]
#[path = "../../src/input_file.rs"]
mod input_file;
#[allow(dead_code)]
#[path = "../../src/launch_file.rs"]
mod launch_file;

mod cli;
mod clocks;
mod compaction;
mod config_limits;
mod cosim_report;
mod cosim_units;
mod cuda_programs;
mod estimates;
mod fuzz;
mod gen_cli;
mod hooks;
mod input_limits;
mod power;
mod registry;
mod rf_banks;
mod unit_traces;
mod workloads;
