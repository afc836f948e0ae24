"""One step's candidate tokens as horizontal bars, one row per token, ranked top down.

Rows keep a height at which their labels read (the token's text on the left axis). When a
large Top-K has more rows than fit, the plot shows a window of them and a scroll bar (or
the mouse wheel) moves through the rest, rather than squeezing every label into an
unreadable strip. The number of rows shown only grows during a run, so the rows keep their
height from one step to the next.

Every plot item is created once and only re-fed with ``setOpts``/``setData``; tokens the
grammar allows and tokens it masks out live in separate single-brush items, so masked-out
tokens read at a glance (red, hatched, "✗" in their label, no after-masking bar).

A click on a row (its bars or its label) emits sig_candidate_clicked(Candidate): the window
continues the run with a valid token, or explains why the grammar forbids a masked one.
"""

from __future__ import annotations

import html

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QObject, QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetrics
from PySide6.QtWidgets import QGraphicsItem, QHBoxLayout, QScrollBar, QWidget

from app.chart.bar_scale import axis_range, axis_ticks, bar_extent
from app.chart.labels import LabelMaker
from app.chart.token_axis import TokenAxis
from app.glyphs import quoted
from app.theme import ChartColors, theme_plot
from engine.records import Candidate, StepRecord

BAR_THICKNESS = 0.38  # of a row, for each of a token's two bars
LABEL_WIDTH_CHARS = 12  # labels are cut ("…") at about this many average characters
# A label of code points (a token no font draws: app/chart/labels.py) may take this many:
# two code points after the ✗ and a space symbol, in its small font. The column widens to the
# widest label in view, for the rest of the run.
CODE_POINT_WIDTH_CHARS = 26
TOKEN_AXIS_PADDING_PX = 12  # the axis's own room beside its labels
ROW_PADDING_PX = 6  # a row is a label's line plus this
MIN_ROWS = 5  # a short list still leaves room for this many rows: no fat bars at Top-K 3
SAMPLED_ALPHA = 60  # of the highlight across the sampled token's row
VALID_CLICK_TIP = "click to continue the run from here with this token"
MASKED_CLICK_TIP = "click to see why the grammar forbids this token here"


def chart_slots(record: StepRecord) -> list[Candidate]:
    """The tokens one step shows: its raw top-K by probability, then any token that is only
    in the after-masking top-K (probable once the forbidden ones are gone)."""
    slots = sorted(record.top_raw, key=lambda c: -c.p_raw)
    seen = {c.id for c in slots}
    slots += sorted((c for c in record.top_masked if c.id not in seen), key=lambda c: -c.p_masked)
    return slots


def rows_that_fit(height_px: float, row_px: float) -> int:
    return max(1, int(height_px // row_px))


class CandidateBars(QWidget):
    sig_candidate_clicked = Signal(object)  # the Candidate of the clicked row

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._slots: list[Candidate] = []
        self._chosen: int | None = None  # row of the sampled token
        self._log = False
        self._most = 0  # the most rows any step of this run had: rows shown never shrink
        self._rows = MIN_ROWS  # rows in view
        self._first = 0  # first row in view
        # What the plot shows now, so that a redraw only touches what changed.
        self._y_range: tuple[float, float] | None = None

        self.token_axis = TokenAxis()
        self.plot = pg.PlotWidget(self, axisItems={"left": self.token_axis})
        self.plot.setObjectName("barPlot")
        self.plot.setMenuEnabled(False)
        self.plot.setMouseEnabled(x=False, y=False)
        self.plot.hideButtons()
        self.plot.showGrid(x=True, alpha=0.2)
        vb = self.plot.getPlotItem().vb
        vb.invertY(True)  # row 0, the most probable token, on top
        vb.disableAutoRange()
        # The sampled token's row is highlighted across the plot.
        self.chosen_band = Bars(x0=[], y=[], width=[], height=1.0)
        self.raw_valid_bars = Bars(x0=0.0, y=[], width=[], height=BAR_THICKNESS)
        self.raw_masked_bars = Bars(x0=0.0, y=[], width=[], height=BAR_THICKNESS)
        self.after_bars = Bars(x0=0.0, y=[], width=[], height=BAR_THICKNESS)
        for item in (self.chosen_band, self.raw_valid_bars, self.raw_masked_bars, self.after_bars):
            self.plot.addItem(item)

        font = _small_font()
        metrics = QFontMetrics(font)
        label_px = metrics.averageCharWidth() * LABEL_WIDTH_CHARS
        self._labels = LabelMaker(
            font, label_px, metrics.averageCharWidth() * CODE_POINT_WIDTH_CHARS
        )
        self._label_px = self._base_label_px = label_px  # the label column's width now
        self._row_px = metrics.lineSpacing() + ROW_PADDING_PX
        self.token_axis.setStyle(tickFont=font, autoExpandTextSpace=False, tickLength=0)
        self.token_axis.setWidth(label_px + TOKEN_AXIS_PADDING_PX)
        self.p_axis = self.plot.getAxis("bottom")
        self.p_axis.setLabel("probability")
        # The probability axis only changes with the scale: blit it from a pixmap. Not the
        # token axis: its labels change with almost every step.
        self.p_axis.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        self._apply_scale()

        self.scroll = QScrollBar(Qt.Orientation.Vertical, self)
        self.scroll.setObjectName("barScroll")
        self.scroll.setToolTip("More candidates: scroll, or use the mouse wheel over the bars")
        self.scroll.hide()
        self.scroll.valueChanged.connect(self._scrolled)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.plot, 1)
        layout.addWidget(self.scroll)
        self.plot.viewport().installEventFilter(self)
        self.plot.scene().sigMouseMoved.connect(self._hover)
        self.plot.scene().sigMouseClicked.connect(self._click)

    # --- feeding ---------------------------------------------------------------------------
    def reset(self) -> None:
        """Back to the first rows and the smallest row count, for a new run."""
        self._most = 0
        self._first = 0
        self.scroll.hide()
        self._set_label_px(self._base_label_px)
        self.show_record(None)

    def set_log_scale(self, on: bool) -> None:
        self._log = on
        self._apply_scale()
        self._draw_bars()

    def show_record(self, record: StepRecord | None) -> None:
        if record is None:
            self._slots, self._chosen = [], None
        else:
            self._slots = chart_slots(record)
            self._chosen = next(
                (i for i, c in enumerate(self._slots) if c.id == record.token_id), None
            )
        self._fit_rows()
        self._draw_bars()
        self._draw_labels()

    def prepare_for_paint(self) -> None:
        # A new range is otherwise applied at the start of the next paint, and the items
        # that move with it then ask for a second paint of the whole plot.
        self.plot.getPlotItem().vb.prepareForPaint()

    @property
    def slots(self) -> list[Candidate]:
        return self._slots

    @property
    def shown_rows(self) -> range:
        """The rows in view now."""
        return range(self._first, min(len(self._slots), self._first + self._rows))

    # --- drawing ---------------------------------------------------------------------------
    def _apply_scale(self) -> None:
        self.p_axis.setTicks(axis_ticks(self._log))
        self.plot.setXRange(*axis_range(self._log), padding=0)

    def _fit_rows(self) -> None:
        n = len(self._slots)
        self._most = max(self._most, n)
        self._rows = min(
            rows_that_fit(self.plot.getPlotItem().vb.height(), self._row_px),
            max(MIN_ROWS, self._most),
        )
        if n > self._rows and self.scroll.isHidden():
            self.scroll.show()  # stays until the next run, so the plot's width holds still
        self._first = min(self._first, max(0, n - self._rows))
        self.scroll.blockSignals(True)
        self.scroll.setRange(0, max(0, n - self._rows))
        self.scroll.setPageStep(self._rows)
        self.scroll.setValue(self._first)
        self.scroll.blockSignals(False)
        y_range = (self._first - 0.5, self._first + self._rows - 0.5)
        if y_range != self._y_range:
            self._y_range = y_range
            self.plot.setYRange(*y_range, padding=0)

    def _draw_bars(self) -> None:
        slots = self._slots
        y = np.arange(len(slots), dtype=float)
        p_raw = np.array([c.p_raw for c in slots], dtype=float)
        p_after = np.array([c.p_masked for c in slots], dtype=float)
        valid = np.array([c.valid for c in slots], dtype=bool)
        raw, after = bar_extent(p_raw, self._log), bar_extent(p_after, self._log)
        half = BAR_THICKNESS / 2
        self.raw_valid_bars.setOpts(y=y[valid] - half, width=raw[valid])
        self.raw_masked_bars.setOpts(y=y[~valid] - half, width=raw[~valid])
        self.after_bars.setOpts(y=y[valid] + half, width=after[valid])
        i = self._chosen
        if i is None:
            self.chosen_band.setOpts(x0=[], y=[], width=[])
            return
        lo, hi = axis_range(self._log)
        self.chosen_band.setOpts(x0=[lo], y=[float(i)], width=[hi - lo])

    def _draw_labels(self) -> None:
        rows = [(float(i), self._labels.label(self._slots[i])) for i in self.shown_rows]
        # Only a label of code points is wider than the column's usual width: the column
        # grows to it, and keeps that width until the next run, so the bars hold still.
        widest = max((self._labels.width(label) for _, label in rows), default=0)
        if widest > self._label_px:
            self._set_label_px(widest)
        self.token_axis.set_rows(rows)

    def _set_label_px(self, px: int) -> None:
        if px != self._label_px:
            self._label_px = px
            self.token_axis.setWidth(px + TOKEN_AXIS_PADDING_PX)

    def apply_theme(self, colors: ChartColors) -> None:
        theme_plot(self.plot, colors, (self.token_axis, self.p_axis))
        self.raw_valid_bars.setOpts(brush=colors.raw_valid, pen=pg.mkPen(colors.raw_valid))
        self.raw_masked_bars.setOpts(
            brush=QBrush(colors.raw_masked, Qt.BrushStyle.BDiagPattern),
            pen=pg.mkPen(colors.raw_masked, width=1.5),
        )
        self.after_bars.setOpts(brush=colors.after, pen=pg.mkPen(colors.after))
        self.chosen_band.setOpts(brush=sampled_color(colors), pen=pg.mkPen(None))

    # --- interaction -----------------------------------------------------------------------
    def _scrolled(self, value: int) -> None:
        self._first = value
        self._fit_rows()
        self._draw_labels()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Wheel and self.scroll.maximum() > 0:
            steps = -event.angleDelta().y() // 40  # three rows per notch
            self.scroll.setValue(self.scroll.value() + steps)
            return True
        return False

    def resizeEvent(self, event: object) -> None:
        super().resizeEvent(event)  # type: ignore[arg-type]
        self._fit_rows()
        self._draw_labels()

    def row_at(self, pos: QPointF) -> int | None:
        """The row under a scene position: over its bars or its label."""
        vb = self.plot.getPlotItem().vb
        rows = vb.sceneBoundingRect().united(self.token_axis.sceneBoundingRect())
        if not self._slots or not rows.contains(pos):
            return None
        i = round(vb.mapSceneToView(pos).y())
        return i if i in self.shown_rows else None

    def _hover(self, pos: QPointF) -> None:
        i = self.row_at(pos)
        viewport = self.plot.viewport()
        if i is None:
            self.plot.setToolTip("")
            viewport.unsetCursor()
            return
        c = self._slots[i]
        action = VALID_CLICK_TIP if c.valid else MASKED_CLICK_TIP
        self.plot.setToolTip(f"{candidate_tooltip(c)}<br><i>{action}</i>")
        viewport.setCursor(Qt.CursorShape.PointingHandCursor)

    def _click(self, event: object) -> None:
        if event.button() != Qt.MouseButton.LeftButton:  # type: ignore[attr-defined]
            return
        i = self.row_at(event.scenePos())  # type: ignore[attr-defined]
        if i is not None:
            self.sig_candidate_clicked.emit(self._slots[i])


class Bars(pg.BarGraphItem):
    """A bar item that works out its bounding rectangle once per change, not at every
    one of the dozen times a repaint asks for it."""

    _rect: QRectF | None = None

    def setOpts(self, **opts: object) -> None:
        self._rect = None
        super().setOpts(**opts)

    def viewTransformChanged(self) -> None:
        self._rect = None  # the pen's pixel padding, in data units, changes with the view
        super().viewTransformChanged()

    def boundingRect(self) -> QRectF:
        if self._rect is None:
            self._rect = super().boundingRect()
        return self._rect


def sampled_color(colors: ChartColors) -> QColor:
    """The highlight of the sampled token's row."""
    return _alpha(colors.current_step, SAMPLED_ALPHA)


def candidate_tooltip(c: Candidate) -> str:
    state = "allowed" if c.valid else "masked out by the grammar"
    return (
        f"<b>{html.escape(quoted(c.piece if c.piece is not None else c.text))}</b> "
        f"(id {c.id}), {state}<br>"
        f"before masking: {c.p_raw:.4g}<br>after masking: {c.p_masked:.4g}"
    )


def _small_font() -> QFont:
    font = QFont()
    font.setPointSizeF(max(7.0, font.pointSizeF() - 1))
    return font


def _alpha(color: QColor, alpha: int) -> QColor:
    c = QColor(color)
    c.setAlpha(alpha)
    return c
