"""Help → Keyboard Shortcuts lists every menu command that has keys, read from the menus
(a plugin's commands included), and copies the list as text."""

from __future__ import annotations

from PySide6.QtGui import QGuiApplication

from app.main_window import MainWindow
from app.shell.shortcuts import HEADERS, ShortcutsDialog


def test_the_list_holds_every_menu_command_with_keys_and_copies(qtbot, window: MainWindow):
    dialog = ShortcutsDialog(window.menuBar(), window)
    qtbot.addWidget(dialog)
    rows = dialog.rows
    assert ("Run", "Run", "Ctrl+Return") in rows
    assert ("Suite", "Run Suite", "Ctrl+Shift+Return") in rows  # the Suite plugin's own
    assert ("Help", "Keyboard Shortcuts", "F1") in rows
    assert ("Edit", "Undo schema edit", "Ctrl+Z") in rows  # not its alternates ("F14, Undo")
    assert not any(command.startswith("About") for _, command, _ in rows)  # no keys: left out
    assert not any("&" in command for _, command, _ in rows)  # mnemonics read as text
    table = dialog.table
    assert [table.horizontalHeaderItem(c).text() for c in range(3)] == list(HEADERS)
    assert table.rowCount() == len(rows)
    dialog.copy()
    assert "Suite → Run Suite\tCtrl+Shift+Return" in QGuiApplication.clipboard().text()
