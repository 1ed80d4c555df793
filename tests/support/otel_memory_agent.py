"""An agent's memory operations traced with the OpenTelemetry Python SDK (GenAI semantic
conventions: `gen_ai.operation.name` create_memory / update_memory / upsert_memory /
delete_memory / search_memory, `gen_ai.memory.store.id`, `gen_ai.memory.record.id`,
`gen_ai.memory.records`, `gen_ai.memory.query.text`, `gen_ai.memory.record.count`), written
to a file by the SDK's ConsoleSpanExporter (one `ReadableSpan.to_json()` per span). Used by
tests/import_sources.rs.

usage: otel_memory_agent.py OUT_FILE

The run, under one `invoke_agent` span:
1. create_memory in store `prefs`: records seat = "aisle", diet = "vegetarian";
2. update_memory: seat = "window" (an overwrite);
3. upsert_memory: meal_time = "19:00" (a new record);
4. delete_memory of record diet;
5. create_memory in store `scratch`: notes n1, n2; then delete_memory in `scratch` without a
   record id (the conventions' "delete all": the store is emptied);
6. search_memory in `prefs` for "seat": returns the seat record (hit count 1);
7. execute_tool get_weather with its result.
"""

import json
import sys

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor


def main():
    out = open(sys.argv[1], "w")
    provider = TracerProvider(resource=Resource.create({"service.name": "travel-agent"}))
    provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter(out=out)))
    tracer = provider.get_tracer("memory-agent")

    def memory(op, store, records=None, record_id=None, **extra):
        with tracer.start_as_current_span(op) as sp:
            sp.set_attribute("gen_ai.operation.name", op)
            sp.set_attribute("gen_ai.memory.store.id", store)
            if record_id is not None:
                sp.set_attribute("gen_ai.memory.record.id", record_id)
            if records is not None:
                sp.set_attribute("gen_ai.memory.records", json.dumps(records))
                sp.set_attribute("gen_ai.memory.record.count", len(records))
            for k, v in extra.items():
                sp.set_attribute(k, v)

    with tracer.start_as_current_span("invoke_agent travel-agent") as root:
        root.set_attribute("gen_ai.operation.name", "invoke_agent")
        root.set_attribute("gen_ai.agent.name", "travel-agent")
        memory(
            "create_memory",
            "prefs",
            [{"id": "seat", "content": "aisle"}, {"id": "diet", "content": "vegetarian"}],
        )
        memory("update_memory", "prefs", [{"id": "seat", "content": "window"}])
        memory("upsert_memory", "prefs", [{"id": "meal_time", "content": "19:00"}])
        memory("delete_memory", "prefs", record_id="diet")
        memory(
            "create_memory",
            "scratch",
            [{"id": "n1", "content": "check visa"}, {"id": "n2", "content": "book taxi"}],
        )
        memory("delete_memory", "scratch")
        memory(
            "search_memory",
            "prefs",
            [{"id": "seat", "content": "window", "score": 0.92}],
            **{"gen_ai.memory.query.text": "seat preference"},
        )
        with tracer.start_as_current_span("execute_tool get_weather") as sp:
            sp.set_attribute("gen_ai.operation.name", "execute_tool")
            sp.set_attribute("gen_ai.tool.name", "get_weather")
            sp.set_attribute("gen_ai.tool.call.id", "call_w1")
            sp.set_attribute("gen_ai.tool.call.arguments", json.dumps({"city": "Lisbon"}))
            sp.set_attribute("gen_ai.tool.call.result", json.dumps({"sky": "sunny"}))
    provider.shutdown()
    out.close()


if __name__ == "__main__":
    main()
