"""The window's size on a first start: what the screen has room for."""

from __future__ import annotations

from PySide6.QtCore import QRect, QSize
from PySide6.QtWidgets import QWidget

PREFERRED = QSize(1500, 900)
SCREEN_SHARE = 0.92  # leave a margin for the desktop's own panels and the frame


def default_size(available: QRect) -> QSize:
    """PREFERRED, shrunk to fit the available screen area."""
    return QSize(
        min(PREFERRED.width(), int(available.width() * SCREEN_SHARE)),
        min(PREFERRED.height(), int(available.height() * SCREEN_SHARE)),
    )


def fit_to_screen(window: QWidget) -> None:
    """Size the window for its screen and centre it there."""
    screen = window.screen()
    if screen is None:
        window.resize(PREFERRED)
        return
    available = screen.availableGeometry()
    window.resize(default_size(available))
    frame = window.frameGeometry()
    frame.moveCenter(available.center())
    window.move(frame.topLeft())
