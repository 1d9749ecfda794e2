#!/bin/sh
# Runs a command and checks its exit code and output: expect_run.sh CODE REGEX [REGEX...] -- CMD...
# CODE is an exact exit code, or "nonzero". Each REGEX (grep -E) must match the combined output.
set -u
code_want=$1
shift
regexes=""
while [ "$#" -gt 0 ] && [ "$1" != "--" ]; do
  regexes="$regexes
$1"
  shift
done
[ "$#" -gt 0 ] && shift
out=$("$@" 2>&1)
code=$?
printf '%s\n' "$out"
if [ "$code_want" = "nonzero" ]; then
  [ "$code" -ne 0 ] || { echo "expect_run: exit code 0, wanted non-zero" >&2; exit 1; }
elif [ "$code" -ne "$code_want" ]; then
  echo "expect_run: exit code $code, wanted $code_want" >&2
  exit 1
fi
echo "$regexes" | while IFS= read -r re; do
  [ -z "$re" ] && continue
  printf '%s\n' "$out" | grep -Eq -- "$re" || { echo "expect_run: output lacks /$re/" >&2; exit 1; }
done
