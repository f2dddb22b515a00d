# The Python peer of `toolcall rate` in bench/run's rate rows: per JSONL line, json.loads, the set
# of the request's tool names, and each call of the Chat Completions response checked against it.
import json, sys
calls = unknown = 0
for line in open(sys.argv[1], "rb"):
    entry = json.loads(line)
    defined = {t.get("function", t)["name"] for t in entry["request"].get("tools", [])}
    for choice in entry["response"].get("choices", []):
        for call in choice["message"].get("tool_calls") or []:
            calls += 1
            unknown += call["function"]["name"] not in defined
print(f"{calls} calls, {unknown} unknown")
