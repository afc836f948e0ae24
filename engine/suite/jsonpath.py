"""The small JSON paths a suite's expectations use: `$`, `.key`, `["key"]` and `[n]`."""

from __future__ import annotations

import json
import re
from typing import Any

from engine.errors import MaskscopeError

# One step after `$`: .name, [3], or ["any key"] (a JSON string, so quotes can be escaped).
_STEP = re.compile(r'\.([A-Za-z_][A-Za-z0-9_-]*)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]')

Step = str | int


class PathError(MaskscopeError):
    """A path that this small syntax cannot read."""

    kind = "path"


def parse_path(path: str) -> tuple[Step, ...]:
    """The keys (str) and indexes (int) that `path` names, in order."""
    if not path.startswith("$"):
        raise PathError(f"a JSON path starts with $, not {path!r}")
    steps: list[Step] = []
    at = 1
    while at < len(path):
        match = _STEP.match(path, at)
        if match is None:
            raise PathError(f"cannot read the JSON path {path!r} at {path[at:]!r}")
        name, index, quoted = match.groups()
        steps.append(name if name is not None else int(index) if index else json.loads(quoted))
        at = match.end()
    return tuple(steps)


def format_path(steps: tuple[Step, ...]) -> str:
    """The path text for `steps`, as parse_path reads it back."""
    out = "$"
    for step in steps:
        if isinstance(step, int):
            out += f"[{step}]"
        elif re.fullmatch(r"[A-Za-z_][A-Za-z0-9_-]*", step):
            out += f".{step}"
        else:
            out += f"[{json.dumps(step, ensure_ascii=False)}]"
    return out


MISSING = object()  # what lookup returns where a path leads nowhere (None is JSON's null)


def lookup(value: Any, steps: tuple[Step, ...]) -> Any:
    """The value at `steps` inside `value`, or MISSING."""
    for step in steps:
        if isinstance(step, int):
            if not isinstance(value, list) or step >= len(value):
                return MISSING
        elif not isinstance(value, dict) or step not in value:
            return MISSING
        value = value[step]
    return value
