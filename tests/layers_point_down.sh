#!/usr/bin/env bash
# Every library folder includes only its own headers and those of the floors below it
# (docs/design.md "Layers"): the table below is that picture, one line per folder — the folders
# whose headers its files may include. A folder not in the table (bench/, tests/) may include any.
# An include outside its line fails with the file, the line and the folder it reached; a new folder
# is a new line here, or the check fails on it ("no floor for"). Each folder's CMake library links
# exactly the libraries of its line, so the link line says the same thing.
# Usage: layers_point_down.sh <source root>. Exit 1 names each offending include.
set -euo pipefail
cd "$1"
declare -A floor=(
  [core]="core gcb"
  [reports]="core gcb reports"
  [topology]="core gcb reports topology"
  [kernels/common]="core gcb kernels/common"
  [kernels/mem]="core gcb kernels/mem"
  [kernels/p2p]="core gcb kernels/p2p"
  [kernels/gemm]="core gcb kernels/gemm kernels/mem"
  [kernels/attention]="core gcb kernels/attention kernels/common"
  [kernels/train]="core gcb kernels/train"
  [collectives]="core gcb collectives"
  [models/model]="core gcb kernels/attention models/model"
  [models/io]="core gcb reports models/model models/io"
  [models/theory]="core gcb reports collectives models/model models/theory"
  [models/backend]="core gcb kernels/train models/model models/backend"
  [models/backend/cpu]="core gcb kernels/attention kernels/gemm models/model models/backend models/backend/cpu"
  [models/backend/device]="core gcb collectives models/model models/backend models/backend/device"
  [models/backend/cuda]="core gcb collectives kernels/attention kernels/gemm kernels/train models/model models/backend
                         models/backend/device models/backend/cuda"
  [models/engine]="core gcb collectives models/model models/io models/backend models/engine models/engine/comm"
  [models/engine/comm]="core gcb collectives models/model models/backend models/engine/comm"
  [models/run]="core gcb reports collectives models/model models/io models/theory models/backend models/backend/cpu
                models/engine models/run"
  [models/planner]="core gcb reports topology collectives kernels/attention models/model models/theory models/planner"
)
# The files above their folder's floor: the backend table (its own library, gcb_backends) makes
# every backend and names each one's MFU peak, so it sees them all.
factory="core gcb collectives models/model models/theory models/backend models/backend/cpu models/backend/cuda"
declare -A file_floor=([models/backend/backend_factory.cpp]=$factory [models/backend/backend_factory.hpp]=$factory)
projects='^(core|gcb|reports|topology|kernels|collectives|models|bench|tests)/'
bad=0
checked=0
while IFS= read -r -d '' f; do
  dir=${f%/*}
  allowed=${file_floor[$f]:-${floor[$dir]:-}}
  if [[ -z $allowed ]]; then
    echo "$f: no floor for $dir in tests/layers_point_down.sh"
    bad=1
    continue
  fi
  while IFS=: read -r n inc; do
    [[ $inc =~ $projects ]] || continue
    [[ $inc == */* ]] || continue
    to=${inc%/*}
    if [[ " $(echo $allowed) " != *" $to "* ]]; then
      echo "$f:$n: includes $inc — $dir may include only: $(echo $allowed)"
      bad=1
    fi
  done < <(grep -n '^#include "' "$f" | sed 's/^\([0-9]*\):#include "\([^"]*\)".*/\1:\2/' || true)
  checked=$((checked + 1))
done < <(find core reports topology kernels collectives models -type f \( -name '*.cpp' -o -name '*.hpp' -o -name '*.cu' -o -name '*.cuh' \) -print0)
((bad)) && exit 1
((checked > 100)) || { echo "only $checked files found: the check proves nothing"; exit 1; }
echo "$checked files: every include points to its own floor or one below"
