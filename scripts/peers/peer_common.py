"""What the torch peer scripts share: opening torch on a CUDA device (or saying why not, as the
JSON object the C++ side reads: {"available": false, "reason": ...}), timing with CUDA events
(warm-up, then the median of `reps` single-call timings), and a one-line reason for a failed case."""
import json
import statistics


def open_cuda(device, what="torch"):
    """Returns (torch, dev, gen, out) ready to time, or None after printing the unavailable JSON."""
    out = {"available": False, "reason": "", "results": []}
    try:
        import torch
        if what == "sdpa":
            import torch.nn.attention  # noqa: F401 - needed by the SDPA peer (sdpa_kernel)
    except Exception as e:  # noqa: BLE001 - any import failure means "no peer"
        out["reason"] = f"torch not importable ({what}): {e}"
        print(json.dumps(out))
        return None
    out["torch"] = torch.__version__
    if not torch.cuda.is_available():
        out["reason"] = "torch.cuda.is_available() is False"
        print(json.dumps(out))
        return None
    out["available"] = True
    dev = torch.device("cuda", device)
    torch.cuda.set_device(dev)
    gen = torch.Generator(device=dev).manual_seed(1)
    return torch, dev, gen, out


def time_it(torch, fn, warmup, reps):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e) / 1e3)
    return statistics.median(times)


def reason_of(e):
    return str(e).splitlines()[0][:200] if str(e) else type(e).__name__
