"""A veil over charts whose run no longer matches the schema, prompt or settings.

It dims what is under it and says why at the top, but lets every click, hover and wheel
through: the old run can still be read, it is only marked as old.
"""

from __future__ import annotations

from PySide6.QtCore import QRect, Qt
from PySide6.QtGui import QColor, QPainter, QPalette
from PySide6.QtWidgets import QWidget

DEFAULT_REASON = "out of date: the schema, prompt or settings changed since this run"
VEIL_ALPHA = 110
MARGIN = 6


class StaleOverlay(QWidget):
    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.setObjectName("staleOverlay")
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self.reason = DEFAULT_REASON
        self.hide()

    def set_reason(self, reason: str) -> None:
        """`reason` is a sentence such as "The schema changed since this run."."""
        self.reason = f"out of date: {reason[:1].lower()}{reason[1:]}" if reason else DEFAULT_REASON
        self.setAccessibleName(self.reason)
        self.update()

    def cover(self, rect: QRect) -> None:
        self.setGeometry(rect)
        self.raise_()

    def paintEvent(self, event: object) -> None:
        painter = QPainter(self)
        palette = self.palette()
        veil = QColor(palette.color(QPalette.ColorRole.Window))
        veil.setAlpha(VEIL_ALPHA)
        painter.fillRect(self.rect(), veil)
        text = f"⚠ {self.reason}"
        metrics = painter.fontMetrics()
        box = metrics.boundingRect(
            self.rect().adjusted(MARGIN * 3, 0, -MARGIN * 3, 0),
            Qt.TextFlag.TextWordWrap | Qt.AlignmentFlag.AlignHCenter,
            text,
        ).adjusted(-MARGIN * 2, -MARGIN, MARGIN * 2, MARGIN)
        box.moveTop(1)  # over the chart's title, not over its data
        box.moveLeft((self.width() - box.width()) // 2)
        painter.setPen(palette.color(QPalette.ColorRole.Mid))
        painter.setBrush(palette.color(QPalette.ColorRole.ToolTipBase))
        painter.drawRoundedRect(box, 4, 4)
        painter.setPen(palette.color(QPalette.ColorRole.ToolTipText))
        painter.drawText(box, Qt.TextFlag.TextWordWrap | Qt.AlignmentFlag.AlignCenter, text)
