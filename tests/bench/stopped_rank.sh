#!/bin/sh
# stopped_rank.sh MPIEXEC GCBENCH [WHEN]: rank 1 of a 2-rank MPI coll run gets SIGSTOP; the run
# must end on its own within --timeout (5 s) plus a margin and exit non-zero.
#   WHEN=running (default)  once rank 0 has printed its first result row (every rank has joined):
#                           the timeout line names the stopped rank and its pid
#   WHEN=startup            as soon as rank 1's process exists, before MPI_Init: rank 0's line
#                           says it waited in MPI setup for a rank that never joined
# A guard kills everything after 60 s, so a hang fails the test instead of leaving processes.
set -u
mpiexec=$1
gcbench=$2
when=${3:-running}
dir=$(mktemp -d)
cat > "$dir/wrap.sh" <<WRAP
#!/bin/sh
echo \$\$ > "$dir/pid.\${OMPI_COMM_WORLD_RANK:-\${PMI_RANK:-0}}"
exec "\$@"
WRAP
chmod +x "$dir/wrap.sh"
"$mpiexec" -np 2 --oversubscribe "$dir/wrap.sh" "$gcbench" coll --backend mpi -b 8 -e 8 -N 0 --timeout 5 \
  > "$dir/out" 2>&1 &
job=$!
i=0
while [ ! -s "$dir/pid.1" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done
rank1=$(cat "$dir/pid.1")
if [ "$when" = running ]; then
  # Rank 0 prints a row only after every rank joined and measured: a loaded machine can take
  # seconds to get there, and a stop before it is the startup case.
  i=0
  while ! grep -q "Avg bus bandwidth" "$dir/out" && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done
fi
kill -STOP "$rank1"
stopped=$(date +%s)
(
  trap 'kill "$nap" 2>/dev/null; exit 0' TERM
  sleep 60 &
  nap=$!
  wait "$nap"
  kill -KILL "$job" "$(cat "$dir/pid.0")" "$rank1"
) >/dev/null 2>&1 &
guard=$!
wait "$job"
code=$?
ended=$(date +%s)
kill "$guard" 2>/dev/null
kill -KILL "$rank1" 2>/dev/null
out=$(cat "$dir/out")
rm -rf "$dir"
printf '%s\n' "$out"
fail() { echo "stopped_rank: $1" >&2; exit 1; }
[ "$code" -ne 0 ] || fail "exit code 0"
[ $((ended - stopped)) -le 30 ] || fail "the run took $((ended - stopped)) s after the stop (--timeout 5)"
if [ "$when" = running ]; then
  printf '%s\n' "$out" | grep -Eq "gcbench: timeout: rank 0 on host .* in MPI .*rank 1 \(pid $rank1\) is stopped" ||
    fail "no line naming the stopped rank 1 (pid $rank1)"
else
  printf '%s\n' "$out" | grep -Eq "gcbench: timeout: rank 0 on host .* in MPI.*not every rank joined" ||
    fail "no line saying rank 0 waited for a rank that never joined"
fi
