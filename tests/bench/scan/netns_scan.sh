#!/usr/bin/env bash
# `gcbench scan` across four "nodes" made of network namespaces (scripts/netns-cluster.sh), one
# MPI rank per node over TCP. Exits 77 (ctest: skipped) with the reason when namespaces cannot be
# made here. The cluster is removed however the test ends.
#   netns_scan.sh GCBENCH MODE
#     unthrottled   nothing wrong: exit 0, every node OK
#     throttled     node4's uplink limited by tc tbf to 2 Mbit/s (0.25 MB/s; its peers move 0.5-2
#                   GB/s here): node4 SLOW on the pair and collective stages, nobody else named, exit 1
#     throttled-5   five nodes, node2's uplink throttled the same way: node2 SLOW on the pair stage
#                   (by its links or by its median over its links against the other nodes'), nobody
#                   else named, exit 1 — another node count and culprit than `throttled`
#     throttled-env four nodes launched by torchrun-style variables alone (RANK, WORLD_SIZE, …,
#                   MASTER_ADDR = node1's address: no MPI anywhere, Gloo over the veths), node3's
#                   uplink throttled: node3 SLOW on the pair stage, nobody else named, exit 1
#     slow-device   node4's rank limited to 1 % of one CPU (a cpu cgroup; skipped without a
#                   writable one): node4 SLOW at the per-device stage, first in the ranking, exit 1
#                   (scanned twice when the first scan names nobody: see below)
#     slow-reference node2's rank limited to 2 % of one CPU: node2 SLOW at the reference stage (a
#                   few training steps of a GPT of 2 layers, C 128, T 64 on every rank alone, one
#                   OpenMP thread: ~25 ms a step here, ~500 ms at 2 %), nobody else named, exit 1.
#                   tiny's 0.4 ms steps would not do: a CPU quota stalls a process once per 100 ms
#                   period, so most of its short steps run at full speed and the median hides it.
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
# Messages of 256 KiB (128 KiB with five nodes) keep a throttled transfer at about a second.
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
nodes=4
victim=node4
if [ "$mode" = throttled-5 ]; then
  nodes=5
  victim=node2
fi
[ "$mode" = throttled-env ] && victim=node3
"$cluster" --name "$name" up "$nodes" || { echo "could not make the cluster"; exit 1; }

fail() {
  echo "FAILED: $*"
  exit 1
}

# slow_or_skip NODE PERCENT: NODE's ranks limited to PERCENT % of one CPU; exit 77 (skipped) where
# no writable cpu cgroup exists, a failure when the limit cannot be set otherwise.
slow_or_skip() {
  "$cluster" --name "$name" slow "$1" "$2"
  local status=$?
  if [ "$status" -eq 3 ]; then
    echo "SKIPPED: no writable cpu cgroup here to make a slow host"
    exit 77
  fi
  [ "$status" -eq 0 ] || fail "could not slow $1 (exit $status)"
}

case "$mode" in
  unthrottled | throttled | throttled-5)
    [ "$mode" != unthrottled ] && "$cluster" --name "$name" throttle "$victim" 2mbit
    # Throttled, node4 also slows the links into it (its ACKs queue behind the throttle: 0.15-0.3
    # against 2 GB/s here), so the twelve links are trimodal and the log MAD is ~1: node4's own
    # links, 4000 times slower, sit only ~6 MAD below the median. The throttled run asks for 2 MAD;
    # the 90 % shortfall still guards the healthy nodes.
    mad=()
    [ "$mode" != unthrottled ] && mad=(--mad-threshold 2)
    # Five nodes have more throttled rounds (and their confirmations): half the message keeps the
    # test near a minute.
    size=256K
    [ "$mode" = throttled-5 ] && size=128K
    # A stage the budget cannot fit is skipped with reason "budget" (bench/scan/budget.hpp): the
    # throttled node's transfers take their samples whatever their share, so the pair stage
    # overruns its share by 18-28 s here (41 s of a 30 s budget once, the collectives then
    # skipped); 75 s leaves the collectives 20 s or more.
    budget=30
    [ "$mode" != unthrottled ] && budget=75
    # One more scan when the first names a healthy node: on a machine loaded by other work one
    # node's rank can be starved for seconds, and every stage then rightly finds it slow, its
    # confirmation included (a build and a simulator beside the tests once put node3 of the
    # unthrottled cluster, and node4 of the five, at 1-3 % on pairs and collectives alike); a
    # healthy node is seldom starved twice in the same way. The second scan's verdict stands.
    healthy='node[1-3]:'
    [ "$mode" = throttled-5 ] && healthy='node[1345]:'
    for attempt in 1 2; do
      out=$("$cluster" --name "$name" mpirun -- "$gcbench" scan --stages inventory,pairs,coll --budget "$budget" \
        --tolerance 0.9 "${mad[@]}" --pair-size "$size" --coll-size "$size" --coll-iters 1 2>&1)
      code=$?
      printf '%s\n' "$out"
      named=0
      if [ "$mode" = unthrottled ]; then
        [ "$code" -ne 0 ] && named=1
      elif grep -Eq "^ +[0-9]+\. [A-Z]+ +[a-z]+ +($healthy|\{)" <<<"$out"; then
        named=1
      fi
      if [ "$attempt" -eq 1 ] && [ "$named" -eq 1 ]; then
        echo "netns_scan: a healthy node or a subset named; scanning once more"
        continue
      fi
      break
    done
    if [ "$mode" = unthrottled ]; then
      [ "$code" -eq 0 ] || fail "exit code $code, wanted 0"
      grep -q "scan verdict: all OK" <<<"$out" || fail "no 'all OK' verdict"
    elif [ "$mode" = throttled-5 ]; then
      [ "$code" -eq 1 ] || fail "exit code $code, wanted 1"
      grep -Eq "^ +[0-9]+\. SLOW +pairs +node2: " <<<"$out" || fail "node2 not named SLOW on the pair stage"
      ! grep -Eq "^ +[0-9]+\. [A-Z]+ +[a-z]+ +(node[1345]:|\{)" <<<"$out" || fail "a healthy node or a subset was named"
    else
      [ "$code" -eq 1 ] || fail "exit code $code, wanted 1"
      # By its links (most of them SLOW) or, when half of all links touch it and none is SLOW on
      # its own (a loaded machine widens the spread), by its median against the other nodes'.
      grep -Eq "^ +[0-9]+\. SLOW +pairs +node4: " <<<"$out" || fail "node4 not named SLOW on the pair stage"
      grep -Eq "^ +[0-9]+\. SLOW +coll +node4: in the slower subset at every step and its probe slow" <<<"$out" ||
        fail "node4 not named SLOW on the collective stage"
      ! grep -Eq "^ +[0-9]+\. [A-Z]+ +[a-z]+ +(node[123]:|\{)" <<<"$out" || fail "a healthy node or a subset was named"
    fi
    ;;
  throttled-env)
    "$cluster" --name "$name" throttle node3 2mbit
    dir=$(mktemp -d)
    pids=()
    for attempt in 1 2; do
      for i in 1 2 3 4; do
        "$cluster" --name "$name" exec "node$i" env RANK=$((i - 1)) WORLD_SIZE=4 LOCAL_RANK=0 LOCAL_WORLD_SIZE=1 \
          MASTER_ADDR=10.77.0.1 MASTER_PORT=$((29600 + attempt)) "$gcbench" scan --stages inventory,pairs \
          --budget 60 --tolerance 0.9 --mad-threshold 2 --pair-size 256K --timeout 60 >"$dir/out.$i" 2>&1 &
        pids[i]=$!
      done
      ( sleep 150; kill -KILL "${pids[@]}" ) >/dev/null 2>&1 &
      guard=$!
      for i in 1 2 3 4; do
        wait "${pids[i]}"
        codes[i]=$?
      done
      kill "$guard" 2>/dev/null
      out=$(cat "$dir/out.1")
      code=${codes[1]}
      printf '%s\n' "$out"
      if [ "$attempt" -eq 1 ] && grep -Eq "^ +[0-9]+\. [A-Z]+ +[a-z]+ +(node[124]:|\{)" <<<"$out"; then
        echo "netns_scan: a healthy node or a subset named; scanning once more"
        continue
      fi
      break
    done
    for i in 2 3 4; do
      [ "${codes[i]}" -eq "$code" ] || { cat "$dir/out.$i"; rm -rf "$dir"; fail "rank $((i - 1)) exited ${codes[i]}, rank 0 $code"; }
    done
    rm -rf "$dir"
    # The header is wrapped at 100 columns ("#   " goes on a comment line): read it as one line.
    tr '\n' ' ' <<<"$out" | sed 's/ #   / /g' |
      grep -Eq "4 nodes \(node1, node2, node3, node4\), 4 ranks .* backend +gloo" ||
      fail "rank 0 does not report 4 nodes over gloo"
    [ "$code" -eq 1 ] || fail "exit code $code, wanted 1"
    grep -Eq "^ +[0-9]+\. SLOW +pairs +node3: " <<<"$out" || fail "node3 not named SLOW on the pair stage"
    ! grep -Eq "^ +[0-9]+\. [A-Z]+ +[a-z]+ +(node[124]:|\{)" <<<"$out" || fail "a healthy node or a subset was named"
    ;;
  slow-device)
    slow_or_skip node4 1
    # One more scan when the first names nobody: with four peers, one healthy host slowed by the
    # machine's other load (a build beside the test put one at a fifth of the others) widens the
    # MAD past a 1 % host. A wrong culprit or a wrong exit code fails at once.
    for attempt in 1 2; do
      out=$("$cluster" --name "$name" mpirun -- "$gcbench" scan --stages inventory,device --budget 18 \
        --tolerance 0.5 --mad-threshold 2 --device-size 16M --gemm-size 256 2>&1)
      code=$?
      printf '%s\n' "$out"
      [ "$code" -eq 0 ] && [ "$attempt" -eq 1 ] && { echo "netns_scan: nobody named; scanning once more"; continue; }
      break
    done
    [ "$code" -eq 1 ] || fail "exit code $code, wanted 1"
    grep -Eq "^ +1\. SLOW +device +node4 host: " <<<"$out" || fail "node4 not the first culprit of the device stage"
    ;;
  slow-reference)
    slow_or_skip node2 2
    dir=$(mktemp -d)
    echo '{"name": "ref-mid", "layers": 2, "hidden": 128, "heads": 4, "vocab": 256, "seq": 64}' >"$dir/model.json"
    # One more scan when the first names a healthy node or nobody (a healthy rank starved by the
    # machine's other load; see throttled above).
    for attempt in 1 2; do
      out=$("$cluster" --name "$name" mpirun -x OMP_NUM_THREADS=1 -- "$gcbench" scan --stages inventory,reference \
        --reference --reference-model "$dir/model.json" --reference-steps 3 --budget 60 --tolerance 0.5 \
        --mad-threshold 2 2>&1)
      code=$?
      printf '%s\n' "$out"
      if [ "$attempt" -eq 1 ] && { [ "$code" -eq 0 ] ||
        grep -Eq "^ +[0-9]+\. [A-Z]+ +[a-z]+ +(node[134] |\{)" <<<"$out"; }; then
        echo "netns_scan: nobody or a healthy node named; scanning once more"
        continue
      fi
      break
    done
    rm -rf "$dir"
    [ "$code" -eq 1 ] || fail "exit code $code, wanted 1"
    grep -Eq "^ +1\. SLOW +reference +node2 host: rank 1 step time" <<<"$out" ||
      fail "node2 not the first culprit of the reference stage"
    ! grep -Eq "^ +[0-9]+\. [A-Z]+ +[a-z]+ +(node[134] |\{)" <<<"$out" || fail "a healthy node was named"
    ;;
  *)
    echo "unknown mode '$mode'"
    exit 2
    ;;
esac
echo "PASSED: $mode"
