"""The selected step explained with the model's own numbers: the output so far, the
pipeline from logits to the sampled token, the top candidates before and after masking,
ΣP over the valid set written out as a sum, each renormalised value as a division, and
why the grammar forbids a masked token.

Clicking a valid candidate asks for a branch from this step with that token (sig_force);
clicking a masked one explains why the grammar forbids it here (engine.explain.forbidden).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QGuiApplication, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QScrollArea,
    QTextBrowser,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.demo.candidates_table import CandidatesTable
from app.demo.explanation_html import (
    code_html,
    count_html,
    mass_html,
    output_html,
    sum_html,
    why_html,
)
from app.demo.pipeline_view import PipelineView
from app.demo.step_explained import Row, StepExplained, explain_step, plain_text
from app.glyphs import monospace, shown_token
from app.theme import chart_colors, is_dark
from engine.explain.forbidden import explain_forbidden
from engine.records import Candidate, StepRecord

EMPTY = "Select a step: click a token in the output, or a point on the chart."
HINT = (
    "Click a valid token to see what the run would have written with it; "
    "click a masked one to see why the grammar forbids it."
)
MASS_TIP = (
    "ΣP: the probability the model gave to the tokens the grammar allowed. The mask removed "
    "the rest; each kept token's P is divided by ΣP so that they again add up to 1."
)
COPY_KEYS = QKeySequence("Ctrl+Shift+C")
OUTPUT_LINES = 4  # the output so far is scrolled to its end; this much of it shows


class ExplanationPanel(QWidget):
    """Emits sig_force(step_index, token_id) when a valid candidate is clicked: the window
    continues the run from that step with that token ("what if")."""

    sig_force = Signal(int, int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.step: StepExplained | None = None
        self.schema: object | None = None
        self.why = ""
        self._plain = False
        self._build()
        self.apply_theme()
        self.clear()

    # --- building ------------------------------------------------------------------------
    def _build(self) -> None:
        self.title = QLabel(self)
        self.title.setObjectName("explainTitle")
        self.title.setWordWrap(True)  # a long token would otherwise widen the whole pane
        self.copy_button = QToolButton(self)
        self.copy_button.setText("Copy")
        self.copy_button.setToolTip(f"Copy this explanation as text ({COPY_KEYS.toString()})")
        self.copy_button.clicked.connect(self.copy)
        shortcut = QShortcut(COPY_KEYS, self, self.copy)
        shortcut.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.output = QTextBrowser(self)
        self.output.setObjectName("explainOutput")
        self.output.setToolTip("The output before this step, and the token this step wrote.")
        self.pipeline = PipelineView(self)
        self.count_label = self._label("How many tokens of the vocabulary the grammar allowed.")
        self.mass_label = self._label(MASS_TIP)
        self.sum_label = self._label(MASS_TIP)
        self.sum_label.setObjectName("explainSum")
        self.chosen_label = self._label(
            "The token this step wrote, ranked by P before and P′ after."
        )
        self.table = CandidatesTable(self)
        self.table.sig_row_clicked.connect(self._row_clicked)
        self.why_label = self._label("")
        self.why_label.setObjectName("explainWhy")
        self.why_label.setFrameShape(QFrame.Shape.StyledPanel)
        self.hint = self._label("")
        self.hint.setObjectName("explainHint")
        self.hint.setText(HINT)
        self.empty = self._label("")
        self.empty.setObjectName("explainHint")
        self.empty.setText(EMPTY)
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self._lay_out()
        self._fit_output()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() in (QEvent.Type.FontChange, QEvent.Type.StyleChange):
            self._fit_output()

    def _fit_output(self) -> None:
        """Room for OUTPUT_LINES lines of the output, in whatever font the panel has."""
        margins = self.output.contentsMargins()
        doc = 2 * self.output.document().documentMargin()
        lines = self.output.fontMetrics().lineSpacing() * OUTPUT_LINES
        self.output.setFixedHeight(round(lines + doc) + margins.top() + margins.bottom())

    def _label(self, tip: str) -> QLabel:
        label = QLabel(self)
        label.setWordWrap(True)
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        label.setToolTip(tip)
        return label

    def _lay_out(self) -> None:
        head = QHBoxLayout()
        head.addWidget(self.title, 1)
        head.addWidget(self.copy_button)
        numbers = QHBoxLayout()
        numbers.addWidget(self.count_label, 1)
        numbers.addWidget(self.mass_label, 1)
        body = QWidget(self)
        layout = QVBoxLayout(body)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(8)
        layout.addWidget(self.output)
        layout.addWidget(self.pipeline)
        layout.addLayout(numbers)
        layout.addWidget(self.sum_label)
        layout.addWidget(self.chosen_label)
        layout.addWidget(self.table)
        layout.addWidget(self.why_label)
        layout.addWidget(self.hint)
        layout.addWidget(self.empty, 1)
        layout.addStretch(0)
        # A small dock scrolls the panel rather than squeezing its table and boxes.
        scroll = QScrollArea(self)
        scroll.setWidget(body)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        # Never sideways: every part wraps, reflows or elides to the pane's width (issue 27).
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.scroll = scroll
        # The panel's own styles sit on this inner frame, so that a stylesheet the window
        # sets on the panel (presentation mode's larger fonts) adds to them, not replaces them.
        self.frame = QWidget(self)
        inner = QVBoxLayout(self.frame)
        inner.setContentsMargins(8, 8, 8, 8)
        inner.setSpacing(8)
        inner.addLayout(head)
        inner.addWidget(scroll, 1)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(self.frame)
        self.content = [
            self.copy_button,
            self.output,
            self.pipeline,
            self.count_label,
            self.mass_label,
            self.sum_label,
            self.chosen_label,
            self.table,
            self.hint,
        ]

    # --- showing ---------------------------------------------------------------------------
    def show_step(
        self,
        records: Sequence[StepRecord],
        index: int,
        n_vocab: int | None,
        temperature: float,
        schema: object | None,
    ) -> None:
        """Explain records[index]; `schema` (parsed, or its text) lets a masked token's
        explanation name what the schema allows."""
        if not 0 <= index < len(records):
            self.clear()
            return
        self.step = explain_step(records, index, n_vocab, temperature)
        self.schema = schema
        self.why = ""
        r = self.step.record
        token = code_html(f"`{shown_token(r.token_text, r.token_piece, monospace())}`")
        self.title.setText(f"Step {index + 1} of {len(records)} · wrote {token}")
        for widget in self.content:
            widget.setVisible(True)
        self.empty.setVisible(False)
        self.why_label.setVisible(False)
        self._fill()

    def clear(self) -> None:
        self.step = None
        self.why = ""
        self.title.setText("Explanation")
        for widget in (*self.content, self.why_label):
            widget.setVisible(False)
        self.empty.setVisible(True)

    def set_plain_language(self, plain: bool) -> None:
        """Presentation mode: labels for people who are not engineers."""
        self._plain = plain
        self.pipeline.set_plain_language(plain)
        self.table.set_plain_language(plain)
        if self.step is not None:
            self._fill()

    def _fill(self) -> None:
        step = self.step
        assert step is not None
        self.output.setHtml(output_html(step))
        bar = self.output.verticalScrollBar()
        bar.setValue(bar.maximum())  # the selected token is at the end
        self.pipeline.show_stages(step.stages)
        self.table.show_rows(step.rows)
        self.count_label.setText(count_html(step, self._plain))
        self.mass_label.setText(mass_html(step, self._plain))
        self.sum_label.setText(sum_html(step, self._plain))
        self.chosen_label.setText(code_html(step.chosen_words(self._plain)))

    # --- clicks ----------------------------------------------------------------------------
    def _row_clicked(self, row: Row) -> None:
        if self.step is None:
            return
        if row.valid:
            self.sig_force.emit(self.step.index, row.candidate.id)
        else:
            self.show_why(row.candidate)

    def show_why(self, candidate: Candidate) -> None:
        """Say why the grammar forbids `candidate` at the shown step (also for a click on a
        masked bar of the chart)."""
        if self.step is None:
            return
        parts = explain_forbidden(self.step.record, candidate, self.step.before, self.schema)
        self.why = parts.text()
        # The chip shows the token's own code points where no font draws it (app/glyphs.py).
        shown = shown_token(candidate.text, candidate.piece, monospace())
        self.why_label.setText(why_html(dataclasses.replace(parts, token=shown)))
        self.why_label.setVisible(True)

    # --- copy and theme --------------------------------------------------------------------
    def plain_text(self) -> str:
        return plain_text(self.step, self.why) if self.step is not None else ""

    def copy(self) -> None:
        if self.step is not None:
            QGuiApplication.clipboard().setText(self.plain_text())

    def apply_theme(self) -> None:
        c = chart_colors()
        muted = "#9aa0aa" if is_dark() else "#5f6670"
        why_bg = "#2f2426" if is_dark() else "#fdf0ef"
        edge = "#44474f" if is_dark() else "#cfd5de"
        self.frame.setStyleSheet(
            f"""
            QLabel#explainTitle {{ font-weight: bold; }}
            QLabel#explainHint {{ color: {muted}; }}
            QLabel#explainSum {{ border: 1px solid {edge}; border-radius: 6px; padding: 6px; }}
            QLabel#explainWhy {{ background: {why_bg}; border: 1px solid {c.raw_masked.name()};
                border-radius: 6px; padding: 6px; }}
            """
        )
        self.pipeline.apply_theme()
        if self.step is not None:
            self._fill()
