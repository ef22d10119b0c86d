#!/usr/bin/env bash
# Regenerate workloads/ptx/*.ptx from workloads/kernels/*.cu. The PTX is checked in, so
# this is only needed after editing a kernel. Needs clang-14 (no CUDA SDK).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CLANG="${CLANG:-clang-14}"
if ! command -v "$CLANG" >/dev/null 2>&1; then
  echo "gen-ptx.sh: $CLANG not found; install with apt-get install clang-14" >&2
  exit 1
fi
mkdir -p "$here/ptx"
status=0
for src in "$here"/kernels/*.cu; do
  name="$(basename "$src" .cu)"
  out="$here/ptx/$name.ptx"
  "$CLANG" -x cuda --cuda-device-only --cuda-gpu-arch=sm_70 -nocudainc -nocudalib -O2 -S \
    "$src" -o "$out"
  # The model runs plain kernels: no calls, no device functions, no textures.
  if grep -nE '^\s*(call|tex|tld4|suld|sust)\b|\.func\b' "$out"; then
    echo "gen-ptx.sh: $out contains a call, .func or texture instruction (see above)" >&2
    status=1
  fi
  echo "generated ${out#"$here"/}"
done
exit $status
