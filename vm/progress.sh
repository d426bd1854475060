# Progress lines for long runs (sourced, not run): vm/check.sh's after each
# step, the fuzzers' per target (rust/core/fuzz/run.sh, vm/fuzz-kernel.sh).
# Plain functions of their arguments (and of a times file), so that
# vm/tests/test_progress.py can check their lines without running anything.

# duration SECONDS: as vm/demo.py's progress line shows times: 42s, 5m07s, 1h02m.
duration() {
  local s=$1
  if [ "$s" -ge 3600 ]; then printf '%dh%02dm' $((s / 3600)) $((s / 60 % 60))
  elif [ "$s" -ge 60 ]; then printf '%dm%02ds' $((s / 60)) $((s % 60))
  else printf '%ds' "$s"; fi
}

# left_text SECONDS|"": "about 5m07s left", or "time left ?" without an estimate.
left_text() {
  if [ -n "$1" ]; then echo "about $(duration "$1") left"; else echo "time left ?"; fi
}

# --- vm/check.sh: the estimate from the previous run's times ----------------
# A times file has a line per finished step, "NAME SECONDS END", END the
# seconds from the run's start to the step's end. vm/check.sh appends to the
# running one after each step and keeps it, once the run ends, as the next
# run's reference (per variant: their step lists differ).

# times_record FILE NAME SECONDS END: one line, appended (O_APPEND: the two
# lanes' steps may end at the same moment). Never fails the run.
times_record() { printf '%s %d %d\n' "$2" "$3" "$4" >>"$1" 2>/dev/null || true; }

# times_left PREV NAME: the previous run's time from the end of step NAME to
# its last step's end (the lanes overlap, so end times, not sums of
# durations); nothing when PREV is missing or has no NAME.
times_left() {
  [ -r "$1" ] || return 0
  awk -v n="$2" '{ if ($3 > last) last = $3 } $1 == n { end = $3; seen = 1 }
    END { if (seen) print (last > end ? last - end : 0) }' "$1"
}

# check_progress DONE TOTAL ELAPSED LEFT|"": vm/check.sh's line after a step:
# "[check] 5/12 done, 13m20s elapsed, about 8m05s left".
check_progress() {
  echo "[check] $1/$2 done, $(duration "$3") elapsed, $(left_text "$4")"
}

# --- fuzzing: every target runs a known time --------------------------------

# fuzz_progress WHO I N SECONDS ELAPSED: the line before target I of N, each
# fuzzed SECONDS: "[fuzz] target 2/9 (wire_decode), 1m05s elapsed, about
# 8m00s left", the time left being the fuzzing time of this target and the
# later ones (builds and start-up come on top).
fuzz_progress() {
  echo "[fuzz] target $2/$3 ($1), $(duration "$5") elapsed, $(left_text $(($4 * ($3 - $2 + 1))))"
}

# fuzz_kernel_progress PARTS SECONDS ELAPSED FUZZED|"": vm/fuzz-kernel.sh's
# line while its VM runs: the parts (wire, netlink) fuzz at once for
# SECONDS, FUZZED seconds so far ("" before they start: the boot and set-up;
# SECONDS or more: the checks after).
fuzz_kernel_progress() {
  local head="[fuzz] fuzz-kernel ($1)" el; el=$(duration "$3")
  if [ -z "$4" ]; then
    echo "$head: booting and setting up, $el elapsed, then $(duration "$2") of fuzzing"
  elif [ "$4" -lt "$2" ]; then
    echo "$head: fuzzing $4/$2 s, $el elapsed, about $(duration $(($2 - $4))) of fuzzing left"
  else
    echo "$head: fuzzing done, checking the module, $el elapsed"
  fi
}
