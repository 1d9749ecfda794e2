#!/usr/bin/env bash
# scripts/install-deps.sh on a clean Debian 12 (bookworm) made with debootstrap: the README's
# set-up step on a machine that has nothing installed. Root only; uses the package mirror this
# machine's apt is configured with. A maintainer's check (several minutes, ~1 GB), not a ctest.
#   scripts/ci/debian-chroot-check.sh [WORKDIR]      (default: a temp folder, removed after)
set -euo pipefail
cd "$(dirname "$0")/../.."
[[ $(id -u) == 0 ]] || { echo "debian-chroot-check: needs root (debootstrap, chroot)" >&2; exit 2; }
command -v debootstrap >/dev/null || apt-get install -y -q debootstrap >/dev/null
mirror=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
[[ -n $mirror ]] || mirror=$(awk '$1 == "deb" {print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)
[[ -n $mirror ]] || { echo "debian-chroot-check: no Debian mirror configured for apt here" >&2; exit 2; }
root=${1:-$(mktemp -d)}
keep=${1:+1}
cleanup() {
  umount "$root/proc" 2>/dev/null || true
  [[ -n $keep ]] || rm -rf "$root"
}
trap cleanup EXIT
start=$SECONDS
debootstrap --variant=minbase bookworm "$root" "$mirror" >"$root.debootstrap.log" 2>&1 ||
  { tail -20 "$root.debootstrap.log"; exit 1; }
echo "debian-chroot-check: bookworm minbase in $((SECONDS - start)) s"
mount -t proc proc "$root/proc"
mkdir -p "$root/src/scripts"
cp scripts/install-deps.sh "$root/src/scripts/"
t=$SECONDS
chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root bash /src/scripts/install-deps.sh \
  >"$root.install.log" 2>&1 || { tail -30 "$root.install.log"; echo "FAIL: install-deps.sh in the chroot"; exit 1; }
echo "debian-chroot-check: install-deps.sh installed everything in $((SECONDS - t)) s"
again=$(chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin bash /src/scripts/install-deps.sh)
[[ $again == *"nothing to do"* ]] || { echo "FAIL: a second run still installs: $again"; exit 1; }
for tool in cmake ninja g++ pkg-config mpirun clang-format chromium; do
  chroot "$root" /usr/bin/env PATH=/usr/sbin:/usr/bin:/sbin:/bin sh -c "command -v $tool" >/dev/null ||
    { echo "FAIL: $tool missing after install-deps.sh"; exit 1; }
done
echo "debian-chroot-check: PASS (a second run: nothing to do; cmake, ninja, g++, pkg-config, mpirun, clang-format," \
  "chromium present) in $((SECONDS - start)) s"
