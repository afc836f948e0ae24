"""What a run produced: the raw text (streamed live), the parsed JSON, and a verdict.

The verdict badge distinguishes valid, invalid (with each JSON-path error listed),
truncated at max_tokens, stopped by the user, and errors that prevented a run.
"""

from __future__ import annotations

import json

from PySide6.QtCore import QTimer
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QTabWidget,
    QToolButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.text_edit import use_monospace
from app.theme import chart_colors
from app.workbench.code_editor import JsonHighlighter
from engine.records import FinishReason, RunResult

FLUSH_MS = 33  # streamed text is appended at most ~30 times a second


class OutputView(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.badge = QLabel("no run yet", self)
        self.badge.setObjectName("verdictBadge")
        self.summary = QLabel("", self)
        self.summary.setObjectName("runSummary")
        self.summary.setWordWrap(True)  # a long summary must not widen the whole column
        self.copy_button = QToolButton(self)
        self.copy_button.setText("Copy")
        self.copy_button.setToolTip(
            "Copy the output: the pretty-printed JSON when it parsed, the raw text otherwise"
        )
        self.copy_button.clicked.connect(self.copy_output)

        self.raw = QPlainTextEdit(self)
        self.raw.setObjectName("rawOutput")
        self.raw.setReadOnly(True)
        use_monospace(self.raw)
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

        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(QLabel("<b>Output</b>", self))
        top.addWidget(self.badge)
        top.addStretch(1)
        top.addWidget(self.copy_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        layout.addLayout(top)
        layout.addWidget(self.summary)
        layout.addWidget(self.tabs, 1)
        layout.addWidget(self.issues)

        self._pending = ""
        self._flush_timer = QTimer(self)
        self._flush_timer.setSingleShot(True)
        self._flush_timer.setInterval(FLUSH_MS)
        self._flush_timer.timeout.connect(self._flush)
        self.result: RunResult | None = None
        self._set_badge("no run yet", None)

    # --- during a run ----------------------------------------------------------------------
    def start_run(self) -> None:
        self.result = None
        self._pending = ""
        self.raw.clear()
        self.pretty.clear()
        self.issues.clear()
        self.issues.hide()
        self.summary.setText("")
        self.tabs.setCurrentWidget(self.raw)
        self._set_badge("running…", "warn")

    def append_piece(self, piece: str) -> None:
        self._pending += piece
        if not self._flush_timer.isActive():
            self._flush_timer.start()

    # --- after a run -----------------------------------------------------------------------
    def show_result(self, result: RunResult) -> None:
        self._flush_timer.stop()
        self._pending = ""
        self.result = result
        self.raw.setPlainText(result.text)  # the engine's text is authoritative
        if result.parse_error is None and result.text.strip():
            self.pretty.setPlainText(json.dumps(result.parsed, indent=2, ensure_ascii=False))
        self.summary.setText(_summary(result))
        rows = [(e.path, e.message) for e in result.errors]
        if result.parse_error:
            rows.insert(0, ("(whole output)", f"not JSON: {result.parse_error}"))
        if result.finish_reason is FinishReason.ERROR and result.message:
            rows.insert(0, ("(engine)", result.message))
        if result.unchecked_note:
            rows.append(("(not checked)", result.unchecked_note))
        self._show_issues(rows)

        self._set_badge(*verdict(result))
        if result.valid:
            self.tabs.setCurrentWidget(self.pretty)

    def show_error(self, kind: str, message: str) -> None:
        """A job failed before producing a result (bad schema, grammar, model...)."""
        self._flush_timer.stop()
        self._flush()
        self.result = None
        self.summary.setText("")
        self._show_issues([(kind, message)])
        self._set_badge(f"✗ {kind} error", "bad")

    def copy_output(self) -> None:
        text = self.pretty.toPlainText() or self.raw.toPlainText()
        QGuiApplication.clipboard().setText(text)

    def _show_issues(self, rows: list[tuple[str, str]]) -> None:
        self.issues.clear()
        for where, problem in rows:
            item = QTreeWidgetItem([where, problem])
            item.setToolTip(1, problem)
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

    def _flush(self) -> None:
        if self._pending:
            cursor = self.raw.textCursor()
            cursor.movePosition(cursor.MoveOperation.End)
            cursor.insertText(self._pending)
            self._pending = ""
            self.raw.ensureCursorVisible()


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
