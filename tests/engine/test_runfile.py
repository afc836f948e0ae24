"""Saved runs round-trip exactly and refuse what they cannot read."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import pytest

from engine.errors import MaskscopeError
from engine.runs import saved
from engine.runs.headless import run_to_end
from engine.runs.provenance import provenance_of
from engine.runs.saved import SavedRun, load_run, run_settings, save_run
from engine.settings import GenerationSettings

RUNS = Path(__file__).parents[1] / "data" / "runs"


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
        ("not json", "bad.json: not JSON"),
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


def test_a_version_1_run_file_still_loads_without_provenance():
    run = load_run(RUNS / "currency-v1.json")
    assert json.loads((RUNS / "currency-v1.json").read_text())["version"] == 1
    assert run.provenance is None
    assert run.result.valid and json.loads(run.result.text) == {"currency": "USD"}
    assert len(run.records) == run.result.n_tokens == 10
    assert run_settings(run).top_k == 5


@pytest.fixture
def v1_run():
    return load_run(RUNS / "currency-v1.json")


def test_a_run_with_provenance_round_trips_as_version_2(v1_run, tmp_path):
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF" * 100)
    made = provenance_of(gguf, run_settings(v1_run), n_vocab=262144)
    run = dataclasses.replace(v1_run, provenance=made)
    path = tmp_path / "run.json"
    save_run(path, run)
    data = json.loads(path.read_text())
    assert data["version"] == 2 and data["provenance"]["model_sha256"] == made.model_sha256
    assert load_run(path) == run


def test_damaged_provenance_is_refused_with_a_reason(v1_run, tmp_path):
    path = tmp_path / "run.json"
    save_run(path, v1_run)
    data = json.loads(path.read_text())
    data["provenance"] = {"model_file": "m.gguf"}
    path.write_text(json.dumps(data))
    with pytest.raises(MaskscopeError, match=r"damaged: \$\.provenance\.model_bytes is missing"):
        load_run(path)


def test_a_failed_save_leaves_the_old_file_whole(v1_run, tmp_path, monkeypatch):
    path = tmp_path / "run.json"
    path.write_text("the old run")

    def full_disk(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(saved.os, "replace", full_disk)
    with pytest.raises(MaskscopeError, match=r"cannot write run file .*No space left on device"):
        save_run(path, v1_run)
    assert path.read_text() == "the old run"
    assert [p.name for p in tmp_path.iterdir()] == ["run.json"], "the temp file was left behind"


def test_a_saved_run_gets_the_usual_file_mode(v1_run, tmp_path):
    umask = os.umask(0)
    os.umask(umask)
    save_run(tmp_path / "run.json", v1_run)
    assert (tmp_path / "run.json").stat().st_mode & 0o777 == 0o666 & ~umask
