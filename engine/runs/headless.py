"""A run driven to its end without a window: the headless convenience the tests use.

It lives outside engine/decode, because it compiles a compilers' cross-check grammar before
the run, as every caller of generate() does: decoding itself never calls a compiler.
"""

from __future__ import annotations

from collections.abc import Callable

from engine.decode.loop import generate
from engine.grammar.compile import CompiledSchema, cross_grammar
from engine.model.llama import Model
from engine.records import RunResult, StepRecord
from engine.settings import GenerationSettings


def run_to_end(
    model: Model,
    compiled: CompiledSchema,
    prompt: str,
    settings: GenerationSettings,
    on_step: Callable[[StepRecord], None] | None = None,
) -> RunResult:
    """Drive generate() to completion, each record to `on_step`."""
    gen = generate(model, compiled, prompt, settings, cross=cross_grammar(compiled, settings))
    while True:
        try:
            record = next(gen)
        except StopIteration as stop:
            return stop.value
        if on_step is not None:
            on_step(record)
