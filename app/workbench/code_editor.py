"""The schema editor's text widget: monospace, line numbers, JSON colours.

Kept apart from the checks (schema_editor.py) so that editing comfort (indent, brackets,
find) and the live check each live in one place.
"""

from __future__ import annotations

from PySide6.QtCore import QRect, QRegularExpression, QSize, Qt
from PySide6.QtGui import (
    QColor,
    QPainter,
    QPaintEvent,
    QResizeEvent,
    QSyntaxHighlighter,
    QTextCharFormat,
    QTextDocument,
)
from PySide6.QtWidgets import QPlainTextEdit, QWidget

from app.text_edit import use_monospace
from app.theme import chart_colors, is_dark


class JsonHighlighter(QSyntaxHighlighter):
    """Colours keys, strings, numbers and literals; a line-by-line regex pass is enough
    for JSON because no JSON token spans a line break."""

    def __init__(self, document: QTextDocument) -> None:
        super().__init__(document)
        dark = is_dark()
        colors = {
            "key": "#9cdcfe" if dark else "#0451a5",
            "string": "#ce9178" if dark else "#a31515",
            "number": "#b5cea8" if dark else "#098658",
            "literal": "#569cd6" if dark else "#0000ff",
            "punct": "#a0a0a0" if dark else "#707070",
        }
        patterns = [  # later rules win, so keys come after plain strings
            ("punct", r"[{}\[\],:]"),
            ("number", r"-?\b\d+(\.\d+)?([eE][+-]?\d+)?\b"),
            ("literal", r"\b(true|false|null)\b"),
            ("string", r'"(?:[^"\\]|\\.)*"'),
            ("key", r'"(?:[^"\\]|\\.)*"(?=\s*:)'),
        ]
        self._rules: list[tuple[QRegularExpression, QTextCharFormat]] = []
        for kind, pattern in patterns:
            fmt = QTextCharFormat()
            fmt.setForeground(QColor(colors[kind]))
            if kind == "key":
                fmt.setFontWeight(600)
            self._rules.append((QRegularExpression(pattern), fmt))

    def highlightBlock(self, text: str) -> None:
        for regex, fmt in self._rules:
            matches = regex.globalMatch(text)
            while matches.hasNext():
                m = matches.next()
                self.setFormat(m.capturedStart(), m.capturedLength(), fmt)


class _LineNumberArea(QWidget):
    def __init__(self, editor: CodeEditor) -> None:
        super().__init__(editor)
        self._editor = editor

    def sizeHint(self) -> QSize:
        return QSize(self._editor.line_number_width(), 0)

    def paintEvent(self, event: QPaintEvent) -> None:
        self._editor.paint_line_numbers(event)


class CodeEditor(QPlainTextEdit):
    """QPlainTextEdit with a line-number gutter; the error line's number turns red."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        use_monospace(self)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self._gutter = _LineNumberArea(self)
        self._error_line: int | None = None  # 1-based
        self.blockCountChanged.connect(self._update_gutter_width)
        self.updateRequest.connect(self._update_gutter)
        self._update_gutter_width()

    def set_error_line(self, line: int | None) -> None:
        self._error_line = line
        self._gutter.update()

    def line_number_width(self) -> int:
        digits = max(2, len(str(self.blockCount())))
        return 10 + self.fontMetrics().horizontalAdvance("9") * digits

    def paint_line_numbers(self, event: QPaintEvent) -> None:
        painter = QPainter(self._gutter)
        palette = self.palette()
        painter.fillRect(event.rect(), palette.alternateBase())
        block = self.firstVisibleBlock()
        top = round(self.blockBoundingGeometry(block).translated(self.contentOffset()).top())
        height = self.fontMetrics().height()
        error_color = chart_colors().bad
        while block.isValid() and top <= event.rect().bottom():
            if block.isVisible():
                number = block.blockNumber() + 1
                painter.setPen(
                    error_color if number == self._error_line else palette.placeholderText().color()
                )
                painter.drawText(
                    0,
                    top,
                    self._gutter.width() - 5,
                    height,
                    Qt.AlignmentFlag.AlignRight,
                    str(number),
                )
            top += round(self.blockBoundingRect(block).height())
            block = block.next()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        r = self.contentsRect()
        self._gutter.setGeometry(QRect(r.left(), r.top(), self.line_number_width(), r.height()))

    def _update_gutter_width(self) -> None:
        self.setViewportMargins(self.line_number_width(), 0, 0, 0)

    def _update_gutter(self, rect: QRect, dy: int) -> None:
        if dy:
            self._gutter.scroll(0, dy)
        else:
            self._gutter.update(0, rect.y(), self._gutter.width(), rect.height())
