"""File > Export Bundle after the model file was replaced or deleted since the suite ran.

A bundle names the model its results came from (its sha256, vocabulary and chat template,
read from the model the worker holds). The worker used to lend its model as it was loaded,
so a file replaced since was exported stale. Now a model whose file changed is not lent:
the export runs the suite again, which loads the file anew, and a file that is gone fails
that load, said in one line. The window runs on a copy of the default model in a cache of
its own, as tests/app/test_faults_model_file.py does.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtWidgets import QFileDialog

from app.decoding.worker import ModelCache
from app.main_window import MainWindow
from engine.model.paths import default_model_path
from engine.suite.cache import RunCache
from tests.small_suite import currency_cut

RUN_TIMEOUT_MS = 120_000


@pytest.fixture
def own_cache() -> Iterator[ModelCache]:
    cache = ModelCache()
    yield cache
    cache.close()


@pytest.fixture
def copy_window(qtbot, store, own_cache: ModelCache, tmp_path: Path) -> MainWindow:
    gguf = tmp_path / "copy.gguf"
    shutil.copyfile(default_model_path(), gguf)
    win = MainWindow(store=store, cache=own_cache)
    qtbot.addWidget(win)
    win.show()
    qtbot.waitExposed(win)
    win.settings_panel.model_path.setText(str(gguf))
    suite = currency_cut(max_tokens=4)
    win.suites.pane.editor.set_suite(suite, None)
    win.suites.pane.cache = RunCache(tmp_path / "cache")  # the second run reads it back
    return win


def _export(qtbot, window: MainWindow, monkeypatch, out: Path) -> None:
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda *a, **k: str(out))
    with qtbot.waitSignal(window.controller.sig_suite_ended, timeout=RUN_TIMEOUT_MS):
        window.suites.actions["export-bundle"].trigger()
        assert window.suites.pane.running  # the suite runs first: no model is lent
    # The bundle is written off the GUI thread once the run ended (export_bundle.py).
    qtbot.waitUntil(lambda: not window.suites.bundle_export.writing, timeout=RUN_TIMEOUT_MS)


def test_an_export_after_the_model_file_changed_or_went_away_loads_it_again(
    qtbot, copy_window: MainWindow, monkeypatch, tmp_path: Path
) -> None:
    window = copy_window
    settings = window.settings_panel.model_settings()
    gguf = Path(settings.path)
    _export(qtbot, window, monkeypatch, tmp_path / "first")
    assert (tmp_path / "first" / "hashes.json").is_file(), window.last_report
    held = window.controller.loaded_model(settings)
    assert held is not None

    shutil.copyfile(default_model_path(), tmp_path / "fresh.gguf")
    os.replace(tmp_path / "fresh.gguf", gguf)  # a new file at the same path
    assert window.controller.loaded_model(settings) is None  # not lent stale
    with qtbot.waitSignal(window.controller.sig_model_loaded, timeout=RUN_TIMEOUT_MS):
        _export(qtbot, window, monkeypatch, tmp_path / "second")
    assert (tmp_path / "second" / "hashes.json").is_file(), window.last_report
    again = window.controller.loaded_model(settings)
    assert again is not None and again is not held and again.file_change() is None

    gguf.unlink()
    assert window.controller.loaded_model(settings) is None
    _export(qtbot, window, monkeypatch, tmp_path / "third")
    title, _, message = window.last_report.partition(": ")
    assert title == "Cannot export the bundle" and "\n" not in message
    assert message.startswith("the suite could not run: ") and str(gguf) in message, message
    assert not (tmp_path / "third").exists()  # the folder made for it is gone again
