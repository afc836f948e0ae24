"""The suite's cases: id, one column per prompt variable, the expected values, a note."""

from __future__ import annotations

import dataclasses
import html
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtGui import QBrush, QColor, QUndoStack
from PySide6.QtWidgets import QTableWidgetItem, QWidget

from app.plain_text import literal_html
from app.suite.expected_text import expectations_text, parse_expected
from app.suite.rows_table import RowsTable, text_item
from engine.suite.format import Case

FROM_FILE_TIP = "Read from the suite's cases file: edit it there"
EXPECTED_TIP = (
    "path = value (JSON, or a bare word); path = N ± T within a tolerance; path ~ /regex/; "
    "path absent (no such key); path absent or null. "
    'Separate them with ";". Example: $.currency = "USD"; $.total = 12.5 ± 0.01; $.email absent'
)
# The expected cell of a case that can never pass (engine/suite/never_met.py): the amber of
# the editor's warnings, faint enough for the text to read.
NEVER_MET_TINT = QColor(255, 176, 0, 90)


@dataclass(frozen=True, slots=True)
class CaseRow:
    id: str
    vars: dict[str, str] = field(default_factory=dict)
    expected: str = ""  # as app/suite/expected_text.py writes it
    description: str = ""
    line: int | None = None  # read from the cases file, at this line: shown, not edited

    @classmethod
    def of(cls, case: Case) -> CaseRow:
        return cls(
            case.id, dict(case.vars), expectations_text(case.expected), case.description, case.line
        )

    def to_json(self) -> dict[str, Any]:
        """The suite file's case. A cell never filled in is no value (the suite then says
        the prompt misses it); one emptied by an edit is the empty string."""
        out: dict[str, Any] = {"vars": dict(self.vars)}
        if self.id.strip():
            out["id"] = self.id.strip()
        if self.expected.strip():
            out["expected"] = parse_expected(self.expected)
        if self.description.strip():
            out["description"] = self.description.strip()
        return out


class CasesTable(RowsTable):
    def __init__(self, undo: QUndoStack, parent: QWidget | None = None) -> None:
        self.variables: list[str] = []
        super().__init__(undo, parent)

    def set_variables(self, variables: list[str]) -> None:
        """The variable columns, in order; values of other variables stay in their rows."""
        if variables != self.variables:
            self.variables = list(variables)
            self.show_rows(self.rows)

    def columns(self) -> list[str]:
        return ["id", *self.variables, "expected", "description"]

    def cells(self, row: CaseRow) -> list[QTableWidgetItem]:
        editable = row.line is None
        items = [
            text_item(row.id, editable),
            *(text_item(row.vars.get(name, ""), editable) for name in self.variables),
            text_item(row.expected, editable, EXPECTED_TIP),
            text_item(row.description, editable),
        ]
        for item in items:
            item.setToolTip(item.toolTip() or literal_html(item.text()))
            if not editable:
                item.setToolTip(FROM_FILE_TIP)
                item.setForeground(QBrush(QColor("#777777")))
        return items

    def mark_never_met(self, whys: dict[str, list[str]]) -> None:
        """Tint the expected cell of each case (by id) with an expectation that no output of
        the schema can meet, the reasons first in its tooltip; clear the others."""
        column = self.columns().index("expected")
        self.blockSignals(True)  # a tint is no edit: no itemChanged to read back
        try:
            for r, row in enumerate(self._rows):
                item = self.item(r, column)
                if item is None:
                    continue
                tip = FROM_FILE_TIP if row.line is not None else EXPECTED_TIP
                why = whys.get(row.id.strip(), [])
                item.setBackground(QBrush(NEVER_MET_TINT) if why else QBrush())
                warning = "".join(
                    f"<p>⚠ {html.escape(w)}: this case can never pass</p>" for w in why
                )
                item.setToolTip(warning + tip)
        finally:
            self.blockSignals(False)

    def edited(self, row: CaseRow, column: int, item: QTableWidgetItem) -> CaseRow:
        text = item.text()
        if column == 0:
            return dataclasses.replace(row, id=text)
        if column <= len(self.variables):
            values = dict(row.vars)
            values[self.variables[column - 1]] = text
            return dataclasses.replace(row, vars=values)
        if column == len(self.variables) + 1:
            return dataclasses.replace(row, expected=text)
        return dataclasses.replace(row, description=text)

    # --- the buttons -----------------------------------------------------------------------
    def add_case(self) -> int:
        """A new, empty case after the selection (or at the end); its id is free."""
        rows = self.rows
        at = (self.selected_rows() or [len(rows) - 1])[-1] + 1
        rows.insert(at, CaseRow(self._free_id("case")))
        self.change(rows, "Add case")
        self._select(at)
        return at

    def duplicate_selected(self) -> None:
        rows, chosen = self.rows, self.selected_rows()
        if not chosen:
            return
        for offset, r in enumerate(chosen):
            copy = dataclasses.replace(rows[r + offset], line=None)
            copy = dataclasses.replace(copy, id=self._free_id(copy.id or "case", rows))
            rows.insert(r + offset + 1, copy)
        self.change(rows, "Duplicate case" if len(chosen) == 1 else "Duplicate cases")
        self._select(chosen[-1] + len(chosen))

    def remove_selected(self) -> None:
        chosen = [r for r in self.selected_rows() if self._rows[r].line is None]
        if not chosen:
            return
        rows = [row for r, row in enumerate(self.rows) if r not in chosen]
        self.change(rows, "Remove case" if len(chosen) == 1 else "Remove cases")

    def _free_id(self, stem: str, rows: list[CaseRow] | None = None) -> str:
        taken = {row.id for row in (rows if rows is not None else self._rows)}
        n = 1
        while f"{stem}-{n}" in taken:
            n += 1
        return f"{stem}-{n}"

    def _select(self, row: int) -> None:
        if 0 <= row < self.rowCount():
            self.selectRow(row)
            self.setCurrentCell(row, 0)
            self.scrollToItem(self.item(row, 0))
