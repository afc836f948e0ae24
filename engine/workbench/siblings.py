"""Multi-file schemas (engine/schema/siblings.py) in the problems list and on the command line.

A `$ref` to a file that cannot be followed is one error, at the line and column of its
`$ref`. The window edits one file, so a bad `$ref` in another file, and any problem the
checks find inside a pulled-in file, is pointed at the root's `$ref` that leads there, its
message naming the file and the place in it. Ctrl+click on a `$ref` in the editor follows
it: `ref_at`, `ref_link` and `pointer_span` say where to.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path

from engine.schema.pointer import path_text
from engine.schema.siblings import (
    Bundled,
    ExternalRefError,
    Parts,
    file_part,
    fragment_tokens,
)
from engine.workbench.entries import Problem
from engine.workbench.locate import Spans, locate, path_parts


def ref_spot(spans: Spans, parts: Parts) -> tuple[int, int, int] | None:
    """(offset, line, column) of the `$ref` key of the object at `parts`."""
    offset = spans.start_of((*parts, "$ref"))
    if offset is None:
        return None
    return (offset, *spans.line_col(offset))


def ref_error_line(exc: ExternalRefError) -> str:
    """One line for the command line: `defs/a.json:4:15: the reference ... names no file`."""
    return f"{_where(exc)}: {exc.reason}"


def _where(exc: ExternalRefError) -> str:
    spot = ref_spot(locate(exc.text), exc.parts)
    return f"{exc.file}:{spot[1]}:{spot[2]}" if spot else exc.file


def ref_problem(exc: ExternalRefError, spans: Spans) -> Problem:
    """The error in the problems list of the root file, whose text `spans` locates; the
    reason first, so that a narrow list still shows it."""
    message = f"{exc.reason} (in {_where(exc)})" if exc.nested else exc.reason
    spot = ref_spot(spans, exc.entry)
    offset, line, column = spot if spot else (None, None, None)
    path = path_text((*exc.entry, "$ref"))
    return Problem("error", "schema", message, path, line, column, offset=offset)


def relocated(problem: Problem, bundled: Bundled, spans: Spans) -> Problem:
    """A problem at a place inside a pulled-in file, pointed at the root's `$ref` to it; its
    fix (offsets in the root's text) dropped. Others come back as they are."""
    parts = path_parts(problem.path)
    origin = bundled.origin(parts) if parts is not None else None
    if origin is None:
        return problem
    file, inner = origin
    entry = bundled.entries[file]
    spot = ref_spot(spans, entry)
    offset, line, column = spot if spot else (None, None, None)
    where = f"{file}, at {path_text(inner)}" if inner else file
    message = f"{problem.message} (in {where})"
    path = path_text((*entry, "$ref"))
    return dataclasses.replace(
        problem, message=message, path=path, line=line, column=column, offset=offset, fix=None
    )


@dataclass(frozen=True, slots=True)
class RefLink:
    """Where a `$ref` under the editor's cursor leads: `file` (None: the same text) and the
    pointer's tokens (None: an anchor's name, which is not followed)."""

    ref: str
    file: Path | None
    tokens: list[str] | None


def ref_at(spans: Spans, offset: int) -> str | None:
    """The `$ref` string whose value holds the character at `offset`, or None."""
    for parts, (start, end) in spans.values.items():
        if parts and parts[-1] == "$ref" and start <= offset < end:
            value = json.loads(spans.text[start:end])
            return value if isinstance(value, str) else None
    return None


def ref_link(ref: str, file: str | None, root: str | None) -> RefLink | str:
    """Where `ref`, written in `file`, leads; or why it is not followed (one line)."""
    relative = file_part(ref)
    tokens = fragment_tokens(ref.partition("#")[2])
    if relative is None:
        if not ref.startswith("#"):
            return f"{ref} is not followed: Maskscope reads no schema from the network"
        return RefLink(ref, None, tokens)
    if not file:
        return f"save the schema first: {ref} is read from the folder of the schema's file"
    here = Path(file).expanduser().resolve()
    folder = Path(root).expanduser().resolve() if root else here.parent
    target = (here.parent / relative).resolve()
    if not target.is_relative_to(folder):
        return f"{ref} leaves the folder Maskscope may read ({folder})"
    if not target.is_file():
        return f"{ref} names no file: {target} does not exist"
    return RefLink(ref, target, tokens)


def pointer_span(spans: Spans, tokens: list[str] | None) -> tuple[int, int] | None:
    """The span to show for the place a JSON pointer names in the text `spans` locates: its
    key when it has one, else its value; None when the pointer leads nowhere."""
    if tokens is None:
        return None
    parts: list[str | int] = []
    for token in tokens:
        is_index = token.isdigit() and (*parts, int(token)) in spans.values
        parts.append(int(token) if is_index else token)
    path = tuple(parts)
    if path not in spans.values:
        return None
    return spans.key(path) or spans.value(path)
