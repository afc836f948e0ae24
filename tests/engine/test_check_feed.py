"""feed_text: llguidance's counted prefix gives the same verdict as a mask per token."""

from __future__ import annotations

import pytest

from engine.check.feed import Fed, feed_text
from engine.grammar.compile import CompiledSchema
from engine.masking import make_backend

GBNF = 'root ::= "{\\"a\\": " [0-9]+ "}"'


@pytest.mark.parametrize(
    "text, fed",
    [
        ('{"a": 12}', Fed(True)),
        ('{"a": x}', Fed(False, 5, " x")),  # the refused token is " x"
        ('{"a": 1', Fed(False, 7, "")),  # the grammar wants more
    ],
)
def test_counted_and_masked_feeds_agree(model, text, fed):
    compiled = CompiledSchema(schema=True, gbnf=GBNF, text="")
    counted = make_backend("llguidance", model, compiled)
    masked = make_backend("llguidance", model, compiled)
    masked.count_valid = None  # hides the fast path: a mask per token
    try:
        assert feed_text(model, counted, text) == fed
        assert feed_text(model, masked, text) == fed
        assert feed_text(model, counted, text) == fed  # reset between feeds
    finally:
        counted.close()
        masked.close()
