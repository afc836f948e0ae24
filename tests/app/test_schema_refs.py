"""Multi-file schemas in the window: the live check reads the files a `$ref` names, Ctrl+click
on a `$ref` follows it (into another file, and back), and a `$ref` that leaves the folder is
one located Problem."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QTextCursor

from app.main_window import MainWindow
from app.workbench.problems_list import qt_length
from tests.app.shell_window import open_window
from tests.multi_file_schema import write_schema

CHECK_MS = 60_000


@pytest.fixture
def window(qtbot, store, monkeypatch) -> MainWindow:
    return open_window(qtbot, store, monkeypatch)


def _checked(qtbot, window: MainWindow) -> list:
    qtbot.waitUntil(window.schema_editor.is_current, timeout=CHECK_MS)
    return window.schema_editor.problems()


def _ctrl_click(qtbot, window: MainWindow, needle: str) -> None:
    """Ctrl+click inside the first `needle` of the text, as a user would."""
    edit = window.schema_editor.editor
    text = edit.toPlainText()
    cursor = QTextCursor(edit.document())
    cursor.setPosition(qt_length(text[: text.index(needle) + 2]))
    edit.setTextCursor(cursor)
    edit.ensureCursorVisible()
    spot = edit.cursorRect(cursor).center()
    qtbot.mouseClick(
        edit.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.ControlModifier, spot
    )


def _at(window: MainWindow) -> str:
    """The text selected where a click led: the target's key."""
    return window.schema_editor.editor.textCursor().selectedText()


def test_the_check_reads_the_files_and_ctrl_click_follows_refs(qtbot, window, tmp_path):
    main = write_schema(tmp_path)
    assert window.open_schema(str(main))
    assert not [p for p in _checked(qtbot, window) if p.severity == "error"]

    _ctrl_click(qtbot, window, '"#/$defs/x"')  # a pointer in the same file
    assert window.current_path == str(main) and _at(window) == '"x"'

    _ctrl_click(qtbot, window, '"defs/address.json"')  # another file: opened, at its root
    address = tmp_path / "defs" / "address.json"
    assert Path(window.current_path) == address.resolve()
    assert window.schema_root == str(tmp_path)  # still the folder the user opened
    assert window.schema_editor.editor.textCursor().selectionStart() == 0  # the root object
    # Its back-reference to ../main.json leaves defs/, but not the folder opened.
    assert not [p for p in _checked(qtbot, window) if p.severity == "error"]

    _ctrl_click(qtbot, window, '"../main.json#/$defs/x"')  # and back, to the pointer
    assert Path(window.current_path) == main.resolve()
    assert _at(window) == '"x"'


def test_a_ref_leaving_the_folder_is_one_located_problem(qtbot, window, tmp_path):
    (tmp_path / "outside.json").write_text('{"type": "string"}')
    team = tmp_path / "team"
    team.mkdir()
    path = team / "main.json"
    path.write_text('{\n  "properties": {\n    "a": {"$ref": "../outside.json"}\n  }\n}\n')
    assert window.open_schema(str(path))
    [problem] = _checked(qtbot, window)
    assert problem.severity == "error" and "leaves the folder" in problem.message
    assert (problem.line, problem.column) == (3, 11)
    _ctrl_click(qtbot, window, '"../outside.json"')  # not followed: the status bar says why
    assert window.current_path == str(path)
    assert "leaves the folder" in window.status.currentMessage()
