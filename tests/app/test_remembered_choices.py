"""What the window remembers: only a model that loaded, paths from the command line as
absolute paths, and the user's draft untouched by files given on the command line."""

from __future__ import annotations

from pathlib import Path

import pytest
from gui_process import AUTORUN, EXAMPLES, run_gui, settings_of

from app.main_window import MainWindow
from app.settings.store import SettingsStore
from engine.model.paths import default_model_path
from engine.settings import ModelSettings

RUN_TIMEOUT_MS = 120_000


@pytest.mark.slow
def test_model_that_failed_to_load_is_not_remembered(tmp_path: Path) -> None:
    bogus = tmp_path / "bogus.gguf"
    bogus.write_text("not a model")
    proc = run_gui(tmp_path, "--model", str(bogus), "--quit-after-run")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert settings_of(tmp_path).model_settings().path != str(bogus)


@pytest.mark.slow
def test_command_line_paths_are_stored_absolute_and_the_draft_is_kept(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "model.gguf").symlink_to(default_model_path())
    (work / "mine.schema.json").write_text((EXAMPLES / "currency.schema.json").read_text())
    store = settings_of(tmp_path)
    store.set_draft('{"title": "my unsaved draft"}', "my prompt", None)
    store.sync()

    # A run, so that the model has loaded (and is worth remembering) before the window quits.
    args = ["--model", "model.gguf", "--schema", "mine.schema.json", *AUTORUN]
    proc = run_gui(tmp_path, *args, cwd=work)
    assert proc.returncode == 0, proc.stderr[-2000:]
    after = settings_of(tmp_path)
    assert after.model_settings() == ModelSettings(path=str((work / "model.gguf").resolve()))
    assert after.recent_files() == [str((work / "mine.schema.json").resolve())]
    assert after.draft() == ('{"title": "my unsaved draft"}', "my prompt", None)


@pytest.mark.slow
def test_model_file_that_failed_to_load_is_not_remembered(
    qtbot, window: MainWindow, store: SettingsStore, tmp_path: Path
) -> None:
    bogus = tmp_path / "notes.gguf"
    bogus.write_text("not a model")
    window.settings_panel.set_model_path(str(bogus))  # what File > Open model does
    qtbot.waitUntil(lambda: window.last_error is not None, timeout=RUN_TIMEOUT_MS)
    assert window.last_error[0] == "model"
    window.close()
    assert store.model_settings().path is None  # still the default model, which loaded


@pytest.mark.slow
def test_an_example_from_the_command_line_runs_with_its_settings_and_keeps_the_draft(
    tmp_path: Path,
) -> None:
    store = settings_of(tmp_path)
    store.set_draft('{"title": "my unsaved draft"}', "my prompt", None)
    store.sync()
    proc = run_gui(tmp_path, "--example", "currency", *AUTORUN)
    assert proc.returncode == 0, proc.stderr[-2000:]  # the currency example validates
    assert settings_of(tmp_path).draft() == ('{"title": "my unsaved draft"}', "my prompt", None)
