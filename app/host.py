"""What a feature of the window (demonstration, suites, engines, crash recovery, routing) may
ask of it: the narrow API Spyder gives its plugins, never the whole main window.

A feature adds panes and menu actions, says things in the status bar and reports problems in
the banner; it reads and changes the run on screen through the session (app/session.py) and
starts runs through the run methods. The views it links are named in `views`
(app/views.py).
MainWindow is the one Host; a test may be another.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import Qt

if TYPE_CHECKING:
    from PySide6.QtGui import QAction
    from PySide6.QtWidgets import QDockWidget, QMainWindow, QMenu, QToolBar, QWidget

    from app.decoding.worker import RunController
    from app.session import Session
    from app.settings.store import SettingsStore
    from app.shell.panes import PaneHost
    from app.views import Views
    from engine.runs.saved import SavedRun
    from engine.settings import GenerationSettings


class Host(Protocol):
    session: Session
    controller: RunController
    store: SettingsStore
    views: Views
    panes: PaneHost  # the dock area, which presentation mode rearranges

    # --- panes, menus, messages ------------------------------------------------------------
    def widget(self) -> QMainWindow:
        """The window, as the parent of a feature's dialogs."""
        ...

    def add_pane(
        self,
        name: str,
        title: str,
        widget: QWidget,
        area: Qt.DockWidgetArea,
        tab_with: str | None = None,
    ) -> QDockWidget: ...

    def show_pane(self, name: str) -> None: ...

    def pane(self, name: str) -> QDockWidget: ...

    def menu(self, title: str) -> QMenu:
        """The menu titled so ("File", "Run", "View", "Examples"); another title adds a new
        menu before Help."""
        ...

    def add_action(self, menu: str, action: QAction, before: str = "", after: str = "") -> None:
        """Add `action` to a menu: before the entry whose text is `before`, or after the one
        whose text is `after`, else at its end."""
        ...

    def action(self, name: str) -> QAction:
        """One of the window's own actions: "run", "stop"."""
        ...

    def toolbar(self) -> QToolBar: ...

    def show_status(self, text: str, ms: int = 0) -> None: ...

    def report_problem(self, title: str, message: str) -> None: ...

    # --- runs ------------------------------------------------------------------------------
    def run(self, paused: bool = False) -> bool: ...

    def start_run(
        self,
        schema_text: str,
        prompt: str,
        generation: GenerationSettings,
        forced: tuple[int, ...] = (),
        paused: bool = False,
        subject: str = ...,
    ) -> bool: ...

    def stop(self) -> None: ...

    def show_run(self, run: SavedRun, subject: str = ...) -> None: ...

    def hold_runs(self, held: bool) -> None:
        """While a feature uses the model (a suite run), Run and the automatic rerun wait."""
        ...

    def inputs_now(self) -> dict[str, object]:
        """The editors' schema and prompt and the settings, as a run would take them."""
        ...
