#!/bin/bash
# Starts N processes of one command on this host with the variables torchrun --standalone sets
# (PyTorch docs, "torchrun (Elastic Launch)": RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE,
# GROUP_RANK, MASTER_ADDR, MASTER_PORT), no MPI anywhere: gcbench's ranks meet through the store
# rank 0 serves at MASTER_ADDR:MASTER_PORT (docs/readme-coll.md "Launching").
#   scripts/envrun.sh -n 4 -- coll --backend gloo -b 8 -e 1M -f 4 --json coll.json
#   scripts/envrun.sh -n 2 -- train --backend cpu --model tiny --dp 2
# Options: -n N (processes, default 2), -p PORT (MASTER_PORT, default a free one), -a ADDR
# (MASTER_ADDR, default 127.0.0.1), --node-rank K --nodes M (this host's part of M hosts of N
# processes each: RANK = K·N + local rank, WORLD_SIZE = M·N; then -a/-p name rank 0's host).
# SIGINT and SIGTERM are passed to every process. Unlike torchrun's agent this launcher does not
# end the others when one fails: gcbench's ranks end themselves (within --timeout). It exits with
# the first non-zero status in rank order, else 0. GCBENCH overrides the binary.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
GCBENCH=${GCBENCH:-$here/build/bench/gcbench}
n=2 port="" addr=127.0.0.1 node_rank=0 nodes=1
while [ "$#" -gt 0 ] && [ "$1" != "--" ]; do
  case $1 in
    -n) n=$2; shift 2 ;;
    -p) port=$2; shift 2 ;;
    -a) addr=$2; shift 2 ;;
    --node-rank) node_rank=$2; shift 2 ;;
    --nodes) nodes=$2; shift 2 ;;
    *) echo "envrun: unknown option $1 (usage: $0 [-n N] [-p PORT] [-a ADDR] [--node-rank K --nodes M] -- ARGS)" >&2
       exit 2 ;;
  esac
done
[ "$#" -gt 0 ] && shift
if [ "$#" -eq 0 ]; then
  echo "usage: $0 [-n N] [-p PORT] [-a ADDR] [--node-rank K --nodes M] -- <gcbench subcommand and flags>" >&2
  exit 2
fi
if [ -z "$port" ]; then
  # A free port, as torchrun --standalone picks one: bind port 0 and read what the kernel gave.
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("", 0)); print(s.getsockname()[1])')
fi
pids=()
for ((i = 0; i < n; i++)); do
  RANK=$((node_rank * n + i)) WORLD_SIZE=$((nodes * n)) LOCAL_RANK=$i LOCAL_WORLD_SIZE=$n GROUP_RANK=$node_rank \
    MASTER_ADDR=$addr MASTER_PORT=$port "$GCBENCH" "$@" &
  pids+=($!)
done
forward() { kill -"$1" "${pids[@]}" 2>/dev/null; }
trap 'forward INT' INT
trap 'forward TERM' TERM
status=0
for p in "${pids[@]}"; do
  # wait returns early (> 128) when a trapped signal arrives: wait again until the process ends.
  while :; do
    wait "$p"
    code=$?
    kill -0 "$p" 2>/dev/null || break
  done
  [ "$status" -eq 0 ] && [ "$code" -ne 0 ] && status=$code
done
exit "$status"
