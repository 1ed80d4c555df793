"""A LangGraph graph run with LangGraph's own SQLite checkpointer (SqliteSaver from
langgraph-checkpoint-sqlite) and a fake chat model (langchain-core's GenericFakeChatModel),
for tests/import_sources.rs.

usage: checkpoint_graph.py DB_FILE [RUNS_FILE]

With RUNS_FILE, the run is also traced by a LangChain tracer (langchain-core's BaseTracer, the
base of the LangSmith tracer: the same Run records it sends), and the runs are written there
as a JSON list, each with its `parent_run_id`, `dotted_order` and `extra.metadata`.

State: `messages` (add_messages), `plan` (a plain value), `count`. Nodes:
- think: asks the model (it answers with a tool call to `lookup`), sets plan = "search";
- tools: answers the tool call with a ToolMessage ("Lisbon: sunny");
- decide: asks the model again (it answers in text), sets plan = "answer".
Each node adds 1 to count. One thread, `trip-1`.
"""

import json
import sqlite3
import sys

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tracers.base import BaseTracer
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, MessagesState, StateGraph


class State(MessagesState):
    plan: str
    count: int


model = GenericFakeChatModel(
    messages=iter(
        [
            AIMessage(
                content="",
                tool_calls=[{"id": "call_1", "name": "lookup", "args": {"city": "Lisbon"}}],
            ),
            AIMessage(content="It is sunny in Lisbon."),
        ]
    )
)


def think(s):
    return {"messages": [model.invoke(s["messages"])], "plan": "search", "count": s.get("count", 0) + 1}


def tools(s):
    call = s["messages"][-1].tool_calls[0]
    msg = ToolMessage(content="Lisbon: sunny", tool_call_id=call["id"], name=call["name"])
    return {"messages": [msg], "count": s["count"] + 1}


def decide(s):
    return {"messages": [model.invoke(s["messages"])], "plan": "answer", "count": s["count"] + 1}


class Collect(BaseTracer):
    """Keeps every run as it ends (without its children: they are runs of their own)."""

    def __init__(self):
        super().__init__()
        self.runs = []

    def _persist_run(self, run):
        pass

    def _end_trace(self, run):
        self.runs.append(json.loads(run.model_dump_json(exclude={"child_runs"})))
        super()._end_trace(run)


def main():
    g = StateGraph(State)
    g.add_node("think", think)
    g.add_node("tools", tools)
    g.add_node("decide", decide)
    g.add_edge(START, "think")
    g.add_edge("think", "tools")
    g.add_edge("tools", "decide")
    g.add_edge("decide", END)
    conn = sqlite3.connect(sys.argv[1], check_same_thread=False)
    app = g.compile(checkpointer=SqliteSaver(conn))
    tracer = Collect()
    app.invoke(
        {"messages": [("user", "What is the weather in Lisbon?")]},
        {"configurable": {"thread_id": "trip-1"}, "callbacks": [tracer]},
    )
    conn.close()
    if len(sys.argv) > 2:
        with open(sys.argv[2], "w") as f:
            json.dump(tracer.runs, f)


if __name__ == "__main__":
    main()
