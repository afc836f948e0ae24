"""The overhead table's floor: what a step costs beside its forward pass before any grammar,
record or hand-over, measured on the same model in the same run.

An exact, fully recorded step must copy the logits out before the next forward pass
(llama.cpp reuses its buffer, and the record needs every token's), and a Gumbel-max draw
(engine/decode/gumbel.py) must read them twice more: its 4,096 scored tokens, scattered
over the vocabulary, and one pass of block maxima. A bare loop of forward passes doing only
that gives the least overhead this machine allows the decode loop: on a CPU build the
forward pass evicts the caches those reads need, so they cost several times their warm
figure, and the table says how much of a step's overhead that is.
"""

from __future__ import annotations

import time

import numpy as np

from engine.bench.steps import TEMPERATURE, BackendSamples, backend_summary
from engine.decode.distribution import BLOCK, Distribution
from engine.decode.gumbel import TOP
from engine.model.llama import Model

FLOOR_PROMPT = "Write a JSON object that describes a small invoice."
_FIRST_IDS = 256  # fed back as the next token: past Gemma's control and byte tokens


def floor_ratios(model: Model, steps: int, seed: int) -> dict[str, float | None]:
    """The overhead of `steps` bare steps, read as the bench reads every step's
    (engine/bench/steps.py): "copy", the logits copied out only, as the step copies them
    (Distribution.scale); "copy_and_draw", also the draw's two reads."""
    return {
        "copy": _bare_ratio(model, steps, seed, draw=False),
        "copy_and_draw": _bare_ratio(model, steps, seed, draw=True),
    }


def _bare_ratio(model: Model, steps: int, seed: int, draw: bool) -> float | None:
    n = model.n_vocab
    ids = np.sort(np.random.default_rng(seed).choice(n, min(TOP, n), replace=False))
    dist = Distribution(n)
    whole = n // BLOCK * BLOCK
    model.reset()
    model.eval_prompt(model.tokenize(FLOOR_PROMPT, add_special=True))
    token, samples = _FIRST_IDS, BackendSamples()
    last = time.perf_counter()
    for _ in range(steps):
        logits = model.logits()
        dist.scale(logits, TEMPERATURE)
        if draw:  # the token fed back depends on both reads, so neither is skipped
            block = int(logits[:whole].reshape(-1, BLOCK).max(axis=1).argmax())
            token = int(ids[int(np.argmax(logits[ids]))]) + block
        start = time.perf_counter()
        model.eval_token(_FIRST_IDS + token % _FIRST_IDS)
        now = time.perf_counter()
        samples.forward.append((now - start) * 1000.0)
        samples.step.append((now - last) * 1000.0)
        last = now
    return backend_summary(samples)["overhead_ratio"]
