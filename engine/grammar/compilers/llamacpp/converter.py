"""llama-cpp-python's JSON-Schema converter, with its faults worked around."""

from __future__ import annotations

import json
from typing import Any

from llama_cpp.llama_grammar import json_schema_to_gbnf

from engine.errors import GrammarError
from engine.grammar.rewrite import fold_bounded_repeats
from engine.schema.parse import keyword_values

_JSON_TYPES = ("object", "array", "string", "number", "boolean", "null")
_LOOSE_CHAR = 'char ::= [^"\\\\] |'
_STRICT_CHAR = 'char ::= [^"\\\\\\x00-\\x1F] |'
# Keywords that constrain nothing: a schema made only of them accepts any value.
_ANNOTATIONS = {"$schema", "$id", "$comment", "title", "description", "examples", "default"}


def schema_to_gbnf(schema: Any) -> str:
    """llama.cpp's JSON-Schema converter, with its crashes turned into GrammarError."""
    # `true` and `{}` mean "any JSON value"; the converter would narrow them to objects.
    if schema is True or (isinstance(schema, dict) and not set(schema) - _ANNOTATIONS):
        schema = {**(schema if isinstance(schema, dict) else {}), "type": list(_JSON_TYPES)}
    _check_refs(schema)
    try:
        gbnf = json_schema_to_gbnf(json.dumps(schema))
    except RecursionError:
        raise GrammarError(
            "the schema is too deeply nested or self-referencing to convert"
        ) from None
    except Exception as exc:  # the converter fails with asserts and KeyErrors on what it lacks
        reason = str(exc) or type(exc).__name__
        raise GrammarError(f"llama.cpp's JSON-Schema converter failed: {reason}") from None
    # The converter spells maxLength: n as optionals nested n deep, which llama.cpp's
    # recursive parser cannot read past a few thousand (65535 crashed it); `a{0,n}` is
    # the same language and parses flat.
    return fold_bounded_repeats(_strict_json_strings(gbnf))


def _check_refs(schema: Any) -> None:
    """Say what the converter would put badly: it names a command-line flag Maskscope does
    not have for a remote $ref, and prints the whole schema for a target it cannot find."""
    for ref in keyword_values(schema, "$ref"):
        if not isinstance(ref, str):  # a property named "$ref"
            continue
        if not ref.startswith("#"):
            raise GrammarError(
                f"remote references are not supported: $ref {ref} points outside this "
                "schema, and Maskscope reads no other schema (no file, no network): copy "
                "what it names into $defs and refer to it as #/$defs/NAME"
            )
        target = schema
        for part in ref[2:].split("/") if ref.startswith("#/") else ():
            if not isinstance(target, dict) or part not in target:
                raise GrammarError(f"$ref {ref} points to nothing in this schema")
            target = target[part]


def _strict_json_strings(gbnf: str) -> str:
    """Keep raw control characters out of strings, as JSON requires.

    The converter's `char` rule is `[^"\\]`, which lets a model write a raw newline
    inside a string: the grammar accepts it and json.loads then refuses the output.
    """
    return gbnf.replace(_LOOSE_CHAR, _STRICT_CHAR)
