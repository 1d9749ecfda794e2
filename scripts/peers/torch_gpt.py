#!/usr/bin/env python3
"""torch peer of `gcbench train --peer-torch`: the same GPT-2, weights and tokens, trained with
torch.optim.AdamW, timed per step eagerly and under torch.compile.

The optimizer as gcbench's (docs/readme-train.md "Optimizer"): two parameter groups as nanoGPT's
configure_optimizers (karpathy/nanoGPT model.py: parameters of >= 2 dimensions decay, the others
not; --decay-all: one group, every parameter decays), the learning rate of each step from nanoGPT's
get_lr (karpathy/nanoGPT train.py; --lr-schedule constant|cosine, --lr-warmup-steps,
--lr-decay-steps, --min-lr) and torch.nn.utils.clip_grad_norm_(max_norm=--grad-clip) before each
step (0: none). Each result lists the norms clip_grad_norm_ returned ("grad_norms").

The model is transformers' GPT2LMHeadModel built from the config.json beside --weights when
transformers is importable, with attn_implementation="sdpa" asked for explicitly (the attention of
torch.nn.functional.scaled_dot_product_attention, as ours is a fused kernel; transformers' default
depends on its version and the model: "Attention interface" of the transformers documentation),
else a plain torch module with the same math, its attention also SDPA (GPT-2: LayerNorm eps 1e-5,
fused c_attn, causal softmax attention scaled by 1/sqrt(d), GELU tanh form, tied LM head; Conv1D
weights [in, out] as Hugging Face stores them). Weights come from --weights (the safetensors file
gcbench writes with --save, or the one it was given with --init-from); tokens from --tokens, raw
little-endian int32 of shape [S, seq + 1] (inputs = [:, :seq], targets = [:, 1:]), the sequences
gcbench trains on, step k reading rows [k*batch, (k+1)*batch). The loss is the mean cross-entropy
over batch * seq tokens, as gcbench's. --precision bf16 runs torch.autocast(bfloat16) over fp32
weights and fp32 AdamW (PyTorch's mixed precision). Timing: CUDA events around each step on a GPU,
time.perf_counter around each step (ended by loss.item()) on the CPU, with torch.set_num_threads(--threads);
the median of the steps after --warmup. --modes runs the modes in the order given (gcbench runs the
script twice, eager first then compile first, between two runs of its own: bench/train/train_peer.cpp).

Prints one JSON object (scripts/peers/peer_common.py): {"available", "reason", "torch", "impl" (the
model and its attention), "device", "results": [{"mode": "eager"|"compile", "median_s",
"tokens_per_s", "losses": [...], "seconds": [...]} or {"mode", "tokens_per_s": null, "reason"}]}. Never raises: a missing torch or GPU is available=false.
Status: the CPU path runs in gcbench's tests; the CUDA path has not run on a GPU yet (unvalidated)."""
import argparse
import json
import math
import pathlib
import statistics
import struct
import time

from peer_common import reason_of


def read_safetensors(torch, path):
    """The tensors of a safetensors file (format: u64 header length, JSON header, raw data)."""
    data = pathlib.Path(path).read_bytes()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + n])
    types = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16}
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        begin, end = t["data_offsets"]
        raw = bytearray(data[8 + n + begin : 8 + n + end])
        out[name] = torch.frombuffer(raw, dtype=types[t["dtype"]]).reshape(t["shape"]).clone()
    return out


def canonical_names(tensors):
    """GPT2LMHeadModel's names: files of the bare GPT2Model lack the "transformer." prefix."""
    return {(k if k.startswith("transformer.") else "transformer." + k): v for k, v in tensors.items()}


def plain_gpt(torch, cfg):
    """GPT-2 with the same parameter names as GPT2LMHeadModel, for machines without transformers."""
    nn, F = torch.nn, torch.nn.functional
    C, H = cfg["n_embd"], cfg["n_head"]

    class Conv1D(nn.Module):  # y = x @ W + b with W [in, out], Hugging Face's layout
        def __init__(self, n_in, n_out):
            super().__init__()
            self.weight = nn.Parameter(torch.zeros(n_in, n_out))
            self.bias = nn.Parameter(torch.zeros(n_out))

        def forward(self, x):
            return x @ self.weight + self.bias

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_attn, self.c_proj = Conv1D(C, 3 * C), Conv1D(C, C)

        def forward(self, x):
            B, T, _ = x.shape
            q, k, v = self.c_attn(x).split(C, dim=2)
            q, k, v = (t.view(B, T, H, C // H).transpose(1, 2) for t in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            return self.c_proj(y.transpose(1, 2).reshape(B, T, C))

    class Mlp(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_fc, self.c_proj = Conv1D(C, 4 * C), Conv1D(4 * C, C)

        def forward(self, x):
            return self.c_proj(F.gelu(self.c_fc(x), approximate="tanh"))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1, self.attn = nn.LayerNorm(C, eps=1e-5), Attention()
            self.ln_2, self.mlp = nn.LayerNorm(C, eps=1e-5), Mlp()

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp(self.ln_2(x))

    class Body(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte = nn.Embedding(cfg["vocab_size"], C)
            self.wpe = nn.Embedding(cfg["n_positions"], C)
            self.h = nn.ModuleList(Block() for _ in range(cfg["n_layer"]))
            self.ln_f = nn.LayerNorm(C, eps=1e-5)

    class Gpt(nn.Module):
        def __init__(self):
            super().__init__()
            self.transformer = Body()

        def forward(self, input_ids):
            t = self.transformer
            x = t.wte(input_ids) + t.wpe(torch.arange(input_ids.shape[1], device=input_ids.device))
            for block in t.h:
                x = block(x)
            return t.ln_f(x) @ t.wte.weight.t()  # tied LM head

    return Gpt()


def build_model(torch, weights, dev):
    cfg = json.loads((pathlib.Path(weights).parent / "config.json").read_text())
    state = canonical_names(read_safetensors(torch, weights))
    try:
        from transformers import AutoModelForCausalLM, GPT2Config
    except ImportError:
        model = plain_gpt(torch, cfg)
        impl = "plain torch module (transformers not importable)"
        logits_of = lambda m, x: m(x)  # noqa: E731
        attention = "sdpa"  # F.scaled_dot_product_attention in plain_gpt's Attention
    else:
        config = GPT2Config.from_json_file(str(pathlib.Path(weights).parent / "config.json"))
        model = AutoModelForCausalLM.from_config(config, attn_implementation="sdpa")
        attention = getattr(model.config, "_attn_implementation", "sdpa")
        if attention != "sdpa":
            raise ValueError(f"transformers built GPT-2 with attention {attention!r}, not the sdpa asked for")
        impl = f"transformers {type(model).__name__}"
        logits_of = lambda m, x: m(input_ids=x).logits  # noqa: E731
    missing, unexpected = model.load_state_dict(state, strict=False)
    missing = [k for k in missing if k != "lm_head.weight" and not k.endswith(".attn.bias") and not k.endswith("masked_bias")]
    if missing or unexpected:
        raise ValueError(f"weights do not fit the model: missing {missing[:3]}, unexpected {unexpected[:3]}")
    if hasattr(model, "tie_weights"):
        model.tie_weights()
    model.eval()  # no dropout (gcbench has none); gradients still flow
    return model.to(dev), logits_of, f"{impl}, attention {attention}", cfg


def scheduled_lr(a, it):
    """nanoGPT's get_lr (karpathy/nanoGPT train.py) at 0-based step it; constant after the warm-up."""
    if it < a.lr_warmup_steps:
        return a.lr * (it + 1) / (a.lr_warmup_steps + 1)
    if a.lr_schedule == "constant":
        return a.lr
    if it > a.lr_decay_steps:
        return a.min_lr
    ratio = (it - a.lr_warmup_steps) / (a.lr_decay_steps - a.lr_warmup_steps)
    return a.min_lr + 0.5 * (1.0 + math.cos(math.pi * ratio)) * (a.lr - a.min_lr)


def param_groups(model, a):
    """nanoGPT's configure_optimizers groups: decay on parameters of >= 2 dimensions only."""
    params = [p for p in model.parameters() if p.requires_grad]
    if a.decay_all:
        return [{"params": params, "weight_decay": a.weight_decay}]
    return [{"params": [p for p in params if p.dim() >= 2], "weight_decay": a.weight_decay},
            {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0}]


def train(torch, a, dev, tokens, mode):
    """Runs warmup + steps optimizer steps from the file's weights; returns (losses, step seconds,
    impl, gradient norms)."""
    model, logits_of, impl, cfg = build_model(torch, a.weights, dev)
    run = torch.compile(model) if mode == "compile" else model
    opt = torch.optim.AdamW(param_groups(model, a), lr=a.lr, betas=(a.beta1, a.beta2), eps=a.eps)
    F = torch.nn.functional
    V, T, G = cfg["vocab_size"], a.seq, a.batch
    losses, seconds, norms = [], [], []
    cuda = dev.type == "cuda"
    for step in range(a.warmup + a.steps):
        for group in opt.param_groups:
            group["lr"] = scheduled_lr(a, step)
        rows = tokens[step * G : (step + 1) * G]
        x, y = rows[:, :T].to(dev), rows[:, 1:].to(dev)
        if cuda:
            start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
        t0 = time.perf_counter()
        with torch.autocast(device_type=dev.type, dtype=torch.bfloat16, enabled=a.precision == "bf16"):
            loss = F.cross_entropy(logits_of(run, x).float().reshape(-1, V), y.reshape(-1))
        loss.backward()
        if a.grad_clip > 0:
            norms.append(torch.nn.utils.clip_grad_norm_(model.parameters(), a.grad_clip))
        opt.step()
        opt.zero_grad(set_to_none=True)
        if cuda:
            stop.record()
        value = loss.item()  # waits for the step
        seconds.append(start.elapsed_time(stop) / 1e3 if cuda else time.perf_counter() - t0)
        losses.append(value)
    return losses, seconds, impl, [float(n) for n in norms]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--weights", required=True, help="GPT-2 safetensors with config.json beside it")
    ap.add_argument("--tokens", required=True, help="raw int32 [S, seq + 1]")
    ap.add_argument("--seq", type=int, required=True)
    ap.add_argument("--batch", type=int, required=True, help="sequences per step (gcbench's global batch)")
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    ap.add_argument("--precision", choices=["fp32", "bf16"], default="fp32")
    ap.add_argument("--threads", type=int, default=0, help="CPU: torch.set_num_threads (0: torch's default)")
    ap.add_argument("--modes", default="eager,compile")
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--beta1", type=float, default=0.9)
    ap.add_argument("--beta2", type=float, default=0.95)
    ap.add_argument("--eps", type=float, default=1e-8)
    ap.add_argument("--weight-decay", type=float, default=0.1)
    ap.add_argument("--decay-all", action="store_true", help="weight decay on every parameter (one group)")
    ap.add_argument("--lr-schedule", choices=["constant", "cosine"], default="constant")
    ap.add_argument("--lr-warmup-steps", type=int, default=0)
    ap.add_argument("--lr-decay-steps", type=int, default=0)
    ap.add_argument("--min-lr", type=float, default=0.0)
    ap.add_argument("--grad-clip", type=float, default=1.0, help="clip_grad_norm_ max_norm; 0: no clipping")
    a = ap.parse_args()
    out = {"available": False, "reason": "", "results": []}
    try:
        import torch
    except Exception as e:  # noqa: BLE001 - any import failure means "no peer"
        out["reason"] = f"torch not importable: {e}"
        print(json.dumps(out))
        return
    out["torch"] = torch.__version__
    if a.device == "cuda" and not torch.cuda.is_available():
        out["reason"] = "torch.cuda.is_available() is False"
        print(json.dumps(out))
        return
    dev = torch.device(a.device, 0) if a.device == "cuda" else torch.device("cpu")
    if a.device == "cpu" and a.threads > 0:
        torch.set_num_threads(a.threads)
    out.update(available=True, device=str(dev), threads=torch.get_num_threads(), precision=a.precision)
    try:
        raw = bytearray(pathlib.Path(a.tokens).read_bytes())
        tokens = torch.frombuffer(raw, dtype=torch.int32).to(torch.long).reshape(-1, a.seq + 1)
        if tokens.shape[0] < (a.warmup + a.steps) * a.batch:
            raise ValueError(f"{tokens.shape[0]} sequences in --tokens, {(a.warmup + a.steps) * a.batch} needed")
    except Exception as e:  # noqa: BLE001 - reported, not raised
        out.update(available=False, reason=f"tokens: {reason_of(e)}")
        print(json.dumps(out))
        return
    for mode in a.modes.split(","):
        entry = {"mode": mode}
        try:
            losses, seconds, impl, norms = train(torch, a, dev, tokens, mode)
            out["impl"] = impl
            median = statistics.median(seconds[a.warmup :])
            entry.update(median_s=median, tokens_per_s=a.batch * a.seq / median, losses=losses, seconds=seconds,
                         grad_norms=norms)
            if not all(math.isfinite(x) for x in losses):
                entry.update(tokens_per_s=None, reason="non-finite loss")
        except Exception as e:  # noqa: BLE001 - e.g. torch.compile without a working compiler
            entry.update(tokens_per_s=None, reason=reason_of(e))
        out["results"].append(entry)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
