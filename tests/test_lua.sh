#!/usr/bin/env bash
# test_lua: the Lua layer.  Runs every tests/lua/test_*.lua through
# `orrery run` (each prints one line per test and a "[ RESULT   ]" line; a
# crash or a missing result line counts as a failure), then checks from the
# outside what a user sees: scripts with a syntax error, a run-time error, a
# bad argument and an unknown key exit 1 and print the exact file:line and
# message (plus a traceback for run-time errors), also for a script in a deep
# directory (named in full, as written); arg; Ctrl-C (exit 130);
# the energy log in a pipe (no progress bar) and on a terminal (a bar);
# frames written in the background, at the end of a script and at os.exit,
# and their failures (a full disk among them); movies finished at the end
# of a script, at os.exit and when collected; a law in a script whose path
# is over 1000 bytes long; a law that crashes the process on the CPU;
# scripts/core_collapse.lua stopping before a collapse, and resuming.
# Prints cmocka-style summary lines so tests/run.sh can count it.
#   bash tests/test_lua.sh BUILD_DIR [NAME ...]
# With names (test_gpu, say), runs only tests/lua/NAME.lua, nothing else
# (`make gpu-test` does this on the GPU machine).
set -u
build=${1:-build}; shift || true
only=("$@")
orr="$build/orrery"
here=$(cd "$(dirname "$0")" && pwd)
pass=0 fail=0 skip=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export ORRERY_CACHE_DIR=${ORRERY_CACHE_DIR:-$tmp/cache}
export TEST_TMP=$tmp

ok() { echo "[       OK ] $1"; pass=$((pass + 1)); }
bad() { echo "[  FAILED  ] $1"; fail=$((fail + 1)); }

# ---- the Lua test files ----------------------------------------------------
files=()
if [ ${#only[@]} -eq 0 ]; then
  files=("$here"/lua/test_*.lua)
else
  for name in "${only[@]}"; do files+=("$here/lua/$name.lua"); done
fi
for t in "${files[@]}"; do
  name=$(basename "$t" .lua)
  if [ ! -f "$t" ]; then bad "$name: no such file $t"; continue; fi
  "$orr" run "$t" >"$tmp/out" 2>&1; rc=$?
  cat "$tmp/out"
  line=$(grep -E '^\[ RESULT   \] ' "$tmp/out" | tail -1)
  if [ -z "$line" ]; then
    bad "$name: exit $rc without a result line (crash?)"
    continue
  fi
  p=$(echo "$line" | sed -n 's/.*: \([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped$/\1/p')
  f=$(echo "$line" | sed -n 's/.*: \([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped$/\2/p')
  s=$(echo "$line" | sed -n 's/.*: \([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped$/\3/p')
  pass=$((pass + ${p:-0})); fail=$((fail + ${f:-0})); skip=$((skip + ${s:-0}))
  if [ "$rc" -ne 0 ] && [ "${f:-0}" -eq 0 ]; then bad "$name: exit $rc"; fi
done

summary() {
  echo "[==========] $((pass + fail)) test(s) run."
  echo "[  PASSED  ] $pass test(s)."
  [ "$skip" -eq 0 ] || echo "[  SKIPPED ] $skip test(s)."
  [ "$fail" -eq 0 ] || echo "[  FAILED  ] $fail test(s), listed above."
  [ "$fail" -eq 0 ]
}
if [ ${#only[@]} -gt 0 ]; then summary; exit; fi

# ---- from the outside --------------------------------------------------------

# expect NAME EXIT EXPECTED_STDERR_FILE -- CMD...: exit status and the exact
# first lines of stderr (as many as the expected file has)
expect() {
  local name=$1 want=$2 exp=$3; shift 4
  "$@" >"$tmp/stdout" 2>"$tmp/stderr"; local rc=$?
  local n; n=$(wc -l <"$exp")
  if [ "$rc" -eq "$want" ] && head -n "$n" "$tmp/stderr" | cmp -s - "$exp"; then
    ok "$name"
  else
    bad "$name: exit $rc (want $want); stderr:"
    sed 's/^/    /' "$tmp/stderr" | head -20
    echo "    expected:"; sed 's/^/    /' "$exp"
  fi
}

# check NAME EXIT PATTERN FILE: FILE (after the last command) matches PATTERN
check() {
  local name=$1 want=$2 rc=$3 pat=$4 file=$5
  if [ "$rc" -eq "$want" ] && grep -qE -- "$pat" "$file"; then
    ok "$name"
  else
    bad "$name: exit $rc (want $want), $file:"; sed 's/^/    /' "$file" | head -20
  fi
}

cd "$tmp" || exit 1
orr_abs=$(cd "$OLDPWD" && realpath "$orr")

printf 'local x = 1\nlocal y = = 2\n' >syntax.lua
printf "syntax.lua:2: unexpected symbol near '='\n" >exp
expect syntax-error 1 exp -- "$orr_abs" run syntax.lua
[ "$(wc -l <"$tmp/stderr")" -eq 1 ] && ok syntax-error-one-line || bad "syntax-error-one-line"

printf 'local orrery = require "orrery"\nlocal function f()\n  error("boom")\nend\nf()\n' >runtime.lua
printf 'runtime.lua:3: boom\nstack traceback:\n' >exp
expect runtime-error 1 exp -- "$orr_abs" run runtime.lua
check runtime-traceback 1 1 $'^\truntime.lua:5: in main chunk$' "$tmp/stderr"

cat >badarg.lua <<'EOF'
local orrery = require "orrery"
local sim <close> = orrery.simulation{ n = 8, backend = "cpu" }
sim:step("x")
EOF
printf "badarg.lua:3: bad argument #1 to 'step' (number expected, got string)\nstack traceback:\n" >exp
expect bad-argument 1 exp -- "$orr_abs" run badarg.lua

cat >unknown.lua <<'EOF'
local orrery = require "orrery"

local sim = orrery.simulation{ n = 512, stpes = 100, backend = "cpu" }
EOF
printf "unknown.lua:3: orrery.simulation: unknown key 'stpes'\n" >exp
expect unknown-key 1 exp -- "$orr_abs" run unknown.lua

printf 'local orrery = require "orrery"\nlocal sim = orrery.simulation{ n = 4, precision = "half" }\n' >badvalue.lua
printf 'badvalue.lua:2: orrery.simulation: '"'"'precision'"'"' must be "float", "double" or "mixed" (got "half")\n' >exp
expect bad-value 1 exp -- "$orr_abs" run badvalue.lua

cat >closed.lua <<'EOF'
local orrery = require "orrery"
local sim = orrery.simulation{ n = 4, backend = "cpu" }
sim:close()
print(sim.time)
EOF
printf 'closed.lua:4: orrery.Sim: simulation is closed\n' >exp
expect closed-sim 1 exp -- "$orr_abs" run closed.lua

cat >load.lua <<'EOF'
local orrery = require "orrery"
local sim = orrery.simulation{ n = 512, backend = "cpu" }
sim:load(orrery.ic.plummer{ n = 1000 })
EOF
printf 'load.lua:3: sim:load: 1000 bodies given, simulation has 512\n' >exp
expect load-count 1 exp -- "$orr_abs" run load.lua

printf 'print(#arg, arg[0], arg[1], arg[2], ...)\n' >args.lua
"$orr_abs" run args.lua one "two words" >out 2>&1; rc=$?
check arg 0 $rc $'^2\targs.lua\tone\ttwo words\tone\ttwo words$' out

: >empty.lua
"$orr_abs" run empty.lua >out 2>&1; rc=$?
[ "$rc" -eq 0 ] && [ ! -s out ] && ok empty-script || bad "empty-script: exit $rc"

"$orr_abs" run missing.lua >out 2>&1; rc=$?
check missing-script 1 $rc '^orrery: cannot open missing\.lua' out
"$orr_abs" run >out 2>&1; rc=$?
check run-without-script 2 $rc "run: missing script" out
"$orr_abs" run --resume --all-ranks empty.lua >out 2>&1; rc=$?
check run-resume-then-option 2 $rc "run: --resume needs a checkpoint file .*; got the option '--all-ranks'" out
"$orr_abs" run --bogus empty.lua >out 2>&1; rc=$?
check run-unknown-option 2 $rc "run: unknown option '--bogus' \(before the script: --verify, --resume CKPT, --all-ranks, --view\[=PORT\]\)" out
"$orr_abs" run --all-ranks --verify empty.lua >out 2>&1; rc=$?
[ "$rc" -eq 0 ] && [ ! -s out ] && ok run-options-any-order || bad "run-options-any-order: exit $rc"
# --verify checks each simulation's law against itself (law:check): a jerk
# snippet twice the true one fails, naming the snippet and the ratio, and
# the run exits 1; the right one passes
for jerk in "g = (-p / 2 - 1) * f / r2 * 2;" "g = (-p / 2 - 1) * f / r2;"; do
  cat >law.lua <<LUA
local orrery = require "orrery"
local power = orrery.force{ name = "power", params = { p = 2.5 },
  pair = "f = mj * orr_pow(r2, -p / 2 - 1);",
  potential = "u = -mi * mj / p * orr_pow(r2, -p / 2);", jerk = "$jerk" }
local sim <close> = orrery.simulation{ bodies = orrery.ic.plummer{ n = 32, seed = 2 },
  force = power, backend = "cpu", integrator = "hermite", dt_max = 1 / 16, softening = 0.05 }
sim:run{ steps = 1, progress = false }
LUA
  "$orr_abs" run --verify law.lua >out 2>&1; rc=$?
  case $jerk in
    *"* 2;") check verify-law-check-fails 1 $rc "^orrery: verify: force law 'power': the jerk snippet's g disagrees with df/d\(d2\) of the pair snippet by 0\.5 \(relative\) at r = [0-9.e+-]+: scale g = .* \(ratio 2\): FAILED$" out ;;
    *) check verify-law-check-passes 0 $rc "^orrery: verify: force law 'power' against itself \(eps 0\.05, 41 separations from 0\.01 to 100\): f against the potential's derivative checked, g against f's checked: ok$" out ;;
  esac
done
# and each field against itself (field:check): a spring's jerk snippet
# twice the true one fails, naming it; the right one passes
for jerk in "jx = -2 * vx; jy = -2 * vy; jz = -2 * vz;" "jx = -vx; jy = -vy; jz = -vz;"; do
  cat >field.lua <<LUA
local orrery = require "orrery"
local spring = orrery.field{ name = "spring", accel = "ax = -x; ay = -y; az = -z;",
  potential = "phi = r2 / 2;", jerk = "$jerk" }
local sim <close> = orrery.simulation{ bodies = orrery.ic.plummer{ n = 32, seed = 2 },
  fields = { spring }, backend = "cpu", precision = "double" }
sim:run{ steps = 1, progress = false }
LUA
  "$orr_abs" run --verify field.lua >out 2>&1; rc=$?
  case $jerk in
    *"-2 * vx"*) check verify-field-check-fails 1 $rc "^orrery: verify: field 'spring': the jerk snippet's j disagrees with d a/dt along the motion by 0\.5 \(relative\) at \(.*\): FAILED$" out ;;
    *) check verify-field-check-passes 0 $rc "^orrery: verify: field 'spring' against itself \(41 points from r = 0\.01 to 100\): a against -grad Phi checked, its jerk against d a/dt checked: ok$" out ;;
  esac
done
"$orr_abs" --help >out 2>&1; rc=$?
check help-mentions-run 0 $rc '^  run SCRIPT\.lua \[ARGS\.\.\.\]' out

# Ctrl-C: a pure-Lua loop (the hook) and a long sim:step (the stop flag)
# (kill, not timeout: timeout signals its whole process group as well, and a
# second Ctrl-C kills at once, as under lua.c)
printf 'print("started")\nio.stdout:flush()\nlocal x = 0\nwhile true do\n  x = x + 1\nend\n' >loop.lua
"$orr_abs" run loop.lua >out 2>&1 &
pid=$!
for _ in $(seq 100); do grep -q started out 2>/dev/null && break; sleep 0.1; done
sleep 0.2
kill -INT $pid; wait $pid; rc=$?
check ctrl-c-lua-loop 130 $rc '^loop\.lua:[4-6]: interrupted$' out
cat >longstep.lua <<'EOF'
local orrery = require "orrery"
local sim <close> = orrery.simulation{ bodies = orrery.ic.plummer{ n = 2048 }, backend = "cpu" }
print("started")
io.stdout:flush()
sim:step(1000000)
EOF
# wait for the kernel build (cached after the first run) before the signal
"$orr_abs" run longstep.lua >out 2>&1 &
pid=$!
for _ in $(seq 100); do grep -q started out 2>/dev/null && break; sleep 0.1; done
sleep 0.3
kill -INT $pid; wait $pid; rc=$?
check ctrl-c-step 130 $rc '^longstep\.lua:5: interrupted$' out
# SIGTERM (kill's default) stops a run like Ctrl-C, its movie finished (exit 143)
cat >termmovie.lua <<'EOF'
local orrery = require "orrery"
local sim = orrery.simulation{ bodies = orrery.ic.plummer{ n = 256, seed = 1 }, dt = 1 / 1024,
  backend = "cpu" }
print("started")
io.stdout:flush()
sim:run{ steps = 10000000, render_every = 20, render = { movie = "term.mp4", width = 64, height = 64 } }
EOF
rm -f term.mp4*
"$orr_abs" run termmovie.lua >out 2>&1 &
pid=$!
for _ in $(seq 100); do grep -q started out 2>/dev/null && break; sleep 0.1; done
sleep 1
kill -TERM $pid; wait $pid; rc=$?
if [ -s term.mp4 ] && [ -z "$(ls term.mp4.tmp.* 2>/dev/null)" ]; then
  check sigterm-movie-finished 143 $rc '^termmovie\.lua:6: interrupted$' out
else
  bad "sigterm-movie-finished: exit $rc, $(ls term.mp4* 2>&1)"
fi
# SIGTERM (or Ctrl-C) as the script has ended, while its movie (a
# simulation it left open) is being finished: the movie is finished all
# the same (the signal noted, not acted on), then "interrupted" and exit
# 143; before, the default action ended the process and left the movie's
# temporary file
if command -v ffprobe >/dev/null; then
  cat >endmovie.lua <<'EOF'
local orrery = require "orrery"
local sim = orrery.simulation{ bodies = orrery.ic.plummer{ n = 256, seed = 1 }, backend = "cpu" }
for i = 1, 40 do sim:step(); sim:render{ movie = "end.mp4", width = 1536, height = 1536, crf = 0 } end
io.open("ready", "w"):close()
EOF
  rm -f end.mp4* ready
  "$orr_abs" run endmovie.lua >out 2>&1 &
  pid=$!
  for _ in $(seq 600); do [ -f ready ] && break; sleep 0.05; done
  sleep 0.03
  kill -TERM $pid; wait $pid; rc=$?
  frames=$(ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=nb_read_frames \
    -of csv=p=0 end.mp4 2>/dev/null)
  if [ "${frames:-0}" -eq 40 ] && [ -z "$(ls end.mp4.tmp.* 2>/dev/null)" ]; then
    check sigterm-as-the-movie-is-finished 143 $rc '^(endmovie\.lua:[0-9]+: )?interrupted$' out
  else
    bad "sigterm-as-the-movie-is-finished: exit $rc, end.mp4 frames '${frames}', $(ls end.mp4* 2>&1)"
    sed 's/^/    /' out
  fi
fi

# the energy log: columns on stdout, nothing on stderr in a pipe
cat >log.lua <<'EOF'
local orrery = require "orrery"
local sim <close> = orrery.simulation{ bodies = orrery.ic.plummer{ n = 256 }, backend = "cpu" }
sim:run{ steps = 20, every = 5 }
EOF
"$orr_abs" run log.lua >out 2>err; rc=$?
check log-header 0 $rc '^ +step +t +E +dE/E0 +\|P\| +Q +steps/s$' out
[ "$(wc -l <out)" -eq 6 ] && ok log-lines || bad "log-lines: $(wc -l <out) lines"
[ ! -s err ] && ok no-progress-in-pipe || { bad no-progress-in-pipe; sed 's/^/    /' err; }
# scripts/core_collapse.lua stopped at T_MAX before any collapse says so
# (no t_cc), and a second run goes on from its checkpoint
"$orr_abs" run "$here/../scripts/core_collapse.lua" 128 2 1 double cc.ckpt.hdf5 >out 2>err; rc=$?
check core-collapse-not-yet 0 $rc '^no core collapse by t = 2\.00 \([0-9.]+ t_rh\); at t = [12]\.00' out
# each line ends with the groups formed since the line before, then the wall time
check core-collapse-formed-column 0 $rc '^ +2\.00( +[-+0-9.e]+){11} +[0-9]+ +[0-9.]+$' out
"$orr_abs" run "$here/../scripts/core_collapse.lua" 128 3 1 double cc.ckpt.hdf5 >out 2>err; rc=$?
check core-collapse-resumed 0 $rc '^resumed from cc\.ckpt\.hdf5 at t = 2\.00$' out
# with SOFTENING the softened run of earlier releases (no binaries regularised)
"$orr_abs" run "$here/../scripts/core_collapse.lua" 64 2 1 double "" 1.5 1e-4 >out 2>err; rc=$?
check core-collapse-softened 0 $rc '^ +2\.00 +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +-?[0-9.]+e-0[5-9] +0 ' out
"$orr_abs" run "$here/../scripts/core_collapse.lua" 64 2 1 double "" 1.5 -1 >out 2>err; rc=$?
check core-collapse-bad-softening 1 $rc 'SOFTENING \(argument 7\) must be 0 or more, got -1' err
# ENCOUNTER (regularize.encounter): a run with it, and a bad one named
"$orr_abs" run "$here/../scripts/core_collapse.lua" 64 1 1 double "" 1.5 0 0.25 >out 2>err; rc=$?
check core-collapse-encounter 0 $rc '^no core collapse by t = 1\.00' out
"$orr_abs" run "$here/../scripts/core_collapse.lua" 64 1 1 double "" 1.5 0 2 >out 2>err; rc=$?
check core-collapse-bad-encounter 1 $rc "regularize's encounter must be in \[0, 1\] \(a fraction of r_close; got 2\)" err
# the bounce: a core far below a tenth of the start, then 50% above it, is a
# collapse where the run is softened; without softening only with a hard
# binary (10 kT) regularised to heat it (a noisy core is no bounce)
"$orr_abs" run "$here/../scripts/core_collapse.lua" 64 1 1 double ccb.ckpt.hdf5 >out 2>err
echo "0.001 0.5 100 0" >ccb.ckpt.hdf5.best
"$orr_abs" run "$here/../scripts/core_collapse.lua" 64 2 1 double ccb.ckpt.hdf5 >out 2>err; rc=$?
check core-collapse-no-bounce-without-binary 0 $rc '^no core collapse by t = 2\.00 \([0-9.]+ t_rh\); at t = 0\.50 \([0-9.]+ t_rh\) the smallest core radius 0\.00100' out
"$orr_abs" run "$here/../scripts/core_collapse.lua" 64 1 1 double ccs.ckpt.hdf5 1.5 1e-4 >out 2>err
echo "0.001 0.5 100 0" >ccs.ckpt.hdf5.best
"$orr_abs" run "$here/../scripts/core_collapse.lua" 64 2 1 double ccs.ckpt.hdf5 1.5 1e-4 >out 2>err; rc=$?
check core-collapse-bounce-softened 0 $rc '^core collapse at t = 0\.50 \([0-9.]+ t_rh\); on to 1\.50 t_cc$' out
# arguments and checkpoints refused by name before any step, nothing lost:
# EVERY 0 (it printed t = 0 forever), a damaged .best (it crashed after an
# interval and left the .best empty), another N than the checkpoint's; a
# checkpoint without its .best is gone on from, not overwritten
"$orr_abs" run "$here/../scripts/core_collapse.lua" 64 2 0 >out 2>err; rc=$?
check core-collapse-bad-every 1 $rc 'EVERY \(argument 3\) must be a positive finite time, got 0' err
echo "0.01 3" >ccb.ckpt.hdf5.best
sum=$(md5sum ccb.ckpt.hdf5)
"$orr_abs" run "$here/../scripts/core_collapse.lua" 64 4 1 double ccb.ckpt.hdf5 >out 2>err; rc=$?
check core-collapse-bad-best 1 $rc "ccb\.ckpt\.hdf5\.best: expected the smallest core's radius, time and density" err
[ "$(md5sum ccb.ckpt.hdf5)" = "$sum" ] && [ "$(cat ccb.ckpt.hdf5.best)" = "0.01 3" ] &&
  ok core-collapse-bad-best-kept || bad core-collapse-bad-best-kept
"$orr_abs" run "$here/../scripts/core_collapse.lua" 128 4 1 double ccb.ckpt.hdf5 >out 2>err; rc=$?
check core-collapse-other-n 1 $rc 'N \(argument 1\) is 128, but ccb\.ckpt\.hdf5 was started with 64' err
rm ccb.ckpt.hdf5.best
"$orr_abs" run "$here/../scripts/core_collapse.lua" 64 3 1 double ccb.ckpt.hdf5 >out 2>err; rc=$?
check core-collapse-no-best 0 $rc '^resumed from ccb\.ckpt\.hdf5 at t = 2\.00 \(no \.best beside it' out
# ETA (the block steps' eta): shown in the header, a bad one named
"$orr_abs" run "$here/../scripts/core_collapse.lua" 64 1 1 double "" 1.5 0 0.05 0.02 >out 2>err; rc=$?
check core-collapse-eta 0 $rc '^core collapse: 64 equal-mass bodies, double on [a-z]+, eta 0\.02;' out
"$orr_abs" run "$here/../scripts/core_collapse.lua" 64 1 1 double "" 1.5 0 0.05 0 >out 2>err; rc=$?
check core-collapse-bad-eta 1 $rc 'ETA \(argument 9\) must be a positive number, got 0' err
# scripts/energy_law.lua: the law made from its energy passes its check, a
# Hermite run of it conserves energy, the mistaken law's jerk is named
"$orr_abs" run "$here/../scripts/energy_law.lua" 128 0.125 >out 2>err; rc=$?
if [ "$rc" -eq 0 ] && grep -q '^law:check: ok (41 separations' out &&
   grep -qE '^t = 0.125: [0-9]+ blocks of [0-9.]+ active bodies on average, dE/E0 = -?[0-9.]+e-(0[6-9]|1[0-9])' out &&
   grep -q "^law:check of a law with a mistake: force law 'power': the jerk snippet's g disagrees with df/d(d2) of the pair snippet by 0.5 (relative) at r = .* (ratio 2)$" out; then
  ok energy-law-script
else
  bad "energy-law-script: exit $rc"; sed 's/^/    /' out err | head -20
fi
# scripts/galactic_orbits.lua: milky_way passes its check, the star started
# at 220 km/s stays at 8 kpc (the field's circular speed, in kpc and Msun),
# energy holds, the satellite's runtime mass moves the star
"$orr_abs" run "$here/../scripts/galactic_orbits.lua" 0.1 >out 2>err; rc=$?
if [ "$rc" -eq 0 ] && grep -q '^milky_way: field:check ok' out &&
   grep -qE '^0.1 Gyr in 100 steps \([a-z]+\): \|dE/E0\| = [0-9.]+e-(0[6-9]|1[0-9])' out &&
   grep -qE '^  circular  R from  8\.000 to  8\.000 kpc, \|z\| up to 0\.000 kpc$' out &&
   grep -qE '^  tilted .*\|z\| up to [1-9]\.[0-9]+ kpc$' out &&
   grep -qE 'satellite switched on after 100 Myr: the circular star at R = 8\.(0[1-9]|[1-9])' out; then
  ok galactic-orbits-script
else
  bad "galactic-orbits-script: exit $rc"; sed 's/^/    /' out err | head -20
fi
# scripts/cluster_in_galaxy.lua: a cluster in the frame that follows it;
# after 100 Myr stars have left into the tails (more beyond twice the tidal
# radius than at the start), the centre has moved in from 8 kpc on its
# eccentric orbit, the galaxy's energy holds, and the PNG frames are
# written (the last one decodes to 800 x 800)
rm -rf cframes && mkdir cframes
"$orr_abs" run "$here/../scripts/cluster_in_galaxy.lua" 256 100 cframes >out 2>err; rc=$?
first=$(awk '$1 == "0.0" {print $4}' out); last=$(awk '$1 == "100.0" {print $4}' out)
if [ "$rc" -eq 0 ] && grep -qE '^cluster_in_galaxy: 256 stars, 20000 Msun, virial radius 12 pc, tidal radius 38\.5 pc' out &&
   [ -n "$first" ] && [ -n "$last" ] && [ "$last" -gt "$first" ] &&
   grep -qE '^  100\.0   7\.[0-9]{3} +[0-9]+ +[0-9]+ +-?[0-9.]+e-(0[7-9]|1[0-9])$' out &&
   [ "$(ls cframes | wc -l)" -eq 26 ] &&
   python3 -c 'import struct,sys; d=open(sys.argv[1],"rb").read(24); sys.exit(0 if d[:8]==b"\x89PNG\r\n\x1a\n" and struct.unpack(">II", d[16:24])==(800,800) else 1)' cframes/cluster_0025.png; then
  ok cluster-in-galaxy-script
else
  bad "cluster-in-galaxy-script: exit $rc"; sed 's/^/    /' out err | head -30
fi
# scripts/pythagorean.lua: orrery.fewbody on Burrau's problem; the m = 3
# body escapes to about 21.4 and the binary has a = 0.552, e = 0.9887
# (REBOUND's IAS15: 21.410-21.425, 0.5522-0.5526, 0.98869-0.98871)
"$orr_abs" run "$here/../scripts/pythagorean.lua" >out 2>err; rc=$?
check pythagorean-script 0 $rc '^escaper \(m = 3\) at 21\.4[0-3][0-9]{2} from the origin; binary a = 0\.552[2-6][0-9], e = 0\.98(869|870|871)[0-9]' out
# scripts/maxwell_ring.lua: the central body's cancelling pulls do not
# stall its block steps (104 blocks a turn of six, within 1.64e-5 of the
# rigid rotation, |dE/E0| 1.31e-7 on the CPU)
"$orr_abs" run "$here/../scripts/maxwell_ring.lua" 6 1 cpu >out 2>err; rc=$?
check maxwell-ring-script 0 $rc "^Maxwell's ring of 6 after 1 turn\(s\) \(t = 6\.2775\): [0-9]{2,3} blocks, the ring within [0-9.]+e-0[5-6] of the rigid rotation, \|dE/E0\| = [0-9.]+e-0[7-9]" out
# scripts/cluster_hermite.lua ends with six single block steps, the last
# line of them printed with its block's time and active stars
"$orr_abs" run "$here/../scripts/cluster_hermite.lua" 128 0.25 >out 2>err; rc=$?
check cluster-hermite-blocks 0 $rc '^  t = 0\.2[0-9]{11} +[0-9]+' out
[ "$(grep -cE '^  t = [0-9.]+ +[0-9]+' out)" -eq 6 ] && ok cluster-hermite-six-blocks ||
  { bad "cluster-hermite-six-blocks"; sed 's/^/    /' out err; }
# on a terminal (script(1) gives the command a pty) the bar shows, with ETA
if command -v script >/dev/null 2>&1; then
  cat >bar.lua <<'EOF'
local orrery = require "orrery"
local sim <close> = orrery.simulation{ bodies = orrery.ic.plummer{ n = 1024 }, backend = "cpu" }
sim:run{ steps = 60 }
EOF
  script -qec "env -u CI $orr_abs run bar.lua" /dev/null >out 2>&1; rc=$?
  check progress-on-tty 0 $rc 'ETA [0-9]+:[0-9]{2}' out
  cat >nobar.lua <<'EOF'
local orrery = require "orrery"
local sim <close> = orrery.simulation{ bodies = orrery.ic.plummer{ n = 1024 }, backend = "cpu" }
sim:run{ steps = 60, progress = false }
EOF
  script -qec "$orr_abs run nobar.lua" /dev/null >out 2>&1; rc=$?
  [ "$rc" -eq 0 ] && ! grep -q ETA out && ok progress-false || bad "progress-false: exit $rc"
  # an error or Ctrl-C during the run clears the bar first: the message
  # starts its own line (split at \r, its segment has no bar in it)
  cat >errbar.lua <<'EOF2'
local orrery = require "orrery"
local sim <close> = orrery.simulation{ bodies = orrery.ic.plummer{ n = 1024 }, backend = "cpu" }
local t0, sent = orrery._clock(), false
local function check(s, step)
  if orrery._clock() - t0 < 0.5 or sent then return end
  sent = true
  if arg[1] == "error" then error("boom") end
  os.execute("(sleep 0.2; kill -INT $PPID) &")   -- Ctrl-C, after system() returns
end
sim:run{ steps = 20000, on_step = check }
EOF2
  script -qec "env -u CI $orr_abs run errbar.lua error" /dev/null >out 2>&1; rc=$?
  tr '\r' '\n' <out >lines
  [ "$rc" -eq 1 ] && grep -q ETA lines && grep -qE $'^\e\\[Kerrbar\\.lua:7: boom$' lines &&
    ok progress-cleared-on-error || { bad "progress-cleared-on-error: exit $rc"; cat -v out | head -5; }
  script -qec "env -u CI $orr_abs run errbar.lua" /dev/null >out 2>&1; rc=$?
  tr '\r' '\n' <out >lines
  [ "$rc" -eq 130 ] && grep -q ETA lines && grep -qE $'^\e\\[Kerrbar\\.lua:10: interrupted$' lines &&
    ok progress-cleared-on-ctrl-c || { bad "progress-cleared-on-ctrl-c: exit $rc"; cat -v out | head -5; }
fi

# the auto-backend notice: once per run (only where there is no GPU)
cat >notice.lua <<'EOF'
local orrery = require "orrery"
local a <close> = orrery.simulation{ n = 4 }
local b <close> = orrery.simulation{ n = 4 }
print(a.backend)
EOF
"$orr_abs" run notice.lua >out 2>err; rc=$?
if grep -q '^cpu$' out; then
  [ "$rc" -eq 0 ] && [ "$(grep -c 'no usable GPU' err)" -eq 1 ] &&
    grep -qE '^orrery: no usable GPU \(.*\); using the CPU backend$' err &&
    ok auto-notice-once || { bad auto-notice-once; sed 's/^/    /' err; }
else
  # (what the tuning at creation said, orrery: note: lines, may be there)
  [ "$rc" -eq 0 ] && ! grep -v '^orrery: note: ' err | grep -q . && ok auto-no-notice-on-gpu ||
    { bad auto-no-notice-on-gpu; sed 's/^/    /' err; }
fi

# checkpoints from the outside: `orrery run --resume` continues a run to the
# same final state as one that never stopped; bad --resume; a checkpoint
# write that fails (ORRERY_TEST_WRITE_FAIL) keeps the previous file
cat >res.lua <<'EOF'
local orrery = require "orrery"
local sim <close> = orrery.resumed or orrery.simulation{
  bodies = orrery.ic.plummer{ n = 128, seed = 5 }, backend = "cpu" }
local stop, out = math.tointeger(tonumber(arg[1])), arg[2]
sim:run{ steps = stop - sim.steps, progress = false, checkpoint_every = 5,
  checkpoint = "res.ckpt.hdf5" }
print(sim:write(out))
EOF
"$orr_abs" run res.lua 20 full.txt >out 2>&1 &&
  "$orr_abs" run res.lua 12 part.txt >>out 2>&1 &&
  "$orr_abs" run --resume res.ckpt.hdf5 res.lua 20 resumed.txt >>out 2>&1; rc=$?
[ "$rc" -eq 0 ] && cmp -s full.txt resumed.txt && ! cmp -s full.txt part.txt &&
  ok resume-same-final-state || { bad "resume-same-final-state: exit $rc"; sed 's/^/    /' out; }
printf "orrery: --resume: orrery.restore: cannot read 'gone.hdf5': No such file or directory\n" >exp
expect resume-missing 1 exp -- "$orr_abs" run --resume gone.hdf5 res.lua 20 x.txt
"$orr_abs" run --resume >out 2>&1; rc=$?
check resume-without-file 2 $rc "run: --resume needs a checkpoint file" out
cat >atomic.lua <<'EOF'
local orrery = require "orrery"
local sim <close> = orrery.resumed or orrery.simulation{
  bodies = orrery.ic.plummer{ n = 32 }, backend = "cpu" }
sim:step(3)
sim:checkpoint("atomic.ckpt.hdf5")
EOF
"$orr_abs" run atomic.lua >out 2>&1 && cp atomic.ckpt.hdf5 atomic.before; rc=$?
printf "atomic.lua:5: cannot write 'atomic.ckpt.hdf5': simulated failure (ORRERY_TEST_WRITE_FAIL is set)\n" >exp
expect checkpoint-write-fails 1 exp -- env ORRERY_TEST_WRITE_FAIL=1 "$orr_abs" run --resume atomic.ckpt.hdf5 atomic.lua
[ "$rc" -eq 0 ] && cmp -s atomic.ckpt.hdf5 atomic.before && [ -z "$(ls | grep '\.tmp\.')" ] &&
  ok checkpoint-kept-after-failure || bad "checkpoint-kept-after-failure: exit $rc; $(ls)"
printf 'print(require("orrery").resumed.steps)\n' >steps.lua
"$orr_abs" run --resume atomic.ckpt.hdf5 steps.lua >out 2>&1; rc=$?
check checkpoint-still-readable 0 $rc '^3$' out

# frames written in the background: the bytes written on the caller's
# thread (ORRERY_FRAME_THREADS=0), all on disk when the script ends (a
# simulation never closed: the end of the script flushes it); a frame that
# cannot be written fails the run, naming the file, at the end of the
# script or, its simulation collected, on stderr at once (exit 1 at the end)
cat >frames.lua <<'EOF'
local orrery = require "orrery"
sim = orrery.simulation{ bodies = orrery.ic.plummer{ n = 3000, seed = 3 }, backend = "cpu" }
sim:run{ steps = 12, progress = false, render_every = 2,
  render = { path = arg[1] .. "/f_%02d.png", width = 200, height = 150 } }
for k = 1, 6 do
  sim:step(1)
  sim:render{ path = arg[1] .. "/g_%02d.png", axis = "xz", width = 96, height = 64, log = false }
end
EOF
ORRERY_FRAME_THREADS=0 "$orr_abs" run frames.lua sync >out 2>&1 &&
  "$orr_abs" run frames.lua bg >>out 2>&1 &&
  ORRERY_FRAME_THREADS=5 "$orr_abs" run frames.lua bg5 >>out 2>&1; rc=$?
[ "$rc" -eq 0 ] && [ "$(ls sync | wc -l)" -eq 13 ] && diff -r sync bg >/dev/null &&
  diff -r sync bg5 >/dev/null && ok frames-background-same-bytes ||
  { bad "frames-background-same-bytes: exit $rc"; sed 's/^/    /' out; ls sync bg | head; }
ORRERY_FRAME_THREADS=x "$orr_abs" run frames.lua bad >out 2>&1; rc=$?
check frame-threads-invalid 1 $rc 'ORRERY_FRAME_THREADS must be an integer from 0 to 16 \(got "x"\)' out
: >plain
cat >frame_fail.lua <<'EOF'
local orrery = require "orrery"
if arg[1] == "gc" then
  do
    local s = orrery.simulation{ n = 64, backend = "cpu" }
    s:render("plain/gc.png")
  end
  collectgarbage()
  collectgarbage()
  print("after the collection")
else
  sim = orrery.simulation{ n = 64, backend = "cpu" }
  sim:render("plain/end.png")
  print("queued")
end
EOF
printf "orrery: cannot write 'plain/end.png': 'plain' is not a directory (a frame written in the background)\n" >exp
expect frame-fails-at-script-end 1 exp -- "$orr_abs" run frame_fail.lua
grep -q '^queued$' "$tmp/stdout" && ok frame-fails-after-script || bad frame-fails-after-script
printf "orrery: cannot write 'plain/gc.png': 'plain' is not a directory (a frame written in the background)\n" >exp
expect frame-fails-when-collected 1 exp -- "$orr_abs" run frame_fail.lua gc
grep -q '^after the collection$' "$tmp/stdout" && ok frame-fails-script-goes-on ||
  bad frame-fails-script-goes-on

# os.exit with frames still being written: every frame on disk first (the
# bytes of frames written at once, no temporary left), with or without
# closing the state; a frame that cannot be written is printed once and
# makes the exit status 1 (a status the script gave that is not 0 stays);
# a full disk names the file and the system's reason
cat >frame_exit.lua <<'EOF'
-- arg[1]: directory, arg[2]: how the script ends, arg[3]: frames
local orrery = require "orrery"
sim = orrery.simulation{ bodies = orrery.ic.plummer{ n = 2000, seed = 5 }, backend = "cpu" }
for k = 1, tonumber(arg[3] or 3) do
  sim:render{ path = arg[1] .. "/f_%02d.png", width = 1024, height = 1024 }
end
print("queued")
if arg[2] == "exit" then os.exit()
elseif arg[2] == "close" then os.exit(true, true)
elseif arg[2] == "code3" then os.exit(3)
elseif arg[2] == "false" then os.exit(false) end
EOF
no_temps() { [ -z "$(ls -a "$@" 2>/dev/null | grep '\.tmp\.')" ]; }
ORRERY_FRAME_THREADS=0 "$orr_abs" run frame_exit.lua exit_sync exit >out 2>&1; rc=$?
[ "$rc" -eq 0 ] && [ "$(ls exit_sync | wc -l)" -eq 3 ] && ok frames-exit-reference ||
  { bad "frames-exit-reference: exit $rc"; sed 's/^/    /' out; }
for how in exit close; do
  "$orr_abs" run frame_exit.lua "exit_$how" "$how" >out 2>err; rc=$?
  [ "$rc" -eq 0 ] && [ ! -s err ] && diff -r exit_sync "exit_$how" >/dev/null && no_temps "exit_$how" &&
    ok "frames-written-at-os-exit-$how" ||
    { bad "frames-written-at-os-exit-$how: exit $rc; $(ls -a "exit_$how" | tr '\n' ' ')"; sed 's/^/    /' err; }
done
printf "orrery: cannot write 'exit_fail/f_00.png': simulated failure (ORRERY_TEST_WRITE_FAIL is set) (a frame written in the background)\n" >exp
for how in exit close code3; do
  want=1; [ "$how" = code3 ] && want=3
  expect "frame-fails-at-os-exit-$how" "$want" exp -- env ORRERY_TEST_WRITE_FAIL=1 "$orr_abs" run frame_exit.lua exit_fail "$how" 1
  [ "$(wc -l <"$tmp/stderr")" -eq 1 ] && [ ! -e exit_fail/f_00.png ] && no_temps exit_fail &&
    ok "frame-fails-at-os-exit-$how-once" ||
    { bad "frame-fails-at-os-exit-$how-once"; sed 's/^/    /' "$tmp/stderr"; }
done
"$orr_abs" run frame_exit.lua exit_false false 1 >out 2>&1; rc=$?
check os-exit-false 1 $rc '^queued$' out
printf "orrery: cannot write 'full/f_00.png': No space left on device (a frame written in the background)\n" >exp
expect frame-disk-full 1 exp -- env ORRERY_TEST_DISK_FULL=1 "$orr_abs" run frame_exit.lua full end 1
[ ! -e full/f_00.png ] && no_temps full && ok frame-disk-full-nothing-left ||
  bad "frame-disk-full-nothing-left: $(ls -a full | tr '\n' ' ')"

# movies: a simulation never closed has its movie finished at the end of
# the script, at os.exit (with or without closing the state) and when it
# is collected (ffprobe counts its frames; no temporary left); a movie that
# cannot be written fails the run, naming the file; a full disk too
if command -v ffprobe >/dev/null 2>&1; then
  cat >movie_end.lua <<'EOF'
-- arg[1]: the movie, arg[2]: how the script ends, arg[3]: frames
local orrery = require "orrery"
sim = orrery.simulation{ bodies = orrery.ic.plummer{ n = 500, seed = 5 }, backend = "cpu" }
for k = 1, tonumber(arg[3] or 4) do sim:step(1) sim:render{ movie = arg[1], width = 64, height = 48 } end
if arg[2] == "exit" then os.exit()
elseif arg[2] == "close" then os.exit(true, true)
elseif arg[2] == "gc" then sim = nil collectgarbage() collectgarbage() print("collected") end
EOF
  frames_of() { ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=nb_read_frames -of csv=p=0 "$1" 2>&1; }
  for how in end exit close gc; do
    "$orr_abs" run movie_end.lua "movies/$how.mp4" "$how" >out 2>err; rc=$?
    [ "$rc" -eq 0 ] && [ ! -s err ] && [ "$(frames_of "movies/$how.mp4")" = 4 ] && no_temps movies &&
      ok "movie-finished-at-$how" ||
      { bad "movie-finished-at-$how: exit $rc, frames $(frames_of "movies/$how.mp4")"; sed 's/^/    /' err; }
  done
  printf "orrery: cannot write 'plain/m.mp4': 'plain' is not a directory (a frame written in the background)\n" >exp
  expect movie-fails-at-script-end 1 exp -- "$orr_abs" run movie_end.lua plain/m.mp4 end 1
  printf "orrery: cannot write 'movies/full.mp4': No space left on device (a frame written in the background)\n" >exp
  expect movie-disk-full 1 exp -- env ORRERY_TEST_DISK_FULL=1 "$orr_abs" run movie_end.lua movies/full.mp4 exit 1
  [ ! -e movies/full.mp4 ] && no_temps movies && ok movie-disk-full-nothing-left ||
    bad "movie-disk-full-nothing-left: $(ls -a movies | tr '\n' ' ')"
  # scripts/galaxy_collision.lua movie=FILE: a frame every 4 steps, 0 to 40
  "$orr_abs" run "$here/../scripts/galaxy_collision.lua" 256 40 movie=gc.mp4 >out 2>err; rc=$?
  [ "$rc" -eq 0 ] && grep -q '^wrote gc.mp4$' out && [ "$(frames_of gc.mp4)" = 11 ] &&
    ok galaxy-collision-movie ||
    { bad "galaxy-collision-movie: exit $rc, frames $(frames_of gc.mp4)"; sed 's/^/    /' out err; }
  # movie= with no name: refused before the run, not after it
  "$orr_abs" run "$here/../scripts/galaxy_collision.lua" 256 40000 movie= >out 2>&1; rc=$?
  check galaxy-collision-movie-empty 1 $rc "galaxy_collision\.lua:[0-9]+: 'movie=' needs a name after '=' \(e\.g\. movie=run\.mp4\)$" out
else
  echo "[  SKIPPED ] movies: ffprobe (Debian's ffmpeg) is not installed"; skip=$((skip + 1))
fi

# a script in a deep directory, run by a relative path of more than Lua's
# LUA_IDSIZE (60) bytes: every message names it (and the files it loads) the
# way the user wrote it, never cut to "...tail": positions inside pcall (an
# argument error from C, a library error, Lua's own run-time error, error()
# in a dofile'd and a require'd file, a coroutine), debug.traceback, a force
# law's origin, a syntax error, and the run-time error with its traceback
deep=deep/$(printf 'd%.0s' $(seq 40))/$(printf 'e%.0s' $(seq 40))/scripts
mkdir -p "$deep" work/here
rel=../../$deep
printf 'return function() error("from helper") end\n' >"$deep/helper.lua"
printf 'local M = {}\nfunction M.f() nope() end\nreturn M\n' >"$deep/deepmod.lua"
cat >"$deep/deep.lua" <<'EOF'
local orrery = require "orrery"
local sim <close> = orrery.simulation{ n = 4, backend = "cpu" }
print(select(2, pcall(function() sim:step("x") end)))
print(select(2, pcall(function() orrery.simulation{ n = 4, stpes = 1 } end)))
print(select(2, pcall(function() local t; return t.x end)))
local dir = arg[0]:match("^(.*/)")
print(select(2, pcall(dofile(dir .. "helper.lua"))))
package.path = dir .. "?.lua"
print(select(2, pcall(require("deepmod").f)))
print(select(2, coroutine.resume(coroutine.create(function() error("in a coroutine") end))))
print((debug.traceback("here"):gsub("\n", " | ")))
print(orrery.force{ name = "deep", pair = "f = r2;" }.origin)
error("boom")
EOF
{
  echo "$rel/deep.lua:3: bad argument #1 to 'step' (number expected, got string)"
  echo "$rel/deep.lua:4: orrery.simulation: unknown key 'stpes'"
  echo "$rel/deep.lua:5: attempt to index a nil value (local 't')"
  echo "$rel/helper.lua:1: from helper"
  echo "$rel/deepmod.lua:2: attempt to call a nil value (global 'nope')"
  echo "$rel/deep.lua:10: in a coroutine"
  printf 'here | stack traceback: | \t%s/deep.lua:11: in main chunk\n' "$rel"
  echo "$rel/deep.lua:12"
} >exp.out
printf '%s/deep.lua:13: boom\nstack traceback:\n\t[C]: in function '"'error'"'\n\t%s/deep.lua:13: in main chunk\n' "$rel" "$rel" >exp
expect deep-path-runtime-error 1 exp -- env -C work/here "$orr_abs" run "$rel/deep.lua"
cmp -s "$tmp/stdout" exp.out && ok deep-path-messages ||
  { bad deep-path-messages; diff exp.out "$tmp/stdout" | sed 's/^/    /'; }
printf 'local x = 1\nlocal y = = 2\n' >"$deep/syntax.lua"
printf "%s/syntax.lua:2: unexpected symbol near '='\n" "$rel" >exp
expect deep-path-syntax-error 1 exp -- env -C work/here "$orr_abs" run "$rel/syntax.lua"
printf 'local orrery = require "orrery"\nreturn orrery.forc{ name = "x", pair = "f = r2;" }\n' >"$deep/law.lua"
printf "orrery: bench: --force %s/law.lua: %s/law.lua:2: attempt to call a nil value (field 'forc')\n" "$rel" "$rel" >exp
expect deep-path-law-script 1 exp -- env -C work/here "$orr_abs" bench --backend cpu --n 64 --steps 1 --force "$rel/law.lua"

# a law defined in a script whose path is over 1000 bytes long (five
# directories of 200): its origin, a snippet error found before compiling
# and the host compiler's error name the path in full, never cut at 255
# bytes (the origin's old buffer) or 1024 (an error message's)
long=$tmp
for c in a b c d e; do long=$long/$(printf "$c%.0s" $(seq 200)); done
mkdir -p "$long"
cat >"$long/law.lua" <<'EOF'
local orrery = require "orrery"
local law = orrery.force{ name = "nc", pair = "f = mj * nope;" }
print(law.origin)
print(select(2, pcall(orrery.force, { name = "bad", pair = "f = mj;\n}" })))
local sim = orrery.simulation{ n = 8, backend = "cpu", force = law }
EOF
{
  echo "$long/law.lua:2"
  echo "$long/law.lua:4: orrery.force: $long/law.lua:4 (force 'bad', pair):2: '}' without a matching '{'"
} >exp.out
"$orr_abs" run "$long/law.lua" >out 2>err; rc=$?
cmp -s out exp.out && ok long-path-law-origin ||
  { bad long-path-law-origin; diff exp.out out | cut -c1-400 | sed 's/^/    /'; }
want="$long/law.lua:5: orrery.simulation: force law 'nc' (defined at $long/law.lua:2): host C compiler failed on orrery_gen.c: $long/law.lua:2 (force 'nc', pair):1:10: error: "
if [ "$rc" -eq 1 ] && head -1 err | grep -qF -- "$want"; then ok long-path-law-compile-error
else bad "long-path-law-compile-error: exit $rc (want 1), stderr:"; head -3 err | cut -c1-600 | sed 's/^/    /'; fi

# a force law whose snippet crashes the process on the CPU (a read out of
# bounds: SIGSEGV in an OpenMP thread): the law and the script line that
# defined it are named before the process dies of the signal (128 + 11), in
# a script and behind `--force LAW.lua` alike (crashes: runs a command in
# a shell of its own, which says "Segmentation fault" to /dev/null, without
# a core dump, and echoes its exit status)
crashes() { bash -c 'ulimit -c 0; "$@" >out 2>err; echo $?' crashes "$@" 2>/dev/null; }
cat >crash.lua <<'EOF'
local orrery = require "orrery"
local law = orrery.force{ name = "crash", pair = "f = mj * *(volatile real *)16;" }
local sim = orrery.simulation{ n = 64, backend = "cpu", force = law }
sim:step(1)
print("not reached")
EOF
printf 'local orrery = require "orrery"\n\nreturn orrery.force{ name = "crash", pair = "f = mj * *(volatile real *)16;" }\n' >crash_law.lua
for how in run bench; do
  if [ "$how" = run ]; then rc=$(crashes "$orr_abs" run crash.lua); at=crash.lua:2
  else rc=$(crashes "$orr_abs" bench --backend cpu --n 64 --steps 1 --force crash_law.lua); at=crash_law.lua:3; fi
  msg="orrery: SIGSEGV (invalid memory access) in the CPU code of force law 'crash' (defined at $at): its snippets crashed the process (a read or write out of bounds, a bad pointer?)"
  if [ "$rc" = 139 ] && grep -qxF -- "$msg" err && [ "$(grep -c SIGSEGV err)" = 1 ] &&
     ! grep -q "not reached" out; then ok "crashing-law-named-$how"
  else bad "crashing-law-named-$how: exit $rc (want 139), stderr:"; sed 's/^/    /' err | head -5; fi
done

# pycheck PYTHON SCRIPT [EXTRA_LINES]: a Python check of tests/ run on
# the orrery binary, its lines shown and its closing "[ RESULT   ]" line
# counted like the Lua files' (EXTRA_LINES: a grep -E pattern of other
# lines to show)
pycheck() {
  local py=$1 script=$2 extra=${3:-}
  "$py" "$here/$script" "$orr_abs" >out 2>&1; local rc=$?
  grep -E "^(\[|    ${extra:+|$extra})" out
  local line p f s
  line=$(grep -E '^\[ RESULT   \] ' out | tail -1)
  p=$(echo "$line" | sed -n 's/.*: \([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped$/\1/p')
  f=$(echo "$line" | sed -n 's/.*: \([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped$/\2/p')
  s=$(echo "$line" | sed -n 's/.*: \([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped$/\3/p')
  pass=$((pass + ${p:-0})); fail=$((fail + ${f:-0})); skip=$((skip + ${s:-0}))
  if [ -z "$line" ] || { [ "$rc" -ne 0 ] && [ "${f:-0}" -eq 0 ]; }; then
    bad "$script: exit $rc"; sed 's/^/    /' out | tail -30
  fi
}
# venv_python NAME: .venv-NAME's python (made by tools/deps.sh), else Debian's
venv_python() {
  if [ -x "$here/../.venv-$1/bin/python" ]; then echo "$here/../.venv-$1/bin/python"
  else echo /usr/bin/python3; fi
}

# the snapshots open in yt and h5py (Debian's python3-yt and python3-h5py)
pycheck /usr/bin/python3 test_yt.py
# the Hermite integrator against REBOUND's IAS15 (REBOUND from PyPI in
# .venv-rebound; skipped without)
pycheck "$(venv_python rebound)" test_rebound.py '  '
# physical units as pynbody reads them (pynbody from PyPI in .venv-pynbody;
# skipped without)
pycheck "$(venv_python pynbody)" test_pynbody.py
# the field milky_way against galpy's MWPotential2014 (galpy from PyPI in
# .venv-galpy; skipped without)
pycheck "$(venv_python galpy)" test_galpy.py '  '

summary
