#!/usr/bin/env bash
# run: runs the libFuzzer targets that `make fuzz` built, each for SECONDS
# from its seed corpus tests/fuzz/corpus/NAME/ (read only: new inputs go to
# BUILD/fuzz/corpus-NAME/, kept between local runs).  A crash, leak, timeout
# or undefined behaviour fails it: the log's tail is shown and the input is
# left as BUILD/fuzz/NAME-crash-... (make it a regression test, then fix).
# Prints one line per target and exits non-zero when any failed.
#   bash tests/fuzz/run.sh BUILD SECONDS NAME...
set -u
build=$1 secs=$2; shift 2
here=$(cd "$(dirname "$0")" && pwd)
failed=0
export UBSAN_OPTIONS="print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
for name in "$@"; do
  bin="$build/fuzz/fuzz_$name" work="$build/fuzz/corpus-$name" log="$build/fuzz/$name.log"
  # the target's files go to a TMPDIR of its own (libFuzzer ends the process
  # without running its atexit handlers), removed afterwards
  tmp=$(mktemp -d "$build/fuzz/tmp-XXXXXX")
  mkdir -p "$work"
  # -timeout: one input taking 10 s is a hang; -rss_limit_mb: 2 GiB is a leak
  TMPDIR="$tmp" "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$build/fuzz/$name-" "$work" "$here/corpus/$name" \
    >"$log" 2>&1
  rc=$?
  rm -rf "$tmp"
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1)
  if [ "$rc" -eq 0 ]; then
    echo "fuzz: $name: ${runs:-?} inputs in $secs s, ${cov:-cov: ?}, no failure"
  else
    echo "fuzz: $name: FAILED (exit $rc); the end of $log:"
    tail -40 "$log" | sed 's/^/    /'
    failed=$((failed + 1))
  fi
done
[ "$failed" -eq 0 ]
