#!/usr/bin/env bash
# run-vm.sh [options] SCRIPT [ARGS...] — boot the cached test kernel with the
# host's root shared read-only over 9p, run SCRIPT (an absolute path visible in
# the guest) as the guest's workload, and exit with its status.
#
#   --name NAME        guest hostname and log name (default: vm)
#   --variant V        kernel variant: normal (default) or debug
#   --timeout SECS     kill the VM after SECS (default 600; x3 for debug); exit 124
#   --mem MB           guest memory (default 768, 1536 for debug)
#   --nic LPORT:RPORT  add a virtio NIC wired to UDP 127.0.0.1:RPORT from
#                      127.0.0.1:LPORT (repeatable; eth0, eth1, ... in order)
#   --out DIR          host directory mounted read-write at /tmp/out in the guest
#   --log FILE         console log (default: $CREM_OUT/NAME.console.log)
#   --kunit            run the KUnit suites of modules loaded (else the test
#                      build of crem.ko loads without running them)
#
# Exit status: the script's, 124 on timeout, 125 if the guest died without
# reporting one (panic, oops with panic_on_warn, QEMU failure).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

name=vm variant=normal timeout=600 mem="" out="" log="" nics=() kunit=0
while [ $# -gt 0 ]; do
  case "$1" in
    --name) name=$2; shift 2 ;;
    --variant) variant=$2; shift 2 ;;
    --timeout) timeout=$2; shift 2 ;;
    --mem) mem=$2; shift 2 ;;
    --nic) nics+=("$2"); shift 2 ;;
    --out) out=$2; shift 2 ;;
    --log) log=$2; shift 2 ;;
    --kunit) kunit=1; shift ;;
    --) shift; break ;;
    -*) die "run-vm.sh: unknown option $1" ;;
    *) break ;;
  esac
done
[ $# -ge 1 ] || die "usage: run-vm.sh [options] SCRIPT [ARGS...]"
script=$1; shift
case "$script" in /*) ;; *) script=$(cd "$(dirname "$script")" && pwd)/$(basename "$script") ;; esac
[ -x "$script" ] || die "$script is not an executable file"
kdir=$(kernel_dir "$variant")
kernel=$kdir/arch/x86/boot/bzImage
[ -f "$kdir/.crem-complete" ] || die "no $variant kernel in the cache: run 'make setup' (or 'make kernel-debug')"
[ -n "$mem" ] || { [ "$variant" = debug ] && mem=1536 || mem=768; }
# KASAN, lockdep and kmemleak make the debug kernel about 3x slower under TCG.
[ "$variant" = debug ] && timeout=$((timeout * 3))
out_dir=${CREM_OUT:-/tmp/crem-vm}
mkdir -p "$out_dir"
[ -n "$log" ] || log=$out_dir/$name.console.log

args=$(IFS=,; echo "$*")
case "$args" in *" "*) die "guest arguments must not contain spaces: $args" ;; esac
append="console=ttyS0 root=root rootfstype=9p ro"
append+=" rootflags=trans=virtio,version=9p2000.L,msize=262144,cache=loose"
append+=" init=$here/guest-init.sh panic=-1 crem.name=$name crem.script=$script"
[ -n "$args" ] && append+=" crem.args=$args"
[ "$variant" = debug ] && append+=" panic_on_warn=1 kasan.fault=panic"
[ "$kunit" = 1 ] || append+=" kunit.enable=0"
# Under TCG on a loaded host the kernel's IO-APIC timer check (check_timer)
# sometimes misses its ticks and panics at boot ("IO-APIC + timer doesn't
# work!": a cell of stop 44's CI rehearsal and of stop 45's demo sweep);
# QEMU's q35 timer is wired right, so the check only adds that failure.
append+=" no_timer_check"
# One RAM disk for the NVMe over Fabrics target (guest/nvme.sh); brd is
# built in, so only the command line sizes it. Its pages are allocated as
# they are written.
append+=" brd.rd_nr=1 brd.rd_size=131072"
# Under TCG the guest finds no HPET or PM timer (no ACPI in the config) and
# cannot calibrate its TSC, so it fell back to the jiffies clocksource:
# every clock read and hrtimer in 1 ms steps (a 2 ms netem RTT measured as
# 8 ms). TCG's TSC runs at the host's, so give the guest that frequency.
tsc_khz=$([ "$(kvm_usable)" = yes ] || host_tsc_khz)
[ -n "$tsc_khz" ] && append+=" tsc_early_khz=$tsc_khz tsc=reliable clocksource=tsc"

host_udp_buffers
qemu=(qemu-system-x86_64 -machine q35 -m "$mem" -smp 1 -nographic -no-reboot
  -kernel "$kernel" -append "$append"
  -virtfs "local,path=/,mount_tag=root,security_model=none,readonly=on,multidevs=remap"
  -serial "file:$log" -monitor none)
[ -n "$out" ] && { mkdir -p "$out"; qemu+=(-virtfs "local,path=$out,mount_tag=out,security_model=none"); }
i=0
for n in "${nics[@]}"; do
  lport=${n%%:*} rport=${n##*:}
  mac=$(printf '52:54:00:%02x:%02x:%02x' $(( $(cksum <<<"$name" | cut -c1-3) % 256 )) $((i)) $((lport % 256)))
  qemu+=(-netdev "socket,id=n$i,udp=127.0.0.1:$rport,localaddr=127.0.0.1:$lport"
         -device "virtio-net-pci,netdev=n$i,mac=$mac")
  i=$((i + 1))
done
# TCG: no 5-level paging (KASAN on this kernel faults early with LA57 under TCG).
if [ "$(kvm_usable)" = yes ]; then qemu+=(-enable-kvm -cpu host); else qemu+=(-accel tcg -cpu max,la57=off); fi

set +e
timeout --foreground -k 5 "$timeout" "${qemu[@]}" </dev/null >"$log.qemu" 2>&1
qrc=$?
set -e
rc=$(sed -n 's/^CREM-EXIT=\([0-9]*\).*/\1/p' "$log" | tail -1)
if [ "$qrc" = 124 ]; then say "$name: timed out after ${timeout}s (log: $log)"; exit 124; fi
if [ -z "$rc" ]; then
  say "$name: guest died without an exit status (qemu rc $qrc; log: $log)"
  tail -30 "$log" >&2; cat "$log.qemu" >&2
  exit 125
fi
exit "$rc"
