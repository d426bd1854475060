#!/usr/bin/env bash
# e2e.sh CASE [normal|debug] — end-to-end cases on the three-VM topology with
# real rxe traffic. Assertions are on completion, payload verification and
# the module's counters, never on absolute times (TCG timing is noisy).
#   smoke: loss-free 10 ms WAN; crem.ko loaded on both hosts and in the WAN
#          VM; every transfer completes, rping verifies payloads, and each
#          module instance saw the RoCEv2 traffic at the hook it should.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
. "$here/lib.sh"
case_=${1:?case} variant=${2:-normal}
if [ "$variant" = debug ]; then ko=$top/build/debug/crem.ko; else ko=$top/crem.ko; fi
[ -f "$ko" ] || die "no module at $ko: build it first"
out=$(mktemp -d /tmp/crem-e2e.XXXXXX)

fail=0
check() { if eval "$2"; then say "ok: $1"; else say "FAILED: $1"; fail=1; fi; }
# counter VM NAME: a counter summed over the netns-exit lines of the VM's
# module (one per network namespace) in its console log.
counter() {
  sed -n "s/.*crem: netns exit:.* $2=\([0-9]*\).*/\1/p" "$out/$1.console.log" | awk '{s+=$1} END{print s+0}'
}

case $case_ in
  smoke)
    "$here/topo.sh" --out "$out" --variant "$variant" --rtt 10 --loss 0 --size 65536 \
      --iters 20 --tests write_bw:rping --tmo 120 --host-module "$ko" --gw-module "$ko"
    check "write_bw completed" "grep -q 'test=write_bw .*completed=1' $out/results.txt"
    check "rping completed with verified payloads" \
      "grep -q 'test=rping .*completed=1 .*verified=1' $out/results.txt"
    check "host a: sources seen at LOCAL_OUT" "[ \"\$(counter a sources)\" -gt 0 ] && [ \"\$(counter a out)\" -gt 0 ]"
    check "host b: RoCEv2 seen at LOCAL_IN" "[ \"\$(counter b in)\" -gt 0 ]"
    check "gateway: RoCEv2 seen at FORWARD" "[ \"\$(counter wan fwd)\" -gt 0 ]"
    check "no malformed BTH" "[ \"\$(counter a malformed)\" = 0 ] && [ \"\$(counter wan malformed)\" = 0 ]"
    ;;
  *) die "unknown case $case_" ;;
esac
# A kernel splat anywhere fails the case (the debug kernel panics on most).
if grep -lE 'BUG:|WARNING:|Oops|KASAN|kmemleak: [1-9][0-9]* new suspected|possible circular locking|inconsistent lock state|sleeping function called' \
    "$out"/*.console.log; then
  say "FAILED: kernel splat in the console logs above"; fail=1
fi
say "logs: $out"
exit $fail
