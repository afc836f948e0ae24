"""Text rules behind the editor's comfort: the indent an Enter gives, and bracket pairs.

Pure functions on strings, so they are tested without a widget. JSON strings never span
a line, so a line can be told apart into strings and the rest on its own.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator

INDENT = "  "  # two spaces, as Format writes
OPENERS, CLOSERS = "{[", "}]"
PAIRS = {"{": "}", "[": "]", "}": "{", "]": "["}
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"?')
MAX_SCAN_LINES = 5_000  # a bracket farther is not looked for: 20,000 lines took 0.4 s


def leading_space(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def enter_text(before: str, after: str) -> tuple[str, int]:
    """What Enter inserts when the line reads `before` + cursor + `after`, and where the
    cursor goes inside it: the line's indent, one more after an opening bracket, and
    between a pair ({|}) the closing bracket goes to a line of its own."""
    indent = leading_space(before)
    stripped = before.rstrip()
    if stripped and stripped[-1] in OPENERS:
        inner = indent + INDENT
        if after.lstrip().startswith(PAIRS[stripped[-1]]):
            text = "\n" + inner + "\n" + indent
            return text, 1 + len(inner)
        return "\n" + inner, 1 + len(inner)
    return "\n" + indent, 1 + len(indent)


def dedented(before: str) -> str | None:
    """The text before the cursor once a closing bracket is typed on a line that holds
    only indentation: one level less. None when the line is not only indentation."""
    if before.strip() or not before:
        return None
    return before[: max(0, len(before) - len(INDENT))] if before.endswith(INDENT) else ""


def brackets(line: str) -> Iterator[tuple[int, str]]:
    """(column, bracket) of each bracket outside strings, left to right."""
    strings = [m.span() for m in _STRING.finditer(line)]
    spans = iter(strings)
    span = next(spans, None)
    for column, char in enumerate(line):
        while span is not None and column >= span[1]:
            span = next(spans, None)
        if span is not None and span[0] <= column < span[1]:
            continue
        if char in "{}[]":
            yield column, char


def find_match(
    lines: Iterable[tuple[int, str]], column: int, char: str, forward: bool
) -> tuple[int, int] | None:
    """Where the bracket matching the `char` at `column` of the first line is: (line
    number, column), or None. `lines` are (number, text), the bracket's own line first,
    then the following lines (forward) or the preceding ones (backward). Brackets of the
    other kind are skipped: only brackets of this kind need to balance."""
    want = PAIRS[char]
    depth = 0
    for count, (number, text) in enumerate(lines):
        if count > MAX_SCAN_LINES:
            return None
        found = list(brackets(text))
        if count == 0:
            found = [f for f in found if (f[0] > column if forward else f[0] < column)]
        for col, b in found if forward else reversed(found):
            if b == char:
                depth += 1
            elif b == want:
                if depth == 0:
                    return number, col
                depth -= 1
    return None


class _Number(str):
    """A number as written: Format must not turn 1e5 into 100000.0."""


_INLINE_WIDTH = 80  # an array of plain values that fits in this stays on one line


def pretty(text: str) -> str:
    """The JSON text re-indented by two spaces, with keys (duplicates too), key order and
    numbers exactly as written. Raises json.JSONDecodeError on invalid JSON."""
    value = json.loads(
        text,
        object_pairs_hook=_Pairs,
        parse_float=_Number,
        parse_int=_Number,
        parse_constant=_Number,
    )
    return _dump(value, "") + "\n"


class _Pairs(list):
    """An object's (key, value) pairs, in order and with any duplicate keys."""


def _dump(value: object, indent: str) -> str:
    inner = indent + INDENT
    if isinstance(value, _Pairs):
        if not value:
            return "{}"
        items = [f"{inner}{_scalar(k)}: {_dump(v, inner)}" for k, v in value]
        return "{\n" + ",\n".join(items) + "\n" + indent + "}"
    if isinstance(value, list):
        if not value:
            return "[]"
        if not any(isinstance(v, list) for v in value):
            flat = "[" + ", ".join(_scalar(v) for v in value) + "]"
            if len(indent) + len(flat) <= _INLINE_WIDTH:
                return flat
        return "[\n" + ",\n".join(inner + _dump(v, inner) for v in value) + "\n" + indent + "]"
    return _scalar(value)


def _scalar(value: object) -> str:
    if isinstance(value, _Number):
        return str(value)
    return json.dumps(value, ensure_ascii=False)
