#!/bin/bash
# gcbench coll under Open MPI's mpirun: one process per rank (per GPU with --backend nccl).
#   scripts/mpirun.sh -np 16 -H node1:8,node2:8 -- coll --backend nccl -b 8 -e 1G -f 2 --json results/coll.json
# Everything before `--` goes to mpirun, everything after it to gcbench. Build once, on a shared
# file system, with the same MPI the cluster's mpirun belongs to (otherwise every rank thinks it
# is rank 0; gcbench detects that and stops).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
GCBENCH=${GCBENCH:-$here/build/bench/gcbench}
MPIRUN=${MPIRUN:-mpirun}
mpi_args=()
while [ "$#" -gt 0 ] && [ "$1" != "--" ]; do
  mpi_args+=("$1")
  shift
done
[ "$#" -gt 0 ] && shift
if [ "$#" -eq 0 ]; then
  echo "usage: $0 [mpirun args] -- <gcbench subcommand and flags>" >&2
  exit 2
fi
# Forward the NCCL/UCX/CUDA settings that are set here to every rank (-x of an unset variable
# is refused by some Open MPI versions).
env_args=()
for v in $(compgen -e | grep -E '^(NCCL_|UCX_|CUDA_|LD_LIBRARY_PATH$)' || true); do
  env_args+=(-x "$v")
done
exec "$MPIRUN" "${env_args[@]}" "${mpi_args[@]}" "$GCBENCH" "$@"
