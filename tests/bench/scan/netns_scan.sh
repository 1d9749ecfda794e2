#!/usr/bin/env bash
# `gcbench scan` across four "nodes" made of network namespaces (scripts/netns-cluster.sh), one
# MPI rank per node over TCP. Exits 77 (ctest: skipped) with the reason when namespaces cannot be
# made here. The cluster is removed however the test ends.
#   netns_scan.sh GCBENCH MODE
#     unthrottled   nothing wrong: exit 0, every node OK
#     throttled     node4's uplink limited by tc tbf to 2 Mbit/s (0.25 MB/s; its peers move 0.5-2
#                   GB/s here): node4 SLOW on the pair and collective stages, nobody else named, exit 1
#     slow-device   node4's rank limited to 1 % of one CPU (a cpu cgroup; skipped without a
#                   writable one): node4 SLOW at the per-device stage, first in the ranking, exit 1
#
# Thresholds: this machine's cores are shared by all four nodes and by whatever else runs, which
# spreads unthrottled pair bandwidth over a factor of ~4 and latency over ~10. The tests therefore
# ask for a shortfall of 90 % (pairs, collectives) or 50 % (devices) besides the 3.5-MAD rule;
# the faults they inject cost 99.95 % of a link (0.25 MB/s against 0.5-2 GB/s; a machine at load
# 12 brought the healthy ones down to 8-20 MB/s, and an 8 Mbit/s throttle then came out 89 % short
# of the fast half, inside the 90 % tolerance, hence a throttle that deep) and 99 % of a CPU.
# The device stage's three healthy hosts share two cores at once, so under load their triad and
# sgemm medians spread over a factor of 2-4: with four peers the log-scale MAD is then ~0.7 and
# a host 25 times slower can be only ~2.5 MAD below the median (the likely cause of one CI failure). That test
# asks for 2 MAD instead (--mad-threshold); the 50 % shortfall still guards the healthy hosts.
# Messages of 256 KiB keep a throttled transfer at about a second.
set -uo pipefail
gcbench=$1
mode=$2
here=$(cd "$(dirname "$0")/../../.." && pwd)
cluster="$here/scripts/netns-cluster.sh"

reason=$("$cluster" check)
status=$?
if [ "$status" -ne 0 ]; then
  echo "SKIPPED: ${reason:-netns-cluster check failed}"
  exit 77
fi

name="gs$(( $$ % 1000000 ))"
cleanup() { "$cluster" --name "$name" down; }
trap cleanup EXIT
trap 'exit 130' INT TERM
"$cluster" --name "$name" up 4 || { echo "could not make the cluster"; exit 1; }

fail() {
  echo "FAILED: $*"
  exit 1
}

case "$mode" in
  unthrottled | throttled)
    [ "$mode" = throttled ] && "$cluster" --name "$name" throttle node4 2mbit
    # Throttled, node4 also slows the links into it (its ACKs queue behind the throttle: 0.15-0.3
    # against 2 GB/s here), so the twelve links are trimodal and the log MAD is ~1: node4's own
    # links, 4000 times slower, sit only ~6 MAD below the median. The throttled run asks for 2 MAD;
    # the 90 % shortfall still guards the healthy nodes.
    mad=()
    [ "$mode" = throttled ] && mad=(--mad-threshold 2)
    out=$("$cluster" --name "$name" mpirun -- "$gcbench" scan --stages inventory,pairs,coll --budget 0.5 \
      --tolerance 0.9 "${mad[@]}" --pair-size 256K --coll-size 256K --coll-iters 1 2>&1)
    code=$?
    printf '%s\n' "$out"
    if [ "$mode" = unthrottled ]; then
      [ "$code" -eq 0 ] || fail "exit code $code, wanted 0"
      grep -q "scan verdict: all OK" <<<"$out" || fail "no 'all OK' verdict"
    else
      [ "$code" -eq 1 ] || fail "exit code $code, wanted 1"
      grep -Eq "^ +[0-9]+\. SLOW +pairs +node4: 3 of 3 outgoing send bandwidth links SLOW" <<<"$out" ||
        fail "node4 not named SLOW on the pair stage"
      grep -Eq "^ +[0-9]+\. SLOW +coll +node4: in the slower subset at every step and its probe slow" <<<"$out" ||
        fail "node4 not named SLOW on the collective stage"
      ! grep -Eq "^ +[0-9]+\. [A-Z]+ +[a-z]+ +(node[123]:|\{)" <<<"$out" || fail "a healthy node or a subset was named"
    fi
    ;;
  slow-device)
    "$cluster" --name "$name" slow node4 1
    status=$?
    if [ "$status" -eq 3 ]; then
      echo "SKIPPED: no writable cpu cgroup here to make a slow host"
      exit 77
    fi
    [ "$status" -eq 0 ] || fail "could not slow node4 (exit $status)"
    out=$("$cluster" --name "$name" mpirun -- "$gcbench" scan --stages inventory,device --budget 0.3 \
      --tolerance 0.5 --mad-threshold 2 --device-size 16M --gemm-size 256 2>&1)
    code=$?
    printf '%s\n' "$out"
    [ "$code" -eq 1 ] || fail "exit code $code, wanted 1"
    grep -Eq "^ +1\. SLOW +device +node4 host: " <<<"$out" || fail "node4 not the first culprit of the device stage"
    ;;
  *)
    echo "unknown mode '$mode'"
    exit 2
    ;;
esac
echo "PASSED: $mode"
