#!/usr/bin/env bash
# gpu_sanitize: NVIDIA's compute-sanitizer over every kernel variant the GPU
# tests build: memcheck (out-of-bounds and misaligned accesses, leaks),
# racecheck (shared-memory hazards), initcheck (reads of uninitialised
# device memory) and synccheck (barrier misuse), each over the GPU unit
# tests (build/tests/test_gpu: the tiled, split, ipt, ranges and Newton
# variants, float and double, the render and blocks kernels) and the Lua
# GPU tests (test_gpu, test_hermite: block steps in float, double and mixed,
# test_blowup).  A tool that reports an error fails the run.  Failing API
# calls are not reported (--report-api-errors no): orrery checks every
# return code itself, and test_gpu asks for more memory than the GPU has
# on purpose.  racecheck and synccheck, whose cost grows with every
# shared-memory access, run test_gpu's cases at about 2100 bodies
# (ORRERY_TEST_SMALL=1) and leave out test_hermite's long runs (its
# force + jerk, predictor and corrector kernels run in test_blowup).
# Measured on the H100: memcheck and initcheck about 20-90 s per command.
#   bash tests/gpu_sanitize.sh [BUILD] [TOOLS]     (make gpu-sanitize)
# SANITIZE_ONLY="test_gpu lua:test_hermite" runs those commands only;
# SANITIZE_TIMEOUT=S limits each command to S seconds (a timeout fails).
# compute-sanitizer is taken from PATH, $CUDA_PATH/bin or /usr/local/cuda/bin,
# else from .sanitizer/ (NVIDIA's wheel nvidia-cuda-sanitizer-api, unpacked:
# tools/deps.sh sanitizer).  Without a GPU it says so and exits 0.
set -u
build=${1:-build}
tools=${2:-memcheck racecheck initcheck synccheck}
here=$(cd "$(dirname "$0")/.." && pwd)
san=$(command -v compute-sanitizer 2>/dev/null)
for c in "${CUDA_PATH:-/usr/local/cuda}/bin/compute-sanitizer" \
         "$here/.sanitizer/compute-sanitizer/compute-sanitizer"; do
  [ -z "$san" ] && [ -x "$c" ] && san=$c
done
if [ -z "$san" ] && [ -f "$here/.sanitizer/san.tar.xz" ]; then
  tar xJf "$here/.sanitizer/san.tar.xz" -C "$here/.sanitizer" && san="$here/.sanitizer/compute-sanitizer/compute-sanitizer"
fi
if ! "$build/orrery" info 2>/dev/null | grep -qE '^  [0-9]+: .*compute capability'; then
  echo "gpu-sanitize: no usable GPU: skipped"
  exit 0
fi
if [ -z "$san" ]; then
  echo "gpu-sanitize: compute-sanitizer not found (PATH, CUDA_PATH/bin, .sanitizer/): run tools/deps.sh sanitizer" >&2
  exit 1
fi
echo "gpu-sanitize: $("$san" --version | tail -1)"
logdir=${SANITIZE_LOGS:-$(mktemp -d)}
mkdir -p "$logdir"
fail=0
cmds=("$build/tests/test_gpu"
      "$build/orrery run $here/tests/lua/test_gpu.lua"
      "$build/orrery run $here/tests/lua/test_hermite.lua"
      "$build/orrery run $here/tests/lua/test_blowup.lua")
for tool in $tools; do
  for c in "${cmds[@]}"; do
    name=$(basename "${c##* }" | sed 's/^\(.*\)\.lua$/lua:\1/')
    case " ${SANITIZE_ONLY:-$name} " in *" $name "*) ;; *) continue;; esac
    log="$logdir/$tool-${name/:/-}.log"
    start=$(date +%s)
    # shellcheck disable=SC2086
    small=0   # racecheck and synccheck: small cases, and no long Hermite runs
    case "$tool" in racecheck|synccheck) small=1
      [ "$name" = lua:test_hermite ] && { echo "[  SKIPPED ] $tool $name (its kernels: in test_blowup)"; continue; };;
    esac
    ORRERY_CACHE_DIR=${ORRERY_CACHE_DIR:-$logdir/cache} TEST_TMP=$logdir ORRERY_TEST_SMALL=$small \
      timeout "${SANITIZE_TIMEOUT:-0}" "$san" --tool "$tool" --error-exitcode 99 --print-limit 20 --target-processes all --report-api-errors no \
      $c >"$log" 2>&1
    rc=$?
    summary=$(grep -E '^========= ERROR SUMMARY' "$log" | tail -1)
    if [ "$rc" -eq 0 ]; then
      echo "[       OK ] $tool $name ($(( $(date +%s) - start )) s): ${summary:-no summary}"
    else
      fail=$((fail + 1))
      echo "[  FAILED  ] $tool $name: exit $rc: ${summary:-no summary} (log: $log)"
      grep -E '^=========' "$log" | head -30 | sed 's/^/    /'
    fi
  done
done
[ "$fail" -eq 0 ] && echo "gpu-sanitize: clean" || echo "gpu-sanitize: $fail failed"
[ "$fail" -eq 0 ]
