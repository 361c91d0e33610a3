#!/bin/bash
. .device/env.sh
export NCCL_NVLS_ENABLE=0
export ORRERY_CACHE_DIR=/tmp/oc7; mkdir -p $ORRERY_CACHE_DIR
for r in 1 2; do for b in build/orrery-old build/orrery; do
  echo "-- $b"
  timeout 40 $b bench --precision float --n 16384,65536 --block 512 --unroll 8 --csv 2>/dev/null | tail -2
  timeout 40 $b bench --precision float --n 262144 --block 256 --unroll 32 --ranges 6 --csv 2>/dev/null | tail -1
done; done
timeout 300 make gpu-test 2>&1 | grep -E "FAIL|tests:|RESULT|blowup" | head -20
