"""First start on a machine without the default model (the standalone app leaves it out):
the banner says so and offers Choose GGUF…, and the chosen file runs.

The default model's package is blocked from import (sys.modules[name] = None) and the cache
is a fresh folder, since this test process has both; the file dialog is replaced by its
answer, since a native modal dialog cannot be clicked offscreen.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog

from app.decoding.worker import ModelCache
from app.main_window import MainWindow
from engine.model import default_package, paths

RUN_TIMEOUT_MS = 120_000


@pytest.fixture
def no_default_model(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, model) -> Path:
    """The real GGUF, linked where a user keeps their own, and no default model anywhere."""
    own = tmp_path / "models" / "own.gguf"
    own.parent.mkdir()
    own.symlink_to(model.path)
    for name in (default_package.PACKAGE, *default_package.PARTS):
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setattr(default_package, "_PATTERNS", ())
    return own


@pytest.fixture
def own_cache() -> Iterator[ModelCache]:
    cache = ModelCache()
    yield cache
    cache.close()


def test_the_banner_offers_a_gguf_and_the_chosen_one_runs(
    qtbot, store, own_cache, no_default_model: Path, use_example, run_to_end, monkeypatch
) -> None:
    window = MainWindow(store=store, cache=own_cache)
    qtbot.addWidget(window)
    with qtbot.waitSignal(window.controller.sig_error, timeout=RUN_TIMEOUT_MS):
        window.show()
    qtbot.waitUntil(window.banner.isVisible)
    assert "not on this machine" in window.banner.label.text()
    assert window.banner.action.isVisible() and window.banner.action.text() == "Choose GGUF…"

    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a: (str(no_default_model), ""))
    with qtbot.waitSignal(window.controller.sig_model_loaded, timeout=RUN_TIMEOUT_MS):
        qtbot.mouseClick(window.banner.action, Qt.MouseButton.LeftButton)
    assert window.settings_panel.model_path.text() == str(no_default_model)
    use_example(window, "currency", max_tokens=6)
    run_to_end(window)
    assert window.last_error is None, window.last_error
    assert window.last_result is not None and window.last_result.n_tokens > 0
    assert paths.vocabulary_model_path() == no_default_model  # what the grammar judge reads
