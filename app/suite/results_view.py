"""A suite run's results: the verdict and the main metrics in one line, and one row per
sample, failing samples first and shaded. Double-click or Enter opens a sample's run."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from engine.runs.saved import SavedRun
from engine.suite.metrics import Sample, Summary, Verdict

COLUMNS = (
    "case",
    "#",
    "seed",
    "valid",
    "fields ok",
    "mass mean",
    "mass min",
    "overruled",
    "forced",
    "latency ms",
    "why it fails",
)
FAILING = QColor("#fde2e2")
PASSED_COLOUR, FAILED_COLOUR, PROBLEM_COLOUR = "#1b7d33", "#b00020", "#8a5a00"


@dataclass(frozen=True, slots=True)
class Row:
    sample: Sample
    run: SavedRun


def _mass(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0%}"


def _ms(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0f} ms"


def verdict_html(summary: Summary, verdict: Verdict) -> str:
    """Passed / failed with the failing metrics named, then the main numbers."""
    if verdict.problems:
        head = f"<b style='color:{PROBLEM_COLOUR}'>No verdict</b>: " + "; ".join(verdict.problems)
    elif verdict.failed:
        named = "; ".join(check.text for check in verdict.failed)
        head = f"<b style='color:{FAILED_COLOUR}'>Failed</b>: {named}"
    else:
        head = f"<b style='color:{PASSED_COLOUR}'>Passed</b>: every threshold holds"
    n_failing = sum(not s.passed for s in summary.samples)
    numbers = (
        f"{summary.n_samples} samples of {summary.n_cases} cases, {n_failing} failing their case · "
        f"validity {_pct(summary.validity_rate)} · truncated {_pct(summary.truncation_rate)} · "
        f"fields {_pct(summary.field_accuracy)} · valid mass mean "
        f"{_mass(summary.mean_valid_mass)}, min {_mass(summary.min_valid_mass)} · "
        f"overruled {summary.n_overruled}, forced {summary.n_forced} · "
        f"p50 {_ms(summary.latency_ms_p50)}, p95 {_ms(summary.latency_ms_p95)}"
    )
    if summary.tokens_per_s is not None:
        numbers += f" · {summary.tokens_per_s:.0f} tokens/s"
    if summary.n_runaway:
        numbers += f" · {summary.n_runaway} ran away"
    return f"{head}<br>{numbers}"


class ResultsView(QWidget):
    sig_open = Signal(object, str)  # the SavedRun of the sample asked for, and its name

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.summary = QLabel("Run the suite to see its results here.", self)
        self.summary.setWordWrap(True)
        self.summary.setTextFormat(Qt.TextFormat.RichText)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.table = QTableWidget(0, len(COLUMNS), self)
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 8)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        self.table.setToolTip("Double-click or Enter: open the sample in the chart and output")
        self.table.activated.connect(lambda index: self.open_row(index.row()))
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.summary)
        layout.addWidget(self.table, 1)
        self.rows: list[Row] = []

    def clear(self, text: str = "") -> None:
        self.rows = []
        self.table.setRowCount(0)
        self.summary.setText(text)

    def add(self, sample: Sample, run: SavedRun) -> None:
        """A sample as it finishes: added at the end, shaded if it fails."""
        self.rows.append(Row(sample, run))
        self._fill(len(self.rows) - 1)

    def finish(self, rows: list[Row], summary: Summary, verdict: Verdict) -> None:
        """The whole run: failing samples first, then in suite order."""
        self.rows = sorted(rows, key=lambda row: row.sample.passed)  # a stable sort
        self.table.setRowCount(0)
        for r in range(len(self.rows)):
            self._fill(r)
        self.summary.setText(verdict_html(summary, verdict))
        if self.rows:
            self.table.selectRow(0)

    def open_row(self, visual_row: int) -> None:
        item = self.table.item(visual_row, 0)
        if item is not None:
            row = self.rows[item.data(Qt.ItemDataRole.UserRole)]
            s = row.sample
            self.sig_open.emit(row.run, f"case {s.case_id}, sample {s.index + 1} (seed {s.seed})")

    def _fill(self, r: int) -> None:
        s = self.rows[r].sample
        fields = f"{s.fields_ok}/{len(s.fields)}" if s.fields else "–"
        why = "; ".join(s.failures)
        items = [
            QTableWidgetItem(s.case_id),
            QTableWidgetItem(str(s.index + 1)),
            QTableWidgetItem(str(s.seed)),
            QTableWidgetItem("yes" if s.valid else ("truncated" if s.truncated else "no")),
            QTableWidgetItem(fields),
            QTableWidgetItem(_mass(s.mean_valid_mass)),
            QTableWidgetItem(_mass(s.min_valid_mass)),
            QTableWidgetItem(str(s.n_overruled)),
            QTableWidgetItem(str(s.n_forced)),
            QTableWidgetItem(f"{s.latency_ms:.0f}"),
            QTableWidgetItem(why or "passes"),
        ]
        items[0].setData(Qt.ItemDataRole.UserRole, r)
        row = self.table.rowCount()
        self.table.insertRow(row)
        tip = f"{s.result.text}\n\n{why}" if why else s.result.text
        for c, item in enumerate(items):
            if c in range(1, 10):
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            if not s.passed:
                item.setBackground(QBrush(FAILING))
                item.setForeground(QBrush(QColor("#000000")))
            item.setToolTip(tip)
            self.table.setItem(row, c, item)
