"""JSON-Schema editor: monospace text, line numbers, JSON colours and a live error marker.

The schema is re-checked with ``engine.schema.parse.parse_schema`` 300 ms after the last
keystroke. An error only decorates the text (ExtraSelections) and fills the label under
it; editing is never blocked. A valid schema is then compiled with the chosen compiler on a
helper thread (llama.cpp's check of a new grammar runs in a child process and can take
seconds), and the label says what that compiler's grammar does not enforce.
"""

from __future__ import annotations

import contextlib
import html
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import (
    QColor,
    QTextCharFormat,
    QTextCursor,
    QTextFormat,
)
from PySide6.QtWidgets import QLabel, QTextEdit, QVBoxLayout, QWidget

from app.text_edit import replace_all_undoable
from app.theme import chart_colors
from app.workbench.code_editor import CodeEditor, JsonHighlighter
from engine.errors import GrammarError, MaskscopeError, SchemaInvalidError, SchemaSyntaxError
from engine.grammar.compile import compile_schema
from engine.grammar.report import Unenforced
from engine.schema.parse import parse_schema
from engine.settings import DEFAULT_COMPILER

log = logging.getLogger(__name__)

CHECK_DELAY_MS = 300
_KEPT_RESULTS = 16  # compiles remembered, so switching compilers back answers at once


@dataclass(frozen=True, slots=True)
class GrammarNote:
    """What one compiler made of a valid schema: its gaps, or why it failed."""

    unenforced: tuple[Unenforced, ...] = ()
    error: str | None = None  # one line
    detail: str = ""  # the library's own words, for the tooltip


def _grammar_note(text: str, compiler: str) -> GrammarNote:
    try:
        return GrammarNote(compile_schema(text, compiler).unenforced)
    except GrammarError as e:
        return GrammarNote(error=e.message, detail=e.detail)
    except MaskscopeError as e:
        return GrammarNote(error=e.message)
    except Exception as e:  # a bug must not leave the label saying "compiling…" for good
        log.exception("live compile failed")
        return GrammarNote(error=f"internal error: {type(e).__name__}: {e}")


class _NewestOnly:
    """Runs `work` on one daemon thread (quitting never waits on llama.cpp's check), newest
    request first: one asked for while another runs replaces any still waiting."""

    def __init__(self, work: Callable[..., None]) -> None:
        self._work = work
        self._lock = threading.Lock()
        self._waiting: tuple | None = None
        self._running = False

    def submit(self, *args: object) -> None:
        with self._lock:
            self._waiting = args
            if self._running:
                return
            self._running = True
        threading.Thread(target=self._drain, name="live-compile", daemon=True).start()

    def _drain(self) -> None:
        while True:
            with self._lock:
                args, self._waiting = self._waiting, None
                if args is None:
                    self._running = False
                    return
            self._work(*args)


class SchemaEditor(QWidget):
    """Editor plus the status line under it. Emits sig_checked(ok) after each check, and
    sig_grammar_checked(ok) once the chosen compiler's verdict on a valid schema is shown."""

    sig_checked = Signal(bool)
    sig_grammar_checked = Signal(bool)
    _sig_compiled = Signal(int, str, str, object)  # check number, text, compiler, GrammarNote

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.editor = CodeEditor(self)
        self.editor.setObjectName("schemaEditor")
        self.editor.setPlaceholderText('{"type": "object", "properties": {…}}')
        self._highlighter = JsonHighlighter(self.editor.document())
        self.message = QLabel(self)
        self.message.setObjectName("schemaMessage")
        self.message.setWordWrap(True)
        # Always rich text: messages are HTML-escaped, and a message without a tag would
        # otherwise be shown as plain text, entities and all (llama.cpp&#x27;s).
        self.message.setTextFormat(Qt.TextFormat.RichText)
        self.message.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse
            | Qt.TextInteractionFlag.LinksAccessibleByMouse
        )
        self.message.linkActivated.connect(self._jump_to)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        title = QLabel("<b>JSON Schema</b>", self)
        layout.addWidget(title)
        layout.addWidget(self.editor, 1)
        layout.addWidget(self.message)

        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(CHECK_DELAY_MS)
        self._timer.timeout.connect(self.check_now)
        self.editor.textChanged.connect(self._timer.start)
        self.error_position: tuple[int, int] | None = None  # (line, column) of the marker
        self.compiler = DEFAULT_COMPILER
        self._check_number = 0  # a compile that finishes after a newer check is not shown
        self._notes: dict[tuple[str, str], GrammarNote] = {}
        # Queued: the compile finishes on its helper thread, the label changes on this one.
        self._sig_compiled.connect(self._on_compiled, Qt.ConnectionType.QueuedConnection)
        self._compiles = _NewestOnly(self._compile)

    def text(self) -> str:
        return self.editor.toPlainText()

    def set_text(self, text: str) -> None:
        """Replace the text as one undoable step and check it straight away."""
        replace_all_undoable(self.editor, text)
        self.check_now()

    def set_compiler(self, compiler: str) -> None:
        """Judge the schema with this compiler from now on, starting with the current text."""
        if compiler != self.compiler:
            self.compiler = compiler
            self.check_now()

    def check_now(self) -> bool:
        self._timer.stop()
        self._check_number += 1
        text = self.text()
        try:
            parse_schema(text)
        except SchemaSyntaxError as e:
            self.show_error(f"JSON syntax error: {e.message}", e.line, e.column)
            return False
        except SchemaInvalidError as e:
            self.show_error(f"Invalid schema: {e.message}", e.line)
            return False
        self._set_marker(None, None)
        self.sig_checked.emit(True)
        known = self._notes.get((text, self.compiler))
        if known is not None:
            self._show_note(known)
        else:
            self._set_message(f"✓ valid JSON Schema · compiling ({self.compiler} compiler)…", True)
            self.message.setToolTip("")
            self._compiles.submit(self._check_number, text, self.compiler)
        return True

    def _compile(self, number: int, text: str, compiler: str) -> None:
        note = _grammar_note(text, compiler)
        with contextlib.suppress(RuntimeError):  # the window closed meanwhile: nobody to tell
            self._sig_compiled.emit(number, text, compiler, note)

    def _on_compiled(self, number: int, text: str, compiler: str, note: GrammarNote) -> None:
        if len(self._notes) >= _KEPT_RESULTS:
            self._notes.pop(next(iter(self._notes)))
        self._notes[(text, compiler)] = note
        if number == self._check_number:
            self._show_note(note)

    def _show_note(self, note: GrammarNote) -> None:
        """The compiler's verdict on a valid schema, under it, before any run."""
        where = f"{self.compiler} compiler"
        if note.error is not None:
            reason = html.escape(note.error)
            self._set_message(f"✗ Grammar error ({where}): {reason}", ok=False)
            self.message.setToolTip(note.detail)
        elif note.unenforced:
            # Valid, but the grammar will not hold the model to these keywords: say so now,
            # not after a run produces a value that breaks them.
            names = ", ".join(sorted({g.keyword for g in note.unenforced}))
            self._set_message(
                f"✓ valid JSON Schema · ⚠ not enforced by the grammar: {html.escape(names)} "
                f"({where})",
                ok=True,
                warn=True,
            )
            self.message.setToolTip("\n".join(str(g) for g in note.unenforced))
        else:
            self._set_message("✓ valid JSON Schema", ok=True)
            self.message.setToolTip(f"The {where} reports no keyword it leaves unenforced.")
        self.sig_grammar_checked.emit(note.error is None)

    def show_error(self, message: str, line: int | None = None, column: int | None = None) -> None:
        """Mark an error (also used for grammar errors reported by a run)."""
        self._check_number += 1  # a compile still under way must not cover this
        self._set_marker(line, column)
        where = ""
        if line is not None:
            where = f' <a href="{line}:{column or 1}">go to line {line}</a>'
        self.message.setToolTip("")
        self._set_message(f"✗ {html.escape(message)}{where}", ok=False)
        self.sig_checked.emit(False)

    def _set_message(self, html: str, ok: bool, warn: bool = False) -> None:
        colors = chart_colors()
        color = colors.warn if warn else colors.ok if ok else colors.bad
        self.message.setStyleSheet(f"color: {color.name()};")
        self.message.setText(html)

    def _set_marker(self, line: int | None, column: int | None) -> None:
        self.error_position = (line, column or 1) if line is not None else None
        self.editor.set_error_line(line)
        if line is None:
            self.editor.setExtraSelections([])
            return
        doc = self.editor.document()
        block = doc.findBlockByNumber(max(0, min(line - 1, doc.blockCount() - 1)))
        colors = chart_colors()

        whole_line = QTextEdit.ExtraSelection()
        background = QColor(colors.bad)
        background.setAlpha(40)
        whole_line.format.setBackground(background)
        whole_line.format.setProperty(QTextFormat.Property.FullWidthSelection, True)
        whole_line.cursor = QTextCursor(block)

        # Underline from the error column to the end of the line (at least one character,
        # so an error at the very end of the text is still visible).
        spot = QTextEdit.ExtraSelection()
        spot.format.setUnderlineStyle(QTextCharFormat.UnderlineStyle.WaveUnderline)
        spot.format.setUnderlineColor(colors.bad)
        spot.format.setBackground(background)
        cursor = QTextCursor(block)
        col = max(0, min((column or 1) - 1, block.length() - 1))
        cursor.setPosition(block.position() + col)
        end = block.position() + max(col + 1, block.length() - 1)
        cursor.setPosition(min(end, doc.characterCount() - 1), QTextCursor.MoveMode.KeepAnchor)
        spot.cursor = cursor
        self.editor.setExtraSelections([whole_line, spot])

    def _jump_to(self, link: str) -> None:
        line, column = (int(v) for v in link.split(":"))
        block = self.editor.document().findBlockByNumber(line - 1)
        cursor = QTextCursor(block)
        cursor.setPosition(block.position() + max(0, min(column - 1, block.length() - 1)))
        self.editor.setTextCursor(cursor)
        self.editor.setFocus()
