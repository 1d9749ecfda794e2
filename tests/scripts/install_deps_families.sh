#!/usr/bin/env bash
# scripts/install-deps.sh on distributions this machine is not: stand-in package tools (dnf, rpm,
# apt-get, dpkg-query) first on PATH record what they are asked, and a fake os-release names the
# system. Checks the dnf branch (Rocky 9: EPEL + CRB, then every package under its EL name, in
# one install), the RHEL refusal without EPEL, the apt branch on Ubuntu 22.04 (no chromium: a
# snap there) and an unknown system (exit 2, nothing installed).
#   install_deps_families.sh SOURCE_DIR
set -euo pipefail
src=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bin=$work/bin log=$work/calls
mkdir -p "$bin"
for tool in dnf rpm apt-get dpkg-query; do
  cat >"$bin/$tool" <<STUB
#!/bin/sh
echo "$tool \$*" >>"$log"
case "$tool" in rpm|dpkg-query) exit 1 ;; esac   # nothing is installed yet
exit 0
STUB
  chmod +x "$bin/$tool"
done
fail() { echo "FAIL: $*" >&2; echo "--- calls:" >&2; cat "$log" >&2 2>/dev/null || true; exit 1; }
run() {  # run OS_RELEASE_TEXT → exit code; calls in $log
  : >"$log"
  printf '%s\n' "$1" >"$work/os-release"
  set +e
  PATH="$bin:$PATH" GCB_OS_RELEASE="$work/os-release" bash "$src/scripts/install-deps.sh" >"$work/out" 2>&1
  rc=$?
  set -e
}

run $'ID="rocky"\nID_LIKE="rhel centos fedora"\nVERSION_ID="9.4"'
[[ $rc == 0 ]] || fail "rocky: exit $rc: $(cat "$work/out")"
grep -qx 'dnf install -y epel-release' "$log" || fail "rocky: EPEL not installed first"
grep -qx 'dnf config-manager --set-enabled crb' "$log" || fail "rocky: CRB not enabled"
[[ $(grep -c '^dnf install -y ' "$log") == 3 ]] || fail "rocky: expected epel, plugins and one package install"
last=$(grep '^dnf install -y ' "$log" | tail -1)
for p in cmake ninja-build gcc-c++ fmt-devel cli11-devel json-devel gtest-devel gmock-devel google-benchmark-devel \
  hwloc-devel openmpi-devel openblas-devel numactl-devel clang-tools-extra chromium; do
  [[ " $last " == *" $p "* ]] || fail "rocky: $p not asked for: $last"
done
grep -q 'apt-get' "$log" && fail "rocky: apt-get was called"

run $'ID="rhel"\nID_LIKE="fedora"\nVERSION_ID="9.4"'
[[ $rc == 2 ]] || fail "rhel without EPEL: exit $rc, expected 2"
grep -q 'EPEL' "$work/out" || fail "rhel: the refusal does not say EPEL"
grep -q '^dnf install' "$log" && fail "rhel: installed something before refusing"

run $'ID=ubuntu\nID_LIKE=debian\nVERSION_ID="22.04"'
[[ $rc == 0 ]] || fail "ubuntu: exit $rc: $(cat "$work/out")"
install=$(grep '^apt-get install' "$log" || true)
[[ -n $install ]] || fail "ubuntu: nothing installed"
[[ " $install " == *" libopenblas-openmp-dev "* && " $install " == *" libcli11-dev "* ]] || fail "ubuntu: $install"
[[ " $install " == *" chromium "* ]] && fail "ubuntu: chromium asked for (a snap there)"
grep -q '^dnf' "$log" && fail "ubuntu: dnf was called"

# An unknown system with neither apt-get nor dnf: refused, exit 2 (PATH holds only what the
# script needs before it decides).
mkdir -p "$work/min"
for t in bash id; do ln -s "$(command -v $t)" "$work/min/$t"; done
printf 'ID=plan9\n' >"$work/os-release"
set +e
PATH="$work/min" GCB_OS_RELEASE="$work/os-release" "$work/min/bash" "$src/scripts/install-deps.sh" >"$work/out" 2>&1
rc=$?
set -e
[[ $rc == 2 ]] || fail "unknown system: exit $rc, expected 2: $(cat "$work/out")"
grep -q 'unsupported system' "$work/out" || fail "unknown system: $(cat "$work/out")"
echo "install-deps: dnf (Rocky 9), RHEL refusal, apt (Ubuntu 22.04) and unknown-system branches as specified"
