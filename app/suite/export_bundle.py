"""File > Export Bundle: the Suite pane's suite as the folder `maskscope export` writes
(engine/suite/bundle/export.py: schema, tested grammar, suite, reports, README, snippets, hashes).

A bundle states what was tested, so it is written from a finished run of exactly this suite
on this model: the pane's last run when neither changed since, else the suite is run first,
in the pane, with its progress bar, ETA and Cancel (samples already in the run cache are read
back, not decoded again). A cancelled run writes nothing. A folder the bundle cannot go to is
refused before the run, not after it. A folder that is neither empty nor an earlier bundle
gets the bundle in a new folder inside it, named after the suite.

Writing it compiles the grammar and consults the judge (a second or more for a large
schema): that happens on a background thread (app/background.py), the pane's bar busy and
the window's Run held meanwhile (it shares the model), so the window keeps answering.
"""

from __future__ import annotations

import contextlib
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, QUrl, Signal
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QFileDialog, QMessageBox

from app.background import start_daemon
from engine.errors import MaskscopeError
from engine.model.llama import Model
from engine.settings import ModelSettings
from engine.suite.bundle.export import (
    BundleError,
    Tested,
    bundle_folder_name,
    previous_bundle,
    tested_of,
    write_bundle,
)
from engine.suite.format import Suite
from engine.suite.run import SuiteRun

if TYPE_CHECKING:
    from app.host import Host
    from app.suite.suite_pane import SuitePane

VERDICT_WORDS = {0: "PASSED", 1: "FAILED", 2: "NO RESULT"}


def bundle_folder(chosen: Path, suite_name: str) -> Path:
    """Where the bundle goes: the chosen folder when it is empty, new or an earlier bundle,
    else a folder named after the suite inside it (a user picks "Documents", not a folder
    the bundle may fill)."""
    try:
        previous_bundle(chosen)
        return chosen
    except BundleError:
        if not chosen.is_dir():
            raise
    inner = chosen / bundle_folder_name(suite_name)
    previous_bundle(inner)  # refused too when it is a file or someone else's folder
    return inner


def check_writable(out: Path) -> bool:
    """Fail before the run: BundleError for a folder that cannot be made or written to.
    True when this call made the folder (removed again if no bundle comes)."""
    made = not out.exists()
    try:
        out.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=out):
            pass
    except OSError as exc:
        raise BundleError(f"cannot write to {out}: {exc.strerror or exc}") from None
    return made


class BundleExport(QObject):
    sig_done = Signal(bool)  # a bundle's writing ended: True when it was written
    sig_writing = Signal(bool)  # a bundle is being written (Export is held meanwhile)
    # From the writing thread to the GUI thread (queued): what was written, or why not.
    _sig_written = Signal(object, object, object, object)  # Tested, files, out, suite
    _sig_failed = Signal(str, object, bool)  # the reason, out, made

    def __init__(self, host: Host, pane: SuitePane) -> None:
        super().__init__(host.widget())
        self.host, self.pane = host, pane
        self._pending: tuple[Suite, Path, bool] | None = None  # waiting for the pane's run
        self.writing = False  # a bundle is being written on the background thread
        self._sig_written.connect(self._written)
        self._sig_failed.connect(self._write_failed)
        self.done_box: QMessageBox | None = None  # the last "exported" message
        self.written: dict[str, str] = {}  # the last bundle's files, path -> sha256
        self._failure = ""  # why the last suite run failed (a model that no longer loads)
        host.controller.sig_suite_error.connect(self._run_failed)
        host.controller.sig_suite_ended.connect(self._run_ended)

    def dialog(self) -> bool:
        suite = self._suite()
        if suite is None:
            return False
        folder = QFileDialog.getExistingDirectory(
            self.host.widget(), "Export the bundle to a folder"
        )
        return bool(folder) and self.export(suite, Path(folder))

    def _suite(self) -> Suite | None:
        self.host.show_pane("suite")
        suite = self.pane.editor.validate()  # says in the pane what is wrong
        if suite is None:
            self._problem("the suite has errors: see the Suite pane")
        elif not suite.cases:
            self._problem("the suite has no cases: there is nothing to test")
            return None
        return suite

    def export(self, suite: Suite, chosen: Path) -> bool:
        """Export `suite` to `chosen` (see bundle_folder); False, saying why, when it cannot
        even start. With a run to make first, the bundle is written once it has finished."""
        if self._pending is not None or self.pane.running or self.writing:
            self._problem("a suite is running: cancel it or wait for its end first")
            return False
        try:
            out = bundle_folder(chosen.expanduser(), suite.name)
            made = check_writable(out)
        except MaskscopeError as e:
            self._problem(e.message)
            return False
        run = self._tested_run(suite)
        if run is not None:
            return self._write(suite, run, out, made)
        self._pending = (suite, out, made)
        if not self.pane.run():  # the model is busy, or the suite changed meanwhile
            self._pending = None
            self._forget(out, made)
            self._problem(f"the suite could not start: {self.pane.eta.text() or 'see the pane'}")
            return False
        self.host.show_status(
            f"Running the suite {suite.name} before its export (Cancel in the Suite pane)…", 0
        )
        return True

    def _tested_run(self, suite: Suite) -> SuiteRun | None:
        """The pane's last run when it finished and tested this very suite on this model."""
        done = self.pane.suite_run
        same = (
            done is not None
            and not done.cancelled
            and self.pane.run_suite_of == suite
            and self.pane.run_model == self._model_settings()
            # else a run (from the cache) loads it again, as it does a model file that
            # changed or went away since: a bundle names the file its results came from
            and self._model() is not None
        )
        return done if same else None

    def _run_failed(self, _kind: str, message: str) -> None:
        self._failure = message  # comes just before sig_suite_ended

    def _run_ended(self) -> None:
        failure, self._failure = self._failure, ""
        if self._pending is None:
            return
        suite, out, made = self._pending
        self._pending = None
        done = self.pane.suite_run
        if done is None:  # the run failed: the pane says why too
            self._forget(out, made)
            self._problem(f"the suite could not run: {failure or 'see the Suite pane'}")
        elif done.cancelled:
            self._forget(out, made)
            self._problem(
                f"cancelled after {len(done.samples)} sample(s): no bundle written, since a "
                "bundle states a finished test (the finished samples are cached)"
            )
        else:
            self._write(suite, done, out, made)

    def _write(self, suite: Suite, run: SuiteRun, out: Path, made: bool) -> bool:
        """Start writing the bundle off the GUI thread; False, saying why, when it cannot."""
        model = self._model()
        if model is None:
            self._forget(out, made)
            self._problem("the model of that run is no longer loaded: export again")
            return False
        self._hold(True, f"Writing the bundle of {suite.name}: compiling and checking…")
        start_daemon(self._write_off_gui, "bundle-export", (model, suite, run, out, made))
        return True

    def _write_off_gui(
        self, model: Model, suite: Suite, run: SuiteRun, out: Path, made: bool
    ) -> None:
        """On the background thread: touches no widget, answers by the queued signals."""
        try:
            tested = tested_of(model, suite, run)
            files = write_bundle(out, tested)
        except MaskscopeError as e:
            answer: tuple = (self._sig_failed, e.message, out, made)
        except Exception as e:  # a harness error must reach the window, not kill a thread
            answer = (self._sig_failed, f"unexpected {type(e).__name__}: {e}", out, made)
        else:
            answer = (self._sig_written, tested, files, out, suite)
        signal, *args = answer
        with contextlib.suppress(RuntimeError):  # the window closed meanwhile
            signal.emit(*args)

    def _written(self, tested: Tested, files: dict[str, str], out: Path, suite: Suite) -> None:
        self._hold(False, "Bundle written")
        self.written = files
        word = VERDICT_WORDS.get(tested.exit_code, str(tested.exit_code))
        self.host.show_status(f"Exported the bundle of {suite.name} ({word}) to {out}", 0)
        self._say_done(out, word, suite.name)
        self.sig_done.emit(True)

    def _write_failed(self, message: str, out: Path, made: bool) -> None:
        self._hold(False, "No bundle written")
        self._forget(out, made)
        self._problem(message)
        self.sig_done.emit(False)

    def _hold(self, on: bool, text: str) -> None:
        """While the bundle is written: the pane's bar busy, Run and Export held (the
        writing reads the model the worker keeps), the window otherwise usable."""
        self.writing = on
        self.pane.hold(on, text)
        self.sig_writing.emit(on)

    def _model_settings(self) -> ModelSettings:
        return self.host.views.settings_panel.model_settings()

    def _model(self) -> Model | None:
        """The model the suite just ran on, as the worker keeps it between two jobs: the
        bundle reads its file's hash, its vocabulary size and its chat template, and
        decodes nothing."""
        return self.host.controller.loaded_model(self._model_settings())

    def _say_done(self, out: Path, word: str, name: str) -> None:
        text = f"The bundle of the suite {name} is in {out}: {len(self.written)} files."
        detail = {
            "PASSED": "Every threshold held.",
            "FAILED": "A threshold failed: the bundle's README and report say so.",
        }.get(word, "The run gave no verdict: the bundle's README says why.")
        box = QMessageBox(
            QMessageBox.Icon.Information, f"Bundle exported ({word})", text,
            QMessageBox.StandardButton.Close, self.host.widget(),
        )  # fmt: skip
        box.setTextFormat(Qt.TextFormat.PlainText)  # the suite's name and folder
        box.setInformativeText(
            f"{detail} Its README.md says what was tested and how to use each file."
        )
        opener = box.addButton("Open Folder", QMessageBox.ButtonRole.ActionRole)
        opener.clicked.connect(lambda: QDesktopServices.openUrl(QUrl.fromLocalFile(str(out))))
        if self.done_box is not None:
            self.done_box.close()
        self.done_box = box
        box.open()

    def _problem(self, message: str) -> None:
        self.host.report_problem("Cannot export the bundle", message)

    @staticmethod
    def _forget(out: Path, made: bool) -> None:
        """Remove the folder this export made for a bundle that did not come."""
        if made:  # a folder something was put in meanwhile is not ours to remove
            with contextlib.suppress(OSError):
                out.rmdir()
