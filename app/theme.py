"""Chart colours that follow the system's light or dark scheme.

pyqtgraph draws with its own colours rather than the widget palette, so the charts ask
here for a matching set whenever the scheme changes.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QGuiApplication, QPalette


@dataclass(frozen=True, slots=True)
class ChartColors:
    background: QColor
    foreground: QColor  # axes, ticks and labels
    raw_valid: QColor  # "before masking" bar of a token the grammar allows
    raw_masked: QColor  # "before masking" bar of a token the grammar forbids
    after: QColor  # "after masking" bar
    chosen: QColor  # marker above the sampled token
    mass_line: QColor  # valid mass per step
    current_step: QColor  # the step the bar chart shows, on the mass plot
    ok: QColor  # badge colours in the output pane
    bad: QColor
    warn: QColor


LIGHT = ChartColors(
    background=QColor("#ffffff"),
    foreground=QColor("#303030"),
    raw_valid=QColor("#3b7dd8"),
    raw_masked=QColor("#d64541"),
    after=QColor("#2e9e58"),
    chosen=QColor("#111111"),
    mass_line=QColor("#7048c0"),
    current_step=QColor("#e08a00"),
    ok=QColor("#2e9e58"),
    bad=QColor("#c0392b"),
    warn=QColor("#c77c00"),
)

DARK = ChartColors(
    background=QColor("#1e1f22"),
    foreground=QColor("#d0d0d0"),
    raw_valid=QColor("#5b9cf0"),
    raw_masked=QColor("#ef6461"),
    after=QColor("#4cc37a"),
    chosen=QColor("#f0f0f0"),
    mass_line=QColor("#b093f0"),
    current_step=QColor("#ffb347"),
    ok=QColor("#3fae68"),
    bad=QColor("#e0605a"),
    warn=QColor("#e0a030"),
)


def is_dark() -> bool:
    """True when the desktop asks for a dark scheme.

    Platforms that report no scheme (offscreen, many X11 setups) fall back to the
    palette: a dark window colour means a dark theme.
    """
    app = QGuiApplication.instance()
    if app is None:
        return False
    scheme = QGuiApplication.styleHints().colorScheme()
    if scheme == Qt.ColorScheme.Dark:
        return True
    if scheme == Qt.ColorScheme.Light:
        return False
    return QGuiApplication.palette().color(QPalette.ColorRole.Window).lightness() < 128


def chart_colors() -> ChartColors:
    return DARK if is_dark() else LIGHT


def theme_plot(plot: Any, colors: ChartColors, axes: Iterable[Any] = ("left", "bottom")) -> None:
    """A pyqtgraph plot in the theme's colours: its background, and each axis (a name such
    as "left", or an AxisItem) drawn and labelled in the foreground colour."""
    plot.setBackground(colors.background)
    for axis in axes:
        item = plot.getAxis(axis) if isinstance(axis, str) else axis
        item.setPen(colors.foreground)
        item.setTextPen(colors.foreground)
