#!/bin/sh
# The gateway datapath over IPv6, in one VM (topology: line.sh's line6_up):
# n0 sends RoCEv2-shaped traffic on 8 QPs over IPv6 (plain UDP sockets,
# traffic class ECT(0), valid ICRC, the kernel's UDP checksum), netem drops
# 3% on the WAN, n1 restores. The IPv6 counterpart of datapath.sh's first
# checks (issue 16 item 1, plan S5). Checked:
#   - both gateways' flows have IPv6 src/dst/peer;
#   - n1 restores packets, none failing its ICRC (all 32 bits: IPv6 has no
#     field to solve), and they reach n3 (whose plain IPv6 socket takes
#     only checksummed datagrams: the restored ones carry a computed one);
#   - restored packets carry no ECN marking;
#   - skb drops traced from crem.ko are the ones it counts;
#   - n1's FORWARD policy (an ip6 rule dropping PSN 5 mod 32) holds for
#     restored packets, which take PREROUTING, the IPv6 input route and
#     ip6_forward like the originals;
#   - n1's CREM messages (over IPv6) carry the protected flow's DSCP;
#   - RoCEv2 behind an IPv6 extension header passes unprotected, counted.
# Arguments: module=KO ctl=CREM-CTL ksrc=DIR spec=YAML seconds=N
set -u
. "$(dirname "$0")/line.sh"
secs=${arg_seconds:-20}
A=2001:db8:a::1 B=2001:db8:b::1

insmod "$arg_module" || exit 1
line6_up "delay 2ms loss random 3%"
gateways6 adaptive off k 8 m 2 || exit 1

# run NAME [TOS]: one transfer n0 -> n3 of $secs s with traffic class TOS
# (default ECT(0)); what n3 saw in /tmp/NAME.rx.
run() {
  ip netns exec n3 python3 /tmp/fl/roce.py ack $A /tmp/$1.rx &
  acker=$!
  sleep 0.5
  X n0 python3 /tmp/fl/roce.py send $B 8 "$secs" 1000 "${2:-2}" >/tmp/$1.sent
  sleep 1
  kill -TERM $acker; wait $acker
  echo "$1: sent $(cat /tmp/$1.sent); n3 received: $(cat /tmp/$1.rx)"
  for n in n1 n2; do
    X $n "$CTL" -j flow >/tmp/$1.$n.flows.json
    X $n "$CTL" flow | sed "s/^/  $1: $n /"
  done
}
rx() { sed -n "s/.*\<$2=\([0-9]*\).*/\1/p" /tmp/$1.rx; }

droptrace_start
run plain
droptrace_stop /tmp/kfree_skb.txt
# Flows of n2 (sender side) and n1 (receiver side): src A, dst B, peer the
# other gateway's WAN address, all IPv6.
fl=$(for n in n2 n1; do python3 -c "import json,sys
fl=json.load(sys.stdin).get('flow',[])
want={'n2': ('2001:db8:a::1','2001:db8:b::1','2001:db8:f::1'), 'n1': ('2001:db8:a::1','2001:db8:b::1','2001:db8:f::2')}['$n']
print(len(fl), sum((f.get('src'),f.get('dst'),f.get('peer'))==want for f in fl), end=' ')" </tmp/plain.$n.flows.json; done)
echo "plain: flows (all, with IPv6 src/dst/peer) n2 n1: $fl"
set -- $fl
expect "flows with IPv6 src, dst and peer at both gateways" \
  "[ ${1:-0} -ge 8 ] && [ ${2:-0} = ${1:-x} ] && [ ${3:-0} -ge 8 ] && [ ${4:-0} = ${3:-x} ]" \
  "n2 n1: $fl; $(head -c 600 /tmp/plain.n2.flows.json)"
res1=$(stat_of n1 totals.restored) icrc1=$(stat_of n1 totals.icrc-failures)
nohdr1=$(stat_of n1 totals.restore-no-header) inj1=$(stat_of n1 totals.injected)
echo "n1: restored $res1, icrc-failures $icrc1, restore-no-header $nohdr1, injected $inj1"
expect "n1 restored IPv6 packets, none failing its ICRC" \
  "[ $res1 -ge 20 ] && [ $icrc1 = 0 ]" "restored $res1 icrc-failures $icrc1 restore-no-header $nohdr1"
expect "sources ECT(0) at n3, restored ones not-ECT (no ECN marking)" \
  "[ $(rx plain ect0) -ge 1000 ] && [ $(rx plain not-ect) -ge 1 ] && [ $(rx plain not-ect) -le $inj1 ] && [ $(rx plain ce) = 0 ]" \
  "$(cat /tmp/plain.rx); injected $inj1"
counted=$(( icrc1 + $(stat_of n1 drop-msg-invalid) + $(stat_of n2 drop-msg-invalid) + $(stat_of n1 drop-send) + $(stat_of n2 drop-send) ))
expect "skb drops traced from crem.ko are the ones it counts" \
  "[ $(wc -l </tmp/kfree_skb.txt) -le $counted ]" "traced $(wc -l </tmp/kfree_skb.txt), counted $counted: $(head -5 /tmp/kfree_skb.txt)"

# n1's FORWARD policy: PSNs 5 mod 32 never leave, restored or not.
X n1 nft -f - <<'NFT' || bad "nft rule" ""
table inet crem_test {
  chain forward_rules {
    type filter hook forward priority 0;
    ip6 daddr 2001:db8:b::1 udp dport 4791 @th,152,8 & 0x1f == 5 counter drop
  }
}
NFT
# Fresh flows for the second run (datapath.sh says why).
for n in n1 n2; do X $n "$CTL" set port 7471 && X $n "$CTL" set port 7470 || bad "port flip" ""; done
X n1 nft -f - <<'NFT' || bad "nft dscp rule" ""
table inet crem_dscp {
  chain out {
    type filter hook output priority 0;
    udp dport 7470 ip6 dscp af41 counter
    udp dport 7470 ip6 dscp != af41 counter
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
set -- $dscp
af41=${1:-0} other=${2:-1}
expect "n1's receiver flows send their IPv6 messages with the flow's DSCP" \
  "[ $af41 -ge 10 ] && [ $other = 0 ]" "AF41 and other: $dscp"
sent5=$(( $(cat /tmp/policy.sent) / 32 ))
echo "policy: n1 restored $res2 more ($if2 not sent on); the FORWARD rule dropped $dropped packets (about $sent5 were sent with PSN 5 mod 32)"
expect "n1's ip6 FORWARD rule holds for restored packets: none with PSN 5 mod 32 reached n3" \
  "[ $(rx policy psn5) = 0 ] && [ $res2 -ge 20 ]" "$(cat /tmp/policy.rx); restored $res2"
expect "the rule dropped n1's restorations of what it dropped (counted as not sent on)" \
  "[ $if2 -ge 1 ] && [ ${dropped:-0} -ge $(( if2 + sent5 * 90 / 100 )) ]" \
  "dropped $dropped of $sent5; inject-failures $if2"

# A Destination Options header before UDP: n2 leaves such packets
# unprotected (no flow, not coded) and counts them at FORWARD.
sk0=$(stat_of n2 skip-ipv6-ext) cr0=$(stat_of n2 flows-created)
X n0 env ROCE_V6_DSTOPTS=1 python3 /tmp/fl/roce.py send $B 1 2 100 >/tmp/ext.sent
sk=$(( $(stat_of n2 skip-ipv6-ext) - sk0 )) cr=$(( $(stat_of n2 flows-created) - cr0 ))
echo "ext: sent $(cat /tmp/ext.sent) behind a destination options header; n2 skip-ipv6-ext $sk, flows created $cr"
expect "RoCEv2 behind an IPv6 extension header passes unprotected, counted (skip-ipv6-ext)" \
  "[ $(cat /tmp/ext.sent) -ge 50 ] && [ $sk = $(cat /tmp/ext.sent) ] && [ $cr = 0 ]" "sent $(cat /tmp/ext.sent), counted $sk, flows $cr"

line_down
rmmod crem || bad "rmmod" ""
echo "datapath6: $pass passed, $fail failed"
[ $fail = 0 ]
