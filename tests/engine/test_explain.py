"""The written-out renormalisation uses the step record's own numbers, on the real model."""

from __future__ import annotations

import math

import pytest

from engine.explain.renormalise import Division, explain
from engine.records import Candidate, StepRecord
from engine.runs.headless import run_to_end
from engine.settings import GenerationSettings


@pytest.fixture(scope="module")
def currency_value_step(model, currency) -> StepRecord:
    """The step right after `"currency": "` (whitespace aside): where the model picks the
    currency."""
    ex, compiled = currency
    records: list[StepRecord] = []
    run_to_end(model, compiled, ex.prompt, GenerationSettings(seed=0), records.append)
    text = ""
    for record in records:
        head = "".join(text.split())
        if head.endswith('"currency":"'):
            return record
        text += record.token_piece
    raise AssertionError(f"no currency value step in {text!r}")


def test_the_numbers_are_the_records(model, currency_value_step):
    record = currency_value_step
    shown = explain(record, model.n_vocab)
    valid = sorted((c for c in record.top_raw if c.valid), key=lambda c: -c.p_raw)
    assert shown.terms == tuple(valid[:3]) and shown.valid_mass == record.valid_mass
    assert math.isclose(sum(t.p_raw for t in shown.terms) + shown.remainder, record.valid_mass)
    assert shown.n_valid == record.n_valid and shown.n_vocab == 262_144
    by_id = {c.text: c.p_masked for c in record.top_masked}
    for division in shown.divisions:
        assert division.p_masked == by_id[division.text]
        # P / ΣP(V) on the record's own numbers gives the record's renormalised value.
        assert math.isclose(division.p_raw / division.valid_mass, division.p_masked, rel_tol=1e-3)
    assert shown.rank_after is not None and shown.chosen == record.token_text
    assert {"USD", "EUR", "GBP"} & {t.text for t in shown.terms}  # the model's own currencies


def test_the_sum_is_written_out_with_the_remainder():
    a = Candidate(1, "U", 0.5, 0.5 / 0.75, True)
    b = Candidate(2, "E", 0.2, 0.2 / 0.75, True)
    masked = Candidate(3, "\\n", 0.25, 0.0, False)
    record = StepRecord(0, 1, "U", "U", (a, masked, b), (a, b), 0.75, 0.0, 5, True, 1.0, 1, 1, 1)
    shown = explain(record, 10, named=1)
    assert shown.sum_written() == "0.5 (U) + 0.25 (+ … 4 more valid tokens) = 0.75"
    assert shown.rank_before == 1 and shown.rank_after == 1
    assert Division("U", 0.5, 0.75, 0.5 / 0.75).written() == "0.5 / 0.75 = 0.667"
