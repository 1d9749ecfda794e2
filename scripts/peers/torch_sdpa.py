#!/usr/bin/env python3
"""torch SDPA peer for `gcbench attn --peer-torch`: times torch.nn.functional.scaled_dot_product_attention
with the flash backend forced (torch.nn.attention.sdpa_kernel(SDPBackend.FLASH_ATTENTION)) on
[b, h, s, d] tensors, with CUDA events (each sample a batch of back-to-back calls between two events,
median of N samples: peer_common.time_it), and prints one JSON object:
{"available": bool, "reason": str, "torch": version, "results": [{batch, heads, seq, head_dim, causal,
dtype, pass, median_s, calls_per_sample, tflops}]}; TFLOP/s under the FlashAttention convention (4*b*h*s^2*d forward,
/2 causal, backward 2.5x). Never raises: a missing torch or GPU becomes available=false.
Status: not run on a GPU yet (unvalidated)."""
import argparse
import json

from peer_common import open_cuda, reason_of, time_it


def fa_flops(b, h, s, d, causal, pass_):
    f = 4.0 * b * h * s * s * d / (2.0 if causal else 1.0)
    return {"fwd": f, "bwd": 2.5 * f, "fwdbwd": 3.5 * f}[pass_]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", type=int, default=0)
    ap.add_argument("--cases", required=True, help="b:h:s:d:causal(0|1):dtype:pass, comma-separated")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--reps", type=int, default=30)
    a = ap.parse_args()
    opened = open_cuda(a.device, "sdpa")
    if opened is None:
        return
    torch, dev, gen, out = opened
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    for spec in a.cases.split(","):
        b, h, s, d, causal, dt, pass_ = spec.split(":")
        b, h, s, d, causal = int(b), int(h), int(s), int(d), causal == "1"
        entry = {"batch": b, "heads": h, "seq": s, "head_dim": d, "causal": causal, "dtype": dt, "pass": pass_}
        try:
            t = {"fp16": torch.float16, "bf16": torch.bfloat16}[dt]
            q, k, v = (torch.randn(b, h, s, d, device=dev, dtype=t, generator=gen, requires_grad=pass_ != "fwd")
                       for _ in range(3))
            g = torch.randn(b, h, s, d, device=dev, dtype=t, generator=gen)
            with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
                if pass_ == "fwd":
                    def fn():
                        with torch.no_grad():
                            F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                elif pass_ == "bwd":
                    o = F.scaled_dot_product_attention(q, k, v, is_causal=causal)

                    def fn():
                        torch.autograd.grad(o, (q, k, v), g, retain_graph=True)
                else:
                    def fn():
                        o2 = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                        torch.autograd.grad(o2, (q, k, v), g)
                entry["median_s"], entry["calls_per_sample"] = time_it(torch, fn, a.warmup, a.reps)
            entry["tflops"] = fa_flops(b, h, s, d, causal, pass_) / entry["median_s"] / 1e12
        except Exception as e:  # noqa: BLE001 - an unsupported shape is reported, not fatal
            entry["tflops"] = None
            entry["reason"] = reason_of(e)
        out["results"].append(entry)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
