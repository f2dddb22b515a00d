"""The scorer from Python: inputs, the verdict's fields, the errors, the assertion."""

import json
import subprocess

import pytest

import toolcall_score
from conftest import ROOT, required_env

TOOLS = [
    {
        "name": "get_invoice",
        "description": "One invoice by id.",
        "input_schema": {
            "type": "object",
            "properties": {"id": {"type": "string"}, "amount": {"type": "integer"}},
            "required": ["id"],
        },
    }
]
REQUEST = {
    "model": "claude-x",
    "system": "You are the billing assistant.",
    "tools": TOOLS,
    "messages": [{"role": "user", "content": "Show me my invoices"}],
}


def anthropic_response(name, arguments=None, call_id="toolu_1"):
    return {
        "type": "message",
        "role": "assistant",
        "stop_reason": "tool_use",
        "content": [{"type": "tool_use", "id": call_id, "name": name, "input": arguments or {}}],
    }


def test_an_undefined_name_is_a_finding_with_its_cause_and_suggestion():
    verdict = toolcall_score.score(anthropic_response("get_invoices", {"id": "x"}), request=REQUEST)
    assert not verdict.passed
    [finding] = verdict.findings
    assert (finding.kind, finding.name, finding.cause) == ("unknown_tool", "get_invoices", "invented")
    assert finding.suggestions == ["get_invoice"]
    assert finding.call_id == "toolu_1"
    assert finding.location == "response call 1"
    assert verdict.fingerprint == ["get_invoices (invented)"]


def test_dicts_text_bytes_and_tools_give_the_same_verdict():
    body = anthropic_response("get_invoices")
    by_dict = toolcall_score.score(body, request=REQUEST).to_dict()
    by_text = toolcall_score.score(json.dumps(body), request=json.dumps(REQUEST)).to_dict()
    by_bytes = toolcall_score.score(json.dumps(body).encode(), request=REQUEST).to_dict()
    by_tools = toolcall_score.score(body, tools=TOOLS).to_dict()
    assert by_dict == by_text == by_bytes
    assert by_tools["verdict"] == "fail"
    assert [f["name"] for f in by_tools["findings"]] == ["get_invoices"]


def test_a_defined_call_passes_and_a_scorer_agrees_with_score():
    body = anthropic_response("get_invoice", {"id": "inv_7"})
    assert toolcall_score.score(body, tools=TOOLS).passed
    scorer = toolcall_score.Scorer(tools=TOOLS)
    assert scorer.tool_names == ["get_invoice"]
    for name in ["get_invoice", "get_invoices", "list_invoices"]:
        response = anthropic_response(name, {"id": "x"})
        assert scorer.score(response).to_dict() == toolcall_score.score(response, tools=TOOLS).to_dict()


def test_a_schema_violation_names_the_argument_path():
    verdict = toolcall_score.score(anthropic_response("get_invoice", {"id": "x", "amount": "ten"}), tools=TOOLS)
    [finding] = verdict.findings
    assert finding.kind == "schema_violation"
    assert finding.argument_path == "/amount"
    assert finding.argument_paths == ["/amount"]
    assert toolcall_score.score(anthropic_response("get_invoices"), tools=TOOLS).findings[0].argument_path is None


def test_notes_fail_nothing():
    # OpenAI Chat calls without an id: a note, not a failure.
    body = {
        "object": "chat.completion",
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls",
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {"type": "function", "function": {"name": "get_invoice", "arguments": '{"id": "x"}'}}
                    ],
                },
            }
        ],
    }
    tools = [{"type": "function", "function": {"name": "get_invoice", "parameters": {"type": "object"}}}]
    verdict = toolcall_score.score(body, tools=tools)
    assert verdict.passed
    assert [n.kind for n in verdict.notes] == ["call_without_id"]


def test_an_unreadable_body_raises_parse_error_with_format_member_and_position():
    with pytest.raises(toolcall_score.ParseError) as error:
        toolcall_score.score('{"type": "message", "content": [{"type": "tool_use", "name": 7}]}', tools=TOOLS)
    e = error.value
    assert isinstance(e, ValueError)
    assert e.what == "response"
    assert e.member == "/content/0/name"
    assert e.line == 1 and e.column > 1
    with pytest.raises(toolcall_score.ParseError) as error:
        toolcall_score.score({"choices": "nope"}, tools=TOOLS, format="openai-chat")
    assert error.value.format == "openai-chat"
    assert error.value.line is None
    with pytest.raises(toolcall_score.ParseError) as error:
        toolcall_score.score("{not json", tools=TOOLS)
    assert (error.value.line, error.value.column) == (1, 2)
    with pytest.raises(ValueError, match="anthropic"):
        toolcall_score.score("{}", tools=TOOLS, format="no-such-format")


def test_inputs_that_are_not_json_are_type_errors_not_crashes():
    with pytest.raises(TypeError, match="object"):
        toolcall_score.score({"content": object()}, tools=TOOLS)
    with pytest.raises(TypeError, match="keys are strings"):
        toolcall_score.score({1: 2}, tools=TOOLS)
    deep = []
    for _ in range(2000):
        deep = [deep]
    with pytest.raises(ValueError, match="nests deeper"):
        toolcall_score.score(deep, tools=TOOLS)
    with pytest.raises(ValueError, match="tools= .* or request="):
        toolcall_score.score(anthropic_response("x"))


def test_a_panic_in_the_core_is_an_exception_not_an_abort():
    with pytest.raises(toolcall_score.InternalError, match="panicked: the test asked for a panic"):
        toolcall_score._native._panic_for_test()
    # The interpreter is still fine.
    assert toolcall_score.score(anthropic_response("get_invoice", {"id": "x"}), tools=TOOLS).passed


def test_parse_error_pickles_with_its_attributes():
    import pickle

    with pytest.raises(toolcall_score.ParseError) as error:
        toolcall_score.score("{not json", tools=TOOLS)
    e = error.value
    again = pickle.loads(pickle.dumps(e))
    assert (str(again), again.line, again.column, again.what) == (str(e), e.line, e.column, e.what)


def test_the_assertion_message_is_what_the_cli_prints(tmp_path):
    request, response = tmp_path / "request.json", tmp_path / "response.json"
    request.write_text(json.dumps(REQUEST))
    response.write_text(json.dumps(anthropic_response("get_invoices", {"id": "x"})))
    with pytest.raises(AssertionError) as error:
        toolcall_score.assert_tool_calls_defined(REQUEST, json.loads(response.read_text()))
    cli = subprocess.run(
        [required_env("ATP_TOOLCALL_BIN"), "score", "--case", str(request), "--response", str(response)],
        capture_output=True,
        text=True,
    )
    assert cli.returncode == 1, cli.stderr
    cli_lines = cli.stdout.splitlines()
    message_lines = str(error.value).splitlines()
    # The CLI's first line names the file; every finding line is the same text.
    assert cli_lines[0].endswith(": 1 finding(s)") and message_lines[0] == "fail: 1 finding(s)"
    assert message_lines[1:] == cli_lines[1:]
    assert "did you mean `get_invoice`?" in str(error.value)
    assert toolcall_score.assert_tool_calls_defined(REQUEST, anthropic_response("get_invoice", {"id": "x"})).passed
