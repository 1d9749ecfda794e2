#!/usr/bin/env python3
"""scripts/lease_summary.py on hand-made step outputs: the verdict and figure rules of
scripts/gpu-lease.sh's summary before any GPU has produced real ones. The documents below are
synthetic (their numbers are made up for this test and describe no machine); what is checked is
that each figure in the table is the one the document holds, that failures and timeouts are FAIL,
that a rehearsal WAIVEs what ran and keeps a broken step FAIL, and the exit code.

    lease_summary_test.py SOURCE_DIR
"""
import json
import os
import subprocess
import sys
import tempfile

SRC = sys.argv[1]
SUMMARY = os.path.join(SRC, "scripts", "lease_summary.py")
COLS = ["id", "title", "kind", "family", "state", "rc", "seconds", "timeout", "log", "json", "note"]


def gtest_report(cases):
    return {"tests": len(cases), "testsuites": [{"name": "S", "testsuite": cases}]}


def case(name, result="COMPLETED", failures=None, **props):
    c = {"name": name, "file": "t.cpp", "line": 1, "status": "RUN", "result": result, "time": "0s",
         "timestamp": "x", "classname": "S"}
    if failures:
        c["failures"] = [{"failure": f, "type": ""} for f in failures]
    c.update(props)
    return c


def result(key, status="PASS", metrics=(), params=None, extra=None, reason=""):
    return {"key": key, "status": status, "reason": reason, "params": params or {"device": "gpu:0"},
            "metrics": [{"name": n, "value": v, "unit": u} for n, v, u in metrics], "extra": extra or {}}


def doc(results):
    return {"schema": "gcbench.result/1", "context": {}, "results": results}


def run(steps, rehearsal):
    with tempfile.TemporaryDirectory() as work:
        rows = []
        for s in steps:
            name = f"{s['id']}-{s['title']}"
            if "content" in s:
                with open(os.path.join(work, name + ".json"), "w") as f:
                    json.dump(s["content"], f)
            if "jsonl" in s:
                with open(os.path.join(work, name + ".jsonl"), "w") as f:
                    f.write(s["jsonl"])
            with open(os.path.join(work, name + ".log"), "w") as f:
                f.write(s.get("logtext", ""))
            vals = {"kind": "gtest", "family": "-", "state": "ran", "rc": "0", "seconds": "3", "timeout": "60",
                    "log": name + ".log", "json": name + ".json", "note": "-"}
            vals.update({k: str(v) for k, v in s.items() if k in COLS})
            rows.append("\t".join(vals[c] for c in COLS))
        with open(os.path.join(work, "steps.tsv"), "w") as f:
            f.write("\n".join(rows) + "\n")
        p = subprocess.run([sys.executable, SUMMARY, work, "1" if rehearsal else "0", os.path.join(work, "notes")],
                           capture_output=True, text=True)
        notes = open(os.path.join(work, "notes")).read() if os.path.exists(os.path.join(work, "notes")) else ""
    table = {}
    for line in p.stdout.splitlines()[1:]:
        parts = line.split()
        table[parts[0]] = line
    return p.returncode, table, notes, p.stdout + p.stderr


failures = []


def check(cond, what, out):
    if not cond:
        failures.append(f"{what}\n{out}")


# A GPU lease: each kind of step with figures.
steps = [
    dict(id="1", title="event-timer", content=gtest_report([case("a"), case("b")])),
    dict(id="3", title="lt-gelu-form", content=gtest_report([case("f32", cublaslt_gelu_form="tanh")])),
    dict(id="4", title="flash", rc=1, content=gtest_report([case("ok"), case("bad", failures=["t.cpp:9\nboom"])])),
    dict(id="2", title="cuda-backend", state="timeout", rc=124, seconds=150),
    dict(id="5", title="train", kind="gcbench", family="train", content=doc([
        result("train/dp1", metrics=[("step_time", 0.5, "s"), ("tokens_per_s", 16384.0, "tokens/s"),
                                     ("mfu", 41.5, "%"), ("final_loss", 10.9, "")],
               extra={"time_split": {"forward": 0.1, "backward": 0.3, "optimizer": 0.1}}),
        result("train/dp1/vs_torch_eager", metrics=[("ratio", 1.25, "x")],
               extra={"torch_tokens_per_s": 13107.2, "loss_max_rel_diff": 0.001, "loss_tolerance": 0.0078125}),
        result("train/dp1/vs_torch_compile", status="WAIVED", reason="torch compile: no compiler")])),
    dict(id="6", title="attn", kind="gcbench", family="attn", content=doc([
        result("attn/fwd", metrics=[("tflops", 300.0, "TFLOP/s")], params={"device": "gpu:0", "impl": "ours", "pass": "fwd"}),
        result("attn/fwd/vs_torch", metrics=[("ratio", 0.75, "x")], params={"device": "gpu:0", "impl": "ours", "pass": "fwd"})])),
    dict(id="7", title="gemm", kind="gcbench", family="gemm", content=doc([
        result("gemm/bf16", params={"device": "gpu:0", "dtype": "bf16", "m": 8192, "n": 8192, "k": 8192},
               metrics=[("tflops", 700.0, "TFLOP/s")]),
        result("gemm/bf16/vs_torch", metrics=[("ratio", 1.0, "x")])])),
    dict(id="8a", title="mem", kind="gcbench", family="mem", content=doc([
        result("mem/hbm/triad", metrics=[("bandwidth", 3000.0, "GB/s")]),
        result("mem/hbm/triad_vs_memcpy_d2d", metrics=[("ratio", 1.1, "x")])])),
    dict(id="8d", title="coll", kind="gcbench", family="coll", content=doc([
        result("coll/all_reduce", params={"ranks": 1, "bytes": 8}, metrics=[("busbw", 0.0, "GB/s"), ("algbw", 1.5, "GB/s")]),
        result("coll/all_reduce", params={"ranks": 1, "bytes": 1024, "inplace": False},
               metrics=[("busbw", 0.0, "GB/s"), ("algbw", 90.0, "GB/s")]),
        # in place on one rank NCCL returns at once: an absurd algbw that must not be the headline
        result("coll/all_reduce", params={"ranks": 1, "bytes": 1024, "inplace": True},
               metrics=[("busbw", 0.0, "GB/s"), ("algbw", 3368020.0, "GB/s")])])),
    dict(id="8e", title="p2p", content=gtest_report([case("x", result="SKIPPED")]),
         logtext="t.cpp:3: Skipped\nneeds 2 GPUs, this host has 1\n"),
    dict(id="8g", title="cut", kind="gcbench", family="mem", state="timeout", rc=124, seconds=90, json="-",
         jsonl=json.dumps({"result": result("mem/hbm/triad", metrics=[("bandwidth", 2900.0, "GB/s")])}) + "\n{\"res"),
    dict(id="8f", title="scan", state="skipped", rc=0, seconds=0, log="-", json="-", note="deadline (450 s) reached"),
]
rc, t, notes, out = run(steps, rehearsal=False)
check(rc == 1, "a FAIL step makes exit 1", out)
check(" PASS " in t["1"] and "2 passed of 2" in t["1"], "step 1 PASS with counts", out)
check(" PASS " in t["3"] and "cublaslt_gelu_form=tanh" in t["3"], "step 3 shows the GELU form", out)
check(" FAIL " in t["4"] and "1 of 2 failed" in t["4"] and "S.bad" in notes, "step 4 FAIL names the test", out)
check(" FAIL " in t["2"] and "timed out" in t["2"], "step 2 timeout is FAIL", out)
check(" PASS " in t["5"] and "16384 tok/s" in t["5"] and "MFU 41.5 %" in t["5"] and "eager 1.25x" in t["5"],
      "train figures from the document", out)
check("backward 0.3" in notes and "loss max rel diff 0.001" in notes, "train notes: phase split, loss", out)
check(" PASS " in t["6"] and "ours fwd 300" in t["6"] and "ours fwd 0.75x" in t["6"], "attn figure and ratio", out)
check(" PASS " in t["7"] and "bf16 8192x8192x8192 700 TFLOP/s" in t["7"] and "bf16/vs_torch 1x" in t["7"], "gemm", out)
check(" PASS " in t["8a"] and "HBM triad 3000 GB/s" in t["8a"] and "1.1x" in t["8a"], "mem triad and ratio", out)
check(" PASS " in t["8d"] and "algbw out-of-place, 1 rank max 90 GB/s" in t["8d"],
      "coll: one rank reports the out-of-place algbw, never the in-place no-op", out)
check(" WAIVED " in t["8e"] and "needs 2 GPUs" in t["8e"], "all skipped is WAIVED with the reason", out)
check(" FAIL " in t["8g"] and "timed out after 90 s; before that: HBM triad 2900 GB/s" in t["8g"],
      "a cut gcbench step is FAIL with what its JSONL kept", out)
check(" SKIP " in t["8f"] and "deadline" in t["8f"], "a step past the deadline is SKIP", out)

# A rehearsal: what ran as it should is WAIVED; a broken command stays FAIL.
steps = [
    dict(id="1", title="event-timer", content=gtest_report([case("a", result="SKIPPED")]), logtext=": Skipped\nno GPU\n"),
    dict(id="5", title="train", kind="gcbench", family="train",
         content=doc([result("train/dp1", status="WAIVED", reason="no GPU: no NVIDIA driver found", metrics=[])])),
    dict(id="6", title="attn", kind="gcbench", family="attn", rc=2, json="-", logtext="--pass: bad value\n"),
]
steps.append(dict(id="8d", title="coll", kind="gcbench", family="coll", rc=2, json="-",
                  logtext="gcbench: error: the nccl backend needs a GPU: no NVIDIA driver found\n"))
rc, t, notes, out = run(steps, rehearsal=True)
check(rc == 1, "a broken step fails the rehearsal", out)
check(" WAIVED " in t["8d"] and "needs a GPU" in t["8d"], "a backend refusing without a GPU is WAIVED", out)
check(" WAIVED " in t["1"] and " WAIVED " in t["5"] and "no NVIDIA driver" in t["5"], "rehearsal WAIVEs with the reason", out)
check(" FAIL " in t["6"] and "exit 2" in t["6"], "a bad flag is FAIL in a rehearsal", out)
rc, t, notes, out = run(steps[:2] + steps[3:], rehearsal=True)
check(rc == 0, "a clean rehearsal exits 0", out)

if failures:
    print("\n\n".join("FAIL: " + f for f in failures))
    sys.exit(1)
print("lease_summary_test: all checks passed")
