#!/usr/bin/env bash
# GPU check for a machine that has an NVIDIA GPU, the CUDA toolkit, cmake, ninja and Python with
# PyTorch, but no internet and none of our Debian packages. Builds gcbench, runs the
# `gpu`-labelled tests, the GPU benchmarks with their same-run peers (cudaMemcpy, torch.matmul,
# torch SDPA flash) and the quick suite, and prints a short table of headlines and peer ratios.
#
# Header-only dependencies travel in .deps/ (ignored by git), made on a machine that has our
# Debian packages:
#     scripts/gpu-check.sh --prepare      # fmt, CLI11, nlohmann-json headers and the GoogleTest
#                                         # sources copied from /usr into .deps/
# then, on the GPU machine (with .deps carried along):
#     GCB_CHECK_STEPS="build tests" scripts/gpu-check.sh OUT_DIR
#     GCB_CHECK_STEPS="mem gemm" scripts/gpu-check.sh OUT_DIR
#     GCB_CHECK_STEPS="attn coll quick" scripts/gpu-check.sh OUT_DIR
#     GCB_CHECK_STEPS="train" scripts/gpu-check.sh OUT_DIR
# Steps (default: all, in this order): build (configure + gcbench), tests (the gpu-labelled test
# binaries + ctest -L gpu), mem, gemm, attn, coll, quick, train. Each step is killed after
# GCB_STEP_TIMEOUT seconds (default 540), so one command of a few steps fits a 10-minute limit;
# the build directory (BUILD_DIR, default build-gpu) is reused by later commands. A failed step is
# recorded and the next one still runs; the exit code is 1 if any failed.
#
# NCCL and cuDNN: GCB_NCCL_ROOT / GCB_CUDNN_ROOT (a folder with include/ and lib/) when set; else
# the system's when ldconfig knows libnccl.so.2 / libcudnn.so.9 (GCB_PREFER_WHEELS=1 skips this);
# else PyTorch's wheels (site-packages/nvidia/nccl, nvidia/cudnn: versioned .so.2 / .so.9 with
# their own headers), whose lib/ folders are then also put on LD_LIBRARY_PATH for the steps.
# What was found is written to OUT_DIR/deps.log; every command run to OUT_DIR/commands.txt.
# MPI, hwloc, OpenBLAS and Google Benchmark are optional and simply not built when absent.
set -uo pipefail
cd "$(dirname "$0")/.."

if [[ "${1:-}" == "--prepare" ]]; then
  set -e
  rm -rf .deps && mkdir -p .deps/include
  cp -r /usr/include/fmt /usr/include/CLI /usr/include/nlohmann .deps/include/
  cp -r /usr/src/googletest .deps/googletest
  echo "gpu-check: prepared .deps/ ($(du -sh .deps | cut -f1)); carry it to the GPU machine"
  exit 0
fi

out=${1:-results/gpu-check}
mkdir -p "$out"
out=$(cd "$out" && pwd)
build_dir=${BUILD_DIR:-build-gpu}
steps=${GCB_CHECK_STEPS:-build tests mem gemm attn coll quick train}
step_timeout=${GCB_STEP_TIMEOUT:-540}
gcbench="$build_dir/bench/gcbench"
has() { [[ " $steps " == *" $1 "* ]]; }
status=0
failed=()

# step NAME CMD...: runs CMD (at most step_timeout s) with its output in $out/NAME.log; the command
# goes to commands.txt; a failure is recorded, not fatal.
step() {
  local name=$1
  shift
  echo "== gpu-check: $name"
  printf '%s\t%s\n' "$name" "$*" >>"$out/commands.txt"
  local start=$SECONDS
  timeout -k 10 "$step_timeout" "$@" 2>&1 | tee "$out/$name.log"
  local rc=${PIPESTATUS[0]}
  echo "== gpu-check: $name exit $rc after $((SECONDS - start)) s" | tee -a "$out/$name.log"
  if ((rc != 0)); then
    status=1
    failed+=("$name")
  fi
}

# wheel_dir NAME: site-packages/nvidia/NAME of the python3 on PATH, if it has include/ and lib/.
wheel_dir() {
  python3 - "$1" 2>/dev/null <<'PY'
import importlib.util, os, sys
try:
    spec = importlib.util.find_spec("nvidia." + sys.argv[1])
except Exception:
    spec = None
for d in (list(spec.submodule_search_locations or []) if spec else []):
    if os.path.isdir(os.path.join(d, "include")) and os.path.isdir(os.path.join(d, "lib")):
        print(d)
        break
PY
}

# find_root VAR SONAME NAME: sets VAR (GCB_NCCL_ROOT / GCB_CUDNN_ROOT) to the wheel folder when
# neither the environment nor the system provides the library; logs the choice.
cmake_roots=()
find_root() {
  local var=$1 soname=$2 name=$3 dir
  if [[ -n "${!var:-}" ]]; then
    echo "$name: $var=${!var} (from the environment)" | tee -a "$out/deps.log"
  elif [[ "${GCB_PREFER_WHEELS:-0}" != 1 ]] && ldconfig -p 2>/dev/null | grep -q "$soname"; then
    echo "$name: system library ($(ldconfig -p | grep -m1 "$soname" | sed 's/.*=> //'))" | tee -a "$out/deps.log"
    return
  elif dir=$(wheel_dir "$name") && [[ -n "$dir" ]]; then
    printf -v "$var" '%s' "$dir"
    echo "$name: PyTorch wheel $dir ($(ls "$dir/lib" | tr '\n' ' '))" | tee -a "$out/deps.log"
  else
    echo "$name: not found (no $var, no $soname known to ldconfig, no python3 nvidia.$name wheel)" | tee -a "$out/deps.log"
    return
  fi
  cmake_roots+=("-D$var=${!var}")
  export LD_LIBRARY_PATH="${!var}/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
}

{
  echo "gpu-check $(date -u +%FT%TZ) on $(hostname), revision $(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv,noheader 2>&1
  echo "nvcc: $( (command -v nvcc || ls /usr/local/cuda/bin/nvcc) 2>/dev/null | head -1)"
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)' 2>&1 | tail -1
} | tee -a "$out/deps.log"
find_root GCB_NCCL_ROOT libnccl.so.2 nccl
find_root GCB_CUDNN_ROOT libcudnn.so.9 cudnn

if has build; then
  deps=()
  [[ -d .deps ]] && deps=("-DGCB_DEPS_DIR=$PWD/.deps")
  generator=()
  command -v ninja >/dev/null && generator=(-G Ninja)
  step configure cmake -S . -B "$build_dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DGCB_CUDA=ON \
       "${deps[@]}" "${cmake_roots[@]}" -DCMAKE_FIND_PACKAGE_PREFER_CONFIG=ON
  grep -E "^-- (NCCL|CUDNN|  (CUDA|NCCL|cuDNN|cuBLASLt) )" "$out/configure.log" >>"$out/deps.log"
  step build cmake --build "$build_dir" -j "$(nproc)" --target gcbench
fi
if has tests; then
  step build-tests cmake --build "$build_dir" -j "$(nproc)" --target gpu_tests
  step ctest-gpu ctest --test-dir "$build_dir" -L gpu --output-on-failure -j 1 --timeout 300
fi
has mem && step mem "$gcbench" mem --device gpu --max-time 1 --json "$out/mem.json" --csv "$out/mem.csv"
# The GEMM targets of the issue (8192³ BF16 and FP8) plus 4096³ and the other dtypes, each next
# to torch.matmul on the same shape in the same run.
has gemm && step gemm "$gcbench" gemm --device gpu --sizes 4096,8192 \
    --dtype bf16,fp16,tf32,fp8_e4m3,int8 --peer-torch --max-time 2 --json "$out/gemm.json"
# FlashAttention-style shape (b·s = 16k tokens, 16 heads) at d = 64, 128, every implementation and
# pass, next to torch SDPA (flash backend).
has attn && step attn "$gcbench" attn --device gpu --batch 4 --seq 4096 --heads 16 \
    --head-dim 64,128 --causal both --pass fwd,bwd,fwdbwd --peer-torch --max-time 1 --json "$out/attn.json"
# One GPU: NCCL with one rank (the World, the unique id, the graph mode); all GPUs: one rank each.
has coll && step coll "$gcbench" coll --backend nccl -b 8 -e 64M -f 4 --json "$out/coll.json"
has quick && step quick "$gcbench" run --suite quick --max-time 1 --json "$out/quick.json"
# GPT-2 124M at T = 1024 on one GPU, bf16, the single-rank layouts (tp/pp rows need two GPUs), next
# to torch eager and torch.compile training the same weights on the same tokens.
has train && step train "$gcbench" train --backend cuda --model gpt2-124m --ranks 1 --sweep dp,zero1 \
    --precision bf16 --micro-batch 8 --steps 5 --warmup-steps 2 --peer-torch --json "$out/train.json"

# Short table: headlines of every GPU result and the same-run peer ratios.
python3 - "$out" <<'PY' | tee "$out/summary.txt"
import json, os, sys
rows = []
for name in ("mem", "gemm", "attn", "coll", "quick", "train"):
    path = os.path.join(sys.argv[1], name + ".json")
    if not os.path.exists(path):
        continue
    for r in json.load(open(path))["results"]:
        if r["status"] not in ("PASS", "FAIL") or not r["metrics"]:
            continue
        k = r["key"]
        device = str(r["params"].get("device", ""))
        if "vs" not in k and not k.endswith("fit") and not device.startswith("gpu") and not k.startswith(("coll/", "train/")):
            continue
        m = r["metrics"][0]
        p = " ".join(f"{a}={b}" for a, b in r["params"].items() if a != "device")[:52]
        pk = m.get("percent_of_peak")
        v = m["value"]
        rows.append(f"{r['status']:4} {k:32} {p:52} {'null' if v is None else f'{v:.4g}':>10} {m['unit']:8} "
                    f"{'' if pk is None else f'{pk:.1f}':>6}")
print(f"{'':4} {'case':32} {'params':52} {'value':>10} {'unit':8} {'%peak':>6}")
print("\n".join(rows))
PY
if ((${#failed[@]})); then echo "gpu-check: failed steps: ${failed[*]}"; fi
exit "$status"
