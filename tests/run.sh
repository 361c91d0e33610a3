#!/usr/bin/env bash
# run: runs the cmocka test binaries (all of build/tests, or the names given)
# and the shell-driven tests (cli: test_cli.sh; lua: test_lua.sh, which runs
# tests/lua/*.lua too; mpi: test_mpi.sh, test_comm under mpirun; view:
# test_view.sh, the live view in a browser), then prints
# one closing line "N passed, N failed, N skipped".  Exits non-zero when anything failed or a binary crashed.
#   bash tests/run.sh BUILD_DIR [test_name ...]
# A name lua:NAME runs only tests/lua/NAME.lua (through test_lua.sh).
set -u
build=${1:-build}; shift || true
names=("$@")
if [ ${#names[@]} -eq 0 ]; then
  for t in "$build"/tests/test_*; do [ -x "$t" ] && names+=("$(basename "$t")"); done
  names+=(cli lua mpi view)
fi
passed=0 failed=0 skipped=0 crashed=()
export ORRERY_CACHE_DIR=${ORRERY_TEST_CACHE:-$(mktemp -d /tmp/orrery-tests-XXXXXX)}
# regularised runs on a GPU check that every body the host changes reaches
# the GPU (hermite.c's touched bodies against the whole state, each block)
export ORRERY_CHECK_SYNC=${ORRERY_CHECK_SYNC:-1}
for name in "${names[@]}"; do
  log=$(mktemp)
  if [ "$name" = cli ] || [ "$name" = lua ] || [ "$name" = mpi ] || [ "$name" = view ]; then
    bash "$(dirname "$0")/test_$name.sh" "$build" 2>&1 | tee "$log"
    rc=${PIPESTATUS[0]}
  elif [ "${name#lua:}" != "$name" ]; then
    bash "$(dirname "$0")/test_lua.sh" "$build" "${name#lua:}" 2>&1 | tee "$log"
    rc=${PIPESTATUS[0]}
  else
    "$build/tests/$name" 2>&1 | tee "$log"
    rc=${PIPESTATUS[0]}
  fi
  p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -1)
  f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -1)
  s=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) test.*/\1/p' "$log" | tail -1)
  if [ -z "$p" ] && [ -z "$f" ]; then
    crashed+=("$name (exit $rc, no summary)")
    failed=$((failed + 1))
  else
    passed=$((passed + ${p:-0})); failed=$((failed + ${f:-0})); skipped=$((skipped + ${s:-0}))
    if [ "$rc" -ne 0 ] && [ "${f:-0}" -eq 0 ]; then crashed+=("$name (exit $rc)"); failed=$((failed + 1)); fi
  fi
  rm -f "$log"
done
[ -z "${ORRERY_TEST_CACHE:-}" ] && rm -rf "$ORRERY_CACHE_DIR"
for c in "${crashed[@]}"; do echo "crashed: $c"; done
echo "tests: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
