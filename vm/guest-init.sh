#!/bin/sh
# PID 1 inside a test VM. The root is the host's filesystem, read-only over 9p;
# this makes the writable places tools need, runs the script named on the kernel
# command line (crem.script=PATH crem.args=...), prints its exit status on the
# console for vm/run-vm.sh, and ends the VM.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev 2>/dev/null
mkdir -p /dev/pts /dev/shm && mount -t devpts devpts /dev/pts && mount -t tmpfs shm /dev/shm
# The host's /tmp may hold the repo (CI clones anywhere) or build outputs:
# the entries of it that the command line names (the script, its arguments)
# stay reachable at their usual paths, read-only, as symlinks in the guest's
# writable /tmp. Only those: a host entry of a name a guest script writes
# (/tmp/fz, /tmp/dump.json) would turn the guest's write into a failed one
# into the read-only host tree (stop 28: a stray host /tmp/fz failed
# fuzz-kernel).
mount -t tmpfs -o mode=755 tmpfs /run
mkdir -p /run/host-tmp && mount --bind /tmp /run/host-tmp
for d in /tmp /var/tmp /var/lib /var/log /home /mnt; do  # /var/run links to /run
  mount -t tmpfs -o mode=1777 tmpfs "$d" 2>/dev/null
done
for p in $(tr ' ,' '\n\n' </proc/cmdline | sed -n 's/.*=\(\/tmp\/[^/=]\{1,\}\).*/\1/p'); do
  e=/run/host-tmp/${p#/tmp/}
  [ -e "$e" ] && [ ! -e "$p" ] && ln -s "$e" "$p" 2>/dev/null
done
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
# The results share (rw) from the host, when the runner gives one.
rm -f /tmp/out; mkdir -p /tmp/out && mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 out /tmp/out 2>/dev/null
hostname "$(sed -n 's/.*crem.name=\([^ ]*\).*/\1/p' /proc/cmdline)"
ip link set lo up
script=$(sed -n 's/.*crem.script=\([^ ]*\).*/\1/p' /proc/cmdline)
args=$(sed -n 's/.*crem.args=\([^ ]*\).*/\1/p' /proc/cmdline | tr ',' ' ')
mkdir -p /tmp/home; export HOME=/tmp/home TERM=dumb CREM_VM=1
echo "crem-guest: running $script $args"
# shellcheck disable=SC2086
sh -c "$script $args" </dev/console >/dev/console 2>&1
rc=$?
sync
echo "CREM-EXIT=$rc"
# The lean kernel has no ACPI to power off with: reboot, which QEMU's
# -no-reboot turns into an exit.
echo b > /proc/sysrq-trigger
