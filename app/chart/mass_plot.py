"""The valid mass per step across a run, and the raw entropy on a right-hand axis: hover
for a step's token, zoom and pan along the steps, cross-check disagreements ringed on the
curve, and the deepest dips labelled on request (app/chart/dip_labels.py).

Steps are counted from 1, as everywhere the user reads them. The x range follows the run
in round chunks until the user zooms or pans; from then on it stays where they put it until
"Reset zoom" (or a double click), so a 300-step run can be read a few dozen steps at a time.

The entropy curve lives in a second view box linked on x to the first and stacked behind
it, so the mass plot keeps every mouse event; its y range only changes when a step's
entropy passes the whole nats it shows.
"""

from __future__ import annotations

import html
import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, Qt, Signal
from PySide6.QtGui import QColor, QFont
from PySide6.QtWidgets import (
    QGraphicsItem,
    QHBoxLayout,
    QLabel,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.chart.dip_labels import DipLabels
from app.glyphs import quoted_token
from app.theme import ChartColors, chart_colors, theme_plot
from engine.records import StepRecord

LOG_FLOOR = 1e-12  # log axes cannot show 0
MASS_SYMBOLS_UP_TO = 100  # past this many steps the mass curve is drawn without symbols
MIN_MASS_STEPS = 10  # the mass plot is at least this many steps wide
MIN_ZOOM_STEPS = 4  # zooming in stops at this many steps across
MIN_ENTROPY_TOP = 1.0  # nats: the entropy axis shows at least 0..1
ENTROPY_LABEL = "raw entropy (nats)"
# Presentation mode's words, for an audience of non-engineers.
PLAIN_MASS_LABEL = "share the rules allowed"
PLAIN_ENTROPY_LABEL = "how unsure the model was"
ENTROPY_WEIGHT = 0.8  # of the bar colour, the rest the background's
MASS_LABEL = "valid mass"


def entropy_top(highest: float) -> float:
    """The entropy axis's top for a run whose highest entropy so far is `highest`: whole
    nats, so that the axis changes a handful of times a run, not at every step."""
    return max(MIN_ENTROPY_TOP, float(math.ceil(highest)))


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
    token = html.escape(quoted_token(record.token_text, record.token_piece), quote=False)
    text = (
        f"step <b>{record.step + 1}</b> of {n_steps} · chose <b>{token}</b><br>"
        f"valid mass {record.valid_mass:.4g} · raw entropy {record.entropy:.3g} nats"
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
        self._plain = False  # presentation mode's words
        self._zoomed = False  # the user moved the x range: stop following the run
        # What the plot was last fed, grown one record at a time.
        self._n = 0
        self._x: list[float] = []
        self._mass: list[float] = []
        self._entropy: list[float] = []
        self._entropy_top = 0.0
        self._odd_x: list[float] = []
        self._odd_mass: list[float] = []
        self._records: list[StepRecord] = []
        self._x_range: tuple[float, float] | None = None

        self.plot = pg.PlotWidget(self)
        self.plot.setObjectName("massPlot")
        self.plot.setMenuEnabled(False)
        self.plot.hideButtons()
        self.plot.setMouseEnabled(x=True, y=False)
        self.plot.setLabel("left", MASS_LABEL)
        self.plot.setLabel("right", ENTROPY_LABEL)
        self.plot.setLabel("bottom", "step")
        self.plot.showGrid(x=True, y=True, alpha=0.15)
        self.vb = self.plot.getPlotItem().vb
        self.vb.sigResized.connect(self._fit_side_titles)
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
        self.entropy_vb = pg.ViewBox(enableMenu=False)
        self.entropy_vb.setMouseEnabled(x=False, y=False)
        self.entropy_vb.setXLink(self.vb)
        self.entropy_vb.disableAutoRange()
        self.entropy_vb.setZValue(self.vb.zValue() - 1)  # behind: the mass plot gets the mouse
        self.plot.scene().addItem(self.entropy_vb)
        self.plot.getAxis("right").linkToView(self.entropy_vb)
        self.entropy_curve = pg.PlotCurveItem()
        self.entropy_vb.addItem(self.entropy_curve)
        self.vb.sigResized.connect(self._fit_entropy_view)
        self.dip_labels = DipLabels(self.plot, self._y)
        self.current_line = pg.InfiniteLine(angle=90, movable=False)
        self.plot.addItem(self.current_line)
        self.current_line.hide()
        for axis in (self.plot.getAxis(name) for name in ("left", "bottom", "right")):
            # Repainting the curve then blits the axis from a pixmap, which is only redrawn
            # when the axis itself changes (range, log mode, theme).
            axis.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        self.plot.scene().sigMouseClicked.connect(self._click)
        self.plot.scene().sigMouseMoved.connect(self._hover)

        self.title = QLabel(self)
        self.title.setObjectName("massTitle")
        self.title.setWordWrap(True)
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
        header.addWidget(self.title, 1)
        header.addWidget(self.odd_note)
        header.addWidget(self.reset_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addLayout(header)
        layout.addWidget(self.plot, 1)
        self._set_y_range()
        self._set_entropy_range(MIN_ENTROPY_TOP)
        self._follow_run()

    # --- feeding ---------------------------------------------------------------------------
    def reset(self) -> None:
        self._n = 0
        for values in (self._x, self._mass, self._entropy, self._odd_x, self._odd_mass):
            values.clear()
        self._refeed()
        self._set_entropy_range(MIN_ENTROPY_TOP)
        self.dip_labels.reset()
        self.odd_note.hide()
        self.reset_zoom()

    def set_annotate_dips(self, on: bool) -> None:
        """Label the deepest dips with the token the grammar wrote there, and the one the
        model wanted when the grammar masked it."""
        self.dip_labels.set_on(on)

    def set_plain_language(self, on: bool, tick_font: QFont | None = None) -> None:
        """Words for an audience of non-engineers, and ticks in `tick_font` (None: the
        plot's own)."""
        self._plain = on
        for name in ("left", "bottom", "right"):
            self.plot.getAxis(name).setStyle(tickFont=tick_font)
        self.apply_theme(chart_colors())

    def _fit_side_titles(self) -> None:
        """The side axes' titles where they fit the plot's height, hidden where they would
        be cut (a short plot, presentation mode's large type): the title above the plot
        names both curves in their colours either way."""
        height = self.vb.height()
        for name in ("left", "right"):
            axis = self.plot.getAxis(name)
            fits = axis.label.boundingRect().width() <= height
            if axis.label.isVisible() != fits:
                axis.showLabel(fits)

    def set_log_scale(self, on: bool) -> None:
        self._log = on
        x_range = self.vb.viewRange()[0]
        self.plot.setLogMode(y=on)  # the axis's decades; it also turns on auto-range
        self.plot.getAxis("right").setLogMode(False, False)  # entropy stays linear
        self.vb.disableAutoRange()
        self.plot.setXRange(*x_range, padding=0)  # a zoom survives a change of scale
        self._refeed()
        self._set_y_range()
        self.dip_labels.redraw()

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
        self._entropy += [r.entropy for r in new]
        xs = np.array(self._x)
        self.curve.setData(xs, self._y(self._mass))
        self.entropy_curve.setData(xs, np.array(self._entropy))
        top = entropy_top(max(r.entropy for r in new))
        if top > self._entropy_top:
            self._set_entropy_range(top)
        self.dip_labels.add(new, self._n)
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
        self.entropy_curve.setData(np.array(self._x), np.array(self._entropy))
        shown = self._n <= MASS_SYMBOLS_UP_TO
        self.points.setData(x=self._x if shown else [], y=self._y(self._mass) if shown else [])
        self.disagreements.setData(x=self._odd_x, y=self._y(self._odd_mass))

    def prepare_for_paint(self) -> None:
        self.vb.prepareForPaint()
        self.entropy_vb.prepareForPaint()

    def _fit_entropy_view(self) -> None:
        self.entropy_vb.setGeometry(self.vb.sceneBoundingRect())
        self.entropy_vb.linkedViewChanged(self.vb, self.entropy_vb.XAxis)

    def _set_entropy_range(self, top: float) -> None:
        self._entropy_top = top
        self.entropy_vb.setYRange(0, top * 1.05, padding=0)

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
        theme_plot(self.plot, colors, ("left", "bottom", "right"))
        entropy = entropy_color(colors)
        plain = self._plain
        mass_label, entropy_label = (
            (PLAIN_MASS_LABEL, PLAIN_ENTROPY_LABEL) if plain else (MASS_LABEL, ENTROPY_LABEL)
        )
        self.plot.setLabel("left", mass_label, color=colors.mass_line.name())
        self.plot.setLabel("right", entropy_label, color=entropy.name())
        self._fit_side_titles()
        self.title.setText(title_html(colors, plain))
        self.entropy_curve.setPen(pg.mkPen(entropy, width=1))
        self.dip_labels.apply_theme(colors)
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


def entropy_color(colors: ChartColors) -> QColor:
    """The entropy is the raw distribution's: the colour of the "before masking" bars,
    blended a little into the background so the valid mass stays the curve that leads
    (opaque, since a translucent pen costs a blend per pixel at every repaint)."""
    a, b, w = colors.raw_valid, colors.background, ENTROPY_WEIGHT
    return QColor.fromRgbF(
        w * a.redF() + (1 - w) * b.redF(),
        w * a.greenF() + (1 - w) * b.greenF(),
        w * a.blueF() + (1 - w) * b.blueF(),
    )


def title_html(colors: ChartColors, plain: bool = False) -> str:
    def swatch(color: QColor, text: str) -> str:
        return f"<span style='color:{color.name()}'>━</span>&nbsp;{text}"

    if plain:
        return (
            "<b>Step by step</b> &nbsp; "
            + swatch(colors.mass_line, "share of the model's preference that the rules allowed")
            + " &nbsp; "
            + swatch(entropy_color(colors), "how unsure the model was (right axis)")
        )
    return (
        "<b>Valid mass and entropy per step</b> &nbsp; "
        + swatch(colors.mass_line, "valid mass (probability on grammar-allowed tokens)")
        + " &nbsp; "
        + swatch(entropy_color(colors), "raw entropy (nats, right axis)")
    )
