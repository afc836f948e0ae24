"""The output text as a timeline: one token per step, shaded and marked, clickable.

The shades and the forced underline are char formats, written once as each token is
appended (app/decoding/token_spans.py); the overruled corner marks and the selected step's
outline are painted over the text, only for what is on screen, so a repaint costs the same
for a 20-step run as for a 2,000-step one.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence

from PySide6.QtCore import QEvent, QPoint, QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QPainter, QPen, QPolygonF, QTextCursor, QTextLine
from PySide6.QtWidgets import QPlainTextEdit, QToolTip, QWidget

from app.decoding.token_spans import TokenFormats, qt_length, step_tooltip, token_spans
from app.theme import chart_colors, is_dark
from engine.explain.marks import Mark, mark
from engine.records import StepRecord

CLICK_SLOP_PX = 4  # a press and release this close together is a click, not a drag
CORNER_PX = 6  # the overruled mark's size


class TimelineText(QPlainTextEdit):
    """Emits sig_step_clicked(index) when a token is clicked (index into the records)."""

    sig_step_clicked = Signal(int)

    def __init__(
        self, parent: QWidget | None = None, records: list[StepRecord] | None = None
    ) -> None:
        """`records`: the run's list, owned by its session (app/session.py), of which the
        text shows the first len(ends); without one the timeline keeps its own."""
        super().__init__(parent)
        self.setReadOnly(True)
        self.document().setUndoRedoEnabled(False)  # nothing to undo, and no history to keep
        self._source = records
        self._own: list[StepRecord] = []
        self.ends: list[int] = []  # each record's end, in document positions
        self._overruled: list[int] = []  # indices of overruled records, ascending
        self._selected: int | None = None
        self._press: QPoint | None = None
        self._formats = TokenFormats(is_dark())
        # More to say about a document position on hover (the output's violations there).
        self.notes: Callable[[int], str] | None = None

    @property
    def records(self) -> list[StepRecord]:
        """The steps whose tokens the text shows."""
        if self._source is None:
            return self._own
        return self._source[: len(self.ends)]

    # --- feeding ---------------------------------------------------------------------------
    def clear_tokens(self) -> None:
        self._own.clear()
        self.ends.clear()
        self._overruled.clear()
        self._selected = None
        self.clear()

    def append_records(self, records: Sequence[StepRecord], pieces: Sequence[str]) -> None:
        """Append each record's token with its marks; `pieces` are their texts."""
        cursor = QTextCursor(self.document())
        cursor.movePosition(QTextCursor.MoveOperation.End)
        end = self.ends[-1] if self.ends else 0
        for record, piece in zip(records, pieces, strict=True):
            cursor.insertText(piece, self._formats.of(record))
            self._add(record, end := end + qt_length(piece))

    def append_plain(self, text: str) -> None:
        """Text that belongs to no record (a caller that streams pieces only)."""
        cursor = QTextCursor(self.document())
        cursor.movePosition(QTextCursor.MoveOperation.End)
        cursor.insertText(text, self._formats.plain())

    def set_records(self, text: str, records: Sequence[StepRecord]) -> None:
        """Show `text` (the run's final output) with every record's token marked."""
        selected = self._selected
        self.clear_tokens()
        spans = token_spans(records, text)
        cursor = QTextCursor(self.document())
        cursor.beginEditBlock()
        end = 0
        for record, (start, stop) in zip(records, spans, strict=True):
            cursor.insertText(text[start:stop], self._formats.of(record))
            self._add(record, end := end + qt_length(text[start:stop]))
        tail = spans[-1][1] if spans else 0
        cursor.insertText(text[tail:], self._formats.plain())
        cursor.endEditBlock()
        self._selected = selected if selected is not None and selected < len(records) else None

    def restyle(self) -> None:
        """Apply the current theme's shades (the system switched light or dark)."""
        self._formats = TokenFormats(is_dark())
        cursor = QTextCursor(self.document())
        start = 0
        for record, end in zip(self.records, self.ends, strict=True):
            cursor.setPosition(start)
            cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
            cursor.setCharFormat(self._formats.of(record))
            start = end
        self.viewport().update()

    def _add(self, record: StepRecord, end: int) -> None:
        if mark(record) is Mark.OVERRULED:
            self._overruled.append(len(self.ends))
        if self._source is None:
            self._own.append(record)
        self.ends.append(end)

    # --- the selected step -----------------------------------------------------------------
    @property
    def selected(self) -> int | None:
        return self._selected

    def select_step(self, index: int | None) -> None:
        """Outline the token of step `index` and scroll it into view."""
        self._selected = index
        if index is not None and index < len(self.ends):
            self._scroll_to(self.span(index)[0])
        self.viewport().update()

    def _scroll_to(self, position: int) -> None:
        cursor = QTextCursor(self.document())
        cursor.setPosition(position)
        if self.viewport().rect().contains(self.cursorRect(cursor)):
            return  # in view already: moving the caret would cost a relayout
        if not self.textCursor().hasSelection():  # never drop the user's selection
            self.setTextCursor(cursor)
            self.ensureCursorVisible()

    def span(self, index: int) -> tuple[int, int]:
        """Record `index`'s [start, end) in document positions."""
        return (self.ends[index - 1] if index else 0), self.ends[index]

    def index_at(self, point: QPoint) -> int | None:
        """The record whose token is under `point` (viewport coordinates)."""
        position = self._char_at(point)
        if position is None:
            return None
        i = bisect_right(self.ends, position)
        return i if i < len(self.ends) else None

    def tooltip_at(self, point: QPoint) -> str:
        """What hovering at `point` tells: the token's step, and any note on that place."""
        position = self._char_at(point)
        if position is None:
            return ""
        i = bisect_right(self.ends, position)
        parts = [step_tooltip(self.records[i], len(self.ends))] if i < len(self.ends) else []
        note = self.notes(position) if self.notes is not None else ""
        return "<hr>".join(parts + ([note] if note else []))

    def _char_at(self, point: QPoint) -> int | None:
        block = self.cursorForPosition(point).block()
        if not block.isValid():
            return None
        top = self.blockBoundingGeometry(block).translated(self.contentOffset())
        layout = block.layout()
        y = point.y() - top.top()
        for n in range(layout.lineCount()):
            line = layout.lineAt(n)
            if not line.y() <= y < line.y() + line.height():
                continue
            x = point.x() - top.left()
            if x >= line.x() + line.naturalTextWidth():
                # Past the line's end: the newline that ends it, when there is one.
                last = n == layout.lineCount() - 1
                return block.position() + block.length() - 1 if last else None
            on = QTextLine.CursorPosition.CursorOnCharacter
            return block.position() + line.xToCursor(x, on)
        return None

    # --- painting --------------------------------------------------------------------------
    def paintEvent(self, event: object) -> None:
        super().paintEvent(event)  # type: ignore[arg-type]
        if not self.records:
            return
        colors = chart_colors()
        painter = QPainter(self.viewport())
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        first, last = self._visible_records()
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(colors.bad)
        lo = bisect_left(self._overruled, first)
        cursor = QTextCursor(self.document())
        for i in self._overruled[lo : bisect_right(self._overruled, last)]:
            cursor.setPosition(self.span(i)[0])
            painter.drawPolygon(_corner(QRectF(self.cursorRect(cursor))))
        if self._selected is not None and first <= self._selected <= last:
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.setPen(QPen(colors.current_step, 2))
            for rect in self.span_rects(*self.span(self._selected)):
                painter.drawRoundedRect(rect.adjusted(-1, 0, 1, 0), 3, 3)

    def _visible_records(self) -> tuple[int, int]:
        """The records on screen, from one before the first to the last, which is always a
        record this text holds."""
        viewport = self.viewport().rect()
        first = self.cursorForPosition(viewport.topLeft()).position()
        last = self.cursorForPosition(viewport.bottomRight()).position()
        # At the text's end, bisect_right answers len(records): the step whose token has not
        # arrived yet. The chart shows the newest step before the output's next flush
        # (FLUSH_MS) appends its token, so that step may be selected here already, and
        # outlining it raised IndexError in paintEvent, which killed the window (SIGSEGV in
        # PySide's handling of an exception from a paint override, issue 22 §3).
        last_record = min(bisect_right(self.ends, last), len(self.ends) - 1)
        return bisect_right(self.ends, first) - 1, last_record

    def span_rects(self, start: int, end: int) -> list[QRectF]:
        """The boxes, one per line, that the positions [start, end) cover on screen; a
        newline is drawn as a box one space wide at the end of its line."""
        rects: list[QRectF] = []
        space = self.fontMetrics().horizontalAdvance(" ")
        block = self.document().findBlock(start)
        while block.isValid() and block.position() < end:
            text_end = block.length() - 1  # the block's text; its newline comes after
            a = max(start, block.position()) - block.position()
            b = min(end, block.position() + block.length()) - block.position()
            top = self.blockBoundingGeometry(block).translated(self.contentOffset())
            layout = block.layout()
            for n in range(layout.lineCount()):
                line = layout.lineAt(n)
                lo, hi = max(a, line.textStart()), min(b, line.textStart() + line.textLength())
                newline = b > text_end and n == layout.lineCount() - 1
                if lo > hi or (lo == hi and not newline):
                    continue
                x0 = _x(line, lo)
                x1 = _x(line, min(hi, text_end)) + (space if newline else 0)
                rects.append(QRectF(top.left() + x0, top.top() + line.y(), x1 - x0, line.height()))
            block = block.next()
        return rects

    # --- interaction -----------------------------------------------------------------------
    def viewportEvent(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTip:
            tip = self.tooltip_at(event.pos())  # type: ignore[attr-defined]
            if tip:
                QToolTip.showText(event.globalPos(), tip, self.viewport())  # type: ignore[attr-defined]
            else:
                QToolTip.hideText()
            return True
        return super().viewportEvent(event)

    def mousePressEvent(self, event: object) -> None:
        self._press = event.position().toPoint()  # type: ignore[attr-defined]
        super().mousePressEvent(event)  # type: ignore[arg-type]

    def mouseReleaseEvent(self, event: object) -> None:
        super().mouseReleaseEvent(event)  # type: ignore[arg-type]
        point = event.position().toPoint()  # type: ignore[attr-defined]
        press, self._press = self._press, None
        if (
            event.button() == Qt.MouseButton.LeftButton  # type: ignore[attr-defined]
            and press is not None
            and (point - press).manhattanLength() <= CLICK_SLOP_PX
        ):
            i = self.index_at(point)
            if i is not None:
                self.sig_step_clicked.emit(i)


def _x(line: QTextLine, position: int) -> float:
    x = line.cursorToX(position)
    return float(x[0] if isinstance(x, tuple) else x)


def _corner(rect: QRectF) -> QPolygonF:
    """A small triangle in the box's top-left corner."""
    corner = rect.topLeft()
    return QPolygonF([corner, corner + QPointF(CORNER_PX, 0), corner + QPointF(0, CORNER_PX)])
