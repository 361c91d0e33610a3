#!/usr/bin/env bash
# gpu-check: everything to run on the GPU machine in one call (see
# ../shared/device/README.md).  PART=tests: the GPU tests (make gpu-test),
# the whole suite, and example scenarios on the GPU.  PART=bench: tuning per
# N and the benchmark tables (tuned and naive, float and double).  PART=laws:
# the GPU tests, every built-in law benchmarked (tuned) in float and double,
# gravity's tuned rows (no regression), and the force-law scripts under
# --verify.  Logs and
# CSV go to $OUT (or ./gpu-out); a short summary is printed.
#   . .device/env.sh && PART=tests bash tools/gpu-check.sh
set -u
out=${OUT:-gpu-out}; mkdir -p "$out"
orr=build/orrery
export ORRERY_CACHE_DIR=${ORRERY_CACHE_DIR:-$(mktemp -d)}
ns=${BENCH_N:-1024,4096,16384,65536,262144,1048576}
case "${PART:-tests}" in
tests)
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
  if command -v make >/dev/null; then make gpu-test; else ORRERY_REQUIRE_GPU=1 bash tests/run.sh build test_gpu lua:test_gpu; fi \
    > "$out/gpu-test.txt" 2>&1; grep -E '^(tests:|\[  FAILED)|sim |first start' "$out/gpu-test.txt"
  bash tests/run.sh build > "$out/all-tests.txt" 2>&1; grep -E '^tests:|FAILED|SKIPPED \]' "$out/all-tests.txt" | sort | uniq -c
  { for s in "plummer.lua 65536 200" "galaxy_collision.lua 32768 200" "cold_collapse.lua 16384 200" \
             "box2d_periodic.lua 4096 1000 500" "cube_damped.lua 8192 100"; do
      echo "== orrery run scripts/$s"; /usr/bin/time -f "wall %e s" $orr run scripts/$s 2>&1 | tail -3
    done; } > "$out/scripts.txt" 2>&1; cat "$out/scripts.txt"
  ;;
bench)
  for p in float double; do
    $orr tune --precision $p --n $ns --budget ${BUDGET:-3} > "$out/tune-$p.txt" 2>&1
    grep -E 'winner' "$out/tune-$p.txt"
    $orr bench --precision $p --n $ns --variant both --tune --csv > "$out/bench-$p.csv" 2> "$out/bench-$p.err"
  done
  $orr bench --precision double --newton 1 --n 65536,262144,1048576 --csv > "$out/bench-double-newton1.csv" 2>&1
  for f in "$out"/bench-*.csv; do echo "== $f"; cut -d, -f1,4-9,11-14 "$f"; done
  ;;
laws)
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
  ORRERY_REQUIRE_GPU=1 build/tests/test_gpu > "$out/gpu-test.txt" 2>&1
  grep -E 'max rel err|PASSED|FAILED|SKIPPED' "$out/gpu-test.txt"
  for law in gravity gravity_spline coulomb lennard_jones yukawa; do
    for p in float double; do
      $orr bench --force $law --precision $p --n ${LAW_N:-65536} --tune --csv 2>>"$out/laws.err" | tail -1
    done
  done | tee "$out/laws.csv"
  $orr bench --n 65536,262144 --tune --csv 2>>"$out/laws.err" | tail -2
  for s in "yukawa.lua 16384 200" "plasma_coulomb.lua 16384 200" "lj_gas.lua 16 300"; do
    echo "== orrery run --verify scripts/$s"
    /usr/bin/time -f "wall %e s" $orr run --verify scripts/$s > "$out/run.txt" 2>&1; echo "exit $?"
    grep -E 'verify|wall|Error|error' "$out/run.txt"; tail -2 "$out/run.txt"
  done
  ;;
esac
