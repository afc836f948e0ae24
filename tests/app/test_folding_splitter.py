"""The Suite pane's splitter (app/suite/narrow.py): a part folded to nothing asks for no
room, so a scrolled dock around it stops scrolling over empty space, and unfolding the part
asks for its room again. A result file folds the suite editor; its summary's link brings it
back."""

from __future__ import annotations

import json

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QScrollArea, QWidget

from app.suite.narrow import FoldingSplitter
from app.suite.results_view import EDITOR_LINK


def _part(height: int) -> QWidget:
    part = QFrame()
    part.setMinimumHeight(height)
    return part


def test_a_folded_part_asks_for_no_room(qtbot) -> None:
    splitter = FoldingSplitter(Qt.Orientation.Vertical)
    splitter.addWidget(_part(300))
    splitter.addWidget(_part(150))
    area = QScrollArea()
    area.setWidget(splitter)
    area.setWidgetResizable(True)
    qtbot.addWidget(area)
    area.resize(300, 260)
    area.show()
    qtbot.waitExposed(area)
    unfolded = splitter.minimumSizeHint().height()
    assert unfolded >= 450
    qtbot.waitUntil(lambda: area.verticalScrollBar().maximum() > 0)  # 450 px in 260

    splitter.setCollapsible(0, True)
    splitter.setSizes([0, sum(splitter.sizes())])
    assert splitter.minimumSizeHint().height() == unfolded - 300
    qtbot.waitUntil(lambda: area.verticalScrollBar().maximum() == 0)  # the rest fits

    splitter.setSizes([300, 150])
    assert splitter.minimumSizeHint().height() == unfolded
    qtbot.waitUntil(lambda: area.verticalScrollBar().maximum() > 0)


def test_a_result_file_folds_the_editor_and_its_summary_brings_it_back(
    qtbot, window, tmp_path
) -> None:
    result = {
        "format": "maskscope-test-result", "version": 1, "suite": "s", "passed": True,
        "metrics": {"n_samples": 1}, "thresholds": [], "problems": [], "cases": [],
        "samples": [{"case": "c", "index": 0, "seed": 0, "text": "{}", "valid": True,
                     "truncated": False, "fields": [], "failures": [],
                     "metrics": {"mean_valid_mass": 1.0, "min_valid_mass": 1.0,
                                 "n_overruled": 0, "n_forced": 0, "latency_ms": 5.0}}],
    }  # fmt: skip
    path = tmp_path / "r.json"
    path.write_text(json.dumps(result), encoding="utf-8")
    window.show()
    qtbot.waitExposed(window)
    assert window.suites.open_result(str(path))
    pane = window.suites.pane
    qtbot.waitUntil(lambda: pane.splitter.sizes()[0] == 0)
    folded = pane.splitter.minimumSizeHint().height()
    assert "show the suite editor" in pane.results.summary.text()
    pane.results.summary.linkActivated.emit(EDITOR_LINK)
    assert pane.splitter.sizes()[0] > 0
    assert pane.splitter.minimumSizeHint().height() > folded  # the editor's room, asked again
