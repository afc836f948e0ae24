"""Help → Keyboard Shortcuts: every menu command that has keys, read from the menus
themselves, so the list says what the keys do now (a plugin's own included), with Copy."""

from __future__ import annotations

from PySide6.QtGui import QGuiApplication, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QHeaderView,
    QMenu,
    QMenuBar,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.shell.dialog_buttons import close_and_copy

HEADERS = ("Menu", "Command", "Keys")


def _plain(text: str) -> str:
    """A menu text as read: its mnemonic marks gone ("&&" is a literal "&")."""
    return text.replace("&&", "\0").replace("&", "").replace("\0", "&")


def shortcut_rows(bar: QMenuBar) -> list[tuple[str, str, str]]:
    """(menu, command, keys) for each command with keys, in the menus' order."""
    rows: list[tuple[str, str, str]] = []
    for entry in bar.actions():
        if isinstance(menu := entry.menu(), QMenu):
            rows += _menu_rows(menu, _plain(entry.text()))
    return rows


def _menu_rows(menu: QMenu, path: str) -> list[tuple[str, str, str]]:
    rows: list[tuple[str, str, str]] = []
    for action in menu.actions():
        if isinstance(sub := action.menu(), QMenu):
            rows += _menu_rows(sub, f"{path} → {_plain(action.text())}")
        elif not (keys := action.shortcut()).isEmpty():
            # The first keys only, as the menu shows them: a standard key's alternates are
            # keys few keyboards have ("Ctrl+Z, F14, Undo").
            text = keys.toString(QKeySequence.SequenceFormat.NativeText)
            rows.append((path, _plain(action.text()), text))
    return rows


class ShortcutsDialog(QDialog):
    def __init__(self, bar: QMenuBar, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Keyboard Shortcuts")
        self.rows = shortcut_rows(bar)
        self.table = QTableWidget(len(self.rows), len(HEADERS), self)
        self.table.setHorizontalHeaderLabels(HEADERS)
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 8)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        for r, row in enumerate(self.rows):
            for c, text in enumerate(row):
                self.table.setItem(r, c, QTableWidgetItem(text))
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        buttons = close_and_copy(
            self, "Copy", "Copy the list as text, one command a line", self.copy
        )
        layout = QVBoxLayout(self)
        layout.addWidget(self.table, 1)
        layout.addWidget(buttons)
        self.resize(600, 560)

    def text(self) -> str:
        return "\n".join(f"{menu} → {command}\t{keys}" for menu, command, keys in self.rows)

    def copy(self) -> None:
        QGuiApplication.clipboard().setText(self.text())
