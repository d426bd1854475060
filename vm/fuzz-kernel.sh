#!/usr/bin/env bash
# fuzz-kernel.sh [SECONDS] [debug|normal] — fuzz crem.ko itself in one VM
# (vm/guest/fuzz-kernel.sh): mutated CREM datagrams at a gateway's CREM port
# from its peer, a reporter and a stranger while RoCEv2 traffic flows, and
# random genetlink messages of the crem family from root and from an
# unprivileged user namespace, both parts for SECONDS (default 120) at once.
# Debug (the default): KASAN, lockdep, kmemleak, panic_on_warn.
# Environment: FUZZ_SEED (replay a run), FUZZ_PARTS (wire+netlink, wire,
# netlink), CREM_MODULE, CREM_CTL (default: the variant's build).
# Fails (non-zero) on any splat, oops or VM death, a fuzzer that did not run
# to its end, a message type no handler saw, a module that no longer
# restores, an rmmod that fails, or a kmemleak report naming crem.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
. "$here/lib.sh"
. "$here/progress.sh"
secs=${1:-120} variant=${2:-debug}
if [ "$variant" = debug ]; then dko=$top/build/debug/crem.ko; else dko=$top/crem.ko; fi
mod=${CREM_MODULE:-$dko} ctl=${CREM_CTL:-${CARGO_TARGET_DIR:-$top/target}/release/crem-ctl}
[ -f "$mod" ] || die "no module $mod (make module-debug)"
[ -x "$ctl" ] || die "no crem-ctl binary $ctl (cargo build -p crem-ctl --release)"
mod=$(cd "$(dirname "$mod")" && pwd)/$(basename "$mod")
out=$(mktemp -d /tmp/crem-fuzz-kernel.XXXXXX)
chmod 755 "$out"
cp "$ctl" "$out/crem-ctl" && chmod 755 "$out/crem-ctl"
t0=$SECONDS rc=0
# progress: every FUZZ_PROGRESS_EVERY s (30) while the VM runs, a line on
# stderr: booting, fuzzing N/SECONDS s (from the guest's "fuzzers start" on
# the console, seen within 5 s) with the time left, or checking after.
progress() {
  local log=$out/fuzz-kernel.console.log began="" n=0 every=${FUZZ_PROGRESS_EVERY:-30}
  while sleep 5; do
    [ -n "$began" ] || ! grep -q 'fuzz-kernel: traffic flows; fuzzers start' "$log" 2>/dev/null ||
      began=$SECONDS
    n=$((n + 5))
    [ $((n % every)) -lt 5 ] || continue
    fuzz_kernel_progress "${FUZZ_PARTS:-wire+netlink}" "$secs" $((SECONDS - t0)) \
      "${began:+$((SECONDS - began))}" >&2
  done
}
progress &
ticker=$!
# Boot, setup and the checks afterwards take about 3 min on the debug kernel
# under TCG (run-vm.sh triples the timeout there); the wire window may run
# 30 % of the seconds longer while a type is unreached.
CREM_OUT=$out "$here/run-vm.sh" --name fuzz-kernel --variant "$variant" --out "$out" \
  --timeout $((secs + secs * 3 / 10 + 240)) \
  "$here/guest/fuzz-kernel.sh" module="$mod" ctl=/tmp/out/crem-ctl ksrc="$(kernel_src)" \
  spec="$top/netlink/crem.yaml" seconds="$secs" parts="${FUZZ_PARTS:-wire+netlink}" \
  ${FUZZ_SEED:+seed=$FUZZ_SEED} corpus="$top/rust/core/fuzz/corpus/wire_decode" \
  fixtures="$top/rust/core/tests/fixtures" || rc=$?
kill "$ticker" 2>/dev/null || true; wait "$ticker" 2>/dev/null || true
log=$out/fuzz-kernel.console.log
grep -E '^(ok|not ok|    #|  (wire|nl-)|reach|unreached|traffic:|after:|fuzz-kernel:|\[[0-9.]*\] fuzz-kernel:)' "$log" || true
splats=0
if kernel_reports "$log" >/dev/null; then
  splats=$(grep -cE "$KERNEL_REPORT_RE" "$log")
  say "FAILED: kernel report in $log:"
  grep -m1 -B5 -A40 -E "$KERNEL_REPORT_RE" "$log" >&2 || true
  say "the last datagrams sent (one a line, source and hex): $out/wire-last.txt"
  rc=1
fi
case $rc in
  0) ;;
  124) say "FAILED: the VM timed out" ;;
  125) say "FAILED: the VM died" ;;
  *) say "FAILED: exit $rc" ;;
esac
say "fuzz-kernel: splats=$splats, $((SECONDS - t0)) s wall; console log: $log"
exit $rc
