"""One reading of JSON pointers (engine/schema/pointer.py), where four walkers each had
their own: escapes, percent-encoding, anchors and dead ends."""

from __future__ import annotations

import pytest

from engine.schema.pointer import local_ref, local_target, pointer_tokens

DOC = {"$defs": {"a/b": {"type": "string"}, "c~d": [{"x": 1}], "e f": True}}


@pytest.mark.parametrize(
    ("ref", "found"),
    [
        ("#", DOC),
        ("#/$defs/a~1b", {"type": "string"}),
        ("#/$defs/c~0d/0/x", 1),
        ("#/$defs/e%20f", True),
        ("#anchor", None),
        ("#/$defs/missing", None),
        ("other.json#/x", None),
        (5, None),
    ],
)
def test_a_local_reference_is_followed_or_none(ref, found):
    assert local_target(DOC, ref) == found


def test_tokens_and_references_round_trip():
    tokens = ["$defs", "a/b", "c~d", "0"]
    ref = local_ref(tokens)
    assert ref == "#/$defs/a~1b/c~0d/0"
    assert pointer_tokens(ref[1:]) == tokens
    with pytest.raises(ValueError):
        pointer_tokens("no-slash")
