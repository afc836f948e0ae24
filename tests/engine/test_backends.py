"""The two mask backends on the same GBNF: where they agree, and where they must not be assumed to.

Known, by design of each library:
- llguidance allows only the canonical tokenisation of text the grammar forces;
- llama.cpp lets special-token text (such as <start_of_image>) appear inside JSON strings.
Both make llama.cpp's set the larger one, so llguidance's mask must stay a subset of it.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from engine.examples import load_example
from engine.grammar.compile import compile_schema
from engine.masking import make_backend
from engine.records import StepRecord
from engine.runs.headless import run_to_end
from engine.settings import GenerationSettings


def _cross_checked(model, schema_text: str, prompt: str, max_tokens: int = 30) -> list[StepRecord]:
    records: list[StepRecord] = []
    settings = GenerationSettings(
        backend="llguidance", cross_check=True, temperature=0.0, max_tokens=max_tokens
    )
    run_to_end(model, compile_schema(schema_text), prompt, settings, records.append)
    return records


@pytest.mark.slow
def test_cross_check_reports_special_token_text_inside_a_string(model):
    # A constructed case: a bare string. Inside it llama.cpp allows special-token text.
    records = _cross_checked(model, '{"type": "string", "maxLength": 12}', "A word.\nJSON:", 6)
    inside = [r for r in records[1:] if r.disagreement is not None]
    assert inside, "expected the backends to disagree inside the string"
    d = inside[0].disagreement
    assert d.primary == "llguidance" and d.secondary == "llamacpp"
    assert d.n_only_secondary > 0 and d.n_only_primary == 0
    texts = [c.text for c in d.only_secondary]
    assert any(t.startswith("<") and t.endswith(">") for t in texts), texts
    assert all(c.valid for c in d.only_secondary)  # valid for the backend that allows them


@pytest.mark.slow
@pytest.mark.parametrize("name", ["currency", "person", "invoice"])
def test_llguidance_never_allows_what_llama_cpp_forbids(model, name):
    ex = load_example(name)
    for rec in _cross_checked(model, ex.schema_text, ex.prompt, 40):
        if rec.disagreement is not None:
            assert rec.disagreement.n_only_primary == 0, rec.disagreement


# One object whose only key is forced after `{"`: the two backends allow different splits of it.
FORCED_KEY = json.dumps(
    {
        "type": "object",
        "properties": {"currency": {"enum": ["USD", "EUR"]}},
        "required": ["currency"],
        "additionalProperties": False,
    }
)


def test_forced_text_is_canonical_only_for_llguidance(model):
    # After `{"`, the key `currency` is forced: llama.cpp allows any split of it ("c", "cur"),
    # llguidance only the tokenizer's own.
    records = _cross_checked(model, FORCED_KEY, "JSON:", 8)
    splits = [c.text for r in records if r.disagreement for c in r.disagreement.only_secondary]
    assert any("currency".startswith(t) and t != "currency" for t in splits), splits


def test_llamacpp_checks_made_ahead_match_fresh_checks(model, person):
    # The parity backend checks last step's head during the forward pass; those verdicts
    # must be exactly what a fresh check of the new grammar state says.
    _, compiled = person
    ahead = make_backend("llamacpp", model, compiled)
    fresh = make_backend("llamacpp", model, compiled)
    rng = np.random.default_rng(0)
    likely = rng.choice(model.n_vocab, 5000, replace=False).astype(np.int32)
    try:
        for token in model.tokenize('{ "name": "Al', add_special=False):
            ahead.accept(token)
            fresh.accept(token)
            ahead.prepare(likely)
            probe = np.concatenate([likely[:3000], rng.choice(model.n_vocab, 3000)])
            probe = probe.astype(np.int32)
            assert np.array_equal(ahead.check(probe), fresh.check(probe))
        assert np.array_equal(ahead.full_mask(), fresh.full_mask())
    finally:
        ahead.close()
        fresh.close()


@pytest.mark.parametrize("backend", ["llguidance", "llamacpp"])
def test_reset_returns_to_the_start_of_the_grammar(model, person, backend):
    _, compiled = person
    b = make_backend(backend, model, compiled)
    try:
        start = b.full_mask().copy()
        for token in model.tokenize('{ "name', add_special=False):
            b.accept(token)
        assert not np.array_equal(b.full_mask(), start)
        b.reset()
        assert np.array_equal(b.full_mask(), start)
    finally:
        b.close()


def test_llamacpp_checks_split_across_cores_match_one_part_checks(model, person):
    # Big checks are split over threads sharing one grammar state; each part must get the
    # verdicts a small, unsplit check of the same tokens gets.
    _, compiled = person
    b = make_backend("llamacpp", model, compiled)
    try:
        for token in model.tokenize('{ "name": "Al', add_special=False):
            b.accept(token)
        whole = b.full_mask()  # one call over the whole vocabulary: split where cores allow
        ids = np.arange(model.n_vocab, dtype=np.int32)
        pieces = np.concatenate([b.check(ids[i : i + 1000]) for i in range(0, len(ids), 1000)])
        assert np.array_equal(whole, pieces)
        assert 0 < whole.sum() < model.n_vocab
    finally:
        b.close()


@pytest.mark.slow
def test_cross_check_stops_when_llama_cpp_picks_what_llguidance_forbids(model):
    # llama.cpp as the primary allows any split of forced text; after `{"` the model prefers
    # `c` (0.53) to the canonical `currency` (0.39), which llguidance alone would allow. The
    # cross-check then cannot follow and stops; the run itself goes on to the end.
    records: list[StepRecord] = []
    settings = GenerationSettings(
        backend="llamacpp", cross_check=True, temperature=0.0, max_tokens=30
    )
    result = run_to_end(model, compile_schema(FORCED_KEY), "JSON:", settings, records.append)
    assert result.valid, result
    stopped = re.fullmatch(
        r"cross-check stopped at step (\d+): llguidance forbids the chosen token (.+)",
        result.message,
    )
    assert stopped, result.message
    step = int(stopped.group(1))
    chosen = records[step]
    assert chosen.disagreement is not None and chosen.disagreement.primary == "llamacpp"
    assert chosen.token_id in {c.id for c in chosen.disagreement.only_primary}
    assert stopped.group(2) == chosen.token_text
    assert all(r.disagreement is None for r in records[step + 1 :])  # no secondary after it
