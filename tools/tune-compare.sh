#!/usr/bin/env bash
# tune-compare: the budgeted tuner against an exhaustive search on the GPU
# machine (issue 5).  For each precision and N: a budgeted tune from a cold
# kernel cache and store (what a first start does), an exhaustive tune (its
# own cache and store), then both winners re-timed back to back, alternating
# three times (orrery bench, whole steps), and the ratio.  One table row per
# case on stdout; logs in $OUT.
#   . .device/env.sh && PRECS="float double" NS=16384,65536,262144 bash tools/tune-compare.sh
set -u
orr=build/orrery
out=${OUT:-gpu-out}; mkdir -p "$out"
# "winner (tuned) for N<=X: block B unroll U split S threads T: MS ms, ...; K tried, R rejected, SEC s"
winner() { sed -n 's/.*winner ([a-z]*) for N<=[0-9]*: block \([0-9]*\) unroll \([0-9]*\) split \([0-9]*\) threads [0-9]*: \([0-9.e+-]*\) ms.*; \([0-9]*\) tried, \([0-9]*\) rejected, \([0-9.]*\) s/\1 \2 \3 \4 \5 \6 \7/p' "$1" | tail -1; }
ms_of() { "$orr" bench --precision "$1" --n "$2" --block "$3" --unroll "$4" --split "$5" --csv 2>/dev/null | tail -1 | cut -d, -f8; }
med3() { printf '%s\n' "$@" | sort -g | sed -n 2p; }
echo "| precision | N | budgeted pick (block/unroll/split) | tried | tuning s | exhaustive best | tried | tuning s | budgeted ms/step | exhaustive ms/step | budgeted / best |"
echo "|---|---:|---|---:|---:|---|---:|---:|---:|---:|---:|"
for p in ${PRECS:-float double}; do
  for n in $(echo "${NS:-16384,65536,262144}" | tr , ' '); do
    B=$(mktemp -d) E=$(mktemp -d)
    ORRERY_CACHE_DIR=$B "$orr" tune --precision "$p" --n "$n" > "$out/tune-budget-$p-$n.txt" 2>&1
    ORRERY_CACHE_DIR=$E "$orr" tune --precision "$p" --n "$n" --exhaustive > "$out/tune-exh-$p-$n.txt" 2>&1
    read -r bb bu bs bms bk br bsec <<< "$(winner "$out/tune-budget-$p-$n.txt")"
    read -r eb eu es ems ek er esec <<< "$(winner "$out/tune-exh-$p-$n.txt")"
    if [ -z "${bb:-}" ] || [ -z "${eb:-}" ]; then echo "| $p | $n | (no winner: see $out) |"; continue; fi
    a=() b=()
    for r in 1 2 3; do
      a+=("$(ORRERY_CACHE_DIR=$E ms_of "$p" "$n" "$bb" "$bu" "$bs")")
      b+=("$(ORRERY_CACHE_DIR=$E ms_of "$p" "$n" "$eb" "$eu" "$es")")
    done
    ma=$(med3 "${a[@]}") mb=$(med3 "${b[@]}")
    ratio=$(awk -v x="$ma" -v y="$mb" 'BEGIN { printf "%.3f", x / y }')
    echo "| $p | $n | $bb/$bu/$bs | $bk | $bsec | $eb/$eu/$es | $ek | $esec | $ma | $mb | $ratio |"
    rm -rf "$B" "$E"
  done
done
