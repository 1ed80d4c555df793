"""Two model calls of one agent run, instrumented as openai-v2 does (spans without content,
a `gen_ai.client.inference.operation.details` log record with it), and two evaluations that
say what they score only by the model's `gen_ai.response.id`. Used by
tests/otlp_python_responses.rs.

- The first call's details record is emitted after its span ended (in the span's context):
  a live exporter sends the span first, the record after it.
- The second call's details record is emitted inside its span (the usual order).
- `relevance` (label `pass`) is emitted in the agent's span, after the first call, naming
  `resp-1`: its span is not the model call.
- `correctness` (label `incorrect`) is emitted in no span at all (no trace id), before the
  second call exists, naming `resp-2`.

usage: otel_response_agent.py live ENDPOINT   (OTLP/HTTP protobuf; prints `spans N logs M`)
       otel_response_agent.py file PATH       (proto3 JSON lines; prints the first call's span id)
"""

import base64
import json
import sys

from opentelemetry import trace
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

QUESTION = "What colour is the sky?"


def details(tokens_in, answer):
    return {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "model-x",
        "gen_ai.usage.input_tokens": tokens_in,
        "gen_ai.input.messages": json.dumps([
            {"role": "user", "parts": [{"type": "text", "content": QUESTION}]}]),
        "gen_ai.output.messages": json.dumps([
            {"role": "assistant", "parts": [{"type": "text", "content": answer}],
             "finish_reason": "stop"}]),
    }


def chat(tracer, response_id, tokens_in):
    span = tracer.start_span("chat model-x")
    span.set_attribute("gen_ai.operation.name", "chat")
    span.set_attribute("gen_ai.request.model", "model-x")
    span.set_attribute("gen_ai.response.id", response_id)
    span.set_attribute("gen_ai.usage.input_tokens", tokens_in)
    span.set_attribute("gen_ai.usage.output_tokens", 3)
    return span


def evaluation(logger, name, label, response_id, context=None):
    logger.emit(event_name="gen_ai.evaluation.result", context=context, attributes={
        "gen_ai.evaluation.name": name,
        "gen_ai.evaluation.score.label": label,
        "gen_ai.response.id": response_id,
    })


def run(tracer, logger):
    """The run; returns the first call's span id."""
    with tracer.start_as_current_span("invoke_agent coder") as root:
        root.set_attribute("gen_ai.operation.name", "invoke_agent")
        root.set_attribute("gen_ai.agent.name", "coder")
        first = chat(tracer, "resp-1", 21)
        first.end()
        # After the span was exported: the record describing the call comes second.
        logger.emit(event_name="gen_ai.client.inference.operation.details",
                    context=trace.set_span_in_context(first), attributes=details(21, "Blue."))
        evaluation(logger, "relevance", "pass", "resp-1")
        # An evaluator outside the agent's trace, before the call it scores is exported.
        evaluation(logger, "correctness", "incorrect", "resp-2",
                   context=trace.set_span_in_context(trace.INVALID_SPAN))
        second = chat(tracer, "resp-2", 30)
        logger.emit(event_name="gen_ai.client.inference.operation.details",
                    context=trace.set_span_in_context(second), attributes=details(30, "Green."))
        second.end()
    return first.get_span_context().span_id


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
    resource = Resource.create({"service.name": "otel-response-agent"})
    tp = TracerProvider(resource=resource)
    lp = LoggerProvider(resource=resource)
    if mode == "live":
        from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        url = where.rstrip("/")
        # Simple processors export each span and record as it ends or is emitted: the order
        # the receiver gets them is the order above.
        tp.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=url + "/v1/traces")))
        lp.add_log_record_processor(SimpleLogRecordProcessor(
            OTLPLogExporter(endpoint=url + "/v1/logs")))
        run(tp.get_tracer("t"), lp.get_logger("t"))
        tp.shutdown()
        lp.shutdown()
        print("done", flush=True)
    else:
        from google.protobuf import json_format
        from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
        from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

        spans = InMemorySpanExporter()
        tp.add_span_processor(SimpleSpanProcessor(spans))
        logs = InMemoryLogRecordExporter()
        lp.add_log_record_processor(SimpleLogRecordProcessor(logs))
        first = run(tp.get_tracer("t"), lp.get_logger("t"))
        with open(where, "w") as f:
            for req in (encode_spans(spans.get_finished_spans()),
                        encode_logs(logs.get_finished_logs())):
                doc = json.loads(json_format.MessageToJson(req))
                f.write(json.dumps(hex_ids(doc), separators=(",", ":")) + "\n")
        print(f"{first:016x}", flush=True)


if __name__ == "__main__":
    main()
