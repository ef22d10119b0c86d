//! Helpers the command-line tests share: run the `warpforge` binary and read what it said.
#![allow(dead_code)] // each test crate uses its own subset

use std::process::{Command, Output};

/// Runs the `warpforge` binary built for these tests with `args`.
pub fn warpforge(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_warpforge"))
        .args(args)
        .output()
        .expect("run warpforge")
}

/// Everything the run printed: stdout, then stderr.
pub fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}
