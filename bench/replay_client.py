"""The reference: the same flow replayed with the MCP Python SDK (stdio_client + ClientSession).

Does the same work as `toolcall replay` minus the inputSchema validation: initialize, list every
page of tools, then for each call check the name, call, check isError and the `expect` pointers.
Works with the SDK's 1.x (camelCase) and 2.x (snake_case) result attributes.
"""

import asyncio
import json
import os
import sys
from pathlib import Path

from mcp import ClientSession, StdioServerParameters, stdio_client, types


def attr(obj, *names):
    for name in names:
        if hasattr(obj, name):
            return getattr(obj, name)
    return None


def pointer(doc, ptr):
    for part in ptr.split("/")[1:]:
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(doc, list):
            doc = doc[int(part)]
        else:
            doc = doc[part]
    return doc


async def replay(path: Path) -> int:
    flow = json.loads(path.read_text())
    server = flow["server"]
    params = StdioServerParameters(
        command=os.path.expandvars(server["command"]),
        args=[os.path.expandvars(a) for a in server.get("args", [])],
        # Same environment as toolcall gives the child: the parent's plus the flow's.
        env={**os.environ, **server.get("env", {})},
        cwd=str(path.parent),
    )
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools, cursor = set(), None
            while True:
                page = await session.list_tools(
                    params=types.PaginatedRequestParams(cursor=cursor) if cursor else None
                )
                tools.update(t.name for t in page.tools)
                cursor = attr(page, "next_cursor", "nextCursor")
                if not cursor:
                    break
            for i, call in enumerate(flow["calls"], 1):
                name = call["name"]
                if name not in tools:
                    print(f"step {i}: {name}: not a tool the server lists")
                    return 1
                result = await session.call_tool(name, call.get("input", {}))
                if attr(result, "is_error", "isError"):
                    print(f"step {i}: {name}: the tool returned isError: true")
                    return 1
                doc = attr(result, "structured_content", "structuredContent")
                for ptr, want in call.get("expect", {}).items():
                    got = pointer(doc, ptr)
                    if got != want:
                        print(f"step {i}: {name}: expected {ptr} = {want!r}, got {got!r}")
                        return 1
                print(f"step {i}: {name} ok")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(replay(Path(sys.argv[1]))))
