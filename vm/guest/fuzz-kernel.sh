#!/bin/sh
# Fuzzing crem.ko itself (issue 12), in one VM on the line topology
# (line.sh) with RoCEv2-shaped traffic both ways through the gateways, so n1
# holds sender (csf) and receiver (crf) flows of its own:
#   wire     fuzz/wire.py: generated and mutated CREM datagrams to n1's CREM
#            port from n2's addresses: the peer 10.0.0.2, the allow-listed
#            reporter 10.0.0.3, the stranger 10.0.0.4;
#   netlink  fuzz/nl.py: the crem genetlink family as root (in a netns nz
#            of its own with every operation, and in n1 with all but
#            config-set and stats-reset, which would end the wire part's
#            flows and counters), and as nobody (in n1, no capability over
#            it; then root of its own user and network namespace, as
#            unshare -U -n -r).
# Both parts run at once for SECONDS. Then the module must still work: its
# reach counters are printed, a fresh transfer over the lossy link is
# restored, rmmod succeeds and kmemleak finds nothing of crem's. A splat
# ends the VM (panic_on_warn): the host side (vm/fuzz-kernel.sh) reports it.
# Arguments: module=KO ctl=CREM-CTL ksrc=DIR spec=YAML seconds=N parts=wire+netlink
#            seed=N corpus=DIR fixtures=DIR
set -u
. "$(dirname "$0")/line.sh"
secs=${arg_seconds:-120} parts=${arg_parts:-wire+netlink}
seed=${arg_seed:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
mkdir -p /tmp/fz && cp "$here"/fuzz/*.py /tmp/fz/ && chmod -R a+rX /tmp/fz
FZ="python3 /tmp/fz"
# stamp MSG: MSG with the guest's uptime (where a slow run spends its time).
stamp() { echo "[$(cut -d' ' -f1 /proc/uptime)] fuzz-kernel: $*"; }
stamp "seed $seed (replay: FUZZ_SEED=$seed), $secs s, parts $parts"

insmod "$arg_module" || exit 1
line_up "delay 2ms loss random 3%"
gateways k 8 m 2 || exit 1
# The reporter and the stranger are further addresses of n2 on the WAN.
ip -n n2 addr add 10.0.0.3/24 dev v2 && ip -n n2 addr add 10.0.0.4/24 dev v2
X n1 "$CTL" set reporter 10.0.0.3 || exit 1
# n2's own CREM messages to n1, by type, as they arrive (from its CREM
# socket, port 7470; the fuzzer sends from other ports): what n1's handlers
# count beyond these came from the fuzzer.
X n1 nft -f - <<EOF || exit 1
table ip reach {
  chain pre { type filter hook prerouting priority -300;
$(for t in 1 2 3 4 5 6 7 8 9 12; do
  printf '    ip saddr 10.0.0.2 udp sport 7470 udp dport 7470 @th,68,4 %d counter comment "t%d"\n' $t $t; done)
  }
}
EOF
# nz: the root netlink fuzzer's own netns, configured so that flow-new works.
ip netns add nz && ip -n nz link set lo up
ip -n nz link add d0 type dummy && ip -n nz addr add 10.9.0.1/24 dev d0 && ip -n nz link set d0 up
X nz "$CTL" set port 7470 role gateway peer 10.8.0.0/16=10.9.0.2 || exit 1

# traffic SECS: both ways, 2 QPs each, at a low rate (TCG: CPU for the fuzzers), for SECS at
# most: traffic_stop ends it. Under ip netns exec itself (it execs python),
# so that the pids are theirs.
traffic() {
  ip netns exec n3 python3 /tmp/fl/roce.py ack 192.0.2.1 /tmp/n3.rx & ack3=$!
  ip netns exec n0 python3 /tmp/fl/roce.py ack 203.0.113.1 /tmp/n0.rx & ack0=$!
  sleep 1
  ip netns exec n0 python3 /tmp/fl/roce.py send 203.0.113.1 2 "$1" 50 >/tmp/n0.sent & snd0=$!
  ip netns exec n3 python3 /tmp/fl/roce.py send 192.0.2.1 2 "$1" 30 >/tmp/n3.sent & snd3=$!
}

traffic_stop() {
  kill -TERM $snd0 $snd3 $ack3 $ack0 2>/dev/null; wait $snd0 $snd3 $ack3 $ack0 2>/dev/null
}
# The fuzzers' python starts slowly under TCG: the traffic outlasts them.
traffic $((secs + 600))
sleep 8   # the flows negotiate first (HELLO, HELLO_ACK)
stamp "traffic flows; fuzzers start"
pids=""
case $parts in *wire*)
  $FZ/wire.py --seconds "$secs" --seed "$seed" --target-ns n1 --target 10.0.0.1:7470 --from-ns n2 \
    --peer 10.0.0.2 --reporter 10.0.0.3 --stranger 10.0.0.4 --corpus "$arg_corpus" \
    --fixtures "$arg_fixtures" --last /tmp/out/wire-last.txt >/tmp/out/wire.out 2>&1 &
  pids="$pids $!" ;;
esac
case $parts in *netlink*)
  $FZ/nl.py --spec /tmp/ynl/crem.yaml --seconds "$secs" --seed $((seed + 1)) --label nl-root \
    --target nz --target n1:config-set,stats-reset >/tmp/out/nl-root.out 2>&1 &
  pids="$pids $!"
  # nobody in n1 (no capability over it), then root of its own user and
  # network namespace (unshare -U -n -r), one process with both sockets.
  X n1 setpriv --reuid 65534 --regid 65534 --clear-groups $FZ/nl.py --spec /tmp/ynl/crem.yaml \
    --seconds "$secs" --seed $((seed + 2)) --label nl-userns --userns --target n1 \
    >/tmp/out/nl-userns.out 2>&1 &
  pids="$pids $!" ;;
esac
frc=0
for p in $pids; do wait "$p" || frc=1; done
stamp "fuzzers done"
traffic_stop
echo "traffic: n3 received $(cat /tmp/n3.rx); n0 received $(cat /tmp/n0.rx)"
cat /tmp/out/*.out 2>/dev/null | grep -v -- '-execs=' | sed 's/^/  /'
expect "every fuzzer ran to its end" "[ $frc = 0 ]" "$(tail -n 5 /tmp/out/*.out)"
execs() { sed -n "s/^$1-execs=//p" /tmp/out/$1.out 2>/dev/null | tail -1; }
w=$(execs wire) root=$(execs nl-root) userns=$(execs nl-userns)

# Reach: n1's datagrams by type at its socket (before any check) and at its
# flows' handlers (the totals of the flows' own counters). n2's CREM runs
# too, so a handler's count also holds n2's genuine messages: at most the
# ones that arrived from n2's CREM socket (nft counters). What a handler got
# beyond that came from the fuzzer: a lower bound of the fuzzer's reach
# (printed; the check is the window's below).
X n1 "$CTL" -j stats >/tmp/n1.stats.json
X n1 nft list table ip reach >/tmp/n1.nft.txt
python3 - /tmp/n1.stats.json /tmp/n1.nft.txt <<'PY' | tee /tmp/reach.txt
import json, re, sys
s = json.load(open(sys.argv[1]))['stats']
sock, eng = s.get('msgs-in-by-type', {}), s.get('totals', {}).get('msgs-in-by-type', {})
names = ['repair', 'hello', 'hello-ack', 'param-update', 'param-ack', 'repair-request',
         'loss-report', 'path-report', 'close', 'tc-aeth', 'other']
num = dict(zip(names, [1, 2, 3, 4, 5, 6, 7, 8, 9, 12]))
got = {int(t): int(p) for p, t in re.findall(r'packets (\d+) .*comment "t(\d+)"', open(sys.argv[2]).read())}
real = {n: got.get(num.get(n), 0) for n in names}
print('reach (n1) by type: socket/handler/from-n2/fuzzed-at-least: ' + ' '.join(
    f'{n}={sock.get(n, 0)}/{eng.get(n, 0)}/{real.get(n, 0)}/{max(0, eng.get(n, 0) - real.get(n, 0))}'
    for n in names))
print('reach (n1): ' + ' '.join(f'{k}={s.get(k, 0)}' for k in
      ['msgs-in', 'drop-msg-invalid', 'drop-msg-peer', 'drop-msg-no-flow', 'path-reports',
       'flows-created', 'flows-removed', 'flows-expired', 'drop-flow-limit', 'drop-memory']))
t = s.get('totals', {})
print('reach (n1) flows: ' + ' '.join(f'{k}={t.get(k, 0)}' for k in
      ['requests-received', 'fallback-requests-received', 'repairs-received', 'restored',
       'icrc-failures', 'coded-retx', 'source-copies', 'abandoned', 'fallbacks', 'msgs-out']))

PY
# The exact reach: wire.py's last stretch with n2's CREM silenced.
window=$(sed -n 's/^wire: window reach (handled, the peer silent): //p' /tmp/out/wire.out)
unreached=$(echo "$window" | tr ' ' '\n' | grep -v '^other=' | sed -n 's/=0$//p' | tr '\n' ' ')
case $parts in *wire*)
  expect "every message type reached a flow's handler (while n2 was silent: the fuzzer's alone)" \
    "[ -n '$window' ] && [ -z '$unreached' ]" "window: $window; unreached: $unreached" ;;
esac

stamp "checks after the fuzzing"
# Still working: flows dropped by a port change on both gateways, then a
# fresh transfer over the lossy link must be restored.
for n in n1 n2; do X $n "$CTL" set port 7471 >/dev/null && X $n "$CTL" set port 7470 >/dev/null; done
res0=$(stat_of n1 totals.restored) icrc0=$(stat_of n1 totals.icrc-failures)
ip netns exec n3 python3 /tmp/fl/roce.py ack 192.0.2.1 /tmp/post.rx & ack3=$!
sleep 1
X n0 python3 /tmp/fl/roce.py send 203.0.113.1 8 15 500 >/tmp/post.sent
sleep 1; kill -TERM $ack3; wait $ack3
res=$(( $(stat_of n1 totals.restored) - res0 )) icrc=$(( $(stat_of n1 totals.icrc-failures) - icrc0 ))
echo "after: sent $(cat /tmp/post.sent), n3 received $(cat /tmp/post.rx), n1 restored $res, icrc-failures $icrc"
expect "after the fuzzing, a transfer is still protected (restored, ICRC good)" \
  "[ $res -ge 3 ] && [ $((icrc * 10)) -le $res ]" "restored $res icrc-failures $icrc"

stamp "teardown"
line_down; ip netns del nz
sleep 1
rmmod crem && ok "rmmod crem" || bad "rmmod crem" "$(lsmod | grep crem)"
kmemleak_report >/tmp/kmemleak.txt 2>&1
# Objects whose report (backtrace) names crem; others are the kernel's own.
others=$(grep -c '^unreferenced object' /tmp/kmemleak.txt)
leaks=$(awk '/^unreferenced object/ { n += hit; hit = 0 } /crem/ { hit = 1 } END { print n + hit }' /tmp/kmemleak.txt)
[ "$others" = 0 ] || head -60 /tmp/kmemleak.txt
expect "kmemleak: nothing of crem's" "[ $leaks = 0 ]" "$(head -30 /tmp/kmemleak.txt)"
echo "fuzz-kernel: wire execs=${w:-0} netlink execs=$((${root:-0} + ${userns:-0})) (root ${root:-0}, userns ${userns:-0}) leaks=$leaks (kmemleak objects in all: $others)"
echo "fuzz-kernel: $pass passed, $fail failed"
[ $fail = 0 ]
