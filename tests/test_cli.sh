#!/usr/bin/env bash
# test_cli: the command line as a user meets it: help and version, usage
# errors (exit 2, one line naming the problem), compile without a GPU, the
# CPU bench with its CSV header and accuracy column, cache list/clear, and a
# broken kernel source reported with file and line.  Prints cmocka-style
# summary lines so tests/run.sh can count it.
set -u
build=${1:-build}
orr="$build/orrery"
pass=0 fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export ORRERY_CACHE_DIR="$tmp/cache"

# check NAME EXPECTED_EXIT PATTERN -- CMD...  (PATTERN matched against stdout+stderr)
check() {
  local name=$1 want=$2 pat=$3; shift 4
  "$@" >"$tmp/out" 2>&1; local rc=$?
  if [ "$rc" -eq "$want" ] && grep -qE -- "$pat" "$tmp/out"; then
    echo "[       OK ] $name"; pass=$((pass + 1))
  else
    echo "[  FAILED  ] $name: exit $rc (want $want), output:"; sed 's/^/    /' "$tmp/out" | head -20
    fail=$((fail + 1))
  fi
}

check help 0 'usage: orrery COMMAND' -- "$orr" --help
check version 0 '^orrery [0-9]+\.[0-9]+\.[0-9]+' -- "$orr" --version
check no-command 2 "missing command \(see 'orrery --help'\)" -- "$orr"
check unknown-command 2 "unknown command 'frobnicate'" -- "$orr" frobnicate
check bad-block 2 'invalid block size 100: must be a multiple of 32' -- "$orr" compile --block 100
check bad-split 2 'invalid split 3' -- "$orr" compile --split 3
check bad-precision 2 "invalid precision 'half'" -- "$orr" bench --precision half
check bad-n 2 "bench: --n expects an integer from 1 to 1073741824, got 'lots'" -- "$orr" bench --n lots
check missing-value 2 'option --steps needs a value' -- "$orr" bench --steps
check bad-backend 2 "invalid backend 'tpu'" -- "$orr" bench --backend tpu
check source-has-constants 0 '#define ORR_UNROLL 8' -- "$orr" compile --unroll 8 --block 128 --softening 0.01
check source-hexfloat 0 '#define ORR_SOFTENING 0x1\.47ae147ae147bp-7' -- "$orr" compile --softening 0.01
check ptx-sm90 0 'compiled ptx for sm_90' -- "$orr" compile --emit ptx --arch sm_90 -o "$tmp/k.ptx"
check ptx-written 0 '\.target sm_90' -- cat "$tmp/k.ptx"
check ptx-double 0 'orr_accel<double>|_Z9orr_accelIdE' -- "$orr" compile --emit ptx --precision double -o "$tmp/d.ptx"
check cubin 0 'compiled cubin' -- "$orr" compile --emit cubin --arch sm_90 -o "$tmp/k.cubin"
check cubin-elf 0 'ELF' -- head -c 4 "$tmp/k.cubin"
check bench-cpu 0 'max rel err' -- "$orr" bench --backend cpu --n 1000,1500 --steps 2
check bench-csv 0 '^n,backend,precision,variant,block,unroll,split,ms_per_step,interactions_per_s,gflops,max_rel_err$' -- "$orr" bench --backend cpu --n 600 --steps 2 --csv
# accuracy column: float against the double reference stays under 1e-5
"$orr" bench --backend cpu --n 2000 --steps 1 --csv >"$tmp/csv" 2>/dev/null
check bench-accuracy 0 'ok' -- awk -F, 'NR==2 { if ($11 + 0 <= 1e-5 && $11 + 0 >= 0 && $2 == "cpu") print "ok"; else print "bad " $11 }' "$tmp/csv"
check bench-cached 0 'from cache' -- "$orr" bench --backend cpu --n 600 --steps 2
check tune-cpu 0 'winner \(tuned\) for N<=1024' -- "$orr" tune --backend cpu --n 1000 --budget 0.5
check tune-stored 0 'winner \(store\) for N<=1024: .* 0 tried' -- "$orr" tune --backend cpu --n 1000
check tune-info 0 'cpu gravity float N<=1024: block' -- "$orr" info
check tune-bad-budget 2 "tune: --budget must be positive, got '-1'" -- "$orr" tune --budget -1
check bench-tuned 0 'N=1000: store configuration' -- "$orr" bench --backend cpu --n 1000 --steps 1 --tune
check cache-list 0 '[0-9]+ entr(y|ies) in ' -- "$orr" cache list
check cache-clear 0 'removed [1-9][0-9]* entr.* and 1 stored tuning' -- "$orr" cache clear
check info 0 'kernel cache: ' -- "$orr" info
# a broken kernel source: file and line named, exit 1, nothing cached
mkdir -p "$tmp/ksrc" && cp -r kernels_src/. "$tmp/ksrc/"
sed -i '14s/.*/f = mj * orr_rsqrt3_nz(r2) +;/' "$tmp/ksrc/forces/gravity.h"
check nvrtc-error-line 1 'forces/gravity\.h\(14\): error' -- env ORRERY_KERNELS_DIR="$tmp/ksrc" "$orr" compile --emit ptx -o "$tmp/bad.ptx"
check nvrtc-no-output 0 'absent' -- sh -c "test -e '$tmp/bad.ptx' && echo present || echo absent"
check cc-error-line 1 'forces/gravity\.h:14:[0-9]+: error' -- env ORRERY_KERNELS_DIR="$tmp/ksrc" "$orr" bench --backend cpu --n 100 --steps 1
check cache-empty-after-error 0 '^0 entries' -- "$orr" cache list

echo "[==========] $((pass + fail)) test(s) run."
echo "[  PASSED  ] $pass test(s)."
[ "$fail" -eq 0 ] || echo "[  FAILED  ] $fail test(s), listed above."
[ "$fail" -eq 0 ]
