"""A non-modal error strip above the work area, for errors with no other home (model load,
a native crash, file I/O): visible until dismissed, the next run, or its cause is gone.
Schema and grammar errors never come here; they live in the Problems list."""

from __future__ import annotations

import html
from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QToolButton, QWidget

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
        self.cause = ""  # what the message is about ("model", "file"...), to clear it by
        self.action = QPushButton(self)  # the fix, where there is one ("Choose GGUF…")
        self.action.setObjectName("bannerAction")
        self.action.hide()
        self._fix: Callable[[], None] | None = None
        self.action.clicked.connect(self._apply_fix)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 4, 4, 4)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.action)
        layout.addWidget(close)
        self.hide()

    def show_message(
        self,
        title: str,
        message: str,
        cause: str = "",
        fix: tuple[str, Callable[[], None]] | None = None,
    ) -> None:
        """`fix`: a button's text and what it does, beside the message."""
        self.cause = cause
        self._fix = fix[1] if fix else None
        self.action.setText(fix[0] if fix else "")
        self.action.setVisible(fix is not None)
        bad = chart_colors().bad
        self.setStyleSheet(
            f"#errorBanner {{ background: {bad.name()}; border-radius: 4px; }}"
            "#errorBanner QLabel, #errorBanner QToolButton { color: white; }"
        )
        self.label.setText(f"<b>{html.escape(title)}:</b> {html.escape(message)}")
        self.show()

    def _apply_fix(self) -> None:
        if self._fix is not None:
            self._fix()

    def clear(self, cause: str) -> None:
        """Hide the message if it is about `cause`, which is gone now."""
        if self.cause == cause:
            self.hide()
