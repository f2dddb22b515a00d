"""The exceptions of toolcall_score, raised by its native module."""

from typing import List, Optional

__all__ = ["ParseError", "ToolError", "InternalError"]


class ParseError(ValueError):
    """A body (a response, a request or a tools array) that could not be read.

    The message is the one the ``toolcall`` CLI prints. ``what`` says which input it was;
    ``format`` is the format it was read as when one was named (``None`` when it was being
    detected from the shape), ``detected`` the format its shape fits instead, ``candidates``
    the formats an ambiguous shape fits; ``member`` is the JSON pointer of the offending value;
    ``line`` and ``column`` (1-based) its place in JSON text (``None`` for a ``dict``).
    """

    def __init__(
        self,
        message: str,
        *,
        what: str = "response",
        format: Optional[str] = None,
        detected: Optional[str] = None,
        candidates: Optional[List[str]] = None,
        member: Optional[str] = None,
        line: Optional[int] = None,
        column: Optional[int] = None,
    ) -> None:
        super().__init__(message)
        self.what = what
        self.format = format
        self.detected = detected
        self.candidates = candidates
        self.member = member
        self.line = line
        self.column = column

    def __reduce__(self):  # keeps the attributes across pickling (pytest-xdist, multiprocessing)
        return (
            _rebuild_parse_error,
            (
                str(self),
                self.what,
                self.format,
                self.detected,
                self.candidates,
                self.member,
                self.line,
                self.column,
            ),
        )


def _rebuild_parse_error(message, what, format, detected, candidates, member, line, column):
    return ParseError(
        message,
        what=what,
        format=format,
        detected=detected,
        candidates=candidates,
        member=member,
        line=line,
        column=column,
    )


class ToolError(Exception):
    """Raised by a tool run through ``Pending.answer_with``: its text is sent to the model as an
    error result, the provider's own way. Any other exception propagates."""


class InternalError(RuntimeError):
    """A panic inside toolcall-score: a bug in it, never a crash of the interpreter."""
