#!/usr/bin/env bash
# build-kernel.sh normal|debug — build (or reuse) a cached Rust-enabled test kernel.
# The cache lives outside the repo, keyed by everything the build depends on
# (kernel package version, the patches in vm/kernel-patches, config fragments,
# rustc/bindgen/clang versions, this script), so a repeat run with the same
# inputs returns at once.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

variant=${1:-normal}
case "$variant" in normal|debug) ;; *) die "usage: build-kernel.sh normal|debug" ;; esac
[ -f "$KSRC_TARBALL" ] || die "$KSRC_TARBALL missing: run 'make setup'"
[ -x "$BINDGEN" ] || die "bindgen not found at $BINDGEN: run 'make setup'"

src=$(kernel_src)
out=$(kernel_dir "$variant")
if [ -f "$out/.crem-complete" ]; then
  say "kernel ($variant) cached: $out"
  exit 0
fi
mkdir -p "$CREM_CACHE"

if [ ! -f "$src/.crem-extracted" ]; then
  say "extracting $KSRC_TARBALL into $src"
  rm -rf "$src" "$src.tmp"; mkdir -p "$src.tmp"
  tar -C "$src.tmp" --strip-components=1 -xf "$KSRC_TARBALL"
  while IFS= read -r p; do
    say "applying $(basename "$p")"
    patch -d "$src.tmp" -p1 --batch --forward --quiet <"$p" || die "$p does not apply to $KSRC_TARBALL"
  done < <(kernel_patches)
  mv "$src.tmp" "$src"; touch "$src/.crem-extracted"
fi

km() { "${KMAKE_ENV[@]}" make -s -C "$src" O="$out" "${KMAKE_ARGS[@]}" "$@"; }
mkdir -p "$out"
km rustavailable >/dev/null || { km rustavailable; die "the kernel does not accept this Rust toolchain"; }
if [ ! -f "$out/.crem-configured" ]; then
  say "configuring ($variant): allnoconfig + vm/kernel.config"
  km allnoconfig
  frags=("$here/kernel.config")
  [ "$variant" = debug ] && frags+=("$here/kernel-debug.config")
  "${KMAKE_ENV[@]}" "$src/scripts/kconfig/merge_config.sh" -m -O "$out" "$out/.config" "${frags[@]}" >/dev/null
  km olddefconfig
  # A fragment line that Kconfig silently dropped would make the tests lie.
  for f in "${frags[@]}"; do
    while IFS= read -r line; do
      case "$line" in CONFIG_*=y) grep -qx "$line" "$out/.config" \
        || say "warning: $line did not stick (dependency missing?)";; esac
    done < "$f"
  done
  grep -qx 'CONFIG_RUST=y' "$out/.config" || die "CONFIG_RUST did not stick: see 'make rustavailable'"
  touch "$out/.crem-configured"
fi
jobs=$(( $(nproc) + 1 ))
say "building kernel ($variant) with -j$jobs into $out (~17 min cold on 2 cores)"
start=$(date +%s)
km -j"$jobs" >"$out/build.log" 2>&1 || { tail -40 "$out/build.log"; die "kernel build failed (log: $out/build.log)"; }
say "kernel ($variant) built in $(( $(date +%s) - start )) s"
touch "$out/.crem-complete"
