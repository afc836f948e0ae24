"""A window for the shell's tests that never loads the model: layout, menus, files and
autosave need none, and loading it costs seconds on a busy machine."""

from __future__ import annotations

import pytest

from app.main_window import MainWindow
from app.settings.store import SettingsStore


def open_window(qtbot, store: SettingsStore, monkeypatch: pytest.MonkeyPatch) -> MainWindow:
    monkeypatch.setattr(MainWindow, "_preload_model", lambda self: None)
    window = MainWindow(store=store)
    qtbot.addWidget(window)  # closed afterwards, which stops its worker thread
    window.show()
    qtbot.waitExposed(window)
    return window
