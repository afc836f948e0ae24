"""Labels on the deepest dips of the valid-mass curve, for presenting a run to a room.

Each label says what the grammar wrote where the model's preference was least allowed and,
when the model's own top choice was masked, what it wanted instead: “{” instead of “The”
(curly quotes, since the tokens themselves are often straight ones), or a token's code
points where no font draws it (app/glyphs.py).
The few deepest steps are kept as records arrive (engine/explain/marks.py picks them from
the kept ones plus the new ones), so an update costs the new records, not the whole run.

A label stands above its ▼ mark, clear of it, and inside the plot: near either end of the
run it slides along so that its text is never cut by the plot's edge (presentation mode
cut '“{” instead of “title”' at step 1 to '{” instead of “title”', issue 27). It is placed
again whenever the plot's size or x range changes, since both move the edges.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QColor

from app.glyphs import shown
from app.theme import ChartColors
from engine.explain.marks import Dip, deepest_dips
from engine.model.tokens import code_points
from engine.records import StepRecord

N_DIPS = 3
CLOSE_STEPS_FRACTION = 0.15  # labels nearer than this share of the run stack, not overlap
LABEL_ALPHA = 220
MARK_SIZE_PX = 10  # the ▼ on each labelled dip
MARK_GAP_PX = 3  # between the mark's top and its label


def dip_text(dip: Dip) -> str:
    if dip.wanted is None:
        return _quote(dip.chosen)
    return f"{_quote(dip.chosen)} instead of {_quote(dip.wanted)}"


def _quote(token: str) -> str:
    """The token in curly quotes, or its bare code points where no font draws it."""
    safe = shown(token)
    return safe if token and safe == code_points(token) else f"“{safe}”"


def label_rows(steps: Sequence[int], span: int) -> list[int]:
    """A row per label (0 at the point, 1 a line above, ...) so that labels of dips close
    together along the steps stack instead of overlapping; `steps` ascend."""
    rows: list[int] = []
    close = max(1.0, span * CLOSE_STEPS_FRACTION)
    for i, step in enumerate(steps):
        row = 0
        while any(rows[j] == row and step - steps[j] < close for j in range(i)):
            row += 1  # taken by a neighbour
        rows.append(row)
    return rows


class DipLabels:
    """The labels of one plot: created once, re-texted and moved as the dips change."""

    def __init__(self, plot: pg.PlotWidget, y: Callable[[list[float]], np.ndarray]) -> None:
        self._plot = plot
        self._y = y  # the plot's mapping of mass to y (the log of it on a log axis)
        self.on = False
        self.dips: list[Dip] = []
        self._kept: list[StepRecord] = []  # the deepest records seen so far
        self._n_steps = 0
        self.items = [pg.TextItem(anchor=(0.5, 1.0)) for _ in range(N_DIPS)]
        self.marks = pg.ScatterPlotItem(symbol="t", size=MARK_SIZE_PX)  # ▼ on each dip
        for item in (*self.items, self.marks):
            item.setZValue(5)
            plot.addItem(item)
            item.hide()
        self._placed: list[tuple[pg.TextItem, float, float, int]] = []  # item, x, side, row
        vb = plot.getPlotItem().vb
        vb.sigResized.connect(self._place)
        vb.sigXRangeChanged.connect(self._place)

    def reset(self) -> None:
        self._kept = []
        self.dips = []
        self._n_steps = 0
        self.redraw()

    def set_on(self, on: bool) -> None:
        self.on = on
        self.redraw()

    def add(self, new: Sequence[StepRecord], n_steps: int) -> None:
        """Records new to the run; `n_steps` is the run's length with them."""
        self._n_steps = n_steps
        pool = self._kept + list(new)
        dips = deepest_dips(pool, N_DIPS)
        steps = {d.step for d in dips}
        self._kept = [r for r in pool if r.step in steps]
        if dips != self.dips:
            self.dips = dips
            self.redraw()

    def redraw(self) -> None:
        """Place the labels again (after new dips, a change of scale or of theme)."""
        shown = self.dips if self.on else []
        ordered = sorted(shown, key=lambda d: d.step)
        rows = label_rows([d.step for d in ordered], self._n_steps)
        y = self._y([d.valid_mass for d in ordered]) if ordered else np.array([])
        self._placed = []
        for item, dip, row, at in zip(self.items, ordered, rows, y, strict=False):
            x = float(dip.step + 1)
            side = (dip.step + 0.5) / max(1, self._n_steps)  # right-aligned near the end
            item.setText(dip_text(dip))
            self._placed.append((item, x, side, row))
            self._anchor(item, x, side, row)
            item.setPos(x, float(at))
            item.show()
            # A TextItem keeps its pixel size by a transform it updates when painted; one
            # shown for the first time after the view moved kept an old one, which put it
            # (lifted off its mark) out of sight, so it was never painted to mend it.
            item.updateTransform(force=True)
        for item in self.items[len(ordered) :]:
            item.hide()
        self.marks.setData(x=[d.step + 1.0 for d in ordered], y=y)
        self.marks.setVisible(bool(ordered))

    def _place(self) -> None:
        """Anchor each label again: the plot's width or x range changed."""
        for placed in self._placed:
            self._anchor(*placed)

    def _anchor(self, item: pg.TextItem, x: float, side: float, row: int) -> None:
        """Anchor a label above its mark and within the plot's width."""
        vb = self._plot.getPlotItem().vb
        # Pixels from the view's own range and width, as they are when its range changes.
        (x0, x1), _ = vb.viewRange()
        view_px = vb.width()
        size = item.textItem.boundingRect()  # in pixels: the text is never scaled
        width, height = max(1.0, size.width()), max(1.0, size.height())
        px = (x - x0) / (x1 - x0) * view_px if x1 > x0 else 0.0
        # The share of the label left of its point: `side` where it fits; less near the
        # left edge, more near the right one.
        least = 1.0 - (view_px - px) / width
        most = px / width
        share = min(0.9, max(0.1, side))
        share = min(max(share, least), most) if least <= most else 0.5
        lift = (MARK_SIZE_PX / 2 + MARK_GAP_PX) / height
        item.setAnchor((share, 1.0 + lift + 1.3 * row))

    def apply_theme(self, colors: ChartColors) -> None:
        fill = QColor(colors.background)
        fill.setAlpha(LABEL_ALPHA)
        for item in self.items:
            item.setColor(colors.foreground)
            item.fill = pg.mkBrush(fill)
            item.border = pg.mkPen(colors.raw_masked)
            item.update()
        self.marks.setBrush(colors.raw_masked)
        self.marks.setPen(pg.mkPen(colors.raw_masked))
