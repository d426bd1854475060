#!/bin/sh
# Load the KUnit build of crem.ko (its suites run at load) and save the kernel
# log for the host to parse with the kernel's kunit.py.
set -u
. "$(dirname "$0")/common.sh"
insmod "${arg_module:?module=}" || { log "insmod failed"; exit 1; }
rmmod crem || { log "rmmod failed"; exit 1; }
dmesg >$OUT/dmesg.txt
exit 0
