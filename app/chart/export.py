"""Save a chart as it is on screen, as a PNG or an SVG file.

A chart widget that has `export_parts()` (the StepChart) is saved as those parts stacked
top to bottom: its titles, legends and plots without the slider and buttons, which mean
nothing on paper. Any other widget (a MassPlot, a bare PlotWidget) is saved whole, and a
pyqtgraph item (a PlotItem) as the view that shows it. pyqtgraph's own SVGExporter is not
used: it fails on the SVG that this Qt writes (it expects "x,y" where Qt writes "x y").

Both are drawn in memory and then written with write_atomically (a new file beside the
old, renamed over it), so a full disk or an unwritable folder is a message naming the
cause and never a truncated old file; Qt's own file writers would say neither.

The PNG is drawn at twice the widget's size, so it stays sharp on a slide; the SVG is
vector throughout: while it is drawn the plots' pixmap caches are off and their items in
pyqtgraph's export mode (points as paths, not stamped from a bitmap atlas), and its fonts
are named as they resolved here ("DejaVu Sans", not Qt's alias "Sans Serif"), so that a
browser spaces the text as the app did.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import pyqtgraph as pg
from PySide6.QtCore import QBuffer, QIODevice, QPoint, QRect, QSize
from PySide6.QtGui import QColor, QFont, QFontInfo, QImage, QPainter, QPalette
from PySide6.QtSvg import QSvgGenerator
from PySide6.QtWidgets import QGraphicsItem, QGraphicsView, QWidget

from engine.errors import MaskscopeError
from engine.runs.saved import write_atomically

PNG_SCALE = 2  # pixels per widget pixel
PART_GAP_PX = 6  # between stacked parts
MARGIN_PX = 8
SVG_TITLE = "Maskscope chart"
FILE_FILTER = "PNG image (*.png);;SVG drawing (*.svg)"  # for a save dialog
EXPORT_OPTIONS = {"antialias": True, "background": None, "painter": None}


class ChartExportError(MaskscopeError):
    """A chart could not be saved."""

    kind = "export"


def export_chart(chart: QWidget | pg.GraphicsItem, path: str | Path) -> None:
    """Save `chart` to `path`; its suffix, .png or .svg, picks the format."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in (".png", ".svg"):
        raise ChartExportError(f"cannot save a chart as {path.name}: use a .png or .svg name")
    if isinstance(chart, pg.GraphicsItem):
        view = chart.getViewWidget()
        if view is None:
            raise ChartExportError("cannot save the chart: it is not shown in any view")
        chart = view
    parts = chart.export_parts() if hasattr(chart, "export_parts") else [chart]
    parts = [p for p in parts if p.isVisible() and p.width() > 0 and p.height() > 0]
    if not parts:
        raise ChartExportError("cannot save the chart: nothing of it is on screen")
    size = _stacked_size(parts)
    background = chart.palette().color(QPalette.ColorRole.Window)
    with _vector_plots(parts):
        if suffix == ".png":
            content: str | bytes = _png_bytes(parts, size, background)
        else:
            content = _svg_text(parts, size, background)
    try:
        write_atomically(path, content)
    except OSError as exc:
        raise ChartExportError(f"cannot write {path}: {exc.strerror or exc}") from None


def _stacked_size(parts: Sequence[QWidget]) -> QSize:
    width = max(p.width() for p in parts) + 2 * MARGIN_PX
    height = sum(p.height() for p in parts) + PART_GAP_PX * (len(parts) - 1) + 2 * MARGIN_PX
    return QSize(width, height)


def _paint(painter: QPainter, parts: Sequence[QWidget], size: QSize, background: QColor) -> None:
    painter.fillRect(QRect(QPoint(0, 0), size), background)
    y = MARGIN_PX
    for part in parts:
        # QWidget's render, not QGraphicsView's (which draws the scene alone, no frame).
        QWidget.render(part, painter, QPoint(MARGIN_PX, y))
        y += part.height() + PART_GAP_PX


def _png_bytes(parts: Sequence[QWidget], size: QSize, background: QColor) -> bytes:
    image = QImage(size * PNG_SCALE, QImage.Format.Format_ARGB32)
    image.setDevicePixelRatio(PNG_SCALE)
    painter = QPainter(image)
    painter.setRenderHints(QPainter.RenderHint.Antialiasing | QPainter.RenderHint.TextAntialiasing)
    try:
        _paint(painter, parts, size, background)
    finally:
        painter.end()
    buffer = QBuffer()
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    if not image.save(buffer, "PNG"):
        raise ChartExportError("cannot save the chart: the PNG could not be encoded")
    return bytes(buffer.data())


def _svg_text(parts: Sequence[QWidget], size: QSize, background: QColor) -> str:
    buffer = QBuffer()
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    generator = QSvgGenerator()
    generator.setOutputDevice(buffer)
    generator.setSize(size)
    generator.setViewBox(QRect(QPoint(0, 0), size))
    generator.setTitle(SVG_TITLE)
    # At the screen's resolution, so that a font's points make as many pixels as on screen.
    generator.setResolution(parts[0].logicalDpiY())
    painter = QPainter()
    if not painter.begin(generator):
        raise ChartExportError("cannot save the chart: the SVG could not be drawn")
    try:
        _paint(painter, parts, size, background)
    finally:
        painter.end()
    return _name_fonts(bytes(buffer.data()).decode("utf-8"))


def _name_fonts(svg: str) -> str:
    def resolved(match: re.Match[str]) -> str:
        family = QFontInfo(QFont(match.group(1))).family()
        return f'font-family="{family}, sans-serif"'

    return re.sub(r'font-family="([^"]*)"', resolved, svg)


@contextmanager
def _vector_plots(parts: Sequence[QWidget]) -> Iterator[None]:
    """Every plot drawn afresh, as paths, rather than from pixmaps, for the export."""
    views = [p for p in parts if isinstance(p, pg.PlotWidget)]
    for part in parts:
        views += part.findChildren(pg.PlotWidget)
    cached: list[tuple[QGraphicsItem, QGraphicsItem.CacheMode]] = []
    modes = [(view, view.cacheMode()) for view in views]
    exported: list[QGraphicsItem] = []
    for view in views:
        view.setCacheMode(QGraphicsView.CacheModeFlag.CacheNone)
        for item in view.scene().items():
            if item.cacheMode() != QGraphicsItem.CacheMode.NoCache:
                cached.append((item, item.cacheMode()))
                item.setCacheMode(QGraphicsItem.CacheMode.NoCache)
            if hasattr(item, "setExportMode"):
                item.setExportMode(True, EXPORT_OPTIONS)
                exported.append(item)
    try:
        yield
    finally:
        for item in exported:
            item.setExportMode(False)
        for item, mode in cached:
            item.setCacheMode(mode)
        for view, view_mode in modes:
            view.setCacheMode(view_mode)
            view.resetCachedContent()
