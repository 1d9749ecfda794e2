#!/usr/bin/env bash
# Checks that every tracked C++/CUDA file follows .clang-format: exits 1 and prints the files and
# the first lines that differ, 0 when the tree is formatted. Fix with
#   git ls-files -z '*.cpp' '*.hpp' '*.cu' '*.cuh' '*.h' '*.cc' | xargs -0 clang-format -i
# or, for the lines of one change, `git clang-format <base>`. Needs clang-format (Debian package
# clang-format; the tree is formatted with version 14).
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v clang-format >/dev/null; then
  echo "check-format: clang-format not found (install the clang-format package)" >&2
  exit 2
fi

mapfile -d '' files < <(git ls-files -z '*.cpp' '*.hpp' '*.cu' '*.cuh' '*.h' '*.cc')
bad=0
for f in "${files[@]}"; do
  # --dry-run --Werror prints a warning per line it would change and exits non-zero.
  if ! out=$(clang-format --dry-run --Werror "$f" 2>&1); then
    bad=$((bad + 1))
    printf '%s\n' "$out" | head -n 6
  fi
done
if ((bad)); then
  echo "check-format: $bad of ${#files[@]} C++/CUDA files do not follow .clang-format"
  exit 1
fi
echo "check-format: all ${#files[@]} C++/CUDA files follow .clang-format"
