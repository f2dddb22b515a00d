"""What the Python side says of a verdict, built from the binding's attributes alone, in the
JSON shape the Rust library serialises (`toolcall score --json`), for the parity checks."""

import json
from pathlib import Path

import toolcall_score


def finding_dict(f):
    d = {"kind": f.kind}
    if f.name is not None:
        d["name"] = f.name
    if f.cause is not None:
        d["cause"] = f.cause
    if f.kind == "unknown_tool":
        d["suggestions"] = list(f.suggestions)
    if f.call_id is not None:
        d["call_id"] = f.call_id
    d["location"] = f.location
    d["detail"] = f.detail
    return d


def verdict_dict(v):
    d = {"verdict": "pass" if v.passed else "fail", "findings": [finding_dict(f) for f in v.findings]}
    if v.notes:
        d["notes"] = [finding_dict(f) for f in v.notes]
    return d


def body(path):
    """A file as Python would hold it: the parsed JSON when it is one document, else its text
    (a recorded stream)."""
    text = Path(path).read_text(encoding="utf-8")
    try:
        return json.loads(text)
    except ValueError:
        return text


def score_files(request, response, tools_only=False):
    """The verdict dict, or {"error": message} when a file does not read."""
    try:
        inputs = {"tools" if tools_only else "request": body(request)}
        return verdict_dict(toolcall_score.score(body(response), **inputs))
    except toolcall_score.ParseError as e:
        return {"error": str(e)}
