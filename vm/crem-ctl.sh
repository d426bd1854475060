#!/usr/bin/env bash
# crem-ctl.sh MODULE CREMCTL_BINARY [normal|debug] — the crem-ctl tests
# (vm/guest/crem-ctl.sh) in a VM: every command against the real module, and
# `crem-ctl -j` compared with the kernel's own YNL client.
# The binary is copied into the results share (the guest's /tmp is its own
# tmpfs); example outputs for the README are left in $out/examples/.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
[ $# -ge 2 ] || die "usage: crem-ctl.sh MODULE CREMCTL_BINARY [normal|debug]"
mod=$(cd "$(dirname "$1")" && pwd)/$(basename "$1") variant=${3:-normal}
[ -f "$mod" ] || die "no module $1"
[ -x "$2" ] || die "no crem-ctl binary $2 (cargo build -p crem-ctl --release)"
out=$(mktemp -d /tmp/crem-ctl-vm.XXXXXX)
chmod 755 "$out"
cp "$2" "$out/crem-ctl" && chmod 755 "$out/crem-ctl"
rc=0
CREM_OUT=$out "$here/run-vm.sh" --name cremctl --variant "$variant" --out "$out" --timeout 600 \
  "$here/guest/crem-ctl.sh" module="$mod" ctl=/tmp/out/crem-ctl ksrc="$(kernel_src)" \
  spec="$here/../netlink/crem.yaml" || rc=$?
grep -E '^(ok|not ok|    #|crem-ctl:)' "$out/cremctl.console.log"
say "console log and examples: $out"
exit $rc
