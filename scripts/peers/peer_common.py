"""What the torch peer scripts share: opening torch on a CUDA device (or saying why not, as the
JSON object the C++ side reads: {"available": false, "reason": ...}), timing with CUDA events the
way gcbench's harness times its own side (core/harness.hpp), and a one-line reason for a failed
case."""
import json
import math
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


def time_it(torch, fn, warmup, reps, target_s=1e-3, max_batch=100000):
    """Returns (median seconds per call, batch). Like gcbench's harness: one call and a
    synchronize first (lazy module loading, library plan selection stay out of every sample), a
    first timed call that picks the batch so one sample lasts >= target_s, `warmup` untimed calls,
    then `reps` samples, each a batch of back-to-back calls between two CUDA events divided by the
    batch. Timing isolated calls would add the launch gap of every call to a short kernel."""
    fn()
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

    def sample(batch):
        start.record()
        for _ in range(batch):
            fn()
        stop.record()
        stop.synchronize()
        return start.elapsed_time(stop) / 1e3 / batch

    per_call = max(sample(1), 1e-9)
    # The 1e-9 keeps representation error (1e-3 / 1e-6 = 1000.0000000000001) from adding a call.
    batch = int(min(max_batch, max(1, math.ceil(target_s / per_call * (1 - 1e-9)))))
    for _ in range(warmup):
        fn()
    return statistics.median(sample(batch) for _ in range(reps)), batch


def reason_of(e):
    return str(e).splitlines()[0][:200] if str(e) else type(e).__name__
