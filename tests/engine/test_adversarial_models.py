"""Soundness under a model that picks anything: tiny random-weight models in three tokenizer
families run every compiler on every backend. A run the grammar ended must be valid, and no
step may allow a token that leaves the output something other than UTF-8 (tests/adversary.py).

`make test` runs a fixed sample; `make soak` runs every bundled example with more seeds and
two more families (MASKSCOPE_ADVERSARY_SEEDS sets how many).
"""

from __future__ import annotations

import os

import pytest

from engine.examples import examples, load_example
from engine.settings import ModelSettings
from tests.adversary import PAIRINGS, Breakers, Tally, run_one
from tests.tiny_models import tiny_model

SAMPLE_FAMILIES = ["llama-spm", "llama-bpe", "gemma3"]  # SentencePiece, byte-level BPE, Gemma
# With a core to spare, a run draws by the Gumbel race whose noise is made ahead
# (engine/decode/gumbel.py), not by inverse CDF: the adversary faces that draw too.
SPARE_CORE_FAMILIES = ["llama-spm", "gemma3"]
SWEEP_FAMILIES = [*SAMPLE_FAMILIES, "phi-3", "qwen2"]
SAMPLE_EXAMPLES = ["currency", "person"]
SAMPLE_SEEDS = 2
MAX_TOKENS = 100  # a random model rarely finishes a long object: past this, a run is cut


def _model(family: str, threads: int | None = None):
    from engine.model.llama import Model

    return Model.load(ModelSettings(path=str(tiny_model(family)), n_ctx=1024, n_threads=threads))


def _sweep(family: str, names: list[str], seeds: int, threads: int | None = None) -> Tally:
    model = _model(family, threads)
    try:
        breakers = Breakers(model)
        tally = Tally()
        for name in names:
            example = load_example(name)
            for compiler, backend in PAIRINGS:
                for seed in range(seeds):
                    run_one(model, breakers, example.schema_text, example.prompt,
                            compiler, backend, seed, MAX_TOKENS, tally)  # fmt: skip
        return tally
    finally:
        model.close()


def _report(family: str, tally: Tally) -> str:
    return (
        f"{family}: {tally.runs} runs, {tally.steps} steps, {tally.ended_by_grammar} ended by "
        f"the grammar, {tally.truncated} cut at {MAX_TOKENS} tokens"
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    ("family", "threads"),
    [
        *((f, None) for f in SAMPLE_FAMILIES),
        *(pytest.param(f, 1, id=f"{f}-spare-core") for f in SPARE_CORE_FAMILIES),
    ],
)
def test_random_model_never_breaks_the_grammar_promise(family, threads):
    if threads == 1 and (os.cpu_count() or 1) < 2:
        pytest.skip("a single-core machine has no core to spare")
    tally = _sweep(family, SAMPLE_EXAMPLES, SAMPLE_SEEDS, threads)
    print(_report(family, tally))
    assert tally.bad_steps == []
    assert tally.bad_endings == []
    assert tally.errors == []
    assert tally.runs == len(SAMPLE_EXAMPLES) * len(PAIRINGS) * SAMPLE_SEEDS
    assert tally.ended_by_grammar > 0  # the sample does reach the end of a grammar


@pytest.mark.soak
@pytest.mark.parametrize("family", SWEEP_FAMILIES)
def test_random_model_sweep(family):
    seeds = int(os.environ.get("MASKSCOPE_ADVERSARY_SEEDS", "10"))
    tally = _sweep(family, [e.name for e in examples()], seeds)
    print(_report(family, tally))
    assert tally.bad_steps == []
    assert tally.bad_endings == []
    assert tally.errors == []
