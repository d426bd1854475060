#!/bin/sh
# `make install DESTDIR=STAGE`'s tree on a machine running the kernel it was
# built for (vm/install-check.sh stages it on the host): depmod over it,
# modprobe crem from it (with a parameter), the installed crem-ctl against
# the loaded module, man crem-ctl and man 4 crem from its MANDIR (the man-db
# of the host's root, which the guest boots from), modprobe -r.
# Arguments: stage=DIR prefix=PREFIX (the PREFIX make install used).
# One "ok - WHAT" or "not ok - WHAT" (or "skip - WHY") line per check (the
# host counts them),
# what went wrong indented below; exit status 1 if any check failed.
set -u
. "$(dirname "$0")/common.sh"
stage=${arg_stage:?stage=} prefix=${arg_prefix:?prefix=}
rel=$(uname -r)
fails=0
ok() { echo "ok - $*"; }
bad() { fails=$((fails + 1)); echo "not ok - $*"; }
# check WHAT CMD...: CMD's status is the verdict; its output shown on failure.
check() {
  what=$1; shift
  if "$@" >/tmp/check.out 2>&1; then ok "$what"; else bad "$what"; sed 's/^/    /' /tmp/check.out; fi
}

# The host's /tmp is read-only here and depmod writes beside the modules:
# the tree as a package would unpack it, in the guest's writable /tmp.
root=/tmp/root
mkdir -p $root && cp -a "$stage/." $root/ || { bad "copy of the staged tree $stage"; exit 1; }
mods=$root/lib/modules/$rel

check "depmod -b: modules.dep of kernel $rel names updates/crem.ko" \
  sh -c 'depmod -b "$1" "$2" && grep "^updates/crem.ko:" "$3/modules.dep"' _ $root "$rel" "$mods"
check "modprobe -d crem flow_idle_s=7 loads the staged crem.ko" \
  modprobe -d $root crem flow_idle_s=7
check "crem is loaded: in lsmod, /sys/module/crem, the parameter given (7)" \
  sh -c 'lsmod | grep "^crem " && [ "$(cat /sys/module/crem/parameters/flow_idle_s)" = 7 ]'

ctl=$root$prefix/bin/crem-ctl
check "the installed crem-ctl show reads the loaded module" \
  sh -c '"$1" show && "$1" -j show | python3 -c "
import json, sys
d = json.load(sys.stdin)
assert sorted(d) == [\"config\", \"flow\", \"stats\"], sorted(d)
assert not d[\"flow\"], d[\"flow\"]  # a module just loaded has no flow"' _ "$ctl"

# man-db (the host's, from the shared root) with the staged MANDIR only;
# -w says which file it found, so a system copy cannot stand in for it.
man=$root$prefix/share/man
if command -v man >/dev/null 2>&1; then
  check "man -w crem-ctl and man -w 4 crem find the staged pages" \
    sh -c '[ "$(MANPATH="$1" man -w crem-ctl)" = "$1/man8/crem-ctl.8" ] &&
      [ "$(MANPATH="$1" man -w 4 crem)" = "$1/man4/crem.4" ]' _ "$man"
  check "man crem-ctl shows its description" \
    sh -c 'MANPATH="$1" MANWIDTH=80 man crem-ctl | grep "crem-ctl configures and inspects CREM"' _ "$man"
  check "man 4 crem shows its name line" \
    sh -c 'MANPATH="$1" MANWIDTH=80 man 4 crem | grep "crem - adaptive FEC and coded retransmission"' _ "$man"
else
  # As the host part does: the guest boots from the host's root, and
  # without man-db there (make setup installs it) there is no man to run.
  echo "skip - man not installed on the host, whose root the guest boots: pages not looked up"
fi

check "modprobe -d -r crem unloads it" \
  sh -c 'modprobe -d "$1" -r crem && [ ! -d /sys/module/crem ]' _ $root

# The family loads the module on first use (MODULE_ALIAS_GENL_FAMILY:
# resolving "crem" makes the kernel run modprobe for
# net-pf-16-proto-16-family-crem; here the staged tree's modprobe, whose
# modules.alias depmod wrote).
printf '#!/bin/sh\nexec modprobe -d %s "$@"\n' "$root" >/tmp/modprobe-staged
chmod +x /tmp/modprobe-staged
kmod_was=$(cat /proc/sys/kernel/modprobe)
echo /tmp/modprobe-staged >/proc/sys/kernel/modprobe
check "depmod -b: modules.alias names the family's alias" \
  grep -q "^alias net-pf-16-proto-16-family-crem crem$" "$mods/modules.alias"
check "crem-ctl show with crem.ko unloaded loads it (the family's alias)" \
  sh -c '"$1" show >/dev/null; [ -d /sys/module/crem ]' _ "$ctl"
echo "$kmod_was" >/proc/sys/kernel/modprobe
check "modprobe -d -r crem unloads it again" \
  sh -c 'modprobe -d "$1" -r crem && [ ! -d /sys/module/crem ]' _ $root
echo "install-vm: $fails failed"
[ $fails = 0 ]
