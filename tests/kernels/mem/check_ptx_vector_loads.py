#!/usr/bin/env python3
"""Checks the PTX of kernels/mem/gpu_mem.cu: every STREAM kernel (element-wise and dot/read) and the
SM copy must move whole vectors of the width they were instantiated for (--vector-bytes), with the
streaming hint, kInFlight (4) of them per step. A lane-by-lane loop over a reference to global
memory compiles to one scalar load per lane, which is what this guards against.
Usage: check_ptx_vector_loads.py FILE.ptx"""
import re
import sys

VECTOR_OP = {4: "u32", 8: "v2.u32", 16: "v4.u32"}
TYPES = {"d": "fp64", "f": "fp32", "13__nv_bfloat16": "bf16"}
IN_FLIGHT = 4


def main(path):
    ptx = open(path).read()
    entries = re.split(r"(?:\.visible )?\.entry ", ptx)[1:]
    failures, checked = [], 0
    for body in entries:
        name = body.split("(", 1)[0]
        m = re.search(r"(stream_reduce_kernel|stream_elementwise_kernel)I(d|f|13__nv_bfloat16)Li(\d+)E", name)
        if m:
            kernel, width = f"{m.group(1)}<{TYPES[m.group(2)]}, {m.group(3)}>", int(m.group(3))
        elif "sm_copy_kernel" in name:
            kernel, width = "sm_copy_kernel", 16
        else:
            continue
        checked += 1
        op = VECTOR_OP[width]
        loads = len(re.findall(rf"\bld\.global\.cs\.{re.escape(op)}\b", body))
        if loads < IN_FLIGHT:
            failures.append(f"{kernel}: {loads} ld.global.cs.{op} (want >= {IN_FLIGHT})")
        if "reduce" not in kernel:
            stores = len(re.findall(rf"\bst\.global\.cs\.{re.escape(op)}\b", body))
            if stores < IN_FLIGHT:
                failures.append(f"{kernel}: {stores} st.global.cs.{op} (want >= {IN_FLIGHT})")
    # 2 fp64 widths + 3 fp32 + 3 bf16, element-wise and reduce, and the SM copy.
    if checked != 17:
        failures.append(f"found {checked} STREAM/copy kernels in {path}, expected 17")
    for f in failures:
        print("FAIL", f)
    print(f"{checked} kernels checked, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
