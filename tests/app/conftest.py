"""Fixtures for the window tests: a throw-away settings file per test and one model for all.

The tests drive real widgets against the real engine and the bundled default model.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest
from PySide6.QtCore import QSettings

from app.decoding.worker import ModelCache
from app.main import gui_thread_garbage_collector
from app.main_window import MainWindow
from app.settings.store import SettingsStore
from app.shell.files import Unsaved
from app.suite.editor import SuiteEditor
from engine.examples import Example, load_example
from engine.settings import GenerationSettings

RUN_TIMEOUT_MS = 120_000


@pytest.fixture(scope="session", autouse=True)
def gui_thread_gc(qapp) -> Iterator[None]:
    """As in the app (app/main.py): a collection on a helper thread that frees a Qt object
    crashed a test run once, so the window tests collect on the GUI thread too."""
    collector = gui_thread_garbage_collector()
    yield
    collector.timer.stop()  # type: ignore[attr-defined]
    # What is left is collected here, on the GUI thread with the application alive: left
    # to the interpreter's last collection, a clicked pyqtgraph plot's objects hung it
    # (tests/app/test_strip_chart.py alone, 4 runs in 5).
    gc.collect()
    gc.enable()


@pytest.fixture(scope="session")
def model_cache() -> Iterator[ModelCache]:
    """One loaded model shared by every window: loading once keeps the suite fast."""
    cache = ModelCache()
    yield cache
    cache.close()


@pytest.fixture(autouse=True)
def unsaved_changes_are_discarded(monkeypatch: pytest.MonkeyPatch) -> None:
    """Closing a window over an edited schema asks Save/Discard/Cancel in a modal box that
    no test would answer, so it would hang: the answer is Discard unless a test patches
    MainWindow.ask_unsaved itself (tests/app/test_shell_files.py)."""
    monkeypatch.setattr(MainWindow, "ask_unsaved", lambda self, before: Unsaved.DISCARD)
    # The Suite pane's edits are asked about too (SuiteEditor.ask_unsaved): likewise.
    monkeypatch.setattr(SuiteEditor, "ask_unsaved", lambda self, before: Unsaved.DISCARD)


@pytest.fixture
def store(tmp_path: Path) -> SettingsStore:
    return SettingsStore(QSettings(str(tmp_path / "maskscope.ini"), QSettings.Format.IniFormat))


@pytest.fixture
def window(qtbot, store: SettingsStore, model_cache: ModelCache) -> MainWindow:
    win = MainWindow(store=store, cache=model_cache)
    qtbot.addWidget(win)  # pytest-qt closes it afterwards, which stops the worker
    win.show()
    qtbot.waitExposed(win)
    return win


@pytest.fixture
def use_example() -> Callable[..., Example]:
    """Load an example and deterministic generation settings into a window."""

    def use(window: MainWindow, name: str, **generation: Any) -> Example:
        example = load_example(name)
        window.load_example(example)
        settings = GenerationSettings(**{"temperature": 0.0, "seed": 0, **generation})
        window.settings_panel.set_settings(window.settings_panel.model_settings(), settings)
        return example

    return use


@pytest.fixture
def run_to_end(qtbot) -> Callable[[MainWindow], None]:
    """Start a run and wait until the window says it ended."""

    def run(window: MainWindow) -> None:
        with qtbot.waitSignal(window.sig_run_ended, timeout=RUN_TIMEOUT_MS):
            assert window.run()

    return run
