#!/usr/bin/env bash
# The whole test suite. Installs what it needs on a fresh Debian machine that has the Rust
# toolchain (Verilator, Yosys, Icarus Verilog, g++, clang-14 from apt; svlint built once
# with cargo), then runs every test (unit, property, RTL lint gate, co-simulation, mutants,
# end-to-end, CUDA programs) with optimisations on.
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/install-tools.sh
export PATH="$HOME/.cargo/bin:$PATH"
cargo test --workspace --profile test "$@"
