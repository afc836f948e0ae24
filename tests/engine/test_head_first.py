"""The llamacpp backend's head-first mode: its fallback to a full mask, and --exact-mask."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from engine.cli.main import main
from engine.grammar.compile import compile_schema
from engine.model.llama import Model
from engine.records import StepRecord
from engine.runs.headless import run_to_end
from engine.settings import GenerationSettings

EXAMPLES = Path(__file__).resolve().parents[2] / "resources" / "examples"


def _run(model: Model, schema_text: str, prompt: str, **settings: object) -> list[StepRecord]:
    records: list[StepRecord] = []
    full = GenerationSettings(backend="llamacpp", keep_full=True, **settings)
    run_to_end(model, compile_schema(schema_text), prompt, full, records.append)
    return records


def _exact(rec: StepRecord) -> bool:
    """The record's count and mass are those of the whole valid set."""
    assert rec.full is not None
    valid = rec.full.valid
    true_mass = float(rec.full.p_raw[valid].sum(dtype=np.float64))
    return (
        rec.n_valid_exact
        and rec.valid_mass_bound == 0.0
        and rec.n_valid == int(valid.sum())
        and abs(rec.valid_mass - true_mass) <= 1e-6 * true_mass
    )


def test_head_first_falls_back_to_a_full_mask_when_no_head_token_is_valid(model: Model) -> None:
    # At T = 0.25 the opening quote has P of about 1e-21 after "JSON:", far inside the tail
    # that the head-first check leaves unchecked: only the full mask finds it.
    schema = json.dumps({"const": "ꙮ"}, ensure_ascii=False)
    records = _run(model, schema, "JSON:", temperature=0.25, seed=1, max_tokens=10)
    first = records[0]
    assert first.valid_mass < 1e-12  # the premise: no valid token in the head
    assert _exact(first) and model.piece(first.token_id) == b'"'
    assert not all(r.n_valid_exact for r in records)  # the other steps stay head-first
    assert b"".join(model.piece(r.token_id) for r in records).decode() == '"ꙮ"'


@pytest.mark.slow
def test_exact_mask_checks_the_whole_vocabulary_at_every_step(model: Model, person) -> None:
    ex, _ = person
    common = {"temperature": 1.0, "seed": 7, "max_tokens": 20}
    head_first = _run(model, ex.schema_text, ex.prompt, **common)
    assert not all(r.n_valid_exact for r in head_first)  # the premise: bounds, not counts
    exact = _run(model, ex.schema_text, ex.prompt, exact_mask=True, **common)
    assert exact and all(_exact(r) for r in exact)


@pytest.mark.slow
def test_exact_mask_option_reports_exact_counts(capsys) -> None:
    argv = [
        "generate",
        "--schema",
        str(EXAMPLES / "currency.schema.json"),
        "--prompt-file",
        str(EXAMPLES / "currency.prompt.txt"),
        "--backend",
        "llamacpp",
        "--exact-mask",
        "--jsonl",
        "--temperature",
        "0",
    ]
    assert main(argv) == 0
    steps = [json.loads(line) for line in capsys.readouterr().out.splitlines()[:-1]]
    assert steps and not any("n_valid_is_lower_bound" in s for s in steps)
