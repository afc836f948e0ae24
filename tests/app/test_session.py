"""The run on screen is one Session (app/session.py): the window's chart and output read its
records and keep no copy, a replay replaces them whole, and only a run that ended on its own
becomes the one the next is compared with."""

from __future__ import annotations

from step_records import token_record

from app.chart.step_chart import StepChart
from app.decoding.output_view import OutputView
from app.session import Session
from engine.records import FinishReason, RunResult
from engine.runs.saved import SavedRun


def _result(reason: FinishReason = FinishReason.GRAMMAR_COMPLETE) -> RunResult:
    return RunResult(text='{"a":1}', finish_reason=reason, n_tokens=2, parsed={"a": 1})


def test_views_read_the_sessions_records_and_keep_no_copy(qtbot) -> None:
    session = Session()
    chart, output = StepChart(None, session.records), OutputView(None, session.records)
    qtbot.addWidget(chart)
    qtbot.addWidget(output)
    session.sig_started.connect(lambda _subject: (chart.clear(), output.start_run()))
    session.sig_record.connect(chart.push)
    session.sig_record.connect(output.append_record)
    session.start("{}", "p", "your run")
    for i, piece in enumerate(('{"a"', ":1}")):
        session.add(token_record(i, 10 + i, piece))
    assert chart.records is session.records
    assert output.records is session.records
    assert [r.token_id for r in session.records] == [10, 11]
    # The timeline shows the steps it has drawn, which are the session's own objects.
    qtbot.waitUntil(lambda: len(output.raw.records) == 2)
    assert all(a is b for a, b in zip(output.raw.records, session.records, strict=True))
    # A new run clears the one list in place; the views' handle stays good.
    session.start("{}", "q", "Branch 1")
    assert chart.records is session.records == []
    assert output.raw.records == []


def test_a_replay_replaces_the_records_and_names_its_subject(qtbot) -> None:
    session = Session()
    session.start("{}", "p", "your run")
    session.add(token_record(0, 1, "x"))
    run = SavedRun(
        "{}", "q", "m.gguf", (token_record(0, 7, "{"), token_record(1, 8, "}")), _result()
    )
    with qtbot.waitSignals([session.sig_started, session.sig_replaced]):
        session.replay(run, "the saved run r.json")
    assert [r.token_id for r in session.records] == [7, 8]
    assert session.subject == "the saved run r.json"
    assert session.inputs == ("{}", "q") and session.model_name == "m.gguf"
    assert session.run() is None  # not finished until finish() is called
    session.finish(run.result)
    assert session.run() is not None and session.run().records == run.records


def test_only_a_run_that_ended_on_its_own_becomes_the_previous(qtbot) -> None:
    session = Session()
    session.start("{}", "p", "your run")
    session.finish(_result())
    assert session.keep_as_previous() is None  # nothing before it
    first = session.previous
    assert first is not None
    session.start("{}", "p2", "your run")
    session.finish(_result(FinishReason.CANCELLED))
    assert session.keep_as_previous() is None
    assert session.previous is first  # a stopped run takes no part
    session.start("{}", "p3", "your run")
    session.finish(_result())
    assert session.keep_as_previous() is first
    assert session.previous is not None and session.previous.prompt == "p3"


def test_the_step_the_chart_shows_is_the_sessions_selected_step(qtbot, window) -> None:
    window.session.start("{}", "p", "your run")
    for i in range(3):
        window.session.add(token_record(i, 20 + i, "x"))
    window.step_chart.redraw()
    window.step_chart.show_step(1)
    assert window.session.selected == 1
