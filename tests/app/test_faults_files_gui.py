"""File faults in the window, with no model: a full or unwritable disk when saving a schema,
a run, a suite or a report, and corrupt files opened as a schema, a run or a suite. Each
is a message in the window (the banner, or the Suite pane's line), the old file stays
whole, and what the editors hold is untouched. The faults are made as tests/disk_faults.py
says; tests/engine/test_faults_*.py hold every file kind on the command line."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from app.main_window import MainWindow
from app.shell.exports import export_report
from engine.errors import MaskscopeError
from engine.runs.saved import load_run
from engine.suite.bundled import load_bundled_suite
from tests.disk_faults import assert_old_file_whole, fill_the_disk, old_file, read_only_path
from tests.modelless_window import modelless_window

RUN = Path(__file__).parents[1] / "data" / "runs" / "currency-v2.json"
EDITED = '{"type": "string", "maxLength": 3}'


@pytest.fixture(scope="module")
def shared(qapp, tmp_path_factory: pytest.TempPathFactory) -> Iterator[MainWindow]:
    """One window for the module: no test here runs the model, and each starts with the
    banner hidden."""
    with modelless_window(tmp_path_factory) as window:
        yield window


@pytest.fixture
def win(shared: MainWindow) -> MainWindow:
    shared.banner.hide()
    shared.schema_editor.editor.document().setModified(False)
    return shared


def _banner(window: MainWindow) -> str:
    assert window.banner.isVisible()
    return window.banner.label.text()


def test_schema_saved_to_a_full_disk(win: MainWindow, tmp_path, monkeypatch) -> None:
    target = old_file(tmp_path, "schema.json")
    assert win.open_schema(str(target))
    win.schema_editor.editor.appendPlainText(EDITED)  # an edit, as typing makes one
    edited = win.schema_editor.text()
    fill_the_disk(monkeypatch)
    assert not win.save_schema()
    assert "No space left on device" in _banner(win) and str(target) in _banner(win)
    assert_old_file_whole(target)
    assert win.isWindowModified() and win.schema_editor.text() == edited  # still unsaved


def test_schema_saved_where_nothing_can_be_written(win: MainWindow, tmp_path, monkeypatch):
    target = read_only_path(tmp_path, "schema.json")
    monkeypatch.setattr(win, "ask_schema_path", lambda: str(target))
    win.schema_editor.editor.setPlainText(EDITED)
    assert not win.save_schema_as()
    assert "Not a directory" in _banner(win) and win.current_path != str(target)


def test_run_and_report_saved_to_a_full_disk(win: MainWindow, tmp_path, monkeypatch) -> None:
    assert win.open_run(str(RUN))
    run_file, report = old_file(tmp_path, "run.json"), old_file(tmp_path, "report.html")
    fill_the_disk(monkeypatch)
    assert not win.save_run(str(run_file))
    assert "cannot write run file" in _banner(win) and "No space left" in _banner(win)
    with pytest.raises(MaskscopeError, match=r"cannot write report .*No space left"):
        export_report(load_run(RUN), str(report))
    assert_old_file_whole(run_file)
    assert_old_file_whole(report)


def test_suite_saved_to_a_full_disk(win: MainWindow, tmp_path, monkeypatch) -> None:
    editor = win.suites.pane.editor
    editor.set_suite(load_bundled_suite("currency"), None)
    target = old_file(tmp_path, "x.suite.json")
    fill_the_disk(monkeypatch)
    assert not editor.save_to(str(target))
    assert editor.message.isVisible() and "No space left" in editor.message.text()
    assert_old_file_whole(target)


@pytest.mark.parametrize(
    "content, words",
    [
        (b"\x89PNG\r\n\x1a\n\x00", "it is not UTF-8 text (byte 0x89 at offset 0)"),
        ('{"nàme": 1}'.encode("latin-1"), "it is not UTF-8 text (byte 0xE0 at offset 3)"),
    ],
)
def test_a_schema_file_that_is_not_text(win: MainWindow, tmp_path, content, words) -> None:
    path = tmp_path / "schema.json"
    path.write_bytes(content)
    win.schema_editor.editor.setPlainText(EDITED)
    assert not win.open_schema(str(path))
    assert words in _banner(win) and win.schema_editor.text() == EDITED


def test_a_schema_with_a_byte_order_mark_opens_without_it(win: MainWindow, tmp_path) -> None:
    path = tmp_path / "schema.json"
    path.write_bytes(b"\xef\xbb\xbf" + EDITED.encode())
    assert win.open_schema(str(path))
    assert win.schema_editor.text() == EDITED


@pytest.mark.parametrize(
    "content, words",
    [
        (RUN.read_bytes()[:5000], "not JSON"),
        (b"", "Expecting value"),
        (b'{"format": "maskscope-run", "version": 99}', "version 99 run file"),
    ],
)
def test_a_corrupt_run_file(win: MainWindow, tmp_path, content, words) -> None:
    path = tmp_path / "run.json"
    path.write_bytes(content)
    win.schema_editor.editor.setPlainText(EDITED)
    assert not win.open_run(str(path))
    assert words in _banner(win) and win.schema_editor.text() == EDITED


def test_a_corrupt_suite_file(win: MainWindow, tmp_path) -> None:
    editor = win.suites.pane.editor
    path = tmp_path / "x.suite.json"
    path.write_bytes(b"\x00\x01binary\xff")
    assert not editor.open_file(str(path))
    assert editor.message.isVisible()
    assert "Cannot open the suite" in editor.message.text()
    assert "not UTF-8" in editor.message.text()
