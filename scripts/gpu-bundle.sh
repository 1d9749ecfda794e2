#!/usr/bin/env bash
# Builds the GPU lease bundle here, on a CPU machine with the CUDA toolkit and our Debian packages:
# a lean CUDA build (Hopper, GCB_CUDA_ARCHITECTURES 90a; no MPI, Gloo, hwloc, OpenBLAS, libnuma or
# micro-benchmarks; fmt header-only) of `gcbench` and the `gpu`-labelled test binaries, stripped,
# into .lease/ (ignored by git), with the torch peer scripts and a manifest. scripts/gpu-lease.sh
# runs it on a lent GPU machine without building.
#
#   scripts/gpu-bundle.sh [-j N] [--build-dir DIR] [--out DIR] [--max-mib N] [--deps-only]
#
# --deps-only makes only .lease/deps (seconds, no build), for `scripts/gpu-lease.sh --build`.
#
# Layout of .lease/:
#   bin/gcbench, bin/test_*   stripped binaries (peer scripts are found beside them: ../peers)
#   peers/*.py                scripts/peers/
#   deps/                     fmt, CLI11, nlohmann-json headers and the GoogleTest sources, for
#                             `scripts/gpu-lease.sh --build` on a machine where the bundle's
#                             libraries do not resolve
#   manifest.txt              revision, nvcc, architectures, libraries, every file's size and sha256
#
# Refuses (exit 1, naming the binary and the library) when `ldd` of a bundled binary needs a
# library outside libc, libm, libstdc++, libgcc_s, libgomp, the loader and the CUDA libraries a
# GPU image has through PyTorch's wheels (cuBLAS, cuBLASLt, NCCL, cuDNN, nvrtc, cudart), or when
# .lease/ exceeds --max-mib (48) MiB. GPU tests are added in the lease's priority order; one that
# would pass the size limit is left out and named in the manifest (steps 1-4 need theirs: their
# absence is a refusal). The build folder (.lease-build/) is kept for the next run; ccache is used
# when installed.
set -euo pipefail
cd "$(dirname "$0")/.."

jobs=$(nproc)
build_dir=.lease-build
out=.lease
max_mib=48
deps_only=0
while (($#)); do
  case $1 in
    -j) jobs=$2; shift 2 ;;
    -j*) jobs=${1#-j}; shift ;;
    --build-dir) build_dir=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --max-mib) max_mib=$2; shift 2 ;;
    --deps-only) deps_only=1; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "gpu-bundle: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

# The GPU test binaries in the lease's order (scripts/gpu-lease.sh): steps 1-4 first (required),
# then the breadth step's.
required_tests=(test_event_timer test_cuda_backend test_lt_gelu_epilogue test_attention_gpu)
optional_tests=(test_cublaslt_gemm test_gpu_mem test_gpu_p2p test_scan_gpu)
# Sonames a GPU image provides (the C/C++ runtime; CUDA libraries through PyTorch's wheels).
allowed_re='^(linux-vdso\.so\.1|ld-linux-x86-64\.so\.2|libc\.so\.6|libm\.so\.6|libstdc\+\+\.so\.6|libgcc_s\.so\.1|libgomp\.so\.1|libpthread\.so\.0|libdl\.so\.2|librt\.so\.1|libcublas\.so\.[0-9]+|libcublasLt\.so\.[0-9]+|libnccl\.so\.2|libcudnn\.so\.9|libnvrtc\.so\.[0-9]+|libcudart\.so\.[0-9]+)$'

# copy_deps: the header-only dependencies and the GoogleTest sources from our Debian packages.
copy_deps() {
  rm -rf "$out/deps"
  mkdir -p "$out/deps/include"
  cp -r /usr/include/fmt /usr/include/CLI /usr/include/nlohmann "$out/deps/include/"
  cp -r /usr/src/googletest "$out/deps/googletest"
}
if ((deps_only)); then
  copy_deps
  echo "gpu-bundle: $out/deps ready ($(du -sh "$out/deps" | cut -f1))"
  exit 0
fi

launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
fi
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
start=$SECONDS
echo "gpu-bundle: configuring $build_dir"
mkdir -p "$build_dir"
cmake -S . -B "$build_dir" "${generator[@]}" "${launcher[@]}" -DCMAKE_BUILD_TYPE=Release -DGCB_CUDA=ON \
  -DGCB_CUDA_ARCHITECTURES=90a -DGCB_ENABLE_MPI=OFF -DGCB_ENABLE_GLOO=OFF -DGCB_ENABLE_HWLOC=OFF -DGCB_ENABLE_OPENBLAS=OFF \
  -DGCB_ENABLE_NUMA=OFF -DGCB_BUILD_MICRO=OFF -DGCB_FMT_HEADER_ONLY=ON -DGCB_BUILD_TESTS=ON \
  >"$build_dir/configure.log" 2>&1 || { tail -30 "$build_dir/configure.log"; echo "gpu-bundle: configure failed" >&2; exit 1; }
summary=$(sed -n '/gcbench .* configuration/,/^-- $/p' "$build_dir/configure.log")
for need in "NCCL  *ON" "cuBLASLt  *ON" "cuDNN  *ON" "fmt  *.*header-only"; do
  if ! grep -qE -- "-- +$need" <<<"$summary"; then
    printf '%s\n' "$summary"
    echo "gpu-bundle: the configure summary lacks '$need' (the bundle needs NCCL, cuBLASLt, cuDNN and header-only fmt)" >&2
    exit 1
  fi
done
echo "gpu-bundle: building gcbench and the GPU tests (-j $jobs)"
cmake --build "$build_dir" -j "$jobs" --target gcbench gpu_tests
echo "gpu-bundle: built in $((SECONDS - start)) s"

# name -> built path, from the list tests/CMakeLists.txt writes.
declare -A built
while IFS=$'\t' read -r name path; do
  [[ -n $name ]] && built[$name]=$path
done <"$build_dir/gpu-tests.txt"

rm -rf "$out"
mkdir -p "$out/bin" "$out/peers"
cp scripts/peers/*.py "$out/peers/"
copy_deps
install -m 755 "$build_dir/bench/gcbench" "$out/bin/gcbench"
strip "$out/bin/gcbench"

limit=$((max_mib * 1024 * 1024))
used() { du -sb "$out" | cut -f1; }
left_out=()
for t in "${required_tests[@]}" "${optional_tests[@]}"; do
  required=0
  [[ " ${required_tests[*]} " == *" $t "* ]] && required=1
  if [[ -z ${built[$t]:-} ]]; then
    if ((required)); then
      echo "gpu-bundle: $t was not built (not in $build_dir/gpu-tests.txt)" >&2
      exit 1
    fi
    left_out+=("$t (not built)")
    continue
  fi
  install -m 755 "${built[$t]}" "$out/bin/$t"
  strip "$out/bin/$t"
  if (($(used) > limit)); then
    if ((required)); then
      echo "gpu-bundle: $t takes .lease/ past $max_mib MiB ($(used) bytes); steps 1-4 need it" >&2
      exit 1
    fi
    rm "$out/bin/$t"
    left_out+=("$t (size)")
  fi
done
# A GPU test the lists above do not know (a new one): named, not bundled, so the lists get updated.
for t in "${!built[@]}"; do
  [[ " ${required_tests[*]} ${optional_tests[*]} " == *" $t "* ]] || left_out+=("$t (not in gpu-bundle.sh's lists)")
done

# ldd: every needed library must be one the GPU image has.
bad=()
for f in "$out"/bin/*; do
  deps=$(ldd "$f")
  while read -r lib; do
    [[ $lib =~ $allowed_re ]] || bad+=("$(basename "$f"): $lib")
  done < <(awk '{print $1}' <<<"$deps" | sed 's|.*/||')
  missing=$(awk '/not found/ {print $1}' <<<"$deps" | tr '\n' ' ')
  [[ -z $missing ]] || bad+=("$(basename "$f"): ${missing}(not found here)")
done
if ((${#bad[@]})); then
  printf 'gpu-bundle: needs a library the GPU image lacks: %s\n' "${bad[@]}" >&2
  exit 1
fi

size=$(used)
if ((size > limit)); then
  echo "gpu-bundle: $out is $size bytes, more than $max_mib MiB" >&2
  exit 1
fi

# The nvcc CMake chose (recorded by enable_language in CMakeCUDACompiler.cmake).
nvcc_bin=$(sed -n 's/^set(CMAKE_CUDA_COMPILER "\(.*\)")$/\1/p' "$build_dir"/CMakeFiles/*/CMakeCUDACompiler.cmake | head -1)
[[ -n $nvcc_bin ]] || nvcc_bin=nvcc
{
  echo "gcbench lease bundle (scripts/gpu-bundle.sh)"
  echo "revision: $(git rev-parse HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD 2>/dev/null || echo ' (with uncommitted changes)')"
  echo "made: $(date -u +%FT%TZ) on $(uname -m) (this run of gpu-bundle.sh: $((SECONDS - start)) s)"
  echo "nvcc: $("$nvcc_bin" --version | tail -2 | tr '\n' ' ')"
  echo "cuda architectures: $(grep -m1 '^GCB_CUDA_ARCHITECTURES:' "$build_dir/CMakeCache.txt" | cut -d= -f2)"
  echo "compiler: $(c++ --version | head -1)"
  printf '%s\n' "$summary" | sed -n 's/^-- *\(NCCL\|cuDNN\|cuBLASLt\|CUDA arch\|CUDA\|fmt\|MPI\|OpenBLAS\|hwloc\|libnuma\|OpenMP\) \+/configure \1: /p'
  echo "left out: ${left_out[*]:-none}"
  echo "total bytes: $size (limit $limit)"
  echo "needed libraries (ldd):"
  for f in "$out"/bin/*; do
    echo "  $(basename "$f"): $(ldd "$f" | awk '{print $1}' | sed 's|.*/||' | grep -v '^linux-vdso' | tr '\n' ' ')"
  done
  echo "files (sha256, bytes, path) of bin/ and peers/:"
  (cd "$out" && find bin peers -type f | sort | while read -r p; do
    echo "  $(sha256sum "$p" | cut -d' ' -f1) $(stat -c %s "$p") $p"
  done)
} >"$out/manifest.txt"
cat "$out/manifest.txt"
echo "gpu-bundle: $out ready ($((size / 1024 / 1024)) MiB of $max_mib)"
