#!/bin/bash
. .device/env.sh
export NCCL_NVLS_ENABLE=0
timeout 400 make gpu-test 2>&1 | grep -E "FAIL|tests:|RESULT" | head -20
