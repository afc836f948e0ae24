"""The grammar beside the schema: read-only, coloured, the exact text the backend runs.

GBNF for the llamacpp backend; for the llguidance backend, llguidance's Lark translation of
that GBNF (what engine/masking/llguidance.py feeds it), or, for llguidance's own compiler,
the grammar it compiled. Turning the text into what a backend runs and mapping its rules to
schema paths (engine/grammar/rule_map.py) can take a second on a large schema, so it runs on
a helper thread; the text shown changes only when the new one is ready.

Moving the cursor in the schema selects the rule of the subschema there, and moving it in
the grammar (a click, the arrow keys) selects the subschema of the rule there:
`follow_editor` wires both ways.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import re
import threading
from bisect import bisect_left
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import (
    QColor,
    QGuiApplication,
    QHelpEvent,
    QShowEvent,
    QSyntaxHighlighter,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
)
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QTextEdit,
    QToolButton,
    QToolTip,
    QVBoxLayout,
    QWidget,
)

from app.background import start_daemon
from app.plain_text import literal_html, plain_label
from app.theme import chart_colors, is_dark
from app.workbench.code_editor import CodeEditor, JsonHighlighter
from engine.errors import MaskscopeError
from engine.grammar.compile import CompiledSchema
from engine.grammar.rule_map import RuleMap, rule_map
from engine.masking.grammar_text import Grammar, backend_grammar
from engine.schema.pointer import path_text
from engine.workbench.locate import Path, Spans, locate, path_parts

if TYPE_CHECKING:
    from app.workbench.schema_editor import SchemaEditor

log = logging.getLogger(__name__)

# Past this many lines the grammar is shown uncoloured: colouring 7,000 lines (a 1 MB
# schema's grammar) holds the GUI thread for about half a second on each edit.
MAX_COLOURED_LINES = 3000
_UNCOLOURED = f"\nOver {MAX_COLOURED_LINES:,} lines: shown without colours, to keep typing smooth."
LANGUAGE_NAMES = {
    "gbnf": "GBNF",
    "lark": "Lark",
    "json": "llguidance JSON Schema grammar",
    "regex": "outlines-core regex",
}
WHAT_RUNS = {
    "gbnf": "The GBNF that llama.cpp's grammar sampler runs.",
    "lark": "The Lark grammar llguidance runs: its own translation of the compiler's GBNF.",
    "json": "llguidance's compiler hands llguidance the schema itself and builds the rules "
    "inside, so there are no rules to show or to map to the schema.",
    "regex": "The one regex outlines-core builds its index from: no rules to show or to map "
    "to the schema.",
}


_ASTRAL = re.compile("[\U00010000-\U0010ffff]")


class Utf16:
    """Qt counts text positions in UTF-16 units, Python in code points: they part after
    each character past U+FFFF (the grammar's `json-char` class holds U+10FFFF)."""

    def __init__(self, text: str) -> None:
        self._astral = [m.start() for m in _ASTRAL.finditer(text)]
        self._astral_qt = [i + k for k, i in enumerate(self._astral)]

    def to_qt(self, offset: int) -> int:
        return offset + bisect_left(self._astral, offset)

    def to_py(self, position: int) -> int:
        return position - bisect_left(self._astral_qt, position)


@dataclass(frozen=True, slots=True)
class Shown:
    """One grammar ready to show: its text, its rules, and the schema text it came from."""

    grammar: Grammar
    rules: RuleMap
    spans: Spans  # where each JSON path is in the schema text
    schema_text: str
    compile_ms: float | None
    grammar_units: Utf16 = field(init=False)
    schema_units: Utf16 = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "grammar_units", Utf16(self.grammar.text))
        object.__setattr__(self, "schema_units", Utf16(self.schema_text))


def prepare(compiled: CompiledSchema, backend: str, compile_ms: float | None) -> Shown:
    """Everything the view needs, off the GUI thread."""
    grammar = backend_grammar(compiled, backend)
    rules = rule_map(compiled, grammar.text, grammar.language)
    return Shown(grammar, rules, locate(compiled.text), compiled.text, compile_ms)


def path_at(spans: Spans, offset: int) -> Path | None:
    """The innermost JSON path whose member (key through value) holds `offset`; its end
    counts, so a cursor just after a value still names it."""
    best: tuple[int, Path] | None = None
    for path, (value_start, end) in spans.values.items():
        start = spans.keys[path][0] if path in spans.keys else value_start
        if start <= offset <= end and (best is None or start > best[0]):
            best = (start, path)
    return best[1] if best else None


def rule_near(rules: RuleMap, path: Path | None) -> str | None:
    """The rule of the subschema at `path`, or of the nearest one around it that has a rule
    (a cursor on `enum` selects its property's rule)."""
    for end in range(len(path), -1, -1) if path is not None else ():
        rule = rules.rule_of_path.get(path_text(path[:end]))
        if rule is not None:
            return rule
    return None


# One pass per line, left to right: a literal, class or regex is taken whole, so a `|` or
# `*` inside one is not coloured as an operator.
_TOKENS = {
    "gbnf": re.compile(
        r'(?P<string>"(?:[^"\\]|\\.)*")|(?P<class>\[(?:[^\]\\]|\\.)*\])'
        r"|(?P<name>^[A-Za-z0-9_-]+(?= ::= ))|(?P<repeat>[*+?]|\{\d*(?:,\d*)?\})"
        r"|(?P<punct>::=|\||[()])"
    ),
    "lark": re.compile(
        r'(?P<string>"(?:[^"\\]|\\.)*")|(?P<class>/(?:[^/\\]|\\.)*/)'
        r"|(?P<name>^[A-Za-z_][A-Za-z0-9_]*(?=:))|(?P<repeat>[*+?]|\{\d*(?:,\d*)?\})"
        r"|(?P<punct>^%.*|:|\||[()])"
    ),
}


class GrammarHighlighter(QSyntaxHighlighter):
    """GBNF and Lark, line by line: defined names, literals, classes and regexes, repeats.

    Python's `re`, one pattern per line: a grammar of thousands of lines is coloured in a
    fraction of the time that one QRegularExpression per token kind takes.
    """

    def __init__(self, document: QTextDocument, language: str) -> None:
        super().__init__(document)
        dark = is_dark()
        colors = {
            "name": "#9cdcfe" if dark else "#0451a5",
            "string": "#ce9178" if dark else "#a31515",
            "class": "#d7ba7d" if dark else "#795e26",
            "repeat": "#c586c0" if dark else "#af00db",
            "punct": "#a0a0a0" if dark else "#707070",
        }
        self._tokens = _TOKENS[language]
        self._formats: dict[str, QTextCharFormat] = {}
        for kind, color in colors.items():
            fmt = QTextCharFormat()
            fmt.setForeground(QColor(color))
            if kind == "name":
                fmt.setFontWeight(600)
            self._formats[kind] = fmt

    def highlightBlock(self, text: str) -> None:
        units = Utf16(text) if _ASTRAL.search(text) else None
        for m in self._tokens.finditer(text):
            start, end = m.span()
            if units is not None:
                start, end = units.to_qt(start), units.to_qt(end)
            self.setFormat(start, end - start, self._formats[m.lastgroup or "punct"])


class GrammarView(QWidget):
    """The grammar, its one-line summary and a copy button.

    Emits sig_path_chosen(path) when the user moves onto a rule that holds a subschema, and
    sig_shown() each time a new grammar is on screen.
    """

    sig_path_chosen = Signal(str)
    sig_shown = Signal()
    _sig_prepared = Signal(int, object, object)  # request number, key, Shown or a message

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.info = plain_label(QLabel("No grammar yet.", self))  # errors quote the schema
        self.info.setObjectName("grammarInfo")
        self.info.setWordWrap(True)
        self.info.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.copy_button = QToolButton(self)
        self.copy_button.setObjectName("copyGrammar")
        self.copy_button.setText("Copy")
        self.copy_button.setToolTip(
            "Copy the whole grammar to the clipboard (Ctrl+C in it copies the selected rule)"
        )
        self.copy_button.setEnabled(False)
        self.copy_button.clicked.connect(self.copy)
        self.text = CodeEditor(self)
        self.text.setObjectName("grammarText")
        self.text.setReadOnly(True)
        self.text.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse
            | Qt.TextInteractionFlag.TextSelectableByKeyboard
        )
        self.text.setPlaceholderText("The grammar appears here once the schema compiles.")
        self.text.cursorPositionChanged.connect(self._on_cursor)
        self.text.viewport().installEventFilter(self)  # a rule's tooltip names its subschema
        header = QHBoxLayout()
        header.setContentsMargins(0, 0, 0, 0)
        header.addWidget(self.info, 1)
        header.addWidget(self.copy_button, 0, Qt.AlignmentFlag.AlignTop)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        layout.addLayout(header)
        layout.addWidget(self.text, 1)

        self.shown: Shown | None = None
        self.selected_rule: str | None = None
        self._highlighter: QSyntaxHighlighter | None = None
        self._request = 0  # a preparation that finishes after a newer request is dropped
        self._one_at_a_time = threading.Lock()
        self._shown_key: tuple | None = None  # what the grammar shown was made from
        self._pending: tuple[tuple, Shown] | None = None  # ready, for when the pane shows
        self._moving = False  # the view moves its own cursor: not a user's choice
        self._sig_prepared.connect(self._on_prepared, Qt.ConnectionType.QueuedConnection)
        self._copied = QTimer(self)
        self._copied.setSingleShot(True)
        self._copied.setInterval(1500)
        self._copied.timeout.connect(lambda: self.copy_button.setText("Copy"))

    # --- what to show -------------------------------------------------------------------
    def show_compiled(
        self, compiled: CompiledSchema | None, backend: str, compile_ms: float | None
    ) -> None:
        """Show the grammar `backend` runs for `compiled` (None: it did not compile)."""
        if compiled is None:
            self.show_unavailable("No grammar: the schema does not compile (see Problems).")
            return
        self._request += 1
        key = (
            compiled.text,
            compiled.compiler,
            backend,
            compiled.grammar_text,
        )
        if self._pending is not None and self._pending[0] == key:  # still waiting to be shown
            self._pending = (key, dataclasses.replace(self._pending[1], compile_ms=compile_ms))
            return
        if key == self._shown_key and self.shown is not None:
            # Rechecked for a prompt or a setting: the same grammar, timed again.
            self.shown = dataclasses.replace(self.shown, compile_ms=compile_ms)
            self._set_info(_summary(self.shown), tone=None)
            self._set_enabled(True)
            self.sig_shown.emit()
            return
        number = self._request
        start_daemon(self._prepare, "grammar-view", (number, key, compiled, compile_ms))

    def show_unavailable(self, reason: str) -> None:
        """No current grammar: the last one stays, greyed out, under the reason."""
        self._request += 1  # a preparation under way is for an older schema
        self._pending = None
        self._set_info(reason, tone="warn")
        self._set_enabled(False)

    def _set_enabled(self, enabled: bool) -> None:
        self.text.setEnabled(enabled)
        self.copy_button.setEnabled(enabled)

    def _prepare(
        self, number: int, key: tuple, compiled: CompiledSchema, compile_ms: float | None
    ) -> None:
        backend = key[2]
        with self._one_at_a_time:  # on 2 cores, a burst of edits must not prepare at once
            if number != self._request:
                return  # a newer grammar is on its way
            try:
                result: Shown | str = prepare(compiled, backend, compile_ms)
            except MaskscopeError as e:
                result = e.message
            except Exception as e:  # a bug must not leave the pane showing an old grammar
                log.exception("grammar view preparation failed")
                result = f"internal error: {type(e).__name__}: {e}"
        with contextlib.suppress(RuntimeError):  # the window closed meanwhile
            self._sig_prepared.emit(number, key, result)

    def _on_prepared(self, number: int, key: tuple, result: Shown | str) -> None:
        if number != self._request:
            return
        if isinstance(result, str):
            self.show_unavailable(f"No grammar for this backend: {result}")
            return
        self._pending = (key, result)
        if self.isVisible():  # a pane behind another tab is filled when it is shown
            self._show_pending()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self._pending is not None:
            self._show_pending()

    def _show_pending(self) -> None:
        assert self._pending is not None
        (key, result), self._pending = self._pending, None
        self._shown_key = key
        grammar = result.grammar
        # An edit the grammar does not see (a description) keeps the text, and its scroll.
        if self.shown is None or self.shown.grammar.text != grammar.text:
            scroll = self.text.verticalScrollBar().value()
            self._set_highlighter(grammar.language, grammar.text.count("\n"))
            self._moving = True
            try:
                self.text.setPlainText(grammar.text)
            finally:
                self._moving = False
            self.text.verticalScrollBar().setValue(scroll)
        self._set_enabled(True)
        self.shown = result
        self._set_info(_summary(result), tone=None)
        plain = self._highlighter is None
        self.info.setToolTip(WHAT_RUNS[grammar.language] + (_UNCOLOURED if plain else ""))
        kept = self.selected_rule
        self.selected_rule = None
        if kept is not None and kept in result.rules.definitions:
            self.select_rule(kept)
        self.sig_shown.emit()

    def _set_highlighter(self, language: str, lines: int) -> None:
        if self._highlighter is not None:
            self._highlighter.setDocument(None)
            self._highlighter = None
        if lines > MAX_COLOURED_LINES or language == "regex":  # no rules to colour
            return
        document = self.text.document()
        self._highlighter = (
            JsonHighlighter(document)
            if language == "json"
            else GrammarHighlighter(document, language)
        )

    def _set_info(self, text: str, tone: str | None) -> None:
        color = getattr(chart_colors(), tone).name() if tone else "palette(placeholder-text)"
        self.info.setStyleSheet(f"color: {color};")
        self.info.setText(text)

    # --- copying ------------------------------------------------------------------------
    def grammar_text(self) -> str:
        return self.shown.grammar.text if self.shown is not None else ""

    def copy(self) -> None:
        QGuiApplication.clipboard().setText(self.grammar_text())
        self.copy_button.setText("Copied")
        self._copied.start()

    # --- selection, both ways -----------------------------------------------------------
    def select_at_schema_position(self, position: int) -> str | None:
        """Select the rule holding the subschema at a (Qt) cursor position in the schema
        text shown; returns it (None where no rule holds it)."""
        if self.shown is None:
            return None
        offset = self.shown.schema_units.to_py(position)
        rule = rule_near(self.shown.rules, path_at(self.shown.spans, offset))
        if rule is not None:
            self.select_rule(rule)
        return rule

    def select_rule(self, rule: str) -> None:
        """Select a rule's definition, scroll to it and mark where it is named."""
        if self.shown is None or rule not in self.shown.rules.definitions:
            return
        start, end = self._qt_span(self.shown.rules.definitions[rule])
        self.selected_rule = rule
        self._moving = True
        try:
            cursor = self.text.textCursor()
            cursor.setPosition(start)
            cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
            self.text.setTextCursor(cursor)
            self.text.centerCursor()
        finally:
            self._moving = False
        self._mark(start, end)

    def _mark(self, start: int, end: int) -> None:
        # A background that shows whether or not the view has focus (a selection in an
        # unfocused view is drawn in a faint inactive colour).
        mark = QTextEdit.ExtraSelection()
        color = QColor(chart_colors().current_step)
        color.setAlpha(60)
        mark.format.setBackground(color)
        cursor = QTextCursor(self.text.document())
        cursor.setPosition(start)
        cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
        mark.cursor = cursor
        self.text.setExtraSelections([mark])

    def _on_cursor(self) -> None:
        if self._moving or self.shown is None:
            return
        position = self.shown.grammar_units.to_py(self.text.textCursor().position())
        rules = self.shown.rules
        rule = rules.rule_at(self.grammar_text(), position)
        if rule is None:
            return
        self.selected_rule = rule
        self._mark(*self._qt_span(rules.definitions[rule]))
        path = rules.path_for_rule(rule)
        if path is not None:
            self.sig_path_chosen.emit(path)

    def _qt_span(self, span: tuple[int, int]) -> tuple[int, int]:
        assert self.shown is not None
        units = self.shown.grammar_units
        return units.to_qt(span[0]), units.to_qt(span[1])

    def rule_tooltip(self, position: int) -> str:
        """What the rule at a (Qt) position in the grammar holds, for its tooltip."""
        if self.shown is None:
            return ""
        rules = self.shown.rules
        rule = rules.rule_at(self.grammar_text(), self.shown.grammar_units.to_py(position))
        if rule is None:
            return ""
        path = rules.path_for_rule(rule)
        if path is None:
            return f"{rule}: shared by several parts of the schema" if rules.rule_of_path else ""
        holds = "holds" if rule in rules.path_of_rule else "is part of"
        return f"{rule} {holds} {path} — click to select it in the schema"

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
            tip = self.rule_tooltip(self.text.cursorForPosition(event.pos()).position())
            if tip:
                # The path quotes property names: shown as written.
                QToolTip.showText(event.globalPos(), literal_html(tip), self.text)
            else:
                QToolTip.hideText()
            return True
        return super().eventFilter(watched, event)

    def schema_span(self, path: str) -> tuple[int, int] | None:
        """Where to select `path` in the schema text (Qt positions): its key, else its
        value's first character."""
        parts = path_parts(path)
        if self.shown is None or parts is None:
            return None
        key, value = self.shown.spans.key(parts), self.shown.spans.value(parts)
        if key is not None:
            start, end = key
        elif value is not None:
            start, end = value[0], value[0] + 1
        else:
            return None
        return self.shown.schema_units.to_qt(start), self.shown.schema_units.to_qt(end)


def _summary(shown: Shown) -> str:
    grammar = shown.grammar
    parts = [
        f"{grammar.compiler} compiler, {grammar.backend} backend",
        LANGUAGE_NAMES[grammar.language],
    ]
    if grammar.language not in ("json", "regex"):
        parts.append(f"{len(shown.rules.definitions):,} rules")
    parts.append(f"{len(grammar.text):,} characters")
    if shown.compile_ms is not None:
        parts.append(f"compiled in {shown.compile_ms:,.0f} ms")
    if grammar.language not in ("json", "regex") and not shown.rules.rule_of_path:
        parts.append(f"no rule ↔ schema map for the {grammar.compiler} compiler")
    return " · ".join(parts)


def follow_editor(view: GrammarView, schema_editor: SchemaEditor) -> None:
    """Wire the view to the schema editor: each report it shows, and selection both ways.

    The editor emits sig_report(Report) after each live check; Report.compiled is None when
    the schema cannot run, and report_input.backend names the backend it was checked for.
    """
    editor = schema_editor.editor
    # `fresh`: the editor holds the text the grammar was compiled from, so positions match.
    # `moving`: the view moves the editor's cursor, which is not the user's to follow back.
    state = {"fresh": False, "moving": False}

    def on_report(report: object) -> None:
        compiled = getattr(report, "compiled", None)
        if compiled is None:
            view.show_unavailable("No grammar: the schema has errors (see Problems).")
            return
        inputs = schema_editor.report_input
        backend = inputs.backend if inputs is not None else schema_editor.backend
        view.show_compiled(compiled, backend, getattr(report, "compile_ms", None))

    def on_shown() -> None:
        state["fresh"] = view.shown is not None and editor.toPlainText() == view.shown.schema_text

    def on_text_changed() -> None:
        state["fresh"] = False

    def on_editor_cursor() -> None:
        if state["fresh"] and not state["moving"]:
            view.select_at_schema_position(editor.textCursor().position())

    def on_path(path: str) -> None:
        span = view.schema_span(path)
        if span is None or not state["fresh"]:
            return
        state["moving"] = True
        try:
            cursor = editor.textCursor()
            cursor.setPosition(span[0])
            cursor.setPosition(span[1], QTextCursor.MoveMode.KeepAnchor)
            editor.setTextCursor(cursor)
            editor.centerCursor()
        finally:
            state["moving"] = False

    schema_editor.sig_report.connect(on_report)
    view.sig_shown.connect(on_shown)
    editor.textChanged.connect(on_text_changed)
    editor.cursorPositionChanged.connect(on_editor_cursor)
    view.sig_path_chosen.connect(on_path)
