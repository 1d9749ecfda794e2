#!/usr/bin/env python3
"""The transformers side of the GPT-2 cross-check of `gcbench train --init-from/--save`.

make OUT_DIR
    A randomly initialised GPT-2 from transformers with the `tiny` shapes (2 layers, hidden 32,
    4 heads, vocabulary 64, 16 positions), every weight then perturbed by N(0, 0.01) so that biases
    and LayerNorm parameters matter, saved with save_pretrained (model.safetensors + config.json);
    a token file in llm.c's format holding one batch (2 sequences of 16 tokens + 1, read by
    gcbench as micro-batch 2); and what transformers computes from them, in fp32:
      expected.json: the batch's mean cross-entropy before the step and after it, the gradient
      norm torch.nn.utils.clip_grad_norm_ returned and the clipping threshold (grad_clip);
      expected_step1.safetensors: the weights after one step as gcbench train takes it by default:
      torch.optim.AdamW (lr 1e-3, betas (0.9, 0.95), eps 1e-8) with nanoGPT's two parameter groups
      (karpathy/nanoGPT model.py configure_optimizers: weight decay 0.1 on the parameters of >= 2
      dimensions, none on biases and LayerNorm), after torch.nn.utils.clip_grad_norm_ of the
      gradients to GRAD_CLIP = 1e-5. The norm is about 1.86, so the clip scales every gradient by
      about 5.4e-6: the median |g| (2.6e-3) becomes about 1.4·eps, where Adam's first update
      g/(|g| + eps) depends on the scale (far above eps it would be sign(g) whatever the clip, and a
      test of clipping could not fail). gcbench reproduces it with
      `train --init-from model.safetensors --data tokens.bin --micro-batch 2 --steps 1
      --warmup-steps 0 --grad-clip 1e-5` (tests/bench/train/test_train_hf.cpp reads grad_clip here).
    tests/fixtures/hf_gpt2_tiny was made this way (regenerated when gcbench's default optimizer
    gained the groups and clipping).

check SAVED_MODEL FIXTURE_DIR
    Loads gcbench's --save output (SAVED_MODEL with config.json beside it) with
    GPT2LMHeadModel.from_pretrained and checks that its loss on the fixture's batch equals
    transformers' own loss after the step within 1e-5 relative. Exit 1 otherwise.

Needs torch, transformers and safetensors (pip install torch transformers safetensors). Exit 77
(ctest's skip code) when they are missing.
"""
import json
import pathlib
import struct
import sys

try:
    import torch
    import torch.nn.functional as F
    from safetensors.torch import save_file
    from transformers import GPT2Config, GPT2LMHeadModel
except ImportError as e:  # pragma: no cover
    print(f"skipped: {e}")
    sys.exit(77)

B, T, V = 2, 16, 64
GRAD_CLIP = 1e-5  # see the docstring: small enough that clipping decides the step
LLMC_MAGIC = 20240520


def read_tokens(path):
    data = pathlib.Path(path).read_bytes()
    header = struct.unpack("<256i", data[:1024])
    assert header[0] == LLMC_MAGIC and header[1] == 1, "llm.c token file, version 1"
    return torch.tensor(struct.unpack(f"<{header[2]}H", data[1024:]), dtype=torch.long)


def batch_loss(model, tokens):
    # gcbench reads sequence s as tokens [s·T, s·T + T] (inputs) shifted by one (targets).
    x = torch.stack([tokens[s * T : s * T + T] for s in range(B)])
    y = torch.stack([tokens[s * T + 1 : s * T + T + 1] for s in range(B)])
    logits = model(input_ids=x).logits
    return F.cross_entropy(logits.reshape(-1, V), y.reshape(-1))


def make(out):
    out = pathlib.Path(out)
    out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(1234)
    config = GPT2Config(n_layer=2, n_embd=32, n_head=4, vocab_size=V, n_positions=T, n_ctx=T,
                        activation_function="gelu_new", layer_norm_epsilon=1e-5, resid_pdrop=0.0,
                        embd_pdrop=0.0, attn_pdrop=0.0, tie_word_embeddings=True, bos_token_id=0,
                        eos_token_id=0)
    model = GPT2LMHeadModel(config)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.01 * torch.randn_like(p))
    model.save_pretrained(out, safe_serialization=True)

    tokens = torch.randint(0, V, (B * T + 1,), generator=torch.Generator().manual_seed(7))
    with open(out / "tokens.bin", "wb") as f:
        f.write(struct.pack("<256i", LLMC_MAGIC, 1, len(tokens), *([0] * 253)))
        f.write(struct.pack(f"<{len(tokens)}H", *tokens.tolist()))

    model.train()  # no dropout: every pdrop is 0
    params = list(model.parameters())  # the tied LM head is wte, listed once
    groups = [{"params": [p for p in params if p.dim() >= 2], "weight_decay": 0.1},
              {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0}]
    optimizer = torch.optim.AdamW(groups, lr=1e-3, betas=(0.9, 0.95), eps=1e-8)
    loss = batch_loss(model, tokens)
    loss.backward()
    grad_norm = torch.nn.utils.clip_grad_norm_(params, GRAD_CLIP)
    optimizer.step()
    with torch.no_grad():
        loss_after = batch_loss(model, tokens)
    # named_parameters() lists the tied LM head once, as transformer.wte.weight.
    weights = {name: p.detach().contiguous() for name, p in model.named_parameters()}
    save_file(weights, out / "expected_step1.safetensors", metadata={"format": "pt"})
    expected = {"loss": loss.item(), "loss_after_step": loss_after.item(),
                "optimizer": "torch.optim.AdamW(lr=1e-3, betas=(0.9, 0.95), eps=1e-8), weight_decay 0.1 on the "
                             "parameters of >= 2 dimensions and 0 on the others (nanoGPT configure_optimizers), "
                             f"after torch.nn.utils.clip_grad_norm_(max_norm={GRAD_CLIP})",
                "grad_clip": GRAD_CLIP, "grad_norm": grad_norm.item(),
                "micro_batch": B, "seq": T, "torch": torch.__version__,
                "transformers": __import__("transformers").__version__}
    (out / "expected.json").write_text(json.dumps(expected, indent=2) + "\n")
    print(f"{out}: loss {loss.item():.9g}, gradient norm {grad_norm.item():.9g} clipped to {GRAD_CLIP}, after one "
          f"AdamW step {loss_after.item():.9g}")


def check(saved, fixture):
    fixture = pathlib.Path(fixture)
    expected = json.loads((fixture / "expected.json").read_text())
    model = GPT2LMHeadModel.from_pretrained(pathlib.Path(saved).parent)
    model.eval()
    with torch.no_grad():
        loss = batch_loss(model, read_tokens(fixture / "tokens.bin")).item()
    want = expected["loss_after_step"]
    ok = abs(loss - want) <= 1e-5 * abs(want)
    print(f"transformers on gcbench's weights: loss {loss:.9g}, transformers' own after the step {want:.9g}: "
          f"{'ok' if ok else 'MISMATCH'}")
    return 0 if ok else 1


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "make":
        make(sys.argv[2])
    elif len(sys.argv) == 4 and sys.argv[1] == "check":
        sys.exit(check(sys.argv[2], sys.argv[3]))
    else:
        print(__doc__)
        sys.exit(2)
