"""Two test results side by side (Suite > Compare Test Results): engine/suite/compare.py's
ResultComparison in a window. The verdict on top, the metrics that changed, then one row per
case, regressions first and tinted in the theme's colours, and under them the outputs of
the case selected before and after. Copy puts the comparison's text form on the clipboard,
as `maskscope test --compare` prints it."""

from __future__ import annotations

from html import escape

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor, QFont, QGuiApplication
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.plain_text import literal_html
from app.theme import chart_colors
from engine.suite.compare import CaseChange, Change, ResultComparison, comparison_text

CASE_COLUMNS = ("change", "case", "validity", "fields", "valid mass", "outputs changed")
METRIC_COLUMNS = ("metric", "first", "second")
_TINT_ALPHA = 56  # a tint under the text, readable on light and dark rows alike


# The result's metric keys as the terminal table words them; any other key reads with spaces.
METRIC_WORDS = {
    "mean_valid_mass": "valid mass, mean",
    "min_valid_mass": "valid mass, min",
    "n_samples": "samples",
    "n_cases": "cases",
    "n_steps": "steps",
    "n_overruled": "overruled steps",
    "n_forced": "forced steps",
    "fields_ok": "fields right",
    "fields_checked": "fields checked",
    "n_tokens": "tokens",
    "tokens_per_s": "tokens/s",
    "latency_ms_p50": "latency ms p50",
    "latency_ms_p95": "latency ms p95",
    "n_runaway": "runaway samples",
    "n_errors": "harness errors",
    "n_cancelled": "cancelled samples",
    "wall_s": "wall time s",
    "n_planned": "samples planned",
}


def metric_words(key: str) -> str:
    return METRIC_WORDS.get(key, key.replace("_", " "))


def _num(value: object) -> str:
    if value is None:
        return "n/a"  # as the terminal table and the results table say it
    if isinstance(value, float):  # 0.745, 21.7, 1018 (ms): never 1.02e+03
        return f"{value:.0f}" if abs(value) >= 100 else f"{value:.3g}"
    return str(value)


def _arrow(pair: tuple[object, object]) -> str:
    a, b = (_num(v) for v in pair)
    return a if a == b else f"{a} → {b}"


def change_colour(change: Change) -> QColor | None:
    """The theme's colour of a kind of change: bad for a loss, ok for a gain, warn for other
    outputs at the same rates; None for an unchanged case."""
    colours = chart_colors()
    return {
        Change.REGRESSED: colours.bad,
        Change.REMOVED: colours.bad,
        Change.IMPROVED: colours.ok,
        Change.ADDED: colours.ok,
        Change.CHANGED: colours.warn,
    }.get(change)


def outputs_text(case: CaseChange) -> str:
    """The outputs of one case that changed, each before and after."""
    if not case.outputs:
        return f"Case {case.case_id}: no output changed."
    parts = [f"Case {case.case_id}: {len(case.outputs)} output(s) changed"]
    for out in case.outputs:
        parts += ["", f"sample {out.index + 1}, before:", out.before, "after:", out.after]
    return "\n".join(parts)


class ResultCompareView(QDialog):
    def __init__(self, comparison: ResultComparison, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.comparison = comparison
        a, b = comparison.names
        self.setWindowTitle(f"Test results compared: {a} → {b}")
        self.resize(960, 640)
        self.verdict = QLabel(self)
        self.verdict.setTextFormat(Qt.TextFormat.RichText)
        self.verdict.setWordWrap(True)
        self.verdict.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.metrics = self._table(METRIC_COLUMNS)
        self.cases = self._table(CASE_COLUMNS)
        self.cases.setToolTip("Select a case to see its outputs before and after")
        self.outputs = QPlainTextEdit(self)
        self.outputs.setReadOnly(True)
        self.outputs.setFont(QFont("monospace"))
        self.copy_button = QPushButton("Copy", self)
        self.copy_button.setToolTip("Copy the comparison as text, as `maskscope test --compare`")
        self.copy_button.clicked.connect(lambda _c=False: self.copy())
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.addButton(self.copy_button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.rejected.connect(self.close)
        # The cases beside the metrics that changed, the selected case's outputs below both.
        top = QSplitter(Qt.Orientation.Horizontal, self)
        top.addWidget(self.cases)
        top.addWidget(self.metrics)
        top.setStretchFactor(0, 3)
        top.setStretchFactor(1, 2)
        splitter = QSplitter(Qt.Orientation.Vertical, self)
        splitter.addWidget(top)
        splitter.addWidget(self.outputs)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 2)
        for part in (top, splitter):
            part.setChildrenCollapsible(False)
        layout = QVBoxLayout(self)
        layout.addWidget(self.verdict)
        layout.addWidget(splitter, 1)
        layout.addWidget(buttons)
        self.cases.currentCellChanged.connect(lambda row, *_: self._show_outputs(row))
        self._fill()

    def _table(self, columns: tuple[str, ...]) -> QTableWidget:
        table = QTableWidget(0, len(columns), self)
        table.setHorizontalHeaderLabels(columns)
        table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        table.verticalHeader().hide()
        table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 8)
        header = table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        return table

    def _fill(self) -> None:
        c = self.comparison
        colours = chart_colors()
        n_bad = sum(x.change in (Change.REGRESSED, Change.REMOVED) for x in c.cases)
        n_same = sum(x.change is Change.SAME for x in c.cases)
        if c.regressed:
            head = f"<b style='color:{colours.bad.name()}'>{n_bad} case(s) regressed</b>"
        else:
            head = f"<b style='color:{colours.ok.name()}'>No regressions</b>"
        a, b = c.names
        self.verdict.setText(
            f"{head} · {escape(a)} → {escape(b)} · {len(c.cases)} case(s), {n_same} unchanged · "
            "regressions first; select a case for its outputs"
        )
        changed = [(k, x, y) for k, x, y in c.metrics if x != y]
        self.metrics.setHorizontalHeaderLabels(("metric (changed)", a, b))
        for key, x, y in changed:
            self._add_row(self.metrics, [metric_words(key), _num(x), _num(y)], None)
            tip = literal_html(f"{key} in --json")  # the key is the result file's
            self.metrics.item(self.metrics.rowCount() - 1, 0).setToolTip(tip)
        if not changed:
            self._add_row(self.metrics, ["no metric changed", "", ""], None)
        for case in c.cases:
            cells = [
                case.change.value,
                case.case_id,
                _arrow(case.validity),
                _arrow(case.fields),
                _arrow(case.mean_valid_mass),
                str(len(case.outputs)),
            ]
            self._add_row(self.cases, cells, change_colour(case.change))
        if c.cases:
            self.cases.setCurrentCell(0, 0)
        else:
            self.outputs.setPlainText("Neither result holds a case.")

    def _add_row(self, table: QTableWidget, cells: list[str], colour: QColor | None) -> None:
        row = table.rowCount()
        table.insertRow(row)
        for col, text in enumerate(cells):
            item = QTableWidgetItem(text)
            if colour is not None:
                tint = QColor(colour)
                tint.setAlpha(_TINT_ALPHA)
                item.setBackground(QBrush(tint))
                if col == 0:  # the kind of change itself, in the full colour
                    item.setForeground(QBrush(colour))
                    font = item.font()
                    font.setBold(True)
                    item.setFont(font)
            table.setItem(row, col, item)

    def _show_outputs(self, row: int) -> None:
        if 0 <= row < len(self.comparison.cases):
            self.outputs.setPlainText(outputs_text(self.comparison.cases[row]))

    def text(self) -> str:
        return comparison_text(self.comparison)

    def copy(self) -> None:
        QGuiApplication.clipboard().setText(self.text())
