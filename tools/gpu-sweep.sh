#!/usr/bin/env bash
# gpu-sweep: a hand sweep of kernel configurations on the GPU machine (before
# the autotuner existed, and to check it): register blocking (ipt), block,
# unroll, ftz at large N; threads per body (split) at small N; and the SASS
# instruction mix of the inner loop.  Prints CSV rows; logs to $OUT.
#   . .device/env.sh && bash tools/gpu-sweep.sh
set -u
out=${OUT:-gpu-out}; mkdir -p "$out"
orr=build/orrery
export ORRERY_CACHE_DIR=${ORRERY_CACHE_DIR:-$(mktemp -d)}
row() { $orr bench --csv --steps ${STEPS:-10} "$@" 2>>"$out/sweep.err" | tail -n +2; }
{
  echo "n,backend,precision,variant,block,unroll,split,ms_per_step,interactions_per_s,gflops,max_rel_err,args"
  for n in 262144 65536; do
    for ipt in 1 2 4; do for b in 128 256; do for u in 4 8; do
      echo "$(row --n $n --ipt $ipt --block $b --unroll $u),ipt=$ipt"
    done; done; done
    echo "$(row --n $n --ipt 2 --block 128 --unroll 8 --ftz 0),ipt=2 ftz=0"
  done
  for n in 16384 4096; do
    for s in 2 4 8 16; do for ipt in 1 2; do
      echo "$(row --n $n --split $s --ipt $ipt --block 256 --unroll 4),ipt=$ipt"
    done; done
  done
  for ipt in 1 2 4; do echo "$(row --n 262144 --precision double --ipt $ipt --block 128 --unroll 4),ipt=$ipt"; done
} | tee "$out/sweep.csv"
for ipt in 1 4; do
  $orr compile --emit cubin --ipt $ipt --unroll 4 -o "$out/k$ipt.cubin" 2>/dev/null
  cuobjdump -sass "$out/k$ipt.cubin" | awk '/Function : _Z9orr_accelIf/{f=1} /Function : /&&!/orr_accelIf/{f=0} f' > "$out/accel$ipt.sass"
  echo "ipt=$ipt SASS of orr_accel<float>: $(grep -c MUFU.RSQ "$out/accel$ipt.sass") MUFU.RSQ, $(grep -c 'FFMA' "$out/accel$ipt.sass") FFMA, $(grep -c 'FMUL' "$out/accel$ipt.sass") FMUL, $(grep -c 'FADD' "$out/accel$ipt.sass") FADD, $(grep -c 'LDS' "$out/accel$ipt.sass") LDS, $(grep -cE '^ +/\*[0-9a-f]+\*/' "$out/accel$ipt.sass") instructions"
  rm -f "$out/k$ipt.cubin"
done
