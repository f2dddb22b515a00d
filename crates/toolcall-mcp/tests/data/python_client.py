"""A real MCP client for the real-server tier: the MCP Python SDK's ClientSession over stdio.

    python python_client.py session CMD ARGS...   # the session `toolcall mcp record` records
    python python_client.py renamed CMD ARGS...   # calls a renamed tool; expects -32602
    python python_client.py unknown CMD ARGS...   # calls a name the server lacks; says what came
    python python_client.py surface CMD ARGS...   # what the server shows of itself
    python python_client.py http URL              # that, over streamable HTTP

Prints one JSON line per step on stdout; exits 1 when a step did not go as the SDK should see
it. The server command gets this process's environment (the SDK alone would pass only a few
variables).
"""

import json
import os
import sys

import anyio
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client


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


async def unknown(client):
    """Calls a name the catalog lacks and says how it was answered: an `isError` result (what
    the TypeScript SDK's servers answer) or a JSON-RPC error."""
    await client.list_tools()
    try:
        result = await client.call_tool("no-such-tool", {})
    except Exception as exc:  # noqa: BLE001 - the point is which answer
        say(step="no-such-tool", error=str(exc), code=error_code(exc))
        return 0
    text = [c.text for c in result.content if getattr(c, "text", None) is not None]
    say(step="no-such-tool", is_error=bool(result.is_error), text=text)
    return 0


async def surface(client, initialized):
    """What the server showed of itself: its initialize answer, its tools in order, its
    prompts and resources, one prompt got, one resource read and one completion."""
    say(step="initialize", server_info=initialized.server_info.model_dump(mode="json"),
        instructions=initialized.instructions,
        capabilities=initialized.capabilities.model_dump(mode="json", exclude_none=True))
    tools = await client.list_tools()
    say(step="tools/list", tools=[t.name for t in tools.tools])
    prompts = await client.list_prompts()
    say(step="prompts/list", prompts=[p.name for p in prompts.prompts])
    prompt = await client.get_prompt("args-prompt", {"city": "Paris", "state": "Texas"})
    say(step="prompts/get", messages=[m.model_dump(mode="json") for m in prompt.messages])
    resources = await client.list_resources()
    say(step="resources/list", resources=[str(r.uri) for r in resources.resources])
    first = resources.resources[0].uri
    read = await client.read_resource(first)
    say(step="resources/read", uri=str(first),
        contents=[c.model_dump(mode="json") for c in read.contents])
    completed = await client.complete(
        types.PromptReference(type="ref/prompt", name="completable-prompt"),
        {"name": "department", "value": "S"})
    say(step="completion/complete", values=completed.completion.values)
    return 0


async def main():
    mode, target, *args = sys.argv[1:]
    if mode == "http":
        async with streamable_http_client(target) as (read, write, *_):
            async with ClientSession(read, write) as client:
                return await surface(client, await client.initialize())
    params = StdioServerParameters(command=target, args=args, env=dict(os.environ))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as client:
            initialized = await client.initialize()
            if mode == "surface":
                return await surface(client, initialized)
            return await {"session": session, "renamed": renamed, "unknown": unknown}[mode](client)


if __name__ == "__main__":
    sys.exit(anyio.run(main))
