"""Check generated text: does it parse, and does it satisfy the schema?"""

from __future__ import annotations

import json
from typing import Any

from engine.records import ValidationIssue
from engine.schema import validator_class


def parse_output(text: str) -> tuple[Any, str | None]:
    """The parsed JSON and None, or None and a readable parse error."""
    try:
        return json.loads(text), None
    except json.JSONDecodeError as exc:
        return None, f"{exc.msg} at line {exc.lineno}, column {exc.colno}"


def validation_issues(instance: Any, schema: Any) -> tuple[ValidationIssue, ...]:
    """Every jsonschema error, ordered by where it is in the instance."""
    validator = validator_class(schema)(schema)
    errors = sorted(validator.iter_errors(instance), key=lambda e: list(map(str, e.absolute_path)))
    return tuple(ValidationIssue(path=e.json_path, message=e.message) for e in errors)
