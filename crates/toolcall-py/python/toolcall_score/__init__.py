"""Score LLM tool calls against the tools the request defined, from Python.

Every call a response carries must name a tool the request defined. ``score`` says which
name did not, why it probably came back and which defined name it was likely meant to be;
``ToolLoop`` turns such a call into an error result paired by id inside your own dispatcher;
the pytest plugin turns a folder of cases and recorded responses into tests with a baseline
ratchet. All of it is the Rust core of toolcall-score, bound natively: the verdicts, loop
decisions and messages are the ``toolcall`` CLI's.
"""

from ._errors import InternalError, ParseError, ToolError
from ._native import (
    Counts,
    Finding,
    Pending,
    Scorer,
    ToolCall,
    ToolLoop,
    ToolResults,
    TurnEnd,
    Verdict,
    assert_tool_calls_defined,
    formats,
    score,
)

__all__ = [
    "Counts",
    "Finding",
    "InternalError",
    "ParseError",
    "Pending",
    "Scorer",
    "ToolCall",
    "ToolError",
    "ToolLoop",
    "ToolResults",
    "TurnEnd",
    "Verdict",
    "assert_tool_calls_defined",
    "formats",
    "score",
]
