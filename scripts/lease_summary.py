#!/usr/bin/env python3
"""The summary table of scripts/gpu-lease.sh: one row per step (verdict, headline figure, ratio to
the peer) from the step's own outputs only — GoogleTest's JSON report for a test binary, the
gcbench.result/1 document (reports/result.hpp) for a gcbench run. A figure that no output holds is
"-"; nothing is estimated.

    lease_summary.py WORK_DIR REHEARSAL(0|1) NOTES_FILE

WORK_DIR holds steps.tsv (written by gpu-lease.sh: id, title, kind, family, state, rc, seconds,
timeout, log, json, note) and the files it names. Prints the table; writes the notes (reasons,
failed tests, phase split, loss against torch) to NOTES_FILE; exits 1 when a step is FAIL.
Verdicts: PASS, FAIL, WAIVED (nothing could be measured here, with the reason), SKIP (not run:
deadline, missing binary). In a rehearsal (no GPU) every step that ran as it should is WAIVED with
what it said; a step whose command broke (bad flag, crash, timeout) is FAIL there too.
"""
import json
import os
import re
import sys


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def read(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def fmt(v, digits=4):
    """v to `digits` significant digits; whole numbers past them without an exponent."""
    if v is None:
        return "-"
    return f"{v:.0f}" if abs(v) >= 10**digits else f"{v:.{digits}g}"


def metric(result, name):
    for m in result.get("metrics", []):
        if m.get("name") == name:
            return m.get("value")
    return None


def first_skip_reason(log):
    # GoogleTest prints "<file>:<line>: Skipped" and the message on the following line(s).
    m = re.search(r": Skipped\n(.+)", log)
    return m.group(1).strip() if m else ""


def gtest_verdict(step, work):
    """(verdict, headline, ratio, notes) of a GoogleTest binary's run."""
    report = load_json(os.path.join(work, step["json"])) if step["json"] else None
    log = read(os.path.join(work, step["log"]))
    if step["state"] == "timeout":
        return "FAIL", f"timed out after {step['seconds']} s", "-", []
    if report is None:
        tail = log.strip().splitlines()[-1:] or ["no output"]
        return "FAIL", f"exit {step['rc']}, no test report", "-", [tail[0][:160]]
    cases = [c for s in report.get("testsuites", []) for c in s.get("testsuite", [])]
    failed = [f"{c.get('classname')}.{c.get('name')}" for c in cases if c.get("failures")]
    skipped = [c for c in cases if c.get("result") == "SKIPPED"]
    ran = len(cases) - len(skipped)
    notes = []
    props = sorted({(k, str(c[k])) for c in cases for k in c if k not in GTEST_FIELDS})
    prop_text = ", ".join(f"{k}={v}" for k, v in props)
    if prop_text:
        notes.append("properties: " + prop_text)
    if not cases:
        return "FAIL", "no test matched the filter", "-", notes
    if failed:
        notes.append("failed: " + ", ".join(failed[:8]) + (" …" if len(failed) > 8 else ""))
        return "FAIL", f"{len(failed)} of {len(cases)} failed", "-", notes
    if step["rc"] != 0:
        return "FAIL", f"exit {step['rc']} with no failed test", "-", notes
    if ran == 0:
        return "WAIVED", f"all {len(cases)} skipped: {first_skip_reason(log) or 'no reason printed'}", "-", notes
    head = f"{ran} passed" + (f", {len(skipped)} skipped" if skipped else "") + f" of {len(cases)}"
    if prop_text:
        head += f" ({prop_text})"
    return "PASS", head, "-", notes


GTEST_FIELDS = {"name", "file", "line", "status", "result", "time", "timestamp", "classname", "failures",
                "value_param", "type_param", "skipped"}


def results_of(doc, key_pred):
    return [r for r in doc.get("results", []) if key_pred(r.get("key", ""))]


def headline_train(doc):
    rows = results_of(doc, lambda k: k.startswith("train/") and "/vs_torch" not in k and k != "train/vs_torch")
    ours = [r for r in rows if r.get("status") == "PASS"]
    notes, head, ratio = [], "-", "-"
    if ours:
        r = ours[0]
        head = (f"{fmt(metric(r, 'tokens_per_s'))} tok/s, MFU {fmt(metric(r, 'mfu'), 3)} %, "
                f"step {fmt(metric(r, 'step_time'), 3)} s, loss {fmt(metric(r, 'final_loss'), 5)}")
        split = r.get("extra", {}).get("time_split") or {}
        if split:
            notes.append("phase split (s per step): " + ", ".join(f"{k} {fmt(v, 3)}" for k, v in split.items()))
    ratios = []
    for r in results_of(doc, lambda k: "/vs_torch_" in k):
        mode = r["key"].rsplit("vs_torch_", 1)[1]
        x = r.get("extra", {})
        if metric(r, "ratio") is not None:
            ratios.append(f"{mode} {fmt(metric(r, 'ratio'), 3)}x")
            notes.append(f"vs torch {mode}: {r.get('status')}, torch {fmt(x.get('torch_tokens_per_s'))} tok/s, "
                         f"loss max rel diff {fmt(x.get('loss_max_rel_diff'), 3)} (tolerance {fmt(x.get('loss_tolerance'), 3)})")
        else:
            notes.append(f"vs torch {mode}: {r.get('status')} {r.get('reason', '')}")
    if ratios:
        ratio = ", ".join(ratios)
    return head, ratio, notes


def headline_attn(doc):
    figs, ratios, notes = [], [], []
    for p in ("fwd", "bwd"):
        for r in results_of(doc, lambda k, p=p: k == f"attn/{p}"):
            prm = r.get("params", {})
            if r.get("status") == "PASS" and prm.get("device") != "cpu":
                figs.append(f"{prm.get('impl')} {p} {fmt(metric(r, 'tflops'), 3)}")
        for r in results_of(doc, lambda k, p=p: k == f"attn/{p}/vs_torch"):
            if metric(r, "ratio") is not None:
                ratios.append(f"{r.get('params', {}).get('impl')} {p} {fmt(metric(r, 'ratio'), 3)}x")
    for r in results_of(doc, lambda k: k == "attn/vs_torch"):
        notes.append(f"torch peer: {r.get('status')} {r.get('reason', '')}")
    return (("TFLOP/s " + ", ".join(figs)) if figs else "-"), (", ".join(ratios) or "-"), notes


def headline_gemm(doc):
    figs, ratios, notes = [], [], []
    for r in results_of(doc, lambda k: re.fullmatch(r"gemm/[a-z0-9_]+", k) is not None and k != "gemm/gpu"):
        prm = r.get("params", {})
        if r.get("status") == "PASS" and prm.get("device") != "cpu":
            shape = "x".join(str(prm.get(a, "?")) for a in ("m", "n", "k"))
            pk = None
            for m in r.get("metrics", []):
                if m.get("name") == "tflops" and m.get("peak"):
                    pk = 100 * m["value"] / m["peak"] if m.get("value") is not None else None
            figs.append(f"{prm.get('dtype')} {shape} {fmt(metric(r, 'tflops'), 4)} TFLOP/s"
                        + (f" ({fmt(pk, 3)} % of peak)" if pk is not None else ""))
    for r in results_of(doc, lambda k: k.endswith("/vs_torch") or k.endswith("/tuned_vs_default")):
        if metric(r, "ratio") is not None:
            ratios.append(f"{r['key'].split('/', 1)[1]} {fmt(metric(r, 'ratio'), 3)}x")
    for r in results_of(doc, lambda k: k == "gemm/vs_torch"):
        notes.append(f"torch peer: {r.get('status')} {r.get('reason', '')}")
    return (", ".join(figs[:3]) or "-"), (", ".join(ratios[:3]) or "-"), notes


def headline_mem(doc):
    figs, ratios = [], []
    for r in results_of(doc, lambda k: k == "mem/hbm/triad"):
        if r.get("status") == "PASS":
            figs.append(f"HBM triad {fmt(metric(r, 'bandwidth'))} GB/s ({r.get('params', {}).get('device')})")
    for r in results_of(doc, lambda k: k == "mem/hbm/triad_vs_memcpy_d2d"):
        if r.get("metrics") and r["metrics"][0].get("value") is not None:
            ratios.append(f"triad/memcpy D2D {fmt(r['metrics'][0]['value'], 3)}x")
    return (", ".join(figs) or "-"), (", ".join(ratios) or "-"), []


def headline_coll(doc):
    """busbw (nccl-tests' PERFORMANCE.md) per op; on one rank busbw is 0 and an in-place
    all_reduce moves nothing (NCCL returns at once), so there the figure is the out-of-place
    algbw: NCCL's device-to-device copy of the buffer."""
    best = {}
    for r in results_of(doc, lambda k: k.startswith("coll/") and not k.endswith("/fit")):
        if r.get("status") != "PASS":
            continue
        params = r.get("params", {})
        one_rank = params.get("ranks") == 1
        if one_rank and params.get("inplace"):
            continue
        name = "algbw" if one_rank else "busbw"
        v = metric(r, name)
        if v is not None and v > best.get(r["key"], (0, name))[0]:
            best[r["key"]] = (v, name + (" out-of-place, 1 rank" if one_rank else ""))
    figs = [f"{k.split('/', 1)[1]} {n} max {fmt(v)} GB/s" for k, (v, n) in best.items()]
    return (", ".join(figs[:3]) or "-"), "-", []


HEADLINES = {"train": headline_train, "attn": headline_attn, "gemm": headline_gemm, "mem": headline_mem,
             "coll": headline_coll}


def load_jsonl(path):
    """The results a --jsonl file holds ({"result": {...}} lines); None when there is none."""
    rows = []
    for line in read(path).splitlines():
        try:
            j = json.loads(line)
        except ValueError:
            continue  # a line cut by the kill
        if isinstance(j, dict) and isinstance(j.get("result"), dict):
            rows.append(j["result"])
    return {"results": rows} if rows else None


def gcbench_verdict(step, work):
    doc = load_json(os.path.join(work, step["json"])) if step["json"] else None
    log = read(os.path.join(work, step["log"]))
    if step["state"] == "timeout":
        # What the cut run measured before the kill, from its --jsonl file.
        partial = load_jsonl(os.path.join(work, step["log"][:-4] + ".jsonl")) if step["log"].endswith(".log") else None
        head, ratio, notes = HEADLINES.get(step["family"], lambda d: ("-", "-", []))(partial) if partial else ("-", "-", [])
        return "FAIL", f"timed out after {step['seconds']} s" + (f"; before that: {head}" if head != "-" else ""), \
            ratio, notes
    if doc is None:
        tail = log.strip().splitlines()[-1:] or ["no output"]
        # A backend that cannot run without a GPU refuses before any result (coll --backend nccl: exit 2).
        if step["rc"] == 2 and "needs a GPU" in tail[0]:
            return "WAIVED", tail[0][:200], "-", []
        # run --device gpu refuses a host without a usable GPU as a fault (exit 3) before any result.
        if step["rc"] == 3 and "no usable GPU" in tail[0]:
            return "WAIVED", tail[0][:200], "-", []
        return "FAIL", f"exit {step['rc']}, no result document", "-", [tail[0][:200]]
    results = doc.get("results", [])
    counts = {}
    for r in results:
        counts[r.get("status")] = counts.get(r.get("status"), 0) + 1
    tally = ", ".join(f"{counts[s]} {s}" for s in ("PASS", "FAIL", "ERROR", "WAIVED") if s in counts)
    head, ratio, notes = HEADLINES.get(step["family"], lambda d: ("-", "-", []))(doc)
    notes = [f"results: {tally or 'none'}"] + notes
    bad = [r for r in results if r.get("status") in ("FAIL", "ERROR")]
    for r in bad[:6]:
        notes.append(f"{r.get('status')} {r.get('key')}: {r.get('reason', '')[:200]}")
    if step["rc"] not in (0, 1):
        return "FAIL", f"exit {step['rc']}", ratio, notes
    if bad:
        return "FAIL", head if head != "-" else f"{len(bad)} results failed", ratio, notes
    if counts.get("PASS"):
        return "PASS", head if head != "-" else tally, ratio, notes
    reasons = [r.get("reason", "") for r in results if r.get("status") == "WAIVED"]
    return "WAIVED", (reasons[0] if reasons else "no results"), ratio, notes


def main():
    work, rehearsal, notes_file = sys.argv[1], sys.argv[2] == "1", sys.argv[3]
    steps = []
    cols = ["id", "title", "kind", "family", "state", "rc", "seconds", "timeout", "log", "json", "note"]
    with open(os.path.join(work, "steps.tsv")) as f:
        for line in f:
            vals = line.rstrip("\n").split("\t")
            if len(vals) != len(cols):
                continue
            s = dict(zip(cols, vals))
            s["rc"] = int(s["rc"]) if s["rc"].lstrip("-").isdigit() else -1
            steps.append(s)
    rows, notes = [], []
    for s in steps:
        if s["state"] in ("skipped", "missing"):
            verdict = "WAIVED" if rehearsal else "SKIP"
            head, ratio, extra = s["note"], "-", []
        elif s["kind"] == "gtest":
            verdict, head, ratio, extra = gtest_verdict(s, work)
        else:
            verdict, head, ratio, extra = gcbench_verdict(s, work)
        if rehearsal and verdict in ("PASS", "WAIVED", "SKIP") and s["state"] not in ("skipped", "missing"):
            head = f"rehearsal, no GPU ({verdict.lower()}): {head}"
            verdict = "WAIVED"
        elif rehearsal and s["state"] in ("skipped", "missing"):
            head = f"rehearsal, no GPU: {head}"
        rows.append((s["id"], s["title"], verdict, s["seconds"] if s["state"] not in ("skipped", "missing") else "-",
                     head, ratio))
        for n in extra:
            notes.append(f"{s['id']}: {n}")
    w_title = max([len("step")] + [len(f"{r[0]} {r[1]}") for r in rows])
    out = [f"{'step':<{w_title}}  {'verdict':<7}  {'s':>4}  {'vs peer':<28}  headline"]
    for r in rows:
        out.append(f"{r[0] + ' ' + r[1]:<{w_title}}  {r[2]:<7}  {r[3]:>4}  {r[5]:<28}  {r[4]}")
    print("\n".join(out))
    with open(notes_file, "w") as f:
        f.write("".join("  " + n + "\n" for n in notes))
    return 1 if any(r[2] == "FAIL" for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
