#!/usr/bin/env bash
# Every source and header file outside tests/ opens with a `//` comment that says what it holds and
# its role in the suite, so a reader knows a file before opening its header or reading its code.
# Usage: purpose_line_on_every_source.sh <source root>. Exit 1 names each file whose first line is
# not a `//` comment.
set -euo pipefail
cd "$1"
dirs=(bench collectives core kernels models reports topology)
bad=0
checked=0
while IFS= read -r -d '' f; do
  checked=$((checked + 1))
  IFS= read -r first < "$f" || first=""
  if [[ "$first" != //* ]]; then
    echo "$f: first line is not a // comment saying what the file holds"
    bad=1
  fi
done < <(find "${dirs[@]}" -type f \( -name '*.cpp' -o -name '*.hpp' -o -name '*.cu' -o -name '*.cuh' \) -print0 | sort -z)
if ((bad)); then exit 1; fi
# A search that found nothing proves nothing.
((checked > 0)) || { echo "no source files found under ${dirs[*]}"; exit 1; }
echo "all $checked source and header files open with a // purpose comment"
