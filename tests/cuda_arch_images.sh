#!/usr/bin/env bash
# The binary carries what GCB_CUDA_ARCHITECTURES promises: a cubin (cuobjdump --list-elf) for every
# "-real" (or plain) entry and PTX (--list-ptx) for every "-virtual" (or plain) entry.
#   cuda_arch_images.sh CUOBJDUMP BINARY "80-real;90-real;..."
set -euo pipefail
cuobjdump=$1 binary=$2 archs=$3
elf=$("$cuobjdump" --list-elf "$binary")
ptx=$("$cuobjdump" --list-ptx "$binary" 2>/dev/null || true)
fail=0
IFS=';,' read -ra entries <<<"$archs"
for e in "${entries[@]}"; do
  sm=${e%-real}
  sm=${sm%-virtual}
  if [[ $e != *-virtual ]] && ! grep -q "\.sm_${sm}\.cubin" <<<"$elf"; then
    echo "FAIL: no sm_${sm} cubin in $binary"
    fail=1
  fi
  if [[ $e != *-real ]] && ! grep -q "\.sm_${sm}\.ptx" <<<"$ptx"; then
    echo "FAIL: no compute_${sm} PTX in $binary"
    fail=1
  fi
done
((fail == 0)) || { echo "--- cuobjdump --list-elf:"; echo "$elf" | sed 's/.*\.\(sm_[0-9a-z]*\)\..*/\1/' | sort | uniq -c; exit 1; }
echo "$binary: $(grep -c cubin <<<"$elf") cubins, $(grep -c ptx <<<"$ptx") PTX, covering $archs"
