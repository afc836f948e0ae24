"""Helpers shared by the schema editor and the prompt pane."""

from __future__ import annotations

from PySide6.QtGui import QFontDatabase, QTextCursor
from PySide6.QtWidgets import QPlainTextEdit


def replace_all_undoable(edit: QPlainTextEdit, text: str) -> None:
    """Replace the whole text as one undo step, so Ctrl+Z brings the old text back.

    setPlainText() would clear the undo stack and lose the user's edits for good.
    """
    cursor = QTextCursor(edit.document())
    cursor.beginEditBlock()
    cursor.select(QTextCursor.SelectionType.Document)
    cursor.insertText(text)
    cursor.endEditBlock()
    edit.moveCursor(QTextCursor.MoveOperation.Start)


def use_monospace(edit: QPlainTextEdit) -> None:
    font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
    edit.setFont(font)
    edit.setTabStopDistance(edit.fontMetrics().horizontalAdvance(" ") * 2)
