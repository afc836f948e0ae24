"""A short Suite pane keeps every line of its run bar's message and of the verdict below it.
Seen at 1280x800: "Done in 0.1 s, 10 from the cache" wrapped onto a second line, Qt's
layouts left that line out of the pane's minimum height, and it took the room from the
results: the verdict's last line was cut off."""

from __future__ import annotations

from PySide6.QtCore import QSize

from tests.app.shell_window import open_window

VERDICT = (
    "<b>Passed</b>: 4 thresholds hold (5 of 10 samples failing their case, within the "
    "thresholds)<br>10 samples of 5 cases, 5 failing their case · validity 100% · truncated "
    "0% · fields 50% · valid mass mean 1.000, min 0.989 · overruled 0, forced 10 · p50 438 "
    "ms, p95 510 ms · 1112 tokens/s"
)


def test_a_two_line_message_and_the_verdict_both_keep_their_lines(qtbot, store, monkeypatch):
    window = open_window(qtbot, store, monkeypatch)
    window.resize(QSize(1280, 800))
    window.panes.reset_layout()
    window.suites.open_bundled("currency")
    window.panes.dock("schema").hide()  # a tall Suite dock: no scrolling to make room
    window.panes.dock("suite").raise_()
    qtbot.wait(100)
    pane = window.suites.pane
    pane.splitter.setSizes([pane.splitter.height() - 150, 150])  # the results squeezed
    qtbot.wait(50)
    pane.eta.setText("The model is busy with another run: stop it first. " * 2)
    pane.results._say(VERDICT)
    eta, summary = pane.eta, pane.results.summary
    line = eta.fontMetrics().lineSpacing()
    qtbot.waitUntil(lambda: summary.height() >= summary.heightForWidth(summary.width()))
    assert eta.heightForWidth(eta.width()) >= 2 * line  # the message takes two lines
    assert eta.height() >= eta.heightForWidth(eta.width())
    assert summary.heightForWidth(summary.width()) >= 4 * line
    table = pane.results.table
    assert table.height() >= table.minimumHeight() > 0  # the header and a row


def test_the_message_line_leaves_no_blank_row_while_it_says_nothing(qtbot, store, monkeypatch):
    window = open_window(qtbot, store, monkeypatch)
    window.suites.open_bundled("currency")
    eta = window.suites.pane.eta
    assert not eta.isVisibleTo(window.suites.pane)  # before a first run: no row at all
    eta.setText("Done in 0.1 s")
    assert eta.isVisibleTo(window.suites.pane)
    eta.setText("")
    assert not eta.isVisibleTo(window.suites.pane)
