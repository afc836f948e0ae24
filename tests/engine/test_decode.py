"""The decode loop on the real default model: invariants at every step, both backends."""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np
import pytest

from engine.decode import loop
from engine.decode.loop import generate
from engine.decode.overlap import Overlap
from engine.grammar.compile import compile_schema
from engine.records import FinishReason, StepRecord
from engine.runs.headless import run_to_end
from engine.settings import GenerationSettings

BACKENDS = ["llguidance", "llamacpp"]


def _check_step(rec: StepRecord) -> None:
    full = rec.full
    assert full is not None
    p = full.p_raw.astype(np.float64)
    valid = full.valid
    # 0 < valid mass <= 1, and it is the mass of the valid set (within the stated bound).
    assert 0.0 < rec.valid_mass <= 1.0 + 1e-6
    true_mass = float(p[valid].sum())
    assert true_mass - 1e-6 <= rec.valid_mass + rec.valid_mass_bound + 1e-6
    assert rec.valid_mass <= true_mass + 1e-6
    # Renormalised over the valid set, the distribution sums to 1.
    masked = np.where(valid, p, 0.0) / rec.valid_mass
    assert abs(masked.sum() - 1.0) < 1e-5 + rec.valid_mass_bound / rec.valid_mass
    # The sampled token is valid.
    assert valid[rec.token_id]
    # Every listed candidate agrees with the full arrays.
    for c in rec.top_raw + rec.top_masked:
        assert c.valid == bool(valid[c.id])
        assert abs(c.p_raw - p[c.id]) < 1e-6
        if not c.valid:
            assert c.p_masked == 0.0
        else:
            assert abs(c.p_masked - p[c.id] / rec.valid_mass) < 1e-6
    # Ratios between valid tokens are preserved.
    vs = [c for c in rec.top_masked if c.p_raw > 0]
    for a, b in itertools.pairwise(vs):
        assert abs(a.p_masked / b.p_masked - a.p_raw / b.p_raw) < 1e-4 * (a.p_raw / b.p_raw)
    assert [c.p_masked for c in rec.top_masked] == sorted(
        (c.p_masked for c in rec.top_masked), reverse=True
    )
    if rec.n_valid_exact:
        assert rec.n_valid == int(valid.sum())
    else:
        assert rec.n_valid <= int(valid.sum())


@pytest.mark.slow
@pytest.mark.parametrize("backend", BACKENDS)
def test_every_step_keeps_the_invariants(model, person, backend):
    ex, compiled = person
    settings = GenerationSettings(
        backend=backend, max_tokens=40, temperature=1.0, seed=7, keep_full=True
    )
    records: list[StepRecord] = []
    result = run_to_end(model, compiled, ex.prompt, settings, records.append)
    assert records
    for rec in records:
        _check_step(rec)
    assert result.n_tokens == len(records)


@pytest.mark.slow
@pytest.mark.parametrize("backend", BACKENDS)
def test_currency_is_always_one_of_the_enum_values(model, currency, backend):
    ex, compiled = currency
    for seed in range(4):
        settings = GenerationSettings(backend=backend, temperature=1.5, seed=seed, max_tokens=30)
        result = run_to_end(model, compiled, ex.prompt, settings)
        assert result.valid, result
        assert result.parsed["currency"] in {"USD", "EUR", "GBP", "UNKNOWN"}


@pytest.mark.slow
@pytest.mark.parametrize("backend", BACKENDS)
def test_same_seed_gives_the_same_output(model, person, backend):
    ex, compiled = person

    def text(seed: int) -> str:
        settings = GenerationSettings(backend=backend, temperature=0.9, seed=seed, max_tokens=40)
        return run_to_end(model, compiled, ex.prompt, settings).text

    first = text(123)
    assert text(123) == first
    # And the seed is used: at T > 0 another seed samples another output.
    assert any(text(seed) != first for seed in (124, 125)), first


def test_records_hold_p_at_the_run_temperature(model, person):
    ex, compiled = person
    model.reset()
    model.eval_prompt(model.tokenize(ex.prompt, add_special=True))
    logits = model.logits().astype(np.float64)  # a copy: the first step's logits
    for t in (0.5, 1.5):
        records: list[StepRecord] = []
        settings = GenerationSettings(temperature=t, max_tokens=1, keep_full=True)
        run_to_end(model, compiled, ex.prompt, settings, records.append)
        z = logits / t
        expected = np.exp(z - z.max())
        expected /= expected.sum()
        assert np.allclose(records[0].full.p_raw, expected, rtol=1e-4, atol=1e-7), t


def test_output_cut_at_max_tokens_is_truncated_and_invalid(model, person):
    ex, compiled = person
    result = run_to_end(model, compiled, ex.prompt, GenerationSettings(max_tokens=5, seed=0))
    assert result.finish_reason is FinishReason.MAX_TOKENS
    assert result.truncated and not result.valid
    assert "max_tokens" in result.message
    assert result.parse_error


def test_stop_between_steps(model, person):
    ex, compiled = person
    seen: list[StepRecord] = []
    gen = generate(
        model,
        compiled,
        ex.prompt,
        GenerationSettings(max_tokens=100),
        should_stop=lambda: len(seen) >= 3,
    )
    with pytest.raises(StopIteration) as stop:
        while True:
            seen.append(next(gen))
    result = stop.value.value
    assert result.finish_reason is FinishReason.CANCELLED
    assert result.n_tokens == 3 and not result.valid


ENFORCED = [
    {
        "type": "object",
        "properties": {"ok": {"type": "boolean"}, "n": {"type": "integer"}},
        "required": ["ok", "n"],
        "additionalProperties": False,
    },
    {"type": "array", "items": {"enum": ["red", "green", "blue"]}, "minItems": 1, "maxItems": 3},
    {
        "type": "object",
        "properties": {
            "tags": {"type": "array", "items": {"type": "string", "maxLength": 8}, "maxItems": 2}
        },
        "required": ["tags"],
        "additionalProperties": False,
    },
    {
        "anyOf": [
            {"type": "null"},
            {
                "type": "object",
                "properties": {"x": {"const": 3}},
                "required": ["x"],
                "additionalProperties": False,
            },
        ]
    },
]


@pytest.mark.slow
@pytest.mark.parametrize("schema", ENFORCED)
@pytest.mark.parametrize("backend", BACKENDS)
def test_outputs_validate_when_the_grammar_enforces_every_keyword(model, schema, backend):
    import json

    # The first, greedy on llamacpp, writes "n": 1000...: it ends at the 20-digit cap.
    compiled = compile_schema(json.dumps(schema))
    settings = GenerationSettings(backend=backend, temperature=0.0, max_tokens=80)
    result = run_to_end(model, compiled, "A JSON value of the requested shape.\nJSON:", settings)
    assert result.finish_reason is not FinishReason.MAX_TOKENS, result.text
    assert result.valid, (result.text, result.errors)


@pytest.fixture(scope="module")
def spare_model():
    """The default model on one llama.cpp thread, leaving a core spare: the path a GPU
    takes, where the next mask and this step's record are made during the forward pass."""
    from engine.model.llama import Model
    from engine.settings import ModelSettings

    m = Model.load(ModelSettings(n_threads=1))
    if not m.has_spare_compute:
        m.close()
        pytest.skip("a single-core machine has no core to spare")
    yield m
    m.close()


@pytest.mark.slow
@pytest.mark.parametrize(
    ("backend", "cross_check"),
    [("llguidance", False), ("llamacpp", False), ("llguidance", True)],
)
def test_overlapped_steps_keep_the_invariants(spare_model, person, backend, cross_check):
    ex, compiled = person
    settings = GenerationSettings(
        backend=backend,
        cross_check=cross_check,
        max_tokens=40,
        temperature=1.0,
        seed=7,
        keep_full=True,
    )
    records: list[StepRecord] = []
    first = run_to_end(spare_model, compiled, ex.prompt, settings, records.append)
    assert [r.step for r in records] == list(range(first.n_tokens))
    for rec in records:
        _check_step(rec)
    assert "".join(r.token_piece for r in records) == first.text
    again = run_to_end(spare_model, compiled, ex.prompt, settings)
    assert again.text == first.text  # the seed fixes the noise too


@pytest.mark.slow
def test_drawn_ahead_greedy_run_matches_the_serial_one(model, spare_model, person):
    ex, compiled = person
    settings = GenerationSettings(temperature=0.0, max_tokens=60)
    serial_records: list[StepRecord] = []
    ahead_records: list[StepRecord] = []
    serial = run_to_end(model, compiled, ex.prompt, settings, serial_records.append)
    ahead = run_to_end(spare_model, compiled, ex.prompt, settings, ahead_records.append)
    assert ahead.text == serial.text and ahead.valid
    # Step by step, the records made beside the forward pass say what the serial ones say.
    assert len(ahead_records) == len(serial_records)
    for a, s in zip(ahead_records, serial_records, strict=True):
        assert (a.step, a.token_id, a.n_valid) == (s.step, s.token_id, s.n_valid)
        # One llama.cpp thread against two sums in another order: the logits differ by
        # rounding, so near-ties in the top-K may swap, but the masses agree closely.
        assert abs(a.valid_mass - s.valid_mass) < 1e-4
        assert abs(a.top_masked[0].p_masked - s.top_masked[0].p_masked) < 1e-4


def _untimed(record: StepRecord) -> StepRecord:
    return dataclasses.replace(record, forward_ms=0.0, mask_ms=0.0)


@pytest.mark.slow
@pytest.mark.parametrize("temperature", [1.0, 0.0])
def test_records_made_beside_the_forward_pass_are_those_made_in_turn(
    spare_model, person, monkeypatch, temperature
):
    # With a core to spare, the mask, the noise and each step's record are made on a helper
    # during the next forward pass. Made in turn instead, on the same model and seed, every
    # record must be the same, bit for bit (timings aside).
    ex, compiled = person
    settings = GenerationSettings(max_tokens=40, temperature=temperature, seed=3)
    beside: list[StepRecord] = []
    run_to_end(spare_model, compiled, ex.prompt, settings, beside.append)
    monkeypatch.setattr(loop, "Overlap", lambda stepper, _enabled: Overlap(stepper, False))
    in_turn: list[StepRecord] = []
    run_to_end(spare_model, compiled, ex.prompt, settings, in_turn.append)
    assert len(beside) > 10
    assert [_untimed(r) for r in beside] == [_untimed(r) for r in in_turn]


@pytest.mark.slow
def test_drawn_ahead_run_stops_cleanly_mid_run(spare_model, person):
    ex, compiled = person
    gen = generate(spare_model, compiled, ex.prompt, GenerationSettings(max_tokens=100))
    for _ in range(3):
        next(gen)
    gen.close()  # the next forward pass and mask are in flight: both are waited for
    result = run_to_end(spare_model, compiled, ex.prompt, GenerationSettings(max_tokens=10))
    assert result.n_tokens == 10


@pytest.mark.slow
@pytest.mark.parametrize(
    "n_threads",
    [None, pytest.param(1, marks=pytest.mark.soak)],  # the second: a model load and 250 steps
    ids=["all-cores", "spare-core"],
)
def test_a_full_context_ends_the_run_with_every_step_recorded(n_threads):
    from engine.model.llama import Model
    from engine.settings import ModelSettings

    # llama.cpp's smallest context, 256 tokens, and a string that cannot close before it.
    compiled = compile_schema('{"type": "string", "minLength": 1000}')
    m = Model.load(ModelSettings(n_ctx=256, n_threads=n_threads))
    try:
        if n_threads == 1 and not m.has_spare_compute:
            pytest.skip("a single-core machine has no core to spare")
        records: list[StepRecord] = []
        settings = GenerationSettings(max_tokens=1000)
        result = run_to_end(
            m, compiled, "A long story as one JSON string:", settings, records.append
        )
    finally:
        m.close()
    assert result.finish_reason is FinishReason.ERROR
    assert "context of 256 tokens is full" in result.message
    assert [r.step for r in records] == list(range(result.n_tokens))
    assert not result.valid
