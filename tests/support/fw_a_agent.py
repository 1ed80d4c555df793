"""Real agent frameworks, run offline by their own test models, with their real OpenTelemetry
instrumentation, for tests/frameworks_a.rs.

usage: fw_a_agent.py FRAMEWORK ENDPOINT FILE

FRAMEWORK is one of
- pydantic-ai: pydantic-ai's own instrumentation (InstrumentationSettings, its default data
  format) around a FunctionModel;
- pydantic-ai-v2: the same with InstrumentationSettings(version=2) (`tool_arguments`,
  `tool_response`);
- openai-agents: the OpenAI Agents SDK with a custom Model returning canned responses, its
  traces turned into OpenTelemetry spans by openinference-instrumentation-openai-agents;
- openai-v2: the OpenAI Python client instrumented by opentelemetry-instrumentation-openai-v2,
  message content captured as log records, against a fake OpenAI-compatible HTTP server here;
  the application records the agent's creation (`create_agent`, a trace of its own, as the
  GenAI conventions describe it for remote agents) and wraps its turn in `invoke_agent`.

Every framework runs the same two turns: "What is the weather in Oslo?" (the tool get_weather
answers "sunny in Oslo"), then, with the first turn's messages as history, "And what about
Bergen?" (the tool `broken` raises "weather service down"; pydantic-ai fails that run, the
Agents SDK hands the error to the model, which answers).

Spans (and log records) go both to ENDPOINT with the SDK's OTLP/HTTP exporters (protobuf) and
to FILE as OTLP JSON lines (one ExportTraceServiceRequest line, one ExportLogsServiceRequest
line when there are records), ids in hex as the Collector's file exporter writes them.
Prints `spans N exported N logs M exported M`.
"""

import base64
import json
import os
import sys
import threading

from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import (
    InMemoryLogRecordExporter,
    LogRecordExportResult,
    SimpleLogRecordProcessor,
)
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

Q1 = "What is the weather in Oslo?"
Q2 = "And what about Bergen?"


class Counting:
    """Passes a batch on to an exporter; counts what was exported and the failures."""

    def __init__(self, inner, ok):
        self.inner, self.ok = inner, ok
        self.exported = self.failures = 0

    def export(self, batch):
        r = self.inner.export(batch)
        if r == self.ok:
            self.exported += len(batch)
        else:
            self.failures += 1
        return r

    def shutdown(self):
        self.inner.shutdown()

    def force_flush(self, timeout_millis=30000):
        return True


def pydantic_ai(tp, lp, version):
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import FunctionModel
    from pydantic_ai.models.instrumented import InstrumentationSettings

    def model(messages, info):
        asked = [p.content for m in messages for p in m.parts if p.part_kind == "user-prompt"]
        if any(p.part_kind == "tool-return" for p in messages[-1].parts):
            return ModelResponse(parts=[TextPart("It is sunny in Oslo.")])
        if asked[-1] == Q1:
            return ModelResponse(parts=[ToolCallPart("get_weather", {"city": "Oslo"},
                                                     tool_call_id="call-1")])
        return ModelResponse(parts=[ToolCallPart("broken", {"city": "Bergen"},
                                                 tool_call_id="call-2")])

    agent = Agent(FunctionModel(model, model_name="function-model"), name="weather")
    kw = {} if version is None else {"version": version}
    agent.instrument = InstrumentationSettings(tracer_provider=tp, **kw)

    @agent.tool_plain
    def get_weather(city: str) -> str:
        return f"sunny in {city}"

    @agent.tool_plain
    def broken(city: str) -> str:
        raise RuntimeError("weather service down")

    first = agent.run_sync(Q1)
    try:
        agent.run_sync(Q2, message_history=first.all_messages())
        raise SystemExit("the second run should have failed")
    except RuntimeError:
        pass


def openai_agents(tp, lp):
    from agents import Agent, ModelResponse, Runner, Usage, function_tool, generation_span
    from agents.models.interface import Model
    from openai.types.responses import (
        ResponseFunctionToolCall,
        ResponseOutputMessage,
        ResponseOutputText,
    )
    from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

    OpenAIAgentsInstrumentor().instrument(tracer_provider=tp)

    def text(i, t):
        return ResponseOutputMessage(id=f"msg-{i}", type="message", role="assistant",
                                     status="completed",
                                     content=[ResponseOutputText(type="output_text", text=t,
                                                                 annotations=[])])

    def call(i, name, args):
        return ResponseFunctionToolCall(id=f"fc-{i}", call_id=f"call-{i}", type="function_call",
                                        name=name, arguments=json.dumps(args),
                                        status="completed")

    class Canned(Model):
        """Answers from the conversation so far; records its call as the SDK's models do."""

        calls = 0

        async def get_response(self, system_instructions, input, model_settings, tools,
                               output_schema, handoffs, tracing, **kw):
            items = [{"role": "user", "content": input}] if isinstance(input, str) else input
            asked = [i["content"] for i in items if i.get("role") == "user"]
            Canned.calls += 1
            n = Canned.calls
            last = items[-1]
            if last.get("type") == "function_call_output":
                out = [text(n, "It is sunny in Oslo." if asked[-1] == Q1
                            else "The weather service is down.")]
            elif asked[-1] == Q1:
                out = [call(n, "get_weather", {"city": "Oslo"})]
            else:
                out = [call(n, "broken", {"city": "Bergen"})]
            usage = Usage(requests=1, input_tokens=10 * n, output_tokens=n,
                          total_tokens=11 * n)
            with generation_span(input=list(items), output=[o.model_dump() for o in out],
                                 model="canned-model",
                                 usage={"input_tokens": usage.input_tokens,
                                        "output_tokens": usage.output_tokens}):
                pass
            return ModelResponse(output=out, usage=usage, response_id=f"resp-{n}")

        def stream_response(self, *a, **kw):
            raise NotImplementedError

    @function_tool
    def get_weather(city: str) -> str:
        """The weather in a city."""
        return f"sunny in {city}"

    @function_tool
    def broken(city: str) -> str:
        """A weather service that is down."""
        raise RuntimeError("weather service down")

    agent = Agent(name="weather", instructions="Answer about the weather.", model=Canned(),
                  tools=[get_weather, broken])
    first = Runner.run_sync(agent, Q1)
    Runner.run_sync(agent, first.to_input_list() + [{"role": "user", "content": Q2}])


def fake_openai():
    """A local OpenAI-compatible chat completions endpoint: asks for get_weather, then answers."""
    from http.server import BaseHTTPRequestHandler, HTTPServer

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            req = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            if req["messages"][-1]["role"] == "tool":
                msg, why = {"role": "assistant", "content": "It is sunny in Oslo."}, "stop"
            else:
                msg = {"role": "assistant", "content": None, "tool_calls": [
                    {"id": "call-1", "type": "function",
                     "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'}}]}
                why = "tool_calls"
            body = json.dumps({
                "id": "chatcmpl-1", "object": "chat.completion", "created": 1,
                "model": "fake-model-1",
                "choices": [{"index": 0, "message": msg, "finish_reason": why}],
                "usage": {"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17},
            }).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a):
            pass

    srv = HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


def openai_v2(tp, lp):
    os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "EVENT_ONLY"
    import openai
    from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor

    OpenAIInstrumentor().instrument(tracer_provider=tp, logger_provider=lp)
    srv = fake_openai()
    tracer = tp.get_tracer("weather-app")
    agent = {"gen_ai.agent.name": "weather", "gen_ai.agent.id": "asst-weather",
             "gen_ai.provider.name": "openai"}
    with tracer.start_as_current_span("create_agent weather", context=None) as s:
        s.set_attributes({**agent, "gen_ai.operation.name": "create_agent",
                          "gen_ai.request.model": "fake-model"})
    client = openai.OpenAI(base_url=f"http://127.0.0.1:{srv.server_port}/v1", api_key="test")
    tools = [{"type": "function", "function": {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]
    msgs = [{"role": "system", "content": "Answer about the weather."},
            {"role": "user", "content": Q1}]
    with tracer.start_as_current_span("invoke_agent weather") as s:
        s.set_attributes({**agent, "gen_ai.operation.name": "invoke_agent"})
        r = client.chat.completions.create(model="fake-model", messages=msgs, tools=tools)
        msgs.append(r.choices[0].message.model_dump(exclude_none=True))
        msgs.append({"role": "tool", "tool_call_id": "call-1", "content": "sunny in Oslo"})
        client.chat.completions.create(model="fake-model", messages=msgs, tools=tools)
    srv.shutdown()


def hex_ids(v):
    """proto3 JSON writes bytes in base64; the Collector's file exporter writes ids in hex."""
    if isinstance(v, dict):
        return {k: (base64.b64decode(x).hex() if k in ("traceId", "spanId", "parentSpanId")
                    and isinstance(x, str) else hex_ids(x)) for k, x in v.items()}
    if isinstance(v, list):
        return [hex_ids(x) for x in v]
    return v


def main():
    framework, endpoint, path = sys.argv[1:4]
    from google.protobuf import json_format
    from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    resource = Resource.create({"service.name": f"fw-{framework}"})
    tp = TracerProvider(resource=resource)
    lp = LoggerProvider(resource=resource)
    url = endpoint.rstrip("/")
    spans = Counting(OTLPSpanExporter(endpoint=url + "/v1/traces"), SpanExportResult.SUCCESS)
    logs = Counting(OTLPLogExporter(endpoint=url + "/v1/logs"), LogRecordExportResult.SUCCESS)
    tp.add_span_processor(SimpleSpanProcessor(spans))
    lp.add_log_record_processor(SimpleLogRecordProcessor(logs))
    kept_spans, kept_logs = InMemorySpanExporter(), InMemoryLogRecordExporter()
    tp.add_span_processor(SimpleSpanProcessor(kept_spans))
    lp.add_log_record_processor(SimpleLogRecordProcessor(kept_logs))
    if framework == "pydantic-ai":
        pydantic_ai(tp, lp, None)
    elif framework == "pydantic-ai-v2":
        pydantic_ai(tp, lp, 2)
    elif framework == "openai-agents":
        openai_agents(tp, lp)
    elif framework == "openai-v2":
        openai_v2(tp, lp)
    else:
        raise SystemExit(f"unknown framework {framework}")
    tp.shutdown()
    lp.shutdown()
    if spans.failures or logs.failures:
        raise SystemExit(f"export failed: spans {spans.failures}, logs {logs.failures} time(s)")
    finished, records = kept_spans.get_finished_spans(), kept_logs.get_finished_logs()
    with open(path, "w") as f:
        for req in [encode_spans(finished)] + ([encode_logs(records)] if records else []):
            doc = json.loads(json_format.MessageToJson(req))
            f.write(json.dumps(hex_ids(doc), separators=(",", ":")) + "\n")
    print(f"spans {len(finished)} exported {spans.exported} "
          f"logs {len(records)} exported {logs.exported}", flush=True)


if __name__ == "__main__":
    main()
