"""The window's side of autosave: what its state is, how it comes back, and the banner
that offers it after a crash (non-modal: the window is usable while it waits)."""

from __future__ import annotations

import contextlib
import dataclasses
import html
import time
from typing import TYPE_CHECKING, Any, Protocol

from PySide6.QtCore import QByteArray, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QWidget

from app.shell.autosave import Autosave, WorkState
from engine.settings import GenerationSettings

if TYPE_CHECKING:
    from app.settings.store import SettingsStore
    from app.shell.panes import PaneHost
    from app.views import Views


class SuiteState(Protocol):
    """The Suite pane's editor, as far as its work is autosaved."""

    def snapshot(self) -> dict[str, Any] | None: ...

    def restore_snapshot(self, data: dict[str, Any]) -> bool: ...


class Restorable(Protocol):
    """What crash recovery reads of the window and puts back: MainWindow is one."""

    store: SettingsStore
    views: Views
    panes: PaneHost
    current_path: str | None
    current_example: str | None

    def suite_state(self) -> SuiteState: ...

    def _set_path(self, path: str | None, example: str | None = None) -> None: ...

    def saveGeometry(self) -> QByteArray: ...

    def restoreGeometry(self, geometry: QByteArray) -> bool: ...


def snapshot(window: Restorable) -> WorkState:
    views = window.views
    return WorkState(
        schema=views.schema_editor.text(),
        prompt=views.prompt_pane.text(),
        path=window.current_path,
        example=window.current_example,
        settings=dataclasses.asdict(views.settings_panel.generation_settings()),
        layout={
            "panes": bytes(window.panes.save_layout().toBase64()).decode("ascii"),
            "window": bytes(window.saveGeometry().toBase64()).decode("ascii"),
        },
        suite=window.suite_state().snapshot(),
    )


def restore(window: Restorable, state: WorkState) -> None:
    """Put a recovered state back; the texts as undoable edits, marked as unsaved."""
    views = window.views
    views.schema_editor.set_text(state.schema)
    views.prompt_pane.set_text(state.prompt)
    window._set_path(state.path, state.example)
    views.schema_editor.editor.document().setModified(True)  # not what the file holds
    known = {f.name for f in dataclasses.fields(GenerationSettings)}
    settings = {k: v for k, v in state.settings.items() if k in known}
    with contextlib.suppress(TypeError, ValueError):  # another version's: the current stay
        views.settings_panel.set_generation_settings(GenerationSettings(**settings))
    if panes := state.layout.get("panes"):
        window.panes.restore_layout(QByteArray.fromBase64(panes.encode("ascii")))
    if geometry := state.layout.get("window"):
        window.restoreGeometry(QByteArray.fromBase64(geometry.encode("ascii")))
    if state.suite is not None and window.suite_state().restore_snapshot(state.suite):
        window.panes.show_pane("suite")


def _suite_name(snapshot: dict[str, Any]) -> str:
    data = snapshot.get("base")  # SuiteEditor.snapshot: the suite as its file had it
    name = data.get("name") if isinstance(data, dict) else None
    return f" “{name}”" if isinstance(name, str) and name else ""


class RestoreBanner(QFrame):
    """ "Maskscope did not quit cleanly … [Restore] [Discard]"."""

    pending = 1  # how many crashed states wait for an answer, this one included

    sig_restore = Signal()
    sig_discard = Signal()
    sig_discard_all = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("restoreBanner")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.label = QLabel(self)
        self.label.setWordWrap(True)
        self.restore_button = QPushButton("Restore", self)
        self.restore_button.setToolTip("Bring back the schema, prompt, settings and layout")
        self.discard_button = QPushButton("Discard", self)
        self.discard_button.setToolTip("Keep what is open now and forget the autosaved work")
        # Several crashes unanswered (each kept in turn): one click forgets them all.
        self.discard_all_button = QPushButton("Discard All", self)
        self.restore_button.clicked.connect(self.sig_restore)
        self.discard_button.clicked.connect(self.sig_discard)
        self.discard_all_button.clicked.connect(self.sig_discard_all)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 4, 4, 4)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.restore_button)
        layout.addWidget(self.discard_button)
        layout.addWidget(self.discard_all_button)
        self.hide()

    def offer(self, state: WorkState) -> None:
        when = time.strftime("%H:%M on %d %b", time.localtime(state.saved_at))
        what = state.path or (f"example “{state.example}”" if state.example else "untitled")
        if state.suite is not None:
            what += f"; unsaved suite{_suite_name(state.suite)}"
        more = f" ({left - 1} more after this one)" if (left := self.pending) > 1 else ""
        self.label.setText(
            f"<b>Maskscope did not quit cleanly.</b> Restore the work autosaved at {when} "
            f"(schema: {html.escape(what)})?{more}"  # a file's name is no markup
        )
        self.discard_all_button.setVisible(left > 1)
        self.discard_all_button.setToolTip(
            f"Keep what is open now and forget all {left} autosaved states"
        )
        self.show()


class CrashRestore:
    """Autosaves the window's state and offers a crashed session's state back."""

    def __init__(self, window: Restorable, banner: RestoreBanner) -> None:
        self._window, self.banner = window, banner
        self.autosave = Autosave(window.store.data_dir(), lambda: snapshot(window), banner)
        banner.sig_restore.connect(self.restore)
        banner.sig_discard.connect(self.discard)
        banner.sig_discard_all.connect(self.discard_all)

    def offer(self) -> bool:
        """Show the banner if a crashed session left work; True when it did."""
        if self.autosave.recovered is None:
            return False
        self.banner.pending = len(self.autosave.pending)
        self.banner.offer(self.autosave.recovered)
        return True

    def restore(self) -> None:
        if (state := self.autosave.recovered) is not None:
            restore(self._window, state)
        self._answered()

    def discard(self) -> None:
        self._answered()

    def discard_all(self) -> None:
        while self.autosave.recovered is not None:
            self.autosave.forget_recovered()
        self.banner.hide()

    def _answered(self) -> None:
        self.autosave.forget_recovered()
        if not self.offer():  # the next crash's work, if two crashed unanswered
            self.banner.hide()

    def quit_cleanly(self) -> None:
        self.autosave.mark_clean()
