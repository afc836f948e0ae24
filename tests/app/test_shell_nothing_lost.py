"""The user's answer is what counts: Discard discards (across a restart), unsaved suite
edits are asked about and autosaved, and a second crash keeps the first one's work."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtGui import QTextDocument

from app.main_window import MainWindow
from app.settings.store import SettingsStore
from app.shell.autosave import AUTOSAVE_NAME, RECOVERED_NAME, Autosave, WorkState, read_state
from app.shell.files import Unsaved
from app.suite.editor import SuiteEditor
from engine.suite.load import load_suite
from tests.app.shell_window import open_window

SAVED = '{"type": "string", "maxLength": 5}\n'


def _answer_schema(monkeypatch, window: MainWindow, answer: Unsaved) -> list[str]:
    asked: list[str] = []
    monkeypatch.setattr(window, "ask_unsaved", lambda before: asked.append(before) or answer)
    return asked


def _answer_suite(monkeypatch, answer: Unsaved) -> list[str]:
    asked: list[str] = []
    monkeypatch.setattr(
        SuiteEditor, "ask_unsaved", lambda self, before: asked.append(before) or answer
    )
    return asked


def _crash(window: MainWindow) -> None:
    """What a crash leaves: the last autosave, dirty, and the lock free (see
    test_shell_autosave.py); the window is then closed without a clean mark."""
    autosave = window.crash_restore.autosave
    assert autosave.save_if_changed()
    autosave._timer.stop()
    autosave._lock.unlock()
    autosave.active = False


def test_discard_means_discard_across_a_restart(
    qtbot, store: SettingsStore, monkeypatch, tmp_path: Path
) -> None:
    schema = tmp_path / "mine.json"
    schema.write_text(SAVED, encoding="utf-8")
    window = open_window(qtbot, store, monkeypatch)
    assert window.open_schema(str(schema))
    window.schema_editor.editor.appendPlainText('"an edit the user drops"')
    assert window.isWindowModified()
    asked = _answer_schema(monkeypatch, window, Unsaved.DISCARD)
    window.close()
    assert asked == ["closing"] and not window.isVisible()
    assert schema.read_text(encoding="utf-8") == SAVED
    autosaved, clean = read_state(store.data_dir() / AUTOSAVE_NAME)
    assert clean and autosaved.schema == SAVED  # the autosave keeps no dropped edit either

    again = open_window(qtbot, store, monkeypatch)  # the next start: same settings, data
    assert again.current_path == str(schema)
    assert again.schema_editor.text() == SAVED
    assert not again.isWindowModified()
    asked = _answer_schema(monkeypatch, again, Unsaved.CANCEL)
    again.close()
    assert asked == [] and not again.isVisible()  # nothing unsaved: it quits at once


def _saved_suite(window: MainWindow, tmp_path: Path) -> tuple[SuiteEditor, Path]:
    """A suite of the window's own, saved to a file, then edited (one case added)."""
    editor = window.suites.pane.editor
    assert window.suites.new_from_window()
    path = tmp_path / "mine.suite.json"
    assert editor.save_to(str(path))
    editor.cases.add_case()
    assert editor.modified
    return editor, path


def test_quitting_over_unsaved_suite_edits_asks(
    qtbot, store: SettingsStore, monkeypatch, tmp_path: Path
) -> None:
    window = open_window(qtbot, store, monkeypatch)
    editor, path = _saved_suite(window, tmp_path)
    before = path.read_text(encoding="utf-8")
    asked = _answer_suite(monkeypatch, Unsaved.CANCEL)
    window.close()
    assert asked == ["closing"] and window.isVisible() and editor.modified

    asked = _answer_suite(monkeypatch, Unsaved.SAVE)
    window.close()
    assert asked == ["closing"] and not window.isVisible()
    assert path.read_text(encoding="utf-8") != before
    assert len(load_suite(str(path)).cases) == 2  # the added case went to the file


def test_discarded_suite_edits_leave_the_file_and_the_autosave(
    qtbot, store: SettingsStore, monkeypatch, tmp_path: Path
) -> None:
    window = open_window(qtbot, store, monkeypatch)
    editor, path = _saved_suite(window, tmp_path)
    before = path.read_text(encoding="utf-8")
    _answer_suite(monkeypatch, Unsaved.DISCARD)
    window.close()
    assert not window.isVisible() and not editor.modified
    assert path.read_text(encoding="utf-8") == before
    assert read_state(store.data_dir() / AUTOSAVE_NAME)[0].suite is None


def test_opening_another_suite_over_edits_offers_save(
    qtbot, store: SettingsStore, monkeypatch, tmp_path: Path
) -> None:
    window = open_window(qtbot, store, monkeypatch)
    editor, path = _saved_suite(window, tmp_path)
    asked = _answer_suite(monkeypatch, Unsaved.SAVE)
    assert window.suites.open_bundled("currency")
    assert asked == ["opening another suite"] and editor.title_name == "currency"
    assert len(load_suite(str(path)).cases) == 2  # saved before it was replaced


def test_unsaved_suite_edits_come_back_after_a_crash(
    qtbot, store: SettingsStore, monkeypatch, tmp_path: Path
) -> None:
    window = open_window(qtbot, store, monkeypatch)
    editor, path = _saved_suite(window, tmp_path)
    editor.prompt.setPlainText("Invoice: {{invoice}}")  # a case without it cannot be built
    editor.cases.add_case()
    assert editor.validate() is None  # mid-edit: its rows are kept as typed all the same
    rows, prompt = list(editor.cases.rows), editor.prompt.toPlainText()
    _crash(window)

    again = open_window(qtbot, store, monkeypatch)
    banner = again.restore_banner
    assert banner.isVisible() and "unsaved suite “suite”" in banner.label.text()
    banner.restore_button.click()
    restored = again.suites.pane.editor
    assert restored.cases.rows == rows and restored.prompt.toPlainText() == prompt
    assert restored.modified and restored.path == str(path)
    assert again.panes.dock("suite").isVisible()
    _answer_suite(monkeypatch, Unsaved.DISCARD)  # the teardown closes it


def test_a_second_crash_keeps_the_unanswered_recovery(qtbot, tmp_path: Path) -> None:
    def crashed_session(schema: str) -> Autosave:
        autosave = Autosave(tmp_path, lambda: WorkState(schema, ""))
        assert autosave.save_if_changed()
        autosave._timer.stop()
        autosave._lock.unlock()  # gone without a clean mark
        autosave.active = False
        return autosave

    crashed_session('{"first": 1}')
    second = crashed_session('{"second": 2}')  # its start kept the first, unanswered
    assert [s.schema for _p, s in second.pending] == ['{"first": 1}']
    third = Autosave(tmp_path, lambda: WorkState("{}", ""))
    assert [s.schema for _p, s in third.pending] == ['{"first": 1}', '{"second": 2}']
    assert third.recovered is not None and third.recovered.schema == '{"first": 1}'
    third.forget_recovered()
    assert third.recovered is not None and third.recovered.schema == '{"second": 2}'
    assert not (tmp_path / RECOVERED_NAME).exists()
    third.forget_recovered()
    assert third.recovered is None and not list(tmp_path.glob("recovered*.json"))


def test_the_banner_offers_each_crash_in_turn(qtbot, store: SettingsStore, monkeypatch) -> None:
    for text in ('{"const": "first"}', '{"const": "second"}'):
        window = open_window(qtbot, store, monkeypatch)
        window.schema_editor.set_text(text)
        _crash(window)
    window = open_window(qtbot, store, monkeypatch)
    banner = window.restore_banner
    assert banner.isVisible() and "1 more" in banner.label.text()
    banner.discard_button.click()
    assert banner.isVisible() and "more" not in banner.label.text()
    banner.restore_button.click()
    assert not banner.isVisible()
    assert window.schema_editor.text() == '{"const": "second"}'


@pytest.mark.parametrize("hostile", ["<img src=x>", "<a href='https://example.com'>x</a>"])
def test_the_banner_shows_a_hostile_file_name_literally(
    qtbot, store: SettingsStore, monkeypatch, tmp_path: Path, hostile: str
) -> None:
    window = open_window(qtbot, store, monkeypatch)
    window.crash_restore.banner.offer(WorkState("{}", "", path=f"/tmp/{hostile}.json"))
    shown = QTextDocument()
    shown.setHtml(window.restore_banner.label.text())
    assert f"/tmp/{hostile}.json" in shown.toPlainText()
