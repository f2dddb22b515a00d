"""The seed's dispatcher test, written against the OpenAI and Anthropic Python SDKs with their
HTTP transports mocked: the model calls a tool it was never given; the assertion catches it, and
the guard answers it with an error result paired by id, counting it."""

import json

import anthropic
import httpx2 as httpx  # the SDKs' HTTP client (httpx's successor, same MockTransport API)
import openai
import pytest

import toolcall_score

WEATHER = {
    "name": "get_weather",
    "description": "The weather in a city.",
    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}


def mock(bodies):
    """A client transport answering each request with the next body, keeping what was sent."""
    sent = []

    def handler(request):
        sent.append(json.loads(request.content))
        return httpx.Response(200, json=bodies[len(sent) - 1])

    return httpx.Client(transport=httpx.MockTransport(handler)), sent


ANTHROPIC_CALL = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "model": "claude-sonnet-4-5",
    "stop_reason": "tool_use",
    "content": [{"type": "tool_use", "id": "tu_1", "name": "fetch_weather", "input": {"city": "Paris"}}],
    "usage": {"input_tokens": 10, "output_tokens": 5},
}
ANTHROPIC_TEXT = {
    "id": "msg_2",
    "type": "message",
    "role": "assistant",
    "model": "claude-sonnet-4-5",
    "stop_reason": "end_turn",
    "content": [{"type": "text", "text": "It is sunny in Paris."}],
    "usage": {"input_tokens": 20, "output_tokens": 7},
}


def anthropic_client(bodies):
    http, sent = mock(bodies)
    return anthropic.Anthropic(api_key="test", http_client=http, max_retries=0), sent


def test_anthropic_an_undefined_tool_fails_the_assertion():
    client, sent = anthropic_client([ANTHROPIC_CALL])
    request = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 256,
        "tools": [WEATHER],
        "messages": [{"role": "user", "content": "Weather in Paris?"}],
    }
    response = client.messages.create(**request)
    defined = [tool["name"] for tool in sent[0]["tools"]]
    # The seed's one-line check, and what toolcall_score says of the same call.
    assert response.content[0].name not in defined
    with pytest.raises(AssertionError) as error:
        toolcall_score.assert_tool_calls_defined(sent[0], response)
    message = str(error.value)
    assert "unknown_tool `fetch_weather`" in message
    assert "[id tu_1]" in message
    assert "did you mean `get_weather`?" in message


def test_anthropic_the_guard_answers_the_unknown_call_paired_by_id():
    client, sent = anthropic_client([ANTHROPIC_CALL, ANTHROPIC_TEXT])
    guard = toolcall_score.ToolLoop([WEATHER])
    messages = [{"role": "user", "content": "Weather in Paris?"}]
    ran = []
    while True:
        response = client.messages.create(model="claude-sonnet-4-5", max_tokens=256, tools=[WEATHER], messages=messages)
        messages.append({"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in response.content]})
        step = guard.step(response)
        if step.done:
            break
        results = step.answer_with(lambda call: ran.append(call.name) or {"sunny": True})
        messages.extend(results.messages)
    assert step.finished and step.text == "It is sunny in Paris."
    assert ran == []  # the undefined tool never ran
    [answer] = sent[1]["messages"][2]["content"]
    assert answer["type"] == "tool_result" and answer["tool_use_id"] == "tu_1"
    assert answer["is_error"] is True
    assert "get_weather" in answer["content"]
    assert guard.turn.unknown_calls == 1
    assert guard.turn.unknown_names == {"fetch_weather": 1}
    assert guard.total.steps == 2


OPENAI_TOOLS = [
    {
        "type": "function",
        "function": {"name": "get_weather", "description": "The weather in a city.", "parameters": WEATHER["input_schema"]},
    }
]


def openai_call(name, call_id):
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "gpt-4o",
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls",
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {"id": call_id, "type": "function", "function": {"name": name, "arguments": '{"city": "Paris"}'}}
                    ],
                },
            }
        ],
    }


OPENAI_TEXT = {
    "id": "chatcmpl-3",
    "object": "chat.completion",
    "created": 1,
    "model": "gpt-4o",
    "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "Sunny."}}],
}


def openai_client(bodies):
    http, sent = mock(bodies)
    return openai.OpenAI(api_key="test", http_client=http, max_retries=0), sent


def test_openai_an_undefined_tool_fails_the_assertion():
    client, sent = openai_client([openai_call("weather_lookup", "call_1")])
    completion = client.chat.completions.create(
        model="gpt-4o", tools=OPENAI_TOOLS, messages=[{"role": "user", "content": "Weather in Paris?"}]
    )
    verdict = toolcall_score.score(completion, request=sent[0])
    [finding] = verdict.findings
    assert (finding.name, finding.call_id, finding.suggestions) == ("weather_lookup", "call_1", ["get_weather"])
    with pytest.raises(AssertionError, match="unknown_tool `weather_lookup`"):
        toolcall_score.assert_tool_calls_defined(sent[0], completion)


def test_openai_the_guard_escalates_after_the_second_unknown_name():
    client, sent = openai_client([openai_call("weather_lookup", "call_1"), openai_call("forecast", "call_2"), OPENAI_TEXT])
    guard = toolcall_score.ToolLoop(OPENAI_TOOLS)
    messages = [{"role": "user", "content": "Weather in Paris?"}]
    while True:
        completion = client.chat.completions.create(model="gpt-4o", tools=OPENAI_TOOLS, messages=messages)
        messages.append(completion.choices[0].message.model_dump(exclude_none=True))
        step = guard.step(completion)
        if step.done:
            break
        messages.extend(step.answer([]).messages)
    # First unknown name: an error result paired by id; the second ends the turn.
    assert sent[1]["messages"][-1] == {
        "role": "tool",
        "tool_call_id": "call_1",
        "content": sent[1]["messages"][-1]["content"],
    }
    assert "get_weather" in sent[1]["messages"][-1]["content"]
    assert step.outcome == "unknown_tool_escalation"
    assert step.names == ["weather_lookup", "forecast"]
    assert [r["call_id"] for r in step.closing.results] == ["call_2"]
    assert guard.turn.unknown_calls == 2
    assert len(sent) == 2  # the third response was never asked for
