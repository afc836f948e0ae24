"""Live charts of a run: one step's candidate probabilities, and valid mass per step.

Top (app/chart/candidate_bars.py): a row per candidate token, its bars before and after
masking, on a linear or log scale. Bottom (app/chart/mass_plot.py): the valid mass per
step, with hover, zoom and the cross-check's disagreements. A slider (or a click on the
mass plot) revisits earlier steps. Steps are counted from 1 wherever the user reads them.

Records may arrive far faster than a screen refreshes, so they are only stored on
arrival; a single-shot timer redraws at most ~30 times a second from the newest state.
Each redraw touches only what changed: plot items are created once and re-fed, axes are
cached as pixmaps, and tick texts and ranges are only set when they differ, so one update
is one cheap repaint rather than a re-layout plus a replay of every axis's tick labels.
"""

from __future__ import annotations

import html

import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QApplication,
    QHBoxLayout,
    QLabel,
    QSlider,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from app.chart.candidate_bars import CandidateBars
from app.chart.mass_plot import MIN_MASS_STEPS, MassPlot, mass_plot_span
from app.chart.stale_overlay import StaleOverlay
from app.chart.step_text import StepText
from app.glyphs import quoted_token, shown_token
from app.theme import ChartColors, chart_colors
from engine.records import StepRecord

__all__ = ["MIN_MASS_STEPS", "StepChart", "mass_plot_span", "raw_label"]

REDRAW_MS = 33


def raw_label(temperature: float | None) -> str:
    """What the "before masking" bars are: the model's P at the run's temperature. A greedy
    run (T = 0) picks the top token, and its P is the plain softmax, at T = 1."""
    if temperature is None:
        return "P before masking"
    if temperature <= 0:
        return "P before masking, at T = 1 (greedy run)"
    return f"P before masking, at T = {temperature:g}"


BARS_TITLE = "<b>Candidate tokens at this step</b>"
PLAIN_BARS_TITLE = "<b>What the model could write next</b>"


def legend_html(colors: ChartColors, temperature: float | None, plain: bool = False) -> str:
    def swatch(color: str, mark: str, text: str) -> str:
        return f"<span style='color:{color}'>{mark}</span>&nbsp;{html.escape(text)}"

    if plain:
        return " &nbsp; ".join(
            (
                swatch(colors.raw_valid.name(), "■", "the model's preference · allowed"),
                swatch(colors.raw_masked.name(), "▨", "forbidden by the rules ✗"),
                swatch(colors.after.name(), "■", "after the rules"),
                swatch(colors.current_step.name(), "▮", "picked"),
            )
        )
    return " &nbsp; ".join(
        (
            swatch(colors.raw_valid.name(), "■", f"{raw_label(temperature)} · allowed"),
            swatch(colors.raw_masked.name(), "▨", "masked out ✗"),
            swatch(colors.after.name(), "■", "after masking"),
            swatch(colors.current_step.name(), "▮", "sampled token"),
        )
    )


class StepChart(QWidget):
    sig_step_shown = Signal(int)  # index into the run's records
    # A candidate row was clicked: (index of the step shown, its Candidate).
    sig_candidate_clicked = Signal(int, object)

    def __init__(
        self, parent: QWidget | None = None, records: list[StepRecord] | None = None
    ) -> None:
        """`records`: the run's list, owned by its session (app/session.py), which the chart
        reads and never changes; without one the chart keeps its own, fed by push."""
        super().__init__(parent)
        self._owns_records = records is None
        self.records: list[StepRecord] = [] if records is None else records
        self._shown: int | None = None  # index of the step the bars show
        self._follow = True  # keep showing the newest step while the run goes on
        self._temperature: float | None = None
        self._plain = False  # presentation mode's words
        self._subject = ""  # the run shown, named in the title

        self.bars = CandidateBars(self)
        self.bar_plot = self.bars.plot
        self.mass = MassPlot(self)
        self.mass_plot = self.mass.plot
        self.mass_curve = self.mass.curve
        self.current_line = self.mass.current_line
        self.mass.sig_clicked.connect(self.show_step)
        self.bars.sig_candidate_clicked.connect(self._candidate_clicked)

        self.slider = QSlider(Qt.Orientation.Horizontal, self)
        self.slider.setObjectName("stepSlider")
        self.slider.setToolTip("Show an earlier step; drag to the right end to follow the run")
        self.slider.setEnabled(False)
        self.slider.valueChanged.connect(self._slider_moved)
        self.step_label = StepText("No steps yet: press Run.", self)
        self.step_label.setObjectName("stepLabel")
        self.legend = QLabel(self)
        self.legend.setObjectName("barLegend")
        self.legend.setWordWrap(True)  # set once per run, never per step: no re-layout cost

        top = QWidget(self)
        top_layout = QVBoxLayout(top)
        top_layout.setContentsMargins(0, 0, 0, 0)
        top_layout.setSpacing(2)
        self.bars_title = QLabel(BARS_TITLE, top)
        self.bars_title.setWordWrap(True)  # a branch's name may be long
        top_layout.addWidget(self.bars_title)
        top_layout.addWidget(self.legend)
        top_layout.addWidget(self.bars, 1)
        nav = QHBoxLayout()
        nav.addWidget(QLabel("Step:", top))
        nav.addWidget(self.slider, 1)
        top_layout.addLayout(nav)
        top_layout.addWidget(self.step_label)
        self.splitter = QSplitter(Qt.Orientation.Vertical, self)
        self.splitter.addWidget(top)
        self.splitter.addWidget(self.mass)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 2)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.splitter)
        self.stale_overlay = StaleOverlay(self)

        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(REDRAW_MS)
        self._timer.timeout.connect(self.redraw)
        self.apply_theme()
        QGuiApplication.styleHints().colorSchemeChanged.connect(self.apply_theme)

    # Kept under their old names: the window's tests and the bench read them.
    @property
    def raw_valid_bars(self) -> pg.BarGraphItem:
        return self.bars.raw_valid_bars

    @property
    def raw_masked_bars(self) -> pg.BarGraphItem:
        return self.bars.raw_masked_bars

    @property
    def after_bars(self) -> pg.BarGraphItem:
        return self.bars.after_bars

    # --- feeding ---------------------------------------------------------------------------
    def clear(self) -> None:
        if self._owns_records:
            self.records.clear()
        self.step_label.reset()
        self.bars.reset()
        self.mass.reset()
        self.set_stale(False)  # a new run matches what it was started with
        self._shown = None
        self._follow = True
        self.redraw()

    def push(self, record: StepRecord) -> None:
        """A step arrived: kept (unless the session keeps it) and drawn on the next tick."""
        if self._owns_records:
            self.records.append(record)
        self.refresh()

    def refresh(self) -> None:
        """Draw the records as they now are, on the next tick."""
        if not self._timer.isActive():
            self._timer.start()

    def set_subject(self, text: str) -> None:
        """Name the run shown in the chart's title: yours, a branch, a replay, a sample."""
        self._subject = text
        self._show_title()

    def _show_title(self) -> None:
        title = PLAIN_BARS_TITLE if self._plain else BARS_TITLE
        subject = html.escape(self._subject, quote=False)
        self.bars_title.setText(f"{title} · {subject}" if subject else title)

    def set_plain_language(self, on: bool) -> None:
        """Presentation mode: words for non-engineers, and the deepest dips labelled; the
        mass plot's ticks follow the application's (enlarged) font."""
        self._plain = on
        self._show_title()
        self.mass.set_plain_language(on, QApplication.font() if on else None)
        self.mass.set_annotate_dips(on)
        self.apply_theme()

    def set_temperature(self, temperature: float | None) -> None:
        """The run's temperature, which the "before masking" probabilities are at."""
        self._temperature = temperature
        self.legend.setText(legend_html(chart_colors(), temperature, self._plain))

    def set_log_scale(self, on: bool) -> None:
        """The valid-mass plot on a log axis."""
        self.mass.set_log_scale(on)
        self.redraw()

    def set_annotate_dips(self, on: bool) -> None:
        """Label the strip chart's deepest dips with the token the grammar wrote there."""
        self.mass.set_annotate_dips(on)

    def set_bar_log_scale(self, on: bool) -> None:
        """The candidate bars on a log axis, where a 0.003 bar still shows."""
        self.bars.set_log_scale(on)

    def set_stale(self, stale: bool, reason: str = "") -> None:
        """Mark the charts as showing a run made from an older schema, prompt or settings."""
        self.stale_overlay.set_reason(reason)
        self.stale_overlay.setVisible(stale)
        if stale:
            self.stale_overlay.cover(self.rect())

    def export_parts(self) -> list[QWidget]:
        """What a saved image of the chart shows (app/chart/export.py), top to bottom: the
        titles, legends, plots and the step's line, not the slider or the buttons."""
        mass = self.mass
        return [self.bars_title, self.legend, self.bars, self.step_label, mass.title, mass.plot]

    @property
    def stale(self) -> bool:
        return not self.stale_overlay.isHidden()

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
        self.bars.show_record(None if self._shown is None else self.records[self._shown])
        self.mass.draw(self.records, self._shown)
        self.bars.prepare_for_paint()
        self.mass.prepare_for_paint()
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

    def apply_theme(self) -> None:
        colors = chart_colors()
        self.bars.apply_theme(colors)
        self.mass.apply_theme(colors)
        self.legend.setText(legend_html(colors, self._temperature, self._plain))
        self.redraw()

    def resizeEvent(self, event: object) -> None:
        super().resizeEvent(event)  # type: ignore[arg-type]
        if self.stale:
            self.stale_overlay.cover(self.rect())

    # --- interaction -----------------------------------------------------------------------
    def _slider_moved(self, value: int) -> None:
        if self.records:
            self.show_step(value)

    def _candidate_clicked(self, candidate: object) -> None:
        if self._shown is not None:
            self.sig_candidate_clicked.emit(self._shown, candidate)


def _describe(record: StepRecord, n_steps: int) -> str:
    mass = f"{record.valid_mass:.3f}"
    if record.valid_mass_bound > 0:
        # Head-first checking (llamacpp): the unchecked tail bounds the error.
        mass = f"≥ {mass} (exact to {record.valid_mass_bound:.1e})"
    n_valid = f"{record.n_valid}" if record.n_valid_exact else f"≥ {record.n_valid}"
    n_valid += " valid token" if record.n_valid == 1 else " valid tokens"
    token = html.escape(quoted_token(record.token_text, record.token_piece))
    text = (
        f"step <b>{record.step + 1}</b> of {n_steps} · chose "
        f"<b>{token}</b> · valid mass {mass} · "
        f"{n_valid} · entropy {record.entropy:.2f} nats · "
        f"{record.forward_ms:.1f} ms forward + {record.mask_ms:.1f} ms mask"
    )
    d = record.disagreement
    if d is not None and (d.n_only_primary or d.n_only_secondary):

        def examples(cands: tuple) -> str:
            shown = ", ".join(html.escape(shown_token(c.text, c.piece)) for c in cands[:4])
            return f" (e.g. {shown})" if shown else ""

        # "llamacpp" names a backend and a compiler both: say which.
        kind = " compiler" if d.between == "compilers" else " backend"
        text += (
            f"<br>⚠ {d.between} disagree: {d.n_only_primary} allowed only by the "
            f"{d.primary}{kind}{examples(d.only_primary)}, {d.n_only_secondary} only by the "
            f"{d.secondary}{kind}{examples(d.only_secondary)}"
        )
    return text
