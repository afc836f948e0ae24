"""Pause, Step and Continue in the window, on the real model: a run stepped through token by
token ends exactly as an uninterrupted one with the same seed."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QTextCursor

RUN_TIMEOUT_MS = 120_000


def _tokens(window) -> list[int]:
    return [r.token_id for r in window.step_chart.records]


def test_step_pause_and_continue_resume_the_run_exactly(qtbot, window, use_example, run_to_end):
    use_example(window, "currency", temperature=0.9, seed=5, max_tokens=30)
    run_to_end(window)
    uninterrupted, text = _tokens(window), window.last_result.text
    pacing = window.demo.pacing

    pacing.step()  # idle: starts a paused run and decodes its first token
    qtbot.waitUntil(lambda: len(window.step_chart.records) == 1, timeout=RUN_TIMEOUT_MS)
    assert window.controller.running and pacing.paused
    assert pacing.pause_action.isChecked() and pacing.pause_action.text() == "&Continue"
    assert "Paused" in window.status.currentMessage()
    qtbot.wait(300)
    assert len(window.step_chart.records) == 1  # paused: no token until the next Step

    window.step_chart.setFocus()
    qtbot.keyClick(window.step_chart, Qt.Key.Key_Right)  # → steps
    qtbot.waitUntil(lambda: len(window.step_chart.records) == 2, timeout=RUN_TIMEOUT_MS)
    qtbot.wait(200)
    assert len(window.step_chart.records) == 2

    with qtbot.waitSignal(window.sig_run_ended, timeout=RUN_TIMEOUT_MS):
        qtbot.keyClick(window.step_chart, Qt.Key.Key_Space)  # Space continues
    assert _tokens(window) == uninterrupted
    assert window.last_result.text == text
    assert not pacing.pause_action.isEnabled() and not pacing.pause_action.isChecked()


def test_stop_while_paused_ends_the_run_and_the_next_run_is_not_paused(
    qtbot, window, use_example, run_to_end
):
    use_example(window, "currency", max_tokens=20)
    window.demo.pacing.step()
    qtbot.waitUntil(lambda: len(window.step_chart.records) == 1, timeout=RUN_TIMEOUT_MS)
    with qtbot.waitSignal(window.sig_run_ended, timeout=10_000):
        window.stop()
    assert window.last_result.finish_reason.value == "cancelled"
    run_to_end(window)  # no Step needed: the pacer was released when the run ended
    assert window.last_result.n_tokens > 1


def test_space_still_types_in_the_editors(qtbot, window):
    editor = window.prompt_pane.editor
    editor.setFocus()
    editor.moveCursor(QTextCursor.MoveOperation.End)
    before = editor.toPlainText()
    qtbot.keyClick(editor, Qt.Key.Key_Space)
    assert editor.toPlainText() == before + " "


def test_the_speed_is_remembered(qtbot, window, store):
    window.demo.pacing.speed.setCurrentIndex(3)
    assert window.controller.pacer.delay_s == 0.5 and store.step_delay() == 0.5
