"""An agent run traced with OpenInference attributes (the OpenTelemetry SDK's OTLP/HTTP span
exporter), then annotated as a Phoenix user does it, with the real `arize-phoenix-client`
pointed at the same endpoint: `spans.add_span_annotation` (a failing LLM judgement on the
model call) and `spans.log_span_annotations` (a human's passing label and a code check's
score on the agent span). Used by tests/phoenix_annotations.rs.

usage: phoenix_agent.py ENDPOINT   (prints the model call's and the agent's span ids)
"""

import sys

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from phoenix.client import Client


def main():
    url = sys.argv[1].rstrip("/")
    tp = TracerProvider(resource=Resource.create({"service.name": "phoenix-agent"}))
    tp.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=url + "/v1/traces")))
    tracer = tp.get_tracer("openinference")
    with tracer.start_as_current_span("agent") as agent:
        agent.set_attribute("openinference.span.kind", "AGENT")
        agent.set_attribute("input.value", "What is the capital of France?")
        with tracer.start_as_current_span("llm") as llm:
            llm.set_attribute("openinference.span.kind", "LLM")
            llm.set_attribute("llm.model_name", "model-x")
            llm.set_attribute("llm.token_count.prompt", 12)
            llm.set_attribute("llm.token_count.completion", 2)
            llm.set_attribute("llm.input_messages.0.message.role", "user")
            llm.set_attribute("llm.input_messages.0.message.content",
                              "What is the capital of France?")
            llm.set_attribute("llm.output_messages.0.message.role", "assistant")
            llm.set_attribute("llm.output_messages.0.message.content", "Lyon.")
        agent.set_attribute("output.value", "Lyon.")
    tp.shutdown()
    llm_id = f"{llm.get_span_context().span_id:016x}"
    agent_id = f"{agent.get_span_context().span_id:016x}"

    client = Client(base_url=url)
    inserted = client.spans.add_span_annotation(
        span_id=llm_id, annotation_name="correctness", annotator_kind="LLM",
        label="incorrect", score=0.0, explanation="the capital of France is Paris",
        sync=True)
    assert inserted and inserted.get("id"), inserted
    client.spans.log_span_annotations(span_annotations=[
        {"name": "user_feedback", "span_id": agent_id, "annotator_kind": "HUMAN",
         "result": {"label": "pass"}, "identifier": "reviewer-1"},
        {"name": "latency_check", "span_id": agent_id, "annotator_kind": "CODE",
         "result": {"score": 0.8}, "metadata": {"budget_ms": 500}},
    ])
    print(llm_id, agent_id, flush=True)


if __name__ == "__main__":
    main()
