"""The Compare pane: what changed between the previous run and this one.

From top to bottom: which inputs changed, the first step at which the runs chose a
different token, the output diff (the previous run's words struck out in red, this run's
new words in green), and the valid mass per step of both runs with the first difference
marked. The plot items are made once and only re-fed with setData afterwards.
"""

from __future__ import annotations

import html

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QColor, QGuiApplication, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.text_edit import use_monospace
from app.theme import chart_colors, theme_plot
from engine.runs.compare import (
    MASS_SHIFT,
    ChosenToken,
    Divergence,
    RunComparison,
    SpanKind,
    compare_runs,
    unified_diff,
)
from engine.runs.saved import SavedRun

EMPTY = "No comparison yet: after your next run, this shows what changed since the one before."


def choice_words(choice: ChosenToken | None, run: str) -> str:
    if choice is None:
        return f"nothing ({run} had ended)"
    return f"{choice.text!r} ({run})"


def divergence_text(divergence: Divergence | None, n_steps: int) -> str:
    """The first-difference line; steps counted from 1, as everywhere the user reads them."""
    if divergence is None:
        return f"Both runs chose the same {n_steps} tokens."
    return (
        f"First different choice at step {divergence.step + 1} (counting from 1): "
        f"{choice_words(divergence.before, 'the previous run')} vs "
        f"{choice_words(divergence.after, 'this run')}"
    )


def shifts_text(comparison: RunComparison) -> str:
    shifts = comparison.shifts
    if not shifts:
        return f"Valid mass moved by at most {MASS_SHIFT:g} at every step both runs have."
    big = max(shifts, key=lambda s: abs(s.delta))
    steps = ", ".join(str(s.step + 1) for s in shifts[:12]) + (" …" if len(shifts) > 12 else "")
    noun = "step" if len(shifts) == 1 else "steps"
    return (
        f"Valid mass moved by more than {MASS_SHIFT:g} at {len(shifts)} {noun} ({steps}); "
        f"most at step {big.step + 1}: {big.before:.3f} → {big.after:.3f}"
    )


def visible_whitespace(text: str) -> str:
    """A changed run of whitespace alone would be invisible: show its characters."""
    if text.strip():
        return text
    return text.replace(" ", "␣").replace("\t", "⇥").replace("\n", "⏎\n")


def with_alpha(color: QColor, alpha: int) -> QColor:
    c = QColor(color)
    c.setAlpha(alpha)
    return c


class CompareView(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.comparison: RunComparison | None = None
        self._runs: tuple[SavedRun, SavedRun] | None = None

        self.changed = QLabel(EMPTY, self)
        self.changed.setObjectName("compareChanged")
        self.changed.setWordWrap(True)
        self.changed.setTextFormat(Qt.TextFormat.PlainText)
        self.divergence = QLabel("", self)
        self.divergence.setObjectName("compareDivergence")
        self.divergence.setWordWrap(True)
        self.divergence.setTextFormat(Qt.TextFormat.PlainText)  # token texts hold < and &
        self.divergence.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.copy_button = QToolButton(self)
        self.copy_button.setText("Copy diff")
        self.copy_button.setToolTip("Copy the two outputs as a unified line diff")
        self.copy_button.setEnabled(False)
        self.copy_button.clicked.connect(self.copy_diff)

        self.diff = QPlainTextEdit(self)
        self.diff.setObjectName("compareDiff")
        self.diff.setReadOnly(True)
        self.diff.setToolTip(
            "The output of this run against the previous one: struck-out red words were in "
            "the previous output only, green ones are new in this run"
        )
        use_monospace(self.diff)
        self.diff.setMinimumHeight(60)
        self.legend = QLabel("", self)

        self.plot = pg.PlotWidget(self)
        self.plot.setObjectName("compareMassPlot")
        self.plot.setMinimumHeight(120)
        self.plot.setMenuEnabled(False)
        self.plot.hideButtons()
        self.plot.setMouseEnabled(x=True, y=False)  # wheel zooms the steps of a long run
        self.plot.setLabel("left", "valid mass")
        self.plot.setLabel("bottom", "step (from 1)")
        self.plot.setYRange(0, 1.08, padding=0)
        self.plot.showGrid(x=True, y=True, alpha=0.15)
        # The legend is a label above the plot: inside it, it would cover the curves, which
        # sit near 1 most of the time.
        self.plot_legend = QLabel("", self)
        self.plot_legend.setWordWrap(True)
        self.before_curve = self.plot.plot([], [])
        self.after_curve = self.plot.plot([], [])
        self.shift_marker = pg.ScatterPlotItem(symbol="o", size=9)
        self.plot.addItem(self.shift_marker)
        self.divergence_line = pg.InfiniteLine(angle=90, movable=False)  # named in the legend
        self.plot.addItem(self.divergence_line)
        self.divergence_line.hide()
        self.plot.scene().sigMouseMoved.connect(self._hover)
        self.shifts = QLabel("", self)
        self.shifts.setObjectName("compareShifts")
        self.shifts.setWordWrap(True)
        self.shifts.setTextFormat(Qt.TextFormat.PlainText)  # token texts hold < and &

        header = QHBoxLayout()
        header.addWidget(QLabel("<b>Compared with the previous run</b>", self))
        header.addStretch(1)
        header.addWidget(self.copy_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        layout.addLayout(header)
        layout.addWidget(self.changed)
        layout.addWidget(self.divergence)
        # Stretch 2:3, not a splitter: outputs are short, and the plot needs the height.
        layout.addWidget(self.diff, 2)
        layout.addWidget(self.legend)
        layout.addSpacing(4)
        layout.addWidget(QLabel("<b>Valid mass per step</b>", self))
        layout.addWidget(self.plot_legend)
        layout.addWidget(self.plot, 3)
        layout.addWidget(self.shifts)

        self.apply_theme()
        QGuiApplication.styleHints().colorSchemeChanged.connect(self.apply_theme)

    # --- feeding ---------------------------------------------------------------------------
    def compare(self, before: SavedRun, after: SavedRun) -> RunComparison:
        self._runs = (before, after)
        self.comparison = cmp = compare_runs(before, after)
        changed = ", ".join(cmp.changed_inputs) or "nothing (same schema, prompt and settings)"
        self.changed.setText(
            f"Changed: {changed} · {len(before.records)} → {len(after.records)} tokens"
        )
        self.divergence.setText(divergence_text(cmp.divergence, len(after.records)))
        self.shifts.setText(shifts_text(cmp))
        self.copy_button.setEnabled(True)
        self._show_diff()
        self._show_mass()
        return cmp

    def copy_diff(self) -> None:
        if self._runs is not None:
            before, after = self._runs
            QGuiApplication.clipboard().setText(unified_diff(before.result.text, after.result.text))

    def _show_diff(self) -> None:
        self.diff.clear()
        self.legend.setText("")
        if self.comparison is None or self._runs is None:
            return
        if self.comparison.same_output:
            self.diff.setPlainText(self._runs[1].result.text)
            self.legend.setText("The output is the same as the previous run's.")
            return
        colors = chart_colors()
        self.legend.setText(
            f'<span style="color:{colors.bad.name()}"><s>previous run only</s></span> · '
            f'<span style="color:{colors.ok.name()}"><b>new in this run</b></span>'
        )
        formats = self._span_formats()
        cursor = QTextCursor(self.diff.document())
        cursor.beginEditBlock()
        for span in self.comparison.spans:
            text = span.text if span.kind is SpanKind.SAME else visible_whitespace(span.text)
            cursor.insertText(text, formats[span.kind])
        cursor.endEditBlock()
        self.diff.moveCursor(QTextCursor.MoveOperation.Start)

    def _span_formats(self) -> dict[SpanKind, QTextCharFormat]:
        colors = chart_colors()
        deleted, inserted = QTextCharFormat(), QTextCharFormat()
        deleted.setFontStrikeOut(True)
        deleted.setForeground(colors.bad)
        deleted.setBackground(with_alpha(colors.bad, 45))
        inserted.setForeground(colors.ok)
        inserted.setBackground(with_alpha(colors.ok, 45))
        inserted.setFontWeight(700)
        return {
            SpanKind.SAME: QTextCharFormat(),
            SpanKind.DELETED: deleted,
            SpanKind.INSERTED: inserted,
        }

    def _show_mass(self) -> None:
        cmp = self.comparison
        assert cmp is not None
        self.before_curve.setData(np.arange(1, len(cmp.mass_before) + 1), cmp.mass_before)
        self.after_curve.setData(np.arange(1, len(cmp.mass_after) + 1), cmp.mass_after)
        self.shift_marker.setData([s.step + 1 for s in cmp.shifts], [s.after for s in cmp.shifts])
        if cmp.divergence is not None:
            self.divergence_line.setValue(cmp.divergence.step + 1)
            self.divergence_line.show()
        else:
            self.divergence_line.hide()
        n = max(len(cmp.mass_before), len(cmp.mass_after), 2)
        self.plot.setLimits(xMin=0.5, xMax=n + 0.5)
        self.plot.setXRange(0.5, n + 0.5, padding=0)

    # --- look and hover --------------------------------------------------------------------
    def apply_theme(self) -> None:
        colors = chart_colors()
        theme_plot(self.plot, colors)
        entries = (
            (colors.mass_line, "━━ this run"),
            (colors.foreground, "╍╍ previous run"),
            (colors.warn, f"● valid mass moved by more than {MASS_SHIFT:g}"),
            (colors.current_step, "┆ first difference"),
        )
        # Non-breaking inside an entry: a narrow pane wraps between entries only.
        self.plot_legend.setText(
            " &nbsp; ".join(
                f'<span style="color:{c.name()}">{t.replace(" ", "&nbsp;")}</span>'
                for c, t in entries
            )
        )
        self.before_curve.setPen(
            pg.mkPen(with_alpha(colors.foreground, 150), width=1.5, style=Qt.PenStyle.DashLine)
        )
        self.after_curve.setPen(pg.mkPen(colors.mass_line, width=2))
        self.shift_marker.setBrush(with_alpha(colors.warn, 90))
        self.shift_marker.setPen(pg.mkPen(colors.warn, width=1.5))
        self.divergence_line.setPen(
            pg.mkPen(colors.current_step, width=1.5, style=Qt.PenStyle.DashLine)
        )
        self._show_diff()

    def _hover(self, pos: QPointF) -> None:
        vb = self.plot.getPlotItem().vb
        if self._runs is None or not vb.sceneBoundingRect().contains(pos):
            self.plot.setToolTip("")
            return
        i = round(vb.mapSceneToView(pos).x()) - 1
        before, after = (run.records for run in self._runs)
        if not 0 <= i < max(len(before), len(after)):
            self.plot.setToolTip("")
            return
        rows = [f"<b>step {i + 1}</b>"]
        for name, records in (("previous", before), ("this run", after)):
            if i < len(records):
                r = records[i]
                rows.append(
                    f"{name}: {html.escape(repr(r.token_text))} · valid mass {r.valid_mass:.3f}"
                )
            else:
                rows.append(f"{name}: ended")
        self.plot.setToolTip("<br>".join(rows))
