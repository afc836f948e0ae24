"""Forced tokens ("what if" branches), unconstrained runs and recorded logits, on the real
model."""

from __future__ import annotations

import math

import pytest

from engine.records import FinishReason, StepRecord
from engine.runs.headless import run_to_end
from engine.settings import GenerationSettings

SETTINGS = GenerationSettings(seed=0, max_tokens=40)


def _run(model, compiled, prompt, settings=SETTINGS, forced=()):
    from engine.decode.loop import generate

    records: list[StepRecord] = []
    gen = generate(model, compiled, prompt, settings, forced=forced)
    while True:
        try:
            records.append(next(gen))
        except StopIteration as done:
            return records, done.value


@pytest.fixture(scope="module")
def original(model, currency):
    ex, compiled = currency
    records: list[StepRecord] = []
    result = run_to_end(model, compiled, ex.prompt, SETTINGS, records.append)
    return records, result


def _fork_step(records: list[StepRecord]) -> StepRecord:
    """The first step with a valid candidate other than the token chosen."""
    return next(r for r in records if any(c.valid and c.id != r.token_id for c in r.top_raw))


def test_a_branch_keeps_the_steps_before_it_and_writes_the_forced_token(model, currency, original):
    ex, compiled = currency
    records, _ = original
    fork = _fork_step(records)
    other = next(c for c in fork.top_raw if c.valid and c.id != fork.token_id)
    prefix = [r.token_id for r in records[: fork.step]]
    branch, result = _run(model, compiled, ex.prompt, forced=[*prefix, other.id])
    for mine, theirs in zip(branch[: fork.step], records[: fork.step], strict=True):
        assert (mine.token_id, mine.valid_mass, mine.n_valid) == (
            theirs.token_id,
            theirs.valid_mass,
            theirs.n_valid,
        )
    forked = branch[fork.step]
    assert forked.token_id == other.id
    assert forked.top_raw == fork.top_raw  # the same distribution: only the choice differs
    assert result.finish_reason in (FinishReason.GRAMMAR_COMPLETE, FinishReason.END_OF_GENERATION)
    assert result.valid  # later steps are drawn under the grammar


def test_a_forced_token_the_grammar_forbids_ends_the_run_with_a_message(model, currency, original):
    ex, compiled = currency
    records, _ = original
    first = records[0]
    masked = next(c for c in first.top_raw if not c.valid)
    branch, result = _run(model, compiled, ex.prompt, forced=[masked.id])
    assert branch == [] and result.finish_reason is FinishReason.ERROR
    assert "forbids" in result.message and "step 1" in result.message


def test_an_unconstrained_run_has_no_mask_and_is_still_validated(model, currency, original):
    ex, compiled = currency
    settings = GenerationSettings(seed=0, max_tokens=12, constrained=False)
    records, result = _run(model, compiled, ex.prompt, settings)
    assert records and all(r.n_valid == model.n_vocab for r in records)
    assert all(math.isclose(r.valid_mass, 1.0, rel_tol=1e-4) for r in records)
    assert all(c.valid for r in records for c in r.top_raw)
    # The model alone does not start with "{": it answers in words, so the output fails.
    assert not result.valid and result.parse_error is not None
    constrained, _ = original  # the same prompt: the same first distribution, unmasked
    assert [c.id for c in records[0].top_raw] == [c.id for c in constrained[0].top_raw]


def test_recorded_logits_give_the_recorded_probabilities(original):
    records, _ = original
    t = SETTINGS.temperature
    for record in records[:5]:
        a, b = record.top_raw[0], record.top_raw[1]
        assert a.logit is not None and b.logit is not None
        # softmax(l / T): the ratio of two probabilities is exp((l_a - l_b) / T).
        assert math.isclose(a.p_raw / b.p_raw, math.exp((a.logit - b.logit) / t), rel_tol=1e-3)
