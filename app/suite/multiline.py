"""Cells whose text may run over several lines (an invoice as a prompt variable): shown on
one line with ⏎ for each line break, edited in a small text box where Enter is a new line
and leaving the box (or Ctrl+Enter) commits."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QEvent, QLocale, QModelIndex, QObject, QPersistentModelIndex, Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QAbstractItemDelegate, QPlainTextEdit, QStyledItemDelegate, QWidget

LINE_BREAK = " ⏎ "

Index = QModelIndex | QPersistentModelIndex


class MultilineDelegate(QStyledItemDelegate):
    def displayText(self, value: Any, locale: QLocale) -> str:
        # Qt's own text has turned each line break into U+2028, which draws a new line.
        text = super().displayText(value, locale)
        return text.replace("\u2028", LINE_BREAK).replace("\n", LINE_BREAK)

    def createEditor(self, parent: QWidget, option: Any, index: Index) -> QWidget:
        editor = QPlainTextEdit(parent)
        editor.setTabChangesFocus(True)
        editor.installEventFilter(self)
        return editor

    def updateEditorGeometry(self, editor: QWidget, option: Any, index: Index) -> None:
        rect = option.rect
        rect.setHeight(max(rect.height() * 4, 96))  # room for a few lines, over the rows below
        editor.setGeometry(rect)

    def setEditorData(self, editor: QWidget, index: Index) -> None:
        assert isinstance(editor, QPlainTextEdit)
        editor.setPlainText(str(index.data(Qt.ItemDataRole.EditRole) or ""))

    def setModelData(self, editor: QWidget, model: Any, index: Index) -> None:
        assert isinstance(editor, QPlainTextEdit)
        model.setData(index, editor.toPlainText(), Qt.ItemDataRole.EditRole)

    def eventFilter(self, editor: QObject, event: QEvent) -> bool:
        if (
            isinstance(editor, QPlainTextEdit)
            and isinstance(event, QKeyEvent)
            and event.type() == QEvent.Type.KeyPress
            and event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
            and event.modifiers() & Qt.KeyboardModifier.ControlModifier
        ):
            self.commitData.emit(editor)
            self.closeEditor.emit(editor, QAbstractItemDelegate.EndEditHint.NoHint)
            return True
        return super().eventFilter(editor, event)
