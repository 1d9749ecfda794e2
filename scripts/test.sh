#!/usr/bin/env bash
# Installs dependencies, builds everything (CUDA code compiles whenever nvcc exists, with or
# without a GPU) and runs the whole ctest suite. CI runs exactly this (.ci/run).
#   BUILD_DIR=build  JOBS=2  GCB_CUDA=AUTO|ON|OFF   (environment overrides)
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
# Formatting: every C++/CUDA file follows .clang-format (scripts/check-format.sh); a gate.
scripts/check-format.sh

build_dir=${BUILD_DIR:-build}
jobs=${JOBS:-2}
werror=OFF
[[ -n "${CI:-}" ]] && werror=ON

cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGCB_WERROR="$werror" -DGCB_CUDA="${GCB_CUDA:-AUTO}"
cmake --build "$build_dir" -j "$jobs"
# OpenMPI refuses to start as root unless told; CI containers run as root.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cd "$build_dir"
ctest --output-on-failure -j "$jobs" --timeout 600
