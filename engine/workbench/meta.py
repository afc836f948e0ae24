"""Every meta-schema error of a schema, each located, not only the best match."""

from __future__ import annotations

from typing import Any

from jsonschema.exceptions import ValidationError, best_match

from engine.schema.parse import validator_class
from engine.schema.pointer import path_text
from engine.workbench.entries import Problem
from engine.workbench.locate import Spans

_WIDTH = 160  # a message quotes the offending value, which may be a whole subschema


def one_line(message: str, width: int = _WIDTH) -> str:
    flat = " ".join(message.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def meta_problems(schema: Any, spans: Spans) -> list[Problem]:
    """One error Problem per distinct meta-schema error, at the place it names."""
    if isinstance(schema, bool):
        if schema:
            return []
        return [_at(spans, (), "the schema `false` accepts nothing, so nothing can be generated")]
    if not isinstance(schema, dict):
        kind = type(schema).__name__
        return [_at(spans, (), f"a schema must be a JSON object or a boolean, not {kind}")]
    cls = validator_class(schema)
    found: dict[tuple[tuple[Any, ...], str], Problem] = {}
    for error in cls(cls.META_SCHEMA).iter_errors(schema):
        # Under anyOf/oneOf the top error only says "not valid under any": the best match
        # among its branches says what is wrong.
        best = _specific(best_match([error]) or error)
        parts = tuple(best.absolute_path)
        message = one_line(best.message)
        found.setdefault((parts, message), _at(spans, parts, message))
    return list(found.values())


def _specific(error: ValidationError) -> ValidationError:
    """Within "not valid under any of the given schemas", the branch the value was meant
    for (its type fits, another keyword failed), when there is one."""
    if error.validator not in ("anyOf", "oneOf") or not error.context:
        return error
    fitting = [e for e in error.context if e.validator != "type"]
    if not fitting:
        return error
    return _specific(max(fitting, key=lambda e: len(e.absolute_path)))


def _at(spans: Spans, parts: tuple[Any, ...], message: str) -> Problem:
    offset = spans.start_of(parts)
    line, column = spans.line_col(offset) if offset is not None else (None, None)
    return Problem("error", "schema", message, path_text(parts), line, column, offset=offset)
