"""Writing a bundle compiles the grammar and consults the judge: that runs on the
background helper (app/background.py), and the window answers events meanwhile, its Run
held and the Suite pane's bar busy. Deterministic: the writing waits on an event the test
sets, so nothing depends on how fast the machine is."""

from __future__ import annotations

import threading
from pathlib import Path
from types import SimpleNamespace

import pytest
from PySide6.QtCore import QTimer

import app.suite.export_bundle as export_bundle
from app.settings.store import SettingsStore
from tests.app.shell_window import open_window
from tests.small_suite import currency_cut


def test_the_bundle_is_written_off_the_gui_thread(
    qtbot, store: SettingsStore, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    window = open_window(qtbot, store, monkeypatch)
    export, pane = window.suites.bundle_export, window.suites.pane
    monkeypatch.setattr(export, "_model", lambda: object())  # no model: one stands in
    release, threads = threading.Event(), []

    def tested_of(_model: object, _suite: object, _run: object) -> SimpleNamespace:
        threads.append(threading.current_thread())
        if threading.current_thread() is not threading.main_thread():
            assert release.wait(60)  # the GUI thread goes on meanwhile
        return SimpleNamespace(exit_code=0)

    monkeypatch.setattr(export_bundle, "tested_of", tested_of)
    monkeypatch.setattr(export_bundle, "write_bundle", lambda out, tested: {"a.json": "00"})

    out = tmp_path / "bundle"
    assert export._write(currency_cut(), object(), out, made=False)
    assert threads and threads[0] is not threading.main_thread()
    ticked: list[bool] = []
    QTimer.singleShot(0, lambda: ticked.append(True))
    qtbot.waitUntil(lambda: bool(ticked))  # the event loop runs while the bundle is written
    assert export.writing and not window.run_action.isEnabled()
    assert not pane.run_button.isEnabled() and pane.progress.maximum() == 0  # busy
    assert "Writing the bundle" in pane.eta.text()
    assert not window.suites.actions["export-bundle"].isEnabled()

    with qtbot.waitSignal(export.sig_done, timeout=60_000) as done:
        release.set()
    assert done.args == [True]
    assert not export.writing and window.run_action.isEnabled() and pane.run_button.isEnabled()
    assert export.written == {"a.json": "00"}
    assert export.done_box is not None and export.done_box.isVisible()
    export.done_box.close()


def test_a_failed_writing_says_why_and_frees_the_window(
    qtbot, store: SettingsStore, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    window = open_window(qtbot, store, monkeypatch)
    export = window.suites.bundle_export
    monkeypatch.setattr(export, "_model", lambda: object())

    def tested_of(*_args: object) -> None:
        raise export_bundle.BundleError("a sample was decoded under another grammar")

    monkeypatch.setattr(export_bundle, "tested_of", tested_of)
    out = tmp_path / "bundle"
    out.mkdir()
    with qtbot.waitSignal(export.sig_done, timeout=60_000) as done:
        assert export._write(currency_cut(), object(), out, made=True)
    assert done.args == [False]
    assert "another grammar" in window.last_report
    assert not out.exists()  # the folder this export made is gone again
    assert not export.writing and window.run_action.isEnabled()
