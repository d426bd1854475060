#!/usr/bin/env bash
# kdir.sh [normal|debug] — print the cached kernel build directory (for KDIR=).
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
kernel_dir "${1:-normal}"
