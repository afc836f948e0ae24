"""Token labels: whitespace shows as symbols, and every label fits its axis."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QFont, QFontMetrics
from step_chart_records import make_record, shown_chart

from app.chart.labels import LabelMaker, visible_text
from engine.records import Candidate


def _cand(text: str, piece: str | None, valid: bool = True) -> Candidate:
    return Candidate(id=1, text=text, p_raw=0.1, p_masked=0.1, valid=valid, piece=piece)


@pytest.mark.parametrize(
    ("text", "piece", "shown"),
    [
        ("␣", " ", "␣"),
        ("\\n", "\n", "↵"),
        ("\\t", "\t", "⇥"),
        ("\\n\\n", "\n\n", "↵↵"),
        ("␣" * 8, " " * 8, "␣×8"),
        ("\\n␣␣", "\n  ", "↵␣␣"),
        ("␣the", " the", "␣the"),
        ("\\n", "\\n", "\\n"),  # a backslash and an n, as inside a JSON string: no newline
        ("<0x20>", " ", "<0x20>"),  # a byte token reads apart from the ordinary space
        ("<0xE2>", "\ufffd", "<0xE2>"),  # part of a character
        ("\\n", None, "\\n"),  # saved without its piece: the display text
    ],
)
def test_whitespace_shows_as_symbols(text: str, piece: str | None, shown: str) -> None:
    assert visible_text(_cand(text, piece)) == shown


def test_labels_are_cut_to_the_axis_width_and_masked_ones_marked(qtbot) -> None:
    metrics = QFontMetrics(QFont())
    maker = LabelMaker(QFont(), 60)
    long = maker.label(_cand("abcdefghijklmnopqrstuvwxyz", "abcdefghijklmnopqrstuvwxyz"))
    assert long.endswith("…") and metrics.horizontalAdvance(long) <= 60
    assert maker.label(_cand("no", "no", valid=False)) == "✗no"


def test_whitespace_tokens_are_labelled_visibly_in_the_chart(qtbot) -> None:
    chart = shown_chart(qtbot)
    chart.push(make_record(0, (" ", "\n", "\t", "x")))
    chart.redraw()
    assert [label for _, label in chart.bars.token_axis.rows] == ["␣", "↵", "⇥", "x"]
