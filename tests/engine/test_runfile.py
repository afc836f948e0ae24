"""Saved runs round-trip exactly and refuse what they cannot read."""

from __future__ import annotations

import json

import pytest

from engine.decode.loop import run_to_end
from engine.errors import MaskscopeError
from engine.runs.saved import SavedRun, load_run, save_run
from engine.settings import GenerationSettings


@pytest.mark.slow
def test_a_real_run_round_trips(model, currency, tmp_path):
    ex, compiled = currency
    records = []
    settings = GenerationSettings(cross_check=True, seed=4, max_tokens=12)
    result = run_to_end(model, compiled, ex.prompt, settings, records.append)
    run = SavedRun(ex.schema_text, ex.prompt, model.info.name, tuple(records), result)
    path = tmp_path / "run.json"
    save_run(path, run)
    assert load_run(path) == run


@pytest.mark.parametrize(
    "content, reason",
    [
        ("not json", "cannot read"),
        ('{"format": "other"}', "not a Maskscope run file"),
        ('{"format": "maskscope-run", "version": 99}', "version 99"),
        ('{"format": "maskscope-run", "version": 1, "steps": []}', "damaged"),
    ],
)
def test_bad_run_files_are_refused_with_a_reason(tmp_path, content, reason):
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(MaskscopeError, match=reason):
        load_run(path)


def test_missing_run_file(tmp_path):
    with pytest.raises(MaskscopeError, match="not found"):
        load_run(tmp_path / "none.json")


def test_saved_runs_are_plain_json(model, person, tmp_path):
    ex, compiled = person
    result = run_to_end(model, compiled, ex.prompt, GenerationSettings(max_tokens=3))
    path = tmp_path / "r.json"
    save_run(path, SavedRun(ex.schema_text, ex.prompt, "m.gguf", (), result))
    data = json.loads(path.read_text())
    assert data["format"] == "maskscope-run" and data["result"]["finish_reason"] == "max_tokens"
