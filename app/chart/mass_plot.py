"""The valid mass per step across a run: hover for a step's token, zoom and pan along the
steps, and cross-check disagreements ringed on the curve.

Steps are counted from 1, as everywhere the user reads them. The x range follows the run
in round chunks until the user zooms or pans; from then on it stays where they put it until
"Reset zoom" (or a double click), so a 300-step run can be read a few dozen steps at a time.
"""

from __future__ import annotations

import html
import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, Qt, Signal
from PySide6.QtWidgets import (
    QGraphicsItem,
    QHBoxLayout,
    QLabel,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.theme import ChartColors
from engine.records import StepRecord

LOG_FLOOR = 1e-12  # log axes cannot show 0
MASS_SYMBOLS_UP_TO = 100  # past this many steps the mass curve is drawn without symbols
MIN_MASS_STEPS = 10  # the mass plot is at least this many steps wide
MIN_ZOOM_STEPS = 4  # zooming in stops at this many steps across


def mass_plot_span(span: float) -> float:
    """How many steps past the first the mass plot shows, to fit a run `span` steps long.

    The span grows in round chunks of about a tenth of the run rather than one step at a
    time: every change of the x range redraws the step axis and its grid, which costs more
    than the rest of a chart update together.
    """
    if span < MIN_MASS_STEPS:
        return MIN_MASS_STEPS - 1.0
    tenth = span / 10
    chunk = 10.0 ** math.floor(math.log10(tenth))  # the smallest of 1, 2, 5 × 10^k ≥ tenth
    chunk *= next(f for f in (1, 2, 5, 10) if f * chunk >= tenth)
    return math.ceil(span / chunk) * chunk


def disagrees(record: StepRecord) -> bool:
    d = record.disagreement
    return d is not None and bool(d.n_only_primary or d.n_only_secondary)


def mass_tooltip(record: StepRecord, n_steps: int) -> str:
    token = html.escape(repr(record.token_text), quote=False)
    text = (
        f"step <b>{record.step + 1}</b> of {n_steps} · chose <b>{token}</b><br>"
        f"valid mass {record.valid_mass:.4g}"
    )
    d = record.disagreement
    if disagrees(record) and d is not None:
        text += (
            f"<br>⚠ {d.between} disagree: {d.n_only_primary} allowed only by "
            f"{d.primary}, {d.n_only_secondary} only by {d.secondary}"
        )
    return text


class MassPlot(QWidget):
    sig_clicked = Signal(int)  # index into the run's records

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._log = False
        self._zoomed = False  # the user moved the x range: stop following the run
        # What the plot was last fed, grown one record at a time.
        self._n = 0
        self._x: list[float] = []
        self._mass: list[float] = []
        self._odd_x: list[float] = []
        self._odd_mass: list[float] = []
        self._records: list[StepRecord] = []
        self._x_range: tuple[float, float] | None = None

        self.plot = pg.PlotWidget(self)
        self.plot.setObjectName("massPlot")
        self.plot.setMenuEnabled(False)
        self.plot.hideButtons()
        self.plot.setMouseEnabled(x=True, y=False)
        self.plot.setLabel("left", "valid mass")
        self.plot.setLabel("bottom", "step")
        self.plot.showGrid(x=True, y=True, alpha=0.15)
        self.vb = self.plot.getPlotItem().vb
        self.vb.disableAutoRange()
        self.vb.setLimits(xMin=0, minXRange=MIN_ZOOM_STEPS)
        self.vb.sigRangeChangedManually.connect(self._zoomed_by_user)
        # The curve, its points and the rings are plain items, fed the log of the mass on a
        # log axis: pyqtgraph's PlotDataItem would do that for us, at the price of
        # re-adding every point of the run at every step.
        self.curve = pg.PlotCurveItem()
        self.points = pg.ScatterPlotItem(symbol="o", size=5)
        # Rings around the points where the cross-check's two masks disagreed.
        self.disagreements = pg.ScatterPlotItem(symbol="o", size=11)
        for item in (self.curve, self.points, self.disagreements):
            self.plot.addItem(item)
        self.current_line = pg.InfiniteLine(angle=90, movable=False)
        self.plot.addItem(self.current_line)
        self.current_line.hide()
        for axis in (self.plot.getAxis("left"), self.plot.getAxis("bottom")):
            # Repainting the curve then blits the axis from a pixmap, which is only redrawn
            # when the axis itself changes (range, log mode, theme).
            axis.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        self.plot.scene().sigMouseClicked.connect(self._click)
        self.plot.scene().sigMouseMoved.connect(self._hover)

        title = QLabel(
            "<b>Valid mass per step</b> (probability the model put on grammar-allowed tokens)",
            self,
        )
        title.setWordWrap(True)
        self.odd_note = QLabel(self)
        self.odd_note.setToolTip("Steps where the cross-check's two masks allowed different tokens")
        self.odd_note.hide()
        self.reset_button = QToolButton(self)
        self.reset_button.setObjectName("massResetZoom")
        self.reset_button.setText("Reset zoom")
        self.reset_button.setToolTip(
            "Show the whole run again (or double-click the plot). Wheel: zoom; drag: pan"
        )
        self.reset_button.setEnabled(False)
        self.reset_button.clicked.connect(self.reset_zoom)
        header = QHBoxLayout()
        header.addWidget(title, 1)
        header.addWidget(self.odd_note)
        header.addWidget(self.reset_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addLayout(header)
        layout.addWidget(self.plot, 1)
        self._set_y_range()
        self._follow_run()

    # --- feeding ---------------------------------------------------------------------------
    def reset(self) -> None:
        self._n = 0
        for values in (self._x, self._mass, self._odd_x, self._odd_mass):
            values.clear()
        self._refeed()
        self.odd_note.hide()
        self.reset_zoom()

    def set_log_scale(self, on: bool) -> None:
        self._log = on
        x_range = self.vb.viewRange()[0]
        self.plot.setLogMode(y=on)  # the axis's decades; it also turns on auto-range
        self.vb.disableAutoRange()
        self.plot.setXRange(*x_range, padding=0)  # a zoom survives a change of scale
        self._refeed()
        self._set_y_range()

    def draw(self, records: list[StepRecord], shown: int | None) -> None:
        self._records = records
        if len(records) < self._n:
            self.reset()
        new = records[self._n :]
        self._n = len(records)
        if new:
            self._add(new)
        if shown is None:
            self.current_line.hide()
        else:
            self.current_line.setValue(self._x[shown])
            self.current_line.show()
        if not self._zoomed:
            self._follow_run()

    def _add(self, new: list[StepRecord]) -> None:
        x = [float(r.step + 1) for r in new]
        mass = [r.valid_mass for r in new]
        self._x += x
        self._mass += mass
        self.curve.setData(np.array(self._x), self._y(self._mass))
        if self._n <= MASS_SYMBOLS_UP_TO:  # past that they only blur into a line
            self.points.addPoints(x=x, y=self._y(mass))
        elif self._n - len(new) <= MASS_SYMBOLS_UP_TO:
            self.points.clear()
        odd = [i for i, r in enumerate(new) if disagrees(r)]
        if odd:
            self._odd_x += [x[i] for i in odd]
            self._odd_mass += [mass[i] for i in odd]
            self.disagreements.addPoints(x=[x[i] for i in odd], y=self._y([mass[i] for i in odd]))
            self.odd_note.show()

    def _refeed(self) -> None:
        """Every point again, after a change of scale."""
        self.curve.setData(np.array(self._x), self._y(self._mass))
        shown = self._n <= MASS_SYMBOLS_UP_TO
        self.points.setData(x=self._x if shown else [], y=self._y(self._mass) if shown else [])
        self.disagreements.setData(x=self._odd_x, y=self._y(self._odd_mass))

    def prepare_for_paint(self) -> None:
        self.vb.prepareForPaint()

    def _y(self, mass: list[float]) -> np.ndarray:
        values = np.array(mass, dtype=float)
        return np.log10(np.maximum(values, LOG_FLOOR)) if self._log else values

    def _follow_run(self) -> None:
        first = self._x[0] if self._x else 1.0
        last = self._x[-1] if self._x else 1.0
        x_range = (first - 0.5, first + mass_plot_span(last - first) + 0.5)
        if x_range != self._x_range:
            self._x_range = x_range
            self.vb.setLimits(xMax=x_range[1])  # first: the old limit would clip the range
            self.plot.setXRange(*x_range, padding=0)

    def _set_y_range(self) -> None:
        if self._log:
            self.plot.enableAutoRange(axis="y")
        else:
            self.plot.setYRange(0, 1.05, padding=0)

    def apply_theme(self, colors: ChartColors) -> None:
        self.plot.setBackground(colors.background)
        for name in ("left", "bottom"):
            axis = self.plot.getAxis(name)
            axis.setPen(colors.foreground)
            axis.setTextPen(colors.foreground)
        self.curve.setPen(pg.mkPen(colors.mass_line, width=2))
        self.points.setBrush(colors.mass_line)
        self.points.setPen(pg.mkPen(colors.mass_line))
        self.disagreements.setBrush(None)
        self.disagreements.setPen(pg.mkPen(colors.bad, width=2))
        self.odd_note.setText(
            f"<span style='color:{colors.bad.name()}'>◯</span> cross-check disagreement"
        )
        self.current_line.setPen(
            pg.mkPen(colors.current_step, width=1.5, style=Qt.PenStyle.DashLine)
        )

    # --- interaction -----------------------------------------------------------------------
    def reset_zoom(self) -> None:
        self._zoomed = False
        self.reset_button.setEnabled(False)
        self._x_range = None
        self.vb.setLimits(xMax=None)
        self._follow_run()

    def _zoomed_by_user(self, _mask: object) -> None:
        self._zoomed = True
        self.reset_button.setEnabled(True)

    def _index_at(self, pos: QPointF) -> int | None:
        if not self._x or not self.vb.sceneBoundingRect().contains(pos):
            return None
        x = self.vb.mapSceneToView(pos).x()
        i = int(np.searchsorted(self._x, x))  # steps ascend: the nearest is i - 1 or i
        if i == len(self._x) or (i > 0 and x - self._x[i - 1] < self._x[i] - x):
            i -= 1
        return i

    def _click(self, event: object) -> None:
        if event.double():  # type: ignore[attr-defined]
            self.reset_zoom()
            return
        i = self._index_at(event.scenePos())  # type: ignore[attr-defined]
        if i is not None:
            self.sig_clicked.emit(i)

    def _hover(self, pos: QPointF) -> None:
        i = self._index_at(pos)
        self.plot.setToolTip(
            "" if i is None else mass_tooltip(self._records[i], len(self._records))
        )
