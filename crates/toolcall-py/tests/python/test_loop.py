"""The loop guard from Python: the decisions of the Rust ToolLoop (its own tests in
crates/toolcall-score/src/tool_loop/tests.rs), and its counters."""

import pytest

import toolcall_score

TOOLS = [
    {"name": "get_invoice", "description": "One invoice.", "input_schema": {"type": "object"}},
    {"name": "list_invoices", "description": "All invoices.", "input_schema": {"type": "object"}},
]


def chat(*calls, finish="tool_calls"):
    tool_calls = [
        {"id": cid, "type": "function", "function": {"name": name, "arguments": args}}
        for cid, name, args in calls
    ]
    message = {"role": "assistant", "content": None}
    if tool_calls:
        message["tool_calls"] = tool_calls
    else:
        message["content"] = "done"
        finish = "stop"
    return {"object": "chat.completion", "choices": [{"index": 0, "finish_reason": finish, "message": message}]}


def test_a_text_answer_finishes_the_turn():
    guard = toolcall_score.ToolLoop(TOOLS)
    end = guard.step(chat())
    assert end.done and end.finished and end.outcome == "finished"
    assert end.text == "done" and end.closing is None
    assert guard.turn.steps == 1 and guard.turns == 1


def test_the_unknown_error_names_the_tool_its_suggestion_and_the_alternatives_by_policy():
    pending = toolcall_score.ToolLoop(TOOLS).step(chat(("c1", "get_invoices", "{}")))
    assert not pending.done and pending.execute == []
    [result] = pending.answer([]).results
    assert result["is_error"] and result["call_id"] == "c1"
    assert result["content"].startswith("Error: no tool named `get_invoices` exists.")
    assert "get_invoice" in result["content"] and "list_invoices" in result["content"]
    quiet = toolcall_score.ToolLoop(TOOLS, list_available_in_errors=False)
    [result] = quiet.step(chat(("c1", "get_invoices", "{}"))).answer([]).results
    assert "list_invoices" not in result["content"]


def test_defined_calls_run_in_order_and_results_keep_their_ids():
    guard = toolcall_score.ToolLoop(TOOLS)
    pending = guard.step(chat(("c1", "get_invoice", '{"id": "7"}'), ("c2", "nope", "{}"), ("c3", "list_invoices", "{}")))
    assert [c.name for c in pending.execute] == ["get_invoice", "list_invoices"]
    assert pending.execute[0].arguments == {"id": "7"}
    assert [c.id for c in pending.calls] == ["c1", "c2", "c3"]
    results = pending.answer([{"paid": True}, toolcall_score.ToolError("the database is down")])
    assert [m["tool_call_id"] for m in results.messages] == ["c1", "c2", "c3"]
    assert [r["is_error"] for r in results.results] == [False, True, True]
    assert results.results[2]["content"] == "the database is down"
    with pytest.raises(RuntimeError, match="already answered"):
        pending.answer([1, 2])


def test_answer_needs_one_output_per_executed_call():
    pending = toolcall_score.ToolLoop(TOOLS).step(chat(("c1", "get_invoice", "{}")))
    with pytest.raises(ValueError, match="0 tool output"):
        pending.answer([])
    assert pending.answer(["ok"]).results[0]["content"] == "ok"


def test_answer_with_sends_tool_errors_and_lets_other_exceptions_through():
    guard = toolcall_score.ToolLoop(TOOLS)

    def run(call):
        raise toolcall_score.ToolError(f"{call.name} failed")

    results = guard.step(chat(("c1", "get_invoice", "{}"))).answer_with(run)
    assert results.results[0] == {"call_id": "c1", "name": "get_invoice", "is_error": True, "content": "get_invoice failed"}
    pending = guard.step(chat(("c2", "get_invoice", "{}")))

    def broken(call):
        raise KeyError("bug")

    with pytest.raises(KeyError):
        pending.answer_with(broken)


def test_the_second_unknown_call_of_a_turn_escalates_and_the_counts_say_so():
    guard = toolcall_score.ToolLoop(TOOLS)
    guard.step(chat(("c1", "get_invoices", "{}"))).answer([])
    end = guard.step(chat(("c2", "invoices", "{}"), ("c3", "get_invoice", "{}")))
    assert end.outcome == "unknown_tool_escalation" and end.names == ["get_invoices", "invoices"]
    assert end.outcome_dict() == {"outcome": "unknown_tool_escalation", "names": ["get_invoices", "invoices"]}
    assert [r["is_error"] for r in end.closing.results] == [True, True]
    assert "not run" in end.closing.results[1]["content"]
    assert guard.turn.unknown_calls == 2
    assert guard.turn.unknown_names == {"get_invoices": 1, "invoices": 1}
    # The next response starts a new turn; the totals keep counting.
    guard.step(chat(("c4", "nope", "{}"))).answer([])
    assert guard.turns == 2 and guard.turn.unknown_calls == 1 and guard.total.unknown_calls == 3
    assert guard.metrics()["total"]["unknown_calls"] == 3


def test_the_escalation_threshold_follows_the_policy():
    never = toolcall_score.ToolLoop(TOOLS, max_steps=1000, max_unknown_per_turn=2**63)
    for i in range(50):
        never.step(chat((f"c{i}", "nope", "{}"))).answer([])
    assert never.turn.unknown_calls == 50
    first = toolcall_score.ToolLoop(TOOLS, max_unknown_per_turn=1)
    assert first.step(chat(("c1", "nope", "{}"))).outcome == "unknown_tool_escalation"


def test_the_step_budget_ends_the_turn_before_running_tools():
    guard = toolcall_score.ToolLoop(TOOLS, max_steps=3)
    guard.step(chat(("c0", "get_invoice", "{}"))).answer([1])
    guard.step(chat(("c1", "get_invoice", "{}"))).answer([1])
    end = guard.step(chat(("c2", "get_invoice", "{}")))
    assert end.outcome == "step_budget_exhausted" and end.outcome_dict()["steps"] == 3
    assert end.closing.messages[0]["tool_call_id"] == "c2"


def test_invalid_arguments_are_answered_by_the_loop():
    guard = toolcall_score.ToolLoop(TOOLS)
    pending = guard.step(chat(("c1", "get_invoice", "{not json"), ("c2", "list_invoices", "{}")))
    assert [c.name for c in pending.execute] == ["list_invoices"]
    results = pending.answer(["ok"]).results
    assert results[0]["is_error"] and "not valid JSON" in results[0]["content"]
    assert guard.turn.invalid_arguments == 1 and guard.turn.unknown_calls == 0


def test_replies_that_cannot_be_acted_on_are_malformed_not_crashes():
    guard = toolcall_score.ToolLoop(TOOLS)
    end = guard.step({"what": "is this"})
    assert end.outcome == "malformed_response" and "did not parse" in end.outcome_dict()["reason"]
    end = guard.step("data: not json\n\n")
    assert end.outcome == "malformed_response"
    no_id = chat((None, "get_invoice", "{}"))
    del no_id["choices"][0]["message"]["tool_calls"][0]["id"]
    assert guard.step(no_id).outcome == "malformed_response"


def test_reset_turn_starts_a_new_turn_and_keeps_the_totals():
    guard = toolcall_score.ToolLoop(TOOLS)
    guard.step(chat(("c1", "nope", "{}"))).answer([])
    guard.reset_turn()
    guard.step(chat(("c2", "nope", "{}"))).answer([])
    assert guard.turns == 2 and guard.turn.unknown_calls == 1 and guard.total.unknown_calls == 2
