#!/usr/bin/env bash
# Three "hosts" made of network namespaces (scripts/netns-cluster.sh: own network and hostname
# each, a bridge between them), one gcbench process per host started only by torchrun-style
# variables (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR = node1's address,
# MASTER_PORT), no MPI anywhere: rank 0 serves the store, Gloo connects the ranks over the veths.
# coll --backend gloo must see 3 nodes with 1 rank each and pass every size; every process exits 0.
# Then train --backend cpu --dp 3 the same way: its --dump (every step's loss and every weight, hex)
# must equal 3 rank threads' bitwise.
# Exits 77 (ctest: skipped) with the reason when namespaces cannot be made here. The cluster is
# removed however the test ends; a guard kills the ranks after 90 s.
set -uo pipefail
gcbench=$1
here=$(cd "$(dirname "$0")/../.." && pwd)
cluster="$here/scripts/netns-cluster.sh"
reason=$("$cluster" check)
if [ $? -ne 0 ]; then
  echo "SKIPPED: ${reason:-netns-cluster check failed}"
  exit 77
fi
name="ge$(($$ % 1000000))"
dir=$(mktemp -d)
pids=()
cleanup() {
  kill -KILL "${pids[@]}" 2>/dev/null
  "$cluster" --name "$name" down
  rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
"$cluster" --name "$name" up 3 || { echo "could not make the cluster"; exit 1; }
# on_hosts PORT OUT ARGS...: gcbench ARGS on node1..3 as ranks 0..2 of one env-launched world
# (MASTER_PORT=PORT), each host's console in $dir/OUT.<i>; waits for all (a guard kills them after
# 90 s) and exits 1, with the consoles, when any exits non-zero.
on_hosts() {
  local port=$1 out=$2
  shift 2
  pids=()
  for i in 1 2 3; do
    "$cluster" --name "$name" exec "node$i" env RANK=$((i - 1)) WORLD_SIZE=3 LOCAL_RANK=0 LOCAL_WORLD_SIZE=1 \
      MASTER_ADDR=10.77.0.1 MASTER_PORT="$port" "$gcbench" "$@" > "$dir/$out.$i" 2>&1 &
    pids+=($!)
  done
  ( sleep 90; kill -KILL "${pids[@]}" ) >/dev/null 2>&1 &
  local guard=$! fail=0 code
  for i in 1 2 3; do
    wait "${pids[$((i - 1))]}"
    code=$?
    [ "$code" = 0 ] || { echo "$1: node$i (rank $((i - 1))) exited $code:"; cat "$dir/$out.$i"; fail=1; }
  done
  kill "$guard" 2>/dev/null
  [ "$fail" = 0 ] || exit 1
}
on_hosts 29500 out coll --backend gloo -b 8 -e 64K -f 16 -c 1 --timeout 30 --json "$dir/coll.json"
grep -q "backend: gloo  ranks: 3 (3 node(s), 1 per node, one process per rank)" "$dir/out.1" || {
  echo "rank 0 does not report 3 nodes of 1 rank each over gloo:"
  cat "$dir/out.1"
  exit 1
}
for i in 1 2 3; do
  grep -q "on *node$i device" "$dir/out.1" || { echo "no rank on node$i:"; cat "$dir/out.1"; exit 1; }
done
python3 - "$dir/coll.json" <<'PY' || exit 1
import json, sys
doc = json.load(open(sys.argv[1]))
rows = [r for r in doc["results"] if not r["key"].endswith("/fit")]
assert len(rows) == 8 and all(r["status"] == "PASS" for r in rows), [r["status"] for r in rows]
assert all(r["params"].get("scope", "inter-node") == "inter-node" for r in doc["results"] if r["key"].endswith("/fit"))
PY
args="train --backend cpu --model tiny --dp 3 --steps 2 --warmup-steps 0 --peak-flops 1e15 -q"
# shellcheck disable=SC2086
on_hosts 29501 train $args --timeout 30 --dump "$dir/env.dump"
# shellcheck disable=SC2086
"$gcbench" $args --dump "$dir/threads.dump" > "$dir/threads.out" 2>&1 || { cat "$dir/threads.out"; exit 1; }
[ -s "$dir/env.dump" ] || { echo "no dump from the namespace hosts"; exit 1; }
cmp -s "$dir/env.dump" "$dir/threads.dump" || { echo "train over Gloo on 3 hosts differs from 3 rank threads"; exit 1; }
echo "netns_env_launch: 3 namespace hosts, env variables only, gloo coll passed, train --dp 3 = threads bitwise"
