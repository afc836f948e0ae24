"""Each bundled example finishes within its own settings (resources/examples/*.settings.json
on top of the defaults), on the real model: a demo that ends "truncated" teaches nothing."""

from __future__ import annotations

import pytest

from engine.decode.loop import run_to_end
from engine.examples import EXAMPLE_ORDER, load_example
from engine.grammar.compile import compile_schema
from engine.records import FinishReason
from engine.settings import GenerationSettings

FINISHED = (FinishReason.GRAMMAR_COMPLETE, FinishReason.END_OF_GENERATION)
# Greedy, then the default temperature with two seeds (the invoice's seed 1 writes about 360
# tokens, past the default 256): the output length varies with both.
RUNS = [(0.0, 0)] + [(GenerationSettings().temperature, seed) for seed in range(2)]


@pytest.mark.slow
@pytest.mark.parametrize("name", EXAMPLE_ORDER)
def test_example_finishes_within_its_own_settings(request, model, name: str):
    if name == "invoice":
        # Our compiler allows a number's digits (and a fraction's trailing zeros, which any
        # multipleOf allows too) without end, as JSON does; the converter capped them at 16.
        # At 0.7, seed 0 writes "unit_price": 180.000... until max_tokens.
        request.applymarker(pytest.mark.xfail(strict=True, reason="a number runs away"))
    example = load_example(name)
    compiled = compile_schema(example.schema_text)
    for temperature, seed in RUNS:
        base = GenerationSettings(temperature=temperature, seed=seed)
        settings = example.settings(base)
        result = run_to_end(model, compiled, example.prompt, settings)
        assert result.finish_reason in FINISHED, (temperature, seed, result.n_tokens)
