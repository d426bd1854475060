#!/bin/sh
# The middle VM: two gateway namespaces joined by the emulated WAN link.
# eth0 (toward A) lives in netns gwa, eth1 (toward B) in netns gwb; the veth
# pair wa/wb is the long lossy segment, with netem on both egresses.
# Arguments: rtt_ms= loss_pct= burst=p:r:h:k rate_mbit= mtu= module= stop=FLAGFILE
#   family=4|6: the hosts' transfers run over IPv4 or IPv6 (then dual-stack) [4]
#   bottleneck=R:LIMIT_KB[:ecn]: a core router netns between the gateways
#     whose egress toward gwb is a tbf of R Mbit/s with a LIMIT_KB queue (its
#     tail drops are real queue drops, at a node that is no CREM gateway;
#     netem's delay and loss stay on the gateways' egress); ecn: the queue
#     is fq_codel marking CE (target 2 ms) under the tbf instead [none]
#   crem=off|fixed|adaptive ctl=CREM-CTL k= m= hold_us= recovery= spare_flows=
#     epsilon=  (gateway protection)
#   reporter=off|core: with bottleneck= and crem=, the core router is a Path
#     Reporter (role reporter, node-id 1) sending its own drops' PATH_REPORTs
#     to the gateway that protects each flow's source; the gateways allow-list
#     its addresses; stats.core.json has its counters [off]
#   modparams=NAME:VALUE  a module parameter for insmod (fault injection)
#   capture=N: gwb captures up to N packets of what crosses the WAN to it
#     (RoCEv2 and CREM, both directions on wb) to wan.pcap
#   capture_out=N: the two ends of gwb for results.py recovery-latency
#     (same netns, same clock), instead of capture=: up to N packets of each,
#     headers only, what crosses the WAN to it (as capture=) to wan.pcap
#     and the RoCEv2 packets it sends out toward B (eth1, outgoing only) to
#     out.pcap; tcpdump's counts (drops included) in wan/out.pcap.log;
#     capture_out=N:out: out.pcap alone (one tcpdump less on this VM's one
#     CPU: results.py psn-conflicts reads nothing else)
set -u
. "$(dirname "$0")/common.sh"
rtt=${arg_rtt_ms:-10} loss=${arg_loss_pct:-0} rate=${arg_rate_mbit:-0}
half=$(awk "BEGIN{printf \"%.3f\", $rtt/2}")
ip netns add gwa && ip netns add gwb || exit 1
ip link set eth0 netns gwa && ip link set eth1 netns gwb
wan_links="gwa:wa gwb:wb"
for ns in gwa gwb; do
  ip -n $ns link set lo up
  ip netns exec $ns sysctl -q -w net.ipv4.ip_forward=1
done
ip -n gwa addr add $GWA_LAN/24 dev eth0 && ip -n gwa link set eth0 up
ip -n gwb addr add $GWB_LAN/24 dev eth1 && ip -n gwb link set eth1 up
if [ -z "${arg_bottleneck:-}" ]; then
  ip link add wa netns gwa type veth peer name wb netns gwb
  ip -n gwa addr add $GWA_WAN/30 dev wa && ip -n gwa link set wa up
  ip -n gwb addr add $GWB_WAN/30 dev wb && ip -n gwb link set wb up
  ip -n gwa route add 203.0.113.0/24 via $GWB_WAN
  ip -n gwb route add 192.0.2.0/24 via $GWA_WAN
else
  # gwa:wa -- ca:[core]:cb -- wb:gwb, point-to-point /32s (the gateways keep
  # their WAN addresses, which the CREM configuration names).
  ip netns add core && ip -n core link set lo up || exit 1
  ip netns exec core sysctl -q -w net.ipv4.ip_forward=1
  ip link add wa netns gwa type veth peer name ca netns core
  ip link add cb netns core type veth peer name wb netns gwb
  for l in gwa:wa:$GWA_WAN:$CORE_A core:ca:$CORE_A:$GWA_WAN core:cb:$CORE_B:$GWB_WAN gwb:wb:$GWB_WAN:$CORE_B; do
    n=${l%%:*} l=${l#*:}; d=${l%%:*} l=${l#*:}; me=${l%%:*} other=${l#*:}
    ip -n $n addr add $me/32 dev $d && ip -n $n link set $d up && ip -n $n route add $other/32 dev $d || exit 1
  done
  ip -n gwa route add 203.0.113.0/24 via $CORE_A && ip -n gwa route add $GWB_WAN/32 via $CORE_A \
    && ip -n gwb route add 192.0.2.0/24 via $CORE_B && ip -n gwb route add $GWA_WAN/32 via $CORE_B \
    && ip -n core route add 203.0.113.0/24 via $GWB_WAN && ip -n core route add 192.0.2.0/24 via $GWA_WAN \
    || exit 1
  wan_links="$wan_links core:ca core:cb"
fi
if [ "${arg_family:-4}" = 6 ]; then
  [ -z "${arg_bottleneck:-}" ] || { log "bottleneck= is IPv4 only so far"; exit 1; }
  # Dual-stack: the transfers run over IPv6 (ib_write_bw's out-of-band
  # exchange stays IPv4, host.sh).
  for ns in gwa gwb; do ip netns exec $ns sysctl -q -w net.ipv6.conf.all.forwarding=1; done
  add6 gwa eth0 $GWA_LAN6/64 && add6 gwa wa $GWA_WAN6/64 \
    && add6 gwb eth1 $GWB_LAN6/64 && add6 gwb wb $GWB_WAN6/64 || exit 1
  ip -n gwa -6 route add 2001:db8:b::/64 via $GWB_WAN6 \
    && ip -n gwb -6 route add 2001:db8:a::/64 via $GWA_WAN6 || exit 1
fi
mtu=${arg_mtu:-1500}
for pair in gwa:eth0 gwb:eth1 $wan_links; do
  ip -n ${pair%%:*} link set dev ${pair#*:} mtu $mtu || exit 1
done
netem="delay ${half}ms"
if [ -n "${arg_burst:-}" ]; then
  netem="$netem loss gemodel $(echo "$arg_burst" | tr ':' ' ')"
elif [ "$loss" != 0 ]; then
  netem="$netem loss random ${loss}%"
fi
[ "$rate" != 0 ] && netem="$netem rate ${rate}mbit"
# A deep queue: the WAN is long, and tail drops would be our own artefact.
for pair in gwa:wa gwb:wb; do
  tc -n ${pair%%:*} qdisc add dev ${pair#*:} root netem $netem limit 100000 || exit 1
done
log "WAN: $netem"
if [ -n "${arg_bottleneck:-}" ]; then
  brate=${arg_bottleneck%%:*} blimit=${arg_bottleneck#*:}; becn=${blimit#*:} blimit=${blimit%%:*}
  if [ "$becn" = ecn ]; then
    # The tbf paces, its child marks: CE once packets wait more than 2 ms
    # (ECT ones; fq_codel drops only past LIMIT_KB of queue, as packets
    # of about 1 KiB: rxe has no congestion control and keeps sending).
    tc -n core qdisc add dev cb root handle 1: tbf rate ${brate}mbit burst 4kb limit ${blimit}kb \
      && tc -n core qdisc add dev cb parent 1:1 handle 10: fq_codel limit $blimit target 2ms interval 20ms ecn \
      || exit 1
  else
    tc -n core qdisc add dev cb root tbf rate ${brate}mbit burst 4kb limit ${blimit}kb || exit 1
  fi
  log "bottleneck at core toward gwb: $(tc -n core qdisc show dev cb | tr '\n' ' ')"
fi
load_crem || exit 1
crem=${arg_crem:-off}
if [ "$crem" != off ]; then
  [ -n "${arg_module:-}" ] && [ -x "${arg_ctl:-}" ] || { log "crem=$crem needs module= and ctl="; exit 1; }
  adaptive=off; [ "$crem" = adaptive ] && adaptive=on
  set -- port 7470 role gateway adaptive $adaptive k ${arg_k:-16} m ${arg_m:-2} hold ${arg_hold_us:-30000} \
    recovery ${arg_recovery:-coded}
  [ -n "${arg_spare_flows:-}" ] && set -- "$@" spare-flows "$arg_spare_flows"
  [ -n "${arg_epsilon:-}" ] && set -- "$@" epsilon "$arg_epsilon"
  # gwa's own LAN address stands for an on-path Path Reporter (see the
  # PATH_REPORTs at the end).
  # IPv6: peers and reporter by IPv6 address (CREM's messages go over
  # IPv6 too).
  # The core router's addresses toward each gateway, allow-listed as the
  # Path Reporter (reporter=core); a report's source is the one its route
  # to the gateway picks.
  repa="" repb=""
  if [ "${arg_reporter:-off}" = core ]; then
    [ -n "${arg_bottleneck:-}" ] || { log "reporter=core needs bottleneck="; exit 1; }
    repa="reporter $CORE_A" repb="reporter $CORE_B"
  fi
  if [ "${arg_family:-4}" = 6 ]; then
    rep=$GWA_LAN6 other=$GWA_WAN6
    ip netns exec gwa "$arg_ctl" set "$@" peer 2001:db8:b::/64=$GWB_WAN6 reporter $rep || exit 1
    ip netns exec gwb "$arg_ctl" set "$@" peer 2001:db8:a::/64=$GWA_WAN6 || exit 1
  else
    rep=$GWA_LAN other=$GWA_WAN
    # shellcheck disable=SC2086
    ip netns exec gwa "$arg_ctl" set "$@" peer 203.0.113.0/24=$GWB_WAN reporter $rep $repa || exit 1
    # shellcheck disable=SC2086
    ip netns exec gwb "$arg_ctl" set "$@" peer 192.0.2.0/24=$GWA_WAN $repb || exit 1
  fi
  if [ -n "$repa" ]; then
    ip netns exec core "$arg_ctl" set port 7470 role reporter node-id 1 \
      peer 192.0.2.0/24=$GWA_WAN peer 203.0.113.0/24=$GWB_WAN || exit 1
    log "Path Reporter at core: $(ip netns exec core "$arg_ctl" show | tr '\n' ' ')"
  fi
  log "CREM gateways: $crem $*"
  # Flow events with their arrival time, for diagnosis (events.NS.log).
  for ns in gwa gwb; do
    ip netns exec $ns "$arg_ctl" -j monitor | while IFS= read -r l; do
      echo "$(cut -d' ' -f1 /proc/uptime) $l"; done >$OUT/events.$ns.log 2>&1 &
  done
fi
if [ -n "${arg_capture_out:-}" ]; then
  # The two ends of gwb for the recovery latency: what arrives on wb (both
  # directions, RoCEv2 and CREM: REPAIR_REQUESTs leave through it) and what
  # leaves toward B (outgoing only: B's ACKs coming in are not departures;
  # restored packets are injected past wb, so only this capture has them).
  # Headers only (256 octets hold a BTH, a HELLO and a REPAIR_REQUEST's
  # bitmap), into the guest's memory, buffered, 8 MiB of ring: a packet a
  # time over 9p, as capture= writes, is slower than the link under TCG:
  # the first run's wb capture, taken that way, held 3145 of the 8652
  # source packets of a QP that left toward B (the rest dropped from the
  # ring). tcpdump's own count of such drops goes to NAME.pcap.log.
  # The limit heads the log: a capture that reached it ended early, and
  # results.py counts nothing past its end.
  mkdir -p /tmp/cap
  cap_n=${arg_capture_out%:out} cap_files="wan out" cap_wan=""
  [ "$cap_n" = "$arg_capture_out" ] || cap_files=out
  for f in $cap_files; do echo "limit $cap_n" >/tmp/cap/$f.pcap.log; done
  if [ "$cap_files" != out ]; then
    ip netns exec gwb tcpdump -i wb -s 256 -B 8192 -c "$cap_n" -w /tmp/cap/wan.pcap \
      udp port 4791 or udp port 7470 2>>/tmp/cap/wan.pcap.log & cap_wan=$!
  fi
  ip netns exec gwb tcpdump -Q out -i eth1 -s 256 -B 8192 -c "$cap_n" \
    -w /tmp/cap/out.pcap udp port 4791 2>>/tmp/cap/out.pcap.log & cap_out=$!
  sleep 1
elif [ -n "${arg_capture:-}" ]; then
  # What crosses the WAN into gwb (after netem's losses): RoCEv2 and CREM.
  ip netns exec gwb tcpdump -U -i wb -s 0 -c "$arg_capture" -w $OUT/wan.pcap \
    udp port 4791 or udp port 7470 2>/dev/null &
  sleep 1
fi
# Busy CPU time of this VM over the transfers (cpu.wan: busy jiffies before
# and after, USER_HZ): the e2e lossy case reports it per forwarded RoCEv2
# packet with and without CREM.
busy() { awk '/^cpu /{print $2+$3+$4+$7+$8+$9}' /proc/stat; }
b0=$(busy)
[ "$crem" != off ] && droptrace_start
if [ "${arg_perf:-0}" = 1 ]; then
  # topo.sh --perf: where this VM's one CPU goes over the transfers. cpu-clock
  # (a software timer): TCG has no hardware counters to sample.
  perf record -a -g -F 997 -e cpu-clock -o /tmp/perf.data >/tmp/perf.log 2>&1 & perf_pid=$!
fi
touch $OUT/wan.ready
wait_file "$OUT/${arg_stop:-a.done}" "${arg_wait_s:-1800}" || log "no stop flag: ending"
echo "$b0 $(busy) $(getconf CLK_TCK)" >$OUT/cpu.wan
if [ -n "${perf_pid:-}" ]; then
  kill -INT $perf_pid; wait $perf_pid
  perf report -i /tmp/perf.data --stdio --no-children --sort sym,dso --percent-limit 0.3 \
    >$OUT/perf.wan.txt 2>>/tmp/perf.log
  perf report -i /tmp/perf.data --stdio --children --sort sym --percent-limit 2 -G \
    >$OUT/perf.wan.graph.txt 2>>/tmp/perf.log
  log "perf: $(grep -m1 'Samples' $OUT/perf.wan.txt) ($(tail -1 /tmp/perf.log))"
fi
if [ -n "${arg_capture_out:-}" ]; then
  # SIGINT: tcpdump writes what it buffered and its counts, then exits.
  kill -INT $cap_wan $cap_out 2>/dev/null; wait $cap_wan $cap_out
  cp /tmp/cap/* $OUT/ && rm -rf /tmp/cap
  log "captures at gwb: $(for f in $cap_files; do cat $OUT/$f.pcap.log; done | grep packets | tr '\n' ' ')"
fi
[ "$crem" != off ] && droptrace_stop $OUT/kfree_skb.wan.txt
for ns in gwa gwb; do ip netns exec $ns tc -s qdisc show | sed -n 's/^ Sent/  '$ns' Sent/p'; done
# The bottleneck's own count of what it sent, dropped and marked.
[ -n "${arg_bottleneck:-}" ] && { tc -n core -s -j qdisc show dev cb >$OUT/core.tc.json; tc -n core -s qdisc show dev cb; }
if [ "$crem" != off ]; then
  # The transfers are over: no flow expires from here on, so the flows the
  # dumps below show are still there for flow-set and the PATH_REPORTs (a
  # sender flow of the first trial, idle for almost flow_idle_s when it was
  # dumped, expired before its flow-set on a loaded machine: "no flow with
  # id", three checks of e2e lossy failed in stop 33's check-full).
  p=/sys/module/crem/parameters/flow_idle_s; [ -w $p ] && echo 0 >$p
  # Counters for the results (the demo and e2e cases read these files).
  [ "${arg_reporter:-off}" = core ] && ip netns exec core "$arg_ctl" -j stats >$OUT/stats.core.json
  for ns in gwa gwb; do
    ip netns exec $ns "$arg_ctl" -j stats >$OUT/stats.$ns.json
    ip netns exec $ns "$arg_ctl" -j flow >$OUT/flows.$ns.json
    ip netns exec $ns "$arg_ctl" stats; ip netns exec $ns "$arg_ctl" flow
  done
  # flow-set on gwa's busiest sender requests flow (its configuration is in effect; a
  # flow of a few packets may still wait for its first one's Effective PSN):
  # a pin the kernel takes, and two it refuses with their reasons
  # (flowset.log, checked by e2e.sh lossy).
  # A requests flow: a PATH_REPORT names a flow by addresses and QP, which a
  # READ-response flow of the same QP shares with it; the module counts it
  # at another flow of the QP (stop 51: e2e lossy once picked a responses
  # flow, the busiest, which counted none while the netns took the report).
  id=$(jq -r '[.flow[] | select(.side == "csf" and .kind == "requests" and .id > 0 and .state == "protected")]
    | max_by(.stats.sources) | .id // empty' $OUT/flows.gwa.json)
  if [ -n "$id" ]; then
    { ip netns exec gwa "$arg_ctl" flow set "$id" side csf k 8 m 1 && echo "pin: ok"
      ip netns exec gwa "$arg_ctl" -j flow show "$id" side csf
      ip netns exec gwa "$arg_ctl" flow set "$id" side csf k 0 m 1 || echo "k 0: refused rc=$?"
      ip netns exec gwa "$arg_ctl" flow set "$id" side csf adaptive || echo "adaptive: refused rc=$?"
    } >$OUT/flowset.log 2>&1
  fi
  # PATH_REPORTs to gwa about that flow: one from the allow-listed reporter
  # ($rep), one from an address that is neither peer nor reporter
  # ($other); stats.after.gwa.json shows path-reports and drop-msg-peer.
  # The report's AF and the datagrams' family are the flow's.
  if [ -n "$id" ]; then
    f=$(jq -r "[.flow[] | select(.id == $id and .side == \"csf\")][0] | \"\(.src) \(.dst) \(.\"dest-qp\")\"" $OUT/flows.gwa.json)
    # shellcheck disable=SC2086
    ip netns exec gwa python3 - $f $rep $other <<'PY' >>$OUT/flowset.log 2>&1
import ipaddress, socket, struct, sys
src, dst, qp, reporter, other = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
src, dst = ipaddress.ip_address(src), ipaddress.ip_address(dst)
psns = [1, 2]  # PSNs the flow may never have used: counted unknown, harmless
hop = struct.pack(">IIIiBBH", 7, 1, len(psns), 0, 2, len(psns), 0)
hop += b"".join(struct.pack(">I", p) for p in psns)
body = struct.pack(">BBBB", 3, 1, src.version, 0) + src.packed + dst.packed
body += struct.pack(">I", qp) + hop
msg = struct.pack(">BBHI", 0x18, 0, 8 + len(body), 0) + body
fam = socket.AF_INET6 if ipaddress.ip_address(reporter).version == 6 else socket.AF_INET
for frm in (reporter, other):
    s = socket.socket(fam, socket.SOCK_DGRAM)
    s.bind((frm, 0))
    s.sendto(msg, (other, 7470))
    s.close()
print(f"path reports sent from {reporter} and {other} about {src} -> {dst} qp {qp}")
PY
    sleep 0.5
    ip netns exec gwa "$arg_ctl" -j stats >$OUT/stats.after.gwa.json
    # The flow's own count of them and of the PSNs they named.
    ip netns exec gwa "$arg_ctl" -j flow show "$id" side csf >$OUT/flow.reported.gwa.json
  fi
  # Close gwa's sender flows: gwb's receivers get CLOSE, a flow-change
  # (close-received) each in events.gwb.log.
  for id in $(jq -r '.flow[] | select(.side == "csf" and .id > 0) | .id' $OUT/flows.gwa.json); do
    ip netns exec gwa "$arg_ctl" flow del "$id" side csf || log "flow del $id failed"
  done
  sleep 1
fi
unload_crem || exit 1
