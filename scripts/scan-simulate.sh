#!/usr/bin/env bash
# The table of docs/readme-scan.md ("At scale, by simulation"): `gcbench scan`'s search and
# verdict code (PairSearch, judge_pairs, judge_device, HalvingSearch, judge_coll) driven over a
# synthetic cluster of 64, 256, 1,024 and 4,096 nodes of 8 GPUs with four planted culprits
# (tests/bench/scan/scan_simulate.cpp says what is real and what is modelled). Builds the
# simulator in BUILD (default build) and prints a Markdown table; extra arguments go to it
# (--nodes, --gpus, --rack, --seed, --budget SECONDS (default 600), --pair-rounds, --check). 4,096 nodes take a few
# minutes and about 4 GB of memory.
#   scripts/scan-simulate.sh [BUILD] [-- ARGS...]
set -euo pipefail
cd "$(dirname "$0")/.."
build=build
if [ $# -gt 0 ] && [ "$1" != "--" ]; then
  build=$1
  shift
fi
[ "${1:-}" = "--" ] && shift
cmake --build "$build" -j2 --target scan_simulate >/dev/null
date -u '+# %Y-%m-%d %H:%M UTC'
"$build/tests/bench/scan/scan_simulate" "$@"
