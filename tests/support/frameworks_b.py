"""Real agent frameworks, run offline by their own test models, traced by their real
OpenTelemetry instrumentation and exported by the SDK's real OTLP exporter. Used by
tests/frameworks_b.rs (venv: scripts/setup-frameworks-b.sh).

usage: frameworks_b.py FRAMEWORK {live URL | file PATH} [--semconv latest]

FRAMEWORK: langgraph | smolagents | strands | llamaindex. Each runs the same two-turn
conversation on one agent that keeps its history:

  turn 1 "What is the weather in Paris?": the model says "Let me check the weather.",
         calls get_weather(city="Paris") (-> "Rainy, 12C"), then answers
         "It is rainy in Paris.";
  turn 2 "And in Rome?": the model calls get_weather(city="Rome"), which raises
         ("weather service down for Rome"), then answers "I could not get Rome's weather.".

- live URL: the SDK's OTLP/HTTP protobuf exporter (BatchSpanProcessor) to URL/v1/traces;
- file PATH: the same spans, encoded by the SDK's OTLP encoder, as proto3 JSON in PATH.

--semconv latest sets OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental (Strands then
writes `gen_ai.client.inference.operation.details` events instead of per-message events).
Prints `spans N` at the end.
"""

import asyncio
import json
import os
import sys

Q1 = "What is the weather in Paris?"
Q2 = "And in Rome?"
THOUGHT = "Let me check the weather."
A1 = "It is rainy in Paris."
A2 = "I could not get Rome's weather."


def get_weather(city: str) -> str:
    """Get the current weather of a city.

    Args:
        city: the city's name
    """
    if city == "Rome":
        raise RuntimeError("weather service down for Rome")
    return "Rainy, 12C"


def setup(mode, target, service):
    from opentelemetry import trace
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    tp = TracerProvider(resource=Resource.create({"service.name": service}))
    mem = None
    if mode == "live":
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        tp.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=target + "/v1/traces")))
    else:
        mem = InMemorySpanExporter()
        tp.add_span_processor(SimpleSpanProcessor(mem))
    # Frameworks with a tracer of their own (Strands) take the global provider.
    trace.set_tracer_provider(tp)
    return tp, mem


def finish(tp, mem, mode, target):
    tp.force_flush()
    if mode == "file":
        from google.protobuf import json_format
        from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

        spans = mem.get_finished_spans()
        with open(target, "w") as f:
            f.write(json_format.MessageToJson(encode_spans(spans)))
        print(f"spans {len(spans)}")
    tp.shutdown()


def run_langgraph(tp):
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.tools import tool
    from langgraph.prebuilt import ToolNode, create_react_agent
    from openinference.instrumentation.langchain import LangChainInstrumentor

    LangChainInstrumentor().instrument(tracer_provider=tp)

    class Fake(GenericFakeChatModel):
        def bind_tools(self, tools, **kwargs):
            return self

    replies = iter(
        [
            AIMessage(
                content=THOUGHT,
                tool_calls=[{"name": "get_weather", "args": {"city": "Paris"}, "id": "call_1"}],
            ),
            AIMessage(content=A1),
            AIMessage(
                content="",
                tool_calls=[{"name": "get_weather", "args": {"city": "Rome"}, "id": "call_2"}],
            ),
            AIMessage(content=A2),
        ]
    )
    agent = create_react_agent(
        Fake(messages=replies), ToolNode([tool(get_weather)], handle_tool_errors=True)
    )
    state = agent.invoke({"messages": [("user", Q1)]})
    agent.invoke({"messages": state["messages"] + [("user", Q2)]})


def run_smolagents(tp):
    from openinference.instrumentation.smolagents import SmolagentsInstrumentor
    from smolagents import ToolCallingAgent, tool
    from smolagents.models import (
        ChatMessage,
        ChatMessageToolCall,
        ChatMessageToolCallFunction,
        MessageRole,
        Model,
    )

    def call(i, name, args, text=""):
        return ChatMessage(
            role=MessageRole.ASSISTANT,
            content=text,
            tool_calls=[
                ChatMessageToolCall(
                    id=f"call_{i}",
                    type="function",
                    function=ChatMessageToolCallFunction(name=name, arguments=args),
                )
            ],
        )

    replies = iter(
        [
            call(1, "get_weather", {"city": "Paris"}, THOUGHT),
            call(2, "final_answer", {"answer": A1}),
            call(3, "get_weather", {"city": "Rome"}),
            call(4, "final_answer", {"answer": A2}),
        ]
    )

    class CannedModel(Model):
        def generate(self, messages, stop_sequences=None, response_format=None, tools_to_call_from=None, **kw):
            # What a provider's model records of each call (the instrumentation reads it).
            self.last_input_token_count, self.last_output_token_count = 10, 5
            return next(replies)

    # The instrumentor wraps the Model classes smolagents exports (its providers' models):
    # the canned one is put among them, so its calls are traced as a provider's are.
    import smolagents

    smolagents.CannedModel = CannedModel
    SmolagentsInstrumentor().instrument(tracer_provider=tp)
    agent = ToolCallingAgent(
        tools=[tool(get_weather)], model=CannedModel(model_id="canned"), max_steps=4, verbosity_level=-1
    )
    agent.run(Q1)
    agent.run(Q2, reset=False)


def run_strands(tp):
    from strands import Agent, tool
    from strands.models import Model

    def text_turn(text, stop):
        return [
            {"messageStart": {"role": "assistant"}},
            {"contentBlockStart": {"start": {}}},
            {"contentBlockDelta": {"delta": {"text": text}}},
            {"contentBlockStop": {}},
            {"messageStop": {"stopReason": stop}},
            {"metadata": {"usage": {"inputTokens": 10, "outputTokens": 5, "totalTokens": 15}, "metrics": {"latencyMs": 1}}},
        ]

    def tool_turn(i, city, text):
        out = [{"messageStart": {"role": "assistant"}}]
        if text:
            out += [
                {"contentBlockStart": {"start": {}}},
                {"contentBlockDelta": {"delta": {"text": text}}},
                {"contentBlockStop": {}},
            ]
        out += [
            {"contentBlockStart": {"start": {"toolUse": {"name": "get_weather", "toolUseId": f"call_{i}"}}}},
            {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps({"city": city})}}}},
            {"contentBlockStop": {}},
            {"messageStop": {"stopReason": "tool_use"}},
            {"metadata": {"usage": {"inputTokens": 10, "outputTokens": 5, "totalTokens": 15}, "metrics": {"latencyMs": 1}}},
        ]
        return out

    turns = iter(
        [tool_turn(1, "Paris", THOUGHT), text_turn(A1, "end_turn"), tool_turn(2, "Rome", ""), text_turn(A2, "end_turn")]
    )

    class Canned(Model):
        def __init__(self):
            self.config = {"model_id": "canned"}

        def update_config(self, **kw):
            self.config.update(kw)

        def get_config(self):
            return self.config

        async def stream(self, messages, tool_specs=None, system_prompt=None, **kw):
            for e in next(turns):
                yield e

        async def structured_output(self, output_model, prompt, system_prompt=None, **kw):
            raise NotImplementedError
            yield

    agent = Agent(model=Canned(), tools=[tool(get_weather)], callback_handler=None, name="weather")
    agent(Q1)
    agent(Q2)


def run_llamaindex(tp):
    from llama_index.core.agent.workflow import FunctionAgent
    from llama_index.core.base.llms.types import ChatMessage, ChatResponse, LLMMetadata, MessageRole
    from llama_index.core.llms.callbacks import llm_chat_callback
    from llama_index.core.llms.function_calling import FunctionCallingLLM
    from llama_index.core.llms.llm import ToolSelection
    from llama_index.core.memory import ChatMemoryBuffer
    from llama_index.core.tools import FunctionTool
    from openinference.instrumentation.llama_index import LlamaIndexInstrumentor

    LlamaIndexInstrumentor().instrument(tracer_provider=tp)

    def msg(text, call=None):
        kw = {}
        if call:
            kw["tool_calls"] = [call]
        return ChatMessage(role=MessageRole.ASSISTANT, content=text, additional_kwargs=kw)

    replies = iter(
        [
            msg(THOUGHT, {"id": "call_1", "name": "get_weather", "args": {"city": "Paris"}}),
            msg(A1),
            msg("", {"id": "call_2", "name": "get_weather", "args": {"city": "Rome"}}),
            msg(A2),
        ]
    )

    class Canned(FunctionCallingLLM):
        @property
        def metadata(self):
            return LLMMetadata(is_function_calling_model=True, model_name="canned")

        def _prepare_chat_with_tools(self, tools, user_msg=None, chat_history=None, **kw):
            msgs = list(chat_history or [])
            if user_msg:
                msgs.append(ChatMessage(role=MessageRole.USER, content=user_msg) if isinstance(user_msg, str) else user_msg)
            return {"messages": msgs, "tools": tools}

        def get_tool_calls_from_response(self, response, error_on_no_tool_call=True, **kw):
            return [
                ToolSelection(tool_id=c["id"], tool_name=c["name"], tool_kwargs=c["args"])
                for c in response.message.additional_kwargs.get("tool_calls", [])
            ]

        # Decorated as every LlamaIndex LLM is: the dispatcher's chat events carry the messages.
        @llm_chat_callback()
        def chat(self, messages, **kw):
            return ChatResponse(message=next(replies))

        # Decorated as every LlamaIndex LLM is: the dispatcher's chat events carry the messages.
        @llm_chat_callback()
        async def achat(self, messages, **kw):
            return ChatResponse(message=next(replies))

        # Decorated as every LlamaIndex LLM is: the dispatcher's chat events carry the messages.
        @llm_chat_callback()
        def stream_chat(self, messages, **kw):
            r = ChatResponse(message=next(replies))

            def gen():
                yield ChatResponse(message=r.message, delta=r.message.content)

            return gen()

        # Decorated as every LlamaIndex LLM is: the dispatcher's chat events carry the messages.
        @llm_chat_callback()
        async def astream_chat(self, messages, **kw):
            r = ChatResponse(message=next(replies))

            async def gen():
                yield ChatResponse(message=r.message, delta=r.message.content)

            return gen()

        def complete(self, prompt, formatted=False, **kw):
            raise NotImplementedError

        async def acomplete(self, prompt, formatted=False, **kw):
            raise NotImplementedError

        def stream_complete(self, prompt, formatted=False, **kw):
            raise NotImplementedError

        async def astream_complete(self, prompt, formatted=False, **kw):
            raise NotImplementedError

    agent = FunctionAgent(tools=[FunctionTool.from_defaults(get_weather)], llm=Canned(), name="weather")
    memory = ChatMemoryBuffer.from_defaults()

    async def go():
        await agent.run(Q1, memory=memory)
        await agent.run(Q2, memory=memory)

    asyncio.run(go())


def main():
    fw, mode, target = sys.argv[1], sys.argv[2], sys.argv[3]
    if "--semconv" in sys.argv:
        os.environ["OTEL_SEMCONV_STABILITY_OPT_IN"] = "gen_ai_latest_experimental"
    tp, mem = setup(mode, target, f"{fw}-weather")
    {
        "langgraph": run_langgraph,
        "smolagents": run_smolagents,
        "strands": run_strands,
        "llamaindex": run_llamaindex,
    }[fw](tp)
    finish(tp, mem, mode, target)


if __name__ == "__main__":
    main()
