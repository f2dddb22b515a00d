"""A real MCP client for the real-server tier: the MCP Python SDK's ClientSession over stdio.

    python python_client.py session CMD ARGS...   # the session `toolcall mcp record` records
    python python_client.py renamed CMD ARGS...   # calls a renamed tool; expects -32602

Prints one JSON line per step on stdout; exits 1 when a step did not go as the SDK should see
it. The server command gets this process's environment (the SDK alone would pass only a few
variables).
"""

import json
import os
import sys

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def say(**fields):
    print(json.dumps(fields), flush=True)


def error_code(exc):
    error = getattr(exc, "error", None)
    return getattr(error, "code", None)


async def session(client):
    tools = await client.list_tools()
    names = sorted(t.name for t in tools.tools)
    say(step="tools/list", tools=names)
    for name, arguments in [
        ("echo", {"message": "hello from the Python SDK"}),
        ("get-sum", {"a": 2, "b": 3}),
        ("get-structured-content", {"location": "Chicago"}),
        ("get-tiny-image", {}),
    ]:
        result = await client.call_tool(name, arguments)
        say(step=name, is_error=bool(result.is_error))
        if result.is_error:
            return 1
    # Refused by the server: the recording pins it with expect_error.
    try:
        result = await client.call_tool("get-sum", {"a": "two", "b": 3})
        say(step="get-sum (bad)", is_error=bool(result.is_error))
        refused = bool(result.is_error)
    except Exception as exc:  # noqa: BLE001 - any refusal will do
        say(step="get-sum (bad)", error=str(exc), code=error_code(exc))
        refused = True
    return 0 if refused else 1


async def renamed(client):
    await client.list_tools()
    try:
        result = await client.call_tool("get_sum", {"a": 2, "b": 3})
    except Exception as exc:  # noqa: BLE001 - the point is which error
        code = error_code(exc)
        say(step="get_sum", error=str(exc), code=code)
        return 0 if code == -32602 else 1
    say(step="get_sum", unexpected=result.model_dump(mode="json"))
    return 1


async def main():
    mode, command, *args = sys.argv[1:]
    params = StdioServerParameters(command=command, args=args, env=dict(os.environ))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as client:
            await client.initialize()
            return await {"session": session, "renamed": renamed}[mode](client)


if __name__ == "__main__":
    sys.exit(anyio.run(main))
