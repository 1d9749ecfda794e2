#!/usr/bin/env bash
# The main job in one command: install dependencies, build, run `gcbench run --suite quick` on
# whatever this machine has (CPU-only machines run the CPU cases; GPU cases are WAIVED with the
# reason), write results/<timestamp>.json and print the summary table.
#   BUILD_DIR=build  JOBS=2   (environment overrides); extra arguments go to `gcbench run`.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
build_dir=${BUILD_DIR:-build}
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGCB_BUILD_TESTS=OFF
cmake --build "$build_dir" -j "${JOBS:-2}" --target gcbench

mkdir -p results
out="results/$(date -u +%Y%m%dT%H%M%SZ).json"
status=0
"$build_dir/bench/gcbench" run --suite quick --json "$out" --csv "${out%.json}.csv" "$@" || status=$?
echo "results: $out"
exit "$status"
