#!/usr/bin/env bash
# gcb_find_cuda_library finds a cuDNN whose headers exist only under versioned names, reads its
# version from cudnn_version_v9.h and writes forwarding cudnn.h / cudnn_version.h headers.
#   find_cuda_library.sh SOURCE_DIR CMAKE
set -euo pipefail
src=$1 cmake=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
root=$work/cudnn
mkdir -p "$root/include" "$root/lib"
printf '#pragma once\n#include "cudnn_version_v9.h"\n' >"$root/include/cudnn_v9.h"
printf '#define CUDNN_MAJOR 9\n#define CUDNN_MINOR 3\n#define CUDNN_PATCHLEVEL 1\n' >"$root/include/cudnn_version_v9.h"
: >"$root/lib/libcudnn.so.9"
"$cmake" -S "$src/tests/cmake/find_cuda_library" -B "$work/build" -DGCB_SOURCE_DIR="$src" -DGCB_CUDNN_ROOT="$root" \
  >"$work/log" 2>&1 || { cat "$work/log"; exit 1; }
found=$(cat "$work/build/found.txt")
[[ $found == "ON 9.3.1" ]] || { echo "FAIL: found '$found', expected 'ON 9.3.1'"; cat "$work/log"; exit 1; }
fwd=$work/build/generated/CUDNN_plain_names
grep -q '#include <cudnn_v9.h>' "$fwd/cudnn.h" || { echo "FAIL: no forwarding cudnn.h"; exit 1; }
grep -q '#include <cudnn_version_v9.h>' "$fwd/cudnn_version.h" || { echo "FAIL: no forwarding cudnn_version.h"; exit 1; }
grep -q 'versioned headers only' "$work/log" || { echo "FAIL: the configure log does not say so"; exit 1; }
echo "cuDNN with versioned headers only: found 9.3.1, plain names forwarded"
