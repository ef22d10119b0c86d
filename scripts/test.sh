#!/usr/bin/env bash
# The whole test suite. Installs what it needs on a fresh Debian machine that has the Rust
# toolchain, then runs every test (unit, property, end-to-end) with optimisations on.
set -euo pipefail
cd "$(dirname "$0")/.."

# No system tools are needed yet beyond the Rust toolchain (clang-14 only regenerates PTX).
cargo test --workspace --profile test "$@"
