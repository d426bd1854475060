# Sourced by the guest scripts: addresses of the test topology (documentation
# prefixes only) and small helpers.
#   A 192.0.2.1 --- 192.0.2.2 [gwa] 198.51.100.1 ==WAN== 198.51.100.2 [gwb] 203.0.113.2 --- 203.0.113.1 B
A_IP=192.0.2.1 GWA_LAN=192.0.2.2 GWA_WAN=198.51.100.1
B_IP=203.0.113.1 GWB_LAN=203.0.113.2 GWB_WAN=198.51.100.2
# With a bottleneck (wan.sh): the core router's addresses toward gwa, gwb.
CORE_A=198.51.100.9 CORE_B=198.51.100.10
# family=6 (topo.sh --family 6): the same topology is dual-stack and the
# transfers run over IPv6 (DESIGN.md: 2001:db8::/32; /64 per link).
A_IP6=2001:db8:a::1 GWA_LAN6=2001:db8:a::2 GWA_WAN6=2001:db8:f::1
B_IP6=2001:db8:b::1 GWB_LAN6=2001:db8:b::2 GWB_WAN6=2001:db8:f::2
OUT=/tmp/out
log() { echo "[$(hostname)] $*"; }
now_ns() { date +%s%N; }
# add6 NETNS DEV ADDR/LEN: an IPv6 address usable at once (no duplicate
# address detection: it would hold a new address tentative for ~1 s, and
# rxe's GID for it would carry no traffic meanwhile). NETNS "-": this one.
add6() {
  local n=; [ "$1" = - ] || n="-n $1"
  # shellcheck disable=SC2086
  ip $n -6 addr add "$3" dev "$2" nodad
}
# kv KEY=VALUE...: parse our comma-separated kernel-command-line arguments.
for kv in "$@"; do case "$kv" in *=*) eval "arg_${kv%%=*}=\"\${kv#*=}\"" ;; esac; done
# wait_file PATH SECS: wait for a flag file another VM writes into the share.
wait_file() {
  local i=0
  while [ ! -e "$1" ]; do
    i=$((i + 1)); [ "$i" -gt $(($2 * 10)) ] && return 1; sleep 0.1
  done
}
# joined: of the netlink sockets /proc/net/netlink lists on stdin, the
# generic netlink ones that joined a multicast group. Its Groups column
# shows group IDs below 32: genetlink hands them out from 2 upward, and this
# small a system registers far fewer families with groups.
joined() { awk '$2 == 16 && $4 != "00000000" { n++ } END { print n + 0 }'; }
# wait_joined N SECS [PREFIX...]: until N generic netlink sockets have
# joined a group in the namespace PREFIX runs in (e.g. ip netns exec n1).
# A listener that is still subscribing misses what comes first: tests wait
# for it instead of sleeping.
wait_joined() {
  local want=$1 secs=$2 i=0; shift 2
  while [ "$("$@" cat /proc/net/netlink | joined)" -lt "$want" ]; do
    i=$((i + 1)); [ "$i" -gt $((secs * 10)) ] && return 1; sleep 0.1
  done
}
# load_crem: insmod the module under test if the run asks for it.
load_crem() {
  [ -n "${arg_module:-}" ] || return 0
  # shellcheck disable=SC2046
  insmod "$arg_module" $(echo "${arg_modparams:-}" | tr ':' '=') || { log "insmod $arg_module failed"; return 1; }
  log "loaded $arg_module"
}
unload_crem() {
  [ -n "${arg_module:-}" ] || return 0
  rmmod crem || { log "rmmod crem failed"; return 1; }
  kmemleak_report
}
# kmemleak_report: on debug kernels, scan now and print any suspected leak.
kmemleak_report() {
  [ -w /sys/kernel/debug/kmemleak ] || return 0
  echo scan >/sys/kernel/debug/kmemleak; sleep 1; echo scan >/sys/kernel/debug/kmemleak
  cat /sys/kernel/debug/kmemleak
}
# droptrace_start / droptrace_stop FILE: the skb:kfree_skb events (drops,
# as dropwatch and `perf trace -e skb:kfree_skb` see them) raised from
# crem.ko while it ran, one per line in FILE. A normal release is
# consume_skb and never shows here (e2e.sh checks the count against the
# drops the module counted).
TRACEFS=/sys/kernel/tracing
droptrace_start() {
  [ -d $TRACEFS/events ] || mount -t tracefs nodev $TRACEFS 2>/dev/null || return 0
  [ -d $TRACEFS/events/skb/kfree_skb ] || return 0
  echo 4096 >$TRACEFS/buffer_size_kb
  echo >$TRACEFS/trace
  echo 1 >$TRACEFS/events/skb/kfree_skb/enable
}
droptrace_stop() {
  [ -e $TRACEFS/events/skb/kfree_skb/enable ] || return 0
  echo 0 >$TRACEFS/events/skb/kfree_skb/enable
  grep 'kfree_skb:' $TRACEFS/trace | grep '\[crem\]' >"$1"
  log "kfree_skb from crem.ko: $(wc -l <"$1") ($(grep -c 'kfree_skb:' $TRACEFS/trace) in all)"
}
# cremtrace_start / cremtrace_stop FILE: crem.ko's own tracepoints
# (events/crem/: flow up and down, flow-change events, configurations,
# restored packets, REPAIR_REQUESTs) while it ran, one per line in FILE,
# and the events the trace buffer lost ("overrun N", 0 if none) on stdout.
# Start after droptrace_start, which clears the buffer.
cremtrace_start() {
  [ -d $TRACEFS/events ] || mount -t tracefs nodev $TRACEFS 2>/dev/null || return 0
  [ -d $TRACEFS/events/crem ] || { log "no crem tracepoints"; return 0; }
  # Room for a run's restorations and requests beside the skb drops.
  echo 16384 >$TRACEFS/buffer_size_kb
  echo 1 >$TRACEFS/events/crem/enable
}
cremtrace_stop() {
  : >"$1"
  [ -e $TRACEFS/events/crem/enable ] || return 0
  echo 0 >$TRACEFS/events/crem/enable
  grep -E ' crem_[a-z_]+:' $TRACEFS/trace >"$1"
  cat $TRACEFS/per_cpu/cpu*/stats | awk '/^overrun/ { n += $2 } END { print "overrun " n + 0 }'
}
# gid_index ADDR: the index of rxe0's GID for ADDR (rxe adds a RoCEv2 GID
# per address of its netdev: an IPv4 one v4-mapped), empty if none.
gid_index() {
  local want f
  want=$(python3 -c 'import ipaddress, sys
a = ipaddress.ip_address(sys.argv[1])
if a.version == 4: a = ipaddress.IPv6Address("::ffff:" + str(a))
print(a.exploded)' "$1") || return 1
  for f in /sys/class/infiniband/rxe0/ports/1/gids/*; do
    [ "$(cat "$f" 2>/dev/null)" = "$want" ] && { echo "${f##*/}"; return 0; }
  done
  return 1
}
# rxe_counters: rxe0's own counters (hw_counters: sent_pkts, rcvd_seq_err,
# out_of_seq_request, duplicate_request, completer_retry_err, ...), a
# "name value" line each.
rxe_counters() {
  local f
  for f in /sys/class/infiniband/rxe0/ports/1/hw_counters/*; do
    [ -f "$f" ] && echo "${f##*/} $(cat "$f")"
  done
}
# rxe_delta BEFORE: stdin (rxe_counters now) less the counters in file
# BEFORE, as "name:delta,..." (every counter, zeros too, so a reader can
# tell 0 from unread).
rxe_delta() {
  awk 'NR == FNR { b[$1] = $2; next } { printf "%s%s:%d", n++ ? "," : "", $1, $2 - b[$1] }' "$1" -
}
