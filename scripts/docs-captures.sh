#!/usr/bin/env bash
# The terminal captures under docs/captures/, remade on this machine: the short CPU commands a
# user types first, one per family, run at COLUMNS=100 with standard output and standard error in
# one stream, as a log of the run shows them (on a terminal the progress lines are redrawn in place
# and cleared). Each capture's first line is the command as typed (`$ gcbench ...`), the rest is
# the console output as printed, never edited. `compare` compares two short `mem` runs made first.
# About 2 minutes on 2 cores. Then every capture line is measured, progress lines included (they
# are cut at COLUMNS in a log too, bench/common/runner.hpp progress_columns): a family named in
# FITS_100 below must fit 100 columns (exit 1 when one does not); the others' widest line is
# reported (coll and topo keep the layouts of nccl-tests' table, 116 columns, and of
# `nvidia-smi topo -m`'s legend).
#
#   scripts/docs-captures.sh [--gcbench BIN] [--out DIR] [--only FAMILY,...] [--check]
#
#   --gcbench BIN   the binary (default build/bench/gcbench)
#   --out DIR       where the captures go (default docs/captures)
#   --only LIST     only these families (comma-separated)
#   --check         run nothing: measure the captures already in --out
#
# The figures are this machine's (2 vCPUs, no GPU); the captures show what the console looks like,
# not reference numbers.
set -euo pipefail
cd "$(dirname "$0")/.."

gcbench=build/bench/gcbench
out=docs/captures
only=""
check_only=0
while (($#)); do
  case $1 in
    --gcbench) gcbench=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --check) check_only=1; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "docs-captures: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

# The families whose console is meant to fit a 100-column terminal.
FITS_100=(mem p2p gemm attn train plan scan compare)
WIDTH=100

# family | arguments (what a user types first; short options where the default runs long)
runs=(
  "mem|mem --device cpu --max-time 0.2 --latency-max 16M"
  "coll|coll --ranks 2 -b 8 -e 1M -f 4"
  "p2p|p2p --ranks 2 --size 64M"
  "gemm|gemm --device cpu --sizes 256:1024:x2"
  "attn|attn"
  "train|train --model tiny --sweep dp2,zero1,tp2,pp2-1f1b --steps 5"
  "plan|plan --model tiny --global-batch 8 --top 5"
  "topo|topo"
  "scan|scan --ranks 4 --rehearse"
  "compare|compare base.json new.json"
)

wanted() { [[ -z $only || ",$only," == *",$1,"* ]]; }

if ((!check_only)); then
  [[ -x $gcbench ]] || { echo "docs-captures: no binary $gcbench (build it, or give --gcbench)" >&2; exit 2; }
  bindir=$(cd "$(dirname "$gcbench")" && pwd)
  mkdir -p "$out"
  out_abs=$(cd "$out" && pwd)
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  echo "docs-captures: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), $gcbench"
  for entry in "${runs[@]}"; do
    IFS='|' read -r family args <<<"$entry"
    wanted "$family" || continue
    if [[ $family == compare ]]; then
      # Two short runs of one command: the base and the contender.
      for doc in base new; do
        PATH="$bindir:$PATH" gcbench mem --device cpu --group stream --kernels copy,triad --max-time 0.3 \
          --no-peers --json "$work/$doc.json" -q >/dev/null 2>&1
      done
    fi
    start=$EPOCHREALTIME
    rc=0
    # The command as typed, then its output: stdout and stderr through one pipe, in order.
    { echo "\$ gcbench $args"
      (cd "$work" && COLUMNS=$WIDTH PATH="$bindir:$PATH" bash -c "gcbench $args" 2>&1) || rc=$?
    } >"$out_abs/$family.txt"
    seconds=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
    echo "docs-captures: $family ${seconds} s, exit $rc -> $out/$family.txt"
  done
fi

# Every line measured in characters (UTF-8), not bytes (mawk's length counts bytes).
ok=1
for entry in "${runs[@]}"; do
  IFS='|' read -r family _ <<<"$entry"
  wanted "$family" || continue
  file=$out/$family.txt
  [[ -f $file ]] || { echo "docs-captures: no capture $file" >&2; ok=0; continue; }
  read -r widest over < <(perl -CSD -ne 'chomp;
    $n = length; $m = $n if $n > $m; $c++ if $n > '"$WIDTH"';
    END { printf "%d %d\n", $m, $c }' "$file")
  fits=0
  for f in "${FITS_100[@]}"; do [[ $f == "$family" ]] && fits=1; done
  if ((fits && over > 0)); then
    echo "docs-captures: $file: $over line(s) wider than $WIDTH columns (widest $widest)" >&2
    ok=0
  elif ((!fits)); then
    echo "docs-captures: $file: widest line $widest columns (not meant to fit $WIDTH)"
  fi
done
((ok)) || exit 1
echo "docs-captures: every capture meant to fit $WIDTH columns does"
