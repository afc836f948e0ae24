"""Text from the user, a file or the model, shown as written in Qt's widgets.

A QLabel, a QMessageBox and every tooltip guess their format (Qt.AutoText): a text that
starts like HTML (`<b>`, `<img src=…>`, `&lt;`) is rendered as rich text, so a property
name, a file name or a model's output could restyle the UI, show an image or lose its
`&lt;`. A label that shows only data is made PlainText (plain_label); a tooltip or a
message box text, which has no format of its own, is given the text as escaped HTML that
always reads as rich text (literal_html).
"""

from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel


def plain_label(label: QLabel) -> QLabel:
    label.setTextFormat(Qt.TextFormat.PlainText)
    return label


def literal_html(text: str) -> str:
    """HTML that shows `text` as written, its spaces and line breaks kept; "" stays ""
    (no tooltip)."""
    if not text:
        return ""
    return f"<p style='white-space:pre-wrap'>{html.escape(text, quote=False)}</p>"
