"""The Engines pane with a suite open in the window: the suite's known instances go through
each engine for real (check's workers: llama.cpp's sampler, XGrammar's matcher,
outlines-core's Index, llguidance), off the GUI thread, and the Suite column counts the ones
each gets wrong. The schema and instances are tests/engine/test_engines_wrong.py's, whose
verdicts were read off the same real engines: XGrammar lets through an instance that matches
both of an overlapping oneOf's branches and refuses a key in an object whose only name is
in `required`; Maskscope gets none wrong.
"""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from app.engines.pane import SUITE_COLUMN, entry_of
from engine.suite.format import Instance, Suite
from tests.app.test_engines_pane import CHECK_MS, rows
from tests.engine.test_engines_report import SPLIT
from tests.engine.test_engines_wrong import INSTANCES

FEED_MS = 180_000  # two check workers load the model; outlines-core builds its Index


def _suite() -> Suite:
    instances = tuple(
        Instance(i["valid"], i.get("data"), i.get("text"), i["description"]) for i in INSTANCES
    )
    return Suite(name="split", schema_text=SPLIT, prompt="A price.", instances=instances)


@pytest.mark.slow  # two check workers load the model; about 90 s on 2 busy cores
def test_the_suite_column_counts_each_engines_wrong_instances(qtbot, window) -> None:
    pane = window.engines.pane
    window.engines.show()
    window.schema_editor.editor.setPlainText(SPLIT)
    qtbot.waitUntil(pane.is_current, timeout=CHECK_MS)
    assert pane.tree.isColumnHidden(SUITE_COLUMN)  # no suite open: no column

    statuses: list[str] = []
    pane.sig_shown.connect(lambda: statuses.append(pane.status.text()))
    window.suites.pane.editor.set_suite(_suite(), None)  # the pane hears of it by itself
    qtbot.waitUntil(lambda: pane.is_current() and not pane.feeding, timeout=FEED_MS)
    assert any("feeding the suite's 4 instances…" in s for s in statuses)  # shown first
    assert not pane.tree.isColumnHidden(SUITE_COLUMN)

    shown = rows(pane)
    cells = {target: item.text(SUITE_COLUMN) for target, item in shown.items()}
    assert cells == {
        "llamacpp": "1",
        "vllm-xgrammar": "2",
        "vllm-guidance": "–",  # it refuses the schema
        "outlines": "1",
        "openai": "–",  # no local engine
        "maskscope": "0",
    }
    xgrammar = shown["vllm-xgrammar"]
    entries = [entry_of(xgrammar.child(i)) for i in range(xgrammar.childCount())]
    wrong = [(e.kind, e.keyword) for e in entries if e.kind in ("accepts", "rejects")]
    assert wrong == [("accepts", "#1"), ("rejects", "#4")]
    assert xgrammar.child(0).text(0) == (
        "Known-bad instance #1 (two oneOf branches) accepted: the engine does not enforce "
        "`oneOf` at $.properties.kind"
    )
    pane.tree.setCurrentItem(xgrammar)
    assert pane.detail.text().endswith(
        "Suite instances: 1 known-bad accepted (#1), 1 known-good rejected (#4)."
    )
    assert pane.status.text().endswith(" · 4 wrong verdicts on the suite's instances")

    # A click on an instance leaves the schema's selection alone: it is in the Suite pane.
    cursor = window.schema_editor.editor.textCursor()
    pane.tree.setCurrentItem(xgrammar.child(0))
    qtbot.keyClick(pane.tree, Qt.Key.Key_Return)
    assert window.schema_editor.editor.textCursor().selectedText() == cursor.selectedText()
    assert pane.detail.text().endswith("The instances are in the Suite pane's Instances tab.")
