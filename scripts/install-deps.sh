#!/usr/bin/env bash
# Installs gcbench's Debian build and test dependencies. Idempotent and non-interactive: says
# what it installs, skips what is already present. The CUDA toolkit (nvcc, cuBLAS, cuDNN, NCCL,
# NVTX3) is not a Debian package here and is expected under /usr/local/cuda when wanted.
#   GCB_SKIP_OPTIONAL=1  skip the large optional packages (chromium for the browser test)
set -euo pipefail

required=(
  cmake ninja-build g++ pkg-config
  libfmt-dev libcli11-dev nlohmann-json3-dev
  libgtest-dev googletest libbenchmark-dev
  libhwloc-dev hwloc
  libopenmpi-dev openmpi-bin
  libopenblas-openmp-dev
  libnuma-dev
  clang-format
)
optional=(chromium)

missing=()
for p in "${required[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [[ "${GCB_SKIP_OPTIONAL:-0}" != 1 ]]; then
  for p in "${optional[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
fi

if ((${#missing[@]} == 0)); then
  echo "install-deps: all packages present, nothing to do"
  exit 0
fi

sudo=""
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "install-deps: need root or sudo to install: ${missing[*]}" >&2; exit 2; }
  sudo="sudo"
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# Refresh the package lists only when they are missing or older than a day.
if [[ -z "$(find /var/lib/apt/lists -maxdepth 1 -name '*Packages*' -mmin -1440 2>/dev/null | head -1)" ]]; then
  $sudo apt-get update -q
fi
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
echo "install-deps: done"
