"""An agent run scored by evaluators through the OpenTelemetry Python SDK, as the GenAI
conventions say evaluations go: a `gen_ai.evaluation.result` event on the span it evaluates
(the chat span: relevance 0.9, label `pass`), and one as a log record emitted inside the span
it evaluates (the tool span: tool_correctness 0, label `incorrect`, with an explanation).
Used by tests/otlp_python_scores.rs.

usage: otel_eval_agent.py live ENDPOINT
       otel_eval_agent.py file PATH

- live: the SDK's OTLP/HTTP exporters (protobuf) to ENDPOINT/v1/traces and ENDPOINT/v1/logs.
  Prints `exported` after shutdown.
- file: the same spans and records encoded by the SDK's OTLP encoders, written as proto3 JSON
  lines with ids in hex (the Collector's file exporter). Prints the tool span's id.
"""

import base64
import json
import sys

from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter


def run(tracer, logger):
    """The scored run; returns the tool span's id."""
    with tracer.start_as_current_span("invoke_agent weather") as root:
        root.set_attribute("gen_ai.operation.name", "invoke_agent")
        root.set_attribute("gen_ai.agent.name", "weather")
        with tracer.start_as_current_span("chat model-x") as chat:
            chat.set_attribute("gen_ai.operation.name", "chat")
            chat.set_attribute("gen_ai.request.model", "model-x")
            chat.set_attribute("gen_ai.response.id", "resp-1")
            chat.add_event("gen_ai.evaluation.result", {
                "gen_ai.evaluation.name": "relevance",
                "gen_ai.evaluation.score.value": 0.9,
                "gen_ai.evaluation.score.label": "pass",
                "gen_ai.response.id": "resp-1",
            })
        with tracer.start_as_current_span("execute_tool get_weather") as tool:
            tool.set_attribute("gen_ai.operation.name", "execute_tool")
            tool.set_attribute("gen_ai.tool.name", "get_weather")
            tool.set_attribute("gen_ai.tool.call.id", "call-1")
            logger.emit(event_name="gen_ai.evaluation.result", attributes={
                "gen_ai.evaluation.name": "tool_correctness",
                "gen_ai.evaluation.score.value": 0,
                "gen_ai.evaluation.score.label": "incorrect",
                "gen_ai.evaluation.explanation": "asked for Paris, looked up Lyon",
            })
        return tool.get_span_context().span_id


def hex_ids(v):
    """proto3 JSON writes bytes in base64; the Collector's file exporter writes ids in hex."""
    if isinstance(v, dict):
        return {k: (base64.b64decode(x).hex() if k in ("traceId", "spanId", "parentSpanId")
                    and isinstance(x, str) else hex_ids(x)) for k, x in v.items()}
    if isinstance(v, list):
        return [hex_ids(x) for x in v]
    return v


def main():
    mode, where = sys.argv[1], sys.argv[2]
    resource = Resource.create({"service.name": "otel-eval-agent"})
    tp = TracerProvider(resource=resource)
    lp = LoggerProvider(resource=resource)
    if mode == "live":
        from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        url = where.rstrip("/")
        tp.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=url + "/v1/traces")))
        lp.add_log_record_processor(
            SimpleLogRecordProcessor(OTLPLogExporter(endpoint=url + "/v1/logs")))
        run(tp.get_tracer("t"), lp.get_logger("t"))
        tp.shutdown()
        lp.shutdown()
        print("exported", flush=True)
    else:
        from google.protobuf import json_format
        from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
        from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

        spans = InMemorySpanExporter()
        tp.add_span_processor(SimpleSpanProcessor(spans))
        logs = InMemoryLogRecordExporter()
        lp.add_log_record_processor(SimpleLogRecordProcessor(logs))
        tool = run(tp.get_tracer("t"), lp.get_logger("t"))
        with open(where, "w") as f:
            for req in (encode_spans(spans.get_finished_spans()),
                        encode_logs(logs.get_finished_logs())):
                doc = json.loads(json_format.MessageToJson(req))
                f.write(json.dumps(hex_ids(doc), separators=(",", ":")) + "\n")
        print(f"{tool:016x}", flush=True)


if __name__ == "__main__":
    main()
