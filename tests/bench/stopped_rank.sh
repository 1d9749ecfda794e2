#!/bin/sh
# stopped_rank.sh MPIEXEC GCBENCH: rank 1 of a 2-rank MPI coll run gets SIGSTOP; the run must end
# on its own within --timeout (5 s) plus a margin, exit non-zero and name the stopped rank.
# A guard kills everything after 60 s, so a hang fails the test instead of leaving processes.
set -u
mpiexec=$1
gcbench=$2
dir=$(mktemp -d)
cat > "$dir/wrap.sh" <<WRAP
#!/bin/sh
echo \$\$ > "$dir/pid.\${OMPI_COMM_WORLD_RANK:-\${PMI_RANK:-0}}"
exec "\$@"
WRAP
chmod +x "$dir/wrap.sh"
"$mpiexec" -np 2 --oversubscribe "$dir/wrap.sh" "$gcbench" coll --backend mpi -b 8 -e 8 -N 0 --timeout 5 -q \
  > "$dir/out" 2>&1 &
job=$!
i=0
while [ ! -s "$dir/pid.1" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
sleep 1
rank1=$(cat "$dir/pid.1")
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
printf '%s\n' "$out" | grep -Eq "gcbench: timeout: rank 0 on host .* in MPI .*rank 1 \(pid $rank1\) is stopped" ||
  fail "no line naming the stopped rank 1 (pid $rank1)"
