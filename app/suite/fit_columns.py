"""Columns that fit: a table in a narrow pane leaves out its least needed columns instead
of scrolling sideways, and its last column (free text) takes the width left and elides."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtWidgets import QHeaderView, QTableWidget


def fit_last_column(table: QTableWidget) -> None:
    """Every column as wide as its contents, the last one stretched to what is left."""
    header = table.horizontalHeader()
    header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    header.setSectionResizeMode(table.columnCount() - 1, QHeaderView.ResizeMode.Stretch)


def fit_columns(table: QTableWidget, drop_order: Sequence[int], last_min: int) -> list[int]:
    """Show the columns that fit the table's width: leave out those of `drop_order`, least
    needed first, until the others fit with `last_min` pixels for the last column. The
    columns left out, in that order."""
    header = table.horizontalHeader()
    last = table.columnCount() - 1
    want = {c: max(header.sectionSizeHint(c), table.sizeHintForColumn(c)) for c in range(last)}
    room = table.viewport().width() - last_min
    left_out: list[int] = []
    for column in drop_order:
        if sum(w for c, w in want.items() if c not in left_out) <= room:
            break
        left_out.append(column)
    for column in range(last + 1):
        hide = column in left_out
        if table.isColumnHidden(column) != hide:  # each change lays the table out again
            table.setColumnHidden(column, hide)
    return left_out
