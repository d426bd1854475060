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
B=2001:db8:b::1

insmod "$arg_module" || exit 1
line6_up "delay 2ms loss random 3%"
gateways6 adaptive off k 8 m 2 || exit 1


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
policy_checks ip6 $B 1

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
