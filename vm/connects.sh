#!/usr/bin/env bash
# connects.sh [TRIALS] [LOSS ...] — how often an RDMA CM connection fails to
# be set up over the test topology, with and without CREM (issue 11): for
# each loss (percent, default 0), one boot without CREM and one with CREM
# (gateways, fixed k=16 m=2), each running TRIALS (default 50) pairs of
# transfers that are little more than a connection: `connect` (rping -V, one
# 64-octet exchange) and `write_bw` (ib_write_bw -R, 5 x 4 KiB, two CM
# connections). A transfer that never connected is tried again up to 3
# times (vm/guest/host.sh), so every attempt counts: failures per 100
# attempts, and the RDMA CM events that ended the failed ones (host a's
# rdma_cma:cm_event_handler trace, e.g. "REJECTED/28": the reject reason).
# Prints a line per boot and test, and writes DIR/connects.json.
# Not part of make check (about 8 min a boot under TCG).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
. "$here/lib.sh"
trials=${1:-50}
shift || true
losses=("${@:-0}")
ko=$top/crem.ko ctl=${CARGO_TARGET_DIR:-$top/target}/release/crem-ctl
[ -f "$ko" ] || die "no $ko: make module"
[ -x "$ctl" ] || die "no $ctl: cargo build -p crem-ctl --release"
out=$(mktemp -d /tmp/crem-connects.XXXXXX)
summary=()
for loss in "${losses[@]}"; do
  for mode in off fixed; do
    d=$out/$mode-$loss
    mkdir -p "$d"
    say "connects: CREM $mode, loss $loss %, $trials trials (logs: $d)"
    # Without CREM, no crem.ko at all.
    mod=(); [ $mode = off ] || mod=(--gw-module "$ko")
    "$here/topo.sh" --out "$d" --rtt 10 --loss "$loss" --crem "$mode" "${mod[@]}" \
      --ctl "$ctl" --tests connect:write_bw --trials "$trials" --iters 5 --size 4096 \
      --tmo 60 >"$d/topo.log" 2>&1 || say "connects: $mode $loss %: a VM failed (see $d)"
    j=$(python3 "$here/results.py" connect-failures "$d")
    summary+=("{\"mode\": \"$mode\", \"loss_pct\": $loss, \"tests\": $j}")
    python3 - "$mode" "$loss" "$j" <<'PY'
import json, sys
mode, loss, tests = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
for t, c in tests.items():
    ev = ", ".join(f"{k} x{v}" for k, v in sorted(c["by_event"].items())) or "-"
    print(f"CREM {mode:5} loss {loss:>4} % {t:9} {c['transfers']:3} transfers "
          f"{c['attempts']:3} attempts {c['failed']:3} failed ({c['per_100']:.1f} per 100): {ev}")
PY
  done
done
(IFS=,; echo "[${summary[*]}]") | python3 -m json.tool >"$out/connects.json"
say "connects: $out/connects.json"
