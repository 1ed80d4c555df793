#!/usr/bin/env python3
"""Large imports for scripts/bench_import.sh: a sample's repeated part copied with fresh ids
until the file reaches MB megabytes.

    python3 scripts/gen_import_bench.py SAMPLE OUT [MB] [--format NAME]

NAME (default langfuse) says what is repeated:
  langfuse   a trace download's observations
  langsmith  an ingest payload's post and patch records (each copy a trace of its own)
  letta      an older-schema agent file's messages (one agent, one long history)
  inspect    a JSON log's samples (OUT ending in .eval: an .eval archive, one member a sample)
"""
import json
import sys
import zipfile

args = [a for a in sys.argv[1:] if not a.startswith("--format")]
fmt = "langfuse"
for i, a in enumerate(sys.argv):
    if a == "--format":
        fmt = sys.argv[i + 1]
        args.remove(fmt)
    elif a.startswith("--format="):
        fmt = a.split("=", 1)[1]
sample, out = args[0], args[1]
target = int(args[2] if len(args) > 2 else 100) * 1_000_000
with open(sample) as f:
    doc = json.load(f)


def copies_of(part):
    return max(1, target // max(len(json.dumps(part)), 1))


def langfuse():
    obs = doc["observations"]
    big = []
    for k in range(copies_of(obs)):
        for o in obs:
            o = dict(o)
            o["id"] = f"{o['id']}-{k}"
            if o.get("parentObservationId"):
                o["parentObservationId"] = f"{o['parentObservationId']}-{k}"
            big.append(o)
    doc["observations"] = big
    return doc


def fresh(v, k):
    """A run's ids (id, parent, trace, dotted order) made those of copy k."""
    v = dict(v)
    for key in ("id", "parent_run_id", "trace_id"):
        if isinstance(v.get(key), str):
            v[key] = f"{v[key]}-{k}"
    if isinstance(v.get("dotted_order"), str):
        v["dotted_order"] = ".".join(f"{p}-{k}" for p in v["dotted_order"].split("."))
    return v


def langsmith():
    post, patch = doc.get("post") or [], doc.get("patch") or []
    n = copies_of(post + patch)
    return {
        "post": [fresh(r, k) for k in range(n) for r in post],
        "patch": [fresh(r, k) for k in range(n) for r in patch],
    }


def letta():
    msgs = doc["messages"]
    big = []
    for k in range(copies_of(msgs)):
        for m in msgs:
            m = dict(m)
            if isinstance(m.get("id"), str):
                m["id"] = f"{m['id']}-{k}"
            big.append(m)
    doc["messages"] = big
    return doc


def inspect():
    samples = doc["samples"]
    big = []
    for k in range(copies_of(samples)):
        for s in samples:
            s = dict(s)
            s["id"] = f"{s['id']}-{k}"
            big.append(s)
    if out.endswith(".eval"):
        header = {key: v for key, v in doc.items() if key != "samples"}
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr("header.json", json.dumps(header))
            for i, s in enumerate(big):
                z.writestr(f"samples/{i + 1}_epoch_1.json", json.dumps(s))
        sys.exit(0)
    doc["samples"] = big
    return doc


big = {"langfuse": langfuse, "langsmith": langsmith, "letta": letta, "inspect": inspect}[fmt]()
with open(out, "w") as f:
    json.dump(big, f)
