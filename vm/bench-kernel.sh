#!/usr/bin/env bash
# bench-kernel.sh [--baseline REV] [MODULE [BENCH]] — the performance figures
# of docs/perf.md on this machine. One VM (the cached normal kernel; TCG
# unless KVM works) loads MODULE, the KUnit build of crem.ko (default
# build/kunit/crem.ko, `make module-kunit`), whose crem_bench suite measures
# in the kernel, and then runs BENCH, the user-space binary of the very same
# workloads (rust/core/benches/csf.rs; default: built with `cargo bench
# --no-run`). The host then runs BENCH natively. Prints the three columns
# and their ratios:
#   kernel/user  kernel cost over user-space cost, both under the same emulator
#   emu/native   how much the emulator slows the user-space code down
#   kernel est.  native user-space figure times kernel/user: the kernel's
#                figure with the emulator factored out (an estimate)
# and the kernel-only cases (the flow's and the hook's entry points) alone.
#
# --baseline REV: also builds the KUnit module of git revision REV (in a
# worktree under /tmp) and runs its crem_bench suite first in the same boot,
# then prints each kernel case of both side by side with current/baseline:
# how a change of the datapath (the port of issue 14) moves its per-packet
# cost, with the emulator and the machine the same for both. REV must have
# the cases compared (the hook cases exist from 88a623d on).
# Inside the VM (CREM_VM=1) the same script is the guest's workload.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

if [ "${CREM_VM:-}" = 1 ]; then
  . "$here/guest/common.sh"
  # The guest clock under TCG may be jiffies (TSC found unstable): bracket the
  # work with files whose mtimes the host sets, to compare the two clocks.
  if [ -n "${arg_baseline:-}" ]; then
    insmod "$arg_baseline" || { log "insmod of the baseline failed"; exit 1; }
    rmmod crem || { log "rmmod of the baseline failed"; exit 1; }
    dmesg -c >"$OUT/dmesg-baseline.txt"
  fi
  touch "$OUT/clock.0"; date +%s.%N >"$OUT/guest-clock.txt"
  insmod "${arg_module:?module=}" || { log "insmod failed"; exit 1; }
  rmmod crem || { log "rmmod failed"; exit 1; }
  dmesg >"$OUT/dmesg.txt"
  "${arg_bench:?bench=}" >"$OUT/user-vm.txt" || { log "user-space bench failed"; exit 1; }
  date +%s.%N >>"$OUT/guest-clock.txt"; touch "$OUT/clock.1"
  grep -o 'clocksource: Switched to clocksource [a-z-]*' "$OUT/dmesg.txt" | tail -1 >>"$OUT/guest-clock.txt"
  exit 0
fi

. "$here/lib.sh"
top=$(cd "$here/.." && pwd)
base_rev=""
if [ "${1:-}" = --baseline ]; then
  base_rev=${2:?--baseline REV}; shift 2
fi
mod=${1:-$top/build/kunit/crem.ko}
[ -f "$mod" ] || die "no $mod: run 'make module-kunit'"
mod=$(cd "$(dirname "$mod")" && pwd)/$(basename "$mod")
bench=${2:-}
if [ -z "$bench" ]; then
  bench=$(cd "$top" && cargo bench -p crem-core --bench csf --no-run 2>&1 |
    sed -n 's/.*Executable .*(\(.*\)).*/\1/p' | tail -1)
  [ -n "$bench" ] || die "could not build the csf bench"
  case "$bench" in /*) ;; *) bench=$top/$bench ;; esac
fi
out=$(mktemp -d /tmp/crem-bench.XXXXXX)
base_args=()
if [ -n "$base_rev" ]; then
  rev=$(git -C "$top" rev-parse --verify "$base_rev^{commit}") || die "no revision $base_rev"
  wt=/tmp/crem-baseline-${rev:0:12}
  if [ ! -f "$wt/build/kunit/crem.ko" ]; then
    say "baseline: the KUnit module of ${rev:0:12} (worktree $wt)"
    git -C "$top" worktree remove --force "$wt" 2>/dev/null || rm -rf "$wt"
    git -C "$top" worktree add --detach "$wt" "$rev" >/dev/null
    make -C "$wt" module-kunit >"$out/baseline-build.log" 2>&1 ||
      die "baseline build failed (log: $out/baseline-build.log)"
  fi
  base_args=(baseline="$wt/build/kunit/crem.ko")
fi
say "VM: crem_bench suite and the user-space bench under $([ "$(kvm_usable)" = yes ] && echo KVM || echo TCG) (log: $out)"
CREM_OUT=$out "$here/run-vm.sh" --kunit --name bench --out "$out" --timeout 600 \
  "$here/bench-kernel.sh" module="$mod" bench="$bench" "${base_args[@]}"
grep -Eq '^(\[[ 0-9.]*\] )?ok [0-9]+ crem_bench$' "$out/dmesg.txt" || die "crem_bench did not pass (log: $out)"
say "host: the user-space bench natively"
"$bench" >"$out/user-native.txt"
grep -o 'crem-bench: .*' "$out/dmesg.txt" >"$out/kernel-vm.txt"
if [ -n "$base_rev" ]; then
  grep -Eq '^(\[[ 0-9.]*\] )?ok [0-9]+ crem_bench$' "$out/dmesg-baseline.txt" ||
    die "the baseline's crem_bench did not pass (log: $out)"
  grep -o 'crem-bench: .*' "$out/dmesg-baseline.txt" >"$out/kernel-baseline.txt"
fi
{
  echo "cpu: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1) x$(nproc)"
  echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "guest $(sed -n 3p "$out/guest-clock.txt")"
  awk -v h0="$(stat -c %.9Y "$out/clock.0")" -v h1="$(stat -c %.9Y "$out/clock.1")" \
    'NR == 1 {g0 = $1} NR == 2 {g1 = $1} END {
      printf "guest clock: %.3f s while the host clock ran %.3f s (ratio %.3f)\n",
        g1 - g0, h1 - h0, (g1 - g0) / (h1 - h0) }' "$out/guest-clock.txt"
} >"$out/machine.txt"
cat "$out/machine.txt"
python3 - "$out" <<'PY'
import re, sys
d = sys.argv[1]
def load(name):
    rows = {}
    for line in open(f"{d}/{name}"):
        m = re.match(r"crem-bench: (\w+)(.*)", line.strip())
        if not m:
            continue
        kv = dict(re.findall(r"([\w/]+)=([\d.]+)", m.group(2)))
        key = m.group(1) + "".join(f" {k}={kv[k]}" for k in ("k", "m") if k in kv)
        # Every figure as a cost: ns per packet, or ns per MB for throughput.
        rows[key] = ("MB/s", float(kv["MB/s"])) if "MB/s" in kv else ("ns/pkt", float(kv["ns"]))
    return rows
k, u, n = load("kernel-vm.txt"), load("user-vm.txt"), load("user-native.txt")
cost = lambda unit, v: 1 / v if unit == "MB/s" else v
print(f"{'workload':28} {'unit':7} {'kernel(vm)':>11} {'user(vm)':>10} {'user(host)':>11}"
      f" {'kernel/user':>12} {'emu/native':>11} {'kernel est.':>12}")
for key in k:
    if key not in u or key not in n:
        continue
    unit, kv = k[key]
    uv, nv = u[key][1], n[key][1]
    ku = cost(unit, kv) / cost(unit, uv)
    en = cost(unit, uv) / cost(unit, nv)
    est = nv / ku if unit == "MB/s" else nv * ku
    print(f"{key:28} {unit:7} {kv:11.1f} {uv:10.1f} {nv:11.1f} {ku:12.2f} {en:11.1f} {est:12.1f}")
# The kernel-only cases: the flow's and the hook's entry points (no twin).
only = [key for key in k if key not in u]
if only:
    print(f"\n{'kernel-only workload':28} {'unit':7} {'kernel(vm)':>11}")
    for key in only:
        print(f"{key:28} {k[key][0]:7} {k[key][1]:11.1f}")
import os
if os.path.exists(f"{d}/kernel-baseline.txt"):
    b = load("kernel-baseline.txt")
    print(f"\n{'same boot':28} {'unit':7} {'baseline':>11} {'current':>11} {'cur/base':>9}")
    for key in k:
        if key in b:
            unit, kv = k[key]
            r = cost(unit, kv) / cost(unit, b[key][1])
            print(f"{key:28} {unit:7} {b[key][1]:11.1f} {kv:11.1f} {r:9.2f}")
PY
