"""The `maskscope gui` entry point, run as a real process the way a user or `make` would."""

from __future__ import annotations

from pathlib import Path

import pytest
from gui_process import EXAMPLES, run_gui
from PySide6.QtGui import QImage


@pytest.mark.slow
def test_autorun_screenshot_and_quit(tmp_path: Path) -> None:
    shot = tmp_path / "shot.png"
    proc = run_gui(
        tmp_path,
        "--schema",
        str(EXAMPLES / "currency.schema.json"),
        "--prompt-file",
        str(EXAMPLES / "currency.prompt.txt"),
        "--autorun",
        "--screenshot",
        str(shot),
        "--quit-after-run",
        timeout=180,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    image = QImage(str(shot))
    # The whole window: the first size fits the screen, 800x600 offscreen, less its margins.
    assert image.width() > 700 and image.height() > 500


@pytest.mark.slow
def test_missing_schema_file_exits_nonzero(tmp_path: Path) -> None:
    proc = run_gui(tmp_path, "--schema", str(tmp_path / "missing.json"), "--quit-after-run")
    assert proc.returncode == 2
    assert "missing.json" in proc.stderr


@pytest.mark.slow
def test_undecodable_schema_file_exits_nonzero(tmp_path: Path) -> None:
    bad = tmp_path / "latin1.json"
    bad.write_bytes(b'{"title": "caf\xe9"}')
    proc = run_gui(tmp_path, "--schema", str(bad), "--quit-after-run")
    assert proc.returncode == 2
    assert "Cannot open schema" in proc.stderr


@pytest.mark.slow
def test_a_saved_run_opens_in_presentation_mode_without_a_run(tmp_path: Path) -> None:
    shot = tmp_path / "shot.png"
    run = Path(__file__).parent.parent / "data" / "runs" / "currency-logits.json"
    proc = run_gui(
        tmp_path, "--open-run", str(run), "--presentation", "--screenshot", str(shot),
        "--quit-after-run", timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert QImage(str(shot)).width() > 700


@pytest.mark.slow
def test_a_corrupt_saved_run_exits_with_bad_input(tmp_path: Path) -> None:
    bad = tmp_path / "run.json"
    bad.write_text('{"format": "maskscope-run", "version": 2', encoding="utf-8")
    proc = run_gui(tmp_path, "--open-run", str(bad), "--quit-after-run")
    assert proc.returncode == 2
    assert "Cannot open run" in proc.stderr
