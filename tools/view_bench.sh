#!/usr/bin/env bash
# view_bench: what the live view costs.  Runs scripts/galaxy_collision.lua
# N STEPS three ways, in turn, ROUNDS times: without the view ("off"), with
# --view and no page open ("idle"), and with --view and CLIENTS clients
# pulling every frame they can (tests/view_frame.py load: as a page does,
# the energy error included; every fifth client instead asks for the
# page's script, or goes without the token, as fast as it can) ("watched").
# The clients are Python threads in one process on the same machine.  Prints each run's steps/s (the
# median of its energy log's rates, the first two lines left out) and the
# CPU seconds the run's process used (its threads and the server's: on a
# machine shared with other work, a steadier measure than the wall clock),
# and the median of each way.
#   bash tools/view_bench.sh [BUILD] [N] [STEPS] [ROUNDS] [CLIENTS]
#   bash tools/view_bench.sh build 131072 400 3 1     (the GPU machine: the issue's bound)
set -u
build=${1:-build}; n=${2:-4096}; steps=${3:-300}; rounds=${4:-3}; clients=${5:-1}
orr=$(cd "$(dirname "$build/orrery")" && pwd)/orrery
here=$(cd "$(dirname "$0")/.." && pwd)
py=/usr/bin/python3
tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$tmp"' EXIT
script="$here/scripts/galaxy_collision.lua"

rate() {   # the median rate of the log lines (column 7) past the first two
  awk '$1 ~ /^[0-9]+$/ && NF >= 7 && $7 != "-" { n++; if (n > 2) print $7 }' "$1" | sort -g |
    awk '{ a[NR] = $1 } END { if (NR) print a[int((NR + 1) / 2)]; else print "nan" }'
}
declare -A all cpu
for r in $(seq "$rounds"); do
  for way in off idle watched; do
    opt=()
    [ "$way" != off ] && opt=(--view)
    (cd "$tmp" && $py -c "import resource, subprocess, sys
subprocess.run(sys.argv[1:])
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print('cpu %.2f' % (r.ru_utime + r.ru_stime), file=sys.stderr)" \
       "$orr" run "${opt[@]}" "$script" "$n" "$steps" >"$tmp/$way.out" 2>"$tmp/$way.err") &
    pid=$!
    lp=
    if [ "$way" = watched ]; then
      url=
      for _ in $(seq 600); do
        url=$(grep -oE 'http://127\.0\.0\.1:[0-9]+/\?token=[0-9a-f]{32}' "$tmp/$way.err" | head -1)
        [ -n "$url" ] && break
        sleep 0.1
      done
      $py "$here/tests/view_frame.py" "$url" load 100000 "$clients" >"$tmp/load" 2>&1 &
      lp=$!
    fi
    wait $pid
    [ -n "$lp" ] && kill $lp 2>/dev/null
    x=$(rate "$tmp/$way.out")
    c=$(sed -n 's/^cpu //p' "$tmp/$way.err")
    all[$way]="${all[$way]:-} $x"
    cpu[$way]="${cpu[$way]:-} $c"
    printf 'round %d %-8s %s steps/s, %s CPU s\n' "$r" "$way" "$x" "$c"
  done
done
for way in off idle watched; do
  med=$(echo ${all[$way]} | tr ' ' '\n' | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
  cmed=$(echo ${cpu[$way]} | tr ' ' '\n' | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
  printf '%-8s median %s steps/s (runs:%s), %s CPU s (runs:%s)\n' "$way" "$med" "${all[$way]}" \
    "$cmed" "${cpu[$way]}"
done
