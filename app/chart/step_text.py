"""A line or two of rich text under the bar chart, redrawn at chart speed.

A QLabel's setText asks the layout for room each time, and a word-wrapped rich-text label
then lays its text out again for the layout: about 1.5 ms of every 9 ms chart update. This
widget only repaints. It asks the layout for more height only when a text needs more
lines than it has, and it keeps that height until reset(), so the chart above it never
jumps.
"""

from __future__ import annotations

import math

from PySide6.QtCore import QEvent, QSize
from PySide6.QtGui import QAbstractTextDocumentLayout, QPainter, QTextDocument
from PySide6.QtWidgets import QSizePolicy, QWidget

MIN_LINES = 2


class StepText(QWidget):
    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._doc = QTextDocument(self)
        self._doc.setDocumentMargin(0)
        self._doc.setDefaultFont(self.font())
        self._text = ""
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)
        self.setAccessibleName("Step details")
        self.reset()
        self.setText(text)

    def text(self) -> str:
        return self._text

    def setText(self, text: str) -> None:
        if text == self._text:
            return
        self._text = text
        self._doc.setHtml(text)
        self.setAccessibleDescription(self._doc.toPlainText())
        self._fit()
        self.update()

    def reset(self) -> None:
        """Back to the smallest height, for a new run."""
        self.setMinimumHeight(MIN_LINES * self.fontMetrics().lineSpacing())
        self._fit()

    def _fit(self) -> None:
        self._doc.setTextWidth(max(1, self.width()))
        needed = math.ceil(self._doc.size().height())
        if needed > self.minimumHeight():
            self.setMinimumHeight(needed)

    def sizeHint(self) -> QSize:
        return QSize(200, self.minimumHeight())

    def minimumSizeHint(self) -> QSize:
        return QSize(0, self.minimumHeight())

    def resizeEvent(self, event: object) -> None:
        self._fit()

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.FontChange:
            self._doc.setDefaultFont(self.font())
            self._fit()
        super().changeEvent(event)

    def paintEvent(self, event: object) -> None:
        painter = QPainter(self)
        context = QAbstractTextDocumentLayout.PaintContext()
        context.palette = self.palette()  # the theme's text colour, dark or light
        self._doc.documentLayout().draw(painter, context)
