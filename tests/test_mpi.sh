#!/usr/bin/env bash
# test_mpi: the ranks of a distributed run as mpirun starts them.  Checks that
# nothing of MPI is linked into build/orrery or the comm test (MPI is opened
# with dlopen), then runs build/tests/test_comm under `mpirun --oversubscribe`
# with 2 and 3 ranks (its launched mode: rank/size/local rank, allgatherv,
# allgather, sum, max, bcast with exact values, finalize).  Each mpirun run is
# one test here: it passes when mpirun exits 0 within the time limit and every
# rank printed "[  PASSED  ] K test(s)." with the same K and no rank printed a
# failure.  A failing run's output is shown, indented and tagged
# "[1,RANK]<stdout>:", so tests/run.sh counts only this script's closing lines.  Without mpirun the
# runs count as one skipped test.  (The one-rank mode and the error of a
# launched process without MPI are test_comm's plain run, in `make test`.)
#   bash tests/test_mpi.sh BUILD_DIR
set -u
build=${1:-build}
bin="$build/tests/test_comm"
pass=0 fail=0 skip=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ok() { echo "[       OK ] $1"; pass=$((pass + 1)); }
bad() { echo "[  FAILED  ] $1"; fail=$((fail + 1)); }

# ---- nothing of MPI linked ---------------------------------------------------
for b in "$build/orrery" "$bin"; do
  [ -x "$b" ] || continue
  libs=$(ldd "$b" 2>&1 | grep -iE 'mpi|open-(pal|rte)|pmix')
  if [ -z "$libs" ]; then ok "not-linked: $(basename "$b") links no MPI library"
  else bad "not-linked: $(basename "$b") links: $libs"; fi
done

# ---- N ranks -----------------------------------------------------------------
if [ ! -x "$bin" ]; then
  bad "mpi: $bin not built"
elif ! command -v mpirun >/dev/null; then
  echo "mpi: mpirun not found (Debian: openmpi-bin): the multi-rank runs are skipped"
  skip=$((skip + 1))
else
  opts=(--oversubscribe --tag-output)
  [ "$(id -u)" = 0 ] && opts+=(--allow-run-as-root)
  for np in 2 3; do
    # Open MPI's session directory goes to TMPDIR: a private one, removed here.
    TMPDIR="$tmp" timeout 120 mpirun "${opts[@]}" -np "$np" "$bin" >"$tmp/out" 2>&1; rc=$?
    ranks=$(grep -cE '^\[[0-9]+,[0-9]+\]<std(out|err)>: ?\[  PASSED  \] [0-9]+ test' "$tmp/out")
    counts=$(sed -nE 's/^\[[0-9]+,[0-9]+\]<std(out|err)>: ?\[  PASSED  \] ([0-9]+) test.*/\2/p' \
             "$tmp/out" | sort -u)
    failed=$(grep -cE '\[  FAILED  \]|\[  ERROR   \]' "$tmp/out")
    if [ "$rc" -eq 0 ] && [ "$ranks" -eq "$np" ] && [ "$(echo "$counts" | wc -l)" -eq 1 ] &&
       [ "${counts:-0}" -gt 0 ] && [ "$failed" -eq 0 ]; then
      ok "mpirun -np $np: $counts test(s) passed on each of $np ranks"
    else
      why="exit $rc"; [ "$rc" -eq 124 ] && why="timed out after 120 s"
      bad "mpirun -np $np: $why, $ranks of $np ranks printed a summary, $failed failure line(s); output:"
      sed 's/^/    /' "$tmp/out"
    fi
  done
fi

echo "[==========] $((pass + fail)) test(s) run."
echo "[  PASSED  ] $pass test(s)."
[ "$skip" -eq 0 ] || echo "[  SKIPPED ] $skip test(s)."
[ "$fail" -eq 0 ] || echo "[  FAILED  ] $fail test(s), listed above."
[ "$fail" -eq 0 ]
