#!/bin/sh
# Regenerates the checked-in PTX of this corpus with Debian's clang-14 (no CUDA SDK needed).
# warp.cu needs PTX ISA >= 6.0 for the *_sync warp intrinsics.
set -e
cd "$(dirname "$0")"
CC="clang-14 -x cuda --cuda-device-only --cuda-gpu-arch=sm_70 -nocudainc -nocudalib -O2 -S"
for f in *.cu; do
  extra=""
  [ "$f" = warp.cu ] && extra="-Xclang -target-feature -Xclang +ptx64"
  $CC $extra "$f" -o "${f%.cu}.ptx"
done
