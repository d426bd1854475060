#!/bin/sh
# Measured RTT (issue 13 item 1), in one VM (topology: line.sh): for each
# WAN round trip R of 2, 10 and 50 ms (netem: R - 2 ms on n2's egress, 2 ms
# on n1's), a fresh line whose gateways protect two QPs n0 -> n3 with a
# fixed k = 8, m = 0 (every loss is answered on request, so the receiver
# side measures too) at 2 % loss. Checked, per R and per flow:
#   - the sender flow's (n2) and the receiver flow's (n1) srtt-us within
#     25 % of R, and min-rtt-us no larger than srtt-us;
#   - LOSS_REPORTs reached the sender at least once per SRTT of the
#     traffic's duration (at least 3/4 of duration / SRTT: TCG's timers
#     run late under load).
# Both kernels' 10 ms hint is right for one R only: the other two fail
# without a measurement.
# Arguments: module=KO ctl=CREM-CTL ksrc=DIR spec=YAML seconds=N
set -u
. "$(dirname "$0")/line.sh"
secs=${arg_seconds:-10}
insmod "$arg_module" || exit 1

# flows NS SIDE: "QP srtt-us min-rtt-us loss-reports-in" per flow of SIDE
# from 192.0.2.1, one line each.
flows() {
  X "$1" "$CTL" -j flow | python3 -c "import json,sys
for f in json.load(sys.stdin)['flow']:
    if f.get('side') == '$2' and f.get('src') == '192.0.2.1':
        s = f.get('stats', {})
        print(f['dest-qp'], f.get('srtt-us', 0), f.get('min-rtt-us', 0),
              s.get('msgs-in-by-type', {}).get('loss-report', 0))"
}

for rtt in 2 10 50; do
  echo "== rtt $rtt ms"
  line_up "delay $((rtt - 2))ms loss random 2%"
  gateways adaptive off k 8 m 0 || { bad "rtt $rtt: gateways configured" ""; line_down; continue; }
  ip netns exec n3 python3 /tmp/fl/roce.py ack 192.0.2.1 /tmp/rtt$rtt.rx &
  acker=$!
  sleep 0.5
  t0=$(date +%s%N)
  X n0 python3 /tmp/fl/roce.py send 203.0.113.1 2 "$secs" 400 >/tmp/rtt$rtt.sent
  t1=$(date +%s%N)
  dur_us=$(( (t1 - t0) / 1000 ))
  flows n2 csf >/tmp/rtt$rtt.csf
  flows n1 crf >/tmp/rtt$rtt.crf
  kill -TERM $acker; wait $acker
  echo "rtt $rtt ms: traffic $((dur_us / 1000)) ms; sender flows (qp srtt min reports):" \
    $(cat /tmp/rtt$rtt.csf) "; receiver flows (qp srtt min):" $(cut -d' ' -f1-3 /tmp/rtt$rtt.crf)
  lo=$((rtt * 750)) hi=$((rtt * 1250))
  for side in csf crf; do
    expect "rtt $rtt ms: $side flows' srtt-us within 25 % of $((rtt * 1000)) us, min-rtt-us <= srtt-us" \
      "[ \$(wc -l </tmp/rtt$rtt.$side) = 2 ] && awk -v lo=$lo -v hi=$hi \
         '\$2 < lo || \$2 > hi || \$3 > \$2 || \$3 == 0 { bad = 1 } END { exit bad }' /tmp/rtt$rtt.$side" \
      "$(cat /tmp/rtt$rtt.$side)"
  done
  # Reports over the traffic: at least 3/4 of one per SRTT.
  expect "rtt $rtt ms: LOSS_REPORTs at the sender at least once per SRTT" \
    "awk -v d=$dur_us '\$2 == 0 || \$4 * \$2 * 4 < d * 3 { bad = 1 } END { exit bad }' /tmp/rtt$rtt.csf" \
    "traffic $dur_us us: $(cat /tmp/rtt$rtt.csf)"
  line_down
done
line_end rtt
