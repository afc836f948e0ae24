"""A non-modal error strip above the work area: visible until dismissed or the next run,
and never in the way of editing."""

from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QToolButton, QWidget

from app.theme import chart_colors


class ErrorBanner(QFrame):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("errorBanner")
        self.label = QLabel(self)
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        close = QToolButton(self)
        close.setText("✕")
        close.setAutoRaise(True)
        close.setToolTip("Dismiss")
        close.clicked.connect(self.hide)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 4, 4, 4)
        layout.addWidget(self.label, 1)
        layout.addWidget(close)
        self.hide()

    def show_message(self, title: str, message: str) -> None:
        bad = chart_colors().bad
        self.setStyleSheet(
            f"#errorBanner {{ background: {bad.name()}; border-radius: 4px; }}"
            "#errorBanner QLabel, #errorBanner QToolButton { color: white; }"
        )
        self.label.setText(f"<b>{html.escape(title)}:</b> {html.escape(message)}")
        self.show()
