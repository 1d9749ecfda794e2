#!/usr/bin/env bash
# CI performance gate: runs the quick suite, compares it with the baseline of this machine's
# GPU SKU and writes a Markdown summary (PR comment / job summary) and JUnit XML.
#
#   scripts/ci/perf-regress.sh [--out DIR] [--threshold X] [--alpha A] [--strict-noisy] [BASE.json ...]
#                              [-- RUN_FLAGS...]
#
# Several BASE documents are several runs of the baseline, pooled by compare: a change must then
# also clear their slowest (or fastest) run, which keeps a shared runner's whole-run shifts from
# reading as regressions (3 runs recommended; docs/readme-compare.md).
# Paths are the caller's: BASE and --out are taken relative to the folder the script is called
# from, never the repository. BASE defaults to every reports/baselines/<sku>/quick*.json in the
# repository, where <sku> is the first GPU's name from nvidia-smi ("NVIDIA H100 80GB HBM3" ->
# nvidia-h100-80gb-hbm3), or "cpu-<CPU model>" on a machine without a GPU (never the host name,
# so every runner of one kind shares a baseline). Flags after `--` go to `gcbench run` (e.g.
# `-- --families mem,gemm --device gpu`).
# Environment (the flags win): GCBENCH (binary; default <repo>/build/bench/gcbench, else gcbench
#   on PATH), OUT_DIR (default ./perf-out), THRESHOLD (5%), ALPHA (0.05).
# Exit code: compare's — 0 no regression, 1 regression, 2 bad input (e.g. no baseline yet) — except
# compare's 4 (no regression, but a case too noisy to judge), which is 0 with a warning unless
# --strict-noisy; run's own 2 or 3 when `gcbench run` itself fails.
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)

out=${OUT_DIR:-perf-out}
threshold=${THRESHOLD:-5%}
alpha=${ALPHA:-0.05}
strict_noisy=0
bases=()
run_flags=()
while (($#)); do
  case $1 in
    --out) out=$2; shift 2 ;;
    --threshold) threshold=$2; shift 2 ;;
    --alpha) alpha=$2; shift 2 ;;
    --strict-noisy) strict_noisy=1; shift ;;
    --) shift; run_flags=("$@"); break ;;
    -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "perf-regress: unknown flag $1 (see --help)" >&2; exit 2 ;;
    *) bases+=("$1"); shift ;;
  esac
done

gcbench=${GCBENCH:-}
if [[ -z "$gcbench" ]]; then
  if [[ -x $repo/build/bench/gcbench ]]; then gcbench=$repo/build/bench/gcbench; else gcbench=$(command -v gcbench || true); fi
fi
[[ -x "$gcbench" ]] || { echo "perf-regress: no gcbench binary (build it or set GCBENCH)" >&2; exit 2; }

slug() { tr '[:upper:]' '[:lower:]' | sed -e 's/([^)]*)//g' -e 's/[^a-z0-9]\+/-/g' -e 's/^-//' -e 's/-$//'; }
sku() {
  local gpu
  gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n1)
  if [[ -n "$gpu" ]]; then echo "$gpu" | slug; return; fi
  local cpu
  cpu=$(grep -m1 '^model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2-)
  echo "cpu-$(echo "${cpu:-unknown}" | slug)"
}

machine=$(sku)
if ((${#bases[@]} == 0)); then
  shopt -s nullglob
  bases=("$repo/reports/baselines/$machine"/quick*.json)
  shopt -u nullglob
  if ((${#bases[@]} == 0)); then
    echo "perf-regress: no baseline reports/baselines/$machine/quick*.json for '$machine'; make three on this runner" \
      "with:" >&2
    echo "  for k in 1 2 3; do $gcbench run --suite quick --json $repo/reports/baselines/$machine/quick-\$k.json; done" >&2
    exit 2
  fi
fi
for b in "${bases[@]}"; do
  [[ -f "$b" ]] || { echo "perf-regress: no baseline '$b'" >&2; exit 2; }
done
mkdir -p "$out" || { echo "perf-regress: cannot create '$out'" >&2; exit 2; }

echo "perf-regress: machine $machine, baseline ${bases[*]} (${#bases[@]} run(s)), output $out"
"$gcbench" run --suite quick --json "$out/new.json" "${run_flags[@]}"
run_rc=$?
# 1 = a case FAILED verification: compare still runs and reports it as FAILED (exit 1).
if [[ $run_rc -ne 0 && $run_rc -ne 1 ]] || [[ ! -f "$out/new.json" ]]; then
  echo "perf-regress: gcbench run failed with exit code $run_rc" >&2
  exit "$run_rc"
fi

"$gcbench" compare "${bases[@]}" "$out/new.json" --threshold "$threshold" --alpha "$alpha" \
  --md "$out/summary.md" --junit "$out/junit.xml"
rc=$?
if [[ -n "${GITHUB_STEP_SUMMARY:-}" && -f "$out/summary.md" ]]; then
  cat "$out/summary.md" >> "$GITHUB_STEP_SUMMARY"
fi
if [[ $rc -eq 4 ]] && ((!strict_noisy)); then
  echo "perf-regress: WARNING: no regression found, but some cases were too noisy to judge (NOISY above)" >&2
  exit 0
fi
exit "$rc"
