#!/usr/bin/env bash
# Installs the hardware tools warpforge drives, when missing:
#   - Debian packages: verilator (co-simulation, lint), yosys (synthesis checks, area),
#     iverilog (a second Verilog front end for the lint gate), g++ (Verilator models),
#     clang-14 (`warpforge cc`: CUDA programs compiled without a CUDA SDK), opensta and
#     qflow-tech-osu018 (`warpforge synth --target osu018`: static timing, OSU 0.18 um cells);
#   - svlint (Verilog style/design-intent lint), a Rust program: `cargo install` builds it
#     once per machine (about 13 minutes on 2 cores) into ~/.cargo/bin, then it is reused.
# Safe to run repeatedly: each tool is installed only if it is not found.
set -euo pipefail

SVLINT_VERSION=0.9.5

need_apt=()
command -v verilator >/dev/null || need_apt+=(verilator)
command -v yosys >/dev/null || need_apt+=(yosys)
command -v iverilog >/dev/null || need_apt+=(iverilog)
command -v g++ >/dev/null || need_apt+=(g++)
command -v make >/dev/null || need_apt+=(make)
command -v clang++-14 >/dev/null || need_apt+=(clang-14)
command -v sta >/dev/null || need_apt+=(opensta)
[[ -f /usr/share/qflow/tech/osu018/osu018_stdcells.lib ]] || need_apt+=(qflow-tech-osu018)
if ((${#need_apt[@]})); then
    echo "install-tools: installing ${need_apt[*]} (apt-get)"
    sudo_cmd=()
    if [[ $(id -u) -ne 0 ]]; then
        command -v sudo >/dev/null || {
            echo "install-tools: need root or sudo to run: apt-get install -y ${need_apt[*]}" >&2
            exit 1
        }
        sudo_cmd=(sudo)
    fi
    export DEBIAN_FRONTEND=noninteractive
    "${sudo_cmd[@]}" apt-get update -qq
    "${sudo_cmd[@]}" apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

export PATH="$HOME/.cargo/bin:$PATH"
if ! command -v svlint >/dev/null; then
    echo "install-tools: building svlint $SVLINT_VERSION once for this machine (cargo install, ~13 min on 2 cores)"
    cargo install svlint --locked --version "$SVLINT_VERSION" --quiet
fi
