#!/usr/bin/env bash
# deps: installs the Debian packages orrery needs when they are missing (as
# root, with apt-get); otherwise prints the exact command to run.  Also checks
# for the CUDA toolkit headers (cuda.h, nvrtc.h, nccl.h under $CUDA_PATH;
# core/ranks/nccl.c takes NCCL's types from nccl.h and opens libnccl.so.2 at run
# time, never linked), and warns when NVRTC (libnvrtc.so.13) cannot be found where orrery looks for it: the
# CPU backend works without it, GPU compilation and its tests do not.
# FFmpeg's libraries (libavcodec with libx264, libavformat, libswscale,
# libavutil) write movies; ffmpeg's ffprobe and ffmpeg check them in the tests.
# Open MPI (openmpi-bin, libopenmpi-dev): core/ranks/comm.c is built against its
# <mpi.h> for the types only and opens libmpi.so.40 at run time, and the mpi
# test runs mpirun; a binary built here starts without MPI installed.
# REBOUND (PyPI, pinned) goes into .venv-rebound (python3-venv): the test
# that checks the Hermite integrator against another code uses it, and is
# skipped where it is absent (no network).  pynbody (PyPI, pinned) goes into
# .venv-pynbody the same way, for the test that reads snapshots' physical
# units with it (tests/test_pynbody.py), and galpy (PyPI, pinned) into
# .venv-galpy, for the test of the field milky_way (tests/test_galpy.py).
# The live view (sim:view, orrery run --view): libmicrohttpd serves it,
# libjs-three's three.min.js and OrbitControls.js are embedded at build
# time; chromium (headless) and python3-websocket (the DevTools protocol)
# run its browser test (tests/test_view.sh).
#   bash tools/deps.sh [fuzz]
# With "fuzz" (make fuzz, CI), also clang and libclang-rt-dev: libFuzzer and
# clang's sanitizer runtimes.  (make sanitize-test needs nothing more: GCC's
# ASan and UBSan runtimes come with build-essential.)
set -euo pipefail
pkgs=(build-essential pkg-config liblua5.4-dev libcmocka-dev libxxhash-dev libcjson-dev
      libhdf5-dev libpng-dev libavcodec-dev libavformat-dev libswscale-dev libavutil-dev ffmpeg
      python3-yt python3-h5py openmpi-bin libopenmpi-dev python3-venv
      libmicrohttpd-dev libjs-three chromium python3-websocket)
[ "${1:-}" = fuzz ] && pkgs+=(clang libclang-rt-dev)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    echo "deps: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}"
  else
    echo "deps: missing packages; run:" >&2
    echo "  sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
fi
here=$(cd "$(dirname "$0")/.." && pwd)
# venv NAME PACKAGE VERSION CHECK: PACKAGE==VERSION from PyPI into
# .venv-NAME (where import NAME fails), for the check named CHECK
venv() {
  local py="$here/.venv-$1/bin/python"
  if [ ! -x "$py" ] || ! "$py" -c "import $1" 2>/dev/null; then
    if /usr/bin/python3 -m venv "$here/.venv-$1" &&
       "$here/.venv-$1/bin/pip" install -q "$2==$3"; then
      echo "deps: $2 $3 in .venv-$1"
    else
      echo "deps: warning: $2 could not be installed from PyPI into .venv-$1:" \
           "$4 will be skipped" >&2
    fi
  fi
}
venv rebound rebound 5.2.2 test_rebound.py
venv pynbody pynbody 2.8.0 test_pynbody.py
venv galpy galpy 1.12.1 test_galpy.py
cuda=${CUDA_PATH:-/usr/local/cuda}
for h in cuda.h nvrtc.h nccl.h; do
  if [ ! -f "$cuda/include/$h" ]; then
    what="the CUDA toolkit (headers)"
    [ "$h" = nccl.h ] && what="NCCL's header (NVIDIA's Debian repository, package libnccl-dev, or the toolkit's copy)"
    echo "deps: $cuda/include/$h not found: install $what or set CUDA_PATH" >&2
    exit 1
  fi
done
if ! ldconfig -p 2>/dev/null | grep -q 'libnvrtc\.so\.13 ' &&
   [ ! -e "$cuda/lib64/libnvrtc.so.13" ] && [ ! -e "$cuda/lib/libnvrtc.so.13" ]; then
  echo "deps: warning: NVRTC (libnvrtc.so.13) not found in the loader's paths or $cuda/lib64:" \
       "kernel compilation for the GPU (orrery compile, the NVRTC tests) needs the CUDA 13" \
       "toolkit's NVRTC (NVIDIA's Debian repository, package cuda-nvrtc-13-0); the CPU" \
       "backend works without it" >&2
fi
