"""Find and replace over a QPlainTextEdit: a small bar floating at the editor's top right.

Ctrl+F opens it for finding, Ctrl+H with the replace row; Enter finds the next match,
Shift+Enter the previous one, Esc closes it. Replace all is one undoable edit.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QKeyEvent, QKeySequence, QTextCursor, QTextDocument
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

MAX_COUNTED = 999  # matches counted for the "n of m" label; more reads "999+"
# Keys, not QKeySequences: those cannot be made before the QApplication.
FIND = QKeySequence.StandardKey.Find
REPLACE = "Ctrl+H"  # StandardKey.Replace is Ctrl+H on Linux and Windows only


class FindBar(QFrame):
    def __init__(self, editor: QPlainTextEdit, parent: QWidget | None = None) -> None:
        super().__init__(parent if parent is not None else editor)
        self.setObjectName("findBar")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setAutoFillBackground(True)
        self._editor = editor
        self.find_edit = QLineEdit(self)
        self.find_edit.setObjectName("findText")
        self.find_edit.setPlaceholderText("Find")
        self.find_edit.setClearButtonEnabled(True)
        self.replace_edit = QLineEdit(self)
        self.replace_edit.setObjectName("replaceText")
        self.replace_edit.setPlaceholderText("Replace with")
        self.case = self._button("Aa", "Match case", checkable=True)
        self.count_label = QLabel("", self)
        self.count_label.setMinimumWidth(self.fontMetrics().horizontalAdvance("99 of 999+"))
        self.count_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        previous = self._button("↑", "Previous match (Shift+Enter)")
        following = self._button("↓", "Next match (Enter)")
        close = self._button("✕", "Close (Esc)")
        self.replace_button = self._button("Replace", "Replace this match and find the next")
        self.replace_all_button = self._button(
            "Replace all", "Replace every match, as one edit that Undo takes back"
        )
        for edit in (self.find_edit, self.replace_edit):
            edit.setMinimumWidth(self.fontMetrics().horizontalAdvance("x" * 14))
        rows = QVBoxLayout(self)
        rows.setContentsMargins(4, 4, 4, 4)
        rows.setSpacing(2)
        for widgets in (
            (self.find_edit, self.case, self.count_label, previous, following, close),
            (self.replace_edit, self.replace_button, self.replace_all_button),
        ):
            row = QHBoxLayout()
            row.setSpacing(2)
            for widget in widgets:
                row.addWidget(widget, 1 if isinstance(widget, QLineEdit) else 0)
            rows.addLayout(row)
        self._replace_row = (self.replace_edit, self.replace_button, self.replace_all_button)

        previous.clicked.connect(lambda: self.find_next(backward=True))
        following.clicked.connect(lambda: self.find_next())
        close.clicked.connect(self.close_bar)
        self.replace_button.clicked.connect(self.replace_one)
        self.replace_all_button.clicked.connect(self.replace_all)
        self.find_edit.textEdited.connect(self._find_as_typed)
        self.case.toggled.connect(lambda _: self._find_as_typed())
        for edit in (self.find_edit, self.replace_edit):
            edit.installEventFilter(self)
        self.hide()

    def _button(self, text: str, tip: str, checkable: bool = False) -> QToolButton:
        button = QToolButton(self)
        button.setText(text)
        button.setToolTip(tip)
        button.setCheckable(checkable)
        button.setAutoRaise(True)
        return button

    # --- opening and closing -------------------------------------------------------------
    def open_bar(self, replace: bool = False) -> None:
        """Show the bar, with the editor's selection (one line of it) as the query."""
        selected = self._editor.textCursor().selectedText()
        if selected and "\u2029" not in selected:  # Qt's paragraph separator: multi-line
            self.find_edit.setText(selected)
        for widget in self._replace_row:
            widget.setVisible(replace)
        self.show()
        self.raise_()
        self.adjustSize()
        self.parentWidget().updateGeometry()
        self._update_count()
        target = self.replace_edit if replace and self.find_edit.text() else self.find_edit
        target.setFocus()
        target.selectAll()

    def close_bar(self) -> None:
        self.hide()
        self._editor.setFocus()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if not isinstance(event, QKeyEvent):
            return super().eventFilter(watched, event)
        key = event.key()
        if event.type() == QEvent.Type.ShortcutOverride and key == Qt.Key.Key_Escape:
            event.accept()  # Esc closes the bar here; it is not the window's Stop
            return True
        if event.type() != QEvent.Type.KeyPress:
            return super().eventFilter(watched, event)
        if key == Qt.Key.Key_Escape:
            self.close_bar()
            return True
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            if watched is self.replace_edit:
                self.replace_one()
            else:
                backward = bool(event.modifiers() & Qt.KeyboardModifier.ShiftModifier)
                self.find_next(backward=backward)
            return True
        return super().eventFilter(watched, event)

    # --- finding -------------------------------------------------------------------------
    def _flags(self, backward: bool = False) -> QTextDocument.FindFlag:
        flags = QTextDocument.FindFlag(0)
        if self.case.isChecked():
            flags |= QTextDocument.FindFlag.FindCaseSensitively
        if backward:
            flags |= QTextDocument.FindFlag.FindBackward
        return flags

    def find_next(self, backward: bool = False) -> bool:
        """Select the next (or previous) match, wrapping around the end; False if none."""
        query = self.find_edit.text()
        if not query:
            return False
        doc = self._editor.document()
        found = doc.find(query, self._editor.textCursor(), self._flags(backward))
        if found.isNull():  # wrap around
            start = QTextCursor(doc)
            if backward:
                start.movePosition(QTextCursor.MoveOperation.End)
            found = doc.find(query, start, self._flags(backward))
        if found.isNull():
            self._update_count()
            return False
        self._editor.setTextCursor(found)
        self._update_count()
        return True

    def _find_as_typed(self) -> None:
        """Search again from the start of the current match, so a longer query keeps it."""
        cursor = self._editor.textCursor()
        cursor.setPosition(cursor.selectionStart())
        self._editor.setTextCursor(cursor)
        if not self.find_next():
            self._update_count()

    def _matches(self, limit: int | None = None) -> list[QTextCursor]:
        query, doc = self.find_edit.text(), self._editor.document()
        found: list[QTextCursor] = []
        if not query:
            return found
        cursor = doc.find(query, 0, self._flags())
        while not cursor.isNull() and (limit is None or len(found) < limit):
            found.append(cursor)
            cursor = doc.find(query, cursor, self._flags())
        return found

    def _update_count(self) -> None:
        if not self.find_edit.text():
            self.count_label.setText("")
            return
        matches = self._matches(MAX_COUNTED + 1)
        if not matches:
            self.count_label.setText("no match")
            return
        total = f"{MAX_COUNTED}+" if len(matches) > MAX_COUNTED else str(len(matches))
        here = self._editor.textCursor()
        index = next(
            (i for i, m in enumerate(matches) if m.selectionStart() == here.selectionStart()),
            None,
        )
        self.count_label.setText(f"{index + 1} of {total}" if index is not None else total)

    # --- replacing -----------------------------------------------------------------------
    def _selection_matches(self) -> bool:
        selected = self._editor.textCursor().selectedText()
        query = self.find_edit.text()
        if self.case.isChecked():
            return selected == query
        return selected.casefold() == query.casefold()

    def replace_one(self) -> None:
        if not self.find_edit.text():
            return
        if self._selection_matches():
            self._editor.textCursor().insertText(self.replace_edit.text())
        self.find_next()

    def replace_all(self) -> int:
        """Replace every match as one undoable edit; the number replaced."""
        matches = self._matches()
        if not matches:
            self._update_count()
            return 0
        replacement = self.replace_edit.text()
        edit = QTextCursor(self._editor.document())
        edit.beginEditBlock()
        for match in matches:  # the cursors follow the text as earlier matches change
            match.insertText(replacement)
        edit.endEditBlock()
        self.count_label.setText(f"{len(matches)} replaced")
        return len(matches)
