"""The schema editor's text widget: monospace, line numbers, JSON colours.

Kept apart from the checks (schema_editor.py) so that editing comfort (indent, brackets,
find) and the live check each live in one place.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator

from PySide6.QtCore import QEvent, QMimeData, QRect, QRegularExpression, QSize, Qt
from PySide6.QtGui import (
    QColor,
    QHelpEvent,
    QKeyEvent,
    QPainter,
    QPaintEvent,
    QResizeEvent,
    QSyntaxHighlighter,
    QTextBlock,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
)
from PySide6.QtWidgets import QPlainTextEdit, QTextEdit, QToolTip, QWidget

from app.plain_text import literal_html
from app.text_edit import use_monospace
from app.theme import chart_colors, is_dark
from app.workbench import json_editing
from app.workbench.find_bar import FindBar

# A block's state while it waits, uncoloured, to scroll into view (a lazy highlighter's).
_PENDING = 1
# Above this many lines a lazy highlighter colours only what is on screen: colouring a 1 MB
# schema's 88,000 lines took the GUI thread 6 s on setPlainText.
LAZY_BLOCKS = 5_000


class JsonHighlighter(QSyntaxHighlighter):
    """Colours keys, strings, numbers and literals; a line-by-line regex pass is enough
    for JSON because no JSON token spans a line break. Given `visible` (the first and last
    block numbers on screen), a long document is coloured as it scrolls into view."""

    def __init__(
        self, document: QTextDocument, visible: Callable[[], tuple[int, int]] | None = None
    ) -> None:
        super().__init__(None)
        self._visible = visible
        # The blocks to colour now: on screen in a long document, all in a short one. Worked
        # out once a change (asking the view or the document costs more than colouring a
        # line), so it is forgotten before the highlighter's own slot sees the next change.
        self._range: tuple[int, int] | None = None
        self._catching_up = False
        document.contentsChange.connect(self._forget_range)
        self.setDocument(document)
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
        if self._postponed():
            self.setCurrentBlockState(_PENDING)
            return
        self.setCurrentBlockState(-1)
        for regex, fmt in self._rules:
            matches = regex.globalMatch(text)
            while matches.hasNext():
                m = matches.next()
                self.setFormat(m.capturedStart(), m.capturedLength(), fmt)

    def _forget_range(self, *_: object) -> None:
        self._range = None

    def _postponed(self) -> bool:
        if self._visible is None or self._catching_up:
            return False
        if self._range is None:
            long = self.document().blockCount() > LAZY_BLOCKS
            self._range = self._visible() if long else (0, sys.maxsize)
        first, last = self._range
        return not first <= self.currentBlock().blockNumber() <= last

    def colour_visible(self) -> None:
        """The view moved (scrolled, resized, repainted): colour the blocks now on screen
        that were left for later."""
        if self._visible is None or self.document().blockCount() <= LAZY_BLOCKS:
            return
        self._range = first, last = self._visible()
        block = self.document().findBlockByNumber(first)
        self._catching_up = True
        try:
            while block.isValid() and block.blockNumber() <= last:
                if block.userState() == _PENDING:
                    self.rehighlightBlock(block)
                block = block.next()
        finally:
            self._catching_up = False


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
                # The problems quote property names: shown as written.
                QToolTip.showText(event.globalPos(), literal_html(tip), self)
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
        # Extra selections in two layers: the checks' markers (setExtraSelections, as
        # before) and the bracket pair at the cursor, drawn over them.
        self._marker_selections: list[QTextEdit.ExtraSelection] = []
        self._bracket_selections: list[QTextEdit.ExtraSelection] = []
        self.cursorPositionChanged.connect(self._match_brackets)
        self.find_bar = FindBar(self)

    def colour_as_json(self) -> JsonHighlighter:
        """JSON colours that, in a long document, follow the view instead of colouring
        every line at once."""
        highlighter = JsonHighlighter(self.document(), self.visible_blocks)
        self.updateRequest.connect(lambda *_: highlighter.colour_visible())
        return highlighter

    def visible_blocks(self, margin: int = 40) -> tuple[int, int]:
        """The first and last block numbers on screen, with `margin` lines either side."""
        first = self.firstVisibleBlock().blockNumber()
        lines = self.viewport().height() // max(1, self.fontMetrics().height()) + 1
        return max(0, first - margin), first + lines + margin

    # --- editing comfort: indent, brackets, find -------------------------------------------
    def keyPressEvent(self, event: QKeyEvent) -> None:
        key, mods = event.key(), event.modifiers()
        plain = not mods & ~(Qt.KeyboardModifier.KeypadModifier | Qt.KeyboardModifier.ShiftModifier)
        if plain and key in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and not self.isReadOnly():
            self._newline_with_indent()
        elif plain and event.text() and event.text() in json_editing.CLOSERS:
            self._type_closer(event.text())
        elif key == Qt.Key.Key_Tab and plain and not mods & Qt.KeyboardModifier.ShiftModifier:
            self._indent_lines(dedent=False)
        elif key == Qt.Key.Key_Backtab:
            self._indent_lines(dedent=True)
        else:
            super().keyPressEvent(event)

    def _line_around_cursor(self) -> tuple[QTextCursor, str, str]:
        cursor = self.textCursor()
        text = cursor.block().text()
        column = cursor.positionInBlock()
        return cursor, text[:column], text[column:]

    def _newline_with_indent(self) -> None:
        cursor, before, after = self._line_around_cursor()
        text, offset = json_editing.enter_text(before, after)
        cursor.beginEditBlock()
        cursor.removeSelectedText()
        start = cursor.position()
        cursor.insertText(text)
        cursor.endEditBlock()
        cursor.setPosition(start + offset)
        self.setTextCursor(cursor)
        self.ensureCursorVisible()

    def _type_closer(self, closer: str) -> None:
        cursor, before, _ = self._line_around_cursor()
        kept = None if cursor.hasSelection() else json_editing.dedented(before)
        cursor.beginEditBlock()
        if kept is not None:  # one level less, then the bracket
            cursor.movePosition(QTextCursor.MoveOperation.StartOfBlock)
            cursor.movePosition(
                QTextCursor.MoveOperation.Right, QTextCursor.MoveMode.KeepAnchor, len(before)
            )
            cursor.insertText(kept)
        cursor.insertText(closer)
        cursor.endEditBlock()
        self.setTextCursor(cursor)

    def _indent_lines(self, dedent: bool) -> None:
        """Tab inserts two spaces, or indents every selected line; Shift+Tab dedents."""
        cursor = self.textCursor()
        if not cursor.hasSelection() and not dedent:
            cursor.insertText(json_editing.INDENT)
            return
        doc = self.document()
        first = doc.findBlock(cursor.selectionStart())
        last = doc.findBlock(max(cursor.selectionStart(), cursor.selectionEnd() - 1))
        edit = QTextCursor(doc)
        edit.beginEditBlock()
        block = first
        while block.isValid() and block.blockNumber() <= last.blockNumber():
            edit.setPosition(block.position())
            if not dedent:
                edit.insertText(json_editing.INDENT)
            else:
                width = len(json_editing.leading_space(block.text())[: len(json_editing.INDENT)])
                edit.movePosition(
                    QTextCursor.MoveOperation.Right, QTextCursor.MoveMode.KeepAnchor, width
                )
                edit.removeSelectedText()
            block = block.next()
        edit.endEditBlock()

    def _match_brackets(self) -> None:
        """Mark the bracket at the cursor and its partner, or the lone bracket in red."""
        self._bracket_selections = [self._bracket_mark(p, ok) for p, ok in self.bracket_pair()]
        super().setExtraSelections(self._marker_selections + self._bracket_selections)

    def bracket_pair(self) -> list[tuple[int, bool]]:
        """Document positions of the bracket beside the cursor and its match, each with
        whether it is matched; [] when no bracket is beside the cursor."""
        cursor = self.textCursor()
        block, column = cursor.block(), cursor.positionInBlock()
        text = block.text()
        at = {c: b for c, b in json_editing.brackets(text)}
        # The bracket just before the cursor first (after typing it), then the one after.
        for col in (column - 1, column):
            if col in at:
                char = at[col]
                forward = char in json_editing.OPENERS
                match = json_editing.find_match(
                    self._lines_from(block, forward), col, char, forward
                )
                here = block.position() + col
                if match is None:
                    return [(here, False)]
                number, match_col = match
                there = self.document().findBlockByNumber(number).position() + match_col
                return [(here, True), (there, True)]
        return []

    def _lines_from(self, block: QTextBlock, forward: bool) -> Iterator[tuple[int, str]]:
        while block.isValid():
            yield block.blockNumber(), block.text()
            block = block.next() if forward else block.previous()

    def _bracket_mark(self, position: int, matched: bool) -> QTextEdit.ExtraSelection:
        mark = QTextEdit.ExtraSelection()
        colors = chart_colors()
        background = QColor(colors.ok if matched else colors.bad)
        background.setAlpha(70)
        mark.format.setBackground(background)
        if not matched:
            mark.format.setForeground(colors.bad)
        cursor = QTextCursor(self.document())
        cursor.setPosition(position)
        cursor.movePosition(QTextCursor.MoveOperation.Right, QTextCursor.MoveMode.KeepAnchor)
        mark.cursor = cursor
        return mark

    def setExtraSelections(self, selections: list[QTextEdit.ExtraSelection]) -> None:
        """The checks' markers; the bracket marks are kept beside them."""
        self._marker_selections = list(selections)
        super().setExtraSelections(self._marker_selections + self._bracket_selections)

    def extraSelections(self) -> list[QTextEdit.ExtraSelection]:
        """The checks' markers only, as set: the bracket marks are the editor's own."""
        return list(self._marker_selections)

    def bracket_selections(self) -> list[QTextEdit.ExtraSelection]:
        return list(self._bracket_selections)

    def canInsertFromMimeData(self, source: QMimeData) -> bool:
        # A dropped file is opened by the window, not pasted in as its path.
        if source.hasUrls() and any(url.isLocalFile() for url in source.urls()):
            return False
        return super().canInsertFromMimeData(source)

    def open_find(self, replace: bool = False) -> None:
        self.find_bar.open_bar(replace)
        self._place_find_bar()

    def _place_find_bar(self) -> None:
        bar, view = self.find_bar, self.viewport().geometry()
        width = min(bar.sizeHint().width(), view.width())
        bar.setGeometry(view.right() - width - 2, view.top() + 2, width, bar.sizeHint().height())

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
        self._place_find_bar()

    def _update_gutter_width(self) -> None:
        self.setViewportMargins(self.line_number_width(), 0, 0, 0)

    def _update_gutter(self, rect: QRect, dy: int) -> None:
        if dy:
            self._gutter.scroll(0, dy)
        else:
            self._gutter.update(0, rect.y(), self._gutter.width(), rect.height())
