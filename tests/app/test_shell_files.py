"""Files in the window: Save as adds .json, the title names a loaded example, a dropped
schema opens, and unsaved changes are asked about before they would be replaced."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QTimer, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QApplication, QFileDialog, QLineEdit, QMessageBox

from app.main_window import MainWindow
from app.shell.files import Unsaved, ask_save_path, ask_unsaved, with_json_suffix
from engine.examples import load_example
from tests.app.shell_window import open_window


@pytest.fixture
def window(qtbot, store, monkeypatch) -> MainWindow:
    return open_window(qtbot, store, monkeypatch)


def _answer(monkeypatch, window: MainWindow, answer: Unsaved) -> list[str]:
    """Answer the unsaved-changes question with `answer`, and record what it was asked
    before. Patched: the real question is a modal box (driven by a timer further down)."""
    asked: list[str] = []

    def ask(before: str) -> Unsaved:
        asked.append(before)
        return answer

    monkeypatch.setattr(window, "ask_unsaved", ask)
    return asked


def _edit(window: MainWindow) -> None:
    window.schema_editor.editor.appendPlainText(" ")
    assert window.isWindowModified()


def test_bare_names_get_json() -> None:
    assert with_json_suffix("/tmp/myschema") == "/tmp/myschema.json"
    assert with_json_suffix("/tmp/a.schema.json") == "/tmp/a.schema.json"
    assert with_json_suffix("/tmp/notes.txt") == "/tmp/notes.txt"


def test_save_dialog_adds_json(qtbot, tmp_path: Path) -> None:
    # The dialog is modal: a timer types the name into it and presses Enter, as a user.
    def type_name() -> None:
        dialog = QApplication.activeModalWidget()
        assert isinstance(dialog, QFileDialog)
        name = dialog.findChild(QLineEdit, "fileNameEdit")
        name.setText("myschema")
        qtbot.keyClick(name, Qt.Key.Key_Return)

    QTimer.singleShot(200, type_name)
    path = ask_save_path(None, "Save schema as", str(tmp_path), "JSON Schema (*.json)")
    assert path == str(tmp_path / "myschema.json")


def test_save_as_writes_the_name_asked(window: MainWindow, monkeypatch, tmp_path) -> None:
    target = tmp_path / "kept.json"
    monkeypatch.setattr(window, "ask_schema_path", lambda: str(target))
    window.schema_editor.set_text('{"type": "integer"}')
    assert window.save_schema_as()
    assert target.read_text(encoding="utf-8") == '{"type": "integer"}'
    assert window.windowTitle() == "kept.json[*] — Maskscope"


def test_title_names_the_example_until_edited(window: MainWindow) -> None:
    window.load_example(load_example("currency"))
    assert window.windowTitle() == "Example: Invoice currency (enum)[*] — Maskscope"
    assert not window.isWindowModified()
    _edit(window)
    window.undo_action.trigger()  # back to the example as loaded: not modified
    assert not window.isWindowModified()


def test_example_over_unsaved_changes_asks(window: MainWindow, monkeypatch, tmp_path) -> None:
    mine = '{"type": "string", "minLength": 3}'
    window.schema_editor.set_text(mine)
    asked = _answer(monkeypatch, window, Unsaved.CANCEL)
    window.load_example(load_example("person"))
    assert asked == ["loading the example"] and window.schema_editor.text() == mine

    target = tmp_path / "mine.json"
    _answer(monkeypatch, window, Unsaved.SAVE)
    monkeypatch.setattr(window, "ask_schema_path", lambda: str(target))
    window.load_example(load_example("person"))
    assert target.read_text(encoding="utf-8") == mine  # saved first, then replaced
    assert '"Person' in window.schema_editor.text()

    _edit(window)
    _answer(monkeypatch, window, Unsaved.DISCARD)
    window.load_example(load_example("currency"))
    assert "currency" in window.schema_editor.text()


def test_opening_a_file_over_unsaved_changes_asks(window: MainWindow, monkeypatch, tmp_path):
    other = tmp_path / "other.json"
    other.write_text('{"type": "null"}', encoding="utf-8")
    _edit(window)
    asked = _answer(monkeypatch, window, Unsaved.CANCEL)
    assert not window.open_schema(str(other))
    assert asked == ["opening another schema"]
    assert window.schema_editor.text() != '{"type": "null"}'
    _answer(monkeypatch, window, Unsaved.DISCARD)
    assert window.open_schema(str(other))


def test_closing_over_unsaved_changes_asks(qtbot, window: MainWindow, monkeypatch) -> None:
    _edit(window)
    asked = _answer(monkeypatch, window, Unsaved.CANCEL)
    window.close()
    assert asked == ["closing"] and window.isVisible()
    _answer(monkeypatch, window, Unsaved.DISCARD)
    window.close()
    assert not window.isVisible()


def test_the_question_is_a_real_box(qtbot) -> None:
    # exec() blocks until answered: a timer clicks Discard on the box once it shows.
    def click_discard() -> None:
        box = QApplication.activeModalWidget()
        assert isinstance(box, QMessageBox) and "not saved" in box.text()
        qtbot.mouseClick(box.button(QMessageBox.StandardButton.Discard), Qt.MouseButton.LeftButton)

    QTimer.singleShot(200, click_discard)
    assert ask_unsaved(None, "untitled schema", "closing") is Unsaved.DISCARD


def _drop(target, path: Path) -> None:
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(path))])
    actions = Qt.DropAction.CopyAction
    enter = QDragEnterEvent(
        QPoint(10, 10), actions, mime, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier
    )
    QApplication.sendEvent(target, enter)
    drop = QDropEvent(
        QPointF(10, 10), actions, mime, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier
    )
    QApplication.sendEvent(target, drop)


def test_a_dropped_schema_opens(window: MainWindow, tmp_path: Path) -> None:
    dropped = tmp_path / "dropped.json"
    dropped.write_text('{"type": "boolean"}', encoding="utf-8")
    _drop(window, dropped)
    assert window.schema_editor.text() == '{"type": "boolean"}'
    assert window.current_path == str(dropped)
    again = tmp_path / "again.schema.json"
    again.write_text('{"type": "array"}', encoding="utf-8")
    _drop(window.schema_editor.editor.viewport(), again)  # onto the editor: opened, not pasted
    assert window.schema_editor.text() == '{"type": "array"}'
    notes = tmp_path / "notes.txt"
    notes.write_text("x", encoding="utf-8")
    _drop(window, notes)
    assert window.current_path == str(again)


def test_first_start_and_a_restart_name_the_example(qtbot, store, monkeypatch) -> None:
    first = open_window(qtbot, store, monkeypatch)  # no draft yet: the first example
    assert first.windowTitle() == "Example: Invoice currency (enum)[*] — Maskscope"
    first.load_example(load_example("person"))
    first.close()
    again = open_window(qtbot, store, monkeypatch)
    assert again.windowTitle() == "Example: Person (name first)[*] — Maskscope"
    assert again.current_path is None  # Save still asks for a name
