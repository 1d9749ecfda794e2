#!/usr/bin/env bash
# ctest gpu_lease_rehearsal: scripts/gpu-lease.sh rehearsed on this build's binaries (--rehearse
# hides any GPU, so the result is the same on every machine): exit 0, exactly two files in the
# output folder (lease.tar.gz, summary.txt), the summary's every step WAIVED, the tarball holding
# the summary, the environment and a log per step; --plan lists the same steps and writes nothing.
# The later leases' steps (--second, --third, --fourth) rehearsed too: every step WAIVED (a bad
# flag would FAIL).
# Usage: lease_rehearsal.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1
build=$2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gcb-lease-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() {
  echo "FAIL: $*"
  exit 1
}

plan=$("$src/scripts/gpu-lease.sh" --plan --bin-dir "$build" --out "$tmp/plan-out")
[[ ! -e $tmp/plan-out ]] || fail "--plan created its output folder"
mapfile -t ids < <(awk 'NR > 1 && $1 ~ /^[0-9]+[a-z]?$/ {print $1}' <<<"$plan")
((${#ids[@]} >= 8)) || fail "--plan lists ${#ids[@]} steps: $plan"

out=$tmp/out
rc=0
"$src/scripts/gpu-lease.sh" --rehearse --bin-dir "$build" --out "$out" >"$tmp/stdout" 2>&1 || rc=$?
cat "$tmp/stdout"
((rc == 0)) || fail "gpu-lease.sh --rehearse exited $rc"
mapfile -t files < <(cd "$out" && ls -A)
[[ "${files[*]}" == "lease.tar.gz summary.txt" ]] || fail "output folder holds: ${files[*]}"

# The table: a header row starting with "step", then one row per step: "<id> <title>  <verdict> …".
for id in "${ids[@]}"; do
  verdict=$(awk -v id="$id" '$1 == id {print $3; exit}' "$out/summary.txt")
  [[ $verdict == WAIVED ]] || fail "step $id is '$verdict', not WAIVED"
done
# The table is printed last on stdout.
[[ $(tail -1 "$tmp/stdout" | awk '{print $1}') == "${ids[-1]}" ]] || fail "stdout does not end with the table"

mkdir "$tmp/x"
tar -xzf "$out/lease.tar.gz" -C "$tmp/x"
top=$(ls "$tmp/x")
for f in summary.txt env.txt steps.tsv commands.txt ldd.txt; do
  [[ -f $tmp/x/$top/$f ]] || fail "tarball lacks $f"
done
logs=$(ls "$tmp/x/$top" | grep -c '\.log$' || true)
((logs >= 1)) || fail "tarball holds no step log"

later=0
for mode in second third fourth; do
  plan_m=$("$src/scripts/gpu-lease.sh" --$mode --plan --bin-dir "$build")
  mapfile -t ids_m < <(awk 'NR > 1 && $1 ~ /^[0-9]+[a-z]?$/ {print $1}' <<<"$plan_m")
  ((${#ids_m[@]} >= 5)) || fail "--$mode --plan lists ${#ids_m[@]} steps: $plan_m"
  rc=0
  "$src/scripts/gpu-lease.sh" --$mode --rehearse --bin-dir "$build" --out "$tmp/out-$mode" >"$tmp/stdout-$mode" 2>&1 || rc=$?
  ((rc == 0)) || { cat "$tmp/stdout-$mode"; fail "gpu-lease.sh --$mode --rehearse exited $rc"; }
  for id in "${ids_m[@]}"; do
    verdict=$(awk -v id="$id" '$1 == id {print $3; exit}' "$tmp/out-$mode/summary.txt")
    [[ $verdict == WAIVED ]] || fail "--$mode: step $id is '$verdict', not WAIVED"
  done
  later=$((later + ${#ids_m[@]}))
done
echo "gpu_lease_rehearsal: ${#ids[@]} steps WAIVED, 2 files, $logs logs; later leases $later steps WAIVED"
