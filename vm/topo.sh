#!/usr/bin/env bash
# topo.sh [options] — the RDMA test topology: three VMs joined by QEMU UDP
# socket links on loopback.
#
#   VM a (rxe) --- VM wan [netns gwa] ==netem WAN== [netns gwb] --- VM b (rxe)
#
# Options (defaults in brackets):
#   --rtt MS           WAN round-trip time [10]
#   --loss PCT         random loss on each WAN direction [0]
#   --burst P:R:H:K    Gilbert-Elliott loss (netem gemodel, percentages) instead
#   --rate MBIT        WAN rate limit, 0 = none [0]
#   --bottleneck R:LIMIT_KB[:ecn]
#                      a core router between the gateways whose egress toward
#                      gwb is a tbf of R Mbit/s with a LIMIT_KB tail-drop queue
#                      (congestion loss at a node that is no CREM gateway);
#                      :ecn, an fq_codel under it marking CE instead (hosts
#                      then need --tos 2); DIR/core.tc.json has its counts
#   --reporter off|core
#                      with --bottleneck and --crem: the core router is a Path
#                      Reporter sending PATH_REPORTs about its own drops to the
#                      gateways (DIR/stats.core.json has its counters) [off]
#   --size BYTES       ib_write_bw message size [65536]
#   --iters N          ib_write_bw messages per transfer [20]
#   --trials N         repetitions of every transfer [1]
#   --tests LIST       colon-separated: write_bw, rping, connect (rping -V -C 1
#                      -S 64: a connection and one exchange), rping_bulk (rping -V
#                      with 40 x 32 KiB buffers), write_bw_qN (ib_write_bw
#                      -q N: N queue pairs), fio_RW_BS_qdN (NVMe over Fabrics
#                      on rxe: host b exports a RAM disk through nvmet-rdma,
#                      host a runs fio rw=RW bs=BS iodepth=N with crc32c
#                      verification, e.g. fio_write_128k_qd8,
#                      fio_randread_4k_qd16; see guest/nvme.sh)
#                      [write_bw:rping]
#   --tmo SECS         per-transfer timeout [120]
#   --fio-mib N        MiB each sequential fio test moves [32]
#   --fio-rand-ios N   I/Os each random fio test makes [1024]
#   --host-module KO   load this crem.ko on both RDMA hosts (host mode)
#   --gw-module KO     load this crem.ko in the WAN VM (gateway mode)
#   --crem MODE        off | fixed | adaptive: configure the gateways to
#                      protect A<->B (needs --gw-module and --ctl) [off]
#   --ctl PATH         crem-ctl binary used inside the VMs
#   --k N --m N        block size and repairs for --crem [16, 2]
#   --recovery R       the gateways' recovery: coded, selective-repeat or both
#                      (T/C AETH reports answered with Source Copy) [coded]
#   --hold US          CRF hold time in microseconds [30000]
#   --epsilon E        the adaptive policy's target block failure rate
#                      (crem-ctl set epsilon E, e.g. 2.5e-3) of every
#                      configured CREM netns [module default, 1e-4]
#   --spares N         spare-flows of every configured CREM netns (gateways
#                      and hosts): flows made ahead per side [module default]
#   --host-crem MODE   off | fixed | adaptive: configure the RDMA hosts to
#                      protect A<->B in host mode (needs --host-module, --ctl)
#   --gw-param N:V     module parameter for the gateways' insmod (fault injection)
#   --forge N          host a sends N forged REPAIRs to gwa's CREM port first
#   --unload           host b unloads its crem.ko once the data of the last
#                      transfer flows (host mode: teardown under traffic)
#   --capture N        hosts a and b capture up to N RoCEv2 packets each to
#                      DIR/a.pcap and DIR/b.pcap, gwb what crosses the WAN
#                      to it (RoCEv2 and CREM) to DIR/wan.pcap
#   --capture-out N    gwb captures up to N RoCEv2 packets it sends toward B
#                      to DIR/out.pcap, and what crosses the WAN to it to
#                      DIR/wan.pcap as --capture does, both headers only
#                      and buffered in the guest until the end (tcpdump's
#                      counts in DIR/{wan,out}.pcap.log): the two ends of
#                      gwb, one clock, for results.py recovery-latency (the
#                      hosts capture nothing unless --capture is given too);
#                      N:out captures out.pcap alone (one tcpdump less on
#                      the WAN VM's CPU)
#   --perf             the WAN VM profiles itself over the transfers (perf
#                      record -a -g, 997 Hz, on its one CPU) and leaves
#                      perf report's flat profile (DIR/perf.wan.txt: symbol,
#                      module, share of samples) and the call-graph profile
#                      (DIR/perf.wan.graph.txt); where the gateways' CPU
#                      goes, crem.ko's functions by name
#   --tos N            RDMA hosts connect with IP ToS N (ECN bits included)
#   --family 4|6       RDMA over IPv4 or IPv6 (2001:db8::/32; every VM then
#                      dual-stack, ib_write_bw by GID index without RDMA CM,
#                      its out-of-band exchange over IPv4) [4]
#   --wb-gid           ib_write_bw by GID index without RDMA CM over IPv4 too
#                      (an IPv6 run's like-for-like IPv4 reference)
#   --mtu N            MTU of every link (hosts and gateways; rxe's active
#                      RDMA MTU follows the host's: 4096 from 4192 on) [1500]
#   --gw-mtu N         MTU of the gateways' links only (hosts keep --mtu):
#                      a gateway whose links allow more than its hosts use
#                      [--mtu]
#   --tap              host b runs a packet tap (tcpdump) on eth0 throughout,
#                      to DIR/b.tap.pcap
#   --variant V        kernel: normal or debug [normal]
#   --out DIR          results directory [fresh under /tmp]
# Prints the RESULT lines of host a; they are also in DIR/results.txt.
# DIR/host-udp-drops: datagrams the host's UDP sockets (the emulated links)
# dropped during the run, losses netem did not make (lib.sh).
# Exit status: 0 when all three VMs ran their scripts to the end (transfers
# that did not complete are results, not errors), else non-zero.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

rtt=10 loss=0 burst="" rate=0 size=65536 iters=20 trials=1 tests=write_bw:rping tmo=120
hmod="" gmod="" variant=normal out="" capture="" crem=off ctl="" ck=16 cm=2 hold=30000 spares="" epsilon="" gparam="" forge="" hcrem=off unload=0 tap=0 tos="" mtu=1500 gwmtu="" family=4 wbgid=0 bottleneck="" reporter=off recovery=coded capture_out="" fiomib=32 fioios=1024 perf=0
while [ $# -gt 0 ]; do
  case "$1" in
    --rtt) rtt=$2 ;; --loss) loss=$2 ;; --burst) burst=$2 ;; --rate) rate=$2 ;;
    --size) size=$2 ;; --iters) iters=$2 ;; --trials) trials=$2 ;; --tests) tests=$2 ;;
    --tmo) tmo=$2 ;; --fio-mib) fiomib=$2 ;; --fio-rand-ios) fioios=$2 ;; --host-module) hmod=$2 ;; --gw-module) gmod=$2 ;;
    --variant) variant=$2 ;; --out) out=$2 ;; --capture) capture=$2 ;; --capture-out) capture_out=$2 ;;
    --gw-param) gparam=$2 ;; --host-crem) hcrem=$2 ;; --forge) forge=$2 ;;
    --unload) unload=1; shift; continue ;;
    --tap) tap=1; shift; continue ;;
    --perf) perf=1; shift; continue ;;
    --wb-gid) wbgid=1; shift; continue ;;
    --tos) tos=$2 ;; --family) family=$2 ;; --bottleneck) bottleneck=$2 ;; --reporter) reporter=$2 ;;
    --mtu) mtu=$2 ;; --gw-mtu) gwmtu=$2 ;;
    --crem) crem=$2 ;; --ctl) ctl=$2 ;; --k) ck=$2 ;; --m) cm=$2 ;; --hold) hold=$2 ;;
    --spares) spares=$2 ;;
    --epsilon) epsilon=$2 ;;
    --recovery) recovery=$2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "topo.sh: unknown option $1 (see --help)" ;;
  esac
  shift 2
done
case $family in 4|6) ;; *) die "topo.sh: --family is 4 or 6, not $family" ;; esac
for m in "$hmod" "$gmod"; do [ -z "$m" ] || [ -f "$m" ] || die "no module at $m"; done
[ -n "$out" ] || out=$(mktemp -d /tmp/crem-topo.XXXXXX)
mkdir -p "$out"; rm -f "$out"/*.ready "$out"/a.done "$out"/{req,srv,cdone,fin}.* "$out"/results.txt
abs() { [ -z "$1" ] || echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
hmod=$(abs "$hmod") gmod=$(abs "$gmod") ctl=$(abs "$ctl")
[ "$crem" = off ] || { [ -n "$gmod" ] && [ -x "$ctl" ]; } || die "--crem $crem needs --gw-module and --ctl"
[ "$hcrem" = off ] || { [ -n "$hmod" ] && [ -x "$ctl" ]; } || die "--host-crem $hcrem needs --host-module and --ctl"
rm -f "$out"/stats.*.json "$out"/flows.*.json

# Four UDP ports per link end, away from anything else on loopback.
base=$(( 20000 + (RANDOM % 2000) * 10 ))
ntests=$(echo "$tests" | tr ':' '\n' | grep -c .)
common=(--variant "$variant" --out "$out" --timeout $(( trials * (ntests + 1) * (tmo + 70) + 300 )))
wan_args=(rtt_ms="$rtt" loss_pct="$loss" rate_mbit="$rate" mtu="${gwmtu:-$mtu}" family="$family")
[ -n "$burst" ] && wan_args+=(burst="$burst")
[ -n "$bottleneck" ] && wan_args+=(bottleneck="$bottleneck")
[ "$reporter" != off ] && wan_args+=(reporter="$reporter")
[ -n "$capture" ] && wan_args+=(capture="$capture")
[ -n "$capture_out" ] && wan_args+=(capture_out="$capture_out")
[ "$perf" = 1 ] && wan_args+=(perf=1)
[ -n "$gmod" ] && wan_args+=(module="$gmod")
[ -n "$gparam" ] && wan_args+=(modparams="$gparam")
[ "$crem" = off ] || wan_args+=(crem="$crem" ctl="$ctl" k="$ck" m="$cm" hold_us="$hold" recovery="$recovery")
[ "$crem" = off ] || [ -z "$spares" ] || wan_args+=(spare_flows="$spares")
[ "$crem" = off ] || [ -z "$epsilon" ] || wan_args+=(epsilon="$epsilon")
host_args=(size="$size" iters="$iters" trials="$trials" tests="$tests" tmo_s="$tmo" mtu="$mtu" rtt_ms="$rtt"
  fio_mib="$fiomib" fio_rand_ios="$fioios" family="$family")
[ -n "$hmod" ] && host_args+=(module="$hmod")
[ -n "$capture" ] && host_args+=(capture="$capture")
[ -n "$forge" ] && host_args+=(forge="$forge")
[ "$unload" = 1 ] && host_args+=(unload=1)
[ -n "$tos" ] && host_args+=(tos="$tos")
[ "$wbgid" = 1 ] && host_args+=(wb_gid=1)
[ "$hcrem" = off ] || host_args+=(crem="$hcrem" ctl="$ctl" k="$ck" m="$cm" hold_us="$hold")
[ "$hcrem" = off ] || [ -z "$spares" ] || host_args+=(spare_flows="$spares")
[ "$hcrem" = off ] || [ -z "$epsilon" ] || host_args+=(epsilon="$epsilon")

udp0=$(host_udp_drops)
say "topology: IPv$family rtt=${rtt}ms loss=${loss}% burst=${burst:-none} bottleneck=${bottleneck:-none} reporter=$reporter rate=${rate}mbit mtu=$mtu gw-mtu=${gwmtu:-$mtu} crem=$crem recovery=$recovery, results in $out"
CREM_OUT=$out "$here/run-vm.sh" --name wan "${common[@]}" --nic $((base + 1)):$((base + 0)) \
  --nic $((base + 2)):$((base + 3)) "$here/guest/wan.sh" "${wan_args[@]}" & wan=$!
CREM_OUT=$out "$here/run-vm.sh" --name a "${common[@]}" --nic $((base + 0)):$((base + 1)) \
  "$here/guest/host.sh" role=a "${host_args[@]}" & a=$!
CREM_OUT=$out "$here/run-vm.sh" --name b "${common[@]}" --nic $((base + 3)):$((base + 2)) \
  "$here/guest/host.sh" role=b "${host_args[@]}" $([ "$tap" = 1 ] && echo tap=1) & b=$!
rc=0
# Whatever way host a ends, release the others from their waits.
wait "$a" || rc=$?
touch "$out/a.done"
for p in $b $wan; do wait "$p" || rc=$?; done
# Datagrams the host dropped at the links' sockets while these VMs ran
# (lib.sh: host_udp_buffers). Any other UDP load on the host counts too.
echo $(( $(host_udp_drops) - udp0 )) >"$out/host-udp-drops"
[ "$(cat "$out/host-udp-drops")" = 0 ] || say "the host dropped $(cat "$out/host-udp-drops") datagrams at its UDP sockets during this run (losses on the emulated links netem did not make)"
[ -f "$out/results.txt" ] && cat "$out/results.txt"
[ "$rc" = 0 ] || say "a VM failed (rc $rc); console logs in $out"
exit "$rc"
