#!/usr/bin/env bash
# test_cli: the command line as a user meets it: help and version, usage
# errors (exit 2, one line naming the problem), compile without a GPU, the
# CPU bench with its CSV header and accuracy column, cache list/clear, and a
# broken kernel source reported with file and line; --help per command and
# its agreement with README, GPU-only options and variants refused on the
# CPU, softening/G ranges, -o checked before compiling, a refused cache
# entry, the compiler command in the CPU cache key, a TMPDIR with blanks, a
# law script under a directory named odd*, two processes compiling one
# kernel at once, tunings saved at once, FIFOs in the cache directory, a
# cache directory that cannot be made; issue 25's follow-up: bad entries
# (FIFO, socket, directory, link, group-writable, another user's, mode
# 000) never ending a run and left by cache clear, a read-only cache
# directory said once, tuning notes (an unreadable store, a held lock)
# printed by orrery run once; the vectorised CPU all-pairs loop; orrery
# movie from a PNG series (read back with ffprobe) and its errors; and test
# binaries that leave nothing in TMPDIR.  Prints cmocka-style
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

# check_not NAME EXPECTED_EXIT PATTERN -- CMD...  (PATTERN must not match)
check_not() {
  local name=$1 want=$2 pat=$3; shift 4
  "$@" >"$tmp/out" 2>&1; local rc=$?
  if [ "$rc" -eq "$want" ] && ! grep -qE -- "$pat" "$tmp/out"; then
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
check bench-csv 0 '^n,backend,precision,variant,block,unroll,split,ms_per_step,interactions_per_s,gflops,max_rel_err,ipt,prefetch,ranges$' -- "$orr" bench --backend cpu --n 600 --steps 2 --csv
# accuracy column: float against the double reference stays under 1e-5
"$orr" bench --backend cpu --n 2000 --steps 1 --csv >"$tmp/csv" 2>/dev/null
check bench-accuracy 0 'ok' -- awk -F, 'NR==2 { if ($11 + 0 <= 1e-5 && $11 + 0 >= 0 && $2 == "cpu") print "ok"; else print "bad " $11 }' "$tmp/csv"
check bench-cached 0 'from cache' -- "$orr" bench --backend cpu --n 600 --steps 2
check bench-hermite 0 '^600,cpu,double,(64|600),[0-9.e+-]+,[0-9.e+-]+,[0-9.e+-]+$' -- "$orr" bench --backend cpu --precision double --n 600 --integrator hermite --active 64,600 --steps 1 --csv
check bench-hermite-bad 2 'bench: --integrator takes hermite' -- "$orr" bench --integrator leapfrog
# --active names itself in its errors, and takes `all` (N) as the help says
check bench-active-bad 2 "bench: --active expects an integer from 1 to 1073741824, got 'x'" -- "$orr" bench --backend cpu --integrator hermite --n 600 --active 64,x
check bench-active-empty 2 "bench: --active has an empty item in ','" -- "$orr" bench --backend cpu --integrator hermite --active ,
check bench-active-all 0 '^600,cpu,double,600,[0-9.e+-]+,[0-9.e+-]+,[0-9.e+-]+$' -- "$orr" bench --backend cpu --precision double --n 600 --integrator hermite --active all --steps 1 --csv
check bench-active-over-n 1 "bench: --active 5000 is more than N = 1024: no row" -- "$orr" bench --backend cpu --integrator hermite --n 1024 --active 5000
check bench-active-alone 2 "bench: --active is for --integrator hermite" -- "$orr" bench --backend cpu --active 64
check bench-n-empty-item 2 "bench: --n has an empty item in '64,,'" -- "$orr" bench --backend cpu --n 64,,
check bench-hermite-nojerk-once 0 "^1$" -- sh -c "'$orr' bench --backend cpu --integrator hermite --force lennard_jones --n 256,512 --active 64,128 2>&1 | grep -c 'has no jerk'"
# bench --integrator hermite --run T: a real run of block steps (CPU, 256
# bodies, 4 intervals of 1/16 timed): the CSV's header and a row with blocks,
# active bodies per block within 1..N, a fraction of the all-active rate,
# the energy error and a wall time; the plain table; the usage errors
hrun_head='^n,ranks,backend,precision,eta,softening,dt_max,T,wall_s,s_per_time_unit,blocks,mean_active,interactions_per_s,gflops,all_active_interactions_per_s,fraction,dE_over_E,launches$'
"$orr" bench --backend cpu --integrator hermite --run 0.25 --n 256 --csv >"$tmp/hrun.csv" 2>"$tmp/hrun.err"
check bench-hrun-header 0 "$hrun_head" -- head -1 "$tmp/hrun.csv"
check bench-hrun-row 0 '^ok 1$' -- awk -F, 'NR == 2 { ok = $1 == 256 && $2 == 1 && $3 == "cpu" && $4 == "double" && $5 == 0.02 && $6 == 0.015625 && $7 == 0.0625 && $8 == 0.25 && $9 > 0 && $10 > 0 && $11 > 0 && $12 >= 1 && $12 <= 256 && $13 > 0 && $15 > 0 && $16 > 0 && $17 < 1e-4 && $18 == "-"; row = $0 } END { print (ok && NR == 2 ? "ok 1" : "bad (" NR - 1 " rows): " row) }' "$tmp/hrun.csv"
check bench-hrun-say 0 'softening 4/N, G 1; Plummer sphere \(seed 7\); Hermite block steps, eta 0.02, dt_max 0.0625: one interval untimed, then T = 0.25 timed \(4 intervals\)' -- cat "$tmp/hrun.err"
check bench-hrun-table 0 '^ +256 +1 +double +0.125 .*%' -- "$orr" bench --backend cpu --integrator hermite --run 0.125 --n 256
# the blocks and active bodies of the timed part are those sim.blocks gives
# in `orrery run` of the same model (one interval, then four)
cat >"$tmp/hrun.lua" <<'LUA'
local orrery = require "orrery"
local n = 256
local sim <close> = orrery.simulation{
  bodies = orrery.ic.plummer{ n = n, seed = 7 }, precision = "double", backend = "cpu",
  softening = 4 / n, integrator = "hermite", dt_max = 1 / 16, eta = 0.02 }
sim:run{ steps = 1 }
local b0 = sim.blocks
sim:run{ steps = 4 }
local b1 = sim.blocks
print(("%d,%.6g"):format(b1.blocks - b0.blocks, (b1.active - b0.active) / (b1.blocks - b0.blocks)))
LUA
"$orr" run "$tmp/hrun.lua" >"$tmp/hrun.lua.out" 2>&1
check bench-hrun-as-run 0 '^same$' -- sh -c "[ \"\$(awk -F, 'NR == 2 { print \$11 \",\" \$12 }' '$tmp/hrun.csv')\" = \"\$(cat '$tmp/hrun.lua.out')\" ] && echo same || { echo differ; cat '$tmp/hrun.lua.out'; }"
check bench-hrun-not-multiple 2 "^orrery: bench: --run 0.1 is not a multiple of --dt-max 0.0625 \(T / dt_max whole intervals are timed\)" -- "$orr" bench --backend cpu --integrator hermite --run 0.1
check bench-hrun-not-multiple-dt 2 "^orrery: bench: --run 0.25 is not a multiple of --dt-max 0.1 " -- "$orr" bench --backend cpu --integrator hermite --run 0.25 --dt-max 0.1
check bench-hrun-zero 2 "^orrery: bench: --run expects a positive time \(T time units, a multiple of --dt-max\), got '0'" -- "$orr" bench --backend cpu --integrator hermite --run 0
check bench-hrun-negative 2 "^orrery: bench: --run expects a positive time \(T time units, a multiple of --dt-max\), got '-0.5'" -- "$orr" bench --backend cpu --integrator hermite --run -0.5
check bench-hrun-nan 2 "^orrery: bench: --run expects a number, got 'soon'" -- "$orr" bench --backend cpu --integrator hermite --run soon
check bench-hrun-no-hermite 2 "^orrery: bench: --run is for --integrator hermite \(a real run of Hermite block steps\)" -- "$orr" bench --backend cpu --run 0.25
check bench-hrun-active 2 "^orrery: bench: --run times a whole run, whose blocks have the active bodies the run gives them; --active \(one block step\) does not go with it" -- "$orr" bench --backend cpu --integrator hermite --run 0.25 --active 64
check bench-hrun-eta-alone 2 "^orrery: bench: --eta is for --integrator hermite --run T \(a real run of block steps\)" -- "$orr" bench --backend cpu --integrator hermite --eta 0.01
check bench-hrun-seed-alone 2 "^orrery: bench: --seed is for --integrator hermite --run T" -- "$orr" bench --backend cpu --seed 3
check bench-hrun-eta-bad 2 "^orrery: bench: --eta expects a number, got 'x'" -- "$orr" bench --backend cpu --integrator hermite --run 0.25 --eta x
check bench-hrun-eta-zero 2 "^orrery: bench: --eta expects a positive number, got '0'" -- "$orr" bench --backend cpu --integrator hermite --run 0.25 --eta 0
check bench-hrun-dtmax-bad 2 "^orrery: bench: --dt-max expects a number, got '1/8'" -- "$orr" bench --backend cpu --integrator hermite --run 0.25 --dt-max 1/8
check bench-hrun-dtmax-neg 2 "^orrery: bench: --dt-max expects a positive number, got '-1'" -- "$orr" bench --backend cpu --integrator hermite --run 0.25 --dt-max=-1
check bench-hrun-seed-bad 2 "^orrery: bench: --seed expects an integer from 0 to [0-9]+, got 'x'" -- "$orr" bench --backend cpu --integrator hermite --run 0.25 --seed x
check bench-hrun-launch 2 "^orrery: bench: --run times the kernels a run uses \(on the GPU the force \+ jerk launches tuned per N\); --block is not taken with it \(--force, --softening, --G and --threads are\)" -- "$orr" bench --backend cpu --integrator hermite --run 0.25 --block 64
check bench-hrun-nojerk 1 "^orrery: bench --integrator hermite --run N=64: force law 'lennard_jones' has no jerk" -- "$orr" bench --backend cpu --integrator hermite --run 0.0625 --force lennard_jones --n 64,128
# what a user may try (issue 27, break27): one body (its energy is 0: |dE/E|
# is nan, said so, never -nan), eta above 1 (orrery.simulation{} refuses
# it: a usage error, not a failure after the header), T shorter than dt_max
# or too many intervals (said as such, not "not a multiple"), a dt_max too
# short for block steps, --variant (the force pass's), a law with a jerk
# but no potential snippet (it runs; |dE/E| not measured)
check bench-hrun-one-body 0 '^1,1,cpu,double,0.02,4,0.0625,0.0625,[^,]+,[^,]+,1,1,[^,]+,[^,]+,[^,]+,[^,]+,nan,-$' -- sh -c "'$orr' bench --backend cpu --integrator hermite --run 0.0625 --n 1 --csv 2>/dev/null"
check bench-hrun-one-body-note 0 '^  N=1: \|dE/E\| not measured \(nan\): the energy at the start is 0$' -- "$orr" bench --backend cpu --integrator hermite --run 0.0625 --n 1,2 --csv
check bench-hrun-eta-big 2 "^orrery: bench: --eta expects a number in \(0, 1\], got '5'" -- "$orr" bench --backend cpu --integrator hermite --run 0.25 --eta 5
check bench-hrun-shorter 2 "^orrery: bench: --run 0.05 is shorter than --dt-max 0.0625 \(T / dt_max whole intervals are timed, one at least\)" -- "$orr" bench --backend cpu --integrator hermite --run 0.05
check bench-hrun-too-many 2 "^orrery: bench: --run 1e12 over --dt-max 0.0625 is 1.6e\+13 intervals: at most 1e12 are timed" -- "$orr" bench --backend cpu --integrator hermite --run 1e12
check bench-hrun-dtmax-tiny 2 "^orrery: bench: --dt-max 1e-100 is too short for block steps: at least 4.68e-97" -- "$orr" bench --backend cpu --integrator hermite --run 1e-100 --dt-max 1e-100
check bench-hrun-variant 2 "^orrery: bench: --variant is for the force pass \(tiled, naive, reference, both\), not --integrator hermite \(block steps\)" -- "$orr" bench --backend cpu --integrator hermite --run 0.0625 --variant both
check bench-hermite-variant 2 "^orrery: bench: --variant is for the force pass" -- "$orr" bench --backend cpu --integrator hermite --precision float --variant reference
printf '%s\n' 'local orrery = require "orrery"' \
  'return orrery.force{ name = "nopot", scale = "G", pair = "f = mj * orr_rsqrt3_nz(r2);",' \
  '  jerk = "const real ir = orr_rsqrt_nz(r2); g = (real)-1.5 * f * ir * ir;" }' >"$tmp/nopot.lua"
check bench-hrun-no-potential 0 '^  N=64: \|dE/E\| not measured \(nan\): the force law has no potential snippet$' -- "$orr" bench --backend cpu --integrator hermite --run 0.0625 --n 64 --force "$tmp/nopot.lua"
check tune-n-bad 2 "tune: --n expects an integer from 1 to 1073741824, got 'y'" -- "$orr" tune --backend cpu --n 5,y
check tune-hermite-bad 2 'tune: --integrator takes hermite \(the force \+ jerk kernel' -- "$orr" tune --integrator leapfrog
check tune-hermite-cpu 1 'tune --integrator hermite: the Hermite tuner is for the GPU \(the cpu backend is in use\)' -- "$orr" tune --integrator hermite --backend cpu --n 100
check tune-cpu 0 'winner \(tuned\) for N<=1024' -- "$orr" tune --backend cpu --n 1000 --budget 0.5
check tune-stored 0 'winner \(store\) for N<=1024: .* 0 tried' -- "$orr" tune --backend cpu --n 1000
check tune-info 0 'cpu gravity float N<=1024: block' -- "$orr" info
check tune-bad-budget 2 "tune: --budget must be positive, got '-1'" -- "$orr" tune --budget -1
# stored GPU tunings (made on the H100) as the store listing shows them:
# gpu_store DIR ENTRY-FIELDS LAUNCH-FIELDS MS INTERACTIONS/S writes a store
# of one entry, its best and one trial with those launch fields
gpu_store() {
  mkdir -p "$1" && cat > "$1/tuning.json" <<JSON
{"format": "orrery-tuning", "version": 1, "entries": [
 {"device": "NVIDIA H100 80GB HBM3|sm_90|132|driver 13000|nvrtc 13.0",
  "kernel": "0123456789abcdef0123456789abcdef", "backend": "cuda", $2,
  "exhaustive": false, "budget_s": 2,
  "best": {$3, "ms": $4, "interactions_per_s": $5},
  "trials": [{$3, "ms": $4, "max_rel_err": 2e-7, "ok": true, "why": ""}],
  "when": "2026-11-24T05:00:00Z"}]}
JSON
  chmod 600 "$1/tuning.json"
}
# a Hermite tuning (htune.h)
gpu_store "$tmp/hcache" '"n_bucket": 262144, "targets_bucket": 4096, "integrator": "hermite", "precision": "mixed", "force": "gravity"' \
  '"block": 128, "unroll": 0, "split": 1, "threads": 0, "ranges": 17, "ipt": 1, "blocks_per_sm": 32' 1.25 8.6e11
check tune-info-hermite 0 'cuda gravity mixed N<=262144 hermite force \+ jerk, <=4096 active: tile 128, 32 blocks per SM \(17 ranges\), 1.25 ms' -- env ORRERY_CACHE_DIR="$tmp/hcache" "$orr" info
# a force-pass tuning with bodies per thread and prefetch
gpu_store "$tmp/pcache" '"n_bucket": 262144, "precision": "float", "force": "gravity"' \
  '"block": 256, "unroll": 32, "split": 1, "threads": 0, "ranges": 9, "ipt": 2, "prefetch": 1' 32.92 2.088e12
check tune-info-prefetch 0 'cuda gravity float N<=262144: block 256 unroll 32 split 1 ipt 2 prefetch threads 0 ranges 9, 32.92 ms' -- env ORRERY_CACHE_DIR="$tmp/pcache" "$orr" info
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


# --help: every command takes it; the kernel options are all listed, and
# README's command-line section and --help name the same options
check help-bench 0 'usage: orrery COMMAND' -- "$orr" bench --help
check help-compile-h 0 'usage: orrery COMMAND' -- "$orr" compile -h
check help-info 0 'usage: orrery COMMAND' -- "$orr" info --forces --help
check help-run 0 'usage: orrery COMMAND' -- "$orr" run --help
check help-kernel-options 0 '^all$' -- sh -c "h=\$('$orr' --help); for o in --ipt --prefetch --ftz --newton --threads --ranges --unroll --split --block --softening --G --force; do echo \"\$h\" | grep -q -- \"\$o \" || { echo missing \$o; exit 0; }; done; echo all"
"$orr" --help | grep -oE -- '--[a-z]+' | sort -u >"$tmp/help-opts"
sed -n '/^## Command line/,/^## Layout/p' README.md | grep -oE -- '--[a-z]+' | sort -u >"$tmp/readme-opts"
check help-readme-agree 0 '^same$' -- sh -c "diff '$tmp/help-opts' '$tmp/readme-opts' && echo same"

# usage errors: one line, exit 2, naming the culprit
check_not variant-before-notice 2 'no usable GPU|using the CPU' -- "$orr" bench --variant bogus
check variant-bogus 2 "^orrery: bench: invalid variant 'bogus' \(expected tiled, naive, reference or both\)" -- "$orr" bench --variant bogus
check reference-double 2 'reference variant .* cannot run double precision' -- "$orr" bench --variant reference --precision double
check both-cpu-double 2 'cannot run double precision' -- "$orr" bench --backend cpu --variant both --precision double
check info-forces-extra 2 "info: unexpected argument 'extra'" -- "$orr" info --forces extra
check info-fields 0 '^  milky_way: ' -- "$orr" info --fields
check info-fields-units 0 '^    param ro += 1 .*\(a length: follows units\)$' -- "$orr" info --fields
check info-fields-potential 0 '^    potential: -G\*M/r$' -- "$orr" info --fields
check info-forces-fields 2 "info: unexpected argument '--fields' \(orrery info \[--forces\|--fields\]\)" -- "$orr" info --forces --fields
check arch-unsupported 2 'compile: --arch sm_999 is not supported by NVRTC [0-9.]+ \(it supports .*sm_90' -- "$orr" compile --arch sm_999 --emit ptx -o "$tmp/a.ptx"
check arch-malformed 2 "compile: --arch expects sm_XY or compute_XY \(e\.g\. sm_90\), got 'sm90'" -- "$orr" compile --arch sm90

# the CPU backend has no naive kernel, no unroll or threads per body
check cpu-naive 2 'the naive variant is GPU only; on the CPU use --variant reference or both' -- "$orr" bench --backend cpu --variant naive --n 100 --steps 1
check cpu-unroll 2 'bench: --unroll applies to the GPU kernels only' -- "$orr" bench --backend cpu --unroll 8 --n 100 --steps 1
check cpu-split 2 'bench: --split applies to the GPU kernels only' -- "$orr" bench --backend cpu --split=2 --n 100 --steps 1
check bad-prefetch 2 "compile: --prefetch expects an integer from 0 to 1, got '2'" -- "$orr" compile --prefetch 2
check cpu-prefetch 2 'bench: --prefetch applies to the GPU kernels only' -- "$orr" bench --backend cpu --prefetch 1 --n 100 --steps 1
check cpu-tune-unroll 2 'tune: --unroll applies to the GPU kernels only' -- "$orr" tune --backend cpu --unroll 8 --n 100
check cpu-compile-split 2 'compile --target cpu: --split applies to the GPU kernels only' -- "$orr" compile --target cpu --split 2
if "$orr" info | grep -A1 '^GPUs:' | grep -q '^  none'; then
  # no GPU here: auto resolves to the CPU, where naive is a usage error too
  check auto-cpu-naive 2 'the naive variant is GPU only' -- "$orr" bench --variant naive --n 100 --steps 1
fi

# softening and G: eps^2 must be 0 or normal in the precision; G representable
check softening-underflow 2 'invalid softening 1e-30: its square underflows in float \(softening must be 0 or from 1\.08e-19 to 1\.84e\+19\)' -- "$orr" bench --backend cpu --softening 1e-30 --n 100 --steps 1
check softening-double-ok 0 '#define ORR_SOFTENED 1' -- "$orr" compile --precision double --softening 1e-30
check softening-zero 0 '#define ORR_SOFTENED 0' -- "$orr" compile --softening 0
check G-too-large 2 'invalid G 1e\+39: must be finite and at most 3\.4e\+38 in magnitude in float' -- "$orr" compile --G 1e39
# a row whose accelerations overflow: the row is shown, then exit 1 with why
check bench-nonfinite 1 'bench N=100 tiled: max rel err is inf: non-finite accelerations in float' -- "$orr" bench --backend cpu --n 100 --steps 1 --G 3e38

# -o: checked before compiling; the success line only after a good write
check_not compile-o-nodir 1 'compiled|^#define' -- "$orr" compile --emit ptx --arch sm_90 -o /nonexistent-orrery/dir/k.ptx
check compile-o-nodir-says 1 'cannot write /nonexistent-orrery/dir/k\.ptx: no directory /nonexistent-orrery/dir' -- "$orr" compile --emit ptx --arch sm_90 -o /nonexistent-orrery/dir/k.ptx
check_not compile-o-dir 1 'compiled' -- "$orr" compile --emit cubin --arch sm_90 -o "$tmp"
check compile-o-dir-says 1 "cannot write $tmp: it is a directory" -- "$orr" compile --emit cubin --arch sm_90 -o "$tmp"
check_not compile-so-nodir 1 'compiled CPU kernel' -- "$orr" compile --target cpu --emit so -o /nonexistent-orrery/k.so
check compile-so 0 'compiled CPU kernel \([0-9]+ bytes\)' -- "$orr" compile --target cpu --emit so -o "$tmp/k.so"
# a temporary directory with blanks in its path (the compiler's arguments are not split on them)
mkdir -p "$tmp/my tmp"
check compile-so-tmpdir-blanks 0 'compiled CPU kernel \([0-9]+ bytes\)' -- env TMPDIR="$tmp/my tmp" "$orr" compile --target cpu --emit so -o "$tmp/k2.so"
# a law script under a directory named odd* (its path goes into the source escaped)
mkdir -p "$tmp/odd*"
printf '%s\n' 'local orrery = require "orrery"' \
  'return orrery.force{ name = "oddlaw", scale = "G", pair = "f = mj * orr_rsqrt3_nz(r2);" }' >"$tmp/odd*/law.lua"
check law-odd-dir-cpu 0 'compiled CPU kernel' -- "$orr" compile --target cpu --force "$tmp/odd*/law.lua" --emit so -o "$tmp/k3.so"
check law-odd-dir-ptx 0 'compiled ptx for sm_90' -- "$orr" compile --force "$tmp/odd*/law.lua" --emit ptx --arch sm_90 -o "$tmp/k3.ptx"

# ORRERY_KERNELS_DIR without forces/gravity.h: the real error, not "unknown law"
mkdir -p "$tmp/ksrc-nolaw" && cp -r kernels_src/. "$tmp/ksrc-nolaw/" && rm "$tmp/ksrc-nolaw/forces/gravity.h"
check kernels-dir-missing-law 1 "cannot open $tmp/ksrc-nolaw/forces/gravity\.h" -- env ORRERY_KERNELS_DIR="$tmp/ksrc-nolaw" "$orr" bench --backend cpu --n 100 --steps 1
check_not kernels-dir-not-unknown 1 'unknown force law' -- env ORRERY_KERNELS_DIR="$tmp/ksrc-nolaw" "$orr" bench --backend cpu --n 100 --steps 1

# the CPU kernel's cache key holds the compiler command: another $CC, another key
cc1="${CC:-cc}" cc2="${CC:-cc} -O3"
key_of() { sed -n 's/.*kernels for cpu: .*(key \([0-9a-f]*\)).*/\1/p' "$1" | head -1; }
ORRERY_CACHE_DIR="$tmp/cache-cc" CC="$cc1" "$orr" bench --backend cpu --n 64 --steps 1 >"$tmp/k1" 2>&1
ORRERY_CACHE_DIR="$tmp/cache-cc" CC="$cc2" "$orr" bench --backend cpu --n 64 --steps 1 >"$tmp/k2" 2>&1
ORRERY_CACHE_DIR="$tmp/cache-cc" CC="$cc1" "$orr" bench --backend cpu --n 64 --steps 1 >"$tmp/k3" 2>&1
check cc-command-in-key 0 '^differ$' -- sh -c "k1=\$(sed -n 's/.*(key \([0-9a-f]*\)).*/\1/p' '$tmp/k1'); k2=\$(sed -n 's/.*(key \([0-9a-f]*\)).*/\1/p' '$tmp/k2'); [ -n \"\$k1\" ] && [ \"\$k1\" != \"\$k2\" ] && echo differ || echo \"same: \$k1 \$k2\""
check cc-second-compiles 0 'kernels for cpu: compiled in' -- cat "$tmp/k2"
check cc-first-cached 0 "kernels for cpu: from cache \(key $(key_of "$tmp/k1")\)" -- cat "$tmp/k3"

# a refused entry (group-writable): never loaded, the bench runs uncached
# and the note says what to do; list flags it
ORRERY_CACHE_DIR="$tmp/cache-ref" "$orr" bench --backend cpu --precision double --n 64 --steps 1 >/dev/null 2>&1
chmod g+w "$tmp"/cache-ref/*.so
check refused-advice 0 "^  note: kernel built uncached: refusing cache entry .*: writable by group or others; remove it or run 'orrery cache clear'$" -- env ORRERY_CACHE_DIR="$tmp/cache-ref" "$orr" bench --backend cpu --precision double --n 64 --steps 1
check refused-listed 0 "\(refused: writable by group or others; remove it or run 'orrery cache clear'\)" -- env ORRERY_CACHE_DIR="$tmp/cache-ref" "$orr" cache list
check refused-cleared 0 'removed 1 entry' -- env ORRERY_CACHE_DIR="$tmp/cache-ref" "$orr" cache clear

# two processes compiling the same kernel at once (double: the bench kernel
# is also its accuracy reference, so one key): both succeed, one valid entry
conc="$tmp/cache-conc"
ORRERY_CACHE_DIR="$conc" "$orr" bench --backend cpu --precision double --n 200 --steps 1 >"$tmp/c1" 2>&1 & p1=$!
ORRERY_CACHE_DIR="$conc" "$orr" bench --backend cpu --precision double --n 200 --steps 1 >"$tmp/c2" 2>&1 & p2=$!
wait $p1; r1=$?; wait $p2; r2=$?
check concurrent-both-ok 0 '^ok$' -- sh -c "[ $r1 -eq 0 ] && [ $r2 -eq 0 ] && echo ok || cat '$tmp/c1' '$tmp/c2'"
check concurrent-one-entry 0 '^1 entry in ' -- env ORRERY_CACHE_DIR="$conc" "$orr" cache list
check concurrent-entry-valid 0 '^[0-9a-f]{32}\.so +[0-9]+  [0-9-]+ [0-9:]+$' -- env ORRERY_CACHE_DIR="$conc" "$orr" cache list
check concurrent-no-temp 0 '^1$' -- sh -c "ls -A '$conc' | wc -l"

# the cache directory shared and misused (issue 25, items 1, 6 and 9)
# six tunings of six N buckets saved at once are all kept, in two rounds
# (the kernels are compiled first, so the six finish together; before the
# store's lock most rounds lost one or two of them)
for round in 1 2; do
  shared="$tmp/cache-shared$round"
  ORRERY_CACHE_DIR="$shared" "$orr" tune --backend cpu --n 50 --budget 0.2 >/dev/null 2>&1
  pids=()
  for n in 100 200 400 800 1500 3000; do
    ORRERY_CACHE_DIR="$shared" "$orr" tune --backend cpu --n $n --budget 0.2 >"$tmp/tune$n" 2>&1 & pids+=($!)
  done
  tunes_rc=0; for p in "${pids[@]}"; do wait "$p" || tunes_rc=1; done
  check concurrent-tunes-ok-$round 0 '^ok$' -- sh -c "[ $tunes_rc -eq 0 ] && echo ok || cat '$tmp'/tune[0-9]*"
  check concurrent-tunes-kept-$round 0 '^7$' -- sh -c "ORRERY_CACHE_DIR='$shared' '$orr' info | grep -c '^  cpu gravity float N<='"
done

# a FIFO named like a cache entry or the tuning store: nothing blocks on it
# (timeout turns a hang into exit 124); the entry is refused as a file that
# is not regular (the run goes on uncached), the store ignored and replaced
fifo="$tmp/cache-fifo"
printf 'local o = require "orrery"\nlocal s <close> = o.simulation{ n = 64, backend = "cpu", tune = %s }\ns:step(1)\nprint("stepped")\n' false >"$tmp/plain.lua"
printf 'local o = require "orrery"\nlocal s <close> = o.simulation{ n = 64, backend = "cpu", tune = %s, tune_budget = 0.1 }\ns:step(1)\nprint("stepped")\n' true >"$tmp/tuned.lua"
ORRERY_CACHE_DIR="$fifo" "$orr" run "$tmp/plain.lua" >/dev/null 2>&1
entry=$(ls "$fifo"/*.so | head -1)
rm -f "$entry" && mkfifo "$entry"
check fifo-entry-run 0 "^orrery: note: kernel built uncached: refusing cache entry $entry: not a regular file; remove it yourself \('orrery cache clear' leaves it\)$" -- timeout 20 env ORRERY_CACHE_DIR="$fifo" "$orr" run "$tmp/plain.lua"
check fifo-entry-info 0 'kernel cache: .*, 1 entry' -- timeout 20 env ORRERY_CACHE_DIR="$fifo" "$orr" info
rm -f "$entry" && mkfifo "$fifo/tuning.json"
check fifo-store-info 0 "unreadable: tuning store $fifo/tuning\.json is corrupt \(not a regular file\)" -- timeout 20 env ORRERY_CACHE_DIR="$fifo" "$orr" info
check fifo-store-run 0 '^stepped$' -- timeout 20 env ORRERY_CACHE_DIR="$fifo" "$orr" run "$tmp/tuned.lua"
check fifo-store-replaced 0 'cpu gravity float N<=64: block' -- timeout 20 env ORRERY_CACHE_DIR="$fifo" "$orr" info

# a cache directory that cannot be made (under a regular file: root cannot
# either): runs go on uncached with one note, said once (a tuning's note
# says it in the same words: no second line names the directory; what
# else a short tuning may say, timings too noisy, is not counted)
: >"$tmp/plainfile"
nocache="$tmp/plainfile/cache"
nocache_note="orrery: note: kernel cache unusable, running uncached: cannot create cache directory $nocache: Not a directory"
for script in plain tuned; do
  ORRERY_CACHE_DIR="$nocache" timeout 20 "$orr" run "$tmp/$script.lua" >"$tmp/nc.out" 2>"$tmp/nc.err"; rc=$?
  check nocache-run-$script 0 '^one note$' -- sh -c "[ $rc -eq 0 ] && grep -qx stepped '$tmp/nc.out' && [ \$(grep -c '$nocache' '$tmp/nc.err') -eq 1 ] && grep -qxF '$nocache_note' '$tmp/nc.err' && echo one note || { echo exit $rc; cat '$tmp/nc.out' '$tmp/nc.err'; }"
done
check nocache-bench 0 "^  note: kernel cache unusable, running uncached: cannot create cache directory $nocache: Not a directory$" -- env ORRERY_CACHE_DIR="$nocache" "$orr" bench --backend cpu --n 100 --steps 1
check nocache-tune 0 "^  note: kernel cache unusable, running uncached: cannot create cache directory $nocache: Not a directory$" -- env ORRERY_CACHE_DIR="$nocache" "$orr" tune --backend cpu --n 100 --budget 0.1
# a directory that exists but cannot be written (/proc passes the
# directory's checks for root alone): cache clear has nothing to do there
if [ "$(id -u)" -eq 0 ]; then
  check readonly-cache-clear 0 '^removed 0 entries and 0 stored tunings from /proc$' -- env ORRERY_CACHE_DIR=/proc "$orr" cache clear
fi

# ---- what a tester found after issue 25 (B1 to B3) -------------------------
entry_of() { ls "$1"/*.so | head -1; }

# B2: an entry that is not a regular file of one's own (a FIFO, a socket, a
# directory, a symbolic link, another user's file) or is writable by others
# is never loaded, and never ends a run: the kernel is built uncached with
# one note (the entry left as it is), saying what to do; `cache list` shows
# it without opening it; `cache clear` removes orrery's own files only (the
# group-writable one) and names each thing it leaves
have_py=0; command -v python3 >/dev/null && have_py=1
for kind in fifo socket dir symlink groupw other; do
  [ "$kind" = other ] && [ "$(id -u)" -ne 0 ] && continue   # chown needs root
  [ "$kind" = socket ] && [ "$have_py" -eq 0 ] && continue  # python3 binds it
  bd="$tmp/cache-bad-$kind"
  ORRERY_CACHE_DIR="$bd" "$orr" run "$tmp/plain.lua" >/dev/null 2>&1
  e=$(entry_of "$bd")
  advice="remove it yourself ('orrery cache clear' leaves it)"
  case $kind in
    fifo) rm -f "$e" && mkfifo "$e"; why="not a regular file"; test_kind="-p";;
    socket) rm -f "$e" && python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$e"
            why="not a regular file"; test_kind="-S";;
    dir) rm -f "$e" && mkdir "$e"; why="a directory"; test_kind="-d";;
    symlink) mv "$e" "$e.target" && ln -s "$e.target" "$e"; why="a symbolic link"; test_kind="-L";;
    groupw) chmod g+w "$e"; why="writable by group or others"; test_kind="-f"
            advice="remove it or run 'orrery cache clear'";;
    other) chown 12345:12345 "$e"; why="not owned by you (uid 12345)"; test_kind="-f";;
  esac
  note="orrery: note: kernel built uncached: refusing cache entry $e: $why; $advice"
  for start in 1 2; do
    timeout 20 env ORRERY_CACHE_DIR="$bd" "$orr" run "$tmp/plain.lua" >"$tmp/bad.out" 2>"$tmp/bad.err"; rc=$?
    check bad-entry-$kind-run-$start 0 '^uncached, one note$' -- sh -c "[ $rc -eq 0 ] && grep -qx stepped '$tmp/bad.out' && [ \$(wc -l <'$tmp/bad.err') -eq 1 ] && [ \$(grep -cxF \"\$1\" '$tmp/bad.err') -eq 1 ] && [ $test_kind '$e' ] && echo uncached, one note || { echo exit $rc; cat '$tmp/bad.out' '$tmp/bad.err'; }" sh "$note"
  done
  check bad-entry-$kind-listed 0 "^$(basename "$e") .*\(refused: ${why%% (*}; $(printf '%s' "$advice" | sed 's/[()]/\\&/g')\)$" -- timeout 20 env ORRERY_CACHE_DIR="$bd" "$orr" cache list
  if [ "$kind" = groupw ]; then
    check bad-entry-$kind-cleared 0 "^removed [1-9][0-9]* entr(y|ies) and 0 stored tunings from $bd$" -- env ORRERY_CACHE_DIR="$bd" "$orr" cache clear
    check bad-entry-$kind-gone 0 '^gone$' -- sh -c "[ ! -e '$e' ] && echo gone"
  else
    timeout 20 env ORRERY_CACHE_DIR="$bd" "$orr" cache clear >"$tmp/clear.out" 2>&1; rc=$?
    check bad-entry-$kind-clear-says 0 "^left $e: $(printf '%s' "$why" | sed 's/[()]/\\&/g'); remove it yourself$" -- cat "$tmp/clear.out"
    check bad-entry-$kind-clear-counts 0 "^removed [0-9]+ entr(y|ies) and 0 stored tunings from $bd; left 1 item that is not orrery's own \(above\)$" -- sh -c "cat '$tmp/clear.out'; exit $rc"
    check bad-entry-$kind-kept 0 '^kept$' -- sh -c "[ $test_kind '$e' ] && echo kept"
  fi
done
check bad-entry-symlink-target-kept 0 '^kept$' -- sh -c "ls '$tmp'/cache-bad-symlink/*.so.target >/dev/null && echo kept"
# a directory with something in it: its contents untouched
bd="$tmp/cache-bad-fulldir"
ORRERY_CACHE_DIR="$bd" "$orr" run "$tmp/plain.lua" >/dev/null 2>&1
e=$(entry_of "$bd"); rm -f "$e" && mkdir "$e" && : >"$e/something"
check bad-entry-fulldir-run 0 "^orrery: note: kernel built uncached: refusing cache entry $e: a directory; remove it yourself" -- env ORRERY_CACHE_DIR="$bd" "$orr" run "$tmp/plain.lua"
check bad-entry-fulldir-clear 0 "^left $e: a directory; remove it yourself$" -- env ORRERY_CACHE_DIR="$bd" "$orr" cache clear
check bad-entry-fulldir-kept 0 '^kept$' -- sh -c "[ -f '$e/something' ] && echo kept"
# the tuning store as a directory or a symbolic link: left by cache clear
# and named, never followed (it used to fail "cannot remove ...: Is a
# directory" after removing the kernels)
: >"$tmp/store-target"
for kind in dir symlink; do
  bd="$tmp/cache-bad-store-$kind"
  mkdir -p "$bd" && chmod 700 "$bd"
  if [ "$kind" = dir ]; then mkdir "$bd/tuning.json"; why="a directory"
  else ln -s "$tmp/store-target" "$bd/tuning.json"; why="a symbolic link"; fi
  check bad-store-$kind-clear 0 "^left $bd/tuning.json: $why; remove it yourself$" -- env ORRERY_CACHE_DIR="$bd" "$orr" cache clear
  check bad-store-$kind-kept 0 '^kept$' -- sh -c "[ -e '$bd/tuning.json' ] || [ -L '$bd/tuning.json' ] && [ -e '$tmp/store-target' ] && echo kept"
done

# B1, B2, B3 as a user for whom file modes count (root reads and writes any
# file): as root, nobody through setpriv, with a copy of the binary in a
# directory of nobody's; as any other user, that user; skipped where root
# has no setpriv
asuser=()
if [ "$(id -u)" -eq 0 ]; then
  if command -v setpriv >/dev/null && setpriv --reuid=nobody --regid=nogroup --clear-groups true 2>/dev/null; then
    asuser=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
  else
    asuser=(unavailable)
  fi
fi
if [ "${asuser[0]:-}" = unavailable ]; then
  echo "cache modes: root without setpriv (util-linux): the tests as an unprivileged user are skipped"
else
  ub=$(mktemp -d)
  trap 'chmod -R u+rwx "$ub" 2>/dev/null; rm -rf "$tmp" "$ub"' EXIT
  cp "$orr" "$ub/orrery" && cp "$tmp/plain.lua" "$tmp/tuned.lua" "$ub/" && chmod -R a+rX "$ub"
  [ "$(id -u)" -eq 0 ] && chown -R nobody:nogroup "$ub"
  uorr="$ub/orrery"
  # as CMD...: CMD run as that user, in its directory, TMPDIR there too
  as() { (cd "$ub" && "${asuser[@]}" env TMPDIR="$ub" "$@"); }
  printf 'local o = require "orrery"\nfor _ = 1, 2 do\n  local s <close> = o.simulation{ n = 64, backend = "cpu", tune = true, tune_budget = 0.1 }\n  s:step(1)\nend\nprint("stepped")\n' >"$ub/tuned2.lua"
  printf 'local o = require "orrery"\nfor _, p in ipairs{ "float", "double" } do for _, f in ipairs{ "gravity", "gravity_spline" } do\n  local s <close> = o.simulation{ n = 64, backend = "cpu", tune = false, precision = p, force = f }\n  s:step(1)\nend end\nprint("stepped")\n' >"$ub/many.lua"
  chmod a+r "$ub"/*.lua

  # B1: a tuning store that cannot be read: a run that tunes says on every
  # start that its tuning is not saved, and why, once however many tune
  us="$ub/cache-store"
  as env ORRERY_CACHE_DIR="$us" "$uorr" run tuned.lua >/dev/null 2>&1
  as chmod 000 "$us/tuning.json"
  note="orrery: note: tuning not saved: cannot read tuning store $us/tuning.json (Permission denied); not replacing it"
  for start in 1 2; do
    as env ORRERY_CACHE_DIR="$us" "$uorr" run tuned2.lua >"$tmp/u.out" 2>"$tmp/u.err"; rc=$?
    check store-unreadable-run-note-$start 0 '^said once$' -- sh -c "[ $rc -eq 0 ] && grep -qx stepped '$tmp/u.out' && [ \$(grep -cxF \"\$1\" '$tmp/u.err') -eq 1 ] && echo said once || { echo exit $rc; cat '$tmp/u.out' '$tmp/u.err'; }" sh "$note"
  done
  check store-unreadable-kept 0 '^----------$' -- stat -c %A "$us/tuning.json"

  # B2: an entry of one's own that cannot be read (mode 000) is corrupt:
  # rebuilt and replaced, with a note; the next run loads it
  ue="$ub/cache-000"
  as env ORRERY_CACHE_DIR="$ue" "$uorr" run plain.lua >/dev/null 2>&1
  e=$(entry_of "$ue"); as chmod 000 "$e"
  check unreadable-entry-run 0 "^orrery: note: cache entry $e cannot be read \(Permission denied\); rebuilding$" -- as env ORRERY_CACHE_DIR="$ue" "$uorr" run plain.lua
  check unreadable-entry-replaced 0 '^-rw-------$' -- stat -c %A "$e"
  check_not unreadable-entry-then-quiet 0 'note' -- as env ORRERY_CACHE_DIR="$ue" "$uorr" run plain.lua
  check_not unreadable-entry-listed-valid 0 'corrupt' -- as env ORRERY_CACHE_DIR="$ue" "$uorr" cache list

  # B3: a cache directory of one's own that one may not write (mode 0500):
  # one note for the whole run, however many kernels it builds, tuning
  # included; what is in it is still loaded; orrery info says read-only
  ur="$ub/cache-ro"
  as env ORRERY_CACHE_DIR="$ur" "$uorr" run plain.lua >/dev/null 2>&1
  as chmod 0500 "$ur"
  ro_note="orrery: note: kernel cache read-only, new kernels and tunings not stored: cache directory $ur is not writable (Permission denied)"
  for script in many tuned2; do
    as env ORRERY_CACHE_DIR="$ur" "$uorr" run $script.lua >"$tmp/u.out" 2>"$tmp/u.err"; rc=$?
    check readonly-dir-$script-one-note 0 '^one note$' -- sh -c "[ $rc -eq 0 ] && grep -qx stepped '$tmp/u.out' && [ \$(grep -cxF \"\$1\" '$tmp/u.err') -eq 1 ] && [ \$(grep -c '$ur' '$tmp/u.err') -eq 1 ] && echo one note || { echo exit $rc; cat '$tmp/u.out' '$tmp/u.err'; }" sh "$ro_note"
  done
  check readonly-dir-hit 0 'kernels for cpu: from cache' -- as env ORRERY_CACHE_DIR="$ur" "$uorr" bench --backend cpu --n 64 --steps 1
  check readonly-dir-info 0 "^  read-only: cache directory $ur is not writable \(Permission denied\); its kernels and tunings are used, new ones not stored$" -- as env ORRERY_CACHE_DIR="$ur" "$uorr" info
  check readonly-dir-tune 0 "^  note: kernel cache read-only, new kernels and tunings not stored: cache directory $ur is not writable \(Permission denied\)$" -- as env ORRERY_CACHE_DIR="$ur" "$uorr" tune --backend cpu --n 100 --budget 0.1
  # bench and tune over several body counts (a kernel built for each): said once
  for cmd in "bench --backend cpu --precision double --n 64,100 --steps 1" "tune --backend cpu --n 100,300 --budget 0.1"; do
    as env ORRERY_CACHE_DIR="$ur" "$uorr" $cmd >"$tmp/u.out" 2>&1; rc=$?
    check readonly-dir-${cmd%% *}-once 0 '^said once$' -- sh -c "[ $rc -eq 0 ] && [ \$(grep -c '^  note: kernel cache read-only' '$tmp/u.out') -eq 1 ] && echo said once || { echo exit $rc; cat '$tmp/u.out'; }"
  done
  check readonly-dir-unchanged 0 '^1$' -- sh -c "ls -A '$ur' | wc -l"
fi

# B1: the store's lock held by another process: a run says, as it waits,
# why it stands still, and after, that its tuning was not saved and why;
# sim:tune alike (python3 holds the lock: an fcntl lock, as orrery takes)
if command -v python3 >/dev/null; then
  lk="$tmp/cache-locked"
  ORRERY_CACHE_DIR="$lk" "$orr" run "$tmp/plain.lua" >/dev/null 2>&1
  printf 'local o = require "orrery"\nlocal s <close> = o.simulation{ n = 64, backend = "cpu", tune = false }\ns:tune{ budget = 0.1 }\nprint("retuned")\n' >"$tmp/retune.lua"
  python3 -c 'import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
fcntl.lockf(fd, fcntl.LOCK_EX)
open(sys.argv[2], "w").close()
time.sleep(60)' "$lk/tuning.json.lock" "$tmp/lock-held" & holder=$!
  for _ in $(seq 100); do [ -f "$tmp/lock-held" ] && break; sleep 0.1; done
  wait_note="orrery: note: the tuning store is locked by another process: waiting up to 2 s for $lk/tuning.json.lock"
  done_note="orrery: note: tuning not saved: the tuning store is locked: waited 2 s for $lk/tuning.json.lock, held by another process (a save that hangs, or a lock left on an NFS server)"
  for script in tuned retune; do
    ORRERY_TEST_LOCK_TIMEOUT=2 ORRERY_CACHE_DIR="$lk" "$orr" run "$tmp/$script.lua" >"$tmp/l.out" 2>"$tmp/l.err"; rc=$?
    check locked-store-$script-notes 0 '^said before and after$' -- sh -c "[ $rc -eq 0 ] && [ \$(grep -cxF \"\$1\" '$tmp/l.err') -eq 1 ] && [ \$(grep -cxF \"\$2\" '$tmp/l.err') -eq 1 ] && [ \$(grep -nxF \"\$1\" '$tmp/l.err' | cut -d: -f1) -lt \$(grep -nxF \"\$2\" '$tmp/l.err' | cut -d: -f1) ] && echo said before and after || { echo exit $rc; cat '$tmp/l.out' '$tmp/l.err'; }" sh "$wait_note" "$done_note"
  done
  kill "$holder" 2>/dev/null; wait "$holder" 2>/dev/null
else
  echo "locked store: no python3 to hold the lock: skipped"
fi

# the CPU all-pairs loop vectorises: the generated source, compiled with the
# CPU backend's own flags (from orrery info), gets a "loop vectorized" note
# on the j-loop of direct_cpu.c (its omp simd pragma or its for line)
base=$("$orr" info | sed -n 's/^  flags: \(.*\) (float kernels add \(.*\))$/\1/p' | sed 's/ -shared//')
fast=$("$orr" info | sed -n 's/^  flags: .* (float kernels add \(.*\))$/\1/p')
for p in float double; do
  "$orr" compile --target cpu --precision $p --emit source -o "$tmp/vec_$p.c"
  start=$(grep -n '^#line 1 "direct_cpu.c"' "$tmp/vec_$p.c" | cut -d: -f1)
  loop=$(grep -n 'for (long j = jb; j < je; j++)' "$tmp/vec_$p.c" | head -1 | cut -d: -f1)
  jl=$((loop - start)); extra=$([ $p = float ] && echo "$fast")
  check vectorised-$p 0 "direct_cpu\.c:($((jl - 1))|$jl):[0-9]+: optimized: loop vectorized" -- ${CC:-cc} $base $extra -fopt-info-vec-optimized -c "$tmp/vec_$p.c" -o "$tmp/vec_$p.o"
done

# ORRERY_TRACE=1: the start-up marks at exit, from the process's start, in
# order (the CPU backend here; on a GPU cuInit and the primary context too);
# without it, none
printf 'local o = require "orrery"\nlocal s <close> = o.simulation{ n = 64, backend = "cpu", tune = false }\n' >"$tmp/trace.lua"
check trace-marks 0 '^ok$' -- sh -c "ORRERY_TRACE=1 '$orr' run '$tmp/trace.lua' 2>'$tmp/trace' && awk '
  /^orrery: trace +[0-9.]+ ms  \\(\\+ *[0-9.]+\\)  / { t = \$3 + 0; if (t < last) bad = 1; last = t; seen[\$0 ~ / main\$/ ? \"main\" : \$0 ~ / script start\$/ ? \"start\" : \$0 ~ / simulation created\$/ ? \"sim\" : \$0 ~ / exit handlers done\$/ ? \"end\" : \"other\"]++; n++ }
  END { if (!bad && seen[\"main\"] && seen[\"start\"] && seen[\"sim\"] && seen[\"end\"] && n >= 6) print \"ok\"; else print \"bad\" }' '$tmp/trace' || cat '$tmp/trace'"
check_not trace-off 0 'trace' -- "$orr" run "$tmp/trace.lua"

# orrery movie: a numbered PNG series as an MP4 (H.264) movie, read back
# with ffprobe (frame count, size, codec, duration = frames / fps); the
# errors naming the file or the argument
if command -v ffprobe >/dev/null 2>&1; then
  mkdir -p "$tmp/mv"
  cat >"$tmp/mv/frames.lua" <<'EOF'
local orrery = require "orrery"
local sim <close> = orrery.simulation{ bodies = orrery.ic.plummer{ n = 500, seed = 9 }, backend = "cpu", dt = 0.02 }
sim:run{ steps = 9, progress = false, render_every = 1,
  render = { path = arg[1] .. "/f_%03d.png", width = tonumber(arg[2]), height = tonumber(arg[3]) } }
EOF
  "$orr" run "$tmp/mv/frames.lua" "$tmp/mv/a" 64 48 >/dev/null 2>&1
  "$orr" run "$tmp/mv/frames.lua" "$tmp/mv/odd" 63 47 >/dev/null 2>&1
  check movie-from-pngs 0 "^wrote '$tmp/mv/a.mp4': 10 frames of 64x48 at 5 fps \(2 s\), H.264 crf 20$" -- "$orr" movie "$tmp/mv/a.mp4" "$tmp/mv/a/f_%03d.png" --fps 5
  check movie-probe 0 '^h264,64,48,yuv420p,2\.000000,10$' -- ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=codec_name,width,height,pix_fmt,duration,nb_read_frames -of csv=p=0 "$tmp/mv/a.mp4"
  check movie-start 0 "^wrote '$tmp/mv/b.mp4': 6 frames of 64x48 at 30 fps \(0.2 s\), H.264 crf 30$" -- "$orr" movie "$tmp/mv/b.mp4" "$tmp/mv/a/f_%03d.png" --start 4 --crf=30
  check movie-no-first 1 "^orrery: movie: cannot read '$tmp/mv/a/g_000.png': No such file or directory \(nor '$tmp/mv/a/g_001.png': a series starts at 0 or 1\)$" -- "$orr" movie "$tmp/mv/c.mp4" "$tmp/mv/a/g_%03d.png"
  cp "$tmp/mv/odd/f_000.png" "$tmp/mv/a/f_007.png"
  check movie-mixed-sizes 1 "^orrery: movie: '$tmp/mv/a/f_007.png' is 63x47 but the first frame '$tmp/mv/a/f_000.png' is 64x48 \(every frame of a movie has one size\)$" -- "$orr" movie "$tmp/mv/c.mp4" "$tmp/mv/a/f_%03d.png"
  check movie-odd-size 1 "^orrery: movie: cannot write '$tmp/mv/c.mp4': H.264 \(4:2:0\) needs an even width and height from 2 to 16384 \(got 63x47\)$" -- "$orr" movie "$tmp/mv/c.mp4" "$tmp/mv/odd/f_%03d.png"
  check movie-none-left 0 '^none$' -- sh -c "ls -a '$tmp/mv' | grep -q 'c\.mp4' && ls -a '$tmp/mv' || echo none"
  check movie-no-number 2 "^orrery: movie: the frames' pattern \(argument 2\): 'f.png' has no frame number \(give one integer conversion, e.g. frames/f_%04d.png\) \(see 'orrery --help'\)$" -- "$orr" movie c.mp4 f.png
  check movie-bad-pattern 2 "^orrery: movie: the frames' pattern \(argument 2\): output path 'f_%s.png': '%s' is not allowed" -- "$orr" movie c.mp4 'f_%s.png'
  check movie-not-mp4 2 "^orrery: movie: the movie \(argument 1\) must be a file name ending in .mp4, got 'c.avi'" -- "$orr" movie c.avi 'f_%d.png'
  check movie-operands 2 "^orrery: movie: expected the movie and the frames' pattern, e.g. orrery movie out.mp4 frames/f_%04d.png" -- "$orr" movie c.mp4
  check movie-extra 2 "^orrery: movie: unexpected argument 3 'x' " -- "$orr" movie c.mp4 'f_%d.png' x
  check movie-fps 2 "^orrery: movie: --fps expects a number from 0\.01 to 1000 \(a frame lasts at most 100 s\), got '0'" -- "$orr" movie c.mp4 'f_%d.png' --fps 0
  check movie-fps-tiny 2 "^orrery: movie: --fps expects a number from 0\.01 to 1000 \(a frame lasts at most 100 s\), got '1e-6'" -- "$orr" movie c.mp4 'f_%d.png' --fps 1e-6
  check movie-crf 2 "^orrery: movie: --crf expects an integer from 0 to 51, got '52'" -- "$orr" movie c.mp4 'f_%d.png' --crf 52
  check movie-option 2 "^orrery: movie: unknown option '--fsp' \(argument 3\)" -- "$orr" movie c.mp4 'f_%d.png' --fsp 3
else
  echo "[  SKIPPED ] movie: ffprobe (Debian's ffmpeg) is not installed"
fi

# the test binaries leave nothing behind in TMPDIR (private caches, kernel copies)
if [ -x "$build/tests/test_kspec" ]; then
  mkdir -p "$tmp/tmpdir"
  TMPDIR="$tmp/tmpdir" "$build/tests/test_kspec" >"$tmp/tk" 2>&1
  check test-binary-cleans-up 0 '^clean$' -- sh -c "[ -z \"\$(ls -A '$tmp/tmpdir')\" ] && echo clean || ls -A '$tmp/tmpdir'"
fi

echo "[==========] $((pass + fail)) test(s) run."
echo "[  PASSED  ] $pass test(s)."
[ "$fail" -eq 0 ] || echo "[  FAILED  ] $fail test(s), listed above."
[ "$fail" -eq 0 ]
