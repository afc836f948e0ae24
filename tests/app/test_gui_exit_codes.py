"""`maskscope gui --autorun --quit-after-run` exits with `maskscope generate`'s codes:
0 valid, 1 invalid or cut off, 2 bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from gui_process import AUTORUN, EXAMPLES, PROMPT, SCHEMA, run_gui, settings_of

from engine.settings import GenerationSettings


@pytest.mark.slow
def test_output_that_breaks_the_schema_exits_1(tmp_path: Path) -> None:
    # The converter's grammar (pinned) allows only the one property and skips minProperties,
    # so the output always breaks it; our compiler refuses the schema as allowing no value.
    schema = json.loads((EXAMPLES / "currency.schema.json").read_text())
    schema["minProperties"] = 2
    path = tmp_path / "two.schema.json"
    path.write_text(json.dumps(schema))
    store = settings_of(tmp_path)
    store.set_generation_settings(GenerationSettings(compiler="llamacpp"))
    store.sync()
    proc = run_gui(tmp_path, "--schema", str(path), *PROMPT, *AUTORUN)
    assert proc.returncode == 1, proc.stderr[-2000:]


@pytest.mark.slow
def test_output_cut_off_at_max_tokens_exits_1(tmp_path: Path) -> None:
    store = settings_of(tmp_path)
    store.set_generation_settings(GenerationSettings(max_tokens=2))
    store.sync()
    proc = run_gui(tmp_path, *SCHEMA, *PROMPT, *AUTORUN)
    assert proc.returncode == 1, proc.stderr[-2000:]


@pytest.mark.slow
def test_model_that_cannot_load_exits_2_with_its_reason(tmp_path: Path) -> None:
    proc = run_gui(tmp_path, *SCHEMA, "--model", str(tmp_path / "missing.gguf"), *AUTORUN)
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "missing.gguf" in proc.stderr


@pytest.mark.slow
def test_schema_refused_before_the_run_exits_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.schema.json"
    bad.write_text('{"type": 12}')
    proc = run_gui(tmp_path, "--schema", str(bad), *PROMPT, *AUTORUN)
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "schema" in proc.stderr.lower()
