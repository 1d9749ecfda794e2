#!/usr/bin/env bash
# CUDA compiler launcher (cmake/GcbResourceCheck.cmake): runs the compile command it is given
# (nvcc with -Xptxas=-v, possibly behind ccache, which replays a cached compile's stderr too),
# keeps ptxas's resource report in <object>.ptxas.txt beside the object, and passes every other
# line of stderr through. The build log then carries one table (gcb-flash-resources) instead of
# ptxas's per-kernel lines. Exits with the compiler's status.
set -u
object=""
prev=""
for arg in "$@"; do
  [[ $prev == -o ]] && object=$arg
  prev=$arg
done
err=$(mktemp)
"$@" 2>"$err"
rc=$?
report='^ptxas info|bytes stack frame'
if [[ -n $object ]]; then
  grep -E "$report" "$err" >"$object.ptxas.txt.tmp"
  mv -f "$object.ptxas.txt.tmp" "$object.ptxas.txt"
fi
grep -vE "$report" "$err" >&2
rm -f "$err"
exit $rc
