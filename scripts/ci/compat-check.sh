#!/usr/bin/env bash
# Compile-only checks against the oldest toolchains gcbench supports, on a slower cadence than CI
# (a maintainer runs it, or an opt-in CI job): README "Supported systems".
#   1. every C++ file with g++ 11 (Debian's g++-11), syntax and semantics (-fsyntax-only);
#   2. with NVCC12=/path/to/bin/nvcc of a CUDA 12.4–12.7 toolkit: every .cu file for sm_80 alone
#      and for that toolkit's default list (80-real;90-real;90-virtual). Neither Debian 12 nor PyPI
#      carries a CUDA 12 nvcc driver (the nvidia-cuda-nvcc-cu12 wheels ship ptxas and NVVM only),
#      so without NVCC12 this part is skipped, and said so.
# It reuses the compile commands of a configured build (compile_commands.json), swapping the
# compiler and the architecture flags; nothing is linked, nothing is written outside a temp folder.
#   [NVCC12=…] [JOBS=2] scripts/ci/compat-check.sh [BUILD_DIR]     (default build)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
jobs=${JOBS:-2}
nvcc12=${NVCC12:-}
[[ -f $build/compile_commands.json ]] || { echo "compat-check: configure a build in $build first" >&2; exit 2; }
command -v g++-11 >/dev/null || apt-get install -y -q --no-install-recommends g++-11 >/dev/null
if [[ -n $nvcc12 ]]; then
  v=$("$nvcc12" --version | sed -n 's/.*release \([0-9.]*\).*/\1/p')
  [[ $v == 12.* ]] || { echo "compat-check: NVCC12=$nvcc12 is CUDA '$v', not 12.x" >&2; exit 2; }
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$build/compile_commands.json" "$nvcc12" "$work" <<'PY'
import json, os, shlex, sys
db, nvcc12, work = sys.argv[1], sys.argv[2], sys.argv[3]
lists = {"sm80": ["-gencode=arch=compute_80,code=sm_80"],
         "cuda12": ["-gencode=arch=compute_80,code=sm_80", "-gencode=arch=compute_90,code=sm_90",
                    "-gencode=arch=compute_90,code=compute_90"]}
cuda_include = os.path.join(os.path.dirname(os.path.dirname(nvcc12)), "include") if nvcc12 else ""
out = open(os.path.join(work, "jobs.txt"), "w")
for i, e in enumerate(json.load(open(db))):
    args, src = shlex.split(e["command"]), e["file"]
    if src.endswith(".cu") and nvcc12:
        base = [a.replace("/usr/local/cuda/include", cuda_include) for a in args[1:]
                if not a.startswith("--generate-code") and not a.startswith("-Xptxas") and a != "-o"
                and not a.endswith(".o")]
        for name, flags in lists.items():
            cmd = [nvcc12, *base, *flags, "-o", f"{work}/{i}.{name}.o"]
            out.write(f"nvcc-12/{name} {src}\t{e['directory']}\t{shlex.join(cmd)}\n")
    elif src.endswith(".cpp"):
        base = [a for a in args[1:] if a not in ("-o", "-c") and not a.endswith(".o")]
        out.write(f"g++-11 {src}\t{e['directory']}\t{shlex.join(['g++-11', *base, '-fsyntax-only'])}\n")
PY
total=$(wc -l <"$work/jobs.txt")
[[ -n $nvcc12 ]] || echo "compat-check: CUDA 12.x part skipped (no NVCC12 given; see the header of this script)"
echo "compat-check: $total compiles, $jobs at a time"
start=$SECONDS
run_one() {
  IFS=$'\t' read -r what dir cmd <<<"$1"
  if out=$(cd "$dir" && eval "$cmd" 2>&1); then echo "ok   $what"; else printf 'FAIL %s\n%s\n' "$what" "$(head -20 <<<"$out")"; fi
}
export -f run_one
tr '\n' '\0' <"$work/jobs.txt" | xargs -0 -P "$jobs" -I{} bash -c 'run_one "$1"' _ {} >"$work/results"
grep -v '^ok' "$work/results" || true
ok=$(grep -c '^ok' "$work/results" || true)
echo "compat-check: $ok of $total compiled in $((SECONDS - start)) s"
[[ $ok == "$total" ]]
