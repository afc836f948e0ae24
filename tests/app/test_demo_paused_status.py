"""While paused, the status bar counts the tokens on screen (issue 27, item 6: it read
"Paused after 0 tokens" with step 1 of 1 shown)."""

from __future__ import annotations

from PySide6.QtCore import Qt

RUN_TIMEOUT_MS = 120_000


def test_the_paused_count_is_the_tokens_on_screen(qtbot, window, use_example):
    use_example(window, "currency", temperature=0.9, seed=5, max_tokens=30)
    pacing = window.demo.pacing
    pacing.step()  # idle: starts a paused run and decodes its first token
    qtbot.waitUntil(lambda: len(window.step_chart.records) == 1, timeout=RUN_TIMEOUT_MS)
    qtbot.wait(100)
    assert window.status.currentMessage().startswith("Paused after 1 token:")
    window.step_chart.setFocus()
    qtbot.keyClick(window.step_chart, Qt.Key.Key_Right)  # → steps
    qtbot.waitUntil(lambda: len(window.step_chart.records) == 2, timeout=RUN_TIMEOUT_MS)
    qtbot.wait(100)
    assert window.status.currentMessage().startswith("Paused after 2 tokens:")
    with qtbot.waitSignal(window.sig_run_ended, timeout=RUN_TIMEOUT_MS):
        window.controller.stop()


def test_a_click_on_a_valid_candidate_never_forks_a_run_under_way(qtbot, window, use_example):
    use_example(window, "currency", temperature=0.9, seed=5, max_tokens=30)
    window.demo.pacing.step()  # a paused run with one token
    qtbot.waitUntil(lambda: len(window.step_chart.records) == 1, timeout=RUN_TIMEOUT_MS)
    record = window.step_chart.records[0]
    valid = next(c for c in record.top_masked if c.id != record.token_id)
    window.step_chart.sig_candidate_clicked.emit(0, valid)  # what a click on its row emits
    qtbot.wait(300)
    assert window.controller.running and window.demo.pacing.paused
    assert window.demo.branching.branches.original is None  # no branch was started
    assert window.status.currentMessage().startswith("Still running: Stop the run")
    with qtbot.waitSignal(window.sig_run_ended, timeout=RUN_TIMEOUT_MS):
        window.controller.stop()
