#!/usr/bin/env bash
# A family under bench/ uses bench/common and the libraries below it, never another family
# (docs/design.md "Layers"): what two families share lives in bench/common or lower. scan is the
# exception by design: its stages run the measuring families' cases (bench/scan/CMakeLists.txt);
# bench/micro is the micro-benchmarks of library code, no family.
# Usage: families_stand_alone.sh <source root>. Exit 1 names each offending include.
set -euo pipefail
cd "$1"
bad=0
families=0
for dir in bench/*/; do
  family=$(basename "$dir")
  [[ "$family" == common || "$family" == scan || "$family" == micro ]] && continue
  families=$((families + 1))
  while IFS= read -r line; do
    echo "$line: the $family family includes another family (move what they share to bench/common or lower)"
    bad=1
  done < <(grep -rnE --include='*.cpp' --include='*.hpp' --include='*.cu' '#include "bench/[a-z0-9_]+/' "$dir" |
             grep -vE "#include \"bench/($family|common)/" || true)
done
# The loop must have looked at the families (else it proves nothing).
((families >= 10)) || { echo "found only $families family folders under bench/"; exit 1; }
if ((bad)); then exit 1; fi
echo "$families families include only themselves and bench/common"
