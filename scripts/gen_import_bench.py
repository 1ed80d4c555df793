#!/usr/bin/env python3
"""A large Langfuse trace download for scripts/bench_import.sh: a sample's observations
repeated with fresh ids until the file reaches MB megabytes.

    python3 scripts/gen_import_bench.py SAMPLE.trace.json OUT.json [MB]
"""
import json
import sys

sample, out = sys.argv[1], sys.argv[2]
target = int(sys.argv[3] if len(sys.argv) > 3 else 100) * 1_000_000
with open(sample) as f:
    doc = json.load(f)
obs = doc["observations"]
one = len(json.dumps(obs))
copies = max(1, target // max(one, 1))
big = []
for k in range(copies):
    for o in obs:
        o = dict(o)
        o["id"] = f"{o['id']}-{k}"
        if o.get("parentObservationId"):
            o["parentObservationId"] = f"{o['parentObservationId']}-{k}"
        big.append(o)
doc["observations"] = big
with open(out, "w") as f:
    json.dump(doc, f)
