"""The candidate bars' token axis: one label per row, drawn straight onto the painter.

pyqtgraph's AxisItem measures every tick label's text (a text layout each), records the
result into a picture and plays it back, on every change of its ticks: a tenth of a chart
update when the labels change with every step. The rows here are evenly spaced and their
labels already cut to the axis's width (app/chart/labels.py), so nothing needs measuring.
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt

TEXT_GAP_PX = 6  # between a label and the bars


class TokenAxis(pg.AxisItem):
    def __init__(self) -> None:
        super().__init__("left")
        self.rows: list[tuple[float, str]] = []  # (row, label), the rows in view only

    def set_rows(self, rows: list[tuple[float, str]]) -> None:
        if rows != self.rows:
            self.rows = rows
            self.update()

    def paint(self, p, *args) -> None:
        view = self.linkedView()
        if view is None:
            return
        # Where rows 0 and 1 fall in this item's coordinates: the rest is linear.
        y0 = self.mapFromScene(view.mapViewToScene(QPointF(0, 0))).y()
        y1 = self.mapFromScene(view.mapViewToScene(QPointF(0, 1))).y()
        bounds = self.boundingRect()
        right = self.width() - TEXT_GAP_PX
        height = abs(y1 - y0)
        p.setRenderHint(p.RenderHint.TextAntialiasing, True)
        p.setPen(self.pen())
        p.drawLine(QPointF(self.width(), bounds.top()), QPointF(self.width(), bounds.bottom()))
        p.setFont(self.style["tickFont"])
        p.setPen(self.textPen())
        flags = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
        for row, label in self.rows:
            y = y0 + row * (y1 - y0)
            p.drawText(QRectF(0, y - height / 2, right, height), flags, label)
