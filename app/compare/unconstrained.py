"""Constrained against unconstrained: the same prompt and seed, with the grammar and without.

Two columns, each with its output and its validation (valid, invalid JSON, schema errors,
truncated), then the first step where the runs part with both choices, and the
constrained run's valid mass per step with that step marked. The unconstrained run has no
mask, so its valid mass is 1 at every step and is not drawn.
"""

from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QGuiApplication, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import (
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QProgressBar,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.compare.mass_curves import CurveStyle, MassCurves
from app.compare.previous import with_alpha
from app.decoding.output_view import verdict
from app.text_edit import use_monospace
from app.theme import ChartColors, chart_colors
from engine.records import Candidate, FinishReason, RunResult, StepRecord
from engine.runs.compare import Divergence, first_divergence
from engine.runs.saved import SavedRun

EMPTY = (
    "No comparison yet: run the same prompt and seed once with the grammar and once "
    "without it to see the two side by side."
)
SIDES = ("With the grammar", "Without the grammar (the model alone)")
MAX_ISSUES = 3  # schema errors named in a verdict; the rest are counted


def verdict_lines(result: RunResult) -> list[tuple[str, str]]:
    """What validation said of a run, as (line, tone) pairs; tone names a ChartColors
    attribute. Truncation comes first: it is why the rest failed."""
    lines: list[tuple[str, str]] = []
    if result.truncated:
        lines.append((f"⚠ truncated at max_tokens ({result.n_tokens} tokens)", "warn"))
    elif result.finish_reason in (FinishReason.CANCELLED, FinishReason.ERROR):
        lines.append(verdict(result))
        if result.message:
            lines.append((result.message, "bad"))
        return lines
    if result.parse_error is not None:
        lines.append((f"✗ invalid JSON: {result.parse_error}", "bad"))
    elif result.errors:
        n = len(result.errors)
        lines.append((f"✗ JSON, but {n} schema error{'s' if n != 1 else ''}", "bad"))
        lines += [(f"{e.path}: {e.message}", "bad") for e in result.errors[:MAX_ISSUES]]
        if n > MAX_ISSUES:
            lines.append((f"… and {n - MAX_ISSUES} more", "bad"))
    elif result.valid:
        lines.append(("✓ valid JSON that matches the schema", "ok"))
    return lines


def _candidate(record: StepRecord, token_id: int) -> Candidate | None:
    return next((c for c in record.top_raw if c.id == token_id), None)


def parting_text(divergence: Divergence | None, constrained: SavedRun) -> str:
    """Where the runs part, and what the grammar thought of the model's own choice there;
    steps counted from 1."""
    if divergence is None:
        n = len(constrained.records)
        return f"Both runs chose the same {n} tokens: the grammar never had to step in."
    step = divergence.step + 1
    with_g, without = divergence.before, divergence.after
    if with_g is None or without is None:
        ended = "with the grammar" if with_g is None else "without the grammar"
        return f"The runs part at step {step}: the run {ended} had already ended."
    text = (
        f"The runs part at step {step}: {with_g.text!r} with the grammar, "
        f"{without.text!r} without it."
    )
    model_choice = _candidate(constrained.records[divergence.step], without.token_id)
    if model_choice is None:
        return text
    if not model_choice.valid:
        return f"{text} The grammar masked {without.text!r} (P {model_choice.p_raw:.3f}) there."
    # Both runs draw with the same seed; a valid token can still lose its draw once the
    # masked ones are taken out and the rest renormalised.
    return (
        f"{text} The grammar allowed {without.text!r} too (P {model_choice.p_raw:.3f}); "
        "renormalising changed the draw."
    )


class _Column(QFrame):
    """One run: its title, verdict, output and copy button."""

    def __init__(self, title: str, parent: QWidget) -> None:
        super().__init__(parent)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.text = ""
        self.name = title
        self.title = QLabel("", self)
        # Wrapped: unwrapped, "Without the grammar (the model alone)" held the whole right
        # column of panes (tabbed with this one) at 555 px or more, squeezing the chart.
        self.title.setWordWrap(True)
        self.verdict = QLabel("", self)
        self.verdict.setWordWrap(True)
        self.verdict.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.output = QPlainTextEdit(self)
        self.output.setReadOnly(True)
        self.output.setMinimumHeight(80)
        use_monospace(self.output)
        self.copy_button = QToolButton(self)
        self.copy_button.setText("Copy")
        self.copy_button.setToolTip(f"Copy the output {title[0].lower()}{title[1:]}")
        self.copy_button.setEnabled(False)
        self.copy_button.clicked.connect(self.copy)
        header = QHBoxLayout()
        header.addWidget(self.title)
        header.addStretch(1)
        header.addWidget(self.copy_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addLayout(header)
        layout.addWidget(self.verdict)
        layout.addWidget(self.output, 1)

    def show_run(self, run: SavedRun, parted_at: int | None) -> None:
        """The output, the part from `parted_at` (a character offset) on tinted."""
        self.text = run.result.text
        self.copy_button.setEnabled(True)
        self.title.setText(f"<b>{html.escape(self.name)}</b> · {len(run.records)} tokens")
        colors = chart_colors()
        self.verdict.setText(
            "<br>".join(
                f"<span style='color:{getattr(colors, tone).name()}'>{html.escape(line)}</span>"
                for line, tone in verdict_lines(run.result)
            )
        )
        self.output.clear()
        # Parted at the first step, nothing is shared: a tint over everything would say nothing.
        split = parted_at or len(self.text)
        parted = QTextCharFormat()
        parted.setBackground(with_alpha(colors.current_step, 40))
        cursor = QTextCursor(self.output.document())
        cursor.beginEditBlock()
        cursor.insertText(self.text[:split], QTextCharFormat())
        cursor.insertText(self.text[split:], parted)
        cursor.endEditBlock()
        self.output.moveCursor(QTextCursor.MoveOperation.Start)

    def clear(self, placeholder: str = "") -> None:
        self.text = ""
        self.title.setText(f"<b>{html.escape(self.name)}</b>")
        self.copy_button.setEnabled(False)
        self.verdict.setText("")
        self.output.clear()
        self.output.setPlaceholderText(placeholder)

    def copy(self) -> None:
        QGuiApplication.clipboard().setText(self.text)


def _constrained_color(colors: ChartColors):
    return colors.mass_line


class SideBySideView(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.pair: tuple[SavedRun, SavedRun] | None = None
        self.divergence: Divergence | None = None

        self.status = QLabel(EMPTY, self)
        self.status.setObjectName("sideBySideStatus")
        self.status.setWordWrap(True)
        self.stale = QLabel("out of date", self)
        self.stale.setObjectName("sideBySideStale")
        self.stale.setStyleSheet(f"color: {chart_colors().warn.name()}; font-style: italic;")
        self.stale.hide()
        self.busy = QProgressBar(self)
        self.busy.setRange(0, 0)  # no known length: a moving bar while the pass runs
        self.busy.setMaximumHeight(6)
        self.busy.setTextVisible(False)
        self.busy.hide()
        self.constrained = _Column(SIDES[0], self)
        self.unconstrained = _Column(SIDES[1], self)
        self.parting = QLabel("", self)
        self.parting.setObjectName("sideBySideParting")
        self.parting.setWordWrap(True)
        self.parting.setTextFormat(Qt.TextFormat.PlainText)  # token texts hold < and &
        font = self.parting.font()
        font.setBold(True)
        self.parting.setFont(font)
        self.parting.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.mass = MassCurves(
            (CurveStyle("with the grammar", _constrained_color),),
            "where the runs part",
            self._describe_step,
            self,
        )
        self.mass.setToolTip(
            "The share of the model's preference that the grammar allowed, per step of the "
            "run with the grammar. Without the grammar every token is allowed: that run's "
            "share is 1 at every step."
        )

        self.legend = QLabel("", self)
        grid = QGridLayout()
        grid.addWidget(self.constrained, 0, 0)
        grid.addWidget(self.unconstrained, 0, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(QLabel("<b>Constrained against unconstrained</b>", self))
        layout.addWidget(self.status)
        layout.addWidget(self.stale)
        layout.addWidget(self.busy)
        layout.addLayout(grid, 3)
        layout.addWidget(self.legend)
        layout.addWidget(self.parting)
        layout.addWidget(self.mass, 2)
        self.clear()
        QGuiApplication.styleHints().colorSchemeChanged.connect(self.apply_theme)

    def show_pair(self, constrained: SavedRun, unconstrained: SavedRun) -> None:
        self.pair = (constrained, unconstrained)
        self.busy.hide()
        settings = constrained.result.settings
        seed = f"seed {settings['seed']}" if "seed" in settings else "the same seed"
        self.status.setText(f"The same prompt and {seed}, once with the grammar and once without.")
        self.divergence = first_divergence(constrained.records, unconstrained.records)
        self.parting.setText(parting_text(self.divergence, constrained))
        self._render()

    def _render(self) -> None:
        assert self.pair is not None
        d = self.divergence
        for column, run in zip((self.constrained, self.unconstrained), self.pair, strict=True):
            column.show_run(run, self._parted_at(run, d))
        masses = [r.valid_mass for r in self.pair[0].records]
        self.mass.show_series((masses,), None if d is None else d.step)
        self.legend.setText(self._legend() if d is not None and d.step > 0 else "")

    @staticmethod
    def _legend() -> str:
        color = with_alpha(chart_colors().current_step, 40).name(QColor.NameFormat.HexArgb)
        return (
            f"<span style='background:{color}'>&nbsp;tinted&nbsp;</span> the text each run "
            "wrote from the step where they part"
        )

    @staticmethod
    def _parted_at(run: SavedRun, d: Divergence | None) -> int | None:
        """The character offset where the run's own text starts, after the shared steps."""
        if d is None or d.step >= len(run.records):
            return None
        return run.records[d.step - 1].output_chars if d.step > 0 else 0

    def set_stale(self, stale: bool, reason: str = "") -> None:
        """Mark the comparison as made from an older schema, prompt or settings."""
        self.stale.setVisible(stale and self.pair is not None)
        self.stale.setToolTip(f"{reason} Compare again to update it.".strip())

    def show_constrained(self, constrained: SavedRun) -> None:
        """The run with the grammar, as soon as it ends; its partner is still running."""
        self.constrained.show_run(constrained, None)

    def set_running(self, text: str) -> None:
        """A pass is under way, e.g. "Running the unconstrained pass…"; the previous pair
        is cleared, so that nothing stale reads as the new result. An empty text says no
        pass is running any more (stopped, or failed): the view goes back to empty."""
        self.clear()
        if text:
            self.status.setText(text)
            self.busy.show()

    def clear(self) -> None:
        self.pair = None
        self.stale.hide()
        self.divergence = None
        self.busy.hide()
        self.status.setText(EMPTY)
        self.parting.setText("")
        self.legend.setText("")
        self.constrained.clear("The output with the grammar")
        self.unconstrained.clear("The output without the grammar")
        self.mass.clear()

    def apply_theme(self) -> None:
        self.mass.apply_theme()
        if self.pair is not None:
            self._render()

    def _describe_step(self, i: int) -> str:
        if self.pair is None:
            return ""
        rows = [f"<b>step {i + 1}</b>"]
        for name, run in zip(("with the grammar", "without"), self.pair, strict=True):
            if i < len(run.records):
                r = run.records[i]
                rows.append(f"{name}: {html.escape(repr(r.token_text))}")
            else:
                rows.append(f"{name}: ended")
        constrained = self.pair[0].records
        if i < len(constrained):
            rows.append(f"valid mass {constrained[i].valid_mass:.3f}")
        return "<br>".join(rows)
