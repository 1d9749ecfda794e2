#!/usr/bin/env bash
# Times every family's default run on this machine — the command a user types first, with no
# flags but what the family needs to run at all — against the budgets users expect: `mem` within
# 30 s, every other family within 60 s. One line per family as it ends, a table last; each run's
# output in --out. Exit 0 when every run exited 0 (or 3 where the family needs a device this
# host lacks) within its budget, else 1.
#
#   scripts/time-defaults.sh [--gcbench BIN] [--out DIR] [--only FAMILY,...]
set -uo pipefail
cd "$(dirname "$0")/.."

gcbench=build/bench/gcbench
out=time-defaults-out
only=""
while (($#)); do
  case $1 in
    --gcbench) gcbench=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "time-defaults: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
[[ -x $gcbench ]] || { echo "time-defaults: no binary $gcbench (build it, or give --gcbench)" >&2; exit 2; }
mkdir -p "$out"

# family | budget s | arguments (the defaults; plan needs its one required flag, scan a world)
runs=(
  "mem|30|mem"
  "coll|60|coll"
  "p2p|60|p2p"
  "gemm|60|gemm"
  "attn|60|attn"
  "train|60|train"
  "topo|60|topo"
  "plan|60|plan --global-batch 8"
  "scan|60|scan --ranks 4 --rehearse"
)
rows=()
ok=1
echo "time-defaults: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), $gcbench"
for entry in "${runs[@]}"; do
  IFS='|' read -r family budget args <<<"$entry"
  [[ -z $only || ",$only," == *",$family,"* ]] || continue
  start=$EPOCHREALTIME
  # shellcheck disable=SC2086
  "$gcbench" $args >"$out/$family.log" 2>&1
  rc=$?
  seconds=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
  verdict=PASS
  if ! [[ $rc -eq 0 ]]; then verdict="FAIL (exit $rc)"; ok=0; fi
  if awk -v s="$seconds" -v b="$budget" 'BEGIN { exit !(s > b) }'; then verdict="OVER"; ok=0; fi
  line=$(printf '%-6s %8.1f s %6s s  %-14s gcbench %s' "$family" "$seconds" "$budget" "$verdict" "$args")
  echo "time-defaults: $line"
  rows+=("$line")
done
echo
echo "time-defaults: $(date -u +%F), $(nproc) CPUs; logs in $out/"
printf '%-6s %10s %8s  %-14s %s\n' family time budget verdict command
for r in "${rows[@]}"; do echo "$r"; done
((ok)) && exit 0 || exit 1
