"""No mask lets through a byte sequence that is not UTF-8, on either backend.

Gemma's vocabulary holds a token for each byte. llama.cpp decodes a lone 0xF5-0xFF as the
start of a code point past U+10FFFF, and after 0xE0 it takes the overlong 0x82-0x9F, so
a grammar that a trained model follows soundly can still be left with non-UTF-8 output by
a model that picks those tokens (tests/engine/test_adversarial_models.py runs such models).
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from engine.examples import examples
from engine.grammar.compile import compile_schema
from engine.grammar.compilers.maskscope.rules import _JSON_PLAIN, PRIMITIVES, char_class
from engine.masking.base import make_backend
from tests.adversary import lone_byte_tokens

BACKENDS = ["llamacpp", "llguidance"]
# Schemas whose natural class is a negated one: a pattern's `[^...]`, any character, keys
# outside a set, a format.
NEGATED = [
    {"type": "string", "pattern": "^[^a-z]{1,8}$"},
    {"type": "string", "pattern": "^.{2,5}$"},
    {"type": "object", "properties": {"a": {"type": "integer"}}, "additionalProperties": True},
    {"type": "object", "propertyNames": {"pattern": "^[^_]"}},
    {"type": "string", "format": "email"},
]


def test_json_plain_is_what_char_class_writes():
    assert char_class([(0, 0x1F), (0x22, 0x22), (0x5C, 0x5C)], negate=True) == _JSON_PLAIN


_SCHEMAS = {e.name: e.schema_text for e in examples()} | {
    f"negated-{i}": json.dumps(s) for i, s in enumerate(NEGATED)
}


@pytest.mark.parametrize("name", list(_SCHEMAS))
def test_no_negated_class_outside_the_rule_that_matches_nothing(name):
    gbnf = compile_schema(_SCHEMAS[name]).gbnf
    for line in gbnf.splitlines():
        if not line.startswith("ws-never ::="):
            assert not re.search(r"\[\^", line), line
    assert PRIMITIVES["ws-never"].startswith("[\\x00] ")  # llama.cpp stops there


@pytest.fixture(scope="module")
def byte_tokens(model):
    found = lone_byte_tokens(model)
    assert len(found) == 128
    return found


def _allowed_bytes(backend, byte_tokens) -> list[int]:
    ids = np.array(list(byte_tokens.values()), dtype=np.int32)
    return [b for b, ok in zip(byte_tokens, backend.check(ids), strict=True) if ok]


@pytest.mark.parametrize("backend_name", BACKENDS)
def test_no_lone_high_byte_after_the_opening_brace(model, currency, byte_tokens, backend_name):
    _, compiled = currency
    backend = make_backend(backend_name, model, compiled)
    try:
        for t in model.tokenize("{", add_special=False):
            backend.accept(t)
        assert _allowed_bytes(backend, byte_tokens) == []
    finally:
        backend.close()


@pytest.mark.parametrize("backend_name", BACKENDS)
def test_after_e0_only_the_bytes_that_make_a_character(model, byte_tokens, backend_name):
    schema = {"type": "object", "properties": {"s": {"type": "string"}}, "required": ["s"]}
    backend = make_backend(backend_name, model, compile_schema(json.dumps(schema)))
    try:
        for t in model.tokenize('{"s": "', add_special=False):
            backend.accept(t)
        backend.accept(byte_tokens[0xE0])
        assert _allowed_bytes(backend, byte_tokens) == list(range(0xA0, 0xC0))
        assert not backend.check(model.eog_ids).any()  # never end inside a character
    finally:
        backend.close()
