#!/usr/bin/env bash
# scripts/ci/perf-regress.sh from a folder outside the repository: a relative BASE and --out are
# the caller's, flags after `--` reach `gcbench run`, nothing is written into the source tree,
# and compare's verdict decides the exit code (an unchanged run passes; a baseline with a faked
# 100x faster gemm is a regression, also as two baseline runs pooled).
#   perf_regress.sh REPO GCBENCH
set -euo pipefail
repo=$1
gcbench=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
before=$(git -C "$repo" status --porcelain | sort)
fail() { echo "perf_regress: $*" >&2; exit 1; }

"$gcbench" run --suite quick --families gemm --device cpu -q --max-time 0.2 --json base.json
set +e
GCBENCH=$gcbench "$repo/scripts/ci/perf-regress.sh" --out out --threshold 50% base.json -- \
  --families gemm --device cpu -q --max-time 0.2 >log.txt 2>&1
rc=$?
set -e
[[ $rc -eq 0 ]] || { cat log.txt; fail "an unchanged run exited $rc"; }
[[ -f out/new.json && -f out/summary.md && -f out/junit.xml ]] || fail "outputs are not under the caller's out/"
grep -q '"key": *"gemm/' out/new.json || fail "the run flags did not reach gcbench run"
if grep -q '"key": *"mem/' out/new.json; then fail "--families gemm was not forwarded"; fi

# The baseline 100x faster on every sample and metric: NEW is then 100x slower, a regression
# however noisy the host (ln 100 = 4.6 against 3 x the spread).
python3 - base.json fast.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for r in d["results"]:
    r["samples"] = [s / 100 for s in r.get("samples", [])]
    for m in r.get("metrics", []):
        if m.get("value") is not None:
            m["value"] = m["value"] * 100 if m.get("higher_is_better", True) else m["value"] / 100
json.dump(d, open(sys.argv[2], "w"))
PY
set +e
GCBENCH=$gcbench "$repo/scripts/ci/perf-regress.sh" --out out2 fast.json fast.json -- \
  --families gemm --device cpu -q --max-time 0.2 >log2.txt 2>&1
rc=$?
set -e
[[ $rc -eq 1 ]] || { cat log2.txt; fail "a 100x slowdown exited $rc, not 1"; }
grep -q 'SLOWER' log2.txt || fail "no SLOWER row"
grep -q 'BASE pools 2 runs' log2.txt || fail "two BASE documents were not pooled"
[[ "$(git -C "$repo" status --porcelain | sort)" == "$before" ]] || fail "the source tree changed"
echo "perf_regress: ok"
