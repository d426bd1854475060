#!/usr/bin/env bash
# install-check.sh — `make install` checked (make check-install, and a step
# of make check), on the host and then in a VM: install-tools staged in a temporary DESTDIR puts
# every file where it belongs, crem-ctl runs, every man page formats without
# a groff warning and man finds it, the completion scripts load, the unit
# file names the installed paths; installed under a temporary PREFIX, the
# unit passes systemd-analyze verify (its Documentation= pages included);
# uninstall-tools removes every file. With crem.ko built, install-module
# stages it through modules_install (no depmod with DESTDIR); without, it
# must say that crem.ko is not built. Then `make install` into a DESTDIR
# checked in one short VM (see vm_install below): depmod, modprobe crem,
# crem-ctl show, man crem-ctl and man 4 crem on the staged tree. A tool that
# is not installed (groff, man, systemd-analyze, zsh, fish) is reported as a
# skip, and so is the VM without crem.ko or the cached kernel.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
. "$here/lib.sh"
cd "$top"
work=$(mktemp -d /tmp/crem-install.XXXXXX)
trap 'rm -rf "$work"' EXIT
passed=0 failed=0
ok() { passed=$((passed + 1)); echo "ok - $*"; }
bad() { failed=$((failed + 1)); echo "not ok - $*"; }
skip() { echo "skip - $*"; }
# check WHAT CMD...: CMD's status is the verdict; its output goes to the log.
check() {
  local what=$1; shift
  if "$@" >"$work/out" 2>&1; then ok "$what"; else bad "$what"; sed 's/^/    /' "$work/out"; fi
}
have() { command -v "$1" >/dev/null 2>&1; }
mk() { make --no-print-directory "$@" >"$work/make.log" 2>&1 || { cat "$work/make.log"; return 1; }; }
# no_files DIR: nothing but (empty) directories is left under DIR.
no_files() { [ -z "$(find "$1" ! -type d)" ] || { find "$1" ! -type d; return 1; }; }

# --- install-tools into DESTDIR, PREFIX /usr/local ------------------------
d=$work/destdir p=$work/destdir/usr/local
mk install-tools DESTDIR="$d" || die "make install-tools DESTDIR=$d failed"
ctl=$p/bin/crem-ctl
check "crem-ctl installed in PREFIX/bin, executable, runs" "$ctl" --version
check "crem-ctl --help does not offer generate-man" \
  bash -c '! "$1" --help | grep -q generate-man' _ "$ctl"

man8=$p/share/man/man8
"$ctl" generate-man "$work/pages" >/dev/null
check "man8: one page per command, as crem-ctl generate-man writes them" \
  diff <(cd "$man8" && ls) <(cd "$work/pages" && ls)
check "man8: crem-ctl.8 and nested pages (crem-ctl-flow-add.8) among $(ls "$man8" | wc -l)" \
  test -s "$man8/crem-ctl.8" -a -s "$man8/crem-ctl-flow-add.8" -a -s "$man8/crem-ctl-stats-reset.8"
check "man4: crem.4 is docs/man/crem.4" cmp docs/man/crem.4 "$p/share/man/man4/crem.4"
if have groff; then
  # groff -ww: every warning; -z: no output; a warning fails the page.
  groff_clean() { local f w=0; for f in "$@"; do
    [ -z "$(groff -man -ww -z "$f" 2>&1)" ] || { groff -man -ww -z "$f"; w=1; }; done; return $w; }
  check "groff -man -ww formats every page without a warning" \
    groff_clean "$man8"/*.8 "$p/share/man/man4/crem.4"
else
  skip "groff not installed: pages not formatted (vm/setup.sh installs groff-base)"
fi
if have man; then
  check "man finds crem-ctl(8), crem-ctl-flow-add(8), crem(4) under MANDIR" \
    man -M "$p/share/man" -w crem-ctl crem-ctl-flow-add 4 crem
  check "man crem-ctl renders its description" \
    bash -c 'MANWIDTH=80 man -M "$1" crem-ctl | grep -q "crem-ctl configures and inspects CREM"' _ "$p/share/man"
else
  skip "man not installed: pages not looked up"
fi

bashcomp=$p/share/bash-completion/completions/crem-ctl
check "bash completion loads and registers crem-ctl" \
  bash --norc --noprofile -c 'source "$1" && complete -p crem-ctl' _ "$bashcomp"
zshcomp=$p/share/zsh/site-functions/_crem-ctl
fishcomp=$p/share/fish/vendor_completions.d/crem-ctl.fish
check "zsh and fish completions present" test -s "$zshcomp" -a -s "$fishcomp"
if have zsh; then check "zsh -n _crem-ctl" zsh -n "$zshcomp"; else skip "zsh not installed: _crem-ctl not parsed"; fi
if have fish; then check "fish -n crem-ctl.fish" fish -n "$fishcomp"; else skip "fish not installed: crem-ctl.fish not parsed"; fi

check "sample configuration in SYSCONFDIR/crem, no configuration written" \
  bash -c 'cmp dist/crem0.conf.sample "$1/crem0.conf.sample" && [ "$(ls "$1")" = crem0.conf.sample ]' _ "$d/etc/crem"
unit=$p/lib/systemd/system/crem@.service
check "crem@.service names /usr/local/bin/crem-ctl and /etc/crem/%i.conf" \
  bash -c 'grep -qx "ExecStart=/usr/local/bin/crem-ctl setconf /etc/crem/%i.conf" "$1" &&
    grep -qx "ExecStartPre=modprobe crem" "$1" && ! grep -E "@(BINDIR|SYSCONFDIR)@" "$1"' _ "$unit"

echo "[CREM]" >"$d/etc/crem/crem0.conf"  # the operator's
mk uninstall-tools DESTDIR="$d" || bad "make uninstall-tools DESTDIR"
check "uninstall-tools keeps the operator's /etc/crem/crem0.conf" test -f "$d/etc/crem/crem0.conf"
rm -f "$d/etc/crem/crem0.conf"
check "uninstall-tools removes every file it installed" no_files "$d"

# --- install-tools into a PREFIX: the unit's paths exist for verify -------
q=$work/prefix
mk install-tools PREFIX="$q/usr" SYSCONFDIR="$q/etc" || die "make install-tools PREFIX=$q/usr failed"
if have systemd-analyze; then
  # verify checks ExecStart='s binary exists and (MANPATH) Documentation='s pages.
  check "systemd-analyze verify crem@.service (instance crem@i)" \
    env MANPATH="$q/usr/share/man" systemd-analyze verify "$q/usr/lib/systemd/system/crem@.service"
else
  skip "systemd-analyze not installed: crem@.service not verified"
fi
mk uninstall-tools PREFIX="$q/usr" SYSCONFDIR="$q/etc" || bad "make uninstall-tools PREFIX"
check "uninstall-tools under PREFIX removes every file" no_files "$q"

# --- install-module --------------------------------------------------------
m=$work/modules
# The Makefile's KDIR (make check-install passes it on; its default otherwise).
export KDIR=${KDIR:-$(kernel_dir normal)}
rel=$(cat "$KDIR/include/config/kernel.release" 2>/dev/null || true)
if [ -f crem.ko ] && [ -n "$rel" ]; then
  if mk install-module DESTDIR="$m"; then
    check "install-module: DESTDIR/lib/modules/$rel/updates/crem.ko is crem.ko" \
      cmp crem.ko "$m/lib/modules/$rel/updates/crem.ko"
    check "install-module with DESTDIR leaves depmod to the package" \
      bash -c '! ls "$1"/modules.dep* 2>/dev/null && grep -q "depmod left to the package" "$2"' \
      _ "$m/lib/modules/$rel" "$work/make.log"
    mk uninstall-module DESTDIR="$m" || bad "make uninstall-module DESTDIR"
    check "uninstall-module removes crem.ko" no_files "$m"
  else
    bad "make install-module DESTDIR=$m"
  fi
elif [ ! -f crem.ko ]; then
  check "install-module without crem.ko says it is not built, and fails" \
    bash -c '! make --no-print-directory install-module DESTDIR="$1" >"$2" 2>&1 && grep -q "crem.ko is not built" "$2"' \
    _ "$m" "$work/mod.log"
else
  skip "no cached kernel build: install-module not run (make setup builds it)"
fi

# --- make install into DESTDIR, in a VM ----------------------------------
# The staged tree on the kernel crem.ko was built for (vm/guest/install.sh):
# depmod -b over it, modprobe crem from it, the installed crem-ctl show
# against the module, man crem-ctl and man 4 crem from its MANDIR,
# modprobe -r. One short boot of the cached normal kernel; CREM_INSTALL_VM=0
# leaves it out (a skip).
vm_install() {
  local s=$work/staged vmout=$work/vm rc=0 log
  mk install DESTDIR="$s" || { bad "make install DESTDIR=$s"; return; }
  log=$vmout/install.console.log
  CREM_OUT=$vmout "$here/run-vm.sh" --name install --timeout 300 \
    "$here/guest/install.sh" stage="$s" prefix=/usr/local >"$work/vm.out" 2>&1 || rc=$?
  # The guest's ok/not ok lines as this script's, prefixed, the indented
  # output of a failed check with them.
  local n_ok n_bad
  n_ok=$(grep -c '^ok - ' "$log" 2>/dev/null) n_bad=$(grep -c '^not ok - ' "$log" 2>/dev/null)
  sed -n -e 's/^\(not ok\|ok\|skip\) - /\1 - VM: /p' -e '/^    /p' "$log" 2>/dev/null
  passed=$((passed + ${n_ok:-0})) failed=$((failed + ${n_bad:-0}))
  if [ "$rc" != 0 ] && [ "${n_bad:-0}" = 0 ]; then
    bad "VM: the guest ended with status $rc and no failed check (run-vm.sh: 124 timeout, 125 died)"
    cat "$work/vm.out"; tail -40 "$log" 2>/dev/null
  elif [ "${n_ok:-0}" = 0 ]; then
    bad "VM: no check ran"; tail -40 "$log" 2>/dev/null
  fi
}
if [ "${CREM_INSTALL_VM:-1}" = 0 ]; then
  skip "CREM_INSTALL_VM=0: make install not checked in a VM"
elif [ ! -f crem.ko ] || [ -z "$rel" ]; then
  skip "no crem.ko or no kernel build: make install not checked in a VM (make module)"
elif [ "$KDIR" != "$(kernel_dir normal)" ] || [ ! -f "$KDIR/.crem-complete" ]; then
  skip "KDIR is not the cached test kernel the VMs boot: make install not checked in a VM"
else
  vm_install
fi

echo "install-check: $passed passed, $failed failed"
[ "$failed" = 0 ]
