#!/bin/sh
# interrupted_run.sh GCBENCH MODE SIGNAL [MPIEXEC | SRC]: a coll run that never ends on its own (-N 0)
# gets SIGNAL (INT or TERM) once it has finished a few results (core/interrupt.hpp). It must stop
# at its next safe point and exit 128 + the signal (130 / 143) with a valid --json of exactly the
# results its --jsonl holds (at least 3), marked context.interrupted with that signal and what was
# running, and no temporary file left in the output folder.
#   MODE threads  2 rank threads in one process; the signal goes to the process
#   MODE mpi      2 MPI processes under MPIEXEC; every rank gets the signal, as scancel does
#   MODE env      2 processes started by scripts/envrun.sh (SRC's, torchrun-style variables, no
#                 MPI; --backend gloo); the signal goes to the launcher, which passes it on
#   MODE envgroup as env, but the launcher leads its own process group and the signal goes to the
#                 whole group, as a terminal's Ctrl-C does: every rank gets it from the terminal
#                 and again from the launcher, one stop delivered twice
#   MODE train    train --dp 2 on 2 rank threads with far more steps than the test waits for:
#                 the signal after 2 s must stop it between steps (a layout stopped so is not
#                 reported; --json valid, context.interrupted names the layout and step)
#   MODE twice    threads, two signals 0.7 s apart: the run still ends with 128 + the signal and
#                 no temporary file (the second may end it before the document is written)
#   MODE timeout  threads under timeout(1), whose timer (SIGALRM to it) sends SIGNAL to the run
#                 and then to its process group: one stop delivered twice, so the run must still
#                 write what finished (core/interrupt.hpp, kDuplicateWindowNs)
#   MODE copy     threads, the signal again as soon as the run announced the first: the same
#                 stop delivered twice (as timeout(1) does when the first is not merged into the
#                 second), so the run must still write what finished
# A guard kills everything after 60 s, so a hang fails the test instead of leaving processes.
set -u
. "$(dirname "$0")/launch_guard.sh"
gcbench=$1
mode=$2
sig=$3
mpiexec=${4:-}
case $sig in INT) want=130 ;; TERM) want=143 ;; *) echo "interrupted_run: SIGNAL is INT or TERM" >&2; exit 2 ;; esac
dir=$(mktemp -d)
fail() {
  echo "interrupted_run ($mode, SIG$sig): $1" >&2
  cat "$dir/out" >&2
  rm -rf "$dir"
  exit 1
}
cat > "$dir/wrap.sh" <<WRAP
#!/bin/sh
echo \$\$ > "$dir/pid.\${OMPI_COMM_WORLD_RANK:-\${RANK:-0}}"
exec "\$@"
WRAP
chmod +x "$dir/wrap.sh"
printf '#!/bin/sh\nexec "%s" "%s" "$@"\n' "$dir/wrap.sh" "$gcbench" > "$dir/gcbench"
chmod +x "$dir/gcbench"
args="coll -b 8 -e 64 -f 8 -N 0 --timeout 20 --json $dir/run.json --jsonl $dir/run.jsonl"
if [ "$mode" = train ]; then
  "$dir/wrap.sh" "$gcbench" train --backend cpu --model tiny --dp 2 --ranks 2 --steps 1000000 --warmup-steps 0 \
    --peak-flops 1e15 --json "$dir/run.json" > "$dir/out" 2>&1 &
elif [ "$mode" = mpi ]; then
  # shellcheck disable=SC2086
  "$mpiexec" -np 2 --oversubscribe "$dir/wrap.sh" "$gcbench" $args --backend mpi > "$dir/out" 2>&1 &
elif [ "$mode" = env ]; then
  # shellcheck disable=SC2086
  GCBENCH="$dir/gcbench" "$mpiexec/scripts/envrun.sh" -n 2 -- $args --backend gloo > "$dir/out" 2>&1 &
elif [ "$mode" = envgroup ]; then
  # shellcheck disable=SC2086
  GCBENCH="$dir/gcbench" setsid "$mpiexec/scripts/envrun.sh" -n 2 -- $args --backend gloo > "$dir/out" 2>&1 &
elif [ "$mode" = timeout ]; then
  # shellcheck disable=SC2086
  timeout --preserve-status -s "$sig" 600 "$dir/wrap.sh" "$gcbench" $args --backend threads --ranks 2 \
    > "$dir/out" 2>&1 &
else
  # shellcheck disable=SC2086
  "$dir/wrap.sh" "$gcbench" $args --backend threads --ranks 2 > "$dir/out" 2>&1 &
fi
job=$!
start_guard "$job" "$dir"
if [ "$mode" = train ]; then
  sleep 2  # a training run appends its results at the end: nothing to wait for but time
else
  i=0
  while [ "$(cat "$dir/run.jsonl" 2>/dev/null | wc -l)" -lt 3 ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i + 1)); done
  [ $i -lt 1200 ] || fail "no 3 results within 60 s"
fi
pids=$(cat "$dir"/pid.*)
if [ "$mode" = env ]; then
  kill -"$sig" "$job"
elif [ "$mode" = envgroup ]; then
  env kill -s "$sig" -- "-$job"  # the launcher's process group, as a terminal's Ctrl-C (procps kill: dash's takes no group)
elif [ "$mode" = timeout ]; then
  kill -ALRM "$job"  # timeout(1)'s timer: it signals the command, then its process group
elif [ "$mode" = copy ]; then
  kill -"$sig" $pids
  i=0
  while ! grep -q "SIG$sig: stopping" "$dir/out" && [ $i -lt 500 ]; do sleep 0.01; i=$((i + 1)); done
  kill -"$sig" $pids 2>/dev/null
elif [ "$mode" = twice ]; then
  kill -"$sig" $pids
  sleep 0.7
  kill -"$sig" $pids 2>/dev/null
else
  kill -"$sig" $pids
fi
wait "$job"
code=$?
kill "$guard" 2>/dev/null
# Every rank process ends (a zombie not yet reaped by its new parent counts as ended).
gone() { ! kill -0 "$1" 2>/dev/null || grep -q '^[0-9]* (.*) Z' "/proc/$1/stat" 2>/dev/null; }
for p in $pids; do
  i=0
  while ! gone "$p" && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
  gone "$p" || fail "rank process $p still runs"
done
[ "$code" = "$want" ] || fail "exit code $code, expected $want"
ls -a "$dir" | grep -q '\.tmp$' && fail "a temporary file was left: $(ls -a "$dir")"
if [ "$mode" = twice ] && [ ! -e "$dir/run.json" ]; then
  grep -q "second SIG$sig: ending now" "$dir/out" || fail "no --json and no 'second SIG$sig' line"
  echo "interrupted_run ($mode, SIG$sig): ended at once (exit $code), no temporary file"
  rm -rf "$dir"
  exit 0
fi
if [ "$mode" = train ]; then
  python3 - "$dir/run.json" "SIG$sig" <<'PY' || fail "the --json is not an interrupted training run"
import json, sys
doc = json.load(open(sys.argv[1]))
stop = doc["context"]["interrupted"]
assert stop["signal"] == sys.argv[2], stop
assert stop["running"].startswith("train/dp2 step "), stop
assert doc["results"] == [] and stop["finished_results"] == 0, doc["results"]
PY
  grep -q "interrupted by SIG$sig" "$dir/out" || fail "no 'interrupted by SIG$sig' line"
  rm -rf "$dir"
  echo "interrupted_run ($mode, SIG$sig): exit $code, stopped between steps"
  exit 0
fi
python3 - "$dir/run.json" "$dir/run.jsonl" "SIG$sig" <<'PY' || fail "the --json does not hold what finished"
import json, sys
doc = json.load(open(sys.argv[1]))
lines = [json.loads(l)["result"] for l in open(sys.argv[2]) if l.strip()]
stop = doc["context"].get("interrupted")
assert stop is not None, "context.interrupted missing"
assert stop["signal"] == sys.argv[3], stop
assert stop["running"].startswith("coll/"), stop
assert len(doc["results"]) >= 3, len(doc["results"])
assert [r["key"] for r in doc["results"]] == [r["key"] for r in lines], "json and jsonl differ"
assert stop["finished_results"] == len(doc["results"]), stop
print(f"interrupted_run: {len(doc['results'])} results kept, stopped before {stop['running']}")
PY
grep -q "interrupted by SIG$sig" "$dir/out" || fail "no 'interrupted by SIG$sig' line"
rm -rf "$dir"
echo "interrupted_run ($mode, SIG$sig): exit $code, --json valid"
