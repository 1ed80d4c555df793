"""A scripted model call instrumented as GenAI instrumentations that send content as log
records do (openai-v2 and the like): the spans carry no message content; the messages go as
log records emitted inside the `chat` span (`gen_ai.system.message`, `gen_ai.user.message`,
`gen_ai.choice`, the `gen_ai.client.inference.operation.details` event), and a coding-agent
style event goes as a log record outside any span, naming the conversation. Used by
tests/otlp_python_logs.rs.

usage: otel_logs_agent.py live ENDPOINT
       otel_logs_agent.py file PATH

- live: the SDK's OTLP/HTTP exporters (protobuf): OTLPSpanExporter to ENDPOINT/v1/traces and
  OTLPLogExporter to ENDPOINT/v1/logs. Prints `logs LOGS exported LOGS` after shutdown.
- file: the same spans and records, encoded by the SDK's OTLP encoders and written as proto3
  JSON lines (one ExportTraceServiceRequest line, one ExportLogsServiceRequest line), ids in
  hex, as the Collector's file exporter writes them. Prints the trace id.
"""

import base64
import json
import sys

from opentelemetry import trace
from opentelemetry._logs import SeverityNumber
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import (
    InMemoryLogRecordExporter,
    LogRecordExporter,
    LogRecordExportResult,
    SimpleLogRecordProcessor,
)
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter


class Counting(LogRecordExporter):
    """Passes log records on; counts those exported and the failures."""

    def __init__(self, inner):
        self.inner = inner
        self.exported = 0
        self.failures = 0

    def export(self, batch):
        r = self.inner.export(batch)
        if r == LogRecordExportResult.SUCCESS:
            self.exported += len(batch)
        else:
            self.failures += 1
        return r

    def shutdown(self):
        self.inner.shutdown()

    def force_flush(self, timeout_millis=30000):
        return True


def run(tracer, logger):
    """The model call; returns the number of log records emitted."""
    with tracer.start_as_current_span("invoke_agent coder") as root:
        root.set_attribute("gen_ai.operation.name", "invoke_agent")
        root.set_attribute("gen_ai.agent.name", "coder")
        root.set_attribute("gen_ai.conversation.id", "conv-42")
        with tracer.start_as_current_span("chat model-x") as chat:
            chat.set_attribute("gen_ai.operation.name", "chat")
            chat.set_attribute("gen_ai.request.model", "model-x")
            logger.emit(event_name="gen_ai.system.message",
                        attributes={"gen_ai.system": "openai"},
                        body={"content": "You answer in one word."})
            logger.emit(event_name="gen_ai.user.message",
                        attributes={"gen_ai.system": "openai"},
                        body={"content": "What colour is the sky?"})
            logger.emit(event_name="gen_ai.choice",
                        attributes={"gen_ai.system": "openai"},
                        body={"index": 0, "finish_reason": "tool_calls",
                              "message": {"role": "assistant", "content": "Blue.",
                                          "tool_calls": [{"id": "c1", "type": "function",
                                                          "function": {"name": "look_up",
                                                                       "arguments": "{}"}}]}})
            logger.emit(event_name="gen_ai.client.inference.operation.details",
                        attributes={
                            "gen_ai.operation.name": "chat",
                            "gen_ai.request.model": "model-x",
                            "gen_ai.usage.input_tokens": 21,
                            "gen_ai.input.messages": json.dumps([
                                {"role": "user", "parts": [
                                    {"type": "text", "content": "What colour is the sky?"}]}]),
                            "gen_ai.output.messages": json.dumps([
                                {"role": "assistant", "parts": [
                                    {"type": "text", "content": "Blue."}]}]),
                        })
    # A coding agent's event: a log record of its own, in no span, naming the conversation.
    logger.emit(event_name="coder.tool_result", severity_number=SeverityNumber.ERROR,
                severity_text="ERROR", body="coder.tool_result",
                context=trace.set_span_in_context(trace.INVALID_SPAN),
                attributes={"gen_ai.conversation.id": "conv-42", "tool_name": "Bash",
                            "success": False, "error": "exit status 2"})
    return 5, root.get_span_context().trace_id


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
    resource = Resource.create({"service.name": "otel-logs-agent"})
    tp = TracerProvider(resource=resource)
    lp = LoggerProvider(resource=resource)
    if mode == "live":
        from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        url = where.rstrip("/")
        tp.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=url + "/v1/traces")))
        logs = Counting(OTLPLogExporter(endpoint=url + "/v1/logs"))
        lp.add_log_record_processor(SimpleLogRecordProcessor(logs))
        n, _ = run(tp.get_tracer("t"), lp.get_logger("t"))
        tp.shutdown()
        lp.shutdown()
        if logs.failures:
            raise SystemExit(f"log export failed {logs.failures} time(s)")
        print(f"logs {n} exported {logs.exported}", flush=True)
    else:
        from google.protobuf import json_format
        from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
        from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

        spans = InMemorySpanExporter()
        tp.add_span_processor(SimpleSpanProcessor(spans))
        logs = InMemoryLogRecordExporter()
        lp.add_log_record_processor(SimpleLogRecordProcessor(logs))
        _, trace_id = run(tp.get_tracer("t"), lp.get_logger("t"))
        with open(where, "w") as f:
            for req in (encode_spans(spans.get_finished_spans()),
                        encode_logs(logs.get_finished_logs())):
                doc = json.loads(json_format.MessageToJson(req))
                f.write(json.dumps(hex_ids(doc), separators=(",", ":")) + "\n")
        print(f"{trace_id:032x}", flush=True)


if __name__ == "__main__":
    main()
