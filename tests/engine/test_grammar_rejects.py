"""Each backend refuses text that breaks the schema, at the character that breaks it.

The text goes in one character at a time, each as its own one-character token, so the
walk does not depend on how the tokenizer would have split it.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

from engine.grammar.compile import compile_schema
from engine.masking import MaskBackend, make_backend
from engine.model.llama import Model

BACKENDS = ["llguidance", "llamacpp"]
# (schema, text it allows, text it refuses, index of the character refused)
CASES = {
    "maxLength": ({"type": "string", "maxLength": 3}, '"abc"', '"abcd"', 4),
    "minItems": ({"type": "array", "items": {"type": "integer"}, "minItems": 1}, "[1]", "[]", 1),
    "raw-newline": ({"type": "string"}, '"a\\nb"', '"a\nb"', 2),
}


def _first_refused(model: Model, backend: MaskBackend, text: str) -> int | None:
    """Index of the first character the backend refuses after those before it, or None."""
    for i, char in enumerate(text):
        (token,) = model.tokenize(char, add_special=False)
        allowed = bool(backend.check(np.array([token], dtype=np.int32))[0])
        assert allowed == bool(backend.full_mask()[token])  # both answers agree
        if not allowed:
            return i
        backend.accept(token)
    return None


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
@pytest.mark.parametrize("backend", BACKENDS)
def test_backend_refuses_what_the_schema_forbids(
    model: Model, backend: str, case: tuple[dict[str, Any], str, str, int]
) -> None:
    schema, allowed, refused, at = case
    b = make_backend(backend, model, compile_schema(json.dumps(schema)))
    try:
        assert _first_refused(model, b, allowed) is None
        assert b.full_mask()[model.eog_ids].any()  # and the output may end there
        b.reset()
        assert _first_refused(model, b, refused) == at
    finally:
        b.close()
