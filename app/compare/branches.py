"""The Branches pane: the original run and its what-if branches, and one branch compared
with the original.

From top to bottom: the list (each run's fork step, forced token, verdict and token count),
the first difference between the selected branch and the original, both outputs side by
side with the words that differ tinted in each run's colour, and both valid-mass curves on
one plot with the fork step marked. Double-click or Enter on a run asks the window to show
it in the main chart (sig_open).
"""

from __future__ import annotations

import html

from PySide6.QtCore import QSignalBlocker, Qt, Signal
from PySide6.QtGui import QBrush, QGuiApplication, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QGridLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QSplitter,
    QToolButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.compare.mass_curves import CurveStyle, MassCurves
from app.compare.previous import choice_words, visible_whitespace, with_alpha
from app.decoding.output_view import verdict
from app.plain_text import literal_html
from app.text_edit import use_monospace
from app.theme import ChartColors, chart_colors
from engine.records import Candidate, StepRecord
from engine.runs.branches import Branch, BranchSet
from engine.runs.compare import RunComparison, SpanKind, unified_diff
from engine.runs.saved import SavedRun

EMPTY = (
    "No branches yet: click a valid candidate in the chart to continue the run from that "
    "step with that token."
)

ORIGINAL_SELECTED = "The original run. Select a branch to compare it with the original."
ORIGINAL = -1  # the list row of the original run; branches are 0, 1, ...
COLUMNS = ("Run", "Step", "Forced token", "Verdict", "Tokens")
COLUMN_TIPS = (
    "The run; its whole name and the start of its output are in the row's tooltip",
    "The step whose token the branch forced, counted from 1",
    "The token the branch forced there",
    "Whether the run's output validates against the schema",
    "How many tokens the run wrote",
)
FORCED_TOKEN = 2  # the column that takes what width is left, its tokens cut ("…") to fit
VERDICT = 3
VERDICT_CHARS = 9  # a verdict is cut at about this many average characters
CELL_PADDING_PX = 16  # a cell's margins and the gap to the next column


def _original_color(colors: ChartColors):
    return colors.raw_valid


def _branch_color(colors: ChartColors):
    return colors.mass_line


def first_difference_parts(branch: Branch, comparison: RunComparison) -> list[tuple[str, str]]:
    """The first-difference line as (text, whose) parts, whose being "original", "branch"
    or "" for the words between; steps counted from 1."""
    d = comparison.divergence
    if d is None:
        n = len(branch.run.records)
        return [(f"The branch chose the same {n} tokens as the original.", "")]
    parts = [
        (f"First difference at step {d.step + 1}: ", ""),
        (choice_words(d.before, "the original"), "original"),
        (" vs ", ""),
        (choice_words(d.after, "the branch"), "branch"),
    ]
    if d.step != branch.fork_step:
        parts.append((f"; the token was forced at step {branch.fork_step + 1}", ""))
    return parts


def first_difference_text(branch: Branch, comparison: RunComparison) -> str:
    return "".join(text for text, _ in first_difference_parts(branch, comparison))


def forced_odds_text(branch: Branch, original: SavedRun, comparison: RunComparison) -> str:
    """How likely the forced token was where it was forced, beside the original's draw: a
    branch the model nearly took reads differently from one it never would have.

    The odds come from the branch's own record of the step, so a branch forked from
    another branch reads them in its own context; the original's draw is named only where
    the original had written the same text up to that step."""
    if branch.fork_step >= len(branch.run.records):
        return ""
    record = branch.run.records[branch.fork_step]
    step = branch.fork_step + 1
    forced = _candidate(record, branch.token_id)
    odds = (
        f"At step {step} the model gave {branch.token_text!r} P {forced.p_raw:.3f} "
        f"({forced.p_masked:.3f} after masking)"
        if forced is not None
        else f"At step {step} {branch.token_text!r} was not among the model's top candidates"
    )
    d = comparison.divergence
    if (d is not None and d.step < branch.fork_step) or branch.fork_step >= len(original.records):
        return odds + "."
    theirs = original.records[branch.fork_step]
    drew = _candidate(theirs, theirs.token_id)
    drew_p = f" (P {drew.p_raw:.3f})" if drew is not None else ""
    return f"{odds}; the original drew {theirs.token_text!r}{drew_p}."


def _candidate(record: StepRecord, token_id: int) -> Candidate | None:
    return next((c for c in (*record.top_raw, *record.top_masked) if c.id == token_id), None)


def _first_difference_html(branch: Branch, comparison: RunComparison) -> str:
    colors = chart_colors()
    whose_color = {"original": _original_color(colors), "branch": _branch_color(colors)}
    return "".join(
        f"<span style='color:{whose_color[whose].name()}'>{html.escape(text)}</span>"
        if whose
        else html.escape(text)
        for text, whose in first_difference_parts(branch, comparison)
    )


class BranchesView(QWidget):
    sig_open = Signal(object)  # a SavedRun: show it in the main chart

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.branches = BranchSet()
        self.comparison: RunComparison | None = None

        self.list = QTreeWidget(self)
        self.list.setObjectName("branchList")
        self.list.setHeaderLabels(COLUMNS)
        self.list.setRootIsDecorated(False)
        self.list.setUniformRowHeights(True)
        self.list.setAllColumnsShowFocus(True)
        self.list.setAlternatingRowColors(True)
        # Room for the original and four branches before the list scrolls.
        self.list.setMinimumHeight(self.list.fontMetrics().height() * 8)
        self.list.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.list.setToolTip(
            "The original run and every what-if branch made from it. Select one to compare "
            "it with the original; double-click or press Enter to show it in the chart."
        )
        for column, tip in enumerate(COLUMN_TIPS):
            self.list.headerItem().setToolTip(column, tip)
        self.list.setTextElideMode(Qt.TextElideMode.ElideRight)
        header = self.list.header()
        header.setStretchLastSection(False)
        # The names keep their width and the forced token takes what is left, cut to it:
        # with the token at its whole width the list scrolled sideways in its pane, and the
        # Run column was squeezed. Every cut text is whole in its tooltip.
        for column in range(len(COLUMNS)):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(FORCED_TOKEN, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(VERDICT, QHeaderView.ResizeMode.Interactive)
        self.list.itemActivated.connect(self._activated)
        self.list.currentItemChanged.connect(self._current_changed)
        self.open_button = QToolButton(self)
        self.open_button.setText("Show in chart")
        self.open_button.setToolTip("Show the selected run in the main chart (Enter)")
        self.open_button.setEnabled(False)
        self.open_button.clicked.connect(self.open_current)
        self.copy_button = QToolButton(self)
        self.copy_button.setText("Copy diff")
        self.copy_button.setToolTip("Copy the original's output and the branch's as a unified diff")
        self.copy_button.setEnabled(False)
        self.copy_button.clicked.connect(self.copy_diff)

        self.difference = QLabel(EMPTY, self)
        self.difference.setObjectName("branchDifference")
        self.difference.setWordWrap(True)
        self.difference.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.left_title, self.left = self._output("the original")
        self.right_title, self.right = self._output("the selected branch")
        self.mass = MassCurves(
            (
                CurveStyle("original", _original_color, band=True),
                CurveStyle("branch", _branch_color),
            ),
            "forced token",
            self._describe_step,
            self,
        )
        self.mass.setObjectName("branchMassCurves")
        self._layout()
        self.apply_theme()
        QGuiApplication.styleHints().colorSchemeChanged.connect(self.apply_theme)

    def _output(self, whose: str) -> tuple[QLabel, QPlainTextEdit]:
        title = QLabel("", self)
        title.setTextFormat(Qt.TextFormat.RichText)
        # Wrapped: unwrapped, a long branch name widened the pane's minimum, and the dock
        # layout moved the dividers to make room when a branch opened (issue 27, item 7).
        title.setWordWrap(True)
        edit = QPlainTextEdit(self)
        edit.setReadOnly(True)
        edit.setMinimumHeight(60)
        edit.setToolTip(f"The output of {whose}; the words that differ are tinted")
        use_monospace(edit)
        return title, edit

    def _layout(self) -> None:
        top = QWidget(self)
        top_layout = QVBoxLayout(top)
        top_layout.setContentsMargins(0, 0, 0, 0)
        header = QHBoxLayout()
        header.addWidget(QLabel("<b>What-if branches</b>", top))
        header.addStretch(1)
        header.addWidget(self.open_button)
        header.addWidget(self.copy_button)
        top_layout.addLayout(header)
        top_layout.addWidget(self.list)

        bottom = QWidget(self)
        grid = QGridLayout(bottom)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.setVerticalSpacing(4)
        grid.addWidget(self.difference, 0, 0, 1, 2)
        grid.addWidget(self.left_title, 1, 0)
        grid.addWidget(self.right_title, 1, 1)
        grid.addWidget(self.left, 2, 0)
        grid.addWidget(self.right, 2, 1)
        grid.addWidget(self.mass, 3, 0, 1, 2)
        # Outputs are mostly short JSON; the curves need the height.
        grid.setRowStretch(2, 2)
        grid.setRowStretch(3, 5)

        splitter = QSplitter(Qt.Orientation.Vertical, self)
        splitter.setChildrenCollapsible(False)
        splitter.addWidget(top)
        splitter.addWidget(bottom)
        splitter.setStretchFactor(0, 1)
        splitter.setStretchFactor(1, 3)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(splitter)

    # --- feeding ---------------------------------------------------------------------------
    def set_original(self, run: SavedRun) -> None:
        """A new original run; the branches of the previous one are dropped."""
        self.branches.set_original(run)
        self._clear_list()
        self.list.addTopLevelItem(
            self._row(ORIGINAL, "Original run", "Original run", "—", "—", run)
        )
        self._fit_columns()
        self.list.setCurrentItem(self.list.topLevelItem(0))

    def add_branch(self, branch: Branch) -> None:
        """Keep a branch (name it with branches.new_branch()) and select it."""
        index = self.branches.add(branch)
        # The name's "step 7 → 'EUR'" has columns of its own: the Run column keeps "Branch 2".
        short = branch.name.split(":", 1)[0]
        item = self._row(
            index,
            short,
            branch.name,
            str(branch.fork_step + 1),
            repr(branch.token_text),
            branch.run,
        )
        self.list.addTopLevelItem(item)
        self._fit_columns()
        self.list.setCurrentItem(item)

    def clear(self) -> None:
        self.branches.clear()
        self._clear_list()
        self._show_nothing(EMPTY)

    def _clear_list(self) -> None:
        # Quietly: while its rows go, the list would select rows of branches already gone.
        with QSignalBlocker(self.list):
            self.list.clear()
        self.open_button.setEnabled(False)

    def _row(
        self, index: int, name: str, whole_name: str, step: str, token: str, run: SavedRun
    ) -> QTreeWidgetItem:
        """A run's row: `name` short ("Branch 2"), `whole_name` in its tooltip ("Branch 2:
        step 7 → 'EUR'") with the start of the output, since a narrow pane cuts the name."""
        badge, tone = verdict(run.result)
        item = QTreeWidgetItem([name, step, token, badge, str(len(run.records))])
        item.setData(0, Qt.ItemDataRole.UserRole, index)
        item.setData(3, Qt.ItemDataRole.UserRole, tone)
        item.setToolTip(
            0, f"<b>{html.escape(whole_name)}</b>" + literal_html(run.result.text[:400])
        )
        item.setToolTip(2, literal_html(token) if token != "—" else "")
        item.setToolTip(3, literal_html(run.result.message or badge))
        for column in (1, 4):
            item.setTextAlignment(
                column, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
            )
        self._tint(item)
        return item

    def _tint(self, item: QTreeWidgetItem) -> None:
        tone = item.data(3, Qt.ItemDataRole.UserRole)
        item.setForeground(3, QBrush(getattr(chart_colors(), tone)))

    def _fit_columns(self) -> None:
        """The verdict column fits its verdicts up to VERDICT_CHARS; the others fit
        themselves (header modes)."""
        self.list.resizeColumnToContents(VERDICT)
        cap = self.list.fontMetrics().averageCharWidth() * VERDICT_CHARS + CELL_PADDING_PX
        self.list.setColumnWidth(VERDICT, min(self.list.columnWidth(VERDICT), cap))

    # --- selection -------------------------------------------------------------------------
    def current_index(self) -> int | None:
        """The selected row: ORIGINAL, a branch's position, or None."""
        item = self.list.currentItem()
        return None if item is None else item.data(0, Qt.ItemDataRole.UserRole)

    def current_run(self) -> SavedRun | None:
        index = self.current_index()
        if index is None:
            return None
        return self.branches.original if index == ORIGINAL else self.branches.branches[index].run

    def select(self, index: int) -> None:
        """Select ORIGINAL or branch `index`."""
        self.list.setCurrentItem(self.list.topLevelItem(index + 1))

    def open_current(self) -> None:
        run = self.current_run()
        if run is not None:
            self.sig_open.emit(run)

    def _activated(self, item: QTreeWidgetItem) -> None:
        self.list.setCurrentItem(item)
        self.open_current()

    def _current_changed(self, item: QTreeWidgetItem | None) -> None:
        self._show_selected()

    def _show_selected(self) -> None:
        index = self.current_index()
        original = self.branches.original
        self.open_button.setEnabled(index is not None)
        if index is None or original is None:
            self._show_nothing(EMPTY)
        elif index == ORIGINAL:
            self._show_nothing(ORIGINAL_SELECTED if len(self.branches) else EMPTY)
            self.left_title.setText(self._title("Original run", original))
            self.left.setPlainText(original.result.text)
            self.mass.show_series(([r.valid_mass for r in original.records], ()), None)
        else:
            self._show_branch(self.branches.branches[index], self.branches.compare(index))

    def _show_nothing(self, message: str) -> None:
        self.comparison = None
        self.difference.setText(html.escape(message))
        self.copy_button.setEnabled(False)
        for title, edit in ((self.left_title, self.left), (self.right_title, self.right)):
            title.setText("")
            edit.clear()
        self.mass.clear()

    def _show_branch(self, branch: Branch, cmp: RunComparison) -> None:
        self.comparison = cmp
        self.copy_button.setEnabled(True)
        original = self.branches.original
        assert original is not None
        odds = html.escape(forced_odds_text(branch, original, cmp))
        self.difference.setText(f"<b>{_first_difference_html(branch, cmp)}</b><br>{odds}")
        self.left_title.setText(self._title("Original run", original))
        self.right_title.setText(self._title(branch.name, branch.run))
        self._fill(self.left, cmp, SpanKind.DELETED, _original_color)
        self._fill(self.right, cmp, SpanKind.INSERTED, _branch_color)
        self.mass.show_series((cmp.mass_before, cmp.mass_after), branch.fork_step)

    def _title(self, name: str, run: SavedRun) -> str:
        badge, tone = verdict(run.result)
        color = getattr(chart_colors(), tone).name()
        return (
            f"<b>{html.escape(name)}</b> · <span style='color:{color}'>{html.escape(badge)}</span>"
            f" · {len(run.records)} tokens"
        )

    def _fill(self, edit: QPlainTextEdit, cmp: RunComparison, own: SpanKind, color) -> None:
        """One side of the diff: the shared words plain, this side's own words tinted."""
        tinted = QTextCharFormat()
        tinted.setBackground(with_alpha(color(chart_colors()), 70))
        tinted.setFontWeight(700)
        edit.clear()
        cursor = QTextCursor(edit.document())
        cursor.beginEditBlock()
        for span in cmp.spans:
            if span.kind is SpanKind.SAME:
                cursor.insertText(span.text, QTextCharFormat())
            elif span.kind is own:
                cursor.insertText(visible_whitespace(span.text), tinted)
        cursor.endEditBlock()
        edit.moveCursor(QTextCursor.MoveOperation.Start)

    def copy_diff(self) -> None:
        index = self.current_index()
        original = self.branches.original
        if index is None or index == ORIGINAL or original is None:
            return
        branch = self.branches.branches[index].run
        QGuiApplication.clipboard().setText(unified_diff(original.result.text, branch.result.text))

    # --- look and hover --------------------------------------------------------------------
    def apply_theme(self) -> None:
        self.mass.apply_theme()
        for i in range(self.list.topLevelItemCount()):
            self._tint(self.list.topLevelItem(i))
        self._show_selected()

    def _describe_step(self, i: int) -> str:
        index = self.current_index()
        original = self.branches.original
        if index is None or original is None:
            return ""
        runs = [("original", original)]
        if index != ORIGINAL:
            runs.append(("branch", self.branches.branches[index].run))
        rows = [f"<b>step {i + 1}</b>"]
        for name, run in runs:
            if i < len(run.records):
                r = run.records[i]
                token = html.escape(repr(r.token_text))
                rows.append(f"{name}: {token} · valid mass {r.valid_mass:.3f}")
            else:
                rows.append(f"{name}: ended")
        return "<br>".join(rows)
