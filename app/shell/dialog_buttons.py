"""The button row of a dialog that shows text to take away: Close, and Copy beside it."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QDialog, QDialogButtonBox


def close_and_copy(
    dialog: QDialog, label: str, tip: str, copy: Callable[[], None]
) -> QDialogButtonBox:
    buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, dialog)
    button = buttons.addButton(label, QDialogButtonBox.ButtonRole.ActionRole)
    button.setToolTip(tip)
    button.clicked.connect(lambda _c=False: copy())
    buttons.rejected.connect(dialog.reject)
    return buttons
