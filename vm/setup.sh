#!/usr/bin/env bash
# Installs everything the project needs on a fresh Debian bookworm machine, then
# builds (or reuses) the cached test kernels. Idempotent: re-running it only does
# what is missing. Run as root (CI and the dev machines are root).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

RUST_WEB_VER=1.85.0+dfsg3-1~deb12u3
BINDGEN_VER=0.73.2

pkgs=(
  linux-source-6.12
  "rustc-web=$RUST_WEB_VER" "rust-web-src=$RUST_WEB_VER"
  "libstd-rust-web-dev=$RUST_WEB_VER" "libstd-rust-web-1.85=$RUST_WEB_VER"
  clang lld llvm libclang-dev
  flex bison bc libelf-dev libssl-dev cpio xz-utils kmod rsync patch
  qemu-system-x86
  iproute2 rdma-core ibverbs-utils ibverbs-providers perftest rdmacm-utils
  python3-yaml python3-jsonschema python3-matplotlib tcpdump jq nftables ethtool
  linux-perf
  groff-base man-db
  zsh fish
  libisal-dev
  nvme-cli fio
)

need_apt=()
for p in "${pkgs[@]}"; do
  name=${p%%=*}; want=${p#*=}
  have=$(dpkg-query -W -f='${Status} ${Version}' "$name" 2>/dev/null || true)
  case "$have" in
    "install ok installed"*)
      [ "$want" = "$p" ] || [ "${have##* }" = "$want" ] || need_apt+=("$p") ;;
    *) need_apt+=("$p") ;;
  esac
done
if [ ${#need_apt[@]} -gt 0 ]; then
  say "apt: installing ${need_apt[*]}"
  [ "$(id -u)" = 0 ] || die "package install needs root (missing: ${need_apt[*]})"
  apt-get update -qq || die "apt-get update failed"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    "${need_apt[@]}" >/dev/null || die "apt-get install failed for: ${need_apt[*]}"
else
  say "apt: all packages present"
fi
[ -x /usr/bin/rustc ] && /usr/bin/rustc --version | grep -q '^rustc 1\.85\.' \
  || die "/usr/bin/rustc is not Debian's 1.85 (got: $(/usr/bin/rustc --version 2>&1))"

if [ "$("$BINDGEN" --version 2>/dev/null | awk '{print $2}')" != "$BINDGEN_VER" ]; then
  say "cargo: installing bindgen-cli $BINDGEN_VER (a few minutes)"
  cargo install --locked --quiet bindgen-cli --version "$BINDGEN_VER" \
    || die "cargo install bindgen-cli $BINDGEN_VER failed"
else
  say "bindgen-cli $BINDGEN_VER present"
fi

"$here/build-kernel.sh" normal
if [ "${CREM_DEBUG_KERNEL:-0}" = 1 ]; then
  "$here/build-kernel.sh" debug
fi
say "setup complete"
