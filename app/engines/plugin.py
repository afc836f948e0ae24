"""The Engines pane in the window: under the schema editor (tabbed with the prompt, as the
Problems pane is), fed by the schema editor's text and the known instances of the suite open
in the Suite pane, and View > Go to Engines (Ctrl+Alt+E) to show it with the keyboard on its
list. Installed by one call, install_engines(window);
it reaches the window only through its public attributes and methods.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, QTimer
from PySide6.QtGui import QAction, QKeySequence

from app.engines.pane import EnginesPane
from app.suite.instances_table import InstanceRow
from engine.suite.format import Instance

if TYPE_CHECKING:
    from app.main_window import MainWindow

SHOW_KEYS = "Ctrl+Alt+E"


class Engines(QObject):
    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        suite = window.suites.pane.editor  # app/suite/plugin.py, installed before this
        self.pane = EnginesPane(
            window.schema_editor.editor, instances=lambda: suite_instances(suite.instances.rows)
        )
        suite.sig_changed.connect(self.pane.suite_changed)
        dock = window.add_pane(
            "engines", "Engines", self.pane, Qt.DockWidgetArea.LeftDockWidgetArea
        )
        # A dock tab brought to the front: the pane checks what it skipped while behind.
        dock.visibilityChanged.connect(lambda on: on and QTimer.singleShot(0, self.pane.catch_up))
        tip = "Show the Engines pane: what each production engine does with the schema"
        self.show_action = QAction("Go to &Engines", self)
        self.show_action.setShortcut(QKeySequence(SHOW_KEYS))
        self.show_action.setToolTip(tip)
        self.show_action.setStatusTip(tip)
        self.show_action.triggered.connect(lambda _c=False: self.show())
        # Right after the pane's own toggle in View.
        entries = window.view_menu.actions()
        at = entries.index(dock.toggleViewAction()) if dock.toggleViewAction() in entries else -1
        if 0 <= at < len(entries) - 1:
            window.view_menu.insertAction(entries[at + 1], self.show_action)
        else:
            window.view_menu.addAction(self.show_action)

    def show(self) -> None:
        self.window.panes.show_pane("engines")
        self.pane.focus_list()


def suite_instances(rows: list[InstanceRow]) -> tuple[Instance, ...]:
    """The Instances tab's rows as the suite file will hold them: JSON data, or raw text."""
    out = []
    for row in rows:
        found = row.to_json()
        out.append(Instance(found["valid"], found.get("data"), found.get("text"), row.description))
    return tuple(out)


def install_engines(window: MainWindow) -> Engines:
    return Engines(window)
