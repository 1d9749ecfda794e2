#!/usr/bin/env bash
# The planner's CPU validation (docs/readme-plan.md): calibrate on this host with gcbench's own
# gemm, attn, coll and mem runs at the shapes the plan needs, then `gcbench plan --verify` the
# layouts of the tiny and small models through the training library and print predicted against
# measured step time (tolerance 25 %) and memory per category (exact).
#
#   scripts/plan-validate-cpu.sh [gcbench binary] [output dir]
#
# Every rank thread computes on one thread (OMP_NUM_THREADS=1: the OpenMP build of OpenBLAS takes
# its thread count from OpenMP, not from OPENBLAS_NUM_THREADS), in the calibration as in
# training, so RANKS rank threads use RANKS cores. The gemm and attn calibrations run alone;
# `plan` itself measures what changes when all ranks run at once (its host probe: GEMM
# contention, each element-wise op's in-cache rate) and the mem triad runs on RANKS threads at
# once, so that each rank's share of the memory bandwidth is measured, not assumed.
# Exit status: gcbench plan's (1 when a layout's step time is off by more than 25 % or a memory
# category differs). The best layout is judged in the printed "best layout:" line, not in the
# exit status: right when the predicted fastest is the measured fastest (lowest median over the
# rounds), "right within the measurement's spread" when its rounds' min–max overlaps the
# measured fastest's (the rounds cannot order the two), else not right. A quiet machine takes
# about 5 minutes; a loaded one, longer and noisier.
set -euo pipefail
bin=${1:-build/bench/gcbench}
out=${2:-plan-validate-cpu}
ranks=${RANKS:-2}
repeats=${REPEATS:-2}
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
mkdir -p "$out"
status=0
for spec in "tiny 8" "small 8"; do
  read -r model batch <<<"$spec"
  cal="$out/$model-calibration"
  rm -rf "$cal"
  mkdir -p "$cal"
  plan=(plan --model "$model" --gpu cpu --gpus "$ranks" --global-batch "$batch" --micro-batch 1,4 --zero 0,1
        --overlap off --recompute none,full)
  # The GEMM and attention shapes of every candidate (--top large enough to list them all).
  "$bin" "${plan[@]}" --no-host-probe --top 1000 --shapes --quiet >"$out/$model-shapes.txt"
  # Each distinct GEMM shape once (gemm's --m/--n/--k lists would time their cross product).
  awk '$1 == "gemm" { print $2, $3, $4 }' "$out/$model-shapes.txt" | sort -u | while read -r m n k; do
    "$bin" gemm --device cpu --dtype fp32 --m "$m" --n "$n" --k "$k" --warmup 2 --min-samples 10 --max-time 0.5 \
      --noise 0.02 --quiet --jsonl "$cal/gemm.jsonl" >/dev/null
  done
  list() { awk -v f="$1" -v c="$2" '$1 == f { print $c }' "$out/$model-shapes.txt" | sort -un | paste -sd, -; }
  "$bin" attn --device cpu --impl ours --batch "$(list attn 2)" --heads "$(list attn 3)" --seq "$(list attn 4)" \
    --head-dim "$(list attn 5)" --causal on --pass fwd,bwd --max-time 0.5 --noise 0.02 --quiet --json "$cal/attn.json"
  "$bin" coll --backend threads --ranks "$ranks" --op all_reduce,reduce_scatter,all_gather,sendrecv \
    -b 1K -e 16M -f 4 --max-time 0.5 --quiet --json "$cal/coll.json"
  "$bin" mem --device cpu --group stream --kernels triad --threads "$ranks" --no-peers --max-time 0.5 --quiet \
    --json "$cal/mem.json"
  "$bin" "${plan[@]}" --calibration "$cal" --top 1000 --verify 1000 --verify-repeats "$repeats" --steps 3 --warmup 1 \
    --json "$out/$model-verify.json" | sed -n '/^cluster:/,/^candidates:/p;/^verify:/,/^memory of/p' | tee "$out/$model-verify.txt" || status=1
done
exit $status
