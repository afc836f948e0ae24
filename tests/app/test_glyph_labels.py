"""Labels that never lie: a token whose characters no installed font draws reads as its
code points in the chart (the masked ✗ kept), the explanation and the timeline, while one a
fallback font covers keeps its text. No model needed.

The expectations depend on the machine's fonts, so each test first asks fontconfig (not
Qt, whose answer is what is under test) whether the script is covered, and skips if the
machine is not the kind the test is about.
"""

from __future__ import annotations

import shutil
import subprocess

import pytest
from PySide6.QtCore import QPoint
from PySide6.QtGui import QFont, QFontMetrics
from step_chart_records import candidates, make_record, shown_chart

from app.chart.candidate_bars import candidate_tooltip
from app.chart.labels import LabelMaker
from app.decoding.output_view import OutputView
from app.decoding.token_spans import step_tooltip
from app.demo.explanation_panel import ExplanationPanel
from app.glyphs import quoted, shown
from engine.records import Candidate

VIRAMA_BHA = "\u094d\u092d"  # a Gemma token: Devanagari's virama, then the letter bha
BHA_AA = "\u092d\u093e"  # bha with the vowel sign aa
HAN = "\u4e2d"  # 中


def _fonts_for(lang: str) -> bool | None:
    """Whether fontconfig lists a font for `lang`; None when fc-list is not installed."""
    fc_list = shutil.which("fc-list")
    if fc_list is None:
        return None
    out = subprocess.run([fc_list, f":lang={lang}"], capture_output=True, text=True, check=True)
    return bool(out.stdout.strip())


no_devanagari = pytest.mark.skipif(
    _fonts_for("hi") is not False, reason="needs a machine without a Devanagari font"
)
has_han = pytest.mark.skipif(not _fonts_for("zh"), reason="needs a font for Chinese")


@no_devanagari
@has_han
def test_chart_labels_show_code_points_and_keep_the_masked_mark(qtbot) -> None:
    maker = LabelMaker(QFont(), 400)  # wide enough for nothing to be cut
    masked, valid, han, spaced = candidates(("✗" + VIRAMA_BHA, BHA_AA, HAN, " " + BHA_AA))
    assert maker.label(masked) == "✗U+094D U+092D"
    assert maker.label(valid) == "U+092D U+093E"
    # Whitespace stays a symbol: tokens that start with a space still differ once cut.
    assert maker.label(spaced) == "␣U+092D U+093E"
    assert "<b>U+0020 U+092D U+093E</b>" in candidate_tooltip(spaced)  # the space's own
    assert maker.label(han) == HAN  # drawn by a fallback font (Droid Sans Fallback): its text
    # In the chart, code points are cut to the label column like any long token (about 12
    # characters), the ✗ first; the bar's tooltip gives them all.
    chart = shown_chart(qtbot)
    chart.push(make_record(0, ("a", "✗" + VIRAMA_BHA, BHA_AA, HAN)))
    chart.redraw()
    labels = [label for _, label in chart.bars.token_axis.rows]
    assert labels[0] == "a" and labels[3] == HAN
    assert labels[1].startswith("✗U+094D") and labels[2].startswith("U+092D")
    assert "<b>U+094D U+092D</b>" in candidate_tooltip(masked)


def test_a_leading_mark_gets_a_dotted_circle_not_the_masked_mark(qtbot) -> None:
    # U+0301 (combining acute) is in every DejaVu font: drawable, but alone it would sit on
    # the ✗ before it.
    cand = Candidate(id=1, text="\u0301a", p_raw=0.1, p_masked=0.0, valid=False, piece="\u0301a")
    assert LabelMaker(QFont(), 200).label(cand) == "✗\u25cc\u0301a"


@no_devanagari
def test_hover_texts_name_the_code_points(qtbot) -> None:
    assert quoted(VIRAMA_BHA) == "U+094D U+092D"
    assert quoted("a'b") == '"a\'b"'  # drawable: quoted as before
    assert shown("\ue000") == "U+E000"  # private use: no font here has a glyph for it


@no_devanagari
def test_the_explanation_shows_code_points(qtbot) -> None:
    panel = ExplanationPanel()
    qtbot.addWidget(panel)
    panel.resize(900, 700)
    panel.show()
    qtbot.waitExposed(panel)
    records = [make_record(0, (" " + VIRAMA_BHA, "b", "✗ " + BHA_AA))]
    panel.show_step(records, 0, 262_144, 1.0, None)
    assert "U+0020 U+094D U+092D" in panel.title.text()
    assert "U+0020 U+094D U+092D" in panel.output.toPlainText()
    assert "U+094D U+092D" in panel.chosen_label.text()
    assert VIRAMA_BHA not in panel.title.text() + panel.output.toPlainText()
    assert panel.table.item(2, 0).text() == "U+0020 U+092D U+093E"
    panel.show_why(records[0].top_raw[2])
    why = panel.why_label.text()
    assert "U+0020 U+092D U+093E" in why and BHA_AA not in why


@no_devanagari
def test_the_timeline_tooltip_shows_code_points(qtbot) -> None:
    view = OutputView()
    qtbot.addWidget(view)
    view.resize(520, 360)
    view.show()
    qtbot.waitExposed(view)
    records = [make_record(0, ("a", "b")), make_record(1, (" " + VIRAMA_BHA, "b"))]
    view.start_run()
    for r in records:
        view.append_record(r)
    view._flush()  # what the flush timer runs
    center = view.raw.span_rects(*view.raw.span(1))[0].center().toPoint()
    tip = view.raw.tooltip_at(center)
    assert "chose <b>U+0020 U+094D U+092D</b>" in tip
    assert step_tooltip(records[0], 2).count("'a'") == 1  # a drawable token keeps its quotes
    assert view.raw.toPlainText() == "a " + VIRAMA_BHA  # the output text itself is kept
    assert view.raw.tooltip_at(QPoint(-50, -50)) == ""


@no_devanagari
def test_code_points_widen_the_label_column_and_are_cut_between_code_points(qtbot) -> None:
    """A column of about 12 characters cut '✗␣U+094D U+092D' to '✗␣U+094D U+…' (issue 26)."""
    metrics = QFontMetrics(QFont())
    wide = metrics.horizontalAdvance("✗␣U+094D U+092D U+092D…") + 2
    maker = LabelMaker(QFont(), 60, wide)
    two, four = candidates(("✗ " + VIRAMA_BHA, "✗ " + VIRAMA_BHA + BHA_AA))
    assert maker.label(two) == "✗␣U+094D U+092D"  # wider than 60 px, and whole
    assert maker.label(four) == "✗␣U+094D U+092D U+092D…"  # cut after a whole code point
    plain = candidates(("abcdefghijklmnopqrstuvwxyz",))[0]
    assert metrics.horizontalAdvance(maker.label(plain)) <= 60  # others keep the column
    # In the chart the column grows to the widest label in view, and keeps that width for
    # the rest of the run, so that the bars do not move from step to step.
    chart = shown_chart(qtbot)
    axis = chart.bars.token_axis
    usual = axis.minimumWidth()
    chart.push(make_record(0, ("{", "✗ " + VIRAMA_BHA, "✗ " + BHA_AA + VIRAMA_BHA[1])))
    chart.redraw()
    labels = [label for _, label in axis.rows]
    assert labels[1:] == ["✗␣U+094D U+092D", "✗␣U+092D U+093E…"]  # the tooltip has all
    assert axis.minimumWidth() > usual
    assert all(chart.bars._labels.width(label) <= axis.minimumWidth() - 12 for label in labels)
    widened = axis.minimumWidth()
    chart.push(make_record(1, ("a", "b")))
    chart.redraw()
    assert axis.minimumWidth() == widened
    chart.bars.reset()  # a new run
    assert axis.minimumWidth() == usual
