"""A window that never loads a model, for modules whose tests need only its widgets.

A window costs 2-4 s to build on 2 busy cores, so such modules share one. Its edits are
discarded on close: a replayed run or a test's edit is unsaved, and no one would answer.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from PySide6.QtCore import QSettings

from app.main_window import MainWindow
from app.settings.store import SettingsStore
from app.shell.files import Unsaved
from app.suite.editor import SuiteEditor


@contextmanager
def modelless_window(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MainWindow]:
    ini = tmp_path_factory.mktemp("settings") / "maskscope.ini"
    store = SettingsStore(QSettings(str(ini), QSettings.Format.IniFormat))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(MainWindow, "_preload_model", lambda self: None)
        patch.setattr(MainWindow, "ask_unsaved", lambda self, before: Unsaved.DISCARD)
        patch.setattr(SuiteEditor, "ask_unsaved", lambda self, before: Unsaved.DISCARD)
        window = MainWindow(store=store)
        window.show()
        try:
            yield window
        finally:
            window.close()
            window.deleteLater()
