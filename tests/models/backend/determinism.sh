#!/usr/bin/env bash
# Bits that must not depend on the number of threads, on one OpenBLAS kernel family.
#   determinism.sh CORE TEST_CPU_BACKEND GCBENCH WORKDIR
# CORE is an OPENBLAS_CORETYPE (Haswell, Zen, SkylakeX, Cooperlake, Sandybridge) or `detected`
# (OpenBLAS's own choice for this CPU; the environment is left as it is). A core type the CPU cannot
# execute is skipped (exit 77) with the flags it lacks. Checks, with that kernel:
#   1. cpu_sgemm gives the same bits with 1, 2, 3, 4 and 7 threads on the model's shapes (gtest);
#   2. OpenBLAS runs the kernel asked for (gtest, GCB_EXPECT_OPENBLAS_CORE);
#   3. three `small` training steps (losses and every final parameter, hex floats) are bitwise equal
#      with OMP_NUM_THREADS=1 and 3 — the matmul and every OpenMP loop of the CPU backend.
set -euo pipefail
core=$1 test_bin=$2 gcbench=$3 work=$4

declare -A needs=(
  [Sandybridge]="avx"
  [Haswell]="avx2 fma"
  [Zen]="avx2 fma"
  [SkylakeX]="avx512f avx512cd avx512bw avx512dq avx512vl"
  [Cooperlake]="avx512f avx512cd avx512bw avx512dq avx512vl avx512_bf16"
)
if [[ $core != detected ]]; then
  [[ -n ${needs[$core]:-} ]] || { echo "determinism.sh: unknown core type $core" >&2; exit 2; }
  flags=" $(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null | cut -d: -f2) "
  missing=""
  for f in ${needs[$core]}; do [[ $flags == *" $f "* ]] || missing+=" $f"; done
  if [[ -n $missing ]]; then
    echo "SKIP: this CPU cannot run OpenBLAS's $core kernels (no$missing)"
    exit 77
  fi
  export OPENBLAS_CORETYPE=$core GCB_EXPECT_OPENBLAS_CORE=$core
fi

"$test_bin" --gtest_brief=1 \
  --gtest_filter='CpuBackend.MatmulResultsDoNotDependOnBlasThreadCount:CpuBackend.OpenBlasRunsTheCoreTypeAskedFor'

mkdir -p "$work"
for t in 1 3; do
  OMP_NUM_THREADS=$t "$gcbench" train --model small --steps 3 --warmup-steps 0 --micro-batch 2 --seq 64 \
    --quiet --dump "$work/$core-omp$t.txt" >/dev/null
done
if ! cmp -s "$work/$core-omp1.txt" "$work/$core-omp3.txt"; then
  echo "FAIL: $core: 3 training steps differ between OMP_NUM_THREADS=1 and 3" >&2
  diff "$work/$core-omp1.txt" "$work/$core-omp3.txt" | head -5 >&2
  exit 1
fi
echo "$core: matmul and 3 small training steps bitwise equal across thread counts ($(wc -l <"$work/$core-omp1.txt") values)"
