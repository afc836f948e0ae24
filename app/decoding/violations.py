"""Tie a run's validation errors to the Problems list's unenforced warnings.

After every run the output is validated with jsonschema (the same validator, format checker
and offline registry as ``engine.schema.validate``). Each error whose keyword the grammar
was reported not to enforce is a *violation*: the warning said this could happen, and it
did. A violation carries where it is in the output text, to be highlighted, and the
warning it breaks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from referencing.exceptions import Unresolvable

from engine.errors import PatternTimeoutError
from engine.schema.parse import schema_validator, unresolvable_error
from engine.schema.pointer import path_text
from engine.workbench.entries import Problem
from engine.workbench.locate import locate, path_parts


@dataclass(frozen=True, slots=True)
class Violation:
    path: str  # JSON path in the output, such as $.items[0].name
    keyword: str  # the schema keyword the output breaks
    schema_path: str  # JSON path of the subschema holding that keyword
    message: str
    warning: Problem | None  # the unenforced warning that said it could happen
    span: tuple[int, int] | None  # character offsets of the value in the output text


def unenforced_keyword(problem: Problem) -> str | None:
    return problem.keyword if problem.kind == "unenforced" else None


def _warning_for(keyword: str, schema_path: str, warnings: Sequence[Problem]) -> Problem | None:
    candidates = [w for w in warnings if unenforced_keyword(w) == keyword]
    for w in candidates:
        if w.path == schema_path:
            return w
    # Through a $ref the schema path is the referring one: the keyword alone must do.
    return candidates[0] if len(candidates) == 1 else None


def find_violations(
    schema: Any, text: str, value: Any, problems: Sequence[Problem]
) -> list[Violation]:
    """Every jsonschema error of `value` (parsed from `text`) against `schema`; those of an
    unenforced keyword carry its warning."""
    if isinstance(schema, bool):
        return []
    # The offline registry: a remote `$ref` is never fetched (jsonschema's default one
    # would download it), it is reported as a violation that says why it was not checked.
    validator = schema_validator(schema)
    warnings = [p for p in problems if p.kind == "unenforced"]
    spans = locate(text)
    found: list[Violation] = []
    try:
        errors = list(validator.iter_errors(value))
    except PatternTimeoutError:  # a pattern past its time limit: the errors show, untied
        errors = []
    except Unresolvable as exc:
        return [Violation("$", "$ref", "$", unresolvable_error(exc).message, None, None)]
    for error in errors:
        keyword = str(error.validator)
        schema_path = path_text(tuple(error.absolute_schema_path)[:-1])
        path = error.json_path
        parts = path_parts(path)
        span = spans.value(parts) if parts is not None else None
        found.append(
            Violation(
                path,
                keyword,
                schema_path,
                error.message,
                _warning_for(keyword, schema_path, warnings),
                span,
            )
        )
    found.sort(key=lambda v: (v.span or (len(text), 0), v.path))
    return found
