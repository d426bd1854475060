#!/usr/bin/env bash
# flows.sh MODULE CREMCTL_BINARY [normal|debug] — the flow tests without RDMA
# (vm/guest/flows.sh) in one VM: two netns, HELLOs from a script, checked
# with the kernel's YNL client and crem-ctl.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
[ $# -ge 2 ] || die "usage: flows.sh MODULE CREMCTL_BINARY [normal|debug]"
mod=$(cd "$(dirname "$1")" && pwd)/$(basename "$1") variant=${3:-normal}
[ -f "$mod" ] || die "no module $1"
[ -x "$2" ] || die "no crem-ctl binary $2 (cargo build -p crem-ctl --release)"
out=$(mktemp -d /tmp/crem-flows.XXXXXX)
chmod 755 "$out"
cp "$2" "$out/crem-ctl" && chmod 755 "$out/crem-ctl"
rc=0
CREM_OUT=$out "$here/run-vm.sh" --name flows --variant "$variant" --out "$out" --timeout 900 \
  "$here/guest/flows.sh" module="$mod" ctl=/tmp/out/crem-ctl ksrc="$(kernel_src)" \
  spec="$here/../netlink/crem.yaml" || rc=$?
grep -E '^(ok|not ok|    #|flows:)' "$out/flows.console.log"
say "console log and examples: $out"
exit $rc
