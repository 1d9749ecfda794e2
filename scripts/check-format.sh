#!/usr/bin/env bash
# Checks that the C++/CUDA lines changed since a base commit follow .clang-format. Only changed
# lines are checked (git clang-format), so files written before .clang-format existed do not fail
# for their old lines.
#   GCB_FORMAT_BASE=<commit>  the base (e.g. the merge base with main in CI): a line that is not
#                             formatted exits 1 and prints the diff that would fix it.
#   unset                     reports what is unformatted against HEAD~1 (or, in a fresh
#                             repository, nothing) and exits 0: a report, not a gate.
# Fix the lines with `git clang-format <base>`. Needs clang-format and git-clang-format (Debian
# package clang-format).
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v git-clang-format >/dev/null; then
  echo "check-format: git-clang-format not found (install the clang-format package)" >&2
  exit 2
fi

base=${GCB_FORMAT_BASE:-}
gate=1
if [[ -z "$base" ]]; then
  gate=0
  if ! base=$(git rev-parse --verify --quiet HEAD~1); then
    echo "check-format: no GCB_FORMAT_BASE and no parent commit: nothing to compare"
    exit 0
  fi
fi
git rev-parse --verify --quiet "$base^{commit}" >/dev/null || { echo "check-format: unknown base '$base'" >&2; exit 2; }

extensions=cpp,hpp,cu,cuh,h,cc
# --diff prints the changes clang-format would make to the lines that differ from the base
# (committed and uncommitted); it prints "no modified files to format" or "clang-format did not
# modify any files" when there is nothing to fix.
out=$(git clang-format --diff --extensions "$extensions" "$base" -- 2>&1) || true
if [[ -z "$out" || "$out" == *"no modified files to format"* || "$out" == *"did not modify any files"* ]]; then
  echo "check-format: changed lines since ${base:0:12} are formatted"
  exit 0
fi
printf '%s\n' "$out"
echo "check-format: lines changed since ${base:0:12} do not follow .clang-format (fix: git clang-format $base)"
if ((gate)); then exit 1; fi
echo "check-format: GCB_FORMAT_BASE is not set: reported only, not failed"
