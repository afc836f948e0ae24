"""The Problems pane: every problem of the schema in one sortable list.

Each row is one ``engine.workbench.problems.Problem``: severity icon, message, kind (or lint
id) and line:column. A click or Enter jumps to the spot in the schema editor; a problem with a
fix offers it (button, context menu), applied as one undoable edit. The list is a model/view
pair, so a 1 MB schema with thousands of problems costs no more than the rows on screen.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QPersistentModelIndex,
    QPointF,
    QRectF,
    Qt,
    Signal,
)
from PySide6.QtGui import (
    QAction,
    QColor,
    QGuiApplication,
    QIcon,
    QKeySequence,
    QPainter,
    QPen,
    QPixmap,
    QPolygonF,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMenu,
    QPlainTextEdit,
    QToolButton,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from app.plain_text import literal_html
from app.theme import chart_colors
from engine.workbench.entries import Fix, Problem

SEVERITY_RANK = {"error": 0, "warning": 1, "info": 2}
SEVERITY_MARK = {"error": "✗", "warning": "⚠", "info": "ℹ"}
COLUMNS = ("Problem", "Kind", "Line")
_FIT_ROWS = 500
_INDEX = QModelIndex | QPersistentModelIndex


def severity_color(severity: str) -> QColor:
    colors = chart_colors()
    return {"error": colors.bad, "warning": colors.warn}.get(severity, colors.raw_valid)


def severity_icon(severity: str, size: int = 14) -> QIcon:
    """A shape per severity, not only a colour: a circle with a cross (error), a triangle
    with "!" (warning), a circle with "i" (note). Colours follow the light/dark theme."""
    pixmap = QPixmap(size, size)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(severity_color(severity))
    r = QRectF(0.5, 0.5, size - 1, size - 1)
    if severity == "warning":
        painter.drawPolygon(
            QPolygonF([QPointF(r.center().x(), r.top()), r.bottomRight(), r.bottomLeft()])
        )
    else:
        painter.drawEllipse(r)
    pen = QPen(QColor("white"), max(1.5, size / 8))
    pen.setCapStyle(Qt.PenCapStyle.RoundCap)
    painter.setPen(pen)
    c, d = r.center(), size * 0.2
    if severity == "error":
        painter.drawLine(QPointF(c.x() - d, c.y() - d), QPointF(c.x() + d, c.y() + d))
        painter.drawLine(QPointF(c.x() - d, c.y() + d), QPointF(c.x() + d, c.y() - d))
    elif severity == "warning":
        painter.drawLine(QPointF(c.x(), r.top() + size * 0.38), QPointF(c.x(), c.y() + d))
        painter.drawPoint(QPointF(c.x(), r.bottom() - size * 0.16))
    else:
        painter.drawLine(QPointF(c.x(), c.y() - d * 0.2), QPointF(c.x(), c.y() + d * 1.3))
        painter.drawPoint(QPointF(c.x(), c.y() - d * 1.4))
    painter.end()
    return QIcon(pixmap)


def problem_kind(problem: Problem) -> str:
    """What the Kind column says: a lint's id, else the kind of problem."""
    return problem.id if problem.kind == "lint" and problem.id else problem.kind


def problem_location(problem: Problem) -> str:
    if problem.line is None:
        return problem.path or ""
    return f"{problem.line}:{problem.column}" if problem.column else str(problem.line)


def problem_line(problem: Problem) -> str:
    """One problem as one line of text, for the clipboard."""
    where = problem_location(problem)
    where = f"{where}: " if where else ""
    return f"{where}{problem.severity}: {problem.message} [{problem_kind(problem)}]"


def identity(problem: Problem) -> tuple[object, ...]:
    """What a problem is, apart from where it is in the text."""
    return (
        problem.severity,
        problem.kind,
        problem.id,
        problem.keyword,
        problem.path,
        problem.message,
    )


def sort_key(problem: Problem) -> tuple[int, int, int]:
    return (SEVERITY_RANK.get(problem.severity, 3), problem.line or 0, problem.column or 0)


# The widest the Fix button's text grows, in pixels.
FIX_BUTTON_PX = 220


class ProblemsModel(QAbstractTableModel):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.problems: list[Problem] = []
        self._icons = {s: severity_icon(s) for s in SEVERITY_RANK}

    def set_problems(self, problems: Sequence[Problem]) -> None:
        self.beginResetModel()
        self.problems = sorted(problems, key=sort_key)
        self._icons = {s: severity_icon(s) for s in SEVERITY_RANK}  # the theme may have changed
        self.endResetModel()

    def rowCount(self, parent: _INDEX = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        return 0 if parent.isValid() else len(self.problems)

    def columnCount(self, parent: _INDEX = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = 0) -> object:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        return None

    def data(self, index: _INDEX, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if not index.isValid():
            return None
        problem = self.problems[index.row()]
        column = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            if column == 0:
                return problem.message
            return problem_kind(problem) if column == 1 else problem_location(problem)
        if role == Qt.ItemDataRole.DecorationRole and column == 0:
            return self._icons.get(problem.severity)
        if role == Qt.ItemDataRole.ToolTipRole:
            return _tooltip(problem)
        if role == Qt.ItemDataRole.AccessibleDescriptionRole and column == 0:
            return problem.severity
        return None


def _tooltip(problem: Problem) -> str:
    lines = [f"{problem.severity.capitalize()}: {problem.message}"]
    if problem.path:
        lines.append(f"at {problem.path}")
    if problem.fix is not None:
        lines.append(f"Fix available: {problem.fix.label} (Ctrl+.)")
    return literal_html("\n".join(lines))  # messages quote property names


class ProblemsList(QWidget):
    """Emits sig_selected(Problem) when the user picks a row (the output view listens, to
    show that problem's violations)."""

    sig_selected = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("problemsList")
        self._schema_edit: QPlainTextEdit | None = None
        self._prompt_edit: QPlainTextEdit | None = None

        self.model = ProblemsModel(self)
        self.view = QTreeView(self)
        self.view.setObjectName("problemsView")
        self.view.setModel(self.model)
        self.view.setRootIsDecorated(False)
        self.view.setUniformRowHeights(True)  # keeps thousands of rows cheap
        self.view.setAlternatingRowColors(True)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        header = self.view.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        self.view.clicked.connect(self._on_activated)
        self.view.activated.connect(self._on_activated)  # Enter, or a double click
        self.view.customContextMenuRequested.connect(self._context_menu)
        self.view.selectionModel().currentRowChanged.connect(self._update_buttons)

        self.counts = QLabel("", self)
        self.counts.setObjectName("problemsCounts")
        self.fix_button = QToolButton(self)
        self.fix_button.setText("Fix")
        self.fix_button.setEnabled(False)
        self.fix_button.clicked.connect(self.fix_current)
        self.copy_button = QToolButton(self)
        self.copy_button.setText("Copy")
        self.copy_button.setToolTip(
            "Copy the selected problems (all of them when none is selected)"
        )
        self.copy_button.clicked.connect(self.copy_selected)

        self.fix_action = QAction("Apply fix", self)
        self.fix_action.setShortcut(QKeySequence("Ctrl+."))
        self.fix_action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.fix_action.triggered.connect(self.fix_current)
        self.copy_action = QAction("Copy", self)
        self.copy_action.setShortcut(QKeySequence.StandardKey.Copy)
        self.copy_action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.copy_action.triggered.connect(self.copy_selected)
        self.addActions([self.fix_action, self.copy_action])

        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(self.counts)  # the pane's title says "Problems"
        top.addStretch(1)
        top.addWidget(self.fix_button)
        top.addWidget(self.copy_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        layout.addLayout(top)
        layout.addWidget(self.view, 1)
        self._update_buttons()

    def set_editors(self, schema: QPlainTextEdit, prompt: QPlainTextEdit | None = None) -> None:
        """Where clicks jump to and fixes are applied (a fix's target names one of the two).
        Ctrl+. works in them too: a click on a row puts the cursor, and the focus, there."""
        self._schema_edit, self._prompt_edit = schema, prompt
        for edit in (schema, prompt):
            if edit is not None:
                edit.addAction(self.fix_action)

    # --- contents --------------------------------------------------------------------------
    def set_problems(self, problems: Sequence[Problem]) -> None:
        # Fitting columns to their contents reads every row: past a few hundred, keep widths.
        fit = len(problems) <= _FIT_ROWS
        header = self.view.header()
        for column in (1, 2):
            header.setSectionResizeMode(
                column,
                QHeaderView.ResizeMode.ResizeToContents
                if fit
                else QHeaderView.ResizeMode.Interactive,
            )
        current = self.current()
        self.model.set_problems(problems)
        self.counts.setText(summary(self.model.problems) if problems else "none")
        if current is not None:  # a re-check of the same problem keeps it selected
            self.select(current)
        self._update_buttons()

    def problems(self) -> list[Problem]:
        """In the order shown: errors first, then by line."""
        return list(self.model.problems)

    def current(self) -> Problem | None:
        index = self.view.currentIndex()
        return self.model.problems[index.row()] if index.isValid() else None

    def select(self, problem: Problem) -> bool:
        """Make this problem the current row, scrolled into view; False if it is not listed."""
        listed = self.model.problems
        same = [i for i, p in enumerate(listed) if p == problem]
        # After an edit above it, the same problem has moved: its identity still holds.
        same = same or [i for i, p in enumerate(listed) if identity(p) == identity(problem)]
        if not same:
            return False
        row = same[0]
        index = self.model.index(row, 0)
        self.view.setCurrentIndex(index)
        self.view.scrollTo(index)
        return True

    # --- actions ---------------------------------------------------------------------------
    def jump_to(self, problem: Problem) -> None:
        edit = self._schema_edit
        if edit is None or problem.line is None:
            return
        doc = edit.document()
        block = doc.findBlockByNumber(max(0, min(problem.line - 1, doc.blockCount() - 1)))
        column = max(0, (problem.column or 1) - 1)
        offset = min(qt_length(block.text()[:column]), block.length() - 1)
        cursor = edit.textCursor()
        cursor.setPosition(block.position() + offset)
        edit.setTextCursor(cursor)
        edit.centerCursor()
        edit.setFocus()

    def fix_current(self) -> None:
        problem = self.current()
        if problem is not None and problem.fix is not None:
            self.apply_fix(problem.fix)

    def apply_fix(self, fix: Fix) -> bool:
        edit = self._prompt_edit if fix.target == "prompt" else self._schema_edit
        if edit is None:
            return False
        apply_edits(edit, fix)
        return True

    def copy_selected(self) -> None:
        rows = sorted({i.row() for i in self.view.selectionModel().selectedRows()})
        chosen = [self.model.problems[r] for r in rows] or self.model.problems
        QGuiApplication.clipboard().setText("\n".join(problem_line(p) for p in chosen))

    def _on_activated(self, index: QModelIndex) -> None:
        problem = self.model.problems[index.row()]
        self.sig_selected.emit(problem)
        self.jump_to(problem)

    def _update_buttons(self, *_: object) -> None:
        problem = self.current()
        fix = problem.fix if problem is not None else None
        self.fix_button.setEnabled(fix is not None)
        self.fix_action.setEnabled(fix is not None)
        # A long fix name is cut short on the button (whole in its tooltip): at its full
        # width the button widened the pane and moved the window's column divider.
        label = "Fix" if fix is None else f"Fix: {fix.label}"
        metrics = self.fix_button.fontMetrics()
        self.fix_button.setText(
            metrics.elidedText(label, Qt.TextElideMode.ElideRight, FIX_BUTTON_PX)
        )
        self.fix_button.setToolTip(
            f"{fix.label}: applied as one edit (Ctrl+Z undoes it)"
            if fix is not None
            else "The selected problem has no automatic fix"
        )
        self.copy_action.setEnabled(bool(self.model.problems))
        self.copy_button.setEnabled(bool(self.model.problems))

    def _context_menu(self, pos: object) -> None:
        index = self.view.indexAt(pos)
        if not index.isValid():
            return
        problem = self.model.problems[index.row()]
        menu = QMenu(self)
        if problem.line is not None:
            menu.addAction("Go to problem", lambda: self.jump_to(problem))
        if problem.fix is not None:
            fix = problem.fix
            menu.addAction(f"Fix: {fix.label}", lambda: self.apply_fix(fix))
        menu.addSeparator()
        menu.addAction(self.copy_action)
        menu.exec(self.view.viewport().mapToGlobal(pos))


def summary(problems: Sequence[Problem]) -> str:
    """ "✗ 2 errors, ⚠ 3 warnings, ℹ 1 note": what the label under the editor says too."""
    parts = []
    for severity, word in (("error", "error"), ("warning", "warning"), ("info", "note")):
        n = sum(p.severity == severity for p in problems)
        if n:
            parts.append(f"{SEVERITY_MARK[severity]} {n} {word}{'s' if n != 1 else ''}")
    return ", ".join(parts)


def qt_length(text: str) -> int:
    """Length in UTF-16 code units, which is how QTextDocument counts positions (an emoji is
    one Python character and two Qt ones)."""
    return len(text.encode("utf-16-le")) // 2


def apply_edits(edit: QPlainTextEdit, fix: Fix) -> None:
    """Apply a fix's edits, given as character offsets into the editor's text, as ONE undo
    step. Later edits go first, so the offsets of earlier ones still hold."""
    text = edit.toPlainText()
    cursor = edit.textCursor()
    cursor.beginEditBlock()
    try:
        for change in sorted(fix.edits, key=lambda e: e.start, reverse=True):
            cursor.setPosition(qt_length(text[: change.start]))
            cursor.setPosition(qt_length(text[: change.end]), cursor.MoveMode.KeepAnchor)
            cursor.insertText(change.text)
    finally:
        cursor.endEditBlock()
    edit.setTextCursor(cursor)
