#!/usr/bin/env bash
# Bounded fuzzing of crem-core with cargo-fuzz (libFuzzer).
#
#   rust/core/fuzz/run.sh SECONDS [TARGET...]
#
# Runs each target (default: every one in fuzz_targets/) for
# SECONDS seconds, starting from the committed seeds in corpus/<target>/, and
# fails if any target crashes, times out, runs out of memory or does not build.
# New corpus entries go to a scratch directory (FUZZ_CORPUS_OUT, default a
# temporary one), so the committed seed corpus is left untouched; crash
# reproducers land in artifacts/<target>/ as usual. Before each target a
# progress line: "[fuzz] target 2/9 (NAME), 1m05s elapsed, about 8m00s left",
# the time left being SECONDS for it and each later one (builds on top).
#
# Toolchain: cargo-fuzz needs nightly-only flags. A rustup "nightly" toolchain
# is used when installed; otherwise the stable toolchain runs with
# RUSTC_BOOTSTRAP=1. If the AddressSanitizer build fails, the target is built
# and run without a sanitizer (-s none). Overflow checks and debug assertions
# are always on (--debug-assertions), matching the kernel's
# CONFIG_RUST_OVERFLOW_CHECKS.
#
# Environment:
#   FUZZ_NIGHTLY=0   use the stable toolchain with RUSTC_BOOTSTRAP=1 even if nightly exists
#   FUZZ_SANITIZER   force a sanitizer (address, none, ...); default: address, falling back to none
#   FUZZ_CORPUS_OUT  directory for new corpus entries (one subdirectory per target)
#   FUZZ_TARGET_DIR  cargo target directory (default: fuzz/target)
#   CARGO_BUILD_JOBS build parallelism (default 2)
set -euo pipefail

usage() { echo "usage: $0 SECONDS [TARGET...]" >&2; exit 2; }
[ $# -ge 1 ] || usage
secs=$1; shift
[[ "$secs" =~ ^[0-9]+$ ]] && [ "$secs" -gt 0 ] || usage

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$here"
# fuzz_progress: the line before each target (i/N, elapsed, fuzzing time left).
. "$here/../../../vm/progress.sh"

# Every target in fuzz_targets/ (each also needs a [[bin]] in Cargo.toml).
mapfile -t default_targets < <(cd "$here/fuzz_targets" && ls *.rs | sed 's/\.rs$//')
explicit=1
if [ $# -eq 0 ]; then
    set -- "${default_targets[@]}"
    explicit=0
fi

export CARGO_BUILD_JOBS=${CARGO_BUILD_JOBS:-2}

if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "== installing cargo-fuzz"
    cargo install --locked cargo-fuzz
fi

toolchain=()
if [ "${FUZZ_NIGHTLY:-1}" != 0 ] && command -v rustup >/dev/null 2>&1 &&
    rustup run nightly rustc --version >/dev/null 2>&1; then
    toolchain=(+nightly)
    echo "== toolchain: $(rustup run nightly rustc --version)"
else
    export RUSTC_BOOTSTRAP=1
    echo "== toolchain: $(rustc --version) with RUSTC_BOOTSTRAP=1"
fi

target_dir_opt=()
if [ -n "${FUZZ_TARGET_DIR:-}" ]; then
    target_dir_opt=(--target-dir "$FUZZ_TARGET_DIR")
fi

out_root=${FUZZ_CORPUS_OUT:-$(mktemp -d -t crem-fuzz-corpus.XXXXXX)}
logdir=$(mktemp -d -t crem-fuzz-logs.XXXXXX)

failed=()
summary=()
i=0 t0=$SECONDS
for t in "$@"; do
    i=$((i + 1))
    fuzz_progress "$t" "$i" $# "$secs" $((SECONDS - t0))
    if [ ! -f "fuzz_targets/$t.rs" ]; then
        if [ "$explicit" = 1 ]; then
            echo "== $t: no fuzz_targets/$t.rs" >&2
            failed+=("$t(missing)")
        else
            echo "== $t: SKIP (fuzz_targets/$t.rs does not exist yet)"
            summary+=("$t: skipped (no source)")
        fi
        continue
    fi

    sanitizers=()
    if [ -n "${FUZZ_SANITIZER:-}" ]; then
        sanitizers=("$FUZZ_SANITIZER")
    else
        sanitizers=(address none)
    fi
    san=""
    for s in "${sanitizers[@]}"; do
        echo "== $t: building (sanitizer $s)"
        if cargo "${toolchain[@]}" fuzz build "${target_dir_opt[@]}" --debug-assertions -s "$s" "$t"; then
            san=$s
            break
        fi
        echo "== $t: build with sanitizer $s failed" >&2
    done
    if [ -z "$san" ]; then
        failed+=("$t(build)")
        continue
    fi

    seeds="corpus/$t"
    mkdir -p "$out_root/$t"
    corpora=("$out_root/$t")
    [ -d "$seeds" ] && corpora+=("$seeds")
    log="$logdir/$t.log"
    echo "== $t: fuzzing for ${secs}s (sanitizer $san), log $log"
    set +e
    cargo "${toolchain[@]}" fuzz run "${target_dir_opt[@]}" --debug-assertions -s "$san" "$t" "${corpora[@]}" -- \
        -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 >"$log" 2>&1
    rc=$?
    set -e
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1 || true)
    done_line=$(grep -E '^Done [0-9]+ runs in' "$log" | tail -1 || true)
    if [ $rc -ne 0 ]; then
        tail -n 40 "$log" >&2
        failed+=("$t(rc=$rc)")
        summary+=("$t: FAILED rc=$rc execs=${execs:-?} sanitizer=$san")
    else
        summary+=("$t: ok execs=${execs:-?} sanitizer=$san ${done_line}")
    fi
done

echo "== summary (${secs}s per target; new corpus entries in $out_root)"
for s in "${summary[@]}"; do echo "   $s"; done
if [ ${#failed[@]} -ne 0 ]; then
    echo "== FAILED: ${failed[*]}" >&2
    exit 1
fi
echo "== all fuzz targets ok"
