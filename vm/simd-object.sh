#!/usr/bin/env bash
# simd-object.sh MODULE — fails unless crem.ko holds the vector instructions
# of every SIMD GF(2^8) backend (rust/core/src/gf/x86.rs): a build that
# silently compiled them to scalar code (or dropped a backend) would still
# pass every functional test on a CPU without that backend.
set -euo pipefail
mod=$1
dis=$(objdump -d --no-show-raw-insn "$mod")
fail=0
check() { # NAME REGEX
  local n
  n=$(grep -cE "$2" <<<"$dis" || true)
  printf '%-12s %5d  %s\n' "$1" "$n" "$2"
  [ "$n" -gt 0 ] || { echo "simd-object: no $1 instructions in $mod" >&2; fail=1; }
}
check ssse3 $'\tpshufb +%xmm'
check avx2 $'\tvpshufb +%ymm'
check gfni $'\tvgf2p8affineqb +\\$0x0,%ymm'
check gfni-avx512 $'\tvgf2p8affineqb +\\$0x0,%zmm'
exit $fail
