"""The official MCP Python SDK's stdio client against `doxascope mcp`.

Usage: mcp_client.py DOXASCOPE TRACE. Starts the server as a subprocess, lists its tools and
calls each on TRACE (the treasure hunt); prints one JSON object: the tool names and, per
call, whether it was an error, its text and its structured content. tests/mcp_python.rs
asserts the answers.
"""

import asyncio
import json
import sys

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

CALLS = [
    ("sigma", {}),
    ("sigma_at_11", {"step": 11}),
    ("why", {"formula": "¬treasure_in_a", "step": 11}),
    ("whynot", {"formula": "treasure_in_b"}),
    ("entails", {"formula": "treasure_in_b"}),
    ("history", {"formula": "treasure_in_b"}),
    ("audit", {}),
    ("findings", {}),
    ("diff", {"from": 11}),
    ("whatif", {"policy": "reject"}),
    ("export", {"format": "json", "step": 11}),
    ("bad_formula", {"formula": "((treasure"}),
    ("missing_file", {"formula": "p"}),
]


async def main(binary: str, trace: str) -> None:
    params = StdioServerParameters(command=binary, args=["mcp"])
    out = {"tools": [], "calls": {}}
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            listed = await session.list_tools()
            out["tools"] = [
                {"name": t.name, "required": (t.input_schema or {}).get("required", [])}
                for t in listed.tools
            ]
            for label, extra in CALLS:
                tool = label.split("_at_")[0]
                args = {"trace": trace, **extra}
                if label == "bad_formula":
                    tool = "why"
                if label == "missing_file":
                    tool, args = "why", {"trace": trace + ".missing", **extra}
                r = await session.call_tool(tool, args)
                out["calls"][label] = {
                    "is_error": bool(r.is_error),
                    "text": "".join(getattr(c, "text", "") for c in r.content),
                    "structured": r.structured_content,
                }
    print(json.dumps(out))


asyncio.run(main(sys.argv[1], sys.argv[2]))
