#!/usr/bin/env bash
# line.sh CASE MODULE CREMCTL_BINARY [normal|debug] [SECONDS] — a one-VM
# datapath case on four netns in a line (vm/guest/line.sh) with
# RoCEv2-shaped traffic and no RDMA device:
#   datapath  restored packets: ICRC, no ECN marking, the FORWARD policy;
#             skb drops traced against the module's counters
#   datapath6 the same over IPv6 (vm/guest/datapath6.sh): flows with IPv6
#             addresses, restored packets' ICRC (all 32 bits), no ECN, an
#             ip6 FORWARD rule, the messages' DSCP
#   edges     CE-marked REPAIRs lower m; GRO aggregates split and each
#             packet protected; bridged traffic (br_netfilter) passes
#             unprotected; held packets dropped with their deleted input
#             device; a HELLO flood leaves local protection alone; a forged
#             REPAIR_REQUEST answered within the retransmission budget;
#             receiver flows charged to the netns's memory cgroup stop at
#             its limit (vm/guest/edges.sh; CREM_PARTS="ce gro" runs some)
#   churn     teardown racing live traffic: flow deletion, port and role
#             flips, input-device deletion with packets held, netns
#             destruction, a HELLO flood; then rmmod. NOT yet in make
#             check: under TCG one 30 s run reaches one round of the loop
#             and its flow deletions do not keep up (see the README)
#   rtt       measured RTT at 2, 10 and 50 ms: each gateway's flows report
#             srtt-us within 25 % of the netem RTT, LOSS_REPORTs at least
#             once per SRTT (vm/guest/rtt.sh)
#   report    the Path Reporter (docs/reporter-plan.md R3): a fifth netns
#             r between the gateways reports its tbf's drops; the
#             PATH_REPORTs captured match the drops tcpdump saw at r (PSNs,
#             Lost Count, node-id, cause), r's and n2's counters agree, a
#             route MTU of 300 cuts reports with Truncated, report off and
#             netem loss elsewhere send none, interception, the local feed,
#             two reporters in series merging, rmmod while reporting; part
#             v6: the same reports over IPv6 (AF 6, to n2's IPv6 address)
#             (vm/guest/report.sh; CREM_PARTS="main off" runs some)
# Fails on any kernel report (KASAN, lockdep, kmemleak, WARN). SECONDS: how
# long the traffic runs (churn: 120 on the debug kernel, the issue's "at
# least 2 minutes", 30 otherwise; edges: 30 on the debug kernel, 12
# otherwise; datapath: 20 per transfer; report: 10 per run, five runs).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
[ $# -ge 3 ] || die "usage: line.sh datapath|datapath6|churn|edges|rtt|report MODULE CREMCTL_BINARY [normal|debug] [SECONDS]"
case_=$1 mod=$(cd "$(dirname "$2")" && pwd)/$(basename "$2") variant=${4:-normal}
case $case_ in
  churn) secs=${5:-$([ "$variant" = debug ] && echo 120 || echo 30)} ;;
  datapath|datapath6) secs=${5:-20} ;;
  # Its checks count packets: under KASAN and TCG a second carries a few
  # times fewer, so the debug kernel's traffic runs longer.
  edges) secs=${5:-$([ "$variant" = debug ] && echo 30 || echo 12)}
    # Seven parts, each with its own set-up: the whole case took 357 to
    # 388 s of 396 under TCG at 12 s (the VM's timeout is a hang detector).
    timeout_per_sec=14 ;;
  rtt) secs=${5:-10} ;;
  # Eight runs of 3 + SECONDS s of traffic, each with three captures
  # started and stopped and a comparison under TCG: 367 s in all at stop 48
  # (the timeout, a hang detector, at twice that).
  report) secs=${5:-10} timeout_per_sec=45 ;;
  *) die "unknown case $case_" ;;
esac
[ -f "$mod" ] || die "no module $2"
[ -x "$3" ] || die "no crem-ctl binary $3 (cargo build -p crem-ctl --release)"
out=$(mktemp -d /tmp/crem-$case_.XXXXXX)
chmod 755 "$out"
cp "$3" "$out/crem-ctl" && chmod 755 "$out/crem-ctl"
rc=0
CREM_OUT=$out "$here/run-vm.sh" --name "$case_" --variant "$variant" --out "$out" \
  --timeout $((secs * ${timeout_per_sec:-8} + 300)) \
  "$here/guest/$case_.sh" module="$mod" ctl=/tmp/out/crem-ctl ksrc="$(kernel_src)" \
  spec="$here/../netlink/crem.yaml" seconds="$secs" ${CREM_TRACE:+trace=1} \
  ${CREM_PARTS:+parts="${CREM_PARTS// /:}"} || rc=$?
log=$out/$case_.console.log
grep -E '^(ok|not ok|    #|== |[a-z0-9]+: [0-9]+ passed|sent |n1: |plain: |policy: |ext: |[0-9]+ port|(ce|gro|bridge|devgone|flood|amplify|memcg|idle|main|mtu|off|control|intercept|local|merge|v6|udpclose|unload): |rtt [0-9]+ ms: )' "$log" || true
if kernel_reports "$log"; then
  say "FAILED: kernel report in $log"; rc=1
fi
say "console log: $log"
exit $rc
