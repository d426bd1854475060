#!/usr/bin/env bash
# gen.sh [--check] — generate the kernel policies/op tables and the uapi header
# of the "crem" family from netlink/crem.yaml with the kernel's own
# ynl-gen-c.py, and crem-core's Rust form of the family
# (rust/core/src/nl/generated.rs) with netlink/gen_rust.py. --check
# regenerates into a temporary directory and fails if the committed files
# differ, and runs gen_rust.py's own tests (make check's netlink-spec step).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
. "$top/vm/lib.sh"
src=$(kernel_src)
gen=$src/tools/net/ynl/ynl-gen-c.py
[ -f "$gen" ] || die "no $gen: run 'make setup'"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
# ynl finds the protocol schema next to the spec's directory, and the "kernel
# root" (named in the generated comment) by a MAINTAINERS file: lay out a
# miniature tree so the files say "netlink/crem.yaml".
mkdir -p "$work/netlink" "$work/out"
cp "$src/Documentation/netlink/genetlink-legacy.yaml" "$work/"
touch "$work/MAINTAINERS"
cp "$here/crem.yaml" "$work/netlink/"
spec=$work/netlink/crem.yaml
ynl() { (cd "$work" && /usr/bin/python3 "$gen" --spec "$spec" "$@"); }
ynl --mode kernel --header -o "$work/out/crem-nl-gen.h"
ynl --mode kernel --source -o "$work/out/crem-nl-gen.c"
ynl --mode uapi --header -o "$work/out/crem.h"
# 6.12's generator cannot say "4 or 16 octets" of a binary attribute:
# addresses get a validation function (rust/netlink/config.rs; reporters may
# also be empty, which clears the list). Each op's policy has its own copy of
# the attributes it takes, so each substitution happens as many times as
# ops take the attribute (given). (The permission is the spec's
# uns-admin-perm; the events group's CAP_NET_ADMIN is the family's, which the
# module defines.)
subst() { # FILE COUNT FROM TO
  local n
  n=$(grep -cF -- "$3" "$1" || true)
  [ "$n" = "$2" ] || die "gen.sh: expected $2 '$3' in $(basename "$1"), found $n (generator or spec changed?)"
  FROM=$3 TO=$4 perl -0pi -e 's/\Q$ENV{FROM}\E/$ENV{TO}/g' "$1"
}
# peer.prefix, peer.addr: the peer nest's policy; flow.src, flow.dst:
# flow-new's; flow.peer: flow-get, -del, -set and -reset's.
for a in PEER_PREFIX:1 PEER_ADDR:1 FLOW_SRC:1 FLOW_DST:1 FLOW_PEER:4; do
  subst "$work/out/crem-nl-gen.c" "${a#*:}" "[CREM_A_${a%:*}] = { .type = NLA_BINARY, }," \
    "[CREM_A_${a%:*}] = NLA_POLICY_VALIDATE_FN(NLA_BINARY, crem_nl_validate_addr, 16),"
done
subst "$work/out/crem-nl-gen.c" 1 "[CREM_A_CONFIG_REPORTER] = { .type = NLA_BINARY, }," \
  "[CREM_A_CONFIG_REPORTER] = NLA_POLICY_VALIDATE_FN(NLA_BINARY, crem_nl_validate_reporter, 16),"
subst "$work/out/crem-nl-gen.h" 1 "/* Common nested types */" \
  "int crem_nl_validate_addr(const struct nlattr *attr, struct netlink_ext_ack *extack);
int crem_nl_validate_reporter(const struct nlattr *attr, struct netlink_ext_ack *extack);

/* Common nested types */"
# Paths as the module includes them.
sed -i 's|#include "crem.h"|#include "../include/uapi/linux/crem.h"|; s|#include <uapi/linux/crem.h>|#include "../include/uapi/linux/crem.h"|' \
  "$work/out/crem-nl-gen.h" "$work/out/crem-nl-gen.c"
dests=("$here/crem-nl-gen.h" "$here/crem-nl-gen.c" "$top/include/uapi/linux/crem.h")
outs=("$work/out/crem-nl-gen.h" "$work/out/crem-nl-gen.c" "$work/out/crem.h")
if [ "${1:-}" = --check ]; then
  rc=0
  for i in 0 1 2; do
    diff -u "${dests[$i]}" "${outs[$i]}" || { say "${dests[$i]} is stale: run 'make netlink-gen'"; rc=1; }
  done
  # The Rust constants (formatted by rustfmt, as committed), then the
  # generator's tests: a spec change it must see, names it must refuse.
  /usr/bin/python3 "$here/gen_rust.py" --check || rc=1
  /usr/bin/python3 "$here/test_gen_rust.py" || rc=1
  exit $rc
fi
mkdir -p "$top/include/uapi/linux"
for i in 0 1 2; do cp "${outs[$i]}" "${dests[$i]}"; say "wrote ${dests[$i]#$top/}"; done
/usr/bin/python3 "$here/gen_rust.py"
