#!/usr/bin/env bash
# One command that turns a lent GPU into validated numbers, without building: runs the bundle of
# scripts/gpu-bundle.sh (.lease/, carried in the working tree) on a machine with an NVIDIA GPU, the
# CUDA toolkit and Python with PyTorch (its wheels' NCCL, cuDNN and cuBLAS), from the repository root.
#
#   scripts/gpu-lease.sh [--plan] [--second|--third] [--only IDS] [--deadline S] [--bin-dir DIR]
#                        [--out DIR] [--rehearse] [--build]
#
#   --plan        print the steps, their timeouts and estimates; run nothing
#   --second      the second lease's steps (what the first leaves out: every other GPU test binary,
#                 full mem, gemm over dtypes with autotune, attn at the FlashAttention shape, the
#                 coll sweep, the quick suite) instead of the first's
#   --third       the third lease's steps: what changed after the second session's lease (clipping,
#                 decay groups and aligned cuBLASLt plans in the headline step, its ledger, CPU
#                 offload and block recomputation on the CUDA backend, the FP8 fix, attn at head
#                 dim 128, coll's graph mode)
#   --fourth      first what changed since (the attention registry's GPU paths: the kernels against
#                 FP64 and the CUDA backend against the CPU oracle; NCCL made over the host
#                 communicator), then what the third lease left: the GEMM test and the quick suite
#                 after the FP8 fix, the headline step's GEMM shapes (to calibrate plan), the
#                 headline step with each attention implementation, the GEMM autotune over every
#                 dtype, FA2's whole grid
#   --only IDS    run only these step ids (comma-separated, e.g. 5,6); the others are listed as SKIP
#   --deadline S  global deadline in seconds from the start (default 450 = 7.5 min): a step gets at
#                 most what is left, and once too little is left the rest are SKIP, listed
#   --bin-dir DIR where the binaries are: a bundle (DIR/bin/gcbench, DIR/bin/test_*; default .lease)
#                 or a build folder (DIR/bench/gcbench and DIR/gpu-tests.txt)
#   --out DIR     output folder (default: $OUT when set, else out/lease); it receives exactly two
#                 files, lease.tar.gz (every log and JSON, env.txt, summary.txt) and summary.txt
#   --rehearse    rehearse even where a GPU exists (CUDA_VISIBLE_DEVICES is emptied for the steps)
#   --build       build gcbench and the GPU tests here first (build-gpu/, all cores; the headers from
#                 .lease/deps, NCCL and cuDNN from the system only when both library and header are
#                 there, else from PyTorch's wheels), then run the steps from it; for a machine where
#                 the bundle's libraries do not resolve. The build counts against the deadline.
#
# First lease, in priority order (each step under its own timeout):
#   1 the event-timer test; 2 the CUDA training backend against the CPU oracle (every op, fp32 and
#   bf16, 3-step runs); 3 which GELU cuBLASLt's epilogue computes; 4 our flash kernels and cuDNN
#   against FP64 at ragged and single-tile shapes; 5 the headline: train --backend cuda, GPT-2 124M,
#   bf16, T 1024, one layout, against torch eager and torch.compile; 6 attn at the training shape
#   (B 8, T 1024, 12 heads, d 64, causal, fwd and bwd) against torch SDPA; 7 gemm bf16 8192^3 against
#   torch.matmul; 8 breadth: mem triad against cudaMemcpy D2D, the other GPU test binaries, coll
#   over NCCL on one rank.
#
# Before the steps: the wheels' nvidia/*/lib folders and the CUDA toolkit's lib64 go on
# LD_LIBRARY_PATH, the environment is recorded (GPU, driver, clocks, CUDA, torch, NCCL, cuDNN), and
# `ldd` of every binary must resolve: a missing library stops the run at once (exit 1) with the
# names in the summary. Without a GPU (none visible to nvidia-smi, or --rehearse) it rehearses:
# every step runs as it would, each WAIVED with what it said, exit 0 — a broken step (bad flag,
# crash, timeout) is FAIL and exits 1 (CI runs this rehearsal, test gpu_lease_rehearsal). With a
# GPU: exit 0 when no step FAILs, else 1. The summary table is printed last.
set -uo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
t0=$SECONDS

mode=first
plan=0
build=0
rehearse=0
only=""
deadline=450
bin_dir=.lease
out=${OUT:-out/lease}
while (($#)); do
  case $1 in
    --plan) plan=1; shift ;;
    --second) mode=second; shift ;;
    --third) mode=third; shift ;;
    --fourth) mode=fourth; shift ;;
    --only) only=",$2,"; shift 2 ;;
    --deadline) deadline=$2; shift 2 ;;
    --bin-dir) bin_dir=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --rehearse) rehearse=1; shift ;;
    --build) build=1; bin_dir=build-gpu; shift ;;
    -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "gpu-lease: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
[[ $deadline =~ ^[0-9]+$ ]] || { echo "gpu-lease: --deadline takes seconds" >&2; exit 2; }

# --- the steps ----------------------------------------------------------------------------------
# add ID TITLE TIMEOUT_S ESTIMATE_S KIND FAMILY SPEC: KIND gtest (SPEC "binary filter") or gcbench
# (FAMILY its subcommand, SPEC its arguments; --json is added).
ids=() titles=() timeouts=() estimates=() kinds=() families=() specs=()
add() {
  ids+=("$1") titles+=("$2") timeouts+=("$3") estimates+=("$4") kinds+=("$5") families+=("$6") specs+=("$7")
}
if [[ $mode == first ]]; then
  # Estimates: the seconds each step took on an H200 at the first lease (2026-11-27), rounded up.
  add 1 event-timer 60 5 gtest - "test_event_timer EventTimerTest.*"
  add 2 cuda-backend 150 20 gtest - "test_cuda_backend CudaOps.*:CudaSteps.*"
  add 3 lt-gelu-form 60 5 gtest - "test_lt_gelu_epilogue *LtGeluEpilogue.*"
  add 4 flash-cudnn-fp64 150 35 gtest - "test_attention_gpu *AttentionGpu.*"
  add 5 train-gpt2-124m 270 70 gcbench train \
    "train --backend cuda --model gpt2-124m --seq 1024 --precision bf16 --micro-batch 8 --steps 5 --warmup-steps 2 --peer-torch --explain"
  add 6 attn-train-shape 90 20 gcbench attn \
    "attn --device gpu --batch 8 --seq 1024 --heads 12 --head-dim 64 --causal on --pass fwd,bwd --dtype bf16 --peer-torch --max-time 1"
  add 7 gemm-bf16-8192 90 20 gcbench gemm "gemm --device gpu --sizes 8192 --dtype bf16 --peer-torch --max-time 2"
  add 8a mem-triad 90 30 gcbench mem \
    "mem --device gpu --group stream,copy --kernels triad --copy-min 256M --copy-max 256M --max-time 1"
  add 8b test-cublaslt-gemm 90 5 gtest - "test_cublaslt_gemm *"
  add 8c test-gpu-mem 120 5 gtest - "test_gpu_mem *"
  add 8d coll-nccl-1rank 60 5 gcbench coll "coll --backend nccl --op all_reduce -b 8 -e 256M -f 4"
  add 8e test-gpu-p2p 60 5 gtest - "test_gpu_p2p *"
  add 8f test-scan-gpu 120 15 gtest - "test_scan_gpu *"
elif [[ $mode == third ]]; then
  # What changed after the second session's lease (revision 161c72a), most valuable first. Estimates:
  # the seconds each step took at the third lease (H200, 2026-11-27), rounded up.
  add 1 cuda-backend 150 30 gtest - "test_cuda_backend CudaOps.*:CudaSteps.*"
  add 2 train-gpt2-124m 270 100 gcbench train \
    "train --backend cuda --model gpt2-124m --seq 1024 --precision bf16 --micro-batch 8 --steps 5 --warmup-steps 2 --peer-torch --explain"
  add 3 train-offload-optimizer 120 15 gcbench train \
    "train --backend cuda --model gpt2-124m --seq 1024 --precision bf16 --micro-batch 8 --steps 5 --warmup-steps 2 --offload optimizer"
  add 4 train-offload-activations 120 10 gcbench train \
    "train --backend cuda --model gpt2-124m --seq 1024 --precision bf16 --micro-batch 8 --steps 5 --warmup-steps 2 --offload activations"
  add 5 test-cublaslt-gemm 120 5 gtest - "test_cublaslt_gemm *"
  add 6 gemm-fp8-8192 90 45 gcbench gemm "gemm --device gpu --sizes 8192 --dtype fp8_e4m3,bf16 --peer-torch --max-time 1"
  add 7 attn-d128-s4096 120 30 gcbench attn \
    "attn --device gpu --batch 4 --heads 16 --seq 4096 --head-dim 128 --causal both --pass fwd,bwd --peer-torch --max-time 0.5"
  add 8 train-recompute-full 120 10 gcbench train \
    "train --backend cuda --model gpt2-124m --seq 1024 --precision bf16 --micro-batch 8 --steps 5 --warmup-steps 2 --recompute full"
  add 9 coll-nccl-graph 60 5 gcbench coll "coll --backend nccl --op all_reduce --mode graph -b 8 -e 256M -f 4"
elif [[ $mode == fourth ]]; then
  # First the GPU paths restructured after the third lease (2026-11-28: every attention
  # implementation reached through kernels/attention/attention_registry, the nccl row making its
  # communicator over the host communicator); then what that lease (revisions 791b9b5-d263c2a)
  # left unrun or fixed without a rerun, most valuable first. Estimates from that lease's timings
  # of the same commands or their parts.
  add 0a flash-cudnn-fp64 150 35 gtest - "test_attention_gpu *AttentionGpu.*"
  add 0b cuda-backend 150 30 gtest - "test_cuda_backend CudaOps.*:CudaSteps.*"
  add 0c coll-nccl-1rank 60 5 gcbench coll "coll --backend nccl --op all_reduce -b 8 -e 256M -f 4"
  add 1 test-cublaslt-gemm 120 10 gtest - "test_cublaslt_gemm *"
  add 2 quick-suite 150 55 gcbench run "run --suite quick --device gpu --max-time 1"
  # The headline step's own GEMM shapes, so that `plan --calibration` can price them: calibrated
  # with the 8192^3 GEMMs alone it predicted 16.0 ms for the 24.5 ms step (README, plan's row).
  add 2b gemm-gpt2-shapes 90 20 gcbench gemm \
    "gemm --device gpu --preset llm --model gpt2-124m --batch 8 --seq 1024 --dtype bf16 --max-time 0.25"
  add 3 train-attn-ours 120 15 gcbench train \
    "train --backend cuda --model gpt2-124m --seq 1024 --precision bf16 --micro-batch 8 --steps 5 --warmup-steps 2 --attn ours"
  add 4 train-attn-cudnn 120 15 gcbench train \
    "train --backend cuda --model gpt2-124m --seq 1024 --precision bf16 --micro-batch 8 --steps 5 --warmup-steps 2 --attn cudnn"
  add 5 gemm-autotune-all 240 180 gcbench gemm \
    "gemm --device gpu --sizes 8192 --dtype bf16,fp16,tf32,fp8_e4m3,fp8_e5m2,int8 --tune on --peer-torch --max-time 0.25"
  add 6 attn-fa-grid 240 150 gcbench attn \
    "attn --device gpu --preset fa --pass fwd,bwd --impl ours,cudnn --max-time 0.25"
else
  # What the first lease leaves out, the steps that never ran first; mem-full (121 s on an H200,
  # 2026-11-27) last. The GEMM sweep is one size at a short --max-time: at two sizes and 2 s it
  # passed 59 s before it reached fp8.
  add 1 test-cublaslt-gemm 120 5 gtest - "test_cublaslt_gemm *"
  add 2 test-scan-gpu 150 15 gtest - "test_scan_gpu *"
  add 3 gemm-autotune 150 60 gcbench gemm \
    "gemm --device gpu --sizes 8192 --dtype bf16,fp16,tf32,fp8_e4m3,int8 --tune on --peer-torch --max-time 0.5"
  # One point of FlashAttention-2's grid (16k tokens, hidden 2048, d 128, s 4096): the whole
  # --preset fa is 144 cases at ~4.5 s each (inputs made and checked on the host) and reached
  # its 120 s timeout a fifth of the way through on an H200 (2026-11-27).
  add 4 attn-fa-shape 120 60 gcbench attn \
    "attn --device gpu --batch 4 --heads 16 --seq 4096 --head-dim 128 --causal both --pass fwd,bwd --peer-torch --max-time 0.5"
  add 5 coll-nccl-sweep 120 60 gcbench coll "coll --backend nccl -b 8 -e 1G -f 2"
  add 6 quick-suite 150 90 gcbench run "run --suite quick --device gpu --max-time 1"
  add 7 mem-full 180 125 gcbench mem "mem --device gpu --max-time 1"
  add 8 test-gpu-mem 150 5 gtest - "test_gpu_mem *"
  add 9 test-gpu-p2p 60 5 gtest - "test_gpu_p2p *"
fi

if ((plan)); then
  total=0
  printf '%-4s %-26s %8s %9s  %s\n' id step timeout estimate command
  for i in "${!ids[@]}"; do
    total=$((total + estimates[i]))
    if [[ ${kinds[i]} == gtest ]]; then
      read -r b f <<<"${specs[i]}"
      cmd="$b --gtest_filter='$f'"
    else
      cmd="gcbench ${specs[i]}"
    fi
    printf '%-4s %-26s %7ss %8ss  %s\n' "${ids[i]}" "${titles[i]}" "${timeouts[i]}" "${estimates[i]}" "$cmd"
  done
  echo "estimated total ${total} s of steps, deadline ${deadline} s (steps past it are SKIP and listed);"
  echo "about 15 s more for the environment, ldd and the tarball; ${mode} lease, binaries from ${bin_dir}"
  exit 0
fi

# --- output folders -------------------------------------------------------------------------------
mkdir -p "$out" || exit 2
out=$(cd "$out" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/gcb-lease.XXXXXX")
trap 'rm -rf "$work"' EXIT
export PYTHONDONTWRITEBYTECODE=1  # the peers' imports leave no __pycache__ in the tree
: >"$work/steps.tsv"
: >"$work/commands.txt"
log() { echo "gpu-lease: $*" | tee -a "$work/lease.log"; }

# --- loader path: the toolkit's lib64, then the wheels' nvidia/*/lib -------------------------------
cuda_home=${CUDA_HOME:-${CUDA_PATH:-}}
if [[ -z $cuda_home ]]; then
  nvcc_path=$(command -v nvcc || true)
  [[ -n $nvcc_path ]] && cuda_home=$(dirname "$(dirname "$(readlink -f "$nvcc_path")")")
  [[ -z $cuda_home && -d /usr/local/cuda ]] && cuda_home=/usr/local/cuda
fi
wheel_libs=$(timeout 60 python3 - 2>/dev/null <<'PY'
import glob, os, site, sys
roots = []
try:
    import nvidia
    roots += list(nvidia.__path__)
except Exception:
    pass
try:
    roots += [os.path.join(p, "nvidia") for p in site.getsitepackages() + [site.getusersitepackages()]]
except Exception:
    pass
seen = []
for r in roots:
    for d in sorted(glob.glob(os.path.join(r, "*", "lib"))):
        d = os.path.realpath(d)
        if d not in seen:
            seen.append(d)
print(":".join(seen))
PY
)
loader=""
for d in "$cuda_home/lib64" "$cuda_home/targets/x86_64-linux/lib"; do
  [[ -n $cuda_home && -d $d ]] && loader+="${loader:+:}$d"
done
[[ -n $wheel_libs ]] && loader+="${loader:+:}$wheel_libs"
export LD_LIBRARY_PATH="${loader}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

# --- the --build fallback -------------------------------------------------------------------------
# root_for NAME SONAME HEADER VAR: the -D for CMake. The system's only when ldconfig knows the
# library AND the header exists (a runtime-only install would build without it); else the wheel.
root_for() {
  local name=$1 soname=$2 header=$3 var=$4 d
  if ldconfig -p 2>/dev/null | grep -q "$soname"; then
    for d in /usr/include /usr/local/include "$cuda_home/include"; do
      if [[ -f $d/$header ]]; then
        log "$name: system library and $d/$header" >&2
        return
      fi
    done
    log "$name: ldconfig knows $soname but no $header: not the system's" >&2
  fi
  for d in ${wheel_libs//:/ }; do
    d=$(dirname "$d")
    if [[ $(basename "$d") == "$name" && -f $d/include/$header ]]; then
      log "$name: PyTorch wheel $d" >&2
      echo "-D$var=$d"
      return
    fi
  done
  log "$name: neither a system library with its header nor a wheel; built without it" >&2
}
if ((build)); then
  deps=()
  [[ -d .lease/deps ]] && deps=("-DGCB_DEPS_DIR=$repo/.lease/deps")
  roots=()
  r=$(root_for nccl libnccl.so.2 nccl.h GCB_NCCL_ROOT) && [[ -n $r ]] && roots+=("$r")
  r=$(root_for cudnn libcudnn.so.9 cudnn.h GCB_CUDNN_ROOT) && [[ -n $r ]] && roots+=("$r")
  generator=()
  command -v ninja >/dev/null && generator=(-G Ninja)
  log "building into $bin_dir (-j $(nproc))"
  {
    cmake -S . -B "$bin_dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DGCB_CUDA=ON -DGCB_ENABLE_MPI=OFF -DGCB_ENABLE_GLOO=OFF \
      -DGCB_ENABLE_HWLOC=OFF -DGCB_ENABLE_OPENBLAS=OFF -DGCB_ENABLE_NUMA=OFF -DGCB_BUILD_MICRO=OFF \
      "${deps[@]}" "${roots[@]}" -DCMAKE_FIND_PACKAGE_PREFER_CONFIG=ON &&
      timeout $((deadline - (SECONDS - t0) > 60 ? deadline - (SECONDS - t0) : 60)) cmake --build "$bin_dir" -j "$(nproc)" --target gcbench gpu_tests
  } >"$work/build.log" 2>&1 || log "build failed (build.log); the steps run with what was built"
  log "build took $((SECONDS - t0)) s"
fi

# --- binaries -------------------------------------------------------------------------------------
# find_bin NAME: the path of a binary in a bundle (bin/NAME) or a build folder (bench/gcbench, or
# the path gpu-tests.txt gives); empty when absent.
find_bin() {
  local name=$1 path=""
  if [[ -x $bin_dir/bin/$name ]]; then
    path=$bin_dir/bin/$name
  elif [[ $name == gcbench && -x $bin_dir/bench/gcbench ]]; then
    path=$bin_dir/bench/gcbench
  elif [[ -f $bin_dir/gpu-tests.txt ]]; then
    path=$(awk -F'\t' -v n="$name" '$1 == n {print $2}' "$bin_dir/gpu-tests.txt")
    [[ -x $path ]] || path=""
  fi
  [[ -n $path ]] && readlink -f "$path"
}
gcbench=$(find_bin gcbench)

# --- GPU or rehearsal ---------------------------------------------------------------------------
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
if ((rehearse)) || [[ ${gpus:-0} == 0 ]]; then
  rehearse=1
  export CUDA_VISIBLE_DEVICES=""
  why=$([[ ${gpus:-0} == 0 ]] && echo "nvidia-smi lists no GPU" || echo "--rehearse")
  log "no GPU ($why): rehearsal, every step runs and is WAIVED with what it said"
fi

# --- environment ----------------------------------------------------------------------------------
{
  # The binaries' revision: the bundle's manifest says what was built (a device machine's copy of
  # the repository can carry an older .git: the third lease's summaries named the session's start).
  built=$(sed -n 's/^revision: //p' "$bin_dir/manifest.txt" 2>/dev/null | head -1)
  echo "gpu-lease $mode $(date -u +%FT%TZ) on $(hostname), binaries of revision ${built:-$(git rev-parse HEAD 2>/dev/null || echo unknown) (git HEAD; no bundle manifest)}"
  echo "bin dir: $bin_dir ($(readlink -f "$bin_dir" 2>/dev/null))"
  echo "rehearsal: $rehearse; deadline $deadline s"
  echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
  echo "--- nvidia-smi"
  timeout 30 nvidia-smi 2>&1 || echo "nvidia-smi: not available"
  timeout 30 nvidia-smi --query-gpu=index,name,pci.bus_id,driver_version,memory.total,clocks.sm,clocks.mem,clocks.max.sm,clocks.max.mem,power.limit,persistence_mode,mig.mode.current,ecc.mode.current --format=csv 2>&1 || true
  timeout 30 nvidia-smi topo -m 2>&1 || true
  timeout 30 nvidia-smi -q -d CLOCK,PERFORMANCE 2>&1 || true
  echo "--- CUDA toolkit ($cuda_home)"
  "${cuda_home:-/usr/local/cuda}/bin/nvcc" --version 2>&1 | tail -2 || echo "nvcc: not found"
  echo "--- python"
  timeout 60 python3 - 2>&1 <<'PY'
import platform
print("python", platform.python_version())
try:
    import torch
    print("torch", torch.__version__, "cuda", torch.version.cuda, "cuda available", torch.cuda.is_available())
    print("torch cudnn", torch.backends.cudnn.version())
    try:
        print("torch nccl", ".".join(map(str, torch.cuda.nccl.version())))
    except Exception as e:
        print("torch nccl: ?", e)
    if torch.cuda.is_available():
        p = torch.cuda.get_device_properties(0)
        print("device 0", p.name, "sm", f"{p.major}.{p.minor}", "SMs", p.multi_processor_count, "memory", p.total_memory)
except Exception as e:
    print("torch: not importable:", e)
try:
    import transformers
    print("transformers", transformers.__version__)
except Exception as e:
    print("transformers: not importable:", e)
PY
  echo "--- bundle manifest"
  cat "$bin_dir/manifest.txt" 2>/dev/null || echo "(no manifest: $bin_dir is a build folder)"
} >"$work/env.txt" 2>&1
grep -E "^(torch|transformers|python|device 0)" "$work/env.txt" | sed 's/^/gpu-lease: /'

# --- ldd: every library must resolve ------------------------------------------------------------
missing=()
binaries=()
: >"$work/ldd.txt"
[[ -n $gcbench ]] && binaries+=("$gcbench")
for i in "${!ids[@]}"; do
  if [[ ${kinds[i]} == gtest ]]; then
    p=$(find_bin "${specs[i]%% *}")
    [[ -n $p ]] && binaries+=("$p")
  fi
done
for b in "${binaries[@]}"; do
  {
    echo "--- $b"
    ldd "$b" 2>&1
  } >>"$work/ldd.txt"
  while read -r lib; do missing+=("$(basename "$b"): $lib"); done < <(ldd "$b" 2>&1 | awk '/not found/ {print $1}')
done

# --- running a step -------------------------------------------------------------------------------
record() { # id title kind family state rc seconds timeout log json note
  local IFS=$'\t'
  echo "$*" >>"$work/steps.tsv"
}
run_step() {
  local i=$1 id=${ids[$1]} title=${titles[$1]} kind=${kinds[$1]} family=${families[$1]} spec=${specs[$1]}
  local name="${id}-${title}" left=$((deadline - (SECONDS - t0)))
  if [[ -n $only && $only != *",$id,"* ]]; then
    record "$id" "$title" "$kind" "$family" skipped 0 0 0 - - "not in --only"
    return
  fi
  if ((left < 15)); then
    record "$id" "$title" "$kind" "$family" skipped 0 0 0 - - "deadline (${deadline} s) reached"
    log "$id $title: SKIP, deadline reached"
    return
  fi
  local to=${timeouts[$i]}
  ((to > left)) && to=$left
  local cmd=() json="$name.json" bin
  if [[ $kind == gtest ]]; then
    bin=$(find_bin "${spec%% *}")
    if [[ -z $bin ]]; then
      record "$id" "$title" "$kind" "$family" missing 0 0 "$to" - - "${spec%% *} not in $bin_dir"
      log "$id $title: ${spec%% *} not in $bin_dir"
      return
    fi
    cmd=("$bin" "--gtest_filter=${spec#* }" "--gtest_output=json:$work/$json")
  else
    if [[ -z $gcbench ]]; then
      record "$id" "$title" "$kind" "$family" missing 0 0 "$to" - - "gcbench not in $bin_dir"
      log "$id $title: gcbench not in $bin_dir"
      return
    fi
    read -r -a args <<<"$spec"
    # --jsonl keeps each case the moment it ends: a step cut by its timeout still has what it measured.
    cmd=("$gcbench" "${args[@]}" --json "$work/$json" --jsonl "$work/$name.jsonl")
  fi
  printf '%s\t%s\n' "$name" "${cmd[*]}" >>"$work/commands.txt"
  log "$id $title (timeout ${to} s): ${cmd[*]}"
  local start=$SECONDS
  # scan's test runs gcbench itself: the one found here, not the path baked in at build time.
  GCB_TEST_BINARY=$gcbench timeout -k 5 "$to" "${cmd[@]}" >"$work/$name.log" 2>&1 </dev/null
  local rc=$? state=ran
  ((rc == 124 || rc == 137)) && state=timeout
  record "$id" "$title" "$kind" "$family" "$state" "$rc" $((SECONDS - start)) "$to" "$name.log" "$json" -
  log "$id $title: exit $rc after $((SECONDS - start)) s"
}

status=0
if ((${#missing[@]})); then
  log "libraries missing, nothing run: ${missing[*]}"
  log "LD_LIBRARY_PATH=$LD_LIBRARY_PATH; try scripts/gpu-lease.sh --build"
  for i in "${!ids[@]}"; do
    record "${ids[i]}" "${titles[i]}" "${kinds[i]}" "${families[i]}" skipped 0 0 0 - - "libraries missing: ${missing[*]}"
  done
  status=1
else
  for i in "${!ids[@]}"; do run_step "$i"; done
  if ((rehearse == 0)) && ! cut -f5 "$work/steps.tsv" | grep -qxE 'ran|timeout'; then
    log "no step ran: no binaries in $bin_dir (scripts/gpu-bundle.sh makes .lease/ here; or --build)"
    status=1
  fi
fi

# --- summary and tarball --------------------------------------------------------------------------
# lease_summary.py exits 1 when a step is FAIL, 0 when none is.
table=$(python3 "$repo/scripts/lease_summary.py" "$work" "$rehearse" "$work/notes.txt")
case $? in
  0) ;;
  1) status=1 ;;
  *) table="summary failed (scripts/lease_summary.py); see the logs in the tarball"; status=1 ;;
esac
{
  head -3 "$work/env.txt"
  grep -E "^(torch|transformers|device 0)" "$work/env.txt"
  timeout 10 nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader 2>/dev/null | sed 's/^/gpu: /'
  echo "total $((SECONDS - t0)) s"
  ((${#missing[@]})) && echo "MISSING LIBRARIES: ${missing[*]}"
  echo
  echo "$table"
  if [[ -s $work/notes.txt ]]; then
    echo
    echo "notes:"
    cat "$work/notes.txt"
  fi
} >"$work/summary.txt"
rm -f "$out/lease.tar.gz" "$out/summary.txt"
cp "$work/summary.txt" "$out/summary.txt"
stamp=lease-$(date -u +%Y%m%dT%H%M%SZ)
tar -czf "$out/lease.tar.gz" --transform "s|^\.|$stamp|" -C "$work" .
[[ -s $work/notes.txt ]] && { echo "notes:"; cat "$work/notes.txt"; }
echo "gpu-lease: $out/lease.tar.gz and $out/summary.txt after $((SECONDS - t0)) s, exit $status"
echo "$table"
exit "$status"
