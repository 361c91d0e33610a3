#!/usr/bin/env bash
# gpu_sanitize: NVIDIA's compute-sanitizer over every kernel variant the GPU
# tests build: memcheck (out-of-bounds and misaligned accesses, leaks),
# racecheck (shared-memory hazards), initcheck (reads of uninitialised
# device memory) and synccheck (barrier misuse), each over the GPU unit
# tests (build/tests/test_gpu: the tiled, split, ipt, ranges and Newton
# variants, float and double, the render and blocks kernels), one short run
# of every kernel variant (tests/sanitize/variants.lua), the block steps
# split as between GPUs (hsplit.lua) and watched by the host for regularised
# groups (watched.lua), and the Lua GPU
# tests (test_gpu, test_hermite: block steps in float, double and mixed,
# test_blowup).  A tool that reports an error fails the run.  Failing API
# calls are not reported (--report-api-errors no): orrery checks every
# return code itself, and test_gpu asks for more memory than the GPU has
# on purpose.  racecheck, whose cost grows with every shared-memory access
# (test_gpu alone runs past 10 minutes), runs tests/sanitize/variants.lua
# only: one short run of each kernel variant.  Measured on the H100:
# memcheck, initcheck and synccheck take about 5-90 s per command.
#   bash tests/gpu_sanitize.sh [BUILD] [TOOLS]     (make gpu-sanitize)
# SANITIZE_ONLY="test_gpu lua:test_hermite" runs those commands only;
# SANITIZE_TIMEOUT=S limits each command to S seconds (a timeout fails).
# compute-sanitizer is taken from PATH, else $CUDA_PATH/bin (the CUDA
# toolkit's; the GPU machine has it in /usr/local/cuda/bin).  Without a GPU
# it says so and exits 0.
set -u
build=${1:-build}
tools=${2:-memcheck racecheck initcheck synccheck}
here=$(cd "$(dirname "$0")/.." && pwd)
san=$(command -v compute-sanitizer 2>/dev/null)
c="${CUDA_PATH:-/usr/local/cuda}/bin/compute-sanitizer"
[ -z "$san" ] && [ -x "$c" ] && san=$c
if ! "$build/orrery" info 2>/dev/null | grep -qE '^  [0-9]+: .*compute capability'; then
  echo "gpu-sanitize: no usable GPU: skipped"
  exit 0
fi
if [ -z "$san" ]; then
  echo "gpu-sanitize: compute-sanitizer not found on PATH or in ${CUDA_PATH:-/usr/local/cuda}/bin (it comes with the CUDA toolkit)" >&2
  exit 1
fi
echo "gpu-sanitize: $("$san" --version | tail -1)"
logdir=${SANITIZE_LOGS:-$(mktemp -d)}
mkdir -p "$logdir"
fail=0
cmds=("$build/orrery run $here/tests/sanitize/variants.lua"
      "$build/tests/test_gpu"
      "$build/orrery run $here/tests/lua/test_gpu.lua"
      "$build/orrery run $here/tests/lua/test_hermite.lua"
      "$build/orrery run $here/tests/lua/test_blowup.lua"
      "env ORRERY_EXCHANGE=nccl ORRERY_HSPLIT=8 $build/orrery run $here/tests/sanitize/hsplit.lua"
      "$build/orrery run $here/tests/sanitize/watched.lua")
# the split block steps need NCCL (one rank through it): skipped without
split_ok=1
ORRERY_EXCHANGE=nccl ORRERY_HSPLIT=8 "$build/orrery" run "$here/tests/sanitize/hsplit.lua" >/dev/null 2>&1 ||
  { split_ok=0; echo "[  SKIPPED ] lua:hsplit (one rank through NCCL does not run here: no NCCL?)"; }
for tool in $tools; do
  for c in "${cmds[@]}"; do
    name=$(basename "${c##* }" | sed 's/^\(.*\)\.lua$/lua:\1/')
    case " ${SANITIZE_ONLY:-$name} " in *" $name "*) ;; *) continue;; esac
    log="$logdir/$tool-${name/:/-}.log"
    start=$(date +%s)
    # racecheck: the variants script alone (see above)
    case "$tool" in racecheck)
      case "$name" in lua:variants|lua:hsplit|lua:watched) ;;
        *) echo "[  SKIPPED ] $tool $name (its kernels: in variants)"; continue;; esac;;
    esac
    [ "$name" = lua:hsplit ] && [ "$split_ok" = 0 ] && continue
    # shellcheck disable=SC2086
    ORRERY_CACHE_DIR=${ORRERY_CACHE_DIR:-$logdir/cache} TEST_TMP=$logdir \
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
