"""A table of plain rows whose every change is one undoable step.

Each row is a frozen dataclass; the table shows it through `cells` and reads an edited cell
back through `edited`. A change replaces the whole list of rows in one QUndoCommand, which
for a suite's tens of cases costs nothing and makes add, remove, duplicate and cell edits
undo alike.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QUndoCommand, QUndoStack
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QTableWidget,
    QTableWidgetItem,
    QWidget,
)

from app.suite.multiline import MultilineDelegate


class _Replace(QUndoCommand):
    def __init__(self, table: RowsTable, before: list[Any], after: list[Any], text: str) -> None:
        super().__init__(text)
        self._table, self._before, self._after = table, before, after

    def redo(self) -> None:
        self._table.show_rows(self._after)

    def undo(self) -> None:
        self._table.show_rows(self._before)


class RowsTable(QTableWidget):
    sig_changed = Signal()  # after any change of the rows, undo and redo included

    def __init__(self, undo: QUndoStack, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.undo_stack = undo
        self._rows: list[Any] = []
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setAlternatingRowColors(True)
        self.setWordWrap(False)
        self.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 8)
        self.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.horizontalHeader().setStretchLastSection(True)
        self.setItemDelegate(MultilineDelegate(self))
        self.itemChanged.connect(self._item_changed)

    # --- what a subclass says --------------------------------------------------------------
    def columns(self) -> list[str]:
        raise NotImplementedError

    def cells(self, row: Any) -> list[QTableWidgetItem]:
        raise NotImplementedError

    def edited(self, row: Any, column: int, item: QTableWidgetItem) -> Any:
        """The row with the edited cell's new value; the row itself when nothing changed."""
        raise NotImplementedError

    # --- rows ------------------------------------------------------------------------------
    @property
    def rows(self) -> list[Any]:
        return list(self._rows)

    def reset(self, rows: Sequence[Any]) -> None:
        """New rows with no history (a suite opened), in columns sized to them."""
        self.show_rows(list(rows))
        self.size_columns()

    def size_columns(self) -> None:
        """Each column as wide as its text, up to a third of the table (the last stretches)."""
        widest = max(160, self.viewport().width() // 3)
        for c in range(self.columnCount() - 1):
            self.resizeColumnToContents(c)
            self.setColumnWidth(c, min(self.columnWidth(c), widest))

    def change(self, rows: Sequence[Any], text: str) -> None:
        """Replace the rows as one undoable step named `text`."""
        self.undo_stack.push(_Replace(self, self.rows, list(rows), text))

    def selected_rows(self) -> list[int]:
        return sorted({index.row() for index in self.selectionModel().selectedRows()})

    def show_rows(self, rows: list[Any]) -> None:
        self._rows = list(rows)
        self.blockSignals(True)  # filling the cells is no edit
        try:
            labels = self.columns()
            self.setColumnCount(len(labels))
            self.setHorizontalHeaderLabels(labels)
            self.setRowCount(len(rows))
            for r, row in enumerate(rows):
                for c, item in enumerate(self.cells(row)):
                    self.setItem(r, c, item)
        finally:
            self.blockSignals(False)
        self.sig_changed.emit()

    def _item_changed(self, item: QTableWidgetItem) -> None:
        r = item.row()
        if not 0 <= r < len(self._rows):
            return
        new = self.edited(self._rows[r], item.column(), item)
        if new == self._rows[r]:
            return
        rows = self.rows
        rows[r] = new
        label = self.horizontalHeaderItem(item.column()).text()
        self.change(rows, f"Edit {label}")


def text_item(text: str, editable: bool = True, tip: str = "") -> QTableWidgetItem:
    item = QTableWidgetItem(text)
    if not editable:
        item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEditable)
    if tip:
        item.setToolTip(tip)
    return item
