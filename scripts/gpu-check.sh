#!/usr/bin/env bash
# GPU check for a machine that has an NVIDIA GPU, the CUDA toolkit, cmake and a compiler, but no
# internet and none of our Debian packages. Builds what it can, runs the `gpu`-labelled tests,
# the GPU benchmarks with their same-run peers (cudaMemcpy, torch.matmul, torch SDPA flash when
# PyTorch is there) and the quick suite, and prints a short table of headlines and peer ratios.
#
# Header-only dependencies travel in .deps/ (ignored by git), made on a machine that has our
# Debian packages:
#     scripts/gpu-check.sh --prepare      # copies fmt, CLI11, nlohmann-json headers and the
#                                         # GoogleTest sources from /usr into .deps/
# then carry .deps to the GPU machine and run there:
#     scripts/gpu-check.sh [OUT_DIR]      # results land in OUT_DIR (default results/gpu-check)
# GCB_CHECK_STEPS picks steps (default: all, in this order): build tests mem gemm attn coll quick.
# A step that fails is recorded and the next one still runs; the exit code is 1 if any failed.
# On a lent machine with a 10-minute limit per command, split it, e.g. first
# GCB_CHECK_STEPS="build tests mem" and then GCB_CHECK_STEPS="build gemm attn coll quick" (the
# build directory is kept while the machine stays warm, so the second build is a no-op).
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
steps=${GCB_CHECK_STEPS:-build tests mem gemm attn coll quick}
deps=""
[[ -d .deps ]] && deps="-DGCB_DEPS_DIR=$PWD/.deps"
generator=""
command -v ninja >/dev/null && generator="-G Ninja"
gcbench="$build_dir/bench/gcbench"
has() { [[ " $steps " == *" $1 "* ]]; }
status=0
failed=()
# step NAME CMD...: runs CMD with its output in $out/NAME.log; a failure is recorded, not fatal.
step() {
  local name=$1
  shift
  echo "== gpu-check: $name"
  if ! "$@" 2>&1 | tee "$out/$name.log"; then
    status=1
    failed+=("$name")
  fi
}
set -o pipefail

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv | tee "$out/nvidia-smi.csv" || true
if has build; then
  # Packages found on a bare machine must not be picked up half-way: header-only deps come from
  # .deps, everything else optional is left to detection.
  step configure cmake -S . -B "$build_dir" $generator -DCMAKE_BUILD_TYPE=Release -DGCB_CUDA=ON $deps \
       -DCMAKE_FIND_PACKAGE_PREFER_CONFIG=ON
  step build cmake --build "$build_dir" -j "$(nproc)"
fi
has tests && step ctest-gpu bash -c "cd '$build_dir' && ctest -L gpu --output-on-failure -j 1"
has mem && step mem "$gcbench" mem --device gpu --json "$out/mem.json" --csv "$out/mem.csv"
# The GEMM targets of the issue (8192³ BF16 and FP8) plus 4096³ and the other dtypes, each next
# to torch.matmul on the same shape in the same run.
has gemm && step gemm "$gcbench" gemm --device gpu --sizes 4096,8192 \
    --dtype bf16,fp16,tf32,fp8_e4m3,int8 --peer-torch --max-time 2 --json "$out/gemm.json"
# FlashAttention-style shape (b·s = 16k tokens, 16 heads) at d = 64, 128, every implementation and
# pass, next to torch SDPA (flash backend).
has attn && step attn "$gcbench" attn --device gpu --batch 4 --seq 4096 --heads 16 \
    --head-dim 64,128 --causal both --pass fwd,bwd,fwdbwd --peer-torch --max-time 1 --json "$out/attn.json"
# One GPU: NCCL with one rank (the World, the unique id, the graph mode) and a p2p run whose
# device pairs must be WAIVED with the reason.
has coll && step coll "$gcbench" coll --backend nccl --ranks 1 -b 8 -e 64M -f 4 --json "$out/coll.json"
has quick && step quick "$gcbench" run --suite quick --json "$out/quick.json"

# Short table: headlines of every GPU result and the same-run peer ratios.
python3 - "$out" <<'PY' || true
import json, os, sys
rows = []
for name in ("mem", "gemm", "attn", "coll", "quick"):
    path = os.path.join(sys.argv[1], name + ".json")
    if not os.path.exists(path):
        continue
    for r in json.load(open(path))["results"]:
        if r["status"] not in ("PASS", "FAIL") or not r["metrics"]:
            continue
        k = r["key"]
        device = str(r["params"].get("device", ""))
        if "vs" not in k and not k.endswith("fit") and not device.startswith("gpu") and not k.startswith("coll/"):
            continue
        m = r["metrics"][0]
        p = " ".join(f"{a}={b}" for a, b in r["params"].items() if a != "device")[:52]
        pk = m.get("percent_of_peak")
        rows.append(f"{r['status']:4} {k:32} {p:52} {m['value']:>10.4g} {m['unit']:8} {'' if pk is None else f'{pk:.1f}':>6}")
print(f"\n{'':4} {'case':32} {'params':52} {'value':>10} {'unit':8} {'%peak':>6}")
print("\n".join(rows[-120:]))
PY
if ((${#failed[@]})); then echo "gpu-check: failed steps: ${failed[*]}"; fi
exit "$status"
