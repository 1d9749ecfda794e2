#!/bin/sh
# Under mpirun: rank 1 gets one extra flag (-n 3), so the World's argument check must refuse the run.
if [ "${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}}" = "1" ]; then
  exec "$@" -n 3
fi
exec "$@"
