#!/usr/bin/env bash
# GPU check for a machine that has an NVIDIA GPU, the CUDA toolkit, cmake and a compiler, but no
# internet and none of our Debian packages. Builds what it can, runs the `gpu`-labelled tests
# and `gcbench mem`, and prints a short table.
#
# Header-only dependencies travel in .deps/ (ignored by git), made on a machine that has our
# Debian packages:
#     scripts/gpu-check.sh --prepare      # copies fmt, CLI11, nlohmann-json headers and the
#                                         # GoogleTest sources from /usr into .deps/
# then carry .deps to the GPU machine and run there:
#     scripts/gpu-check.sh [OUT_DIR]      # results land in OUT_DIR (default results/gpu-check)
# MPI, hwloc, OpenBLAS and Google Benchmark are optional and simply not built when absent.
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ "${1:-}" == "--prepare" ]]; then
  rm -rf .deps && mkdir -p .deps/include
  cp -r /usr/include/fmt /usr/include/CLI /usr/include/nlohmann .deps/include/
  cp -r /usr/src/googletest .deps/googletest
  echo "gpu-check: prepared .deps/ ($(du -sh .deps | cut -f1)); carry it to the GPU machine"
  exit 0
fi

out=${1:-results/gpu-check}
mkdir -p "$out"
build_dir=${BUILD_DIR:-build-gpu}
deps=""
[[ -d .deps ]] && deps="-DGCB_DEPS_DIR=$PWD/.deps"
generator=""
command -v ninja >/dev/null && generator="-G Ninja"

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv | tee "$out/nvidia-smi.csv" || true
# Packages found on a bare machine must not be picked up half-way: header-only deps come from
# .deps, everything else optional is left to detection.
cmake -S . -B "$build_dir" $generator -DCMAKE_BUILD_TYPE=Release -DGCB_CUDA=ON $deps \
      -DCMAKE_FIND_PACKAGE_PREFER_CONFIG=ON 2>&1 | tee "$out/configure.log"
cmake --build "$build_dir" -j "$(nproc)" 2>&1 | tail -n 20 | tee "$out/build.log"

status=0
(cd "$build_dir" && ctest -L gpu --output-on-failure -j 1 2>&1) | tee "$out/ctest-gpu.log" || status=1
"$build_dir/bench/gcbench" mem --device gpu --json "$out/mem.json" --csv "$out/mem.csv" 2>&1 | tee "$out/mem.log" || status=1

# Short table: the headline numbers and the same-run peer ratios.
python3 - "$out/mem.json" <<'PY' || true
import json, sys
doc = json.load(open(sys.argv[1]))
print(f"\n{'case':34} {'params':44} {'value':>10} {'unit':6} {'%peak':>6}")
for r in doc["results"]:
    if r["status"] != "PASS" or not r["metrics"]:
        continue
    if not (r["key"].startswith("mem/hbm/") or r["key"].endswith("fit") or "vs" in r["key"] or r["key"] == "mem/copy/d2d"):
        continue
    m = r["metrics"][0]
    p = " ".join(f"{k}={v}" for k, v in r["params"].items() if k != "device")[:44]
    pk = m.get("percent_of_peak")
    print(f"{r['key']:34} {p:44} {m['value']:>10.4g} {m['unit']:6} {'' if pk is None else f'{pk:.1f}':>6}")
PY
exit "$status"
