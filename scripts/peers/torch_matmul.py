#!/usr/bin/env python3
"""torch.matmul peer for `gcbench gemm --peer-torch`: times the same TN problem
D[M,N] = A[M,K] @ B[N,K]^T with CUDA events (each sample a batch of back-to-back calls between two
events, median of N samples: peer_common.time_it, the way gcbench times its own side) and prints
one JSON object: {"available": bool, "reason": str, "torch": version, "results": [{m, n, k, dtype,
op, median_s, calls_per_sample, tflops}]}.
Never raises: a missing torch or GPU becomes available=false with the reason (WAIVED upstream).
Compiles-and-runs status: not run on a GPU yet (unvalidated)."""
import argparse
import json
import sys

from peer_common import open_cuda, reason_of, time_it


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", type=int, default=0)
    ap.add_argument("--shapes", required=True, help="MxNxK,MxNxK,...")
    ap.add_argument("--dtypes", required=True, help="bf16,fp16,fp32,tf32,fp8_e4m3,int8")
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--reps", type=int, default=50)
    a = ap.parse_args()
    opened = open_cuda(a.device)
    if opened is None:
        return
    torch, dev, gen, out = opened
    for shape in a.shapes.split(","):
        m, n, k = (int(x) for x in shape.split("x"))
        for dt in a.dtypes.split(","):
            entry = {"m": m, "n": n, "k": k, "dtype": dt}
            try:
                fn, entry["op"] = make_op(torch, dt, m, n, k, dev, gen)
                entry["median_s"], entry["calls_per_sample"] = time_it(torch, fn, a.warmup, a.reps)
                entry["tflops"] = 2.0 * m * n * k / entry["median_s"] / 1e12
            except Exception as e:  # noqa: BLE001 - an unsupported dtype/shape is reported, not fatal
                entry["tflops"] = None
                entry["reason"] = reason_of(e)
            out["results"].append(entry)
    torch.backends.cuda.matmul.allow_tf32 = False
    print(json.dumps(out))


def make_op(torch, dt, m, n, k, dev, gen):
    torch.backends.cuda.matmul.allow_tf32 = dt == "tf32"
    if dt in ("fp32", "tf32", "fp16", "bf16"):
        t = {"fp32": torch.float32, "tf32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[dt]
        A = torch.randn(m, k, device=dev, dtype=t, generator=gen)
        B = torch.randn(n, k, device=dev, dtype=t, generator=gen)
        return (lambda: torch.matmul(A, B.t())), "torch.matmul"
    if dt in ("fp8_e4m3", "fp8_e5m2"):
        ta = torch.float8_e4m3fn if dt == "fp8_e4m3" else torch.float8_e5m2
        A = torch.randn(m, k, device=dev, generator=gen).to(ta)
        B = torch.randn(n, k, device=dev, generator=gen).to(torch.float8_e4m3fn)
        one = torch.ones((), device=dev)
        return (lambda: torch._scaled_mm(A, B.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16)), "torch._scaled_mm"
    if dt == "int8":
        A = torch.randint(-64, 65, (m, k), device=dev, dtype=torch.int8, generator=gen)
        B = torch.randint(-64, 65, (n, k), device=dev, dtype=torch.int8, generator=gen)
        return (lambda: torch._int_mm(A, B.t())), "torch._int_mm"
    raise ValueError(f"unsupported dtype {dt}")


if __name__ == "__main__":
    sys.exit(main())
