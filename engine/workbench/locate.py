"""Where each value of a JSON text sits: JSON path -> character span, and offsets as line:column.

The scanner assumes text that `json.loads` accepted (syntax errors are reported from there,
with their own position), so it only records where things are: one regular expression finds
the tokens, and a stack of open containers builds each path. A 1 MB schema takes about a
tenth of a second (tests/engine/test_workbench_locate.py measures it).
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Any

Part = str | int
Path = tuple[Part, ...]

# A key with its colon | a container's start | its end | a string or other scalar value.
_TOKEN = re.compile(
    r'("(?:[^"\\]|\\.)*")\s*:|([{\[])|([}\]])|("(?:[^"\\]|\\.)*"|[^\s{}\[\]:,"]+)', re.DOTALL
)
_PATH_PART = re.compile(r"""\.([^.\[]+)|\[(\d+)\]|\[(['"])((?:\\.|(?!\3).)*)\3\]""")


def path_parts(path: str) -> Path | None:
    """`$.properties['a b'][0]` -> ("properties", "a b", 0); None for what is no such path.

    Reads both spellings in use: the compiler's (`[{key!r}]`) and jsonschema's `json_path`.
    """
    if not path.startswith("$"):
        return None
    parts: list[Part] = []
    rest = path[1:]
    while rest:
        match = _PATH_PART.match(rest)
        if match is None:
            return None
        rest = rest[match.end() :]
        if match.group(1) is not None:
            parts.append(match.group(1))
        elif match.group(2) is not None:
            parts.append(int(match.group(2)))
        else:
            parts.append(re.sub(r"\\(.)", r"\1", match.group(4)))
    return tuple(parts)


@dataclass
class Spans:
    """The spans of a JSON text's values and keys, and its line starts."""

    text: str
    values: dict[Path, tuple[int, int]] = field(default_factory=dict)
    keys: dict[Path, tuple[int, int]] = field(default_factory=dict)  # the key's "..." itself
    _lines: list[int] = field(default_factory=list)

    def value(self, path: Path) -> tuple[int, int] | None:
        return self.values.get(path)

    def key(self, path: Path) -> tuple[int, int] | None:
        return self.keys.get(path)

    def start_of(self, path: Path) -> int | None:
        """Where to point at `path`: its key when it has one, else its value; the nearest
        ancestor that exists when the path itself is not in the text."""
        for end in range(len(path), -1, -1):
            head = path[:end]
            span = self.keys.get(head) or self.values.get(head)
            if span is not None:
                return span[0]
        return None

    def line_col(self, offset: int) -> tuple[int, int]:
        """1-based line and column of a character offset."""
        if not self._lines:
            self._lines = [0, *(m.end() for m in re.finditer("\n", self.text))]
        line = bisect_right(self._lines, offset)
        return line, offset - self._lines[line - 1] + 1


def line_col(text: str, offset: int) -> tuple[int, int]:
    """1-based line and column of a character offset in `text` (one lookup; Spans.line_col
    is faster for many)."""
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def locate(text: str) -> Spans:
    """The span of every value and key in a JSON text that json.loads accepts."""
    spans = Spans(text)
    values, keys = spans.values, spans.keys
    # Each open container: [its path, its start, the index of its last item (arrays) or
    # None (objects)]. An array's items are counted as they start, so commas are not read.
    stack: list[list[Any]] = []
    path: Path = ()
    for match in _TOKEN.finditer(text):
        kind = match.lastindex
        if kind == 1:  # a key, with its colon
            key = match.group(1)
            path = (*stack[-1][0], json.loads(key) if "\\" in key else key[1:-1])
            keys[path] = match.span(1)
            continue
        if kind == 3:  # a container ends
            path, start, _ = stack.pop()
            values[path] = (start, match.end())
            continue
        if stack and stack[-1][2] is not None:  # a value starts inside an array
            top = stack[-1]
            top[2] += 1
            path = (*top[0], top[2])
        if kind == 2:  # a container starts
            stack.append([path, match.start(), None if match.group(2) == "{" else -1])
        else:
            values[path] = match.span()
    return spans
