"""The schema editor's text widget: monospace, line numbers, JSON colours.

Kept apart from the checks (schema_editor.py) so that editing comfort (indent, brackets,
find) and the live check each live in one place.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QRect, QRegularExpression, QSize, Qt
from PySide6.QtGui import (
    QColor,
    QHelpEvent,
    QPainter,
    QPaintEvent,
    QResizeEvent,
    QSyntaxHighlighter,
    QTextCharFormat,
    QTextDocument,
)
from PySide6.QtWidgets import QPlainTextEdit, QToolTip, QWidget

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

    def event(self, event: QEvent) -> bool:
        # A marked line's tooltip says what its problems are.
        if event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
            tip = self._editor.mark_tooltip_at(event.pos().y())
            if tip:
                QToolTip.showText(event.globalPos(), tip, self)
            else:
                QToolTip.hideText()
                event.ignore()
            return True
        return super().event(event)


class CodeEditor(QPlainTextEdit):
    """QPlainTextEdit with a line-number gutter; the error line's number turns red."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        use_monospace(self)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self._gutter = _LineNumberArea(self)
        self._error_line: int | None = None  # 1-based
        # Problem markers, 1-based line -> (colour, tooltip): a dot left of the number.
        self._marks: dict[int, tuple[QColor, str]] = {}
        self.blockCountChanged.connect(self._update_gutter_width)
        self.updateRequest.connect(self._update_gutter)
        self._update_gutter_width()

    def set_error_line(self, line: int | None) -> None:
        self._error_line = line
        self._gutter.update()

    def set_line_marks(self, marks: dict[int, tuple[QColor, str]]) -> None:
        self._marks = marks
        self._gutter.update()

    def line_marks(self) -> dict[int, tuple[QColor, str]]:
        return dict(self._marks)

    def mark_tooltip_at(self, y: int) -> str:
        """The tooltip of the marker on the line at height y of the gutter, or ""."""
        block = self.firstVisibleBlock()
        while block.isValid():
            geometry = self.blockBoundingGeometry(block).translated(self.contentOffset())
            if geometry.top() <= y < geometry.bottom():
                mark = self._marks.get(block.blockNumber() + 1)
                return mark[1] if mark else ""
            if geometry.top() > y:
                break
            block = block.next()
        return ""

    def _mark_width(self) -> int:
        return self.fontMetrics().height() // 2 + 6

    def line_number_width(self) -> int:
        digits = max(2, len(str(self.blockCount())))
        return 10 + self._mark_width() + self.fontMetrics().horizontalAdvance("9") * digits

    def paint_line_numbers(self, event: QPaintEvent) -> None:
        painter = QPainter(self._gutter)
        palette = self.palette()
        painter.fillRect(event.rect(), palette.alternateBase())
        block = self.firstVisibleBlock()
        top = round(self.blockBoundingGeometry(block).translated(self.contentOffset()).top())
        height = self.fontMetrics().height()
        error_color = chart_colors().bad
        dot = self._mark_width() - 6
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        while block.isValid() and top <= event.rect().bottom():
            if block.isVisible():
                number = block.blockNumber() + 1
                if (mark := self._marks.get(number)) is not None:
                    painter.setPen(Qt.PenStyle.NoPen)
                    painter.setBrush(mark[0])
                    painter.drawEllipse(3, top + (height - dot) // 2, dot, dot)
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
