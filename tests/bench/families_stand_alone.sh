#!/usr/bin/env bash
# A family under bench/ uses bench/common and the libraries below it, never another family
# (docs/design.md "Layers"): what two families share lives in bench/common or lower. scan is the
# exception by design: its stages run the measuring families' cases (bench/scan/CMakeLists.txt);
# bench/micro is the micro-benchmarks of library code, no family. And the other way round: the
# report renderers in reports/ name no family of the table (bench/families.cpp) — a family's view
# is its own file, reached through its row.
# Usage: families_stand_alone.sh <source root>. Exit 1 names each offending include or name.
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
names=$(tr '\n' ' ' <bench/families.cpp | grep -oE 'Family\{ *"[a-z0-9_]+"' | cut -d'"' -f2)
(($(wc -w <<<"$names") >= 10)) || { echo "found only $(wc -w <<<"$names") rows in bench/families.cpp"; exit 1; }
for name in $names; do
  while IFS= read -r line; do
    echo "$line: the report renderers name the $name family (its view belongs in bench/$name, reached through its row)"
    bad=1
  done < <(grep -nE "\"$name[\"/]" reports/html.cpp reports/markdown.cpp reports/report_charts.cpp \
             reports/report_data.cpp reports/svg_chart.cpp || true)
done
if ((bad)); then exit 1; fi
echo "$families families include only themselves and bench/common; reports/ names none of the table's $(wc -w <<<"$names")"
