"""When the tested samples were decoded: `maskscope test` says how many it read back from the
run cache and when they were decoded, and a bundle of cached samples says it was tested then,
not at its export."""

from __future__ import annotations

import json
import time

import pytest

from engine.cli.main import main
from engine.runs.saved import load_run

SUITE = {
    "format": "maskscope-suite",
    "version": 1,
    "name": "decoded",
    "schema": {"type": "object", "properties": {"ok": {"type": "boolean"}},
               "required": ["ok"], "additionalProperties": False},
    "generation": {"max_tokens": 12, "temperature": 0.0, "seed": 0},
    "prompt": "Note: {{note}}\nIs it good news? JSON:\n",
    "samples": 2,
    "cases": [{"id": "good", "vars": {"note": "We won the contract."}}],
}  # fmt: skip


@pytest.mark.slow  # three commands on the real model
def test_cached_samples_say_when_they_were_decoded(tmp_path, monkeypatch, model, capsys):
    cache = tmp_path / "cache"
    monkeypatch.setattr("engine.suite.cache.default_folder", lambda: cache)
    monkeypatch.setattr("engine.model.llama.Model.load", lambda *a, **k: model)
    suite = tmp_path / "decoded.suite.json"
    suite.write_text(json.dumps(SUITE), encoding="utf-8")

    assert main(["test", str(suite)]) == 0
    assert "read back" not in capsys.readouterr().err  # both decoded now
    runs = [load_run(p) for p in cache.rglob("*.json")]
    decoded = {r.provenance.made_at for r in runs if r.provenance is not None}
    assert len(decoded) in (1, 2)
    when = min(decoded) if len(decoded) == 1 else f"{min(decoded)} to {max(decoded)}"
    time.sleep(1.1)  # provenance times are to the second: the export must be later

    assert main(["test", str(suite)]) == 0
    said = f"2 of 2 samples read back from the cache, decoded {when}"
    assert said in capsys.readouterr().err

    out = tmp_path / "out"
    assert main(["export", str(suite), "--out", str(out)]) == 0
    readme = (out / "README.md").read_text(encoding="utf-8")
    assert f"| tested at | {when} (2 of 2 samples read back from the cache) |" in readme
    row = next(line for line in readme.splitlines() if line.startswith("| exported at |"))
    assert row.split("|")[2].strip() > max(decoded)  # the export came after, and says so
    page = (out / "report.html").read_text(encoding="utf-8")
    assert f"tested {when} (2 of 2 samples read back from the cache)" in page
