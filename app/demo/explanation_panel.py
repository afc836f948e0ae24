"""The selected step explained with the model's own numbers: the output so far, the
pipeline from logits to the sampled token, the top candidates before and after masking,
ΣP over the valid set written out as a sum, each renormalised value as a division, and
why the grammar forbids a masked token.

Clicking a valid candidate asks for a branch from this step with that token (sig_force);
clicking a masked one explains why the grammar forbids it here (engine.explain.forbidden).
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QGuiApplication, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QTextBrowser,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.demo.candidates_table import CandidatesTable
from app.demo.pipeline_view import PipelineView
from app.demo.step_explained import Row, StepExplained, explain_step, fmt, plain_text
from app.theme import chart_colors, is_dark
from engine.explain.forbidden import why_forbidden
from engine.records import StepRecord

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
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        layout.setSpacing(8)
        layout.addLayout(head)
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
        self.step = explain_step(records, index, n_vocab, temperature)
        self.schema = schema
        self.why = ""
        token = _code(f"`{self.step.record.token_text}`")
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
        r = step.renorm
        self.output.setHtml(self._output_html(step))
        bar = self.output.verticalScrollBar()
        bar.setValue(bar.maximum())  # the selected token is at the end
        self.pipeline.show_stages(step.stages)
        self.table.show_rows(step.rows)
        self.count_label.setText(self._count_text(step))
        self.mass_label.setText(self._mass_text(step))
        prefix = "The allowed share adds up:" if self._plain else "ΣP over the valid set ="
        self.sum_label.setText(
            f"{prefix} <b>{html.escape(r.sum_written())}</b><br>{self._chosen_division(step)}"
        )
        self.chosen_label.setText(_code(step.chosen_text))

    def _chosen_division(self, step: StepExplained) -> str:
        row = next((r for r in step.rows if r.chosen and r.division), None)
        if row is None or row.division is None:
            return ""
        name = "its rescaled share" if self._plain else "P′"
        token = _code(f"`{row.candidate.text}`")
        return f"{name} of {token} = P / ΣP = <b>{html.escape(row.division.written())}</b>"

    def _count_text(self, step: StepExplained) -> str:
        r = step.renorm
        if self._plain:
            of = f" of the {r.n_vocab:,}" if r.n_vocab else ""
            return f"The rules allowed <b>{r.n_valid:,}</b>{of} tokens"
        return f"<b>{html.escape(step.valid_count)}</b>"

    def _mass_text(self, step: StepExplained) -> str:
        mass = step.renorm.valid_mass
        exact = "" if step.renorm.exact else " (at least)"
        if self._plain:
            return (
                f"Share of the model's preference that the rules allowed: <b>{mass:.1%}</b>{exact}"
            )
        return f"valid mass ΣP = <b>{fmt(mass)}</b>{exact}"

    def _output_html(self, step: StepExplained) -> str:
        c = chart_colors()
        token = step.record.token_piece
        shown = token if token.strip() else step.record.token_text
        tail = "\n" if "\n" in token else ""
        tint = (
            f"rgba({c.current_step.red()}, {c.current_step.green()}, {c.current_step.blue()}, 0.35)"
        )
        return (
            "<pre style='white-space: pre-wrap; margin: 0'>"
            f"{html.escape(step.before)}"
            f"<span style='background: {tint}; font-weight: bold'>{html.escape(shown)}</span>"
            f"<span style='color: {c.current_step.name()}'>▏</span>{tail}</pre>"
        )

    # --- clicks ----------------------------------------------------------------------------
    def _row_clicked(self, row: Row) -> None:
        if self.step is None:
            return
        if row.valid:
            self.sig_force.emit(self.step.index, row.candidate.id)
            return
        self.why = why_forbidden(self.step.record, row.candidate, self.step.before, self.schema)
        question = f"Why is `{row.candidate.text}` forbidden here?"
        self.why_label.setText(f"<b>{_code(question)}</b><br>{_code(self.why)}")
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
        self.setStyleSheet(
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


def _code(text: str) -> str:
    """Escaped text with each `token` set as a monospace chip, so that a one-letter token
    stands out from the words around it."""
    c = chart_colors()
    chip = (
        f"font-family: monospace; font-weight: bold; "
        f"background-color: rgba({c.foreground.red()}, {c.foreground.green()}, "
        f"{c.foreground.blue()}, 0.12)"
    )
    escaped = html.escape(text, quote=False)
    return re.sub(r"`([^`]*)`", rf"<span style='{chip}'>&nbsp;\1&nbsp;</span>", escaped)
