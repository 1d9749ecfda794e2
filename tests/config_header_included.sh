#!/usr/bin/env bash
# Every source that tests a GCB_HAVE_* macro must include gcb/config.hpp: without it `#if
# GCB_HAVE_X` reads an undefined macro as 0 and silently compiles the "without X" branch.
# Usage: config_header_included.sh <source root>. Exit 1 names each offending file.
set -euo pipefail
cd "$1"
bad=0
checked=0
while IFS= read -r f; do
  checked=$((checked + 1))
  if ! grep -q '#include "gcb/config.hpp"' "$f"; then
    echo "$f tests GCB_HAVE_* without #include \"gcb/config.hpp\""
    bad=1
  fi
done < <(grep -rlE --include='*.cpp' --include='*.hpp' --include='*.cu' --include='*.cuh' \
           '^\s*#\s*(el)?if.*GCB_HAVE_' core collectives kernels models reports topology bench tests || true)
if ((bad)); then exit 1; fi
# The macros are tested somewhere (collectives, core/nvtx.hpp, ...): finding none means the search broke.
if ((checked == 0)); then echo "no file tests GCB_HAVE_*: wrong source root?"; exit 1; fi
echo "all $checked files testing GCB_HAVE_* include gcb/config.hpp"
