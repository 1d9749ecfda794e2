# Sourced by the launch tests (env_launch.sh, interrupted_run.sh). start_guard JOB DIR: after 60 s,
# kills JOB and every rank whose pid a wrapper wrote to DIR/pid.*, so a hang fails the test instead
# of leaving processes behind; the guard's own pid goes to $guard (kill it with TERM when done).
start_guard() {
  (
    trap 'kill "$nap" 2>/dev/null; exit 0' TERM
    sleep 60 &
    nap=$!
    wait "$nap"
    # shellcheck disable=SC2046
    kill -KILL "$1" $(cat "$2"/pid.* 2>/dev/null)
  ) >/dev/null 2>&1 &
  guard=$!
}
