#!/usr/bin/env bash
# The pictures docs/readme-report.md shows, remade on this machine: a short host `mem` run and a
# one-host `scan --rehearse`, each turned into an HTML report by `gcbench report` and drawn by
# headless Chromium at 1000 pixels wide, as a reader's browser shows it.
#
#   scripts/docs-screenshots.sh [gcbench binary] [output dir, default docs/img]
#
# Needs chromium (Debian's `chromium` package). The figures are this machine's; the pictures show
# the layout of the pages, not reference numbers.
set -euo pipefail
bin=${1:-build/bench/gcbench}
out=${2:-docs/img}
command -v chromium >/dev/null || { echo "docs-screenshots: chromium is not installed" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"
"$bin" mem --device cpu --kernels copy,scale,add,triad --max-time 0.3 --json "$tmp/mem.json" -q >/dev/null
"$bin" report "$tmp/mem.json" -o "$tmp/mem.html" --title "gcbench mem --device cpu" >/dev/null
"$bin" scan --ranks 4 --rehearse --budget 30 --json "$tmp/scan.json" -q >/dev/null || true  # exit 1: a culprit
"$bin" report "$tmp/scan.json" -o "$tmp/scan.html" --title "gcbench scan --ranks 4 --rehearse" >/dev/null
shot() {
  chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size="1000,$3" \
    --screenshot="$2" "file://$1" >/dev/null 2>&1
}
shot "$tmp/mem.html" "$out/report-mem.png" 1300
shot "$tmp/scan.html" "$out/report-scan.png" 1100
echo "docs-screenshots: wrote $out/report-mem.png and $out/report-scan.png"
