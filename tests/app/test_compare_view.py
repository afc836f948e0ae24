"""The Compare pane: the diff's coloured spans, the mass plot and the first-difference line."""

from __future__ import annotations

from PySide6.QtGui import QGuiApplication, QTextCursor, QTextFormat
from step_records import token_record

from app.compare.previous import EMPTY, CompareView, divergence_text
from app.theme import chart_colors
from engine.records import FinishReason, RunResult
from engine.runs.compare import ChosenToken, Divergence
from engine.runs.saved import SavedRun

_record = token_record


def _run(schema: str, pieces: list[tuple[int, str, float]], seed: int = 0) -> SavedRun:
    records = tuple(_record(i, t, p, m) for i, (t, p, m) in enumerate(pieces))
    text = "".join(p for _, p, _ in pieces)
    result = RunResult(text, FinishReason.GRAMMAR_COMPLETE, len(records), settings={"seed": seed})
    return SavedRun(schema, "prompt", "gemma.gguf", records, result)


BEFORE = _run("A", [(1, '{"c": "', 1.0), (2, "USD", 0.9), (3, '"}', 1.0)])
AFTER = _run("B", [(1, '{"c": "', 1.0), (4, "EUR", 0.3), (3, '"}', 0.95)])


def _formats(view: CompareView) -> list[tuple[str, bool, str]]:
    """(character, struck out, background colour name) for each character of the diff."""
    doc = view.diff.document()
    out = []
    for i in range(doc.characterCount() - 1):
        cursor = QTextCursor(doc)
        cursor.setPosition(i + 1)  # the format of the character before the cursor
        fmt = cursor.charFormat()
        has_background = fmt.hasProperty(QTextFormat.Property.BackgroundBrush)
        color = fmt.background().color().name() if has_background else ""
        out.append((doc.characterAt(i), fmt.fontStrikeOut(), color))
    return out


def test_the_diff_strikes_out_old_words_and_marks_new_ones(qtbot):
    view = CompareView()
    qtbot.addWidget(view)
    view.compare(BEFORE, AFTER)
    chars = _formats(view)
    assert "".join(c for c, _, _ in chars) == '{"c": "USDEUR"}'
    colors = chart_colors()
    struck = "".join(c for c, s, _ in chars if s)
    assert struck == "USD"
    assert all(bg == colors.bad.name() for c, s, bg in chars if s)
    inserted = "".join(c for c, s, bg in chars if bg == colors.ok.name())
    assert inserted == "EUR"
    unmarked = "".join(c for c, s, bg in chars if not s and not bg)
    assert unmarked == '{"c": ""}'


def test_the_lines_and_the_plot(qtbot):
    view = CompareView()
    qtbot.addWidget(view)
    assert view.changed.text() == EMPTY
    view.compare(BEFORE, AFTER)
    assert view.divergence.text() == (
        "First different choice at step 2 (counting from 1): 'USD' (the previous run) vs "
        "'EUR' (this run)"
    )
    assert "schema" in view.changed.text() and "3 → 3 tokens" in view.changed.text()
    assert "at 1 step (2)" in view.shifts.text()
    x, y = view.after_curve.getData()
    assert list(x) == [1, 2, 3] and list(y) == [1.0, 0.3, 0.95]
    x, y = view.before_curve.getData()
    assert list(y) == [1.0, 0.9, 1.0]
    sx, sy = view.shift_marker.getData()
    assert list(sx) == [2] and list(sy) == [0.3]
    assert view.divergence_line.isVisible() and view.divergence_line.value() == 2
    items = len(view.plot.getPlotItem().items)

    # The same run again: no divergence, no line, the same plot items re-fed.
    view.compare(AFTER, AFTER)
    assert view.divergence.text() == "Both runs chose the same 3 tokens."
    assert "nothing" in view.changed.text()
    assert not view.divergence_line.isVisible()
    assert len(view.plot.getPlotItem().items) == items
    assert view.diff.toPlainText() == AFTER.result.text


def test_copy_diff_puts_a_unified_diff_on_the_clipboard(qtbot):
    view = CompareView()
    qtbot.addWidget(view)
    assert not view.copy_button.isEnabled()
    view.compare(_run("A", [(1, "a\n", 1.0)]), _run("A", [(2, "b\n", 1.0)], seed=1))
    assert "seed 0 → 1" in view.changed.text()
    view.copy_button.click()
    text = QGuiApplication.clipboard().text()
    assert "-a\n" in text and "+b\n" in text


def test_divergence_where_a_run_had_ended():
    text = divergence_text(Divergence(4, ChosenToken(9, "}", "}"), None), 4)
    assert text == (
        "First different choice at step 5 (counting from 1): '}' (the previous run) vs "
        "nothing (this run had ended)"
    )
