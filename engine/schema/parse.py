"""Parse schema text with line:column errors and check it against its meta-schema."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match
from jsonschema.protocols import Validator
from jsonschema.validators import validator_for
from jsonschema_specifications import REGISTRY as META_SCHEMAS
from referencing.exceptions import InvalidAnchor, NoSuchAnchor, PointerToNowhere, Unresolvable

from engine.errors import SchemaInvalidError, SchemaSyntaxError
from engine.schema import patterns
from engine.schema.nesting import too_deep

# Every validator judges `pattern` in bounded time: `^(a+)+$` cannot hang a run or a check.
patterns.install()

# Keywords whose values are data, not subschemas: a keyword inside them is not one.
_DATA_KEYWORDS = frozenset({"const", "enum", "default", "examples"})


def keyword_values(schema: Any, keyword: str) -> Iterator[Any]:
    """Every value the keyword has anywhere in the schema, data keywords left out."""
    if isinstance(schema, dict):
        if keyword in schema:
            yield schema[keyword]
        for key, value in schema.items():
            if key not in _DATA_KEYWORDS:
                yield from keyword_values(value, keyword)
    elif isinstance(schema, list):
        for item in schema:
            yield from keyword_values(item, keyword)


def json_error_reason(exc: json.JSONDecodeError) -> str:
    """The reason without a place: json's "Unterminated string starting at" expects one
    to follow, and every caller puts its own (line and column) elsewhere."""
    return exc.msg.removesuffix(" at")


def parse_json_text(text: str) -> Any:
    """json.loads, but a syntax error carries line, column and offset."""
    if not text.strip():
        raise SchemaSyntaxError("the schema is empty", 1, 1, 0)
    deep = too_deep(text)  # before json and every walker recurse into it
    if deep is not None:
        raise SchemaSyntaxError(deep.reason, deep.line, deep.column, deep.offset)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise SchemaSyntaxError(json_error_reason(exc), exc.lineno, exc.colno, exc.pos) from None


def validator_class(schema: Any) -> type:
    """The validator for the schema's own `$schema`, Draft 2020-12 when it names none."""
    if isinstance(schema, dict) and "$schema" in schema:
        if not isinstance(schema["$schema"], str):  # jsonschema's lookup raises on one
            raise SchemaInvalidError(
                "$schema must be a string (a meta-schema's URI)", "$['$schema']"
            )
        return validator_for(schema, default=Draft202012Validator)
    return Draft202012Validator


def schema_validator(schema: Any) -> Validator:
    """A validator for the schema, formats asserted, that never fetches anything.

    jsonschema's default registry still downloads any `$ref` it cannot find in the
    document (deprecated, not yet removed); this one holds only the meta-schemas, so a
    remote reference is Unresolvable and `unresolvable_error` says so."""
    cls = validator_class(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER, registry=META_SCHEMAS)


def unresolvable_error(exc: Unresolvable) -> SchemaInvalidError:
    """The user's words for a `$ref` jsonschema could not follow."""
    cause = getattr(exc, "_wrapped", exc)  # jsonschema wraps referencing's own error
    if isinstance(cause, PointerToNowhere):
        return SchemaInvalidError(f"the reference #{cause.ref} points nowhere in the schema")
    if isinstance(cause, NoSuchAnchor | InvalidAnchor):
        return SchemaInvalidError(f"the reference #{cause.anchor} names no anchor in the schema")
    return SchemaInvalidError(
        f"remote references are not supported: {cause.ref} (nothing is fetched; copy what "
        "it names into $defs and refer to it as #/$defs/NAME)"
    )


def check_schema(schema: Any, text: str | None = None) -> None:
    """Raise SchemaInvalidError when the schema breaks its meta-schema."""
    if isinstance(schema, bool):
        if not schema:
            raise SchemaInvalidError(
                "the schema `false` accepts nothing, so nothing can be generated"
            )
        return
    if not isinstance(schema, dict):
        raise SchemaInvalidError(
            f"a schema must be a JSON object or a boolean, not {type(schema).__name__}"
        )
    cls = validator_class(schema)
    meta = cls(cls.META_SCHEMA)
    error = best_match(meta.iter_errors(schema))
    if error is not None:
        path = error.json_path
        raise SchemaInvalidError(error.message, path, _line_of(text, list(error.absolute_path)))


def parse_schema(text: str) -> Any:
    """Parse and meta-validate schema text; the result is the schema as Python data."""
    schema = parse_json_text(text)
    check_schema(schema, text)
    return schema


def _line_of(text: str | None, path: list[Any]) -> int | None:
    """Best-effort line of the place `path` names, for the editor's error marker.

    Walks the keys in order, each searched after the previous one, so that
    `properties.a.type` finds the `type` inside `a`, not the first `type`.
    """
    if not text:
        return None
    offset = 0
    for key in (p for p in path if isinstance(p, str)):
        found = text.find(json.dumps(key), offset)
        if found < 0:
            break
        offset = found
    return text.count("\n", 0, offset) + 1
