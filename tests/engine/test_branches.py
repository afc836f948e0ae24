"""What-if branches: names counted from 1, the set's order, each branch against the original."""

from __future__ import annotations

from functools import partial

import pytest
from step_records import token_record

from engine.errors import MaskscopeError
from engine.records import FinishReason, RunResult
from engine.runs.branches import BranchSet, branch_name
from engine.runs.compare import SpanKind
from engine.runs.saved import SavedRun

_record = partial(token_record, n_valid=2)


def _run(pieces: list[tuple[int, str, float]]) -> SavedRun:
    records = tuple(_record(i, t, p, m) for i, (t, p, m) in enumerate(pieces))
    text = "".join(p for _, p, _ in pieces)
    result = RunResult(text, FinishReason.GRAMMAR_COMPLETE, len(records))
    return SavedRun("{}", "prompt", "gemma.gguf", records, result)


ORIGINAL = _run([(1, '{"currency": "', 1.0), (2, "USD", 0.91), (3, '"}', 1.0)])
EUR = _run([(1, '{"currency": "', 1.0), (4, "EUR", 0.91), (3, '"}', 0.98)])
INDENT = _run([(5, "{\n    ", 1.0), (6, '"currency": "', 0.99), (4, "EUR", 0.8), (3, '"}', 1.0)])


def test_names_count_steps_from_one_and_quote_the_token():
    assert branch_name(2, 6, "EUR") == "Branch 2: step 7 → 'EUR'"
    assert branch_name(1, 0, '␣"') == "Branch 1: step 1 → '␣\"'"


def test_branches_are_numbered_and_kept_in_order():
    branches = BranchSet(ORIGINAL)
    first = branches.new_branch(1, 4, "EUR", EUR)
    assert branches.add(first) == 0
    second = branches.new_branch(0, 5, "{\n    ", INDENT)
    assert branches.add(second) == 1
    assert [b.name for b in branches] == [
        "Branch 1: step 2 → 'EUR'",
        "Branch 2: step 1 → '{\\n    '",
    ]
    assert branches.branches == (first, second) and len(branches) == 2
    assert (first.fork_step, first.token_id, first.token_text, first.run) == (1, 4, "EUR", EUR)


def test_a_branch_against_the_original():
    branches = BranchSet(ORIGINAL)
    branches.add(branches.new_branch(1, 4, "EUR", EUR))
    cmp = branches.compare(0)
    assert cmp.divergence is not None and cmp.divergence.step == 1
    assert cmp.divergence.before is not None and cmp.divergence.before.text == "USD"
    assert cmp.divergence.after is not None and cmp.divergence.after.text == "EUR"
    assert [(s.kind, s.text) for s in cmp.spans if s.kind is not SpanKind.SAME] == [
        (SpanKind.DELETED, "USD"),
        (SpanKind.INSERTED, "EUR"),
    ]
    assert cmp.mass_before == (1.0, 0.91, 1.0) and cmp.mass_after == (1.0, 0.91, 0.98)
    assert branches.compare(0) is cmp  # computed once


def test_a_new_original_drops_the_old_branches():
    branches = BranchSet(ORIGINAL)
    branches.add(branches.new_branch(1, 4, "EUR", EUR))
    branches.set_original(EUR)
    assert branches.original is EUR and len(branches) == 0
    # Numbering starts again, and no comparison with the old original is left over.
    again = branches.new_branch(0, 5, "{\n    ", INDENT)
    assert again.name.startswith("Branch 1:")
    branches.add(again)
    assert branches.compare(0).mass_before == (1.0, 0.91, 0.98)
    branches.clear()
    assert branches.original is None and len(branches) == 0


def test_comparing_without_an_original_says_so():
    branches = BranchSet()
    branches.add(branches.new_branch(1, 4, "EUR", EUR))
    with pytest.raises(MaskscopeError, match="no original run"):
        branches.compare(0)
