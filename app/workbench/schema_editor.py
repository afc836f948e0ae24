"""JSON-Schema editor with a live check: every problem located, before any run.

300 ms after the last keystroke (or a change of compiler, backend, Max tokens or prompt) the
text goes to ``engine.workbench.problems.collect`` on a helper thread: JSON syntax, every
meta-schema error, the selected compiler's grammar on the selected backend (so that ✓ means
"this will run"), unenforced keywords and lints. The GUI thread only reads the text and shows
the report: the Problems list, gutter markers, underlines, and a one-line summary under the
editor that points at the list. Typing is never blocked.
"""

from __future__ import annotations

import contextlib
import html
import itertools
import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QColor, QTextCharFormat, QTextCursor, QTextFormat
from PySide6.QtWidgets import QLabel, QTextEdit, QVBoxLayout, QWidget

from app.background import NewestOnly
from app.text_edit import replace_all_undoable
from app.theme import chart_colors
from app.workbench.code_editor import CodeEditor
from app.workbench.problems_list import (
    SEVERITY_RANK,
    ProblemsList,
    qt_length,
    severity_color,
    summary,
)
from app.workbench.ref_links import RefLinks
from engine.errors import MaskscopeError
from engine.settings import DEFAULT_BACKEND, DEFAULT_COMPILER
from engine.workbench.problems import Problem, Report, collect
from engine.workbench.vocab import vocab_tokenizer

log = logging.getLogger(__name__)

CHECK_DELAY_MS = 300
_KEPT_RESULTS = 16  # reports remembered, so switching compilers back answers at once
_MAX_UNDERLINES = 300  # past this, only the gutter and the list mark problems (speed)

Tokenize = Callable[[str], list[int]]


@dataclass(frozen=True, slots=True)
class CheckInput:
    """Everything a report depends on: a report for other inputs is never shown as current."""

    text: str
    compiler: str
    backend: str
    max_tokens: int | None
    prompt: str
    model: str  # the GGUF whose tokenizer counts the output bound; "" before a model loads
    file: str = ""  # the schema's file: a `$ref` to another file is read from its folder
    root: str = ""  # the folder the user opened: nothing outside it is read


_tokenizers: dict[str, Tokenize | None] = {}
_tokenizers_lock = threading.Lock()


def tokenizer_for(model: str) -> Tokenize | None:
    """The model's tokenizer from a vocabulary-only load of its file, made once per file on
    the check's thread: it never shares (or outlives) the worker's model."""
    if not model:
        return None
    with _tokenizers_lock:
        if model not in _tokenizers:
            try:
                _tokenizers[model] = vocab_tokenizer(model)
            except MaskscopeError:
                log.warning("no tokenizer for %s: the output bound is not counted", model)
                _tokenizers[model] = None
        return _tokenizers[model]


def run_collect(inputs: CheckInput) -> Report:
    """collect(), but a bug becomes one problem in the list instead of a silent label."""
    try:
        return collect(
            inputs.text,
            inputs.compiler,
            inputs.backend,
            max_tokens=inputs.max_tokens,
            prompt=inputs.prompt,
            tokenize=tokenizer_for(inputs.model),
            file=inputs.file or None,
            root=inputs.root or None,
        )
    except Exception as e:
        log.exception("live check failed")
        message = f"internal error while checking: {type(e).__name__}: {e}"
        return Report((Problem("error", "grammar", message, "$", None, None),), None, None)


class SchemaEditor(QWidget):
    """Editor plus the summary line under it; `problems_list` is the pane the window places.

    Emits sig_checked(ok) and sig_grammar_checked(ok) each time a report is shown (ok: no
    errors, so the schema will run), and sig_report(Report) with it.
    """

    sig_checked = Signal(bool)
    sig_grammar_checked = Signal(bool)
    sig_report = Signal(object)
    _sig_collected = Signal(int, object, object)  # check number, CheckInput, Report

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.editor = CodeEditor(self)
        self.editor.setObjectName("schemaEditor")
        self.editor.setPlaceholderText('{"type": "object", "properties": {…}}')
        self._highlighter = self.editor.colour_as_json()
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
        self.message.linkActivated.connect(self.show_problems)
        self.problems_list = ProblemsList()  # placed by the window (a pane of its own)
        self.problems_list.set_editors(self.editor)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        layout.addWidget(self.editor, 1)
        layout.addWidget(self.message)

        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(CHECK_DELAY_MS)
        self._timer.timeout.connect(self.check_now)
        self._text: tuple[int, str] | None = None  # (document revision, its text)
        self.editor.textChanged.connect(self._timer.start)
        self.error_position: tuple[int, int] | None = None  # (line, column) of the first error
        self.compiler = DEFAULT_COMPILER
        self.backend = DEFAULT_BACKEND
        self.max_tokens: int | None = None
        self._prompt_source: Callable[[], str] = lambda: ""
        self._model = ""
        self.report: Report | None = None  # the report shown, for the text now in the editor
        self.report_input: CheckInput | None = None
        self._run_problems: tuple[Problem, ...] = ()  # errors a run found that the check did not
        self.last_check_gui_ms = 0.0  # GUI-thread time of the last check request (measured)
        self._check_number = 0  # a report that arrives after a newer check is not shown
        self._reports: dict[CheckInput, Report] = {}
        # Queued: collect runs on its helper thread, the widgets change on this one.
        self._sig_collected.connect(self._on_collected, Qt.ConnectionType.QueuedConnection)
        self._checks = NewestOnly(self._collect, "live-compile")
        self.file, self.root = "", ""
        self.ref_links = RefLinks(self.editor, lambda: (self.file or None, self.root or None))

    def text(self) -> str:
        """The editor's text, read once per edit: toPlainText of a 1 MB schema costs 10-40 ms
        of the GUI thread, and the check, the out-of-date mark and the grammar view all ask."""
        revision = self.editor.document().revision()  # goes up with every edit and undo
        if self._text is None or self._text[0] != revision:
            self._text = (revision, self.editor.toPlainText())
        return self._text[1]

    def set_text(self, text: str) -> None:
        """Replace the text as one undoable step and check it straight away."""
        replace_all_undoable(self.editor, text)
        self.check_now()

    # --- what the check depends on, besides the text ----------------------------------------
    def set_compiler(self, compiler: str) -> None:
        """Judge the schema with this compiler from now on, starting with the current text."""
        if compiler != self.compiler:
            self.compiler = compiler
            self.check_now()

    def set_backend(self, backend: str) -> None:
        if backend != self.backend:
            self.backend = backend
            self.check_now()

    def set_max_tokens(self, max_tokens: int | None) -> None:
        if max_tokens != self.max_tokens:
            self.max_tokens = max_tokens
            self._timer.start()  # spin-box clicks come in bursts

    def set_file(self, path: str | None, root: str | None) -> None:
        """The schema's file and the folder the user opened: the files its `$ref`s name are
        read from there, and checked with it as one bundle."""
        if (path or "", root or "") != (self.file, self.root):
            self.file, self.root = path or "", root or ""
            self.check_now()

    def set_prompt_source(self, source: Callable[[], str]) -> None:
        """The prompt is read at check time, so a prompt edit costs nothing but a timer."""
        self._prompt_source = source

    def prompt_changed(self) -> None:
        self._timer.start()

    def set_model(self, path: str) -> None:
        """The loaded model's file: its tokenizer counts the output bound in tokens."""
        if path != self._model:
            self._model = path
            self._timer.start()

    def current_input(self) -> CheckInput:
        return CheckInput(
            self.text(),
            self.compiler,
            self.backend,
            self.max_tokens,
            self._prompt_source(),
            self._model,
            self.file,
            self.root,
        )

    def is_current(self) -> bool:
        """The report shown is for the text and settings now in place."""
        return self.report is not None and self.report_input == self.current_input()

    # --- checking -----------------------------------------------------------------------------
    def check_now(self) -> None:
        started = time.perf_counter()
        self._timer.stop()
        self._check_number += 1
        self._run_problems = ()
        inputs = self.current_input()
        known = self._reports.get(inputs)
        if known is not None:
            self._show_report(inputs, known)
        else:
            where = f"{self.compiler} compiler, {self.backend} backend"
            self._set_message(f"checking ({html.escape(where)})…", tone=None)
            self._checks.submit(self._check_number, inputs)
        self.last_check_gui_ms = (time.perf_counter() - started) * 1000

    def _collect(self, number: int, inputs: CheckInput) -> None:
        report = run_collect(inputs)
        with contextlib.suppress(RuntimeError):  # the window closed meanwhile: nobody to tell
            self._sig_collected.emit(number, inputs, report)

    def _on_collected(self, number: int, inputs: CheckInput, report: Report) -> None:
        if len(self._reports) >= _KEPT_RESULTS:
            self._reports.pop(next(iter(self._reports)))
        self._reports[inputs] = report
        if number == self._check_number:
            started = time.perf_counter()
            self._show_report(inputs, report)
            self.last_check_gui_ms = (time.perf_counter() - started) * 1000

    def show_error(self, message: str, line: int | None = None, column: int | None = None) -> None:
        """An error a run found that the live check had not (the run started before the check
        ended): it joins the Problems list until the next check."""
        problem = Problem("error", "grammar", message, "$", line, column)
        self._run_problems = (*self._run_problems, problem)
        if self.report is not None and self.report_input is not None:
            self._show_report(self.report_input, self.report)

    def problems(self) -> list[Problem]:
        """Every problem now shown, in the list's order."""
        return self.problems_list.problems()

    def has_errors(self) -> bool:
        return any(p.severity == "error" for p in self.problems_list.problems())

    # --- showing a report -----------------------------------------------------------------
    def _show_report(self, inputs: CheckInput, report: Report) -> None:
        self.report, self.report_input = report, inputs
        # A run's own error stands only until the check has something to say.
        extra = () if report.errors() else self._run_problems
        problems = (*report.problems, *extra)
        self.problems_list.set_problems(problems)
        errors = [p for p in self.problems_list.problems() if p.severity == "error"]
        first = next((p for p in errors if p.line is not None), None)
        self.error_position = (first.line, first.column or 1) if first is not None else None
        self._mark(self.problems_list.problems())
        self._set_summary(problems, report)
        self.sig_checked.emit(not errors)
        self.sig_grammar_checked.emit(not errors)
        self.sig_report.emit(report)

    def _set_summary(self, problems: Sequence[Problem], report: Report) -> None:
        where = f"{self.compiler} compiler, {self.backend} backend"
        counts = summary(problems)
        pointer = ' — <a href="problems">see Problems</a>'
        if any(p.severity == "error" for p in problems):
            self._set_message(f"{counts}{pointer}", tone="bad")
            self.message.setToolTip(f"The schema cannot run with the {where}.")
            return
        compiled = f" in {report.compile_ms:.0f} ms" if report.compile_ms else ""
        head = f"✓ will run ({html.escape(where)}; compiled{compiled})"
        if counts:
            warn = any(p.severity == "warning" for p in problems)
            self._set_message(f"{head} · {counts}{pointer}", tone="warn" if warn else "ok")
        else:
            self._set_message(head, tone="ok")
        self.message.setToolTip(
            "The schema is valid and its grammar compiled; the Problems list names what the "
            "grammar does not enforce and the lints."
        )

    def _set_message(self, text: str, tone: str | None) -> None:
        color = getattr(chart_colors(), tone).name() if tone else "palette(placeholder-text)"
        self.message.setStyleSheet(f"color: {color};")
        self.message.setText(text)

    def show_problems(self, _link: str = "") -> None:
        listed = self.problems_list.problems()
        if listed:
            self.problems_list.select(listed[0])
        self.problems_list.view.setFocus()

    # --- markers ------------------------------------------------------------------------------
    def _mark(self, problems: Sequence[Problem]) -> None:
        """A dot in the gutter per line with problems (worst severity, every message in its
        tooltip), and an underline at each problem's column. `problems` come worst first
        (the list's order), so the first on each line names its dot's colour."""
        colors = {s: severity_color(s) for s in SEVERITY_RANK}  # once: the theme is asked
        tips: dict[int, list[str]] = {}
        worst: dict[int, QColor] = {}
        for p in problems:
            if p.line is not None:
                tips.setdefault(p.line, []).append(f"{p.severity}: {p.message}")
                worst.setdefault(p.line, colors[p.severity])
        self.editor.set_line_marks({n: (worst[n], "\n".join(t)) for n, t in tips.items()})
        first_error = self.error_position[0] if self.error_position else None
        self.editor.set_error_line(first_error)
        located = (p for p in problems if p.line is not None and p.severity != "info")
        self.editor.setExtraSelections(
            [s for p in itertools.islice(located, _MAX_UNDERLINES) for s in self._underline(p)]
        )

    def _underline(self, problem: Problem) -> list[QTextEdit.ExtraSelection]:
        doc = self.editor.document()
        assert problem.line is not None
        if problem.line > doc.blockCount():
            return []
        block = doc.findBlockByNumber(problem.line - 1)
        color = QColor(severity_color(problem.severity))
        selections = []
        if problem.severity == "error":
            whole_line = QTextEdit.ExtraSelection()
            background = QColor(color)
            background.setAlpha(40)
            whole_line.format.setBackground(background)
            whole_line.format.setProperty(QTextFormat.Property.FullWidthSelection, True)
            whole_line.cursor = QTextCursor(block)
            selections.append(whole_line)
        # From the column to the end of its token (at least one character, so an error at
        # the very end of the text is still visible).
        spot = QTextEdit.ExtraSelection()
        spot.format.setUnderlineStyle(QTextCharFormat.UnderlineStyle.WaveUnderline)
        spot.format.setUnderlineColor(color)
        text = block.text()
        start = max(0, min((problem.column or 1) - 1, len(text)))
        end = _token_end(text, start)
        cursor = QTextCursor(block)
        cursor.setPosition(block.position() + qt_length(text[:start]))
        end_pos = block.position() + max(qt_length(text[:end]), qt_length(text[:start]) + 1)
        cursor.setPosition(min(end_pos, doc.characterCount() - 1), QTextCursor.MoveMode.KeepAnchor)
        spot.cursor = cursor
        selections.append(spot)
        return selections


def _token_end(text: str, start: int) -> int:
    """Where the JSON token starting at `start` ends: a string to its closing quote, anything
    else to the end of the line."""
    if start < len(text) and text[start] == '"':
        i = start + 1
        while i < len(text):
            if text[i] == "\\":
                i += 2
                continue
            if text[i] == '"':
                return i + 1
            i += 1
    return len(text)
