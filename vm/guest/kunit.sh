#!/bin/sh
# Load the KUnit build of crem.ko (its suites run at load) and save the kernel
# log for the host to parse with the kernel's kunit.py.
set -u
. "$(dirname "$0")/common.sh"
# The socket case (kunit/socket.rs) sends to itself through the loopback.
ip link set lo up || { log "lo up failed"; exit 1; }
insmod "${arg_module:?module=}" || { log "insmod failed"; exit 1; }
rmmod crem || { log "rmmod failed"; exit 1; }
# On the debug kernel: what the suites leaked shows in the log (a report
# fails the run, vm/kunit.sh).
kmemleak_report
dmesg >$OUT/dmesg.txt
exit 0
