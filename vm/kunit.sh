#!/usr/bin/env bash
# kunit.sh MODULE [normal|debug] — run crem.ko's KUnit suites in a VM and parse
# the KTAP output with the kernel's own tools/testing/kunit/kunit.py. Fails on a
# failed, crashed or missing suite.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
mod=$1 variant=${2:-normal}
out=$(mktemp -d /tmp/crem-kunit.XXXXXX)
CREM_OUT=$out "$here/run-vm.sh" --kunit --name kunit --variant "$variant" --out "$out" --timeout 300 \
  "$here/guest/kunit.sh" module="$(cd "$(dirname "$mod")" && pwd)/$(basename "$mod")"
# The built-in KUnit prints an empty KTAP header at boot; keep only the block
# that the module's suites print (from the last header on).
awk '/^KTAP version 1/{buf=""} {buf=buf $0 "\n"} END{printf "%s", buf}' \
  <(sed 's/^\[[ 0-9.]*\] //' "$out/dmesg.txt") >"$out/ktap.txt"
for suite in $(sed -n 's/.*\.name = "\(crem_[a-z_]*\)".*/\1/p' \
    "$here/../kunit/crem_kunit.c"); do
  grep -q "# Subtest: $suite\$" "$out/ktap.txt" || die "KUnit suite $suite did not run (log: $out)"
done
python3 "$(kernel_src)/tools/testing/kunit/kunit.py" parse "$out/ktap.txt"
# A kernel report during the suites (a splat, lockdep, KASAN, kmemleak,
# sleeping in atomic context: the debug kernel panics on only some) fails
# the run, as in every other VM case.
if kernel_reports "$out/dmesg.txt"; then
  grep -E -A 20 "$KERNEL_REPORT_RE" "$out/dmesg.txt" | head -60 || true
  die "kernel report during the KUnit suites (log: $out/dmesg.txt)"
fi
# The crem_bench suite's results (KUnit diagnostics, which kunit.py shows only
# for failures); figures under TCG, see docs/perf.md.
grep -o 'crem-bench: .*' "$out/ktap.txt" || true
