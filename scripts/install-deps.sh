#!/usr/bin/env bash
# Installs gcbench's build and test dependencies from the distribution's packages. Idempotent and
# non-interactive: says what it installs, skips what is already present.
#   apt: Debian 12+, Ubuntu 22.04 / 24.04        dnf: Rocky / RHEL / AlmaLinux 9 (+ EPEL, CRB), Fedora
# The CUDA toolkit (nvcc, cuBLAS, cuDNN, NCCL, NVTX3) comes from NVIDIA's packages or a
# /usr/local/cuda install, not from here (README "Supported systems").
#   GCB_SKIP_OPTIONAL=1  skip the large optional packages (chromium, for the HTML screenshot test)
#   GCB_OS_RELEASE=FILE  read the distribution from FILE instead of /etc/os-release (tests)
set -euo pipefail

os_release=${GCB_OS_RELEASE:-/etc/os-release}
id="" id_like="" version_id=""
if [[ -r $os_release ]]; then
  # shellcheck disable=SC1090
  id=$(. "$os_release" && echo "${ID:-}")
  id_like=$(. "$os_release" && echo "${ID_LIKE:-}")
  version_id=$(. "$os_release" && echo "${VERSION_ID:-}")
fi
family=""
case " $id $id_like " in
  *" debian "* | *" ubuntu "*) family=apt ;;
  *" rhel "* | *" fedora "* | *" centos "* | *" rocky "* | *" almalinux "*) family=dnf ;;
esac
if [[ -z $family ]]; then
  if command -v apt-get >/dev/null; then family=apt; elif command -v dnf >/dev/null; then family=dnf; fi
fi
if [[ -z $family ]]; then
  echo "install-deps: unsupported system '${id:-unknown}' (neither apt-get nor dnf): install by hand the packages" \
    "listed in README 'Supported systems'" >&2
  exit 2
fi

sudo=""
need_root() {
  if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null || { echo "install-deps: need root or sudo to install: $*" >&2; exit 2; }
    sudo="sudo"
  fi
}

if [[ $family == apt ]]; then
  required=(
    cmake ninja-build g++ pkg-config
    libfmt-dev libcli11-dev nlohmann-json3-dev
    libgtest-dev googletest libbenchmark-dev
    libhwloc-dev hwloc
    libopenmpi-dev openmpi-bin
    libgloo-dev
    libopenblas-openmp-dev
    libnuma-dev
    clang-format
  )
  optional=(chromium)
  # Ubuntu ships chromium only as a snap (the deb is a stub that installs it): left to the user.
  if [[ $id == ubuntu ]]; then
    optional=()
    [[ ${GCB_SKIP_OPTIONAL:-0} == 1 ]] || echo "install-deps: Ubuntu packages chromium only as a snap; the HTML" \
      "screenshot test is skipped without it (snap install chromium)"
  fi
  installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
else
  # Rocky/RHEL/Alma 9: fmt, CLI11, nlohmann-json, GoogleTest and Google Benchmark come from EPEL,
  # their -devel dependencies from CRB. OpenMPI installs under /usr/lib64/openmpi (module load
  # mpi/openmpi-x86_64, or MPI_HOME; cmake finds it either way).
  required=(
    cmake ninja-build gcc-c++ pkgconf-pkg-config
    fmt-devel cli11-devel json-devel
    gtest-devel gmock-devel google-benchmark-devel
    hwloc-devel hwloc
    openmpi-devel openmpi
    gloo-devel
    openblas-devel
    numactl-devel
    clang-tools-extra
  )
  optional=(chromium)
  installed() { rpm -q "$1" >/dev/null 2>&1; }
fi

missing=()
for p in "${required[@]}"; do installed "$p" || missing+=("$p"); done
if [[ ${GCB_SKIP_OPTIONAL:-0} != 1 ]]; then
  for p in "${optional[@]}"; do installed "$p" || missing+=("$p"); done
fi

if ((${#missing[@]} == 0)); then
  echo "install-deps: all packages present, nothing to do"
  exit 0
fi
need_root "${missing[@]}"
echo "install-deps: installing ${missing[*]} ($family, ${id:-unknown} ${version_id})"

if [[ $family == apt ]]; then
  export DEBIAN_FRONTEND=noninteractive
  # Refresh the package lists only when they are missing or older than a day.
  if [[ -z "$(find /var/lib/apt/lists -maxdepth 1 -name '*Packages*' -mmin -1440 2>/dev/null | head -1)" ]]; then
    $sudo apt-get update -q
  fi
  $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  # EPEL and CRB on the Enterprise Linux rebuilds (Fedora has everything in its own repositories).
  if [[ $id != fedora ]]; then
    if ! installed epel-release; then
      if [[ $id == rhel ]]; then
        echo "install-deps: RHEL needs EPEL 9 enabled first (the epel-release-latest-9 package, as the EPEL" \
          "documentation says), then rerun" >&2
        exit 2
      fi
      $sudo dnf install -y epel-release
    fi
    installed dnf-plugins-core || $sudo dnf install -y dnf-plugins-core
    $sudo dnf config-manager --set-enabled crb
  fi
  $sudo dnf install -y "${missing[@]}"
fi
echo "install-deps: done"
