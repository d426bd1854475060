#!/bin/sh
# An RDMA host VM (soft-RoCE rxe on eth0). role=b serves, role=a runs the
# transfers and writes RESULT lines to the shared results directory.
# Arguments: role=a|b size= iters= trials= tests=write_bw:rping:rping_bulk tmo_s= module=
#   tests: write_bw, write_bw_qN (ib_write_bw -q N: N queue pairs, each
#   writing iters x size), rping, rping_bulk, connect, and fio_RW_BS_qdN
#   (NVMe over Fabrics: see nvme.sh; fio_mib= fio_rand_ios=)
#   rtt_ms=N: the WAN's RTT, for the RESULT lines' window ceiling
#   mtu=N: eth0's MTU (rxe's active RDMA MTU follows it) [1500]
#   family=4|6: RDMA over IPv4 or IPv6 [4]. With 6 the host is dual-stack:
#   rping and NVMe use the IPv6 addresses (RDMA CM), ib_write_bw takes
#   rxe's GID of the IPv6 address by index (-x; perftest 4.5's -R is
#   IPv4 only) and exchanges its QP numbers over IPv4 TCP
#   wb_gid=1: ib_write_bw that way over IPv4 too (the like-for-like IPv4
#   reference of an IPv6 run)
#   crem=off|fixed|adaptive ctl=CREM-CTL k= m= hold_us= spare_flows= epsilon=
#     (host-mode protection)
#   forge=N (role a): first send N forged REPAIR datagrams to the gateway's
#   CREM port (7470) from this host, which is no CREM peer
#   unload=1 (role b): unload crem.ko once the last transfer's data flows,
#   under traffic (its counters are saved first); that transfer ends
#   unprotected
#   tos=N: RDMA CM connections of this host use IP ToS N (rdma_cm configfs
#   default_roce_tos: every RoCEv2 packet it sends, rping's too)
#   tap=1: a packet tap (tcpdump, AF_PACKET) on eth0 for the whole run, to
#   $OUT/ROLE.tap.pcap (64 octets of each frame)
set -u
. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/nvme.sh"
role=${arg_role:?role=a|b}
if [ "$role" = a ]; then me=$A_IP gw=$GWA_LAN peer=$B_IP; else me=$B_IP gw=$GWB_LAN peer=$A_IP; fi
ip link set eth0 mtu ${arg_mtu:-1500} || exit 1
# rxe puts a QP in error when the host's own qdisc refuses one of its
# packets (rxe_net.c: a non-zero ip_local_out counts send_err; rxe_req.c
# completes the WQE with IB_WC_LOC_QP_OP_ERR), and it keeps up to 64 skbs
# per QP unfreed (RXE_INFLIGHT_SKBS_PER_QP_HIGH) while a TCG virtio queue
# drains late: 32 QPs outgrow pfifo_fast's default 1000 (e2e-long's
# 32-QP ib_write_bw failed so, send_err 2). Losses belong to the emulated
# WAN, not to the host's own queue: room for 128 QPs.
ip link set eth0 txqueuelen 8192 || exit 1
ip addr add $me/24 dev eth0 && ip link set eth0 up && ip route add default via $gw || exit 1
# The addresses RDMA runs over (RDMA CM, NVMe-oF): rme, rpeer; adrfam for
# nvmet.
fam=${arg_family:-4} rme=$me rpeer=$peer adrfam=ipv4 any=0.0.0.0
if [ "$fam" = 6 ]; then
  if [ "$role" = a ]; then rme=$A_IP6 gw6=$GWA_LAN6 rpeer=$B_IP6; else rme=$B_IP6 gw6=$GWB_LAN6 rpeer=$A_IP6; fi
  add6 - eth0 $rme/64 && ip -6 route add default via $gw6 || exit 1
  adrfam=ipv6 any=::
fi
load_crem || exit 1
crem=${arg_crem:-off}
if [ "$crem" != off ]; then
  adaptive=off; [ "$crem" = adaptive ] && adaptive=on
  if [ "$role" = a ]; then pfx=203.0.113.0/24; else pfx=192.0.2.0/24; fi
  # IPv6: the peer host's IPv6 prefix too (ib_write_bw's out-of-band TCP
  # stays IPv4 and unprotected, RoCEv2 goes over IPv6).
  if [ "$fam" = 6 ]; then
    if [ "$role" = a ]; then pfx="$pfx=$peer,2001:db8:b::/64=$rpeer"; else pfx="$pfx=$peer,2001:db8:a::/64=$rpeer"; fi
  else
    pfx="$pfx=$peer"
  fi
  "$arg_ctl" set port 7470 role host adaptive $adaptive k ${arg_k:-16} m ${arg_m:-2} \
    hold ${arg_hold_us:-30000} ${arg_spare_flows:+spare-flows $arg_spare_flows} \
    ${arg_epsilon:+epsilon $arg_epsilon} peer $pfx || exit 1
  log "CREM host mode: $crem"
fi
# stats_out: this host's CREM counters for the results (host mode).
stats_out() {
  [ "$crem" = off ] && return 0
  droptrace_stop $OUT/kfree_skb.$role.txt
  "$arg_ctl" -j stats >$OUT/stats.$role.json; "$arg_ctl" -j flow >$OUT/flows.$role.json
  "$arg_ctl" stats; "$arg_ctl" flow
}
rdma link add rxe0 type rxe netdev eth0 || { log "rdma link add failed"; exit 1; }
log "rxe0 on eth0 (MTU $(cat /sys/class/net/eth0/mtu)): $(ibv_devinfo -d rxe0 2>/dev/null | grep -o 'active_mtu:.*' | tr -s ' \t' ' ')"
# ib_write_bw over IPv6: rxe's GID of our IPv6 address, by index (rxe adds
# it when it sees the address: wait for it).
wb_opt=-R
if [ "$fam" = 6 ] || [ "${arg_wb_gid:-0}" = 1 ]; then
  i=0; while ! gid=$(gid_index $rme) && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
  [ -n "${gid:-}" ] || { log "no rxe0 GID for $rme"; exit 1; }
  wb_opt="-x $gid"
  log "ib_write_bw over $rme: rxe0 GID index $gid, no RDMA CM"
fi
rdma_mtu=$(ibv_devinfo -d rxe0 | sed -n 's/.*active_mtu:[[:space:]]*\([0-9]*\).*/\1/p')
if [ -n "${arg_tos:-}" ]; then
  cfs=/sys/kernel/config
  mountpoint -q $cfs || mount -t configfs none $cfs || exit 1
  mkdir -p $cfs/rdma_cm/rxe0 && echo "$arg_tos" >$cfs/rdma_cm/rxe0/ports/1/default_roce_tos \
    || { log "rdma_cm default_roce_tos $arg_tos failed"; exit 1; }
  log "RDMA CM ToS $(cat $cfs/rdma_cm/rxe0/ports/1/default_roce_tos)"
fi
if [ "${arg_tap:-0}" = 1 ]; then
  # Written to the guest's tmpfs, copied out at the end: a 9p write per
  # packet slowed the debug VM enough to time out an RDMA CM connect.
  tcpdump -i eth0 -s 64 -w /tmp/$role.tap.pcap 2>$OUT/$role.tap.log &
  tap=$!
  sleep 1
fi
tap_stop() {
  [ -z "${tap:-}" ] || { kill -INT $tap; wait $tap; cp /tmp/$role.tap.pcap $OUT/; cat $OUT/$role.tap.log; }
}
[ "$crem" != off ] && droptrace_start
size=${arg_size:-65536} iters=${arg_iters:-20} trials=${arg_trials:-1} tmo=${arg_tmo_s:-120}
tests=$(echo "${arg_tests:-write_bw:rping}" | tr ':' ' ')
rping_count=${arg_rping_count:-50} rping_size=${arg_rping_size:-4096}
# The verified bulk transfer: rping -V with large buffers.
bulk_count=${arg_bulk_count:-40} bulk_size=${arg_bulk_size:-32768}

# Transfers are run in lockstep through flag files in the share, one round
# per connection attempt K: A asks for a server (req.K holds the test name
# and 1 for the run's last transfer), B starts it (srv.K), A runs the client
# (cdone.K once it ended), B reports its server gone (fin.K) before A asks
# for the next. A retried transfer gets a fresh server: the old one may
# have taken part of the failed attempt (ib_write_bw's server after its
# second connection was rejected) and would fail the retry too.
server_cmd() {
  case $1 in
    write_bw|write_bw_q*) echo "ib_write_bw $wb_opt -d rxe0 -s $size -n $iters --report_gbits $(qp_opt $1)" ;;
    rping) echo "rping -s -a $any -V -C $rping_count -S $rping_size" ;;
    rping_bulk) echo "rping -s -a $any -V -C $bulk_count -S $bulk_size" ;;
    connect) echo "rping -s -a $any -V -C 1 -S 64" ;;
    # nvmet-rdma serves these (exported at start): nothing to start.
    fio_*) echo "sleep $((tmo + 10))" ;;
  esac
}
# qps TEST: the queue pairs a write_bw test runs (write_bw_qN: N, else 1).
qps() { case $1 in write_bw_q*) echo "${1#write_bw_q}" ;; *) echo 1 ;; esac; }
qp_opt() { [ "$(qps $1)" = 1 ] || echo "-q $(qps $1)"; }
# qps_of TEST: the queue pairs that carried TEST's data: write_bw's -q, the
# NVMe controller's I/O queues (one per CPU: 1 here), else 1.
qps_of() {
  case $1 in
    fio_*) echo $(( $(cat /sys/class/nvme/$(nvme_ctrl)/queue_count 2>/dev/null || echo 2) - 1 )) ;;
    *) qps $1 ;;
  esac
}
# window_mbps N: the ceiling rxe's window puts on N queue pairs, in Mbit/s:
# at most 128 packets unacknowledged per QP (RXE_MAX_UNACKED_PSNS), each of
# the active RDMA MTU, per RTT. A goodput near it is window-limited, not
# loss-limited. "-" without an RTT.
window_mbps() {
  [ "${arg_rtt_ms:-0}" -gt 0 ] || { echo -; return; }
  awk "BEGIN{printf \"%.1f\", $1 * 128 * $rdma_mtu * 8 / ($arg_rtt_ms * 1000)}"
}
case " $(echo "${arg_tests:-}" | tr ':' ' ') " in *" fio_"*) fio=1 ;; *) fio=0 ;; esac
if [ -n "${arg_capture:-}" ]; then
  # Real RoCEv2 packets, as this host sends and receives them: crem-core's
  # ICRC fixtures (vm/capture-fixtures.sh) and diagnosis of recoveries.
  tcpdump -U -i eth0 -s 0 -c "$arg_capture" -w $OUT/$role.pcap udp port 4791 2>/dev/null &
  sleep 1
fi
# listening TEST: B's server for TEST listens: its RDMA CM listener, or
# ib_write_bw's TCP port without RDMA CM (-x: IPv6, wb_gid), which has no
# CM listener to wait for (waiting out 200 polls of one took longer than
# the server's timeout under load: the client then met a closed port).
# A fio test's server is the NVMe target, listening since the export: there
# is nothing new to wait for (polling for another listener ran all 200
# polls, some 53 s of `rdma resource show` a fio transfer under TCG).
listening() {
  case "$1:$wb_opt" in
    fio_*) return 0 ;;
    write_bw*:-x*) ss -Hltn 'sport = :18515' 2>/dev/null | grep -q . ;;
    *) rdma resource show cm_id 2>/dev/null | grep LISTEN | grep -qv ":$NVME_PORT" ;;
  esac
}
if [ "$role" = b ]; then
  if [ $fio = 1 ]; then nvmet_export || exit 1; fi
  touch $OUT/b.ready
  n=1
  while :; do
    while [ ! -e $OUT/req.$n ] && [ ! -e $OUT/a.done ]; do sleep 0.1; done
    [ -e $OUT/req.$n ] || break
    read -r test last <$OUT/req.$n
    # shellcheck disable=SC2046
    timeout $((tmo + 10)) $(server_cmd "$test") >$OUT/server.$n.log 2>&1 &
    pid=$!
    # Tell A only once the server listens: a connect before that is rejected.
    # (Not the NVMe target's listener, which stays for the whole run.)
    i=0; while ! listening "$test" && [ $i -lt 200 ]; do
      sleep 0.1; i=$((i + 1)); done
    rxe_counters >/tmp/rxe.before
    touch $OUT/srv.$n
    if [ "${arg_unload:-0}" = 1 ] && [ "$last" = 1 ] && [ -z "${unloader:-}" ]; then
      # Teardown with flows mid-transfer: held packets, retained clones,
      # timers and the socket all live (kmemleak scans after the rmmod).
      # Once this transfer's data flows (100 more RoCEv2 packets in; the
      # hook's own counter: flow totals dip while flows are retired), or
      # after 10 s.
      got() { "$arg_ctl" -j stats | jq '.stats["roce-local-in"] // 0'; }
      { r0=$(got); i=0
        while [ $(( $(got) - r0 )) -lt 100 ] && [ $i -lt 50 ]; do sleep 0.2; i=$((i + 1)); done
        log "unloading crem.ko, $(( $(got) - r0 )) RoCEv2 packets into the last transfer"
        stats_out; unload_crem && touch $OUT/b.unloaded; } &
      unloader=$!
    fi
    # Once A's client has ended, give the server a few seconds to end too:
    # after a client failure it would otherwise wait out its timeout.
    wait_file $OUT/cdone.$n $((tmo + 20))
    i=0; while kill -0 $pid 2>/dev/null && [ $i -lt 30 ]; do sleep 0.1; i=$((i + 1)); done
    kill $pid 2>/dev/null
    wait $pid; echo "server $n ($test) rc=$?" >>$OUT/server.$n.log
    rxe_counters | rxe_delta /tmp/rxe.before >$OUT/rxe.b.$n
    touch $OUT/fin.$n
    n=$((n + 1))
  done
  if [ -n "${unloader:-}" ]; then
    wait $unloader
    tap_stop
    [ -e $OUT/b.unloaded ] || { log "rmmod under traffic failed"; exit 1; }
    log "crem.ko unloaded under traffic"
    exit 0
  fi
  stats_out
  tap_stop
  [ $fio = 1 ] && nvmet_unexport
  unload_crem || exit 1
  exit 0
fi

wait_file $OUT/b.ready 300 && wait_file $OUT/wan.ready 300 || { log "peers not ready"; exit 1; }
if [ -n "${arg_forge:-}" ]; then
  # The draft's Coding Example REPAIR (44 octets), from an address that is
  # no peer of the gateway: it must be dropped and counted.
  python3 - "$gw" "$arg_forge" <<'PY'
import socket, sys
msg = bytes.fromhex("1180002c0000beef0101040200100000000700"
                    "10f0000000e0000000" "00354fdf6d4b40b57e5c400000000000")
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for _ in range(int(sys.argv[2])):
    s.sendto(msg, (sys.argv[1], 7470))
PY
  log "sent $arg_forge forged REPAIRs to $gw:7470"
fi
fails=0 n=0 k=0
ntransfers=$(( trials * $(echo $tests | wc -w) ))
# serve TEST: a fresh server on B for the next attempt (round k).
serve() {
  k=$((k + 1)); echo "$1 $([ $n = $ntransfers ] && echo 1 || echo 0)" >$OUT/req.$k
  wait_file $OUT/srv.$k 60 || { log "B did not start server $k"; exit 1; }
}
# served: this attempt's client is done; wait for B's server to end.
served() {
  touch $OUT/cdone.$k
  wait_file $OUT/fin.$k $((tmo + 60)) || { log "B server $k never ended"; exit 1; }
}
result() { echo "RESULT $*" | tee -a $OUT/results.txt; }
# The RDMA CM's events on this host: the tracepoint rdma_cma:cm_event_handler
# in a tracing instance of its own, saved per transfer to cm.N.log (each
# attempt's CONNECT_RESPONSE, or REJECTED, UNREACHABLE, ... with its status).
cmt=/sys/kernel/tracing/instances/crem-cm cm_trace=0
[ -d /sys/kernel/tracing/events ] || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
mkdir -p $cmt 2>/dev/null && echo 1 >$cmt/events/rdma_cma/cm_event_handler/enable 2>/dev/null \
  && cm_trace=1
[ $cm_trace = 1 ] || log "no rdma_cma tracepoint: rping's connected= from its output only"
# connected TEST LOG CMLOG: 1 once the transfer's RDMA connection was set up
# and data flowed over it, else 0 (a CM reject, "Unable to init the socket
# connection", an rdma_connect failure, no output at all).
#   ib_write_bw prints "remote address:" only after both of its CM
#   connections are established and its first handshake (RDMA sends over
#   the link) went through; the data phase follows. Its stdout is
#   line-buffered (stdbuf: a few lines, all before the data phase), so a
#   client killed by its timeout still shows how far it got.
#   rping prints nothing before it fails: its connection was set up once the
#   CM had the server's accept (the tracepoint's CONNECT_RESPONSE: a user
#   space cm_id, whose QP librdmacm then moves to RTS, sending the RTU, and
#   reports ESTABLISHED; ESTABLISHED for a kernel one); its data phase
#   follows. Not rping -d: printing each completion, line-buffered, made
#   rping slower under TCG (10 transfers each in two boots, loaded machine:
#   median 6.6 s against 5.7 s).
connected() {
  case $1 in
    fio_*) [ -n "$(nvme_dev)" ] ;;
    # One "remote address:" line per queue pair.
    write_bw|write_bw_q*) [ "$(grep -c "remote address:" "$2")" -ge "$(qps $1)" ] ;;
    *) if [ $cm_trace = 1 ]; then grep -Eq " (ESTABLISHED|CONNECT_RESPONSE) \(" "$3"
       else [ -s "$2" ] && ! grep -Eq "cma event|CONNECTED state|rdma_connect|connect error|rdma_resolve" "$2"; fi ;;
  esac && echo 1 || echo 0
}
# write_bw_reported LOG: ib_write_bw's report row is in LOG (a line of
# numbers after its "#bytes" header: every iteration has completed).
write_bw_reported() {
  awk '/#bytes/ { h = 1; next } h && /^ *[0-9]+ +[0-9]+ +[0-9.]+ +[0-9.]+/ { f = 1 } END { exit !f }' "$1"
}
# rping_teardown_race LOG: rping's client ended its transfer (every buffer
# verified: a mismatch, a failed completion or an unexpected state would
# have printed a line of its own), disconnected, and then its CM event
# thread lost a race with its own clean-up: it read the event channel that
# main() was closing, printed "rdma_get_cm_event: Bad file descriptor" and
# called exit(-1) (rping.c's cm_thread; rdma-core 44). The disconnect line
# is the one every completed rping prints.
rping_teardown_race() {
  grep -qx "rdma_get_cm_event: Bad file descriptor" "$1" &&
    grep -qx "client DISCONNECT EVENT\.\.\." "$1" &&
    ! grep -vqx -e "client DISCONNECT EVENT\.\.\." -e "rdma_get_cm_event: Bad file descriptor" "$1"
}
for t in $(seq 1 "$trials"); do
  for test in $tests; do
    n=$((n + 1))
    # A transfer whose connection was never set up carried no data: try it
    # again, up to 3 attempts in all (each attempt's client log is kept,
    # client.N.tryA.log; the last is client.N.log). A failure after data
    # flowed, or a client that ran into its timeout, is never retried.
    attempt=1
    while :; do
    serve $test
    clog=/tmp/client.$n.log cmlog=/tmp/cm.$n.log
    [ $cm_trace = 1 ] && echo >$cmt/trace
    # NVMe: connected (once) and live before the baseline, so that neither
    # the connect nor a recovery left by the previous test is this one's.
    case $test in fio_*) nvme_attach && nvme_live ;; esac
    rxe_counters >/tmp/rxe.before
    start=$(now_ns) teardown=ok end_ns= extra= extra_rec=
    case $test in
      write_bw|write_bw_q*)
        bytes=$((size * iters * $(qps $test)))
        # shellcheck disable=SC2046
        timeout $tmo stdbuf -oL -eL ib_write_bw $wb_opt -d rxe0 -s $size -n $iters --report_gbits \
          $(qp_opt $test) $peer >$clog 2>&1 &
        cpid=$!; report_ns=
        # Its report row comes once every iteration has completed; what
        # follows is teardown (a final handshake with the server, the CM's
        # disconnect). A teardown that hangs (the server has died of a
        # general-protection fault in librdmacm after its report, the
        # client then waited for it to its timeout) ends the client 10 s
        # after the report: the transfer completed, timed to its report, and
        # its RESULT line says teardown=failed.
        while kill -0 $cpid 2>/dev/null; do
          [ -z "$report_ns" ] && write_bw_reported $clog && report_ns=$(now_ns)
          if [ -n "$report_ns" ] && [ $(( $(now_ns) - report_ns )) -gt 10000000000 ]; then
            pkill -TERM -P $cpid; break
          fi
          sleep 0.1
        done
        wait $cpid; rc=$?; verified=0
        if [ $rc != 0 ] && [ -n "$report_ns" ]; then
          log "transfer $n: write_bw reported, then its teardown failed (rc $rc)"
          teardown=failed rc=0 end_ns=$report_ns
        fi
        # perftest finishes every iteration before it computes its report,
        # and under TCG its cycle-counter calibration (r^2 >= 0.9) can fail
        # afterwards: that is a completed transfer, timed by us, not by it.
        [ $rc = 1 ] && grep -q "Can't produce a report" $clog \
          && ! grep -qi "error\|fail" $clog && rc=0 ;;
      rping)
        bytes=$((rping_count * rping_size))
        timeout $tmo rping -c -a $rpeer -V -C $rping_count -S $rping_size >$clog 2>&1
        rc=$?; verified=1 ;;
      rping_bulk)
        bytes=$((bulk_count * bulk_size))
        timeout $tmo rping -c -a $rpeer -V -C $bulk_count -S $bulk_size >$clog 2>&1
        rc=$?; verified=1 ;;
      connect)
        # One 64-octet verified exchange: a connection, nearly nothing else
        # (vm/connects.sh counts connection failures per 100).
        bytes=64
        timeout $tmo rping -c -a $rpeer -V -C 1 -S 64 >$clog 2>&1
        rc=$?; verified=1 ;;
      fio_*)
        # The NVMe connection is made once, before the first fio test, and
        # is not part of any transfer's time; fio's own numbers are the
        # result (fio_result.py), the wall time is wall_s.
        bytes=0 verified=0 rec0=$(nvme_recoveries)
        if [ -n "$(nvme_dev)" ]; then
          fio_run $test $OUT/fio.$n.json; rc=$?
          extra_rec="nvme_recoveries=$(( $(nvme_recoveries) - rec0 ))"
          cp $OUT/fio.$n.json $clog
          if r=$(python3 "$(dirname "$0")/fio_result.py" $OUT/fio.$n.json $test); then
            extra="$r $extra_rec" bytes=$(echo "$r" | sed 's/^bytes=\([0-9]*\).*/\1/')
          else [ $rc = 0 ] && rc=1; fi
        else rc=1; cp /tmp/nvme-connect.log $clog; fi ;;
      *) log "unknown test $test"; exit 2 ;;
    esac
    case $test in write_bw*) ;; *) if [ $rc != 0 ] && rping_teardown_race $clog; then
      log "transfer $n: $test ended, then lost rping's teardown race (rc $rc)"
      teardown=failed rc=0
    fi ;; esac
    ns=$(( ${end_ns:-$(now_ns)} - start ))
    if [ $cm_trace = 1 ]; then
      grep cm_event_handler $cmt/trace >$cmlog
      { echo "# transfer $n ($test) attempt $attempt, rc $rc"; cat $cmlog; } >>$OUT/cm.$n.log
    fi
    if [ $rc = 0 ]; then conn=1; else conn=$(connected $test $clog $cmlog); fi
    cp $clog $OUT/client.$n.log
    # Retried: a connection never set up (a CM reject; a client that printed
    # nothing at all before failing: ib_write_bw has twice died of a
    # general-protection fault in librdmacm while connecting).
    [ $rc != 0 ] && [ $rc != 124 ] && [ $conn = 0 ] && [ $attempt -lt 3 ] || break
    served
    cp $clog $OUT/client.$n.try$attempt.log
    log "transfer $n: never connected (rc $rc: $(grep -v '^$' $clog | tail -1)), retrying"
    attempt=$((attempt + 1)); sleep 1
    done
    served
    rxe="rxe_a=$(rxe_counters | rxe_delta /tmp/rxe.before) rxe_b=$(cat $OUT/rxe.b.$k 2>/dev/null)"
    ceiling="qps=$(qps_of $test) window_mbps=$(window_mbps $(qps_of $test))"
    secs=$(awk "BEGIN{printf \"%.3f\", $ns/1e9}")
    if [ $rc = 0 ] && [ -n "$extra" ]; then
      # fio's own numbers (bytes seconds mbps verified ...), then ours.
      result "test=$test family=$fam trial=$t completed=1 $extra wall_s=$secs" \
        "connected=1 attempts=$attempt teardown=$teardown $ceiling $rxe"
    elif [ $rc = 0 ]; then
      mbps=$(awk "BEGIN{printf \"%.3f\", $bytes*8/($ns/1e3)}")
      result "test=$test family=$fam trial=$t completed=1 seconds=$secs bytes=$bytes mbps=$mbps verified=$verified" \
        "connected=1 attempts=$attempt teardown=$teardown $ceiling $rxe"
    else
      fails=$((fails + 1)); tail -3 $OUT/client.$n.log
      result "test=$test family=$fam trial=$t completed=0 seconds=- bytes=$bytes mbps=0 verified=0 rc=$rc" \
        "connected=$conn attempts=$attempt $ceiling $rxe $extra_rec"
    fi
  done
done
nvme_detach
touch $OUT/a.done
stats_out
unload_crem || exit 1
exit 0
