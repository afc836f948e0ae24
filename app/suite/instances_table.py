"""Known-good and known-bad outputs: paste one, mark it good or bad."""

from __future__ import annotations

import contextlib
import dataclasses
import json
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QUndoStack
from PySide6.QtWidgets import QTableWidgetItem, QWidget

from app.suite.rows_table import RowsTable, text_item
from engine.suite.format import Instance

OUTPUT_TIP = "The output as JSON; text that is not JSON is kept as raw text (a cut-off object)"


@dataclass(frozen=True, slots=True)
class InstanceRow:
    valid: bool
    output: str  # JSON text, or raw text when it is not JSON
    description: str = ""

    @classmethod
    def of(cls, instance: Instance) -> InstanceRow:
        return cls(instance.valid, instance.output_text, instance.description)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"valid": self.valid}
        try:
            out["data"] = json.loads(self.output)
        except json.JSONDecodeError:
            out["text"] = self.output
        if self.description.strip():
            out["description"] = self.description.strip()
        return out


class InstancesTable(RowsTable):
    def __init__(self, undo: QUndoStack, parent: QWidget | None = None) -> None:
        super().__init__(undo, parent)

    def columns(self) -> list[str]:
        return ["good", "description", "output"]  # the output stretches to the edge

    def cells(self, row: InstanceRow) -> list[QTableWidgetItem]:
        good = QTableWidgetItem("good" if row.valid else "bad")
        good.setFlags(
            (good.flags() | Qt.ItemFlag.ItemIsUserCheckable) & ~Qt.ItemFlag.ItemIsEditable
        )
        good.setCheckState(Qt.CheckState.Checked if row.valid else Qt.CheckState.Unchecked)
        good.setToolTip("Checked: the grammar must accept this output; unchecked: reject it")
        return [good, text_item(row.description), text_item(row.output, tip=OUTPUT_TIP)]

    def edited(self, row: InstanceRow, column: int, item: QTableWidgetItem) -> InstanceRow:
        if column == 0:
            return dataclasses.replace(row, valid=item.checkState() == Qt.CheckState.Checked)
        if column == 1:
            return dataclasses.replace(row, description=item.text())
        return dataclasses.replace(row, output=item.text())

    def paste(self, text: str, valid: bool = True) -> bool:
        """A pasted output as a new instance (JSON is shown compact); False for no text."""
        text = text.strip()
        if not text:
            return False
        # Raw text stays as it is: an output that is not JSON is a fine known-bad instance.
        with contextlib.suppress(json.JSONDecodeError):
            text = json.dumps(json.loads(text), ensure_ascii=False)
        rows = self.rows
        rows.append(InstanceRow(valid, text))
        self.change(rows, "Paste instance")
        self.selectRow(len(rows) - 1)
        return True

    def mark_selected(self, valid: bool) -> None:
        chosen = self.selected_rows()
        rows = self.rows
        for r in chosen:
            rows[r] = dataclasses.replace(rows[r], valid=valid)
        if chosen and rows != self._rows:
            self.change(rows, "Mark good" if valid else "Mark bad")

    def remove_selected(self) -> None:
        chosen = set(self.selected_rows())
        if chosen:
            rows = [row for r, row in enumerate(self.rows) if r not in chosen]
            self.change(rows, "Remove instance")
