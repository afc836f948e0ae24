"""A suite run's results: the verdict and the main metrics in one line, and one row per
sample, failing samples first and shaded. Double-click or Enter opens a sample's run.

The same table shows a saved result file (`maskscope test --json`, File > Open Test
Result): its rows hold the numbers the file holds and the run cache's key of each run,
which the pane looks up when a row is opened (sig_open_key)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape
from typing import Any

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.plain_text import literal_html, plain_label
from app.suite.fit_columns import fit_columns, fit_last_column
from app.suite.narrow import WrappingLabel
from app.theme import chart_colors
from engine.runs.saved import SavedRun
from engine.suite.metrics import Sample, Summary, Verdict
from engine.suite.summary import passed_reason

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

# In a narrow pane, the columns left out first (least needed first); a row's tooltip still
# shows every number of its sample.
DROP_ORDER = tuple(
    COLUMNS.index(name)
    for name in ("latency ms", "overruled", "mass mean", "seed", "forced", "mass min", "#")
)
WHY_MIN_CHARS = 20  # "why it fails" keeps at least this many characters' width
FIT_EVERY_MS = 200  # the rows of a running suite added within this are fitted once

FAILING_ALPHA = 56  # the theme's "bad" colour under a failing row's text, light or dark
OPEN_TIP = "Double-click or Enter: open the sample in the chart and output"
EDITOR_LINK = "maskscope:suite-editor"  # in a result file's summary: unfold the editor


@dataclass(frozen=True, slots=True)
class ResultRow:
    sample: Sample
    run: SavedRun


@dataclass(frozen=True, slots=True)
class FileRow:
    """A sample of a saved result file: what the file says of it, and its run's cache key."""

    case_id: str
    index: int
    seed: int
    valid: bool
    truncated: bool
    fields_ok: int
    n_fields: int
    mean_valid_mass: float | None
    min_valid_mass: float | None
    n_overruled: int | None  # None for a sample made on a server (no per-step masks)
    n_forced: int | None
    latency_ms: float | None
    failures: tuple[str, ...]
    text: str
    run_key: str | None  # None in a file written before results kept the keys

    @property
    def passed(self) -> bool:
        return not self.failures

    @classmethod
    def from_json(cls, s: dict[str, Any]) -> FileRow:
        """From one of the result's "samples" (engine/suite/summary.py); KeyError or
        TypeError for an entry that is not one."""
        m = s["metrics"]
        return cls(
            case_id=str(s["case"]),
            index=int(s["index"]),
            seed=int(s["seed"]),
            valid=bool(s["valid"]),
            truncated=bool(s["truncated"]),
            fields_ok=sum(bool(f["ok"]) for f in s["fields"]),
            n_fields=len(s["fields"]),
            mean_valid_mass=m["mean_valid_mass"],
            min_valid_mass=m["min_valid_mass"],
            n_overruled=_int_or_none(m["n_overruled"]),
            n_forced=_int_or_none(m["n_forced"]),
            latency_ms=m["latency_ms"],
            failures=tuple(str(f) for f in s["failures"]),
            text=str(s["text"]),
            run_key=s.get("run_key") or None,
        )


def _int_or_none(value: Any) -> int | None:
    return None if value is None else int(value)


def _cells(row: ResultRow | FileRow) -> tuple[list[str], str, str]:
    """The row's cells (the last says why it fails, or "passes"), its output, its name."""
    s = row.sample if isinstance(row, ResultRow) else row
    n_fields = len(s.fields) if isinstance(s, Sample) else s.n_fields
    text = s.result.text if isinstance(s, Sample) else s.text
    why = "; ".join(s.failures)
    cells = [
        s.case_id,
        str(s.index + 1),
        str(s.seed),
        "yes" if s.valid else ("truncated" if s.truncated else "no"),
        f"{s.fields_ok}/{n_fields}" if n_fields else "–",
        _mass(s.mean_valid_mass),
        _mass(s.min_valid_mass),
        _count(s.n_overruled),
        _count(s.n_forced),
        "–" if s.latency_ms is None else f"{s.latency_ms:.0f}",
        why or "passes",
    ]
    return cells, text, f"case {s.case_id}, sample {s.index + 1} (seed {s.seed})"


def _mass(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0%}"


def _ms(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0f} ms"


def _count(value: int | None) -> str:
    return "n/a" if value is None else str(value)


def _verdict_head(problems: Sequence[str], failed: Sequence[str], passed: bool, held: str) -> str:
    """No verdict, Failed or Passed, in the theme's colours, with the reasons; `held` says
    what a pass rests on (passed_reason)."""
    colours = chart_colors()
    if problems:
        return f"<b style='color:{colours.warn.name()}'>No verdict</b>: " + escape(
            "; ".join(problems)
        )
    if failed or not passed:
        return f"<b style='color:{colours.bad.name()}'>Failed</b>: " + escape("; ".join(failed))
    return f"<b style='color:{colours.ok.name()}'>Passed</b>: " + escape(held)


def verdict_html(summary: Summary, verdict: Verdict) -> str:
    """Passed / failed with the failing metrics named, then the main numbers."""
    n_failing = summary.n_failing
    held = passed_reason(len(verdict.checks), n_failing, summary.n_samples)
    head = _verdict_head(verdict.problems, [c.text for c in verdict.failed], verdict.passed, held)
    numbers = (
        f"{summary.n_samples} samples of {summary.n_cases} cases, {n_failing} failing their case · "
        f"validity {_pct(summary.validity_rate)} · truncated {_pct(summary.truncation_rate)} · "
        f"fields {_pct(summary.field_accuracy)} · valid mass mean "
        f"{_mass(summary.mean_valid_mass)}, min {_mass(summary.min_valid_mass)} · "
        f"overruled {_count(summary.n_overruled)}, forced {_count(summary.n_forced)} · "
        f"p50 {_ms(summary.latency_ms_p50)}, p95 {_ms(summary.latency_ms_p95)}"
    )
    if summary.tokens_per_s is not None:
        numbers += f" · {summary.tokens_per_s:.0f} tokens/s"
    if summary.n_runaway:
        numbers += f" · {summary.n_runaway} ran away"
    return f"{head}<br>{numbers}"


def _file_numbers(m: dict[str, Any], n_failing: int) -> str:
    def get(key: str) -> Any:
        return m.get(key)

    return (
        f"{get('n_samples')} samples of {get('n_cases')} cases, {n_failing} failing their "
        f"case · validity {_pct(get('validity_rate'))} · truncated "
        f"{_pct(get('truncation_rate'))} · fields {_pct(get('field_accuracy'))} · valid mass "
        f"mean {_mass(get('mean_valid_mass'))}, min {_mass(get('min_valid_mass'))} · "
        f"overruled {_count(get('n_overruled'))}, forced {_count(get('n_forced'))} · "
        f"p50 {_ms(get('latency_ms_p50'))}, p95 {_ms(get('latency_ms_p95'))}"
    )


def result_file_html(data: dict[str, Any], source: str, n_failing: int) -> str:
    """The verdict line of a saved result, as verdict_html words a run, and where it is from."""
    checks = data.get("thresholds", [])
    failed = [str(c.get("text", "")) for c in checks if not c.get("passed")]
    problems = [str(p) for p in data.get("problems", [])]
    held = passed_reason(len(checks), n_failing, data.get("metrics", {}).get("n_samples"))
    head = _verdict_head(problems, failed, bool(data.get("passed")), held)
    suite = escape(str(data.get("suite") or "a suite"))
    where = (
        f"Result file {escape(source)} · suite {suite} · double-click a sample to open it · "
        f"<a href='{EDITOR_LINK}'>show the suite editor</a>"
    )
    # The file's numbers may be anything, markup included: escaped, as every value from it.
    numbers = escape(_file_numbers(data.get("metrics", {}), n_failing))
    return f"{where}<br>{head}<br>{numbers}"


class ResultsView(QWidget):
    sig_open = Signal(object, str)  # the SavedRun of the sample asked for, and its name
    # A row of a result file asked for: its run's cache key ("" when it has none), its name.
    sig_open_key = Signal(str, str)
    sig_show_editor = Signal()  # the result file's summary asks for the folded suite editor

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        # Wrapping labels: however short the pane, every line of the verdict stays in view
        # and the pane's splitter takes the room from its other part.
        self.summary = WrappingLabel("Run the suite to see its results here.", self)
        self.summary.setTextFormat(Qt.TextFormat.RichText)
        self.summary.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse
            | Qt.TextInteractionFlag.LinksAccessibleByMouse
            | Qt.TextInteractionFlag.LinksAccessibleByKeyboard
        )
        self.summary.linkActivated.connect(
            lambda link: self.sig_show_editor.emit() if link == EDITOR_LINK else None
        )
        self.table = QTableWidget(0, len(COLUMNS), self)
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 8)
        fit_last_column(self.table)
        # Squeezed, the table keeps its header and one row (what a short pane gives up first).
        self.table.setMinimumHeight(
            self.table.horizontalHeader().sizeHint().height()
            + self.table.verticalHeader().defaultSectionSize()
            + 2 * self.table.frameWidth()
        )
        self.table.setToolTip(OPEN_TIP)
        self.table.activated.connect(lambda index: self.open_row(index.row()))
        # Fitted when the viewport itself changes width: the table's own resize comes before
        # its scroll bars are laid out, with a width the columns would not get. (A fit that
        # hides a column can toggle the sideways scroll bar, which resizes the viewport's
        # height only: refitting on that looped, thousands of fits a second.)
        self.table.viewport().installEventFilter(self)
        # Samples of a run arrive one by one; a fit measures every row, so the rows added
        # within FIT_EVERY_MS are fitted once (at 300 rows a fit took 6.5 ms).
        self._fit_soon = QTimer(self)
        self._fit_soon.setSingleShot(True)
        self._fit_soon.setInterval(FIT_EVERY_MS)
        self._fit_soon.timeout.connect(self._fit)
        self.left_out: list[str] = []  # the columns too wide for the pane, by name
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        # Why an opened row could not be shown (its run left the cache), and how to get it.
        self.notice = plain_label(WrappingLabel("", self))
        self.notice.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.notice.setStyleSheet(f"color: {chart_colors().warn.name()}; font-weight: bold;")
        self.notice.hide()
        layout.addWidget(self.summary)
        layout.addWidget(self.notice)
        layout.addWidget(self.table, 1)
        self.rows: list[ResultRow | FileRow] = []
        self.source = ""  # the result file shown; "" for a run in the window

    def clear(self, text: str = "") -> None:
        self.rows = []
        self.source = ""
        self.table.setRowCount(0)
        self._say(escape(text))  # a plain sentence, in a rich label
        self.notice.hide()

    def show_notice(self, text: str) -> None:
        self.notice.setText(text)
        self.notice.setVisible(bool(text))

    def show_result(self, data: dict[str, Any], source: str) -> None:
        """A saved result file's samples, failing ones first. KeyError or TypeError (and
        nothing shown) for a file whose samples are not a result's."""
        rows = [FileRow.from_json(s) for s in data["samples"]]
        n_failing = sum(not r.passed for r in rows)
        self._show(rows)
        self.source = source
        self._say(result_file_html(data, source, n_failing))

    def add(self, sample: Sample, run: SavedRun) -> None:
        """A sample as it finishes: added at the end, shaded if it fails."""
        self.rows.append(ResultRow(sample, run))
        self._fill(len(self.rows) - 1)
        if not self._fit_soon.isActive():
            self._fit_soon.start()

    def finish(self, rows: list[ResultRow], summary: Summary, verdict: Verdict) -> None:
        """The whole run: failing samples first, then in suite order."""
        self._show(rows)
        self._say(verdict_html(summary, verdict))

    def _show(self, rows: list[ResultRow] | list[FileRow]) -> None:
        self.rows = sorted(rows, key=_passed)  # a stable sort
        self.source = ""
        self.notice.hide()
        self.table.setRowCount(0)
        for r in range(len(self.rows)):
            self._fill(r)
        self._fit()
        if self.rows:
            self.table.selectRow(0)

    def _say(self, html: str) -> None:
        self.summary.setText(html)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if (
            event.type() == QEvent.Type.Resize
            and watched is self.table.viewport()
            and event.size().width() != event.oldSize().width()  # a fit moves only heights
        ):
            self._fit()
        return super().eventFilter(watched, event)

    def _fit(self) -> None:
        """No sideways scrolling: columns that do not fit are left out, least needed first."""
        self._fit_soon.stop()  # this fit covers the rows it was waiting for
        room = self.fontMetrics().horizontalAdvance("x" * WHY_MIN_CHARS)
        self.left_out = [COLUMNS[c] for c in fit_columns(self.table, DROP_ORDER, room)]
        tip = OPEN_TIP
        if self.left_out:
            tip += (
                f"\n{', '.join(self.left_out)}: left out for want of width (widen the pane); "
                "each row's tooltip shows every number of its sample"
            )
        self.table.setToolTip(tip)

    def open_row(self, visual_row: int) -> None:
        item = self.table.item(visual_row, 0)
        if item is None:
            return
        row = self.rows[item.data(Qt.ItemDataRole.UserRole)]
        name = _cells(row)[2]
        if isinstance(row, ResultRow):
            self.sig_open.emit(row.run, name)
        else:
            self.sig_open_key.emit(row.run_key or "", name)

    def _fill(self, r: int) -> None:
        row = self.rows[r]
        cells, text, _ = _cells(row)
        tip = f"{detail_text(row)}\n\n{text}"  # every number, why it fails, the output
        items = [QTableWidgetItem(text) for text in cells]
        tint = QColor(chart_colors().bad)
        tint.setAlpha(FAILING_ALPHA)
        items[0].setData(Qt.ItemDataRole.UserRole, r)
        at = self.table.rowCount()
        self.table.insertRow(at)
        for c, item in enumerate(items):
            if c in range(1, 10):
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            if not _passed(row):
                item.setBackground(QBrush(tint))
            item.setToolTip(literal_html(tip))
            self.table.setItem(at, c, item)


def detail_text(row: ResultRow | FileRow) -> str:
    """One sample's every cell, named, then why it fails: the head of its row's tooltip."""
    cells, _, name = _cells(row)
    c = dict(zip(COLUMNS, cells, strict=True))
    latency = c["latency ms"] + (" ms" if c["latency ms"] != "–" else "")
    return (
        f"{name} · valid {c['valid']} · fields {c['fields ok']} · valid mass mean "
        f"{c['mass mean']}, min {c['mass min']} · overruled {c['overruled']} · forced "
        f"{c['forced']} · latency {latency}\n{c['why it fails']}"
    )


def _passed(row: ResultRow | FileRow) -> bool:
    return row.sample.passed if isinstance(row, ResultRow) else row.passed
