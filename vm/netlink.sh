#!/usr/bin/env bash
# netlink.sh MODULE [normal|debug] — the netlink tests (vm/guest/netlink.sh)
# in a VM, with the kernel's own YNL client and our spec.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
mod=$(cd "$(dirname "$1")" && pwd)/$(basename "$1") variant=${2:-normal}
out=$(mktemp -d /tmp/crem-netlink.XXXXXX)
rc=0
CREM_OUT=$out "$here/run-vm.sh" --name netlink --variant "$variant" --out "$out" --timeout 480 \
  "$here/guest/netlink.sh" module="$mod" ksrc="$(kernel_src)" spec="$here/../netlink/crem.yaml" || rc=$?
grep -E '^(ok|not ok|    #|netlink:)' "$out/netlink.console.log"
exit $rc
