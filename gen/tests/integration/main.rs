//! The RTL generator's tests (lint gate, synthesis baselines and flows), in one binary.
//! (One binary per package: why in the tool's `tests/integration/main.rs`.)

mod baseline;
mod lint;
mod shell;
mod synth;
