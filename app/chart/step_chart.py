"""Live charts of a run: one step's candidate probabilities, and valid mass per step.

Top: grouped bars for the union of the step's top-K candidates before and after masking.
Every bar item is created once and only re-fed with ``setOpts`` afterwards; tokens the
grammar allows and tokens it masks out live in separate single-brush items, so masked-out
tokens read at a glance (red, hatched, "✗" in their label, no after-masking bar).

Bottom: the valid mass (probability the model put on grammar-allowed tokens) per step,
linear or log-scale. A slider (or a click on this plot) revisits earlier steps.

Records may arrive far faster than a screen refreshes, so they are only stored on
arrival; a single-shot timer redraws at most ~30 times a second from the newest state.
Each redraw touches only what changed: axes are cached as pixmaps and their tick texts,
ranges and widths are only set when they differ, so one update is one cheap repaint
rather than a re-layout plus a replay of every axis's tick labels.
"""

from __future__ import annotations

import html
import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, Qt, QTimer, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetrics, QGuiApplication
from PySide6.QtWidgets import (
    QGraphicsItem,
    QHBoxLayout,
    QLabel,
    QSlider,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from app.chart.step_text import StepText
from app.theme import chart_colors
from engine.records import Candidate, StepRecord

REDRAW_MS = 33
BAR_WIDTH = 0.38
LABEL_CHARS = 9  # longer token texts are cut in the axis label; the tooltip has them whole
LOG_FLOOR = 1e-12  # log axes cannot show 0
BAR_Y_TOP = 1.25
STAGGER_ABOVE = 10  # with more slots than this, tick labels alternate between two rows
MASS_SYMBOLS_UP_TO = 100  # past this many steps the mass curve is drawn without symbols
MIN_MASS_STEPS = 10  # the mass plot is at least this many steps wide


def chart_slots(record: StepRecord) -> list[Candidate]:
    """The tokens one step shows: its raw top-K by probability, then any token that is only
    in the after-masking top-K (probable once the forbidden ones are gone)."""
    slots = sorted(record.top_raw, key=lambda c: -c.p_raw)
    seen = {c.id for c in slots}
    slots += sorted((c for c in record.top_masked if c.id not in seen), key=lambda c: -c.p_masked)
    return slots


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


def axis_label(candidate: Candidate, lower_row: bool = False) -> str:
    """Tick text for a slot; lower_row drops it one line so that neighbours can't collide."""
    text = (
        candidate.text
        if len(candidate.text) <= LABEL_CHARS
        else candidate.text[: LABEL_CHARS - 1] + "…"
    )
    text = text if candidate.valid else f"✗{text}"
    return f"\n{text}" if lower_row else text


class StepChart(QWidget):
    sig_step_shown = Signal(int)  # index into the run's records

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.records: list[StepRecord] = []
        self._shown: int | None = None  # index of the step the bars show
        self._follow = True  # keep showing the newest step while the run goes on
        self._slots: list[Candidate] = []
        self._log = False
        # What the plots show now, so that a redraw only touches what changed.
        self._ticks: list[tuple[float, str]] | None = None
        self._bar_x_range: tuple[float, float] | None = None
        self._mass_x_range: tuple[float, float] | None = None
        self._mass_symbols = True

        # --- bar chart of one step --------------------------------------------------------
        self.bar_plot = pg.PlotWidget(self)
        self.bar_plot.setObjectName("barPlot")
        self.bar_plot.setMenuEnabled(False)
        self.bar_plot.setMouseEnabled(x=False, y=False)
        self.bar_plot.hideButtons()
        self.bar_plot.setLabel("left", "probability")
        # Headroom above 1.0 keeps the legend off the bars; the axis still stops at 1.
        self.bar_plot.setYRange(0, BAR_Y_TOP, padding=0)
        self.bar_plot.getAxis("left").setTicks(
            [
                [(v / 10, f"{v / 10:.1f}") for v in range(0, 11, 2)],
                [(v / 10, "") for v in range(1, 11, 2)],
            ]
        )
        self.bar_plot.showGrid(y=True, alpha=0.2)
        self._legend = self.bar_plot.addLegend(offset=(-10, 8), colCount=2)
        self.raw_valid_bars = pg.BarGraphItem(
            x=[], height=[], width=BAR_WIDTH, name="before masking · allowed"
        )
        self.raw_masked_bars = pg.BarGraphItem(
            x=[], height=[], width=BAR_WIDTH, name="before masking · masked out ✗"
        )
        self.after_bars = pg.BarGraphItem(x=[], height=[], width=BAR_WIDTH, name="after masking")
        self.chosen_marker = pg.ScatterPlotItem(symbol="t", size=11, name="sampled token")
        for item in (
            self.raw_valid_bars,
            self.raw_masked_bars,
            self.after_bars,
            self.chosen_marker,
        ):
            self.bar_plot.addItem(item)
        self._bar_axis = self.bar_plot.getAxis("bottom")
        tick_font = _small_font()
        self._bar_axis.setStyle(tickFont=tick_font, autoExpandTextSpace=False)
        # Room for two rows of labels at all times, so the plot never jumps mid-run.
        self._bar_axis.setHeight(2 * QFontMetrics(tick_font).lineSpacing() + 14)
        self.bar_plot.scene().sigMouseMoved.connect(self._hover_bars)

        # --- valid mass across the run ----------------------------------------------------
        self.mass_plot = pg.PlotWidget(self)
        self.mass_plot.setObjectName("massPlot")
        self.mass_plot.setMenuEnabled(False)
        self.mass_plot.hideButtons()
        self.mass_plot.setMouseEnabled(x=False, y=False)
        self.mass_plot.setLabel("left", "valid mass")
        self.mass_plot.setLabel("bottom", "step")
        self.mass_plot.showGrid(x=True, y=True, alpha=0.15)
        self.mass_curve = self.mass_plot.plot([], [], symbol="o", symbolSize=5)
        self.mass_curve.setClipToView(True)
        self.mass_curve.setDownsampling(auto=True, method="peak")
        self.current_line = pg.InfiniteLine(angle=90, movable=False)
        self.mass_plot.addItem(self.current_line)
        self.current_line.hide()
        self.mass_plot.scene().sigMouseClicked.connect(self._click_mass)
        self._set_mass_range()

        # --- step navigation --------------------------------------------------------------
        self.slider = QSlider(Qt.Orientation.Horizontal, self)
        self.slider.setObjectName("stepSlider")
        self.slider.setToolTip("Show an earlier step; drag to the right end to follow the run")
        self.slider.setEnabled(False)
        self.slider.valueChanged.connect(self._slider_moved)
        # Room for two lines from the start, and it only grows until the next run: a text
        # that wrapped onto a line fewer would resize the bar plot.
        self.step_label = StepText("No steps yet: press Run.", self)
        self.step_label.setObjectName("stepLabel")

        top = QWidget(self)
        top_layout = QVBoxLayout(top)
        top_layout.setContentsMargins(0, 0, 0, 0)
        top_layout.setSpacing(2)
        top_layout.addWidget(QLabel("<b>Candidate tokens at this step</b>", top))
        top_layout.addWidget(self.bar_plot, 1)
        nav = QHBoxLayout()
        nav.addWidget(QLabel("Step:", top))
        nav.addWidget(self.slider, 1)
        top_layout.addLayout(nav)
        top_layout.addWidget(self.step_label)
        bottom = QWidget(self)
        bottom_layout = QVBoxLayout(bottom)
        bottom_layout.setContentsMargins(0, 0, 0, 0)
        bottom_layout.setSpacing(2)
        bottom_layout.addWidget(
            QLabel(
                "<b>Valid mass per step</b> (probability the model put on grammar-allowed tokens)",
                bottom,
            )
        )
        bottom_layout.addWidget(self.mass_plot, 1)
        self.splitter = QSplitter(Qt.Orientation.Vertical, self)
        self.splitter.addWidget(top)
        self.splitter.addWidget(bottom)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 2)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.splitter)

        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(REDRAW_MS)
        self._timer.timeout.connect(self.redraw)
        for plot in (self.bar_plot, self.mass_plot):
            plot.getPlotItem().vb.disableAutoRange()  # ranges are always set explicitly
        for axis in (
            self.bar_plot.getAxis("left"),
            self.mass_plot.getAxis("left"),
            self.mass_plot.getAxis("bottom"),
        ):
            # Repainting a bar or the curve then blits the axis (tick labels and grid lines
            # across the plot) from a pixmap instead of replaying its drawing; the pixmap is
            # only redrawn when the axis itself changes (range, log mode, theme). Not the
            # bars' token axis: its labels change with almost every step.
            axis.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        self.apply_theme()
        QGuiApplication.styleHints().colorSchemeChanged.connect(self.apply_theme)

    # --- feeding ---------------------------------------------------------------------------
    def clear(self) -> None:
        self.records.clear()
        self.step_label.reset()
        self._shown = None
        self._follow = True
        self.redraw()

    def push(self, record: StepRecord) -> None:
        self.records.append(record)
        if not self._timer.isActive():
            self._timer.start()

    def set_log_scale(self, on: bool) -> None:
        self._log = on
        self.mass_plot.setLogMode(y=on)
        self._mass_x_range = None
        self._set_mass_range()
        self.redraw()

    def show_step(self, index: int) -> None:
        self._follow = index >= len(self.records) - 1
        self._shown = index
        self.redraw()

    # --- drawing ---------------------------------------------------------------------------
    def redraw(self) -> None:
        self._timer.stop()
        n = len(self.records)
        if n == 0:
            self._shown = None
        elif self._follow or self._shown is None or self._shown >= n:
            self._shown = n - 1
        self._draw_bars()
        self._draw_mass()
        for plot in (self.bar_plot, self.mass_plot):
            # A new range is otherwise applied at the start of the next paint, and the items
            # that move with it then ask for a second paint of the whole plot.
            plot.getPlotItem().vb.prepareForPaint()
        self.slider.blockSignals(True)
        self.slider.setRange(0, max(0, n - 1))
        self.slider.setValue(self._shown or 0)
        self.slider.blockSignals(False)
        self.slider.setEnabled(n > 1)
        self.step_label.setText(
            "No steps yet: press Run."
            if self._shown is None
            else _describe(self.records[self._shown], n)
        )
        if self._shown is not None:
            self.sig_step_shown.emit(self._shown)

    def _draw_bars(self) -> None:
        if self._shown is None:
            self._slots = []
            for item in (self.raw_valid_bars, self.raw_masked_bars, self.after_bars):
                item.setOpts(x=[], height=[])
            self.chosen_marker.setData([], [])
            self._set_ticks([])
            return
        record = self.records[self._shown]
        self._slots = slots = chart_slots(record)
        x = np.arange(len(slots), dtype=float)
        p_raw = np.array([c.p_raw for c in slots])
        p_after = np.array([c.p_masked for c in slots])
        valid = np.array([c.valid for c in slots], dtype=bool)
        self.raw_valid_bars.setOpts(x=x[valid] - BAR_WIDTH / 2, height=p_raw[valid])
        self.raw_masked_bars.setOpts(x=x[~valid] - BAR_WIDTH / 2, height=p_raw[~valid])
        self.after_bars.setOpts(x=x[valid] + BAR_WIDTH / 2, height=p_after[valid])
        chosen = [i for i, c in enumerate(slots) if c.id == record.token_id]
        if chosen:
            i = chosen[0]
            top = max(p_raw[i], p_after[i])
            self.chosen_marker.setData([float(i)], [min(top + 0.05, 1.04)])
        else:
            self.chosen_marker.setData([], [])
        stagger = len(slots) > STAGGER_ABOVE
        self._set_ticks(
            [(float(i), axis_label(c, stagger and i % 2 == 1)) for i, c in enumerate(slots)]
        )
        x_range = (-0.7, max(len(slots), 4) - 0.3)
        if x_range != self._bar_x_range:
            self._bar_x_range = x_range
            self.bar_plot.setXRange(*x_range, padding=0)

    def _set_ticks(self, ticks: list[tuple[float, str]]) -> None:
        # setTicks always drops the axis's picture and cache: skip it when nothing changed.
        if ticks != self._ticks:
            self._ticks = ticks
            self._bar_axis.setTicks([ticks])

    def _draw_mass(self) -> None:
        steps = np.array([r.step for r in self.records], dtype=float)
        mass = np.array([r.valid_mass for r in self.records], dtype=float)
        if self._log:
            mass = np.maximum(mass, LOG_FLOOR)
        symbols = len(steps) <= MASS_SYMBOLS_UP_TO  # past that they only blur into a line
        if symbols != self._mass_symbols:
            self._mass_symbols = symbols
            self.mass_curve.setSymbol("o" if symbols else None)
        self.mass_curve.setData(steps, mass)
        if self._shown is None:
            self.current_line.hide()
        else:
            self.current_line.setValue(self.records[self._shown].step)
            self.current_line.show()
        first = float(steps[0]) if len(steps) else 0.0
        last = float(steps[-1]) if len(steps) else 0.0
        x_range = (first - 0.5, first + mass_plot_span(last - first) + 0.5)
        if x_range != self._mass_x_range:
            self._mass_x_range = x_range
            self.mass_plot.setXRange(*x_range, padding=0)

    def _set_mass_range(self) -> None:
        if self._log:
            self.mass_plot.enableAutoRange(axis="y")
        else:
            self.mass_plot.setYRange(0, 1.05, padding=0)

    def apply_theme(self) -> None:
        colors = chart_colors()
        for plot in (self.bar_plot, self.mass_plot):
            plot.setBackground(colors.background)
            for name in ("left", "bottom"):
                axis = plot.getAxis(name)
                axis.setPen(colors.foreground)
                axis.setTextPen(colors.foreground)
        self.raw_valid_bars.setOpts(brush=colors.raw_valid, pen=pg.mkPen(colors.raw_valid))
        self.raw_masked_bars.setOpts(
            brush=_hatched(colors.raw_masked), pen=pg.mkPen(colors.raw_masked, width=1.5)
        )
        self.after_bars.setOpts(brush=colors.after, pen=pg.mkPen(colors.after))
        self.chosen_marker.setBrush(colors.chosen)
        self.chosen_marker.setPen(pg.mkPen(None))
        self.chosen_marker.setSymbol("t")
        self._legend.setLabelTextColor(colors.foreground)
        self._legend.setBrush(_alpha(colors.background, 200))
        self.mass_curve.setPen(pg.mkPen(colors.mass_line, width=2))
        self.mass_curve.setSymbolBrush(colors.mass_line)
        self.mass_curve.setSymbolPen(pg.mkPen(colors.mass_line))
        self.current_line.setPen(
            pg.mkPen(colors.current_step, width=1.5, style=Qt.PenStyle.DashLine)
        )
        self.redraw()

    # --- interaction -----------------------------------------------------------------------
    def _slider_moved(self, value: int) -> None:
        if self.records:
            self.show_step(value)

    def _click_mass(self, event: object) -> None:
        if not self.records:
            return
        pos = event.scenePos()  # type: ignore[attr-defined]
        vb = self.mass_plot.getPlotItem().vb
        if not vb.sceneBoundingRect().contains(pos):
            return
        step = vb.mapSceneToView(pos).x()
        index = int(np.argmin([abs(r.step - step) for r in self.records]))
        self.show_step(index)

    def _hover_bars(self, pos: QPointF) -> None:
        vb = self.bar_plot.getPlotItem().vb
        if not self._slots or not vb.sceneBoundingRect().contains(pos):
            self.bar_plot.setToolTip("")
            return
        i = round(vb.mapSceneToView(pos).x())
        if not 0 <= i < len(self._slots):
            self.bar_plot.setToolTip("")
            return
        c = self._slots[i]
        state = "allowed" if c.valid else "masked out by the grammar"
        self.bar_plot.setToolTip(
            f"<b>{html.escape(repr(c.text))}</b> (id {c.id}), {state}<br>"
            f"before masking: {c.p_raw:.4f}<br>after masking: {c.p_masked:.4f}"
        )


def _describe(record: StepRecord, n_steps: int) -> str:
    mass = f"{record.valid_mass:.3f}"
    if record.valid_mass_bound > 0:
        # Head-first checking (llamacpp): the unchecked tail bounds the error.
        mass = f"≥ {mass} (exact to {record.valid_mass_bound:.1e})"
    n_valid = f"{record.n_valid}" if record.n_valid_exact else f"≥ {record.n_valid}"
    n_valid += " valid token" if record.n_valid == 1 else " valid tokens"
    text = (
        f"step <b>{record.step}</b> of {n_steps} · chose "
        f"<b>{html.escape(repr(record.token_text))}</b> · valid mass {mass} · "
        f"{n_valid} · entropy {record.entropy:.2f} nats · "
        f"{record.forward_ms:.1f} ms forward + {record.mask_ms:.1f} ms mask"
    )
    d = record.disagreement
    if d is not None and (d.n_only_primary or d.n_only_secondary):

        def examples(cands: tuple) -> str:
            shown = ", ".join(html.escape(c.text) for c in cands[:4])
            return f" (e.g. {shown})" if shown else ""

        # "llamacpp" names a backend and a compiler both: say which.
        kind = " compiler" if d.between == "compilers" else " backend"
        text += (
            f"<br>⚠ {d.between} disagree: {d.n_only_primary} allowed only by the "
            f"{d.primary}{kind}{examples(d.only_primary)}, {d.n_only_secondary} only by the "
            f"{d.secondary}{kind}{examples(d.only_secondary)}"
        )
    return text


def _small_font() -> QFont:
    font = QFont()
    font.setPointSizeF(max(7.0, font.pointSizeF() - 1))
    return font


def _hatched(color: QColor) -> QBrush:
    return QBrush(color, Qt.BrushStyle.BDiagPattern)


def _alpha(color: QColor, alpha: int) -> QColor:
    c = QColor(color)
    c.setAlpha(alpha)
    return c
