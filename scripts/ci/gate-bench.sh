#!/usr/bin/env bash
# A benchmark of the CI gate itself (`gcbench run --suite quick` + `gcbench compare`), on the
# machine it runs on: does it stay quiet when nothing changed, and does it fail when something
# did? The baseline is --base-runs K quick runs (as a CI job keeps K runs of the main branch;
# compare pools them and asks a change to clear their slowest run and the run-to-run spread of
# its family, docs/readme-compare.md), then three scenarios:
#   (a) --pairs N further quick runs of the same binary, each compared with the baseline:
#       compare must exit 0 or 4 (NOISY: too noisy to judge), never 1 (REGRESSION).
#   (b) the same baseline against a NEW run given half the CPUs (a cgroup v1 `cpu` quota of
#       ncpu/2 CPUs): compare must exit 1 and name the families that slowed.
#   (c) a real code slowdown: a build with -DGCB_GATE_SLOW_TRIAD=ON (the host STREAM triad does
#       30 % more work, kernels/mem/host_mem.cpp), `--families mem` against K runs of the same family
#       of the normal build: compare must exit 1 naming mem/host/triad.
# Prints one line per run (its seconds and the 1-minute load average before and after it: on a
# shared host other jobs' load decides what can be judged) and a table last; writes every
# document and compare log to --out.
#
#   scripts/ci/gate-bench.sh [--pairs N] [--base-runs K] [--out DIR] [--gcbench BIN] [--skip-build]
#
# --gcbench: the binary under test (default build/bench/gcbench). The slowed build goes to
# build-gate-slow/ (ccache used when installed); --skip-build reuses it. (b) needs root and the
# cgroup v1 cpu controller (/sys/fs/cgroup/cpu); without them it is SKIP, said so. Exit 0 when
# every scenario that ran met its expectation, else 1.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2

pairs=5
base_runs=3
out=gate-bench-out
gcbench=build/bench/gcbench
skip_build=0
while (($#)); do
  case $1 in
    --pairs) pairs=$2; shift 2 ;;
    --base-runs) base_runs=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --gcbench) gcbench=$2; shift 2 ;;
    --skip-build) skip_build=1; shift ;;
    -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "gate-bench: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
[[ -x $gcbench ]] || { echo "gate-bench: no binary $gcbench (build it, or give --gcbench)" >&2; exit 2; }
mkdir -p "$out"
rows=()
ok=1
t0=$SECONDS

load() { cut -d' ' -f1 /proc/loadavg; }  # the 1-minute load average: other jobs on the host show here
quick() {  # quick BIN JSON [extra args...]: one quick run; "<seconds> s, load <before> -> <after>" on stdout
  local bin=$1 json=$2
  shift 2
  local start=$SECONDS before
  before=$(load)
  "$bin" run --suite quick -q --json "$json" "$@" >"${json%.json}.log" 2>&1
  echo "$((SECONDS - start)) s, load $before -> $(load)"
}
judge() {  # judge NAME EXPECT BASE... NEW: compare, one table row; EXPECT is "0|4" or "1"
  local name=$1 expect=$2
  shift 2
  "$gcbench" compare "$@" >"$out/$name.compare.txt" 2>&1
  local rc=$?
  local line slower
  line=$(grep -m1 '^compare: ' "$out/$name.compare.txt" | sed 's/^compare: //')
  slower=$(grep -E '^(SLOWER|FAILED) ' "$out/$name.compare.txt" | awk '{print $2}' | cut -d/ -f1 | sort -u |
    paste -sd, -)
  local verdict=PASS
  [[ "|$expect|" == *"|$rc|"* ]] || { verdict=FAIL; ok=0; }
  rows+=("$(printf '%-10s %-6s %-5s %-6s %-22s %s' "$name" "$expect" "$rc" "$verdict" "${slower:--}" "$line")")
  echo "gate-bench: $name: compare exit $rc (expected $expect); slowed families: ${slower:--}"
}

echo "gate-bench: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), binary $gcbench, $base_runs baseline runs," \
  "$pairs further runs"
bases=()
for ((k = 1; k <= base_runs; ++k)); do
  s1=$(quick "$gcbench" "$out/base$k.json")
  echo "gate-bench: baseline run $k: $s1"
  bases+=("$out/base$k.json")
done
# (a) further runs of the same binary.
for ((i = 1; i <= pairs; ++i)); do
  s2=$(quick "$gcbench" "$out/a$i-new.json")
  echo "gate-bench: run $i: $s2"
  judge "a$i" "0|4" "${bases[@]}" "$out/a$i-new.json"
done

# (b) NEW on half the CPUs.
cg=/sys/fs/cgroup/cpu/gcb-gate-$$
if [[ $(id -u) -eq 0 && -d /sys/fs/cgroup/cpu ]] && mkdir "$cg" 2>/dev/null; then
  period=100000
  echo $period >"$cg/cpu.cfs_period_us"
  echo $((period * $(nproc) / 2)) >"$cg/cpu.cfs_quota_us"
  s=$(bash -c "echo \$\$ > $cg/tasks && exec $(printf '%q' "$gcbench") run --suite quick -q --json $out/b-new.json" \
    >"$out/b-new.log" 2>&1; echo $?)
  echo "gate-bench: half-CPU run exit $s, load $(load)"
  rmdir "$cg" 2>/dev/null
  judge "b-halfcpu" "1" "${bases[@]}" "$out/b-new.json"
else
  rows+=("$(printf '%-10s %-6s %-5s %-6s %-22s %s' b-halfcpu 1 - SKIP - 'needs root and the cgroup v1 cpu controller')")
fi

# (c) a slowed triad.
slow=build-gate-slow
if ((!skip_build)); then
  launcher=()
  command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
  generator=()
  command -v ninja >/dev/null && generator=(-G Ninja)
  cmake -S . -B "$slow" "${generator[@]}" "${launcher[@]}" -DCMAKE_BUILD_TYPE=Release -DGCB_GATE_SLOW_TRIAD=ON \
    -DGCB_BUILD_TESTS=OFF -DGCB_BUILD_MICRO=OFF >"$out/slow-configure.log" 2>&1 &&
    cmake --build "$slow" -j "$(nproc)" --target gcbench >"$out/slow-build.log" 2>&1 ||
    { echo "gate-bench: the slowed build failed (see $out/slow-*.log)" >&2; exit 1; }
fi
cbases=()
for ((k = 1; k <= base_runs; ++k)); do
  s1=$(quick "$gcbench" "$out/c-base$k.json" --families mem)
  cbases+=("$out/c-base$k.json")
done
s2=$(quick "$slow/bench/gcbench" "$out/c-new.json" --families mem)
echo "gate-bench: mem-only runs: $base_runs normal (the last $s1), one slowed triad ($s2)"
judge "c-triad" "1" "${cbases[@]}" "$out/c-new.json"
if ! grep -qE '^SLOWER +mem/host/triad ' "$out/c-triad.compare.txt"; then
  echo "gate-bench: (c) did not name mem/host/triad SLOWER" >&2
  ok=0
fi

echo
echo "gate-bench: $(date -u '+%F %H:%M UTC'), $(nproc) CPUs, $((SECONDS - t0)) s in all, load $(cut -d' ' -f1-3 /proc/loadavg) at the end;" \
  "documents and logs in $out/"
printf '%-10s %-6s %-5s %-6s %-22s %s\n' scenario expect exit result slowed-families "compare's verdict line"
for r in "${rows[@]}"; do echo "$r"; done
((ok)) && exit 0 || exit 1
