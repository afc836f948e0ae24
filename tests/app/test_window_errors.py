"""Bad input is reported in the window, never as a crash, and the user's text stays put."""

from __future__ import annotations

import pytest

from app.main_window import MainWindow
from app.workbench.problems_list import severity_color

RUN_TIMEOUT_MS = 120_000
BROKEN_JSON = (
    '{\n  "type": "object",\n  "properties": {\n    "a": {"type": "string"}\n  }\n  "x": 1\n}'
)


def test_invalid_json_is_marked_while_typing(qtbot, window: MainWindow) -> None:
    editor = window.schema_editor
    editor.editor.setPlainText(BROKEN_JSON)  # the debounced check runs without a call
    qtbot.waitUntil(lambda: editor.error_position is not None, timeout=20_000)
    line, column = editor.error_position
    assert line == 6 and column == 3
    # The error's home is the Problems list; the line under the editor points there.
    assert [(p.kind, p.line, p.column) for p in editor.problems()] == [("syntax", 6, 3)]
    assert "see Problems" in editor.message.text()
    assert editor.editor.extraSelections()  # the underline
    assert not window.run()  # Run refuses, and the output says why, pointing at the list
    assert not window.banner.isVisible()
    assert "see Problems" in window.output_view.not_run.text()
    assert window.last_error is not None and window.last_error[0] == "JSON syntax"
    assert editor.text() == BROKEN_JSON

    editor.editor.setPlainText('{"type": "object"}')
    qtbot.waitUntil(lambda: editor.error_position is None, timeout=20_000)  # it compiles
    bad = severity_color("error")
    assert all(s.format.underlineColor() != bad for s in editor.editor.extraSelections())


def test_invalid_schema_reported_on_run(qtbot, window: MainWindow) -> None:
    window.schema_editor.editor.setPlainText('{"type": 5}')
    assert not window.run()
    assert window.last_error is not None and window.last_error[0] == "invalid schema"
    assert "not run" in window.output_view.badge.text()
    assert not window.banner.isVisible()  # schema errors live in the Problems list
    qtbot.waitUntil(lambda: window.schema_editor.error_position is not None, timeout=20_000)
    assert any("5 is not" in p.message for p in window.schema_editor.problems())
    assert window.schema_editor.text() == '{"type": 5}'
    assert window.run_action.isEnabled()


def test_missing_model_reported(qtbot, window: MainWindow, tmp_path) -> None:
    window.settings_panel.model_path.setText(str(tmp_path / "missing.gguf"))
    with qtbot.waitSignal(window.sig_run_ended, timeout=RUN_TIMEOUT_MS):
        assert window.run()
    assert window.last_result is None
    kind, message = window.last_error
    assert kind == "model" and "missing.gguf" in message
    assert window.banner.isVisible()
    assert "model error" in window.output_view.badge.text()
    assert window.run_action.isEnabled()


@pytest.mark.slow
def test_corrupt_model_reported(qtbot, window: MainWindow, tmp_path) -> None:
    fake = tmp_path / "corrupt.gguf"
    fake.write_bytes(b"GGUF" + b"\0" * 60)
    window.settings_panel.model_path.setText(str(fake))
    with qtbot.waitSignal(window.sig_run_ended, timeout=RUN_TIMEOUT_MS):
        assert window.run()
    assert window.last_error is not None and window.last_error[0] == "model"
