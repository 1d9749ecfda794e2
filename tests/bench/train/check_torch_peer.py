#!/usr/bin/env python3
"""Checks the JSON of `gcbench train --peer-torch` (train_torch_peer_live): the eager row PASSes
(losses within tolerance), torch's attention was SDPA (scripts/peers/torch_gpt.py), and ours and
torch's each ran twice in the alternating order (models/run/torch_peer.hpp kPeerOrder)."""
import json
import sys

rows = {x["key"]: x for x in json.load(open(sys.argv[1]))["results"]}
print({k: r["status"] for k, r in rows.items()})
eager = rows.get("train/dp1/vs_torch_eager")
problems = []
if eager is None or eager["status"] != "PASS":
    problems.append(f"vs_torch_eager: {eager and (eager['status'], eager.get('reason'))}")
else:
    extra = eager["extra"]
    if "attention sdpa" not in extra.get("torch_impl", ""):
        problems.append(f"torch_impl {extra.get('torch_impl')!r} does not say attention sdpa")
    if len(extra.get("ours_rounds_tokens_per_s", [])) != 2 or len(extra.get("torch_rounds_tokens_per_s", [])) != 2:
        problems.append(f"rounds: ours {extra.get('ours_rounds_tokens_per_s')}, torch {extra.get('torch_rounds_tokens_per_s')}")
    if not extra.get("order", "").startswith("ours, torch (eager then compile), torch (compile then eager), ours"):
        problems.append(f"order {extra.get('order')!r}")
for p in problems:
    print("check_torch_peer:", p)
sys.exit(1 if problems else 0)
