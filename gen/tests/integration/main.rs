//! The RTL generator's tests (lint gate, synthesis baselines and flows), in one binary.
//!
//! One test binary per package, each former test file a module (`cargo test --test
//! integration <module>::` runs one of them): cargo runs test binaries one after another,
//! so a binary with one long test (a synthesis baseline, a Verilator model build) left the
//! second core idle, and each binary linked the whole workspace again.

mod baseline;
mod lint;
mod shell;
mod synth;
