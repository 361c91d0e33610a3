#!/usr/bin/env bash
# gpu-check: everything to run on the GPU machine in one call (see
# ../shared/device/README.md): GPU tests, info, the float and double benchmark
# tables with the naive baseline, a second start from the cache, and the SASS
# instruction mix of the tiled kernel.  Logs go to $OUT (or ./gpu-out).
#   . .device/env.sh && bash tools/gpu-check.sh
set -u
out=${OUT:-gpu-out}; mkdir -p "$out"
orr=build/orrery
export ORRERY_CACHE_DIR=$(mktemp -d)
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv; which cc gcc; } 2>&1 | tee "$out/env.txt"
if command -v make >/dev/null; then make gpu-test; else ORRERY_REQUIRE_GPU=1 bash tests/run.sh build test_gpu; fi \
  > "$out/gpu-test.txt" 2>&1; grep -E '^(\[  (PASSED|FAILED|SKIPPED)|tests:|gpu |first start|device out)' "$out/gpu-test.txt"
bash tests/run.sh build > "$out/all-tests.txt" 2>&1; grep -E '^tests:|FAILED' "$out/all-tests.txt"
$orr info | tee "$out/info.txt"
for p in float double; do
  $orr bench --precision $p --n ${BENCH_N:-1024,4096,16384,65536,262144,1048576} --variant both --csv \
    > "$out/bench-$p.csv" 2> "$out/bench-$p.err"; cat "$out/bench-$p.err" | head -5; column -s, -t < "$out/bench-$p.csv"
done
$orr bench --n 65536 2>&1 | grep -E 'kernels|note'
$orr compile --emit cubin -o "$out/k.cubin" 2>/dev/null && cuobjdump -sass "$out/k.cubin" > "$out/k.sass" 2>&1
echo "sass lines: $(wc -l < "$out/k.sass" 2>/dev/null)"
