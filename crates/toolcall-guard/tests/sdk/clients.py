"""The official OpenAI and Anthropic Python SDKs pointed at the guard by their base URL.

Run by tests/sdk.rs with the venv's python: argv[1] is a JSON list of scenarios, each
{"sdk", "api", "stream", "base_url", "request", "pair"}. Prints one JSON line per scenario:
what the SDK saw (the tool names it parsed, the raw body's bytes for a whole body) or the
error it raised (its class, its message).
"""

import base64
import inspect
import json
import sys

import anthropic
import openai


def split(create, request):
    """The request's members the SDK method takes as keywords, the rest as extra_body."""
    params = inspect.signature(create).parameters
    kwargs, extra = {}, {}
    for key, value in request.items():
        if key == "stream":
            continue
        (kwargs if key in params else extra)[key] = value
    return kwargs, extra


def names_of(obj, found):
    """Every tool-call name in a parsed SDK object (or event), depth first."""
    if hasattr(obj, "model_dump"):
        obj = obj.model_dump()
    if isinstance(obj, dict):
        kind = obj.get("type")
        if kind in ("tool_use", "function_call") and isinstance(obj.get("name"), str):
            found.append(obj["name"])
        function = obj.get("function")
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            found.append(function["name"])
        for value in obj.values():
            if isinstance(value, (dict, list)):
                names_of(value, found)
    elif isinstance(obj, list):
        for value in obj:
            names_of(value, found)
    return found


def method(client, api):
    if api == "chat":
        return client.chat.completions
    if api == "responses":
        return client.responses
    return client.messages


def run(s):
    headers = {"x-pair": str(s["pair"])}
    if s["sdk"] == "openai":
        client = openai.OpenAI(base_url=s["base_url"] + "/v1", api_key="sk-sdk-SECRET-99", max_retries=0)
    else:
        client = anthropic.Anthropic(base_url=s["base_url"], api_key="sk-ant-sdk-SECRET-99", max_retries=0)
    target = method(client, s["api"])
    kwargs, extra = split(target.create, s["request"])
    out = {"name": s["name"]}
    try:
        if s["stream"]:
            names, events = [], 0
            stream = target.create(stream=True, extra_headers=headers, extra_body=extra, **kwargs)
            for event in stream:
                events += 1
                names_of(event, names)
            out.update(ok=True, names=sorted(set(names)), events=events)
        else:
            raw = target.with_raw_response.create(extra_headers=headers, extra_body=extra, **kwargs)
            body = raw.http_response.content
            parsed = raw.parse()
            out.update(
                ok=True,
                names=sorted(set(names_of(parsed, []))),
                body=base64.b64encode(body).decode(),
                status=raw.http_response.status_code,
            )
    except Exception as e:  # the SDK's own error type is what is checked
        out.update(ok=False, error=type(e).__module__.split(".")[0] + "." + type(e).__name__, message=str(e))
    return out


def main():
    for scenario in json.loads(sys.argv[1]):
        print(json.dumps(run(scenario)), flush=True)


main()
