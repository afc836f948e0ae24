"""The Suite pane in the window, without the model: the Examples menu opens the bundled
suites, and the window's shortcuts act on the suite's tables while they have the focus."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QMessageBox

from app.main_window import MainWindow
from app.settings.store import SettingsStore
from app.suite.editor import SuiteEditor
from tests.app.shell_window import open_window

SUITE_ASK = SuiteEditor.ask_unsaved  # before tests/app/conftest.py answers it


@pytest.fixture
def window(qtbot, store: SettingsStore, monkeypatch: pytest.MonkeyPatch) -> MainWindow:
    return open_window(qtbot, store, monkeypatch)


def _examples(window: MainWindow) -> list[str]:
    menu = next(a.menu() for a in window.menuBar().actions() if a.text() == "E&xamples")
    return [a.text() for a in menu.actions() if a.text()]


def test_the_examples_menu_opens_the_bundled_suites_in_the_suite_pane(
    qtbot, window: MainWindow
) -> None:
    entries = _examples(window)
    assert entries[-2:] == ["Suite: Invoice currency", "Suite: Invoice with line items"]
    editor = window.suites.pane.editor
    window.suites.actions["invoice"].trigger()
    assert window.panes.dock("suite").isVisible()
    assert editor.title_name == "invoice" and editor.read_only
    assert [r.id for r in editor.cases.rows] == ["gbp-desks", "usd-cables", "eur-coffee"]
    assert window.suites.pane.progress.format() == "3 samples to run"
    window.suites.actions["currency"].trigger()
    assert editor.title_name == "currency" and editor.cases.rowCount() == 5


def test_unsaved_edits_are_kept_when_the_user_cancels(
    window: MainWindow, monkeypatch: pytest.MonkeyPatch
) -> None:
    suites = window.suites
    suites.open_bundled("currency")
    suites.pane.editor.cases.add_case()
    cancel = QMessageBox.StandardButton.Cancel
    monkeypatch.setattr(SuiteEditor, "ask_unsaved", SUITE_ASK)  # the real box, answered:
    monkeypatch.setattr(QMessageBox, "question", lambda *args: cancel)
    assert not suites.open_bundled("invoice")
    assert suites.pane.editor.title_name == "currency" and suites.pane.editor.modified
    suites.pane.editor.discard_edits()  # the window closes afterwards without asking


def test_undo_and_paste_keys_act_on_the_suite_tables_that_have_the_focus(
    qtbot, window: MainWindow
) -> None:
    window.suites.open_bundled("currency")
    editor = window.suites.pane.editor
    schema = window.schema_editor.text()
    editor.cases.setFocus()
    editor.cases.add_case()
    assert editor.cases.rowCount() == 6
    qtbot.keyClick(editor.cases, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert editor.cases.rowCount() == 5
    editor.tabs.setCurrentIndex(1)
    editor.instances.setFocus()
    QGuiApplication.clipboard().setText('{"currency": "AUD"}')
    n = editor.instances.rowCount()
    qtbot.keyClick(editor.instances, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)
    assert editor.instances.rowCount() == n + 1
    assert editor.instances.rows[-1].output == '{"currency": "AUD"}'
    assert window.schema_editor.text() == schema  # the window's Paste did not take it


def test_a_new_suite_takes_the_windows_schema_prompt_and_settings(
    qtbot, window: MainWindow
) -> None:
    window.schema_editor.set_text('{"type": "object", "properties": {"n": {"type": "integer"}}}')
    window.prompt_pane.set_text("Count the apples.\nJSON:\n")
    generation = window.settings_panel.generation_settings()
    qtbot.mouseClick(window.suites.new_button, Qt.MouseButton.LeftButton)
    suite = window.suites.pane.editor.build()
    assert suite.schema == {"type": "object", "properties": {"n": {"type": "integer"}}}
    assert suite.prompt == "Count the apples.\nJSON:\n"
    assert [c.id for c in suite.cases] == ["case-1"]
    assert suite.settings().max_tokens == generation.max_tokens
    assert (suite.compiler, suite.backend) == (generation.compiler, generation.backend)
    assert not window.suites.pane.editor.read_only and window.suites.pane.editor.path is None


def test_a_schema_that_is_not_json_makes_no_suite(window: MainWindow) -> None:
    window.suites.open_bundled("currency")
    window.schema_editor.set_text('{"type": ')
    assert not window.suites.new_from_window()
    assert window.suites.pane.editor.title_name == "currency"
    assert "Cannot make a suite of this schema" in window.last_report
