"""The output as a timeline: tokens shaded by valid mass, forced and overruled marks, a
click selects a step, the selected step is outlined; no model needed."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QColor, QTextCharFormat, QTextCursor

from app.decoding import timeline_text
from app.decoding.output_view import OutputView
from app.decoding.token_spans import (
    DARK_RAMP,
    LIGHT_RAMP,
    shade_level,
    step_tooltip,
    token_spans,
)
from app.decoding.violations import Violation
from app.theme import chart_colors
from engine.records import Candidate, FinishReason, RunResult, StepRecord


def record(
    step: int, piece: str, mass: float, chars: int, n_valid: int = 5, top_masked: bool = False
) -> StepRecord:
    """A step that wrote `piece`; its model's top choice was masked when `top_masked`."""
    chosen = Candidate(step * 10 + 1, piece, 0.4, 1.0, True, piece)
    wanted = Candidate(step * 10 + 2, "The", 0.5, 0.0, False, "The")
    top = (wanted, chosen) if top_masked else (chosen,)
    return StepRecord(
        step=step,
        token_id=chosen.id,
        token_text=piece,
        token_piece=piece,
        top_raw=top,
        top_masked=(chosen,),
        valid_mass=mass,
        valid_mass_bound=0.0,
        n_valid=n_valid,
        n_valid_exact=True,
        entropy=1.0,
        forward_ms=1.0,
        mask_ms=0.1,
        output_chars=chars,
    )


def run_records() -> list[StepRecord]:
    """{"currency": "USD"} with a forced key and an overruled first token."""
    pieces = [
        ("{", 0.09, 3, True),
        ('"', 0.99, 45, False),
        ("currency", 0.008, 1, False),
        ('": "', 0.95, 7, False),
        ("USD", 0.6, 15, False),
        ('"}', 0.35, 4, False),
    ]
    records, chars = [], 0
    for step, (piece, mass, n_valid, masked) in enumerate(pieces):
        chars += len(piece)
        records.append(record(step, piece, mass, chars, n_valid, masked))
    return records


def result(text: str) -> RunResult:
    return RunResult(text=text, finish_reason=FinishReason.GRAMMAR_COMPLETE, n_tokens=6)


@pytest.fixture
def view(qtbot) -> OutputView:
    v = OutputView()
    qtbot.addWidget(v)
    v.resize(520, 360)
    v.show()
    qtbot.waitExposed(v)
    return v


def streamed(view: OutputView, records: list[StepRecord]) -> None:
    view.start_run()
    for r in records:
        view.append_record(r)
    view._flush()  # what the flush timer runs


def format_at(view: OutputView, position: int) -> QTextCharFormat:
    cursor = QTextCursor(view.raw.document())
    cursor.setPosition(position + 1)  # the format of the character before the cursor
    return cursor.charFormat()


def token_center(view: OutputView, index: int) -> QPoint:
    return view.raw.span_rects(*view.raw.span(index))[0].center().toPoint()


def test_shade_levels_follow_the_legend_bounds() -> None:
    assert [shade_level(m) for m in (1.0, 0.9, 0.89, 0.7, 0.5, 0.3, 0.1, 0.099, 0.0)] == [
        0,
        0,
        1,
        1,
        2,
        3,
        4,
        5,
        5,
    ]


def test_streamed_tokens_are_shaded_by_their_steps_valid_mass(view: OutputView) -> None:
    records = run_records()
    streamed(view, records)
    assert view.raw.toPlainText() == '{"currency": "USD"}'
    assert view.legend.isVisible() and "share of the model's preference" in view.legend.text()
    quote = format_at(view, 1)  # mass 0.99: left plain
    assert quote.background().style() == Qt.BrushStyle.NoBrush
    key = format_at(view, 2)  # "currency", mass 0.008: the strongest shade
    assert key.background().color() == QColor(LIGHT_RAMP[-1])
    usd = format_at(view, len('{"currency": "'))  # mass 0.6
    assert usd.background().color() == QColor(LIGHT_RAMP[1])


def test_a_forced_token_has_a_dotted_underline_and_others_none(view: OutputView) -> None:
    streamed(view, run_records())
    assert format_at(view, 2).underlineStyle() == QTextCharFormat.UnderlineStyle.DotLine
    assert format_at(view, 1).underlineStyle() == QTextCharFormat.UnderlineStyle.NoUnderline


def test_an_overruled_token_gets_a_red_corner_mark(view: OutputView, qtbot) -> None:
    streamed(view, run_records())
    qtbot.wait(10)
    image = view.raw.viewport().grab().toImage()
    corner = view.raw.span_rects(*view.raw.span(0))[0].topLeft().toPoint() + QPoint(1, 1)
    assert _near(image.pixelColor(corner), chart_colors().bad)
    plain = view.raw.span_rects(*view.raw.span(4))[0].topLeft().toPoint() + QPoint(1, 1)
    assert not _near(image.pixelColor(plain), chart_colors().bad)


def test_clicking_a_token_emits_its_step(view: OutputView, qtbot) -> None:
    streamed(view, run_records())
    with qtbot.waitSignal(view.sig_step_clicked) as blocker:
        qtbot.mouseClick(view.raw.viewport(), Qt.MouseButton.LeftButton, pos=token_center(view, 2))
    assert blocker.args == [2]
    with qtbot.waitSignal(view.sig_step_clicked) as blocker:
        qtbot.mouseClick(view.raw.viewport(), Qt.MouseButton.LeftButton, pos=token_center(view, 4))
    assert blocker.args == [4]


def test_dragging_to_select_text_emits_no_step(view: OutputView, qtbot) -> None:
    streamed(view, run_records())
    clicked: list[int] = []
    view.sig_step_clicked.connect(clicked.append)
    viewport = view.raw.viewport()
    qtbot.mousePress(viewport, Qt.MouseButton.LeftButton, pos=token_center(view, 0))
    qtbot.mouseMove(viewport, token_center(view, 4))
    qtbot.mouseRelease(viewport, Qt.MouseButton.LeftButton, pos=token_center(view, 4))
    assert clicked == [] and view.raw.textCursor().hasSelection()


def test_the_selected_step_is_outlined(view: OutputView, qtbot) -> None:
    streamed(view, run_records())
    rect = view.raw.span_rects(*view.raw.span(4))[0]
    edge = [QPoint(round(rect.left()) + dx, round(rect.center().y())) for dx in range(-3, 2)]

    def outlined() -> bool:
        qtbot.wait(10)
        image = view.raw.viewport().grab().toImage()
        return any(_near(image.pixelColor(p), chart_colors().current_step) for p in edge)

    view.select_step(None)
    assert not outlined()
    view.select_step(4)
    assert outlined()


def test_tooltip_names_step_token_mass_and_mark() -> None:
    records = run_records()
    tip = step_tooltip(records[2], len(records))
    assert "step <b>3</b> of 6" in tip and "'currency'" in tip and "0.008" in tip
    assert "forced: the grammar allowed only this token" in tip
    overruled = step_tooltip(records[0], len(records))
    assert "overruled" in overruled and "'The'" in overruled


def test_hovering_maps_to_the_token_under_the_pointer(view: OutputView) -> None:
    streamed(view, run_records())
    assert [view.raw.index_at(token_center(view, i)) for i in range(6)] == list(range(6))
    below = QPoint(10, view.raw.viewport().height() - 5)  # under the last line
    assert view.raw.index_at(below) is None


def test_the_final_text_places_tokens_by_output_chars() -> None:
    # "é" split over two byte tokens: the first adds no character, the second adds it.
    records = [record(0, "a", 1.0, 1), record(1, "\ufffd", 0.5, 1), record(2, "\ufffd", 0.5, 2)]
    assert token_spans(records, "aé") == [(0, 1), (1, 1), (1, 2)]


def test_show_result_keeps_the_marks_on_the_authoritative_text(view: OutputView) -> None:
    records = [record(0, "a", 1.0, 1), record(1, "\ufffd", 0.5, 1), record(2, "\ufffd", 0.05, 2)]
    streamed(view, records)
    view.show_result(result("aé"))
    assert view.raw.toPlainText() == "aé"
    assert view.tabs.currentWidget() is view.raw  # the timeline stays in view
    assert format_at(view, 1).background().color() == QColor(LIGHT_RAMP[-1])
    assert view.raw.index_at(token_center(view, 2)) == 2


def test_append_piece_still_streams_plain_text(view: OutputView) -> None:
    view.start_run()
    for piece in ('{"a"', ": 1}"):
        view.append_piece(piece)
    view._flush()
    assert view.raw.toPlainText() == '{"a": 1}' and view.raw.records == []
    assert view.legend.isHidden()
    view.show_result(result('{"a": 1}'))
    assert view.raw.toPlainText() == '{"a": 1}'


def test_set_records_shows_a_replay_at_once(view: OutputView) -> None:
    records = run_records()
    view.set_records(records)
    assert view.raw.toPlainText() == '{"currency": "USD"}'
    assert view.raw.index_at(token_center(view, 3)) == 3
    view.start_run()
    assert view.raw.toPlainText() == "" and view.raw.records == [] and view.legend.isHidden()


def test_a_dark_theme_restyles_the_shades(view: OutputView, monkeypatch) -> None:
    streamed(view, run_records())
    monkeypatch.setattr(timeline_text, "is_dark", lambda: True)
    view.raw.restyle()
    assert format_at(view, 2).background().color() == QColor(DARK_RAMP[-1])


def _near(a: QColor, b: QColor, tolerance: int = 60) -> bool:
    return (
        abs(a.red() - b.red()) + abs(a.green() - b.green()) + abs(a.blue() - b.blue()) < tolerance
    )


def test_hover_over_a_violation_adds_its_message(view: OutputView) -> None:
    streamed(view, run_records())
    usd = (len('{"currency": "'), len('{"currency": "USD'))
    view.show_violations(
        [
            Violation(
                "$.currency",
                "enum",
                "$.properties.currency.enum",
                "'USD' is not one of ['EUR']",
                None,
                usd,
            )
        ]
    )
    tip = view.raw.tooltip_at(token_center(view, 4))
    assert "step <b>5</b> of 6" in tip and "is not one of" in tip
    assert "is not one of" not in view.raw.tooltip_at(token_center(view, 2))
