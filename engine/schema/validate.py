"""Check generated text: does it parse, and does it satisfy the schema?"""

from __future__ import annotations

import json
from typing import Any

from jsonschema import (
    Draft4Validator,
    Draft6Validator,
    Draft7Validator,
    Draft201909Validator,
    Draft202012Validator,
)
from referencing.exceptions import Unresolvable

from engine.records import ValidationIssue
from engine.schema.parse import (
    json_error_reason,
    keyword_values,
    schema_validator,
    unresolvable_error,
    validator_class,
)

# The formats each draft's spec defines. jsonschema checks some of them only when a
# library for them is installed (`jsonschema[format-nongpl]`); without it, it skips them.
_FORMATS_4 = frozenset({"date-time", "email", "hostname", "ipv4", "ipv6", "uri"})
_FORMATS_6 = _FORMATS_4 | {"uri-reference", "uri-template", "json-pointer"}
_FORMATS_7 = _FORMATS_6 | {
    "date",
    "time",
    "idn-email",
    "idn-hostname",
    "iri",
    "iri-reference",
    "relative-json-pointer",
    "regex",
}
_FORMATS_2019 = _FORMATS_7 | {"duration", "uuid"}
_SPEC_FORMATS: dict[type, frozenset[str]] = {
    Draft4Validator: _FORMATS_4,
    Draft6Validator: _FORMATS_6,
    Draft7Validator: _FORMATS_7,
    Draft201909Validator: _FORMATS_2019,
    Draft202012Validator: _FORMATS_2019,
}


def parse_output(text: str) -> tuple[Any, str | None]:
    """The parsed JSON and None, or None and a readable parse error."""
    try:
        return json.loads(text), None
    except json.JSONDecodeError as exc:
        return None, f"{json_error_reason(exc)} at line {exc.lineno}, column {exc.colno}"


def validation_issues(instance: Any, schema: Any) -> tuple[ValidationIssue, ...]:
    """Every jsonschema error, ordered by where it is in the instance. Formats are
    asserted, as the format-assertion vocabulary has it, where jsonschema can check them.
    A `$ref` it cannot follow (a remote one: nothing is fetched) is a SchemaInvalidError."""
    try:
        found = list(schema_validator(schema).iter_errors(instance))
    except Unresolvable as exc:
        raise unresolvable_error(exc) from None
    errors = sorted(found, key=lambda e: list(map(str, e.absolute_path)))
    return tuple(ValidationIssue(path=e.json_path, message=e.message) for e in errors)


def unchecked_formats(schema: Any) -> tuple[str, ...]:
    """The formats the schema uses that its draft defines but this jsonschema cannot
    check, because the library its checker needs is not installed."""
    cls = validator_class(schema)
    known = _SPEC_FORMATS.get(cls, frozenset())
    missing = known - set(cls.FORMAT_CHECKER.checkers)
    used = {f for f in keyword_values(schema, "format") if isinstance(f, str)}
    return tuple(sorted(used & missing))
