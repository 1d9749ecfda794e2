#!/usr/bin/env bash
# Communicator backends are named in one table (collectives/factory.cpp, docs/design.md
# "Communicator"): outside collectives/ no source compares a backend name, spells the list of
# names in a validator or help text, or downcasts to a concrete communicator. A new backend is
# then its own files, one table row and one CMake line, with no caller to edit.
# Usage: backend_names_in_one_table.sh <source root>. Exit 1 names each offending line.
set -euo pipefail
cd "$1"
dirs=(core kernels models reports topology bench)
src=(--include='*.cpp' --include='*.hpp' --include='*.cu' --include='*.cuh')
bad=0
report() {  # $1 = what is wrong; stdin = grep -n lines
  while IFS= read -r line; do
    echo "$line: $1"
    bad=1
  done
}
# A name compared: backend() == "nccl", backend != "mpi", "threads" == name, …
report 'compares a communicator backend name (ask the table or the communicator: memory(), stream())' < <(
  grep -rnE "${src[@]}" '(==|!=)\s*"(threads|mpi|gloo|nccl)"|"(threads|mpi|gloo|nccl)"\s*(==|!=)' "${dirs[@]}" || true)
# The names listed by hand (help text, validator messages): take them from communicator_backend_names().
report 'lists the backend names by hand (use communicator_backend_names() / add_backend_option())' < <(
  grep -rnE "${src[@]}" 'threads,? (mpi )?or nccl|threads, mpi,? (or )?nccl|threads\|mpi\|nccl' "${dirs[@]}" || true)
# A downcast to a concrete communicator.
report 'downcasts to a concrete communicator' < <(
  grep -rnE "${src[@]}" '(dynamic|static|reinterpret)_cast<[^>]*(Thread|Mpi|Gloo|Nccl)Communicator' "${dirs[@]}" || true)
if ((bad)); then exit 1; fi
# The table itself must still be where the search expects it (else the search proves nothing).
grep -qE '\{"threads",' collectives/factory.cpp || { echo "collectives/factory.cpp has no backend table"; exit 1; }
echo "no backend name compared, listed or downcast to outside collectives/"
