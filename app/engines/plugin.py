"""The Engines pane in the window: under the schema editor (tabbed with the prompt, as the
Problems pane is), fed by the schema editor's text and the known instances of the suite open
in the Suite pane (the session's, app/session.py), and View > Go to Engines (Ctrl+Alt+E) to
show it with the keyboard on its list. Installed by one call, install_engines(host); it gets
the window's Host API (app/host.py), never the window itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, QTimer
from PySide6.QtGui import QAction, QKeySequence

from app.engines.pane import EnginesPane

if TYPE_CHECKING:
    from app.host import Host

SHOW_KEYS = "Ctrl+Alt+E"


class Engines(QObject):
    def __init__(self, host: Host) -> None:
        super().__init__(host.widget())
        self.host = host
        session = host.session
        self.pane = EnginesPane(
            host.views.schema_editor.editor, instances=lambda: session.suite_instances
        )
        session.sig_suite.connect(self.pane.suite_changed)
        dock = host.add_pane("engines", "Engines", self.pane, Qt.DockWidgetArea.LeftDockWidgetArea)
        # A dock tab brought to the front: the pane checks what it skipped while behind.
        dock.visibilityChanged.connect(lambda on: on and QTimer.singleShot(0, self.pane.catch_up))
        tip = "Show the Engines pane: what each production engine does with the schema"
        self.show_action = QAction("Go to &Engines", self)
        self.show_action.setShortcut(QKeySequence(SHOW_KEYS))
        self.show_action.setToolTip(tip)
        self.show_action.setStatusTip(tip)
        self.show_action.triggered.connect(lambda _c=False: self.show())
        # Right after the pane's own toggle in View.
        host.add_action("View", self.show_action, after=dock.toggleViewAction().text())

    def show(self) -> None:
        self.host.show_pane("engines")
        self.pane.focus_list()


def install_engines(host: Host) -> Engines:
    return Engines(host)
