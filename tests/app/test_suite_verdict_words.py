"""A suite that passes beside failing samples says so in its verdict: a bare "Passed" above
"1 failing their case" read as a contradiction to a new user. The run in the window and
its saved result word it alike, and as the command line does."""

from __future__ import annotations

import json

from PySide6.QtGui import QTextDocument

from app.suite.results_view import ResultsView, verdict_html
from engine.decode.loop import finish_run
from engine.grammar.compile import compile_schema
from engine.records import FinishReason
from engine.settings import GenerationSettings
from engine.suite.format import Thresholds
from engine.suite.metrics import Sample, evaluate, field_results, runaway_of_pieces, summarise
from engine.suite.server.note import ServerNote
from engine.suite.summary import summary_to_json

SCHEMA = json.dumps({"type": "object", "properties": {"a": {"type": "integer"}}})


def _sample(index: int, text: str) -> Sample:
    result = finish_run(text, compile_schema(SCHEMA), FinishReason.END_OF_GENERATION, 3, "",
                        total_ms=50.0, setup_ms=0.0, prompt_ms=0.0, forward_ms=0.0,
                        mask_ms=0.0, settings=GenerationSettings(max_tokens=8))  # fmt: skip
    return Sample("c", index, index, result, (), 50.0, field_results(result, ()), None, None,
                  None, None, runaway_of_pieces(["{", "}"]), server=ServerNote())  # fmt: skip


def _run():
    samples = [_sample(0, '{"a": 1}'), _sample(1, '{"a": "x"}')]  # the second is invalid
    return samples, summarise(samples, n_planned=2)


def test_a_pass_with_a_failing_sample_says_the_threshold_allowed_it(qtbot):
    samples, summary = _run()
    verdict = evaluate(summary, Thresholds(min_validity=0.5))
    assert verdict.passed and not samples[1].passed
    words = "1 threshold holds (1 of 2 samples failing their case, within the thresholds)"
    assert f"Passed</b>: {words}" in verdict_html(summary, verdict)

    view = ResultsView()
    qtbot.addWidget(view)
    view.show_result(json.loads(json.dumps(summary_to_json(summary, verdict, "s"))), "r.json")
    assert f"Passed: {words}" in _plain(view.summary.text())


def test_a_pass_with_no_thresholds_never_says_they_held():
    _, summary = _run()
    verdict = evaluate(summary, Thresholds())
    html = verdict_html(summary, verdict)
    assert "threshold holds" not in html and "thresholds hold" not in html
    assert "no thresholds are set (1 of 2 samples failing their case" in html


def test_a_clean_pass_names_only_the_thresholds():
    samples = [_sample(0, '{"a": 1}'), _sample(1, '{"a": 2}')]
    summary = summarise(samples, n_planned=2)
    verdict = evaluate(summary, Thresholds(min_validity=0.5, max_truncation=0.5))
    assert "Passed</b>: 2 thresholds hold<br>" in verdict_html(summary, verdict)


def _plain(html: str) -> str:
    doc = QTextDocument()
    doc.setHtml(html)
    return doc.toPlainText()
