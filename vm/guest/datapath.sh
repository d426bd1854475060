#!/bin/sh
# The gateway datapath on RoCEv2-shaped traffic, in one VM (topology:
# line.sh): n0 sends on 8 QPs with a valid ICRC and ToS ECT(0), netem drops
# 3% on the WAN, n1 restores. Checked:
#   - restored packets verify their ICRC and reach n3;
#   - restored packets carry no ECN marking (the sources are all ECT(0));
#   - restored packets obey n1's FORWARD policy: an nft rule there drops
#     every packet whose PSN is 5 mod 32, so none such reaches n3 although
#     n1 restores them (they go through FORWARD like the originals);
#   - skb drops traced from crem.ko (skb:kfree_skb) are the ones it counts.
# Arguments: module=KO ctl=CREM-CTL ksrc=DIR spec=YAML seconds=N
set -u
here=$(dirname "$0")
. "$here/common.sh"
secs=${arg_seconds:-20}
. "$here/line.sh"

insmod "$arg_module" || exit 1
line_up "delay 2ms loss random 3%"
gateways adaptive off k 8 m 2 || exit 1

# run NAME: one transfer n0 -> n3 of $secs s; what n3 saw in /tmp/NAME.rx.
run() {
  ip netns exec n3 python3 /tmp/fl/roce.py ack 192.0.2.1 /tmp/$1.rx &
  acker=$!
  sleep 0.5
  X n0 python3 /tmp/fl/roce.py send 203.0.113.1 8 "$secs" 1000 2 >/tmp/$1.sent
  sleep 1
  kill -TERM $acker; wait $acker
  echo "$1: sent $(cat /tmp/$1.sent); n3 received: $(cat /tmp/$1.rx)"
}
rx() { sed -n "s/.*\<$2=\([0-9]*\).*/\1/p" /tmp/$1.rx; }

droptrace_start
run plain
droptrace_stop /tmp/kfree_skb.txt
res1=$(stat_of n1 totals.restored) icrc1=$(stat_of n1 totals.icrc-failures)
inj1=$(stat_of n1 totals.injected)
echo "n1: restored $res1, icrc-failures $icrc1, injected $inj1"
expect "n1 restored packets, every one with a valid ICRC" \
  "[ $res1 -ge 20 ] && [ $icrc1 = 0 ]" "restored $res1 icrc-failures $icrc1"
expect "sources ECT(0) at n3, restored ones not-ECT (no ECN marking)" \
  "[ $(rx plain ect0) -ge 1000 ] && [ $(rx plain not-ect) -ge 1 ] && [ $(rx plain not-ect) -le $inj1 ] && [ $(rx plain ce) = 0 ]" \
  "$(cat /tmp/plain.rx); injected $inj1"
counted=$(( icrc1 + $(stat_of n1 drop-msg-invalid) + $(stat_of n2 drop-msg-invalid) + $(stat_of n1 drop-send) + $(stat_of n2 drop-send) ))
expect "skb drops traced from crem.ko are the ones it counts" \
  "[ $(wc -l </tmp/kfree_skb.txt) -le $counted ]" "traced $(wc -l </tmp/kfree_skb.txt), counted $counted: $(head -5 /tmp/kfree_skb.txt)"

# The operator's FORWARD policy at n1: PSNs 5 mod 32 never leave.
X n1 nft -f - <<'NFT' || bad "nft rule" ""
table inet crem_test {
  chain forward_rules {
    type filter hook forward priority 0;
    ip daddr 203.0.113.1 udp dport 4791 @th,152,8 & 0x1f == 5 counter drop
  }
}
NFT
res0=$(stat_of n1 totals.restored)
run policy
res2=$(( $(stat_of n1 totals.restored) - res0 ))
dropped=$(X n1 nft list chain inet crem_test forward_rules | sed -n 's/.*counter packets \([0-9]*\).*/\1/p')
sent5=$(( $(cat /tmp/policy.sent) / 32 ))
echo "n1: restored $res2 more; the FORWARD rule dropped $dropped packets (about $sent5 were sent with PSN 5 mod 32)"
expect "n1's FORWARD rule holds for restored packets: none with PSN 5 mod 32 reached n3" \
  "[ $(rx policy psn5) = 0 ] && [ $res2 -ge 20 ]" "$(cat /tmp/policy.rx); restored $res2"
expect "the rule saw the restorations of what it dropped (more than the originals that got past netem)" \
  "[ ${dropped:-0} -gt $(( sent5 * 97 / 100 )) ]" "dropped $dropped of $sent5"
line_down
rmmod crem || bad "rmmod" ""
echo "datapath: $pass passed, $fail failed"
[ $fail = 0 ]
