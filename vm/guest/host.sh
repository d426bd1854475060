#!/bin/sh
# An RDMA host VM (soft-RoCE rxe on eth0). role=b serves, role=a runs the
# transfers and writes RESULT lines to the shared results directory.
# Arguments: role=a|b size= iters= trials= tests=write_bw:rping:rping_bulk tmo_s= module=
#   crem=off|fixed|adaptive ctl=CREM-CTL k= m= hold_us=  (host-mode protection)
#   forge=N (role a): first send N forged REPAIR datagrams to the gateway's
#   CREM port (7470) from this host, which is no CREM peer
#   unload=1 (role b): unload crem.ko once the last transfer's data flows,
#   under traffic (its counters are saved first); that transfer ends
#   unprotected
set -u
. "$(dirname "$0")/common.sh"
role=${arg_role:?role=a|b}
if [ "$role" = a ]; then me=$A_IP gw=$GWA_LAN peer=$B_IP; else me=$B_IP gw=$GWB_LAN peer=$A_IP; fi
ip addr add $me/24 dev eth0 && ip link set eth0 up && ip route add default via $gw || exit 1
load_crem || exit 1
crem=${arg_crem:-off}
if [ "$crem" != off ]; then
  adaptive=off; [ "$crem" = adaptive ] && adaptive=on
  if [ "$role" = a ]; then pfx=203.0.113.0/24; else pfx=192.0.2.0/24; fi
  "$arg_ctl" set port 7470 role host adaptive $adaptive k ${arg_k:-16} m ${arg_m:-2} \
    hold ${arg_hold_us:-30000} peer $pfx=$peer || exit 1
  log "CREM host mode: $crem"
fi
# stats_out: this host's CREM counters for the results (host mode).
stats_out() {
  [ "$crem" = off ] && return 0
  "$arg_ctl" -j stats >$OUT/stats.$role.json; "$arg_ctl" -j flow >$OUT/flows.$role.json
  "$arg_ctl" stats; "$arg_ctl" flow
}
rdma link add rxe0 type rxe netdev eth0 || { log "rdma link add failed"; exit 1; }
size=${arg_size:-65536} iters=${arg_iters:-20} trials=${arg_trials:-1} tmo=${arg_tmo_s:-120}
tests=$(echo "${arg_tests:-write_bw:rping}" | tr ':' ' ')
rping_count=${arg_rping_count:-50} rping_size=${arg_rping_size:-4096}
# The verified bulk transfer: rping -V with large buffers.
bulk_count=${arg_bulk_count:-40} bulk_size=${arg_bulk_size:-32768}

# Transfers are run in lockstep through flag files in the share: A asks for
# transfer N (req.N holds the test name), B starts that server (srv.N), A runs
# the client, B reports its server gone (fin.N) before A asks for the next.
server_cmd() {
  case $1 in
    write_bw) echo "ib_write_bw -R -d rxe0 -s $size -n $iters --report_gbits" ;;
    rping) echo "rping -s -a 0.0.0.0 -V -C $rping_count -S $rping_size" ;;
    rping_bulk) echo "rping -s -a 0.0.0.0 -V -C $bulk_count -S $bulk_size" ;;
  esac
}
if [ -n "${arg_capture:-}" ]; then
  # Real RoCEv2 packets, as this host sends and receives them: crem-core's
  # ICRC fixtures (vm/capture-fixtures.sh) and diagnosis of recoveries.
  tcpdump -U -i eth0 -s 0 -c "$arg_capture" -w $OUT/$role.pcap udp port 4791 2>/dev/null &
  sleep 1
fi
if [ "$role" = b ]; then
  touch $OUT/b.ready
  n=1
  while :; do
    while [ ! -e $OUT/req.$n ] && [ ! -e $OUT/a.done ]; do sleep 0.1; done
    [ -e $OUT/req.$n ] || break
    test=$(cat $OUT/req.$n)
    # shellcheck disable=SC2046
    timeout $((tmo + 10)) $(server_cmd "$test") >$OUT/server.$n.log 2>&1 &
    pid=$!
    # Tell A only once the server listens: a connect before that is rejected.
    i=0; while ! rdma resource show cm_id 2>/dev/null | grep -q LISTEN && [ $i -lt 200 ]; do
      sleep 0.1; i=$((i + 1)); done
    touch $OUT/srv.$n
    if [ "${arg_unload:-0}" = 1 ] && [ $n = $(( trials * $(echo $tests | wc -w) )) ]; then
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
    touch $OUT/fin.$n
    n=$((n + 1))
  done
  if [ -n "${unloader:-}" ]; then
    wait $unloader
    [ -e $OUT/b.unloaded ] || { log "rmmod under traffic failed"; exit 1; }
    log "crem.ko unloaded under traffic"
    exit 0
  fi
  stats_out
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
fails=0 n=0
result() { echo "RESULT $*" | tee -a $OUT/results.txt; }
for t in $(seq 1 "$trials"); do
  for test in $tests; do
    n=$((n + 1)); echo $test >$OUT/req.$n
    wait_file $OUT/srv.$n 60 || { log "B did not start server $n"; exit 1; }
    # A connection the RDMA CM rejects carried no data: try it again (the
    # listener can lag its LISTEN state under emulation), up to 3 times.
    attempt=1
    while :; do
    start=$(now_ns)
    case $test in
      write_bw)
        bytes=$((size * iters))
        timeout $tmo ib_write_bw -R -d rxe0 -s $size -n $iters --report_gbits $peer >$OUT/client.$n.log 2>&1
        rc=$?; verified=0
        # perftest finishes every iteration before it computes its report,
        # and under TCG its cycle-counter calibration (r^2 >= 0.9) can fail
        # afterwards: that is a completed transfer, timed by us, not by it.
        [ $rc = 1 ] && grep -q "Can't produce a report" $OUT/client.$n.log \
          && ! grep -qi "error\|fail" $OUT/client.$n.log && rc=0 ;;
      rping)
        bytes=$((rping_count * rping_size))
        timeout $tmo rping -c -a $peer -V -C $rping_count -S $rping_size >$OUT/client.$n.log 2>&1
        rc=$?; verified=1 ;;
      rping_bulk)
        bytes=$((bulk_count * bulk_size))
        timeout $tmo rping -c -a $peer -V -C $bulk_count -S $bulk_size >$OUT/client.$n.log 2>&1
        rc=$?; verified=1 ;;
      *) log "unknown test $test"; exit 2 ;;
    esac
    ns=$(( $(now_ns) - start ))
    # Retried: a CM reject, and a client that printed nothing at all before
    # failing (ib_write_bw has twice died of a general-protection fault in
    # librdmacm while connecting, cause unknown; see the closing note).
    [ $rc != 0 ] && [ $attempt -lt 3 ] && { grep -Eq "RDMA_CM_EVENT_REJECTED|Unexpected CM event .* 8$" \
      $OUT/client.$n.log || [ ! -s $OUT/client.$n.log ]; } || break
    log "transfer $n: connection rejected, retrying"; attempt=$((attempt + 1)); sleep 1
    done
    touch $OUT/cdone.$n
    if [ $rc = 0 ]; then
      secs=$(awk "BEGIN{printf \"%.3f\", $ns/1e9}")
      mbps=$(awk "BEGIN{printf \"%.3f\", $bytes*8/($ns/1e3)}")
      result "test=$test trial=$t completed=1 seconds=$secs bytes=$bytes mbps=$mbps verified=$verified"
    else
      fails=$((fails + 1)); tail -3 $OUT/client.$n.log
      result "test=$test trial=$t completed=0 seconds=- bytes=$bytes mbps=0 verified=0 rc=$rc"
    fi
    wait_file $OUT/fin.$n $((tmo + 60)) || { log "B server $n never ended"; exit 1; }
  done
done
touch $OUT/a.done
stats_out
unload_crem || exit 1
exit 0
