"""File > Export Bundle on the real model: the suite runs first (progress and Cancel in the
Suite pane), the bundle is written with `maskscope export`'s code and its hashes hold; a
second export takes the last run instead of running again; a folder the bundle cannot go
to is refused before any run, and a cancelled run writes nothing. Also: the last run saved
as a result and compared with itself. The suite is one case, tiny samples."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QFileDialog

from app.main_window import MainWindow
from engine.suite.cache import RunCache
from engine.suite.format import Thresholds
from tests.small_suite import currency_cut

RUN_TIMEOUT_MS = 180_000


def _tiny(window: MainWindow, tmp_path: Path, samples: int = 1) -> None:
    suite = currency_cut(samples=samples, thresholds=Thresholds(min_validity=0.5))
    window.suites.pane.editor.set_suite(suite, None)
    window.suites.pane.cache = RunCache(tmp_path / "cache")


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _answer_folder(monkeypatch: pytest.MonkeyPatch, folder: Path) -> None:
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda *a, **k: str(folder))


def test_export_bundle_runs_the_suite_writes_a_bundle_whose_hashes_hold(
    qtbot, window: MainWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _tiny(window, tmp_path)
    suites, pane = window.suites, window.suites.pane
    out = tmp_path / "bundle"
    _answer_folder(monkeypatch, out)
    assert suites.actions["export-bundle"] in window.file_menu.actions()
    with qtbot.waitSignal(window.controller.sig_suite_ended, timeout=RUN_TIMEOUT_MS):
        suites.actions["export-bundle"].trigger()
        assert pane.running and pane.cancel_button.isEnabled()  # progress and Cancel
    # The bundle is written off the GUI thread once the run ended (export_bundle.py).
    qtbot.waitUntil(lambda: not suites.bundle_export.writing, timeout=RUN_TIMEOUT_MS)
    box = suites.bundle_export.done_box
    assert box is not None and box.isVisible()
    manifest = json.loads((out / "hashes.json").read_text(encoding="utf-8"))
    on_disk = {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()}
    assert set(manifest["files"]) == on_disk - {"hashes.json"}
    assert {"schema.json", "grammar.gbnf", "suite.json", "report.json", "README.md"} <= on_disk
    for name, sha in manifest["files"].items():
        assert _sha(out / name) == sha, name
    assert manifest["tested"]["schema_sha256"] == _sha(out / "schema.json")
    assert manifest["tested"]["grammar_sha256"] == _sha(out / "grammar.gbnf")
    run = pane.suite_run
    assert run is not None
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert [s["text"] for s in report["samples"]] == [s.result.text for s in run.samples]
    word = "PASSED" if run.samples[0].valid else "FAILED"
    assert word in box.windowTitle()

    opened: list[str] = []
    monkeypatch.setattr(QDesktopServices, "openUrl", lambda url: opened.append(url.toLocalFile()))
    next(b for b in box.buttons() if b.text() == "Open Folder").click()
    assert opened == [str(out)]

    # Unchanged suite and model: the last run is the tested one, nothing runs again; a
    # folder with other files in it gets the bundle in a folder of its own.
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "notes.txt").write_text("mine", encoding="utf-8")
    _answer_folder(monkeypatch, docs)
    with qtbot.waitSignal(suites.bundle_export.sig_done, timeout=RUN_TIMEOUT_MS):
        suites.actions["export-bundle"].trigger()
    assert not pane.running and pane.suite_run is run
    inner = docs / "currency-bundle"
    assert (inner / "hashes.json").is_file() and (docs / "notes.txt").read_text() == "mine"
    assert _sha(inner / "report.json") == _sha(out / "report.json")

    # The last run as a result file, and compared with itself: nothing regressed.
    saved = tmp_path / "result.json"
    assert suites.save_result(str(saved))
    assert json.loads(saved.read_text())["samples"][0]["run_key"] == run.samples[0].run_key
    suites.suite_menu.aboutToShow.emit()
    assert suites.actions["compare-last"].isEnabled()
    assert suites.compare_last_run(str(saved))
    view = suites.compare_view
    assert view is not None and not view.comparison.regressed
    assert view.cases.item(0, 0).text() == "same"


def test_an_unwritable_folder_is_refused_before_the_run_and_a_cancel_writes_nothing(
    qtbot, window: MainWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _tiny(window, tmp_path, samples=2)
    suites, pane = window.suites, window.suites.pane
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder", encoding="utf-8")
    _answer_folder(monkeypatch, blocker / "bundle")
    suites.actions["export-bundle"].trigger()
    assert "Cannot export the bundle: cannot write to" in window.last_report
    assert not pane.running and pane.suite_run is None  # refused before any run

    out = tmp_path / "bundle"
    _answer_folder(monkeypatch, out)
    pane.use_cache.setChecked(False)
    window.controller.sig_suite_progress.connect(lambda p: p.done == 1 and pane.cancel())
    with qtbot.waitSignal(window.controller.sig_suite_ended, timeout=RUN_TIMEOUT_MS):
        suites.actions["export-bundle"].trigger()
    assert pane.suite_run is not None and pane.suite_run.cancelled
    assert "no bundle written" in window.last_report
    assert not out.exists()  # the folder the export made for it is gone again
    assert suites.bundle_export.done_box is None
