"""What a run produced: the raw text (streamed live), the parsed JSON, and a verdict.

The verdict badge distinguishes valid, invalid (with each JSON-path error listed),
truncated at max_tokens, stopped by the user, and errors that prevented a run. A result from
an older schema, prompt or settings is marked out of date. An output value that breaks a
keyword the grammar does not enforce is highlighted, and its row leads to that keyword's
warning in the Problems list.

The raw text is also the run's timeline (app/decoding/timeline_text.py): each step's token is
shaded by its valid mass and marked when the grammar forced it or overruled the model, a
click on a token selects its step, and the selected step's token is outlined.
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QColor, QGuiApplication, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QTabWidget,
    QTextEdit,
    QToolButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.decoding.timeline_text import TimelineText
from app.decoding.token_spans import legend_html
from app.decoding.violations import Violation
from app.plain_text import literal_html
from app.text_edit import use_monospace
from app.theme import chart_colors, is_dark
from app.workbench.code_editor import JsonHighlighter
from app.workbench.problems_list import identity
from engine.records import FinishReason, RunResult, StepRecord
from engine.workbench.entries import Problem

FLUSH_MS = 33  # streamed text is appended at most ~30 times a second


NOT_RUN_SCHEMA = 'not run: the schema has errors — <a href="problems">see Problems</a>'
STALE_TIP = "Run again to update it."


class OutputView(QWidget):
    """Emits sig_show_problems() when its pointer to the Problems list is followed,
    sig_violation_selected(Violation) when a violation's row is picked, and
    sig_step_clicked(index) when a token of the output is clicked (index into the run's
    records, as given to append_record or set_records)."""

    sig_show_problems = Signal()
    sig_violation_selected = Signal(object)
    sig_step_clicked = Signal(int)

    def __init__(
        self, parent: QWidget | None = None, records: list[StepRecord] | None = None
    ) -> None:
        """`records`: the run's list, owned by its session (app/session.py), which the
        output reads and never changes; without one the output keeps its own."""
        super().__init__(parent)
        self._source = records
        # Which run the output is of (yours, a branch, a replay, a suite sample): after a
        # what-if the pane showed the branch with nothing to say it was not the original.
        self.subject = QLabel("", self)
        self.subject.setObjectName("outputSubject")
        self.subject.setTextFormat(Qt.TextFormat.PlainText)  # token texts hold < and &
        self.subject.setWordWrap(True)
        self.subject.hide()
        self.badge = QLabel("no run yet", self)
        self.badge.setObjectName("verdictBadge")
        self.stale = QLabel("out of date", self)
        self.stale.setObjectName("outputStale")
        self.stale.setToolTip(STALE_TIP)
        self.stale.setStyleSheet(f"color: {chart_colors().warn.name()}; font-style: italic;")
        self.stale.hide()
        self.not_run = QLabel("", self)
        self.not_run.setObjectName("outputNotRun")
        self.not_run.setTextFormat(Qt.TextFormat.RichText)
        self.not_run.linkActivated.connect(lambda _link: self.sig_show_problems.emit())
        self.not_run.hide()
        self.violations: list[Violation] = []
        self.summary = QLabel("", self)
        self.summary.setObjectName("runSummary")
        self.summary.setWordWrap(True)  # a long summary must not widen the whole column
        self.copy_button = QToolButton(self)
        self.copy_button.setText("Copy")
        self.copy_button.setToolTip(
            "Copy the output: the pretty-printed JSON when it parsed, the raw text otherwise"
        )
        self.copy_button.clicked.connect(self.copy_output)

        self.raw = TimelineText(self, records)
        self.raw.setObjectName("rawOutput")
        self.raw.sig_step_clicked.connect(self.sig_step_clicked)
        self.raw.notes = self._violation_note
        use_monospace(self.raw)
        self.legend = QLabel(self)
        self.legend.setObjectName("timelineLegend")
        self.legend.setWordWrap(True)
        small = self.legend.font()
        small.setPointSizeF(max(7.0, small.pointSizeF() - 1))
        self.legend.setFont(small)
        self.legend.setToolTip("Hover over a token for its step; click it to show that step")
        self.legend.hide()
        self.pretty = QPlainTextEdit(self)
        self.pretty.setObjectName("prettyOutput")
        self.pretty.setReadOnly(True)
        use_monospace(self.pretty)
        self._highlighter = JsonHighlighter(self.pretty.document())
        self.tabs = QTabWidget(self)
        self.tabs.addTab(self.raw, "Raw text")
        self.tabs.addTab(self.pretty, "Parsed JSON")

        self.issues = QTreeWidget(self)
        self.issues.setObjectName("validationIssues")
        self.issues.setHeaderLabels(["Where", "Problem"])
        self.issues.setRootIsDecorated(False)
        self.issues.setWordWrap(True)
        self.issues.header().setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        self.issues.header().setStretchLastSection(True)
        self.issues.setMaximumHeight(140)
        self.issues.hide()
        self.issues.itemClicked.connect(self._on_issue_clicked)
        self.issues.itemActivated.connect(self._on_issue_clicked)

        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(self.badge)
        top.addWidget(self.stale)
        top.addStretch(1)
        top.addWidget(self.copy_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        layout.addWidget(self.subject)
        layout.addLayout(top)
        layout.addWidget(self.not_run)
        layout.addWidget(self.summary)
        layout.addWidget(self.tabs, 1)
        layout.addWidget(self.legend)
        layout.addWidget(self.issues)

        # What arrived since the last flush: records, or bare pieces from append_piece.
        self._pending: list[StepRecord | str] = []
        self._flush_timer = QTimer(self)
        self._flush_timer.setSingleShot(True)
        self._flush_timer.setInterval(FLUSH_MS)
        self._flush_timer.timeout.connect(self._flush)
        self.result: RunResult | None = None
        self._set_badge("no run yet", None)
        self.apply_theme()
        QGuiApplication.styleHints().colorSchemeChanged.connect(self.apply_theme)

    # --- during a run ----------------------------------------------------------------------
    def set_subject(self, text: str) -> None:
        """Name the run shown ("Branch 1: step 5 → 'EUR'"); empty hides the name."""
        self.subject.setText(f"Output of: {text}" if text else "")
        self.subject.setVisible(bool(text))

    def start_run(self) -> None:
        self._clear()
        self.tabs.setCurrentWidget(self.raw)
        self._set_badge("running…", "warn")

    def _clear(self) -> None:
        """Nothing of an earlier run stays: text, issues, highlights, notes."""
        self._flush_timer.stop()
        self.result = None
        self._pending = []
        self.raw.clear_tokens()
        self.legend.hide()
        self.pretty.clear()
        self.issues.clear()
        self.issues.hide()
        self.summary.setText("")
        self.violations = []
        self.not_run.hide()
        self.set_stale(False)

    def set_stale(self, stale: bool, reason: str = "") -> None:
        """Mark what is shown as made from an older schema, prompt or settings."""
        self.stale.setVisible(stale and self.result is not None)
        self.stale.setToolTip(f"{reason} {STALE_TIP}".strip())

    def is_stale(self) -> bool:
        return self.stale.isVisibleTo(self)

    def show_not_run(self, html_text: str = NOT_RUN_SCHEMA) -> None:
        """Run was refused because the schema has errors: they live in the Problems list;
        this is only the pointer there."""
        self._clear()
        self.tabs.setCurrentWidget(self.raw)  # not an empty "Parsed JSON" left from before
        self.not_run.setStyleSheet(f"color: {chart_colors().bad.name()};")
        self.not_run.setText(html_text)
        self.not_run.show()
        self._set_badge("not run", None)

    def clear_not_run(self) -> None:
        """The errors that kept the run from starting are gone."""
        if self.not_run.isVisibleTo(self):
            self.not_run.hide()
            self._set_badge("no run yet", None)

    def append_piece(self, piece: str) -> None:
        """Stream text that carries no step (no shading, no click): prefer append_record."""
        self._append(piece)

    def append_record(self, record: StepRecord) -> None:
        """Stream one step's token, shaded and marked, as the timeline's next step."""
        self._append(record)

    def _append(self, item: StepRecord | str) -> None:
        self._pending.append(item)
        if not self._flush_timer.isActive():
            self._flush_timer.start()

    def set_records(self, records: Sequence[StepRecord]) -> None:
        """Show these steps' tokens at once (a replay, or a branch's shared beginning) in
        place of what the output shows."""
        self._flush_timer.stop()
        self._pending = []
        self.raw.set_records("".join(r.token_piece for r in records), records)
        self.legend.setVisible(bool(records))

    def select_step(self, index: int | None) -> None:
        """Outline the token of step `index` (into the run's records); None: no step."""
        self.raw.select_step(index)

    @property
    def records(self) -> list[StepRecord]:
        """The steps the output shows, flushed or not."""
        if self._source is not None:
            return self._source
        return self.raw.records + [r for r in self._pending if not isinstance(r, str)]

    # --- after a run -----------------------------------------------------------------------
    def show_result(self, result: RunResult, violations: Sequence[Violation] = ()) -> None:
        """Show a finished run; `violations` (its validation errors, located and tied to
        their warnings) replace the plain list of result.errors when given."""
        records = self.records
        self._flush_timer.stop()
        self._pending = []
        self.result = result
        # The engine's text is authoritative: the live one joins pieces that may each hold
        # half of a character.
        self.raw.set_records(result.text, records)
        self.legend.setVisible(bool(records))
        if result.parse_error is None and result.text.strip():
            self.pretty.setPlainText(json.dumps(result.parsed, indent=2, ensure_ascii=False))
        self.summary.setText(_summary(result))
        rows = [] if violations else [(e.path, e.message) for e in result.errors]
        if result.parse_error:
            rows.insert(0, ("(whole output)", f"not JSON: {result.parse_error}"))
        if result.finish_reason is FinishReason.ERROR and result.message:
            rows.insert(0, ("(engine)", result.message))
        if result.unchecked_note:
            rows.append(("(not checked)", result.unchecked_note))
        self._show_issues(rows)
        if violations:
            self.show_violations(violations)

        self._set_badge(*verdict(result))
        if result.valid and not records:  # with steps, the raw text is the run's timeline
            self.tabs.setCurrentWidget(self.pretty)

    def show_error(self, kind: str, message: str) -> None:
        """A job failed before producing a result (model, engine...): the previous run's
        output must not stay, as if this run had made it."""
        self._clear()
        self._show_issues([(kind, message)])
        self._set_badge(f"✗ {kind} error", "bad")

    def show_violations(self, violations: Sequence[Violation]) -> None:
        """List the output's validation errors by place, highlight each located one in the
        raw text; those the grammar was said not to enforce name their warning."""
        self.violations = list(violations)
        for i, v in enumerate(self.violations):
            note = " — not enforced by the grammar: see its warning" if v.warning else ""
            item = QTreeWidgetItem([v.path, f"{v.message}{note}"])
            item.setToolTip(
                1, literal_html(f"{v.message}\n(keyword `{v.keyword}` at {v.schema_path})")
            )
            item.setData(0, Qt.ItemDataRole.UserRole, i)
            self.issues.addTopLevelItem(item)
        if self.violations:
            self.issues.show()
        self._highlight()

    def select_violations_of(self, warning: object) -> bool:
        """Select the rows (and the text) of the violations tied to this warning."""
        wanted = identity(warning) if isinstance(warning, Problem) else None
        rows = {
            i for i, v in enumerate(self.violations) if v.warning and identity(v.warning) == wanted
        }
        self.issues.clearSelection()
        for n in range(self.issues.topLevelItemCount()):
            item = self.issues.topLevelItem(n)
            item.setSelected(item.data(0, Qt.ItemDataRole.UserRole) in rows)
        if rows:
            self._select_span(self.violations[min(rows)])
        return bool(rows)

    def _highlight(self) -> None:
        colors = chart_colors()
        selections = []
        for v in self.violations:
            if v.span is None:
                continue
            color = QColor(colors.warn if v.warning is not None else colors.bad)
            selection = QTextEdit.ExtraSelection()
            selection.format.setUnderlineStyle(QTextCharFormat.UnderlineStyle.WaveUnderline)
            selection.format.setUnderlineColor(color)
            background = QColor(color)
            background.setAlpha(50)
            selection.format.setBackground(background)
            selection.format.setToolTip(literal_html(v.message))
            selection.cursor = self._span_cursor(v.span)
            selections.append(selection)
        self.raw.setExtraSelections(selections)

    def _violation_note(self, position: int) -> str:
        """The validation errors of the output value at a document position, for hover."""
        if not self.violations:
            return ""
        units = self.raw.toPlainText().encode("utf-16-le")[: 2 * position]
        offset = len(units.decode("utf-16-le", errors="ignore"))
        messages = [
            html.escape(v.message)
            for v in self.violations
            if v.span is not None and v.span[0] <= offset < v.span[1]
        ]
        return "<br>".join(
            f"<span style='color:{chart_colors().bad.name()}'>✗</span> {m}" for m in messages
        )

    def _span_cursor(self, span: tuple[int, int]) -> QTextCursor:
        text = self.raw.toPlainText()
        cursor = QTextCursor(self.raw.document())
        cursor.setPosition(_qt_offset(text, span[0]))
        cursor.setPosition(_qt_offset(text, span[1]), QTextCursor.MoveMode.KeepAnchor)
        return cursor

    def _select_span(self, violation: Violation) -> None:
        if violation.span is not None:
            self.tabs.setCurrentWidget(self.raw)
            self.raw.setTextCursor(self._span_cursor(violation.span))

    def _on_issue_clicked(self, item: QTreeWidgetItem) -> None:
        index = item.data(0, Qt.ItemDataRole.UserRole)
        if index is None or index >= len(self.violations):
            return
        violation = self.violations[index]
        self._select_span(violation)
        self.sig_violation_selected.emit(violation)

    def copy_output(self) -> None:
        text = self.pretty.toPlainText() or self.raw.toPlainText()
        QGuiApplication.clipboard().setText(text)

    def _show_issues(self, rows: list[tuple[str, str]]) -> None:
        self.issues.clear()
        for where, problem in rows:
            item = QTreeWidgetItem([where, problem])
            item.setToolTip(1, literal_html(problem))
            self.issues.addTopLevelItem(item)
        self.issues.setVisible(bool(rows))

    def _set_badge(self, text: str, tone: str | None) -> None:
        self.badge.setText(text)
        if tone is None:
            self.badge.setStyleSheet("padding: 2px 8px;")
            return
        color = getattr(chart_colors(), tone)
        self.badge.setStyleSheet(
            f"background: {color.name()}; color: white; font-weight: bold;"
            "border-radius: 4px; padding: 2px 8px;"
        )

    def apply_theme(self) -> None:
        colors = chart_colors()
        self.raw.restyle()
        self.legend.setText(legend_html(is_dark(), colors.bad, colors.current_step))

    def _flush(self) -> None:
        if not self._pending:
            return
        pending, self._pending = self._pending, []
        following = self.raw.selected is None or self.raw.selected >= len(self.raw.records) - 1
        records = [r for r in pending if not isinstance(r, str)]
        if len(records) == len(pending):
            self.raw.append_records(records, [r.token_piece for r in records])
        else:  # bare pieces: as before records were streamed
            for item in pending:
                if isinstance(item, str):
                    self.raw.append_plain(item)
                else:
                    self.raw.append_records([item], [item.token_piece])
        self.legend.setVisible(bool(self.raw.records))
        if following and not self.raw.textCursor().hasSelection():  # not while reading back
            cursor = self.raw.textCursor()
            cursor.movePosition(QTextCursor.MoveOperation.End)
            self.raw.setTextCursor(cursor)
            self.raw.ensureCursorVisible()


def _qt_offset(text: str, offset: int) -> int:
    """A Python character offset as a QTextDocument position (UTF-16 code units)."""
    return len(text[: max(0, offset)].encode("utf-16-le")) // 2


def verdict(result: RunResult) -> tuple[str, str]:
    """(badge text, tone) for a result; tone names a ChartColors attribute."""
    if result.valid:
        return "✓ valid", "ok"
    if result.finish_reason is FinishReason.CANCELLED:
        return "■ stopped by user", "warn"
    if result.truncated:
        return "⚠ truncated at max_tokens", "warn"
    if result.finish_reason is FinishReason.ERROR:
        return "✗ engine error", "bad"
    n = len(result.errors) + (result.parse_error is not None)
    return f"✗ invalid ({n} error{'s' if n != 1 else ''})", "bad"


def _summary(result: RunResult) -> str:
    parts = [f"{result.n_tokens} tokens", result.finish_reason.label]
    if result.total_ms:
        parts.append(f"{result.total_ms / 1000:.2f} s")
    if result.tokens_per_s:
        parts.append(f"{result.tokens_per_s:.1f} tok/s")
    return " · ".join(parts)
