#!/bin/sh
# Churn: the module's teardown paths racing live traffic, in one VM without
# RDMA. Four netns in a line, two of them CREM gateways protecting the
# traffic between the outer two:
#
#   n0 192.0.2.1 -- [n2 gateway] 10.0.0.2 ==netem 3%== 10.0.0.1 [n1 gateway] -- n3 203.0.113.1
#
# n0 sends RoCEv2-shaped packets on many QPs (flows/roce.py), n3 acknowledges
# them, so n2's sender flows retain and release, n1's receiver flows hold
# packets after netem's gaps and restore. For SECONDS, at the same time:
#   - n2 fires HELLOs for random QPs at n1 (flows/hello.py: CRF flows made
#     in softirq, HELLO_ACKs that set Flow IDs);
#   - flows are deleted at random in n1 and n2 (flow-del; the collector
#     removes idle ones too: flow_idle_s=2);
#   - n1's port and role flip (its socket closes and rebinds, its hooks stop
#     protecting and restart);
#   - n1's input device (the veth to n2) is deleted while packets it
#     brought are held, then made again;
#   - a further pair of CREM netns (n4, n5: HELLOs from n5) is made and
#     destroyed under its traffic.
# Then crem.ko is unloaded. Any KASAN, lockdep, kmemleak or WARN report fails
# the run (on the debug kernel panic_on_warn ends it at once); the counters
# show that each path was exercised.
# Arguments: module=KO ctl=CREM-CTL ksrc=DIR spec=YAML seconds=N
set -u
. "$(dirname "$0")/line.sh"
secs=${arg_seconds:-120}

leaks_forget
insmod "$arg_module" flow_idle_s=2 || exit 1
line_up "delay 2ms loss random 3%"
gateways adaptive off k 8 m 2 max-flows 512 || exit 1
X n1 "$CTL" set hold 100000 || exit 1 # packets stay held a while

ip netns exec n3 python3 /tmp/fl/roce.py ack 192.0.2.1 /tmp/acks.txt &
acker=$!
ip netns exec n0 python3 /tmp/fl/roce.py send 203.0.113.1 16 "$secs" 1500 >/tmp/sent.txt 2>&1 &
sender=$!
# HELLOs from n2's address for QPs 1000.. (n1 makes a CRF flow for each).
( end=$(( $(date +%s) + secs )); q=1000
  while [ "$(date +%s)" -lt $end ]; do
    X n2 python3 /tmp/fl/hello.py $q 40 0.001 2>/dev/null; q=$(( (q + 40) % 60000 + 1000 ))
  done ) &
hellos=$!
# Random flow deletions in both gateways.
ip netns exec n1 python3 /tmp/fl/churn_del.py "$secs" 2 >/tmp/del.n1 2>&1 &
del1=$!
ip netns exec n2 python3 /tmp/fl/churn_del.py "$secs" 2 >/tmp/del.n2 2>&1 &
del2=$!

flips=0 devdel=0 nsdel=0 nshello=0 held_seen=0
[ -n "${arg_trace:-}" ] && set -x
# Every kind of teardown at least twice, however slow the machine (under
# TCG a round takes 15 to 30 s): two rounds at least, more while the
# traffic lasts.
end=$(( $(date +%s) + secs )) round=0
while [ $round -lt 2 ] || [ "$(date +%s)" -lt $end ]; do
  round=$((round + 1))
  sleep 1
  # Port flip: the socket closes and rebinds (n2's messages go unanswered).
  X n1 "$CTL" set port 7471 && sleep 0.5 && X n1 "$CTL" set port 7470 && flips=$((flips + 1))
  sleep 0.5
  # Role flip: protection stops (flows removed) and starts again.
  X n1 "$CTL" set role disabled && sleep 0.3 && X n1 "$CTL" set role gateway && flips=$((flips + 1))
  sleep 1
  # The input device of n1's held packets goes away while they are held.
  # ... once n1 has receiver flows again (the role flip removed them; on
  # the debug kernel they take seconds to come back), within 20 s. grep,
  # not python: a python start takes seconds under KASAN and TCG.
  t=0 h=0
  while [ $t -lt 40 ]; do
    h=$(X n1 "$CTL" -j flow 2>/dev/null | grep -o '"side":"crf"' | wc -l)
    [ "${h:-0}" -gt 0 ] && break
    sleep 0.5; t=$((t + 1))
  done
  [ "${h:-0}" -gt 0 ] && held_seen=$((held_seen + 1))
  ip -n n1 link del v1 && devdel=$((devdel + 1))
  sleep 0.5
  wan_up || bad "round $round: the WAN link made again" "$(ip -n n1 link 2>&1)"
  # A CREM netns destroyed under traffic (every other round, the first
  # included).
  if [ $((round % 2)) = 1 ]; then
    ip netns add n4 && ip netns add n5
    ip link add c4 netns n4 type veth peer name c5 netns n5
    ip -n n4 addr add 10.0.0.1/24 dev c4 && ip -n n5 addr add 10.0.0.2/24 dev c5
    ip -n n4 link set c4 up && ip -n n5 link set c5 up
    X n4 "$CTL" set port 7470 role gateway peer 192.0.2.0/24=10.0.0.2
    X n5 python3 /tmp/fl/hello.py 1 4000 0.0005 2>/dev/null &
    hp=$!
    # Destroyed once its HELLOs arrive (python starts slowly), within 30 s.
    t=0
    while [ $t -lt 60 ] && ! X n4 "$CTL" -j stats 2>/dev/null | grep -q '"msgs-in":[1-9]'; do
      sleep 0.5; t=$((t + 1))
    done
    X n4 "$CTL" -j stats 2>/dev/null | grep -q '"msgs-in":[1-9]' && nshello=$((nshello + 1))
    ip netns del n4 && nsdel=$((nsdel + 1))
    kill $hp 2>/dev/null; wait $hp 2>/dev/null
    ip netns del n5
  fi
done
wait $sender $del1 $del2 $hellos 2>/dev/null
kill -TERM $acker 2>/dev/null; wait $acker 2>/dev/null
echo "sent $(cat /tmp/sent.txt) packets, $(cat /tmp/acks.txt); deleted $(cat /tmp/del.n1) flows in n1, $(cat /tmp/del.n2) in n2"
echo "$flips port/role flips, $devdel device deletions ($held_seen with receiver flows live), $nsdel netns destroyed ($nshello with HELLOs arriving)"
for n in n1 n2; do echo "$n:"; X $n "$CTL" stats | sed 's/^/  /'; done

r1=$(stat_of n1 totals.received) rs1=$(stat_of n1 totals.restored) s2=$(stat_of n2 totals.sources)
[ "$(cat /tmp/sent.txt)" -gt 1000 ] 2>/dev/null && ok "traffic: $(cat /tmp/sent.txt) packets sent" \
  || bad "traffic sent" "$(cat /tmp/sent.txt)"
[ "$s2" -gt 0 ] && [ "$r1" -gt 0 ] && ok "n2 coded $s2 sources, n1 received $r1 ($rs1 restored, since the last flip)" \
  || bad "both gateways protected the traffic" "sources $s2 received $r1"
[ "$(cat /tmp/del.n1)" -gt 0 ] 2>/dev/null && [ "$(cat /tmp/del.n2)" -gt 0 ] 2>/dev/null \
  && ok "flows deleted under traffic in both gateways" || bad "flow deletions" "$(cat /tmp/del.n1 /tmp/del.n2)"
[ $devdel -ge 2 ] && [ $held_seen -ge 1 ] && ok "input device deleted $devdel times with receiver flows live" \
  || bad "device deletions" "$devdel deletions, $held_seen with receiver flows"
[ $nshello -ge 1 ] && ok "$nsdel CREM netns destroyed, $nshello under HELLO traffic" || bad "netns destruction" "$nsdel destroyed, $nshello with HELLOs arriving"
line_down
line_end churn
