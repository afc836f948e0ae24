"""A multi-file schema on the real model: generate, a suite's test and check, and export's
one self-contained schema.json with its proof (tests/multi_file_schema.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.cli.main import main
from engine.schema.parse import schema_validator
from engine.schema.siblings import refs_in
from engine.suite.load import load_suite
from tests.multi_file_schema import INSTANCES, LABELS, VALID, write_schema

pytestmark = pytest.mark.slow  # the real model: a generation, a suite run and an export

PROMPT = "Ann lives at Elm, zip code 12345.\nGive her name and home as JSON.\nJSON:\n"
SUITE = {
    "format": "maskscope-suite",
    "version": 1,
    "name": "team schema",
    "schema_file": "main.json",
    "generation": {"max_tokens": 48, "temperature": 0.0, "seed": 0},
    "prompt": "{{note}}",
    "samples": 1,
    "cases": [{"id": "ann", "vars": {"note": PROMPT}}],
    "instances": [{"data": d, "valid": v} for d, v in zip(INSTANCES, LABELS, strict=True)],
}


@pytest.fixture(scope="module")
def folder(tmp_path_factory, model) -> Path:
    root = tmp_path_factory.mktemp("team")
    write_schema(root)
    (root / "team.suite.json").write_text(json.dumps(SUITE), encoding="utf-8")
    return root


@pytest.fixture
def real_model(model, monkeypatch, tmp_path) -> None:
    """The session's model for every command, and a cache of this test's own."""
    monkeypatch.setattr("engine.model.llama.Model.load", lambda *a, **k: model)
    monkeypatch.setattr("engine.suite.cache.default_folder", lambda: tmp_path / "cache")


def test_generate_follows_the_files(folder, real_model, capsys):
    argv = ["generate", "--schema", str(folder / "main.json"), "--prompt", PROMPT]
    main([*argv, "--max-tokens", "48", "--temperature", "0", "--json"])
    out = capsys.readouterr().out.strip().splitlines()
    result = json.loads(out[-1])
    text = result.get("text") or result["result"]["text"]
    bundled = load_suite(str(folder / "team.suite.json")).schema
    assert schema_validator(bundled).is_valid(json.loads(text))


def test_a_suite_runs_checks_and_exports_one_schema(folder, real_model, tmp_path, capsys):
    suite = str(folder / "team.suite.json")
    assert main(["test", suite, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["metrics"]["validity_rate"] == 1.0
    assert main(["check", suite]) == 0
    assert "verdicts of its files on all 5 instances" in capsys.readouterr().err
    out = tmp_path / "bundle"
    assert main(["export", suite, "--out", str(out)]) == 0
    schema = json.loads((out / "schema.json").read_text(encoding="utf-8"))
    assert {ref for _, ref in refs_in(schema)} == {"#/$defs/x", "#/$defs/defs_address.json"}
    assert schema_validator(schema).is_valid(VALID)
    record = json.loads((out / "schema_files.json").read_text(encoding="utf-8"))
    assert record["files"] == {"#/$defs/defs_address.json": "defs/address.json"}
    assert record["proof"] == {"instances": 5, "same_verdicts": True, "differing": []}
    hashes = json.loads((out / "hashes.json").read_text(encoding="utf-8"))
    assert "schema_files.json" in hashes["files"]
    assert load_suite(str(out / "suite.json")).schema == schema  # ships as it was tested
