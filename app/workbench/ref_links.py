"""Ctrl+click on a `$ref` value in the schema editor follows the reference.

A pointer into the same text moves the cursor there. A reference to another file asks the
window to open it (sig_follow_file: its path and the pointer's tokens); the window keeps
the folder first opened as the one files may be read from. Over a `$ref` with Ctrl held the
mouse pointer is a hand, as over a link. What cannot be followed (a remote URL, a file
outside the folder, an anchor) is one line on sig_note.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QMouseEvent, QTextCursor
from PySide6.QtWidgets import QPlainTextEdit

from app.workbench.problems_list import qt_length
from engine.workbench.locate import Spans, locate
from engine.workbench.siblings import RefLink, pointer_span, ref_at, ref_link


class RefLinks(QObject):
    """Follows `$ref`s in `edit`; `where()` gives the schema's file and root folder."""

    sig_follow_file = Signal(str, object)  # the file's path, the pointer's tokens (or None)
    sig_note = Signal(str)

    def __init__(
        self, edit: QPlainTextEdit, where: Callable[[], tuple[str | None, str | None]]
    ) -> None:
        super().__init__(edit)
        self.edit, self.where = edit, where
        self._spans: tuple[int, Spans | None] | None = None  # (document revision, spans)
        edit.viewport().installEventFilter(self)
        edit.viewport().setMouseTracking(True)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        kind = event.type()
        if kind == QEvent.Type.MouseMove and isinstance(event, QMouseEvent):
            over = _ctrl(event) and self.ref_under(event) is not None
            shape = Qt.CursorShape.PointingHandCursor if over else Qt.CursorShape.IBeamCursor
            self.edit.viewport().setCursor(shape)
        elif (
            kind == QEvent.Type.MouseButtonPress
            and isinstance(event, QMouseEvent)
            and event.button() == Qt.MouseButton.LeftButton
            and _ctrl(event)
        ):
            ref = self.ref_under(event)
            if ref is not None:
                self.follow(ref)
                return True  # no cursor move or selection under the click
        return super().eventFilter(watched, event)

    def ref_under(self, event: QMouseEvent) -> str | None:
        spans = self.spans()
        if spans is None:
            return None
        cursor = self.edit.cursorForPosition(event.position().toPoint())
        return ref_at(spans, _python_offset(spans.text, cursor))

    def follow(self, ref: str) -> None:
        """Go where `ref` leads, or say why not."""
        file, root = self.where()
        link = ref_link(ref, file, root)
        if isinstance(link, str):
            self.sig_note.emit(link)
        elif link.file is not None and str(link.file) != file:
            self.sig_follow_file.emit(str(link.file), link.tokens)
        else:
            self.go_to(link)

    def go_to(self, link: RefLink | list[str] | None) -> bool:
        """Put the cursor where a pointer (a link's, or tokens) leads in this text."""
        tokens = link.tokens if isinstance(link, RefLink) else link
        spans = self.spans()
        span = pointer_span(spans, tokens) if spans is not None else None
        if span is None:
            ref = link.ref if isinstance(link, RefLink) else "#/" + "/".join(tokens or [])
            self.sig_note.emit(f"{ref}: nothing in the schema is there")
            return False
        assert spans is not None
        # The target's key selected, so that the eye finds where the click led.
        cursor = self.edit.textCursor()
        cursor.setPosition(qt_length(spans.text[: span[0]]))
        end = span[1] if span[1] - span[0] < 200 else span[0]  # a whole object: its start
        cursor.setPosition(qt_length(spans.text[:end]), QTextCursor.MoveMode.KeepAnchor)
        self.edit.setTextCursor(cursor)
        self.edit.centerCursor()
        self.edit.setFocus()
        return True

    def spans(self) -> Spans | None:
        """The text's spans, located once per edit; None while it is not JSON."""
        revision = self.edit.document().revision()
        if self._spans is None or self._spans[0] != revision:
            text = self.edit.toPlainText()
            try:
                json.loads(text)  # the scanner wants JSON: mid-edit it may not be
                spans: Spans | None = locate(text)
            except ValueError:
                spans = None
            self._spans = (revision, spans)
        return self._spans[1]


def _ctrl(event: QMouseEvent) -> bool:
    return bool(event.modifiers() & Qt.KeyboardModifier.ControlModifier)


def _python_offset(text: str, cursor: QTextCursor) -> int:
    """The cursor's place as a Python index into `text` (Qt counts UTF-16 units)."""
    block = cursor.block()
    line_start = sum(len(line) + 1 for line in text.split("\n")[: block.blockNumber()])
    in_block = block.text().encode("utf-16-le")[: 2 * cursor.positionInBlock()]
    return line_start + len(in_block.decode("utf-16-le", errors="ignore"))
