#!/usr/bin/env python3
"""Sends N OTLP/HTTP JSON traces to a receiver (standard library only).

Usage: bench_receiver.py URL TRACES SPANS [FIRST]

Each trace has SPANS spans (a root and SPANS-1 children) and a trace id of its own, numbered
from FIRST; 100 traces per request. A 429 or 503 is retried after its Retry-After, as the
OpenTelemetry SDKs do; any other answer but 200 stops the run with an error.
"""

import json
import sys
import time
import urllib.error
import urllib.request

PER_REQUEST = 100


def span(trace, i):
    sid = f"{trace & 0xFFFFFFFF:08x}{i + 1:08x}"
    s = {
        "traceId": f"{trace:032x}",
        "spanId": sid,
        "name": "agent run" if i == 0 else f"tool call {i}",
        "kind": 1,
        "startTimeUnixNano": str(1_700_000_000_000_000_000 + trace * 1000 + i),
        "endTimeUnixNano": str(1_700_000_000_000_000_000 + trace * 1000 + i + 500),
        "attributes": [
            {"key": "gen_ai.operation.name",
             "value": {"stringValue": "invoke_agent" if i == 0 else "execute_tool"}},
            {"key": "gen_ai.tool.name", "value": {"stringValue": f"tool{i}"}},
        ],
    }
    if i > 0:
        s["parentSpanId"] = f"{trace & 0xFFFFFFFF:08x}{1:08x}"
    return s


def request(first, count, spans):
    out = []
    for t in range(first, first + count):
        out.extend(span(t, i) for i in range(spans))
    return {
        "resourceSpans": [{
            "resource": {"attributes": [
                {"key": "service.name", "value": {"stringValue": "bench"}}]},
            "scopeSpans": [{"scope": {"name": "bench"}, "spans": out}],
        }]
    }


def post(url, body):
    while True:
        req = urllib.request.Request(
            url, data=body, headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=60) as r:
                r.read()
                return
        except urllib.error.HTTPError as e:
            if e.code in (429, 503):
                time.sleep(float(e.headers.get("Retry-After", "1") or 1))
                continue
            raise SystemExit(f"{url}: HTTP {e.code}: {e.read()[:200]!r}")


def main():
    url, traces, spans = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    first = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    sent = 0
    while sent < traces:
        n = min(PER_REQUEST, traces - sent)
        post(url, json.dumps(request(first + sent, n, spans)).encode())
        sent += n


if __name__ == "__main__":
    main()
