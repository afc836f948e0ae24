"""Every subschema of a schema, with its path: what lints and locators walk."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from engine.workbench.locate import Path

# Keywords whose value is one subschema, a list of them, or a name -> subschema map.
ONE = frozenset(
    {
        "items",
        "additionalProperties",
        "additionalItems",
        "contains",
        "not",
        "if",
        "then",
        "else",
        "propertyNames",
        "unevaluatedItems",
        "unevaluatedProperties",
    }
)
MANY = frozenset({"allOf", "anyOf", "oneOf", "prefixItems", "items"})
NAMED = frozenset({"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"})


def subschemas(schema: Any, path: Path = ()) -> Iterator[tuple[Path, dict[str, Any]]]:
    """(path, subschema) for every object subschema, parents before children."""
    if not isinstance(schema, dict):
        return
    yield path, schema
    for key, value in schema.items():
        if key in NAMED and isinstance(value, dict):
            for name, sub in value.items():
                yield from subschemas(sub, (*path, key, name))
        elif key in MANY and isinstance(value, list):
            for i, sub in enumerate(value):
                yield from subschemas(sub, (*path, key, i))
        elif key in ONE:
            yield from subschemas(value, (*path, key))


def keywords_on(path: Path) -> list[str]:
    """The keywords a subschema path goes through; property and $defs names left out."""
    out: list[str] = []
    name_next = False
    for part in path:
        if name_next:
            name_next = False
        elif isinstance(part, str):
            out.append(part)
            name_next = part in NAMED
    return out
