"""A small scripted agent instrumented with the OpenTelemetry Python SDK (GenAI semantic
conventions), exporting to doxascope's OTLP/HTTP receiver. Used by tests/otlp_python.rs and
benches/otlp.rs.

usage: otel_agent.py ENDPOINT {proto|json} TRACES [--tools N] [--stamps FILE] [--queue N]
                     [--fail-tool]

Each trace is one agent run: an `invoke_agent` root, then per step a `chat` span (input and
output messages as GenAI >= 1.37 JSON attributes) and an `execute_tool` span; the last chat
span carries a `gen_ai.evaluation.result` event. Spans go through the SDK's
BatchSpanProcessor.

- proto: the SDK's own OTLP/HTTP exporter (opentelemetry-exporter-otlp-proto-http), protobuf.
- json: the same spans encoded by the SDK's OTLP encoder and turned into proto3 JSON by
  protobuf's json_format (ids come out in base64, as proto3 JSON writes bytes), gzip'd and
  POSTed to the same endpoint: the SDK has no JSON exporter of its own.

Prints `sent SPANS exported SPANS` at the end (after shutdown, so every span handed on was
exported and answered): the spans made, and those the exporter was given and had answered.
The BatchSpanProcessor drops spans when its queue (2,048 by default) is full because the
exporter lags the agent; --queue N sizes it, so that a rate measurement counts the receiver's
losses and not the SDK's own.
With --stamps, writes `TRACE_HEX EXPORT_NS` lines: when each trace's root span was handed to
the exporter's HTTP POST.
With --fail-tool, the first tool call of the first trace raises inside its span: the SDK
records the exception as a span event and sets the span's status to ERROR, as instrumented
frameworks do when a tool fails; the agent goes on.
"""

import gzip
import json
import sys
import time
import urllib.request

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult


def main():
    endpoint, encoding, traces = sys.argv[1], sys.argv[2], int(sys.argv[3])
    tools = 2
    stamps = None
    queue = None
    fail_tool = False
    args = sys.argv[4:]
    while args:
        if args[0] == "--tools":
            tools = int(args[1])
            args = args[2:]
        elif args[0] == "--stamps":
            stamps = open(args[1], "w")
            args = args[2:]
        elif args[0] == "--fail-tool":
            fail_tool = True
            args = args[1:]
        elif args[0] == "--queue":
            queue = int(args[1])
            args = args[2:]
        else:
            raise SystemExit(f"unknown argument {args[0]}")
    url = endpoint.rstrip("/") + "/v1/traces"
    if encoding == "proto":
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        inner = OTLPSpanExporter(endpoint=url)
    else:
        inner = JsonExporter(url)
    exporter = Stamping(inner, stamps)
    provider = TracerProvider(resource=Resource.create({"service.name": "otel-test-agent"}))
    batch = BatchSpanProcessor(exporter) if queue is None else BatchSpanProcessor(
        exporter, max_queue_size=queue)
    provider.add_span_processor(batch)
    tracer = provider.get_tracer("doxascope.tests.otel_agent")
    sent = 0
    for t in range(traces):
        goal = f"Find the weather in city {t}"
        with tracer.start_as_current_span("invoke_agent weather") as root:
            root.set_attribute("gen_ai.operation.name", "invoke_agent")
            root.set_attribute("gen_ai.agent.name", "weather")
            root.set_attribute(
                "gen_ai.input.messages",
                json.dumps([{"role": "user", "parts": [{"type": "text", "content": goal}]}]),
            )
            sent += 1
            for step in range(tools):
                with tracer.start_as_current_span("chat model-x") as chat:
                    chat.set_attribute("gen_ai.operation.name", "chat")
                    chat.set_attribute("gen_ai.request.model", "model-x")
                    chat.set_attribute("gen_ai.usage.input_tokens", 10 + step)
                    chat.set_attribute(
                        "gen_ai.output.messages",
                        json.dumps([{"role": "assistant", "parts": [
                            {"type": "text", "content": f"step {step}: call the tool"},
                            {"type": "tool_call", "id": f"c{step}", "name": "lookup",
                             "arguments": {"city": t}},
                        ]}]),
                    )
                    sent += 1
                try:
                    with tracer.start_as_current_span("execute_tool lookup") as tool:
                        tool.set_attribute("gen_ai.operation.name", "execute_tool")
                        tool.set_attribute("gen_ai.tool.name", "lookup")
                        tool.set_attribute("gen_ai.tool.call.id", f"c{step}")
                        sent += 1
                        if fail_tool and t == 0 and step == 0:
                            raise ConnectionError("lookup service down")
                        tool.set_attribute(
                            "gen_ai.tool.call.result", json.dumps({"sky": "clear"}))
                except ConnectionError:
                    pass
            with tracer.start_as_current_span("chat model-x") as chat:
                chat.set_attribute("gen_ai.operation.name", "chat")
                chat.set_attribute("gen_ai.request.model", "model-x")
                chat.set_attribute(
                    "gen_ai.output.messages",
                    json.dumps([{"role": "assistant", "parts": [
                        {"type": "text", "content": f"It is clear in city {t}."}]}]),
                )
                chat.add_event("gen_ai.evaluation.result", {
                    "gen_ai.evaluation.name": "helpfulness",
                    "gen_ai.evaluation.score.value": 0.5,
                })
                sent += 1
    provider.shutdown()
    if stamps:
        stamps.close()
    if exporter.failures:
        raise SystemExit(f"export failed {exporter.failures} time(s)")
    print(f"sent {sent} exported {exporter.exported}", flush=True)


class Stamping(SpanExporter):
    """Passes spans on; records when each root span is exported, and failures."""

    def __init__(self, inner, stamps):
        self.inner = inner
        self.stamps = stamps
        self.failures = 0
        self.exported = 0

    def export(self, spans):
        now = time.time_ns()
        if self.stamps:
            for s in spans:
                if s.parent is None:
                    self.stamps.write(f"{s.context.trace_id:032x} {now}\n")
        r = self.inner.export(spans)
        if r != SpanExportResult.SUCCESS:
            self.failures += 1
        else:
            self.exported += len(spans)
        return r

    def shutdown(self):
        self.inner.shutdown()

    def force_flush(self, timeout_millis=30000):
        return True


class JsonExporter(SpanExporter):
    """The SDK's OTLP encoding, as proto3 JSON over HTTP (gzip)."""

    def __init__(self, url):
        self.url = url

    def export(self, spans):
        from google.protobuf import json_format
        from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

        body = json_format.MessageToJson(encode_spans(spans)).encode()
        req = urllib.request.Request(
            self.url,
            data=gzip.compress(body),
            headers={"Content-Type": "application/json", "Content-Encoding": "gzip"},
        )
        for _ in range(20):
            try:
                with urllib.request.urlopen(req, timeout=30) as resp:
                    answer = json.loads(resp.read() or b"{}")
                    if answer.get("partialSuccess"):
                        return SpanExportResult.FAILURE
                    return SpanExportResult.SUCCESS
            except urllib.error.HTTPError as e:
                if e.code != 429:
                    return SpanExportResult.FAILURE
                time.sleep(0.2)
        return SpanExportResult.FAILURE

    def shutdown(self):
        pass


if __name__ == "__main__":
    main()
