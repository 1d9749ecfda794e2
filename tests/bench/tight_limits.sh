#!/usr/bin/env bash
# gcbench under tight resource limits (README "Failure behaviour", resource limits): it either
# runs or ends at once with exit 3 and one "gcbench: fault:" line; it never hangs and never
# leaves with the OpenMP runtime's own message and exit 1 ("a verification FAILED").
#   tight_limits.sh GCBENCH address_space   ulimit -v: OpenBLAS's constructor used to retry its
#                                           128 MiB buffer forever, before main()
#   tight_limits.sh GCBENCH threads         ulimit -u 1 for another user (setpriv; root ignores
#                                           RLIMIT_NPROC): libgomp used to exit 1
# Exit 77 (ctest SKIP_RETURN_CODE) with the reason where the limit cannot be set here.
set -uo pipefail
gcbench=$1
what=$2
err=$(mktemp)
trap 'rm -f "$err"' EXIT
command -v timeout > /dev/null || { echo "skip: no timeout(1)"; exit 77; }

fail=0
# One run: `expect` is "ok-or-fault" (exit 0, or exit 3 with one gcbench line) or a fixed code.
check() {
  local label=$1 expect=$2 code
  shift 2
  timeout 25 "$@" > /dev/null 2> "$err"
  code=$?
  local lines
  lines=$(wc -l < "$err")
  if [[ $code == 124 ]]; then
    echo "FAIL $label: still running after 25 s (a hang)"
    fail=1
  elif [[ $expect == ok-or-fault ]]; then
    if [[ $code == 0 ]] || { [[ $code == 3 ]] && [[ $lines == 1 ]] && grep -q '^gcbench: fault: ' "$err"; } ||
      { [[ $code == 127 ]] && grep -q 'error while loading shared libraries' "$err"; }; then
      echo "ok   $label: exit $code $(head -c 200 "$err")"
    else
      echo "FAIL $label: exit $code, stderr:"
      cat "$err"
      fail=1
    fi
  elif [[ $code == "$expect" ]]; then
    echo "ok   $label: exit $code $(head -c 200 "$err")"
  else
    echo "FAIL $label: exit $code, expected $expect; stderr:"
    cat "$err"
    fail=1
  fi
}

fast=(mem --device cpu --group stream --kernels copy --size 64K --min-samples 3 --max-samples 3 --max-time 0.2
  --min-time 0 --no-peers -q)

case $what in
  address_space)
    (ulimit -v 1000000) 2> /dev/null || { echo "skip: ulimit -v cannot be set here"; exit 77; }
    # From "too little for anything" to "enough": each limit runs or is refused, never hangs.
    for kib in 300000 600000 1000000 1100000 1200000 1500000 2000000; do
      check "ulimit -v $kib: --version" ok-or-fault bash -c "ulimit -v $kib && exec \"\$0\" --version" "$gcbench"
      check "ulimit -v $kib, OMP_NUM_THREADS=1: --version" ok-or-fault \
        env OMP_NUM_THREADS=1 bash -c "ulimit -v $kib && exec \"\$0\" --version" "$gcbench"
    done
    # The refusal names the limit, at least at the limit where it used to hang on the 2-vCPU VM.
    if timeout 25 bash -c 'ulimit -v 1000000 && exec "$0" --version' "$gcbench" > /dev/null 2> "$err"; then
      echo "note: ulimit -v 1000000 leaves enough address space here; no refusal to check"
    elif ! grep -q 'ulimit -v 1000000 KiB' "$err"; then
      echo "FAIL the refusal at ulimit -v 1000000 does not name the limit:"
      cat "$err"
      fail=1
    fi
    ;;
  threads)
    [[ $(id -u) == 0 ]] || { echo "skip: needs root to run as another user (root ignores ulimit -u)"; exit 77; }
    command -v setpriv > /dev/null || { echo "skip: no setpriv(1)"; exit 77; }
    as_nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups)
    "${as_nobody[@]}" "$gcbench" --version > /dev/null 2>&1 || {
      echo "skip: uid 65534 cannot run $gcbench (a folder on the way is not readable)"
      exit 77
    }
    run_limited=(bash -c 'ulimit -u 1 && exec "$@"' _ "${as_nobody[@]}" "$gcbench")
    check "ulimit -u 1: mem --threads 2" 3 "${run_limited[@]}" "${fast[@]}" --threads 2
    grep -q '^gcbench: fault: cannot start 2 host threads' "$err" || {
      echo "FAIL the fault line does not say which threads could not start"
      fail=1
    }
    check "ulimit -u 1: mem (OpenMP's default threads)" ok-or-fault "${run_limited[@]}" "${fast[@]}"
    check "ulimit -u 1: mem --threads 1" 0 "${run_limited[@]}" "${fast[@]}" --threads 1
    ;;
  *)
    echo "usage: tight_limits.sh GCBENCH address_space|threads" >&2
    exit 2
    ;;
esac
exit $fail
