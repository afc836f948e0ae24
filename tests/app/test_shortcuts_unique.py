"""No two of the window's actions share keys: Qt then runs neither, and the keys do
nothing with no word of why (an "ambiguous shortcut")."""

from __future__ import annotations

from collections import defaultdict

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction

from app.main_window import MainWindow


def test_every_window_wide_shortcut_belongs_to_one_action(window: MainWindow) -> None:
    owners: dict[str, list[str]] = defaultdict(list)
    for action in window.findChildren(QAction):
        if action.shortcutContext() not in (
            Qt.ShortcutContext.WindowShortcut,
            Qt.ShortcutContext.ApplicationShortcut,
        ):
            continue  # a pane's own keys (Ctrl+. in the Problems list) work only there
        for keys in action.shortcuts():
            owners[keys.toString()].append(action.text())
    assert {k: v for k, v in owners.items() if len(v) > 1} == {}
    assert owners["Ctrl+Shift+Return"] == ["&Run Suite"]
