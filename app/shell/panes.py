"""The window's panes as dock widgets, on a dock host of their own.

The host is a QMainWindow nested in the window's central widget, so that the error banner
spans every pane above them, and the window keeps its menus, toolbar and status bar.
Panes can be moved, tabbed, floated, hidden from the View menu and put back with
"Reset layout"; their arrangement is saved with `save_state` and brought back by
`restore_state`. When the window grows or shrinks (maximised, say), each column of panes
keeps its share of the width: Qt alone would give all of the change to the left column.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QByteArray, QEvent, QObject, Qt, QTimer
from PySide6.QtGui import QResizeEvent, QShowEvent
from PySide6.QtWidgets import (
    QDockWidget,
    QFrame,
    QMainWindow,
    QScrollArea,
    QTabBar,
    QTabWidget,
    QWidget,
)

Area = Qt.DockWidgetArea
LAYOUT_VERSION = 1  # bump when the default panes change: an older saved layout is dropped
NARROW_WIDTH = 1100  # below this, three columns leave no column usable: two instead

# Where a pane added with add_pane goes by default, by area: tabbed with the pane that
# already sits there, so that an extra pane never takes room from the editor or the chart.
TAB_WITH_BY_AREA = {Area.LeftDockWidgetArea: "prompt", Area.RightDockWidgetArea: "output"}


@dataclass(slots=True)
class Pane:
    name: str
    dock: QDockWidget
    area: Area
    tab_with: str | None  # the pane it shares tabs with in the default layout


class PaneHost(QMainWindow):
    """Holds the panes. The five core panes are laid out by name: schema, prompt, chart,
    settings, output; any other pane is tabbed beside `tab_with` or put in its area."""

    CORE = ("schema", "prompt", "chart", "settings", "output")

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("paneHost")
        self.setWindowFlags(Qt.WindowType.Widget)  # a child widget, not a second window
        self.setDockOptions(
            QMainWindow.DockOption.AnimatedDocks
            | QMainWindow.DockOption.AllowNestedDocks
            | QMainWindow.DockOption.AllowTabbedDocks
        )
        self.setDockNestingEnabled(True)
        self.setTabPosition(Area.AllDockWidgetAreas, QTabWidget.TabPosition.North)
        # Qt wants a central widget; a hidden one takes no room, so the docks fill the host.
        placeholder = QWidget(self)
        placeholder.hide()
        self.setCentralWidget(placeholder)
        self.panes: dict[str, Pane] = {}
        self._restored = False  # restore_layout has run
        self._saved_state: QByteArray | None = None  # the layout it restored, if any
        self._sizes_pending = False
        # The columns' widths as last measured, at the host width `_measured_at`: what a
        # resize of the host shares its change out by (see resizeEvent).
        self._column_widths: list[tuple[QDockWidget, int]] = []
        self._measured_at = 0
        self._measure = QTimer(self)
        self._measure.setSingleShot(True)
        self._measure.setInterval(0)  # once the layout has settled
        self._measure.timeout.connect(self._measure_columns)
        # A layout to restore once more when the host is back at the width it was saved at
        # (restore_at_width), and the timer that gives up waiting for that width.
        self._pending_restore: tuple[QByteArray, int] | None = None
        self._give_up_restore = QTimer(self)
        self._give_up_restore.setSingleShot(True)
        self._give_up_restore.setInterval(2000)
        self._give_up_restore.timeout.connect(self._drop_pending_restore)

    # --- panes -------------------------------------------------------------------------
    def add_pane(
        self, name: str, title: str, widget: QWidget, area: Area, tab_with: str | None = None
    ) -> QDockWidget:
        if name in self.panes:
            raise ValueError(f"a pane named {name!r} exists already")
        dock = QDockWidget(title, self)
        dock.setObjectName(f"pane_{name}")  # saveState keys the layout by object name
        if not isinstance(widget, QFrame):  # a frame would be drawn inside the margin
            widget.setContentsMargins(6, 0, 6, 6)  # the dock itself has none
        dock.setWidget(widget)
        dock.installEventFilter(self)  # its resizes: see eventFilter
        dock.toggleViewAction().setText(title)
        dock.toggleViewAction().setStatusTip(f"Show or hide the {title} pane")
        if tab_with is None and name not in self.CORE:
            tab_with = TAB_WITH_BY_AREA.get(area)
        pane = Pane(name, dock, area, tab_with)
        self.panes[name] = pane
        # Panes added before the layout is restored are placed by it. One added after
        # takes its saved place if it had one, its default place otherwise.
        if name not in self.CORE and self._restored and not self._restore_saved(dock):
            self._place_extra(pane)
        return dock

    def dock(self, name: str) -> QDockWidget:
        return self.panes[name].dock

    def show_pane(self, name: str) -> None:
        """Show a pane and bring its tab to the front."""
        dock = self.dock(name)
        dock.show()
        dock.raise_()

    def event(self, event: QEvent) -> bool:
        # Qt makes a tab bar for each group of tabbed panes, eliding their names to fit
        # ("Explana…"): whole names, and scroll buttons where they do not fit (issue 27).
        if event.type() == QEvent.Type.ChildPolished:
            bar = event.child()
            if isinstance(bar, QTabBar):
                bar.setElideMode(Qt.TextElideMode.ElideNone)
                bar.setUsesScrollButtons(True)
                bar.setExpanding(False)
        return super().event(event)

    # --- columns keep their share of the width ---------------------------------------------
    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        # A pane resized while the host keeps its width: a divider moved, a pane shown or
        # hidden, the layout reset. Its new widths are measured once the layout settles.
        if event.type() == QEvent.Type.Resize and self.width() == self._measured_at:
            self._measure.start()
        return False

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        # Qt has laid the docks out for the new width already, giving the whole change to
        # the left column (the central widget that would take it is hidden). Each column
        # gets its share instead, in proportion to its width before.
        old, new = self._measured_at, self.width()
        docks = [dock for dock, _ in self._column_widths]
        if self._pending_restore is not None and self._pending_restore[1] == new:
            self.restoreState(self._pending_restore[0])  # the sizes as saved, at their width
            self._drop_pending_restore()
        elif old > 0 and new != old and docks and all(self._in_view(d) for d in docks):
            widths = [width for _, width in self._column_widths]
            room = sum(widths) + new - old
            sizes = [max(1, round(w * room / sum(widths))) for w in widths]
            self.resizeDocks(docks, sizes, Qt.Orientation.Horizontal)
        self._measured_at = new
        self._measure.start()

    def restore_at_width(self, state: QByteArray, width: int) -> None:
        """restoreState now, and once more when the host is `width` wide again, the width
        the state was saved at: a layout restored while the window is wider (leaving full
        screen) is laid out for that width first and then shrunk, and would not come back
        as it was."""
        self.restoreState(state)
        if self.width() != width:
            self._pending_restore = (state, width)
            self._give_up_restore.start()

    def _drop_pending_restore(self) -> None:
        self._pending_restore = None
        self._give_up_restore.stop()

    def _measure_columns(self) -> None:
        if self.width() != self._measured_at:
            return  # a resize is under way: resizeEvent measures again after it
        columns = self.columns()
        self._column_widths = [(column[0], column[0].width()) for column in columns or ()]

    def columns(self) -> list[list[QDockWidget]] | None:
        """The visible docked panes grouped by the column they stand in, left to right
        (tabbed panes count by the tab in front); None when the panes do not stand in plain
        columns (one spans two, say), which are then left to Qt."""
        by_left: dict[int, list[QDockWidget]] = {}
        for pane in self.panes.values():
            if self._in_view(pane.dock):
                by_left.setdefault(pane.dock.x(), []).append(pane.dock)
        columns = [by_left[x] for x in sorted(by_left)]
        right = -1
        for column in columns:
            if len({dock.width() for dock in column}) != 1 or column[0].x() <= right:
                return None
            right = column[0].geometry().right()
        return columns

    def _in_view(self, dock: QDockWidget) -> bool:
        """Docked and on show: Qt keeps a tab that is not in front visible, moved out of
        the host's rectangle."""
        return (
            dock.isVisible()
            and not dock.isFloating()
            and dock.parent() is self
            and self.rect().contains(dock.geometry())
        )

    # --- layout ------------------------------------------------------------------------
    def reset_layout(self) -> None:
        """The default arrangement, for the host's current width; every pane visible."""
        for pane in self.panes.values():
            self.removeDockWidget(pane.dock)
        d = {name: self.panes[name].dock for name in self.CORE}
        narrow = self.window().width() < NARROW_WIDTH
        left, right = Area.LeftDockWidgetArea, Area.RightDockWidgetArea
        self.addDockWidget(left, d["schema"])
        self.splitDockWidget(d["schema"], d["prompt"], Qt.Orientation.Vertical)
        self.addDockWidget(right, d["chart"])
        if narrow:
            # Two columns; stacked, the chart's two plots would get a few pixels each, so
            # the chart, the output and the settings share the right column as tabs.
            self.tabifyDockWidget(d["chart"], d["output"])
            self.tabifyDockWidget(d["output"], d["settings"])
        else:
            self.addDockWidget(right, d["settings"])
            self.splitDockWidget(d["chart"], d["settings"], Qt.Orientation.Horizontal)
            self.splitDockWidget(d["settings"], d["output"], Qt.Orientation.Vertical)
        for pane in self.panes.values():
            pane.dock.setFloating(False)
            pane.dock.show()
            if pane.name not in self.CORE:
                self._place_extra(pane)
        for name in ("prompt", "output", "chart"):  # the tabs a new user needs first
            d[name].raise_()
        self._size_default(d, narrow)
        # Before the first show Qt lays the docks out again from their size hints: the
        # default sizes are set once more when the window shows.
        self._sizes_pending = not self.isVisible()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self._sizes_pending:
            self._sizes_pending = False
            QTimer.singleShot(0, self._apply_default_sizes)

    def _apply_default_sizes(self) -> None:
        d = {name: self.panes[name].dock for name in self.CORE}
        self._size_default(d, self.window().width() < NARROW_WIDTH)

    def _restore_saved(self, dock: QDockWidget) -> bool:
        """Put a pane created after restore_layout where the saved layout had it."""
        return self._saved_state is not None and self.restoreDockWidget(dock)

    def _place_extra(self, pane: Pane) -> None:
        anchor = self.panes.get(pane.tab_with) if pane.tab_with else None
        if anchor is not None and anchor.dock.parent() is self:
            self.tabifyDockWidget(anchor.dock, pane.dock)
            anchor.dock.raise_()  # an added pane does not cover the one it joins
        else:
            self.addDockWidget(pane.area, pane.dock)

    def _size_default(self, d: dict[str, QDockWidget], narrow: bool) -> None:
        # The window, not the host: before the first show the host has no size of its own.
        width, height = max(self.window().width(), 600), max(self.window().height() - 90, 400)

        def split(docks: list[str], total: int, shares: list[int], how: Qt.Orientation) -> None:
            sizes = [total * share // sum(shares) for share in shares]
            self.resizeDocks([d[name] for name in docks], sizes, how)

        across, down = Qt.Orientation.Horizontal, Qt.Orientation.Vertical
        if narrow:
            split(["schema", "chart"], width, [1, 1], across)
        else:
            split(["schema", "chart", "settings"], width, [30, 43, 27], across)
            form = d["settings"].widget().sizeHint().height() + 30  # + the title bar
            self.resizeDocks([d["settings"], d["output"]], [form, height - form], down)
        split(["schema", "prompt"], height, [3, 2], down)

    def save_layout(self) -> QByteArray:
        return self.saveState(LAYOUT_VERSION)

    def _names_every_pane(self, state: QByteArray) -> bool:
        """Whether a saved layout places every pane there is now. Qt leaves a pane that a
        layout saved before it existed heaped on the others' places, so such a layout is
        dropped. The state holds each dock's object name as UTF-16."""
        saved = bytes(state.data())
        return all(p.dock.objectName().encode("utf-16-be") in saved for p in self.panes.values())

    def restore_layout(self, state: QByteArray | None) -> bool:
        """Bring back a saved layout; the default one when there is none or it is from an
        older version. True when the saved one was used."""
        self._restored = True
        if (
            state is not None
            and self._names_every_pane(state)
            and self.restoreState(state, LAYOUT_VERSION)
        ):
            self._saved_state = state
            return True
        self.reset_layout()
        return False


def scrolled(widget: QWidget) -> QScrollArea:
    """The widget in a frameless scroll area: its pane can then be made smaller than the
    widget's own minimum size (a form of settings) without squeezing its neighbours."""
    area = QScrollArea()
    area.setWidget(widget)
    area.setWidgetResizable(True)
    area.setFrameShape(QFrame.Shape.NoFrame)
    return area
