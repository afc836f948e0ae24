"""A small valid-mass plot for comparing runs: a few curves, one marked step, a legend.

The branch comparison and the constrained/unconstrained view both draw it. Its items are
made once, in the constructor, and only re-fed with setData afterwards. Steps are shown
counted from 1.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from app.compare.previous import with_alpha
from app.theme import ChartColors, chart_colors, theme_plot

SHORT_RUN = 16  # steps; up to this many, every step has its tick


@dataclass(frozen=True, slots=True)
class CurveStyle:
    label: str  # the legend's words
    color: Callable[[ChartColors], QColor]  # picked from the current theme
    # Drawn as a wide, pale band under the others: where the runs agree, the band shows
    # behind the other curve instead of being hidden by it.
    band: bool = False


class MassCurves(QWidget):
    """Valid mass per step of each run, and a vertical line (with a dot on each curve) at
    the step that matters: the fork, or the first divergence."""

    def __init__(
        self,
        styles: Sequence[CurveStyle],
        mark_label: str,
        describe: Callable[[int], str] | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.styles = tuple(styles)
        self.mark_label = mark_label
        self.describe = describe  # the hover text of step i (from 0), as rich text
        self.mark_step: int | None = None
        self.n_steps = 0  # of the longest curve

        # The legend is a label above the plot: inside it, it would cover the curves, which
        # sit near 1 most of the time.
        self.legend = QLabel("", self)
        self.legend.setWordWrap(True)
        self.plot = pg.PlotWidget(self)
        self.plot.setMinimumHeight(140)
        self.plot.setMenuEnabled(False)
        self.plot.hideButtons()
        self.plot.setMouseEnabled(x=True, y=False)  # the wheel zooms the steps of a long run
        self.plot.setLabel("left", "valid mass")
        self.plot.setLabel("bottom", "step (from 1)")
        self.plot.setYRange(0, 1.08, padding=0)
        self.plot.showGrid(x=True, y=True, alpha=0.15)
        self.curves = [self.plot.plot([], []) for _ in self.styles]
        self.mark_line = pg.InfiniteLine(angle=90, movable=False)
        self.plot.addItem(self.mark_line)
        self.mark_line.hide()
        self.mark_points = pg.ScatterPlotItem(symbol="o", size=10)
        self.plot.addItem(self.mark_points)
        self.plot.scene().sigMouseMoved.connect(self._hover)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.legend)
        layout.addWidget(self.plot, 1)
        self.apply_theme()

    def show_series(self, series: Sequence[Sequence[float]], mark_step: int | None) -> None:
        """One sequence of valid masses per curve (an empty one hides that curve); the step
        to mark counts from 0, None marks nothing."""
        self.mark_step = mark_step
        for curve, masses in zip(self.curves, series, strict=True):
            curve.setData(np.arange(1, len(masses) + 1), np.asarray(masses, dtype=float))
        points = [
            (mark_step + 1, masses[mark_step])
            for masses in series
            if mark_step is not None and mark_step < len(masses)
        ]
        self.mark_points.setData([x for x, _ in points], [y for _, y in points])
        if mark_step is None:
            self.mark_line.hide()
        else:
            self.mark_line.setValue(mark_step + 1)
            self.mark_line.show()
        self.n_steps = max((len(m) for m in series), default=0)
        n = max(self.n_steps, 2)
        # A short run gets a tick at every step: pyqtgraph would put ticks between them
        # (step 1.5), which no step is. Longer ones get pyqtgraph's own, whole, spacing.
        bottom = self.plot.getAxis("bottom")
        bottom.setTicks([[(i, str(i)) for i in range(1, n + 1)]] if n <= SHORT_RUN else None)
        self.plot.setLimits(xMin=0.5, xMax=n + 0.5)
        self.plot.setXRange(0.5, n + 0.5, padding=0)

    def clear(self) -> None:
        self.show_series([() for _ in self.curves], None)

    def apply_theme(self) -> None:
        colors = chart_colors()
        theme_plot(self.plot, colors)
        entries = [
            (style.color(colors), ("▬▬ " if style.band else "━━ ") + style.label)
            for style in self.styles
        ]
        entries.append((colors.current_step, "┆ " + self.mark_label))
        # Non-breaking inside an entry: a narrow pane wraps between entries only.
        self.legend.setText(
            " &nbsp; ".join(
                f'<span style="color:{c.name()}">{html.escape(t).replace(" ", "&nbsp;")}</span>'
                for c, t in entries
            )
        )
        for curve, style in zip(self.curves, self.styles, strict=True):
            color = style.color(colors)
            if style.band:
                curve.setPen(pg.mkPen(with_alpha(color, 110), width=7))
                curve.setZValue(-1)
            else:
                curve.setPen(pg.mkPen(color, width=2))
                curve.setSymbol("o")
                curve.setSymbolSize(5)
                curve.setSymbolPen(pg.mkPen(color))
                curve.setSymbolBrush(color)
        self.mark_line.setPen(pg.mkPen(colors.current_step, width=1.5, style=Qt.PenStyle.DashLine))
        self.mark_points.setBrush(with_alpha(colors.current_step, 110))
        self.mark_points.setPen(pg.mkPen(colors.current_step, width=1.5))

    def _hover(self, pos: QPointF) -> None:
        vb = self.plot.getPlotItem().vb
        i = round(vb.mapSceneToView(pos).x()) - 1
        inside = vb.sceneBoundingRect().contains(pos) and 0 <= i < self.n_steps
        self.plot.setToolTip(self.describe(i) if inside and self.describe else "")
