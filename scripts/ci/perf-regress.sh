#!/usr/bin/env bash
# CI performance gate: runs the quick suite, compares it with the baseline of this machine's
# GPU SKU and writes a Markdown summary (PR comment / job summary) and JUnit XML.
#   scripts/ci/perf-regress.sh [BASE.json]
# BASE defaults to reports/baselines/<sku>/quick.json, where <sku> is the first GPU's name from
# nvidia-smi ("NVIDIA H100 80GB HBM3" -> nvidia-h100-80gb-hbm3), or "cpu-<CPU model>" on a
# machine without a GPU (never the host name, so every runner of one kind shares a baseline).
# Environment: GCBENCH (binary; default build/bench/gcbench, else gcbench on PATH),
#   OUT_DIR (default perf-out), THRESHOLD (default 5%), ALPHA (default 0.05).
# Exit code: compare's — 0 no regression, 1 regression, 2 bad input (e.g. no baseline yet).
set -uo pipefail
cd "$(dirname "$0")/../.."

gcbench=${GCBENCH:-}
if [[ -z "$gcbench" ]]; then
  if [[ -x build/bench/gcbench ]]; then gcbench=build/bench/gcbench; else gcbench=$(command -v gcbench || true); fi
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

out=${OUT_DIR:-perf-out}
mkdir -p "$out"
machine=$(sku)
base=${1:-reports/baselines/$machine/quick.json}
if [[ ! -f "$base" ]]; then
  echo "perf-regress: no baseline '$base' for '$machine'; make one on this runner with:" >&2
  echo "  $gcbench run --suite quick --json $base" >&2
  exit 2
fi

echo "perf-regress: machine $machine, baseline $base"
"$gcbench" run --suite quick --json "$out/new.json"
run_rc=$?
# 1 = a case FAILED verification: compare still runs and reports it as FAILED (exit 1).
if [[ $run_rc -ne 0 && $run_rc -ne 1 ]] || [[ ! -f "$out/new.json" ]]; then
  echo "perf-regress: gcbench run failed with exit code $run_rc" >&2
  exit "$run_rc"
fi

"$gcbench" compare "$base" "$out/new.json" --threshold "${THRESHOLD:-5%}" --alpha "${ALPHA:-0.05}" \
  --md "$out/summary.md" --junit "$out/junit.xml"
rc=$?
if [[ -n "${GITHUB_STEP_SUMMARY:-}" && -f "$out/summary.md" ]]; then
  cat "$out/summary.md" >> "$GITHUB_STEP_SUMMARY"
fi
exit "$rc"
