"""Comparing two runs: the output diff, the first different choice, where valid mass moved."""

from __future__ import annotations

import json

import pytest
from step_records import token_record

from engine.grammar.compile import compile_schema
from engine.records import FinishReason, RunResult, StepRecord
from engine.runs.compare import (
    ChosenToken,
    SpanKind,
    compare_runs,
    diff_spans,
    first_divergence,
    mass_shifts,
    unified_diff,
)
from engine.runs.headless import run_to_end
from engine.runs.saved import SavedRun
from engine.settings import GenerationSettings

_record = token_record


def _texts(spans, *kinds: SpanKind) -> str:
    return "".join(s.text for s in spans if s.kind in kinds)


def test_diff_spans_rebuild_both_texts_and_name_the_changed_word():
    before, after = '{"currency": "EUR", "n": 1}', '{"currency": "USD", "n": 1}'
    spans = diff_spans(before, after)
    assert _texts(spans, SpanKind.SAME, SpanKind.DELETED) == before
    assert _texts(spans, SpanKind.SAME, SpanKind.INSERTED) == after
    changed = [(s.kind, s.text) for s in spans if s.kind is not SpanKind.SAME]
    # Whole words, not the shared "U" a character diff would keep.
    assert changed == [(SpanKind.DELETED, "EUR"), (SpanKind.INSERTED, "USD")]
    deleted = next(s for s in spans if s.kind is SpanKind.DELETED)
    inserted = next(s for s in spans if s.kind is SpanKind.INSERTED)
    assert before[deleted.start : deleted.end] == "EUR"
    assert after[inserted.start : inserted.end] == "USD"


def test_diff_of_equal_texts_is_one_same_span():
    spans = diff_spans("abc def", "abc def")
    assert [(s.kind, s.text) for s in spans] == [(SpanKind.SAME, "abc def")]
    assert diff_spans("", "") == ()


def test_first_divergence_is_the_first_different_token():
    a = [_record(0, 1, "{"), _record(1, 2, '"'), _record(2, 3, "EUR")]
    b = [_record(0, 1, "{"), _record(1, 2, '"'), _record(2, 4, "USD")]
    d = first_divergence(a, b)
    assert d is not None
    assert d.step == 2
    assert d.before == ChosenToken(3, "EUR", "EUR")
    assert d.after == ChosenToken(4, "USD", "USD")


def test_first_divergence_where_one_run_ended_and_none_when_identical():
    a = [_record(0, 1, "{"), _record(1, 2, "}")]
    d = first_divergence(a, a[:1])
    assert d is not None and d.step == 1
    assert d.before == ChosenToken(2, "}", "}") and d.after is None
    assert first_divergence(a, list(a)) is None


def test_mass_shifts_only_past_the_threshold():
    shifts = mass_shifts([1.0, 0.9, 0.5, 0.2], [1.0, 0.85, 0.1, 0.9, 0.3], threshold=0.1)
    assert [s.step for s in shifts] == [2, 3]
    assert shifts[0].delta == pytest.approx(-0.4)
    assert shifts[1].delta == pytest.approx(0.7)


def test_changed_inputs_and_unified_diff():
    result = RunResult("a\n", FinishReason.GRAMMAR_COMPLETE, 1, settings={"seed": 0})
    other = RunResult("b\n", FinishReason.GRAMMAR_COMPLETE, 1, settings={"seed": 3})
    before = SavedRun("{}", "p", "m.gguf", (), result)
    after = SavedRun('{"type": "string"}', "p", "m.gguf", (), other)
    assert compare_runs(before, after).changed_inputs == ("schema", "seed 0 → 3")
    assert compare_runs(before, before).changed_inputs == ()
    assert "-a\n+b\n" in unified_diff("a\n", "b\n")


def _run(model, schema_text: str, prompt: str) -> SavedRun:
    settings = GenerationSettings(max_tokens=24, temperature=0.0, seed=0)
    records: list[StepRecord] = []
    result = run_to_end(model, compile_schema(schema_text), prompt, settings, records.append)
    return SavedRun(schema_text, prompt, "model", tuple(records), result)


def test_two_real_runs_with_different_schemas(model, currency):
    example, _ = currency
    schema = json.loads(example.schema_text)
    chosen_before = _run(model, example.schema_text, example.prompt)
    value = json.loads(chosen_before.result.text)["currency"]
    # The same schema without the value the model chose: it has to choose another.
    enum = schema["properties"]["currency"]["enum"]
    schema["properties"]["currency"]["enum"] = [v for v in enum if v != value]
    after = _run(model, json.dumps(schema, indent=2), example.prompt)
    new_value = json.loads(after.result.text)["currency"]
    assert new_value != value

    cmp = compare_runs(chosen_before, after)
    assert cmp.changed_inputs == ("schema",)
    d = cmp.divergence
    assert d is not None and d.before is not None and d.after is not None
    # Every earlier step chose the same token, and the diverging pieces are where the two
    # texts part: the shared prefix ends at the divergence.
    pieces_a = [r.token_piece for r in chosen_before.records]
    pieces_b = [r.token_piece for r in after.records]
    assert pieces_a[: d.step] == pieces_b[: d.step]
    assert d.before.piece == pieces_a[d.step] and d.after.piece == pieces_b[d.step]
    assert d.before.token_id != d.after.token_id
    prefix = "".join(pieces_a[: d.step])
    assert chosen_before.result.text.startswith(prefix + d.before.piece)
    assert after.result.text.startswith(prefix + d.after.piece)
    # ...and they part inside the chosen value (its opening quote at the earliest).
    at = chosen_before.result.text.index(f'"{value}"')
    assert at <= len(prefix) <= at + len(value)

    # The diff: the old value deleted, the new one inserted, the rest kept.
    spans = cmp.spans
    assert _texts(spans, SpanKind.SAME, SpanKind.DELETED) == chosen_before.result.text
    assert _texts(spans, SpanKind.SAME, SpanKind.INSERTED) == after.result.text
    assert value in _texts(spans, SpanKind.DELETED)
    assert new_value in _texts(spans, SpanKind.INSERTED)
    assert '"currency"' in _texts(spans, SpanKind.SAME)
    assert len(cmp.mass_before) == len(chosen_before.records)
    assert len(cmp.mass_after) == len(after.records)
