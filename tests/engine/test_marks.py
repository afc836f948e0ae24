"""Forced and overruled steps, and the deepest dips, from step records alone."""

from __future__ import annotations

from engine.explain.marks import Mark, deepest_dips, mark
from engine.records import Candidate, StepRecord


def _record(step: int, top_raw: tuple[Candidate, ...], n_valid: int, mass: float) -> StepRecord:
    chosen = next(c for c in top_raw if c.valid)
    top_masked = tuple(c for c in top_raw if c.valid)
    return StepRecord(
        step, chosen.id, chosen.text, chosen.text, top_raw, top_masked,
        mass, 0.0, n_valid, True, 1.0, 1.0, 0.1, step + 1,
    )  # fmt: skip


def test_one_valid_token_is_forced_even_when_the_model_wanted_another():
    wanted = Candidate(1, "The", 0.9, 0.0, False)
    only = Candidate(2, "{", 0.01, 1.0, True)
    assert mark(_record(0, (wanted, only), 1, 0.01)) is Mark.FORCED


def test_a_masked_top_choice_is_overruled_and_an_allowed_one_is_free():
    wanted = Candidate(1, "The", 0.6, 0.0, False)
    ok = Candidate(2, "USD", 0.3, 0.75, True)
    other = Candidate(3, "EUR", 0.1, 0.25, True)
    assert mark(_record(0, (wanted, ok, other), 2, 0.4)) is Mark.OVERRULED
    assert mark(_record(0, (ok, other), 2, 0.4)) is Mark.FREE


def test_a_lower_bound_on_the_valid_count_is_never_called_forced():
    ok = Candidate(2, "USD", 0.3, 1.0, True)
    record = _record(0, (ok,), 1, 0.3)
    head_first = StepRecord(*[getattr(record, f) for f in record.__slots__[:9]], False,
                            *[getattr(record, f) for f in record.__slots__[10:]])  # fmt: skip
    assert mark(head_first) is Mark.FREE


def test_deepest_dips_name_the_token_written_and_the_one_wanted():
    wanted = Candidate(1, "The", 0.9, 0.0, False)
    forced = Candidate(2, "{", 0.05, 1.0, True)
    records = [
        _record(0, (wanted, forced), 1, 0.05),
        _record(1, (forced,), 5, 0.95),
        _record(2, (wanted, forced), 3, 0.3),
    ]
    dips = deepest_dips(records, n=2)
    assert [d.step for d in dips] == [0, 2]
    assert dips[0].chosen == "{" and dips[0].wanted == "The"
