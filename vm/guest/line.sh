# Sourced by the one-VM datapath cases (churn.sh, datapath.sh): four netns in
# a line, two of them CREM gateways protecting the traffic between the outer
# two, and RoCEv2-shaped traffic without an RDMA device (flows/roce.py).
#
#   n0 192.0.2.1 -- [n2 gateway] 10.0.0.2 ==netem== 10.0.0.1 [n1 gateway] -- n3 203.0.113.1
#
# Sources common.sh; arguments ctl= ksrc= spec= (the YNL client for the
# flows/*.py helpers). A blocked-task watchdog runs from here on.
here=$(dirname "$0")
. "$here/common.sh"
CTL=$arg_ctl
mkdir -p /tmp/ynl && cp -r "$arg_ksrc/tools/net/ynl/cli.py" "$arg_ksrc/tools/net/ynl/lib" /tmp/ynl/
cp "$arg_spec" /tmp/ynl/crem.yaml && cp "$arg_ksrc/Documentation/netlink/genetlink-legacy.yaml" /tmp/ynl/
mkdir -p /tmp/fl && cp "$here"/flows/*.py /tmp/fl/ && chmod -R a+rX /tmp/ynl /tmp/fl
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok - $1"; }
bad() { fail=$((fail + 1)); echo "not ok - $1"; echo "$2" | sed 's/^/    # /'; }
# expect NAME CONDITION DETAIL: ok if the shell CONDITION holds.
expect() { if eval "$2"; then ok "$1"; else bad "$1" "$3"; fi; }
# X NS CMD...: CMD in netns NS (in the foreground: for a background job
# whose pid is wanted, use ip netns exec itself, which execs CMD).
X() { ns=$1; shift; ip netns exec "$ns" "$@"; }
# stat_of NS KEY: a counter of `crem-ctl -j stats` (KEY: a.b for nests).
stat_of() { X "$1" "$CTL" -j stats 2>/dev/null | python3 -c "import json,sys
s=json.load(sys.stdin)['stats']
for k in '$2'.split('.'): s=s.get(k, 0) if isinstance(s, dict) else 0
print(s)" 2>/dev/null || echo 0; }
# line_up NETEM: the four netns, the WAN link's netem on n2's egress NETEM.
line_up() {
  WAN_NETEM=$1
  lans_up
  wan_up
}
# lans_up: the four netns and both LANs, n2 and n1 forwarding; the WAN
# between them is the caller's (wan_up, or report.sh's through a router).
lans_up() {
  LINE_SRC=192.0.2.1 LINE_DST=203.0.113.1
  for n in n0 n1 n2 n3; do ip netns add $n; ip -n $n link set lo up; done
  ip link add a0 netns n0 type veth peer name a2 netns n2
  ip link add b3 netns n3 type veth peer name b1 netns n1
  ip -n n0 addr add 192.0.2.1/24 dev a0 && ip -n n2 addr add 192.0.2.2/24 dev a2
  ip -n n3 addr add 203.0.113.1/24 dev b3 && ip -n n1 addr add 203.0.113.2/24 dev b1
  for d in n0:a0 n2:a2 n3:b3 n1:b1; do ip -n ${d%%:*} link set ${d#*:} up; done
  ip -n n0 route add default via 192.0.2.2
  ip -n n3 route add default via 203.0.113.2
  for n in n1 n2; do X $n sysctl -q -w net.ipv4.ip_forward=1; done
}
# wan_up: the n2 - n1 link (made again after a device deletion).
wan_up() {
  ip link add v2 netns n2 type veth peer name v1 netns n1 || return 1
  ip -n n2 addr add 10.0.0.2/24 dev v2 && ip -n n1 addr add 10.0.0.1/24 dev v1
  ip -n n2 link set v2 up && ip -n n1 link set v1 up
  ip -n n2 route replace 203.0.113.0/24 via 10.0.0.1
  ip -n n1 route replace 192.0.2.0/24 via 10.0.0.2
  # shellcheck disable=SC2086
  tc -n n2 qdisc add dev v2 root netem $WAN_NETEM limit 10000
  tc -n n1 qdisc add dev v1 root netem delay 2ms limit 10000
}
# gateways ARGS...: both gateways protect n0 -> n3 (and back), with ARGS.
gateways() {
  X n1 "$CTL" set port 7470 role gateway "$@" peer 192.0.2.0/24=10.0.0.2 &&
  X n2 "$CTL" set port 7470 role gateway "$@" peer 203.0.113.0/24=10.0.0.1
}
# line6_up NETEM: the same line over IPv6 only (datapath6.sh), addresses
# without DAD (a tentative address is no source for ~1 s):
#   n0 2001:db8:a::1 -- [n2] 2001:db8:f::2 ==netem== 2001:db8:f::1 [n1] -- n3 2001:db8:b::1
line6_up() {
  LINE_SRC=2001:db8:a::1 LINE_DST=2001:db8:b::1
  for n in n0 n1 n2 n3; do ip netns add $n; ip -n $n link set lo up; done
  ip link add a0 netns n0 type veth peer name a2 netns n2
  ip link add b3 netns n3 type veth peer name b1 netns n1
  ip link add v2 netns n2 type veth peer name v1 netns n1
  ip -n n0 -6 addr add 2001:db8:a::1/64 dev a0 nodad && ip -n n2 -6 addr add 2001:db8:a::2/64 dev a2 nodad
  ip -n n3 -6 addr add 2001:db8:b::1/64 dev b3 nodad && ip -n n1 -6 addr add 2001:db8:b::2/64 dev b1 nodad
  ip -n n2 -6 addr add 2001:db8:f::2/64 dev v2 nodad && ip -n n1 -6 addr add 2001:db8:f::1/64 dev v1 nodad
  for d in n0:a0 n2:a2 n3:b3 n1:b1 n2:v2 n1:v1; do ip -n ${d%%:*} link set ${d#*:} up; done
  ip -n n0 -6 route add default via 2001:db8:a::2
  ip -n n3 -6 route add default via 2001:db8:b::2
  ip -n n2 -6 route add 2001:db8:b::/64 via 2001:db8:f::1
  ip -n n1 -6 route add 2001:db8:a::/64 via 2001:db8:f::2
  for n in n1 n2; do X $n sysctl -q -w net.ipv6.conf.all.forwarding=1; done
  # shellcheck disable=SC2086
  tc -n n2 qdisc add dev v2 root netem $1 limit 10000
  tc -n n1 qdisc add dev v1 root netem delay 2ms limit 10000
}
# gateways6 ARGS...: both gateways protect n0 -> n3 (and back) over IPv6.
gateways6() {
  X n1 "$CTL" set port 7470 role gateway "$@" peer 2001:db8:a::/64=2001:db8:f::2 &&
  X n2 "$CTL" set port 7470 role gateway "$@" peer 2001:db8:b::/64=2001:db8:f::1
}
# run NAME [TOS]: one transfer of $secs s from $LINE_SRC (n0) to $LINE_DST
# (n3) with IP ToS or traffic class TOS (default ECT(0)), by roce.py on 8
# QPs; what n3 saw in /tmp/NAME.rx, the gateways' flows in
# /tmp/NAME.N.flows.json. rx NAME KEY: one of n3's counts.
run() {
  ip netns exec n3 python3 /tmp/fl/roce.py ack "$LINE_SRC" /tmp/$1.rx &
  acker=$!
  sleep 0.5
  X n0 python3 /tmp/fl/roce.py send "$LINE_DST" 8 "$secs" 1000 "${2:-2}" >/tmp/$1.sent
  sleep 1
  kill -TERM $acker; wait $acker
  echo "$1: sent $(cat /tmp/$1.sent); n3 received: $(cat /tmp/$1.rx)"
  for n in n1 n2; do
    X $n "$CTL" -j flow >/tmp/$1.$n.flows.json
    X $n "$CTL" flow | sed "s/^/  $1: $n /"
  done
}
rx() { sed -n "s/.*\<$2=\([0-9]*\).*/\1/p" /tmp/$1.rx; }
# policy_checks IP DST FLOOR: the operator's FORWARD policy at n1 (an nft
# rule of family keyword IP, ip or ip6: PSNs 5 mod 32 toward DST never
# leave) must hold for restored packets too, and n1's CREM messages must
# carry the flow's DSCP; checked on a run "policy" of DSCP AF41 sources.
# FLOOR: the fewest restorations the rule must be seen dropping.
#   The originals stop at the rule; their repairs still reach n1, whose
#   CRF restores them: those go through PREROUTING, the input route and
#   FORWARD like the originals and must meet the same rule. Before
#   (restored packets left by ip_route_output and dst_output) 50 of them
#   reached n3.
policy_checks() {
  pfam=$1 pdst=$2 pfloor=$3
  X n1 nft -f - <<NFT || bad "nft rule" ""
table inet crem_test {
  chain forward_rules {
    type filter hook forward priority 0;
    $pfam daddr $pdst udp dport 4791 @th,152,8 & 0x1f == 5 counter drop
  }
}
NFT
  # The generator starts each QP's PSNs where it did before: a QP whose
  # PSNs go back within a live flow looks like a retransmission to the
  # CSF, not a new connection, and is not protected (the flows of the
  # first run live on unless the CSF closed them idle meanwhile: 2 of 5
  # runs failed that way). Fresh flows for this run: a port change ends
  # both gateways' flows.
  for n in n1 n2; do X $n "$CTL" set port 7471 && X $n "$CTL" set port 7470 || bad "port flip" ""; done
  # The sources carry DSCP AF41 (ToS 0x8a with ECT(0)): every CREM message
  # n1's receiver flows send back (HELLO_ACK, LOSS_REPORT, REPAIR_REQUEST)
  # carries the flow's DSCP too. Before (stop 24) they left with ToS 0.
  X n1 nft -f - <<NFT || bad "nft dscp rule" ""
table inet crem_dscp {
  chain out {
    type filter hook output priority 0;
    udp dport 7470 $pfam dscp af41 counter
    udp dport 7470 $pfam dscp != af41 counter
  }
}
NFT
  res0=$(stat_of n1 totals.restored) if0=$(stat_of n1 totals.inject-failures)
  run policy 138 # 0x8a
  res2=$(( $(stat_of n1 totals.restored) - res0 ))
  if2=$(( $(stat_of n1 totals.inject-failures) - if0 ))
  dropped=$(X n1 nft list chain inet crem_test forward_rules | sed -n 's/.*counter packets \([0-9]*\).*/\1/p')
  dscp=$(X n1 nft list chain inet crem_dscp out | sed -n 's/.*counter packets \([0-9]*\).*/\1/p' | tr '\n' ' ')
  echo "policy: n1's CREM messages with DSCP AF41, with another: $dscp"
  # shellcheck disable=SC2086
  set -- $dscp
  af41=${1:-0} other=${2:-1}
  expect "n1's receiver flows send their messages with the flow's DSCP" \
    "[ $af41 -ge 10 ] && [ $other = 0 ]" "AF41 and other: $dscp"
  sent5=$(( $(cat /tmp/policy.sent) / 32 ))
  echo "policy: n1 restored $res2 more ($if2 not sent on); the FORWARD rule dropped $dropped packets (about $sent5 were sent with PSN 5 mod 32)"
  expect "n1's FORWARD rule holds for restored packets: none with PSN 5 mod 32 reached n3" \
    "[ $(rx policy psn5) = 0 ] && [ $res2 -ge 20 ]" "$(cat /tmp/policy.rx); restored $res2"
  # The rule drops each original that got past netem (about 97 %), and
  # every restoration of a PSN 5 mod 32 that n1 sends on: n1 counts those
  # as not sent on (inject-failures), and the rule's count holds both.
  # Before, inject-failures stayed 0 and the rule saw the originals only
  # (104 of 107). Few of those restorations happen (IPv4: 9 to 24 in the
  # 13 runs of 2026-12-04, 3 to 6 % of the PSN 5 packets sent; why so few
  # is not understood: see stop 37's notes): the floor keeps the check
  # from passing on none (IPv4's 10 failed 3 runs of 13; 5 since).
  expect "the rule dropped n1's restorations of what it dropped (counted as not sent on)" \
    "[ $if2 -ge $pfloor ] && [ ${dropped:-0} -ge $(( if2 + sent5 * 90 / 100 )) ]" \
    "dropped $dropped of $sent5; inject-failures $if2"
}
line_down() { for n in n0 n1 n2 n3; do ip netns del $n 2>/dev/null; done; }
# leaks_forget: a baseline kmemleak scan, then forget it (report only what
# the case leaks). line_end CASE: unload crem.ko, check kmemleak, print the
# tally; returns the case's status.
leaks_forget() {
  kmemleak_report >/dev/null 2>&1
  [ -w /sys/kernel/debug/kmemleak ] && echo clear >/sys/kernel/debug/kmemleak
}
line_end() {
  if rmmod crem; then ok "crem.ko unloaded"; else bad "crem.ko unloaded" "$(lsmod)"; fi
  leaks=$(kmemleak_report)
  [ -z "$leaks" ] && ok "no kmemleak report" || bad "kmemleak" "$leaks"
  echo "$1: $pass passed, $fail failed"
  [ $fail = 0 ]
}
# watchdog SECS: every SECS, the kernel lists its blocked tasks with their
# stacks on the console (sysrq w), so a run that hangs shows where.
watchdog() { ( while sleep "$1"; do echo w >/proc/sysrq-trigger; done ) & }
watchdog 60
