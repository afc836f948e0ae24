"""How deep a JSON text nests, measured before anything parses or walks it.

Python's json parser and every walker over a schema (meta-validation, the compilers, the
lints) recurse once or more per level, so a file nested a few hundred levels deep ended in
RecursionError and a traceback. The depth is counted here without recursion, on the text, so
that such a file is bad input with its place named, whichever reader meets it first.
"""

from __future__ import annotations

import json
import re
from typing import Any

from engine.errors import MaskscopeError

# The deepest file in the MaskBench dev set nests 20 levels and the JSON Schema Test Suite
# less; a schema of 128 (64 levels of `properties`) still leaves every recursive walker well
# inside Python's default limit of 1000 frames, in the worker threads and processes too.
MAX_DEPTH = 64

# A string (skipped whole: brackets inside it do not count) or one bracket.
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.DOTALL)


class TooDeepError(MaskscopeError):
    """The JSON text nests deeper than MAX_DEPTH."""

    kind = "too deep"

    def __init__(self, line: int, column: int, offset: int, limit: int, file: str = "") -> None:
        reason = f"the JSON nests deeper than {limit} levels, the most Maskscope reads"
        place = f"line {line}, column {column}"
        super().__init__(f"{file}, {place}: {reason}" if file else f"{place}: {reason}")
        self.reason = reason
        self.line = line
        self.column = column
        self.offset = offset
        self.file = file


def too_deep(text: str, limit: int = MAX_DEPTH, file: str = "") -> TooDeepError | None:
    """The error for the first bracket that opens level `limit + 1`, or None."""
    if text.count("{") + text.count("[") <= limit:
        return None  # an upper bound on the depth (brackets in strings count too): most files
    depth = 0
    for match in _TOKEN.finditer(text):
        bracket = match.group()
        if bracket in "[{":
            depth += 1
            if depth > limit:
                return _at(text, match.start(), limit, file)
        elif bracket in "]}":
            depth -= 1
    return None


def check_depth(text: str, file: str = "", limit: int = MAX_DEPTH) -> None:
    """Raise TooDeepError where the text nests deeper than `limit`; `file` names it."""
    error = too_deep(text, limit, file)
    if error is not None:
        raise error


def check_line_depth(line: str, file: str, number: int, limit: int = MAX_DEPTH) -> None:
    """check_depth for one line of a JSON-lines file: the place is the file's line `number`."""
    error = too_deep(line, limit)
    if error is not None:
        raise TooDeepError(number, error.column, error.offset, limit, file)


def _at(text: str, offset: int, limit: int, file: str) -> TooDeepError:
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return TooDeepError(line, column, offset, limit, file)


def loads(text: str, file: str) -> Any:
    """json.loads for the text of `file`: too deep a nesting or a syntax error is one
    MaskscopeError naming the file, line and column."""
    check_depth(text, file)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        reason = exc.msg.removesuffix(" at")
        where = f"line {exc.lineno}, column {exc.colno}"
        raise MaskscopeError(f"{file}: not JSON ({reason}, {where})") from None
