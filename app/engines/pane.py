"""The Engines pane: the schema in the editor as each production engine takes it.

One row per target of ``engine.engines.report.engines_report`` (llama.cpp, vLLM/SGLang on
XGrammar or llguidance, Outlines, OpenAI's strict mode, Maskscope): whether the engine
compiles the schema (✓/✗, its own words in the tooltip and the detail line under the list),
and how many keywords it leaves unenforced. Expanding a row lists them, and OpenAI's broken
rules; a click (or Enter) selects the subschema concerned in the schema editor, and a rule
with a fix offers it (button, context menu, Ctrl+.), applied as one undoable edit.

With a suite open in the Suite pane, its known-good and known-bad instances then go through
every engine that took the schema (app/engines/state.py `feed`, check's worker processes),
and the Suite column counts those each engine gets wrong: a known-bad one it lets through, a
known-good one it refuses. Expanding a row lists them with check's words on each.

The pane is live as the Problems list is: 300 ms after the last edit the text goes to the
report on a helper thread (app/engines/state.py). It checks only while it is shown (the
report starts child processes: seconds of CPU), and catches up when it is shown again. A
report for older text is never shown over a newer one; the pane keeps only what it draws.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from PySide6.QtCore import QEvent, QObject, QPoint, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QColor, QKeySequence, QResizeEvent, QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMenu,
    QPlainTextEdit,
    QToolButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.background import NewestOnly
from app.engines.state import Outcome, check, feed
from app.plain_text import literal_html
from app.theme import chart_colors
from app.workbench.problems_list import apply_edits, qt_length, severity_icon
from app.workbench.schema_editor import CHECK_DELAY_MS
from engine.engines.report import EngineResult
from engine.engines.targets import TARGETS
from engine.engines.wrong import WrongInstances, wrong_line
from engine.suite.format import Instance
from engine.workbench.entries import Fix
from engine.workbench.locate import locate, path_parts

COLUMNS = ("Target", "Compiles", "Unenforced", "Suite", "Engine")
HEADER_TIPS = (
    "Where the schema may end up: the serving stack and the engine it constrains with. "
    "Enter (or +) opens a row; a click on a line under it selects that part of the schema",
    "✓: the engine turns the schema into a grammar (for OpenAI: no documented rule makes "
    "the API refuse it). ✗: it refuses the schema; its own words are in the tooltip",
    "How many keywords of the schema the engine leaves unenforced: output may break them. "
    "Expand the row to see which",
    "With a suite open: how many of its known instances the engine gets wrong (a known-bad "
    "one let through, a known-good one refused), fed through its real engine as check "
    "does. Expand the row to see which",
    "The engine and its installed version (for OpenAI: the date of the docs it follows)",
)
ENTRY = Qt.ItemDataRole.UserRole
DETAIL = Qt.ItemDataRole.UserRole + 1  # a target row's detail line
FIX_KEYS = QKeySequence("Ctrl+.")
SUITE_COLUMN = 3
ENGINE_COLUMN = 4
WIDE_ENOUGH = 620  # pixels: the Engine column shows from this width of the pane


@dataclass(frozen=True, slots=True)
class Entry:
    """What a row stands for: a target, or one of its unenforced keywords or broken rules."""

    kind: str  # "target", "unenforced", "lint", or a suite instance "accepts" or "rejects"
    target: str
    path: str = "$"
    keyword: str = ""
    note: str = ""
    fix: Fix | None = None

    @property
    def key(self) -> tuple[str, str, str, str]:
        """The same row after a recheck (the fix's offsets may have moved)."""
        return (self.kind, self.target, self.path, self.keyword)


def engine_text(result: EngineResult) -> str:
    if result.target == "openai":
        return f"{result.engine} (docs of {result.version})"
    return f"{result.engine} {result.version or '(not installed)'}"


def target_detail(result: EngineResult) -> str:
    engine = engine_text(result)
    if result.compiles:
        head = (
            f"{engine}: no documented rule refuses the schema"
            if result.target == "openai"
            else f"{engine}: compiles the schema"
        )
    else:
        reason = (result.message or "no reason given").rstrip(". ")
        head = f"{engine} does not take the schema: {reason}"
    n = len(result.unenforced)
    tails = [f"{n} keyword{'s' if n != 1 else ''} unenforced"] if n else []
    if not n and result.compiles:
        tails.append("every keyword enforced")
    if result.lints:
        tails.append(f"{len(result.lints)} broken rule{'s' if len(result.lints) != 1 else ''}")
    tail = "; ".join(tails)
    return f"{head}. {tail[:1].upper()}{tail[1:]}." if tail else f"{head}."


INSTANCE_KINDS = {"accepts": "Known-bad", "rejects": "Known-good"}


def entry_text(entry: Entry) -> str:
    if entry.kind in INSTANCE_KINDS:
        return f"{INSTANCE_KINDS[entry.kind]} instance {entry.keyword} {entry.note}"
    return f"`{entry.keyword}` at {entry.path}: {entry.note}"


def entry_detail(entry: Entry) -> str:
    if entry.kind in INSTANCE_KINDS:
        return f"{entry_text(entry)}. The instances are in the Suite pane's Instances tab."
    what = "breaks a rule of strict mode" if entry.kind == "lint" else "is not enforced"
    text = f"{entry.path}: `{entry.keyword}` {what}: {entry.note}."
    if entry.fix is not None:
        text += f" Fix: {entry.fix.label} (Ctrl+.)."
    return text


class EnginesPane(QWidget):
    """Emits sig_shown each time a check's outcome is shown (the tests wait on it)."""

    sig_shown = Signal()
    _sig_done = Signal(int, object)  # check number, Outcome

    def __init__(
        self,
        editor: QPlainTextEdit,
        parent: QWidget | None = None,
        instances: Callable[[], Sequence[Instance]] = tuple,
    ) -> None:
        """`instances()`: the open suite's known instances, read on the GUI thread at each
        check (none: no suite column)."""
        super().__init__(parent)
        self.setObjectName("enginesPane")
        self._editor = editor
        self._instances = instances
        self._checked_instances: tuple[Instance, ...] = ()  # those of the last check
        self.feeding = False  # the suite's instances are going through the engines
        self._number = 0  # of the last check asked for: an older one's outcome is dropped
        self._pending = False  # a check of the text now in the editor is running
        self._dirty = True  # the editor changed since the last check was asked for
        self.problem: str | None = None  # the one line shown instead of rows, if any

        self.status = QLabel("", self)
        self.status.setObjectName("enginesStatus")
        self.status.setTextFormat(Qt.TextFormat.PlainText)
        self.status.setWordWrap(True)
        self.fix_button = QToolButton(self)
        self.fix_button.setText("Apply fix")
        self.fix_button.clicked.connect(self.fix_current)

        self.tree = QTreeWidget(self)
        self.tree.setObjectName("enginesTree")
        self.tree.setColumnCount(len(COLUMNS))
        self.tree.setHeaderLabels(list(COLUMNS))
        header_item = self.tree.headerItem()
        for column, tip in enumerate(HEADER_TIPS):
            header_item.setToolTip(column, tip)
        self.tree.setAlternatingRowColors(True)
        self.tree.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.tree.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.tree.setAccessibleName("Engines")
        header = self.tree.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Interactive)  # _fit_columns
        for column in (1, 2, 3):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        # Enter (or a double click) opens a target's row: in the window, the arrow keys
        # step through the run's tokens (app/demo/pacing.py) wherever no text is typed;
        # + and - open and close a row too.
        self.tree.setExpandsOnDoubleClick(False)
        self.tree.itemClicked.connect(lambda item, _c: self._go_to(item))
        self.tree.itemActivated.connect(lambda item, _c: self._activated(item))
        self.tree.currentItemChanged.connect(self._current_changed)
        self.tree.customContextMenuRequested.connect(self._context_menu)
        self.tree.viewport().installEventFilter(self)

        self.detail = QLabel("", self)
        self.detail.setObjectName("enginesDetail")
        self.detail.setTextFormat(Qt.TextFormat.PlainText)
        self.detail.setWordWrap(True)
        self.detail.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.fix_action = QAction("Apply fix", self)
        self.fix_action.setShortcut(FIX_KEYS)
        self.fix_action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.fix_action.triggered.connect(self.fix_current)
        self.addAction(self.fix_action)

        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(self.status, 1)
        top.addWidget(self.fix_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        layout.addLayout(top)
        layout.addWidget(self.tree, 1)
        layout.addWidget(self.detail)

        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(CHECK_DELAY_MS)
        self._timer.timeout.connect(self._due)
        editor.textChanged.connect(self._edited)
        # Queued: the report runs on its helper thread, the widgets change on this one.
        self._sig_done.connect(self._on_done, Qt.ConnectionType.QueuedConnection)
        self._checks = NewestOnly(self._work, "engines-report")
        self._set_status("Open this pane to check the schema with every engine.", None)
        self._update_fix()

    # --- checking ----------------------------------------------------------------------
    def is_current(self) -> bool:
        """What the pane shows is for the text now in the editor."""
        return not self._dirty and not self._pending

    def check_now(self) -> None:
        self._timer.stop()
        self._dirty = False
        self._pending = True
        self._number += 1
        self._set_status(f"Checking {len(TARGETS)} engines…", None)
        self._update_fix()  # a fix's offsets are for the text checked before
        self._checked_instances = tuple(self._instances())
        self._checks.submit(self._number, self._editor.toPlainText(), self._checked_instances)

    def on_screen(self) -> bool:
        """Shown, and not a dock tab behind another (that one counts as visible to Qt)."""
        return self.isVisible() and not self.visibleRegion().isEmpty()

    def catch_up(self) -> None:
        """Shown again (or its tab brought to the front): check what it did not."""
        if self._dirty and not self._timer.isActive() and self.on_screen():
            self._timer.start()

    def _due(self) -> None:
        if self.on_screen():  # hidden since the edit: the check waits for the next show
            self.check_now()

    def suite_changed(self) -> None:
        """The open suite changed: checked again as after an edit if its instances did (an
        edit of its cases or prompt changes nothing here)."""
        if tuple(self._instances()) != self._checked_instances:
            self._edited()

    def _edited(self) -> None:
        self._dirty = True
        self._update_fix()
        if self.on_screen():
            self._timer.start()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        # In a narrow pane (under the schema editor) the Engine column would push the others
        # out of sight: it goes, and the detail line and the tooltips still name the engine.
        self.tree.setColumnHidden(ENGINE_COLUMN, self.width() < WIDE_ENOUGH)
        QTimer.singleShot(0, self._fit_columns)  # once the list has its new width

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        # The list's viewport narrows when its vertical scroll bar shows (a row opened).
        if watched is self.tree.viewport() and event.type() == QEvent.Type.Resize:
            QTimer.singleShot(0, self._fit_columns)
        return super().eventFilter(watched, event)

    def _fit_columns(self) -> None:
        """The Target column takes what the others leave (its long labels elide): no
        sideways scrolling in a narrow pane. Set by hand, as a stretched section kept its
        old width in the window after a hidden tab was brought forward."""
        header = self.tree.header()
        others = sum(
            header.sectionSize(c) for c in range(1, len(COLUMNS)) if not self.tree.isColumnHidden(c)
        )
        header.resizeSection(0, max(120, self.tree.viewport().width() - others))

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        QTimer.singleShot(0, self.catch_up)  # once it has its place on screen

    def _work(self, number: int, text: str, instances: tuple[Instance, ...]) -> None:
        outcome = check(text)
        if instances and outcome.results:
            outcome = replace(outcome, feeding=len(instances))
        with contextlib.suppress(RuntimeError):  # the window closed meanwhile
            self._sig_done.emit(number, outcome)
        if not outcome.feeding:
            return
        # Read across threads: a plain int, and a newer check only ever makes it larger.
        fed = feed(text, instances, outcome, lambda: number != self._number)
        if fed is not None:
            with contextlib.suppress(RuntimeError):
                self._sig_done.emit(number, fed)

    def _on_done(self, number: int, outcome: Outcome) -> None:
        if number != self._number:
            return  # a newer check is on its way
        self._pending = False
        self.feeding = outcome.feeding > 0
        self._show(outcome)
        self.sig_shown.emit()

    # --- showing -----------------------------------------------------------------------
    def _show(self, outcome: Outcome) -> None:
        expanded = {
            e.target
            for i in range(self.tree.topLevelItemCount())
            if self.tree.topLevelItem(i).isExpanded() and (e := entry_of(self.tree.topLevelItem(i)))
        }
        current = entry_of(self.tree.currentItem())
        self.tree.clear()
        self.problem = outcome.problem
        if outcome.problem is not None:
            self._set_status(outcome.problem, "bad")
            self.detail.clear()
            self._update_fix()
            return
        colors = chart_colors()
        icons = {"lint": severity_icon("error"), "unenforced": severity_icon("warning")}
        icons |= dict.fromkeys(INSTANCE_KINDS, severity_icon("error"))
        self.tree.setColumnHidden(SUITE_COLUMN, not suite_shown(outcome))
        restore: QTreeWidgetItem | None = None
        for result in outcome.results:
            item = self._target_item(result, colors.ok if result.compiles else colors.bad)
            self._suite_cell(item, outcome, result.target)
            wrong = (outcome.wrong or {}).get(result.target)
            for entry in entries_of(result, wrong):
                child = QTreeWidgetItem(item, [entry_text(entry)])
                child.setIcon(0, icons[entry.kind])
                child.setData(0, ENTRY, entry)
                child.setToolTip(0, literal_html(entry_detail(entry)))
                child.setFirstColumnSpanned(True)
                if current is not None and entry.key == current.key:
                    restore = child
            if result.target in expanded:
                item.setExpanded(True)
            if current is not None and current.kind == "target" and current.target == result.target:
                restore = item
        if restore is not None:
            self.tree.setCurrentItem(restore)
        self._set_summary(outcome)
        self._update_fix()
        QTimer.singleShot(0, self._fit_columns)  # the counts' columns fit their new text

    def _target_item(self, result: EngineResult, color: QColor) -> QTreeWidgetItem:
        mark = "✓" if result.compiles else "✗"
        cells = [result.label, mark, str(len(result.unenforced)), "", engine_text(result)]
        item = QTreeWidgetItem(self.tree, cells)
        item.setData(0, ENTRY, Entry("target", result.target))
        item.setForeground(1, color)
        for column in (1, 2, SUITE_COLUMN):
            item.setTextAlignment(column, Qt.AlignmentFlag.AlignCenter)
        detail = target_detail(result)
        item.setData(0, DETAIL, detail)
        tip = literal_html(f"{result.label}\n{detail}")
        for column in range(len(COLUMNS)):
            item.setToolTip(column, tip)
        item.setData(
            1, Qt.ItemDataRole.AccessibleTextRole, "compiles" if result.compiles else "refuses"
        )
        return item

    def _suite_cell(self, item: QTreeWidgetItem, outcome: Outcome, target: str) -> None:
        """The Suite column, and its line at the end of the row's detail and tooltip."""
        if not suite_shown(outcome):
            return
        wrong = (outcome.wrong or {}).get(target)
        if outcome.feeding:
            cell, line = "…", f"feeding the suite's {outcome.feeding} instances…"
        elif wrong is None:
            cell, line = "?", f"not fed: {outcome.wrong_problem}"
        elif wrong.skipped is not None:
            cell, line = "–", wrong_line(wrong)
        else:
            count = len(wrong.accepts) + len(wrong.rejects)
            cell, line = str(count), wrong_line(wrong)
            item.setForeground(SUITE_COLUMN, chart_colors().bad if count else chart_colors().ok)
        item.setText(SUITE_COLUMN, cell)
        detail = f"{item.data(0, DETAIL)} Suite instances: {line}."
        item.setData(0, DETAIL, detail)
        tip = literal_html(f"{item.text(0)}\n{detail}")
        for column in range(len(COLUMNS)):
            item.setToolTip(column, tip)

    def _set_summary(self, outcome: Outcome) -> None:
        results = outcome.results
        ok = sum(r.compiles for r in results)
        skipped = sum(len(r.unenforced) for r in results)
        text = f"{ok} of {len(results)} take the schema"
        if skipped:
            text += f" · {skipped} unenforced keyword{'s' if skipped != 1 else ''} in all"
        if outcome.feeding:
            text += f" · feeding the suite's {outcome.feeding} instances…"
        elif outcome.wrong_problem is not None:
            text += f" · the suite's instances were not fed: {outcome.wrong_problem}"
        elif outcome.wrong is not None:
            wrong = sum(len(w.accepts) + len(w.rejects) for w in outcome.wrong.values())
            text += f" · {wrong} wrong verdict{'s' if wrong != 1 else ''} on the suite's instances"
        self._set_status(text, "ok" if ok == len(results) else "warn")

    def _set_status(self, text: str, tone: str | None) -> None:
        color = getattr(chart_colors(), tone).name() if tone else "palette(placeholder-text)"
        self.status.setStyleSheet(f"color: {color};")
        self.status.setText(text)

    def _current_changed(self, item: QTreeWidgetItem | None, _previous: object = None) -> None:
        self.detail.setText(self._detail_of(item))
        self._update_fix()

    def _detail_of(self, item: QTreeWidgetItem | None) -> str:
        entry = entry_of(item)
        if entry is None or item is None:
            return ""
        if entry.kind == "target":
            return str(item.data(0, DETAIL) or "")
        return entry_detail(entry)

    # --- acting on a row ---------------------------------------------------------------
    def current(self) -> Entry | None:
        return entry_of(self.tree.currentItem())

    def _activated(self, item: QTreeWidgetItem) -> None:
        entry = entry_of(item)
        if entry is not None and entry.kind == "target":
            item.setExpanded(not item.isExpanded())
        else:
            self._go_to(item)

    def _go_to(self, item: QTreeWidgetItem) -> None:
        entry = entry_of(item)
        if entry is not None and entry.kind not in ("target", *INSTANCE_KINDS):
            self.select_in_editor(entry.path)  # an instance is in the Suite pane, not here

    def select_in_editor(self, path: str) -> bool:
        """Select the subschema at `path` in the editor's text as it is now; False if the
        text no longer has it."""
        text = self._editor.toPlainText()
        parts = path_parts(path)
        try:
            span = locate(text).value(parts) if parts is not None else None
        except Exception:  # text that is not JSON any more: nothing to select
            span = None
        if span is None:
            return False
        cursor = self._editor.textCursor()
        cursor.setPosition(qt_length(text[: span[1]]))
        cursor.setPosition(qt_length(text[: span[0]]), cursor.MoveMode.KeepAnchor)
        self._editor.setTextCursor(cursor)  # the cursor at the start: that line is shown
        self._editor.centerCursor()
        return True

    def fix_current(self) -> bool:
        entry = self.current()
        if entry is None or entry.fix is None or not self.is_current():
            return False
        apply_edits(self._editor, entry.fix)  # one undoable edit, as the Problems list's
        return True

    def _update_fix(self) -> None:
        entry = self.current()
        fix = entry.fix if entry is not None else None
        usable = fix is not None and self.is_current()
        self.fix_button.setEnabled(usable)
        self.fix_action.setEnabled(usable)
        if usable:
            tip = f"{fix.label}: one edit of the schema (Ctrl+. ; Ctrl+Z undoes it)"
        elif fix is not None:
            tip = "The schema changed since it was checked: wait for the check"
        else:
            tip = "Select one of OpenAI's broken rules that has a fix"
        self.fix_button.setToolTip(tip)

    def _context_menu(self, pos: QPoint) -> None:
        item = self.tree.itemAt(pos)
        entry = entry_of(item)
        if entry is None or entry.kind in ("target", *INSTANCE_KINDS):
            return
        menu = QMenu(self)
        menu.addAction("Select in schema", lambda: self.select_in_editor(entry.path))
        if entry.fix is not None:
            action = menu.addAction(f"Fix: {entry.fix.label}", self.fix_current)
            action.setEnabled(self.is_current())
        menu.exec(self.tree.viewport().mapToGlobal(pos))

    def focus_list(self) -> None:
        """Keyboard focus on the list, on its first row when none is current."""
        if self.tree.currentItem() is None and self.tree.topLevelItemCount():
            self.tree.setCurrentItem(self.tree.topLevelItem(0))
        self.tree.setFocus()


def entry_of(item: QTreeWidgetItem | None) -> Entry | None:
    if item is None:
        return None
    entry = item.data(0, ENTRY)
    return entry if isinstance(entry, Entry) else None


def suite_shown(outcome: Outcome) -> bool:
    """A suite's instances went, or go, through the engines."""
    return bool(outcome.feeding) or outcome.wrong is not None or outcome.wrong_problem is not None


def entries_of(result: EngineResult, wrong: WrongInstances | None = None) -> list[Entry]:
    """The rows under a target: the suite's instances it gets wrong, its broken rules (the
    API refuses for them), then the keywords it leaves unenforced."""
    found = (("accepts", wrong.accepts), ("rejects", wrong.rejects)) if wrong is not None else ()
    rows = [
        Entry(kind, result.target, "", f"#{w.number}", _instance_note(w.description, w.note))
        for kind, instances in found
        for w in instances
    ]
    rows += [
        Entry("lint", result.target, lint.path, lint.keyword, lint.note, lint.fix)
        for lint in result.lints or ()
    ]
    rows += [
        Entry("unenforced", result.target, u.path, u.keyword, u.note) for u in result.unenforced
    ]
    return rows


def _instance_note(description: str, note: str) -> str:
    """As in: (two oneOf branches) accepted: the engine does not enforce `oneOf` at …"""
    return f"({description}) {note}" if description else note
